"""`mpimb-report tune`'s table and its one line where the file changes nothing (issue 44, item 16), from the
Open MPI `collectives --algorithms` run kept in bench/coll-tune."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from helpers import ROOT, cli

RUN = ROOT / "bench" / "coll-tune" / "openmpi-algorithms.csv"
HEAD = ["collective", "ranks", "bytes"]


def copied(tmp: Path) -> Path:
    for f in RUN.parent.glob(RUN.stem + "*"):
        if f.suffix in (".csv", ".json"):
            shutil.copy(f, tmp / f.name)
    return tmp / RUN.name


def blocks(out: str) -> list[list[str]]:
    """Each block of the table: the words of its header line (the line above a line of dashes)."""
    lines = out.splitlines()
    return [lines[i - 1].split() for i in range(1, len(lines)) if lines[i] and set(lines[i]) == {"-"}]


def test_every_block_names_its_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = cli("tune", str(copied(tmp_path)), "-o", str(tmp_path / "rules.conf"), capsys=capsys)
    assert r.rc == 0, r.err
    got = blocks(r.out)
    assert len(got) >= 2  # (the table is wider than a block: it wraps)
    assert all(b[:3] == HEAD for b in got), got
    assert "changes nothing" not in r.out


def test_a_file_of_the_librarys_own_choices_says_it_changes_nothing(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Every algorithm measured as fast as the library's own choice (its times given to every row of its size):
    nothing beats it, and tune says in one line that the file changes nothing."""
    csv = copied(tmp_path)
    meta = json.loads(csv.with_suffix(".json").read_text())
    meta.pop("rounds")  # (no rounds: the rows' own intervals, all equal)
    csv.with_suffix(".json").write_text(json.dumps(meta))
    (tmp_path / meta_rounds_name()).unlink()
    d = pd.read_csv(csv, dtype=str, keep_default_na=False)
    keys = ["test", "nprocs", "bytes"]
    same = [c for c in d.columns if c.startswith(("time_", "rank_")) or c in ("mbps", "agg_mbps", "reps")]
    own = d[d["params"].str.contains("algorithm=ignore")].set_index(keys)[same]
    rows = pd.MultiIndex.from_frame(d[keys])
    take = rows.isin(own.index) & ~d["stop_reason"].str.startswith("n/a").to_numpy()
    d.loc[take, same] = own.reindex(rows[take]).to_numpy()
    d.to_csv(csv, index=False)
    r = cli("tune", str(csv), "-o", str(tmp_path / "rules.conf"), capsys=capsys)
    assert r.rc == 0, r.err
    said = [ln for ln in r.out.splitlines() if "changes nothing" in ln]
    assert said == [(f"every choice is the library's own (no algorithm beat it outside the noise): "
                     f"{tmp_path / 'rules.conf'} changes nothing the library would not do without it")]


def meta_rounds_name() -> str:
    return str(json.loads(RUN.with_suffix(".json").read_text())["rounds"])
