"""Launch identity (issue 42, item 1): the script that runs N launches of one configuration sets
MPIMB_LAUNCH=series=TOKEN;index=I;of=N; the harness checks it before MPI_Init like an option and writes
"launch": {"series", "index", "of"} into the JSON (docs/results-format.md); without it there is no key."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import ONCE_BARRIER, ROOT, check_bad_input, run_mpi

SCHEMA = json.loads((ROOT / "analysis" / "mpimb" / "schema" / "meta.schema.json").read_text())
QUICK = ("--tests", "latency", "-m", "8:8", *ONCE_BARRIER)
FORM = "is not series=TOKEN;index=I;of=N"

BAD = [
    "series=a;index=0;of=3",  # index from 1
    "series=a b;index=1;of=2",  # a token of [A-Za-z0-9._-]
    "series=a;index=4;of=3",  # index beyond of
    "series=a;index=1;of=10001",  # at most 10000 launches
    "index=1;of=2",  # no series
    "series=" + "x" * 65 + ";index=1;of=2",  # a token of at most 64
    "series=a;index=01;of=2",  # a number as written by the script, no leading zero
    "",  # set but empty
]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_launch_in_the_json(tmp_path: Path, lib: str) -> None:
    run = run_mpi(lib, 2, "pingpong", *QUICK, out=tmp_path / "l.csv",
                  env={"MPIMB_LAUNCH": "series=halo-2024.A_b;index=3;of=12"})
    assert run.returncode == 0, run.stderr
    meta = run.meta()
    jsonschema.validate(meta, SCHEMA)
    assert meta["launch"] == {"series": "halo-2024.A_b", "index": 3, "of": 12}


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_no_variable_no_launch(tmp_path: Path, lib: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MPIMB_LAUNCH", raising=False)
    run = run_mpi(lib, 2, "pingpong", *QUICK, out=tmp_path / "l.csv")
    assert run.returncode == 0, run.stderr
    meta = run.meta()
    jsonschema.validate(meta, SCHEMA)
    assert "launch" not in meta


@pytest.mark.parametrize("value", BAD, ids=[v or "empty" for v in BAD])
def test_malformed_launch_alone(tmp_path: Path, value: str) -> None:
    """The binary alone: one line naming MPIMB_LAUNCH (a long value cut at 60 characters), exit 2, no MPI and
    no file."""
    shown = value if len(value) <= 60 else value[:60] + "..."
    check_bad_input("pingpong", [], f"MPIMB_LAUNCH='{shown}' {FORM}", tmp_path, env={"MPIMB_LAUNCH": value})


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
@pytest.mark.parametrize("value", BAD[:3], ids=["index-0", "token", "index-past-of"])
def test_malformed_launch_every_rank_exits_2(tmp_path: Path, lib: str, value: str) -> None:
    check_bad_input("pingpong", [], f"MPIMB_LAUNCH='{value}' {FORM}", tmp_path, ranks=2, libs=(lib,),
                    env={"MPIMB_LAUNCH": value})


def test_launch_schema_rejects_what_the_harness_rejects() -> None:
    """The schema's "launch" holds what the harness accepts."""
    good = {"series": "a", "index": 1, "of": 1}
    jsonschema.validate(good, SCHEMA["properties"]["launch"])
    for bad in ({"series": "a b", "index": 1, "of": 1}, {"series": "a", "index": 0, "of": 1},
                {"series": "a", "index": 1, "of": 10001}, {"series": "a", "index": 1}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA["properties"]["launch"])
