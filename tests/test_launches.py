"""scripts/launches: N launches of one or more configurations, interleaved, into one result set
(DIR/NAME/launch-I.csv, DIR/launches.json), with MPIMB_LAUNCH in every launch's environment.

The real launches are tiny pingpong runs on Open MPI at -n 2.  Which launch of the series each one was is
read from its JSON's "launch" (the harness records MPIMB_LAUNCH there); the order they ran in from the
script's own line before each launch, and from their start times."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ONCE, REPORT, ROOT, bindir, launcher

LAUNCHES = ROOT / "scripts" / "launches"
TOKEN = r"[A-Za-z0-9._-]{1,64}"

# a stand-in for a launch, without MPI: its -o gets one line; it fails where FAIL names its -o, sleeps
# where SLEEP does
FAKE = """#!/bin/bash
o=''
prev=''
for a in "$@"; do [[ $prev != -o ]] || o=$a; prev=$a; done
echo "$MPIMB_LAUNCH" >"$o"
[[ -z ${SLEEP:-} || $o != *$SLEEP ]] || exec sleep 60
[[ -z ${FAIL:-} || $o != *$FAIL ]] || exit 3
"""


def script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def launches(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
             timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LAUNCHES), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env={**os.environ, **(env or {})}, check=False)


def files(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


def test_two_configurations_interleaved(tmp_path: Path) -> None:
    exe = bindir("openmpi") / "pingpong"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    tiny = [str(exe), "--tests", "latency", "--quick", *ONCE]
    cmd = launcher("openmpi", 2)
    p = launches("--launches", "2", "-o", "set", "--seed", "11", "--", "A:", *cmd, *tiny, "-m", "8:8", "::",
                 "B:", *cmd, *tiny, "-m", "16:16", cwd=tmp_path, env={"MPIMB_REPORT": "none"})
    assert p.returncode == 0, p.stderr
    d = tmp_path / "set"
    series = json.loads((d / "launches.json").read_text())
    assert series["status"] == "complete" and series["launches"] == 2 and series["seed"] == 11
    assert [c["name"] for c in series["configurations"]] == ["A", "B"]
    assert series["configurations"][1]["command"] == [*cmd, *tiny, "-m", "16:16"]
    orders = series["orders"]
    assert len(orders) == 2 and all(sorted(o) == ["A", "B"] for o in orders)
    token = series["series"]
    started = {}
    for name in ("A", "B"):
        for i in (1, 2):
            meta = json.loads((d / name / f"launch-{i}.json").read_text())
            # the script's -o and --label reached the program, and its MPIMB_LAUNCH the harness
            assert meta["complete"] is True and meta["label"] == name and meta["nprocs"] == 2
            assert meta["launch"] == {"series": token, "index": i, "of": 2}
            started[(name, i)] = meta["start_utc"]
            with open(d / name / f"launch-{i}.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            assert {r["bytes"] for r in rows} == {"8" if name == "A" else "16"}, rows
    # the launches ran in the recorded order: as the script announced them, and as they started
    said = [line.split(": ")[1].split(", ") for line in p.stderr.splitlines() if line.startswith("launches: round ")]
    ran = [(n, int(r.split("/")[0].removeprefix("round "))) for r, n in said]
    assert ran == [(n, r + 1) for r, o in enumerate(orders) for n in o]
    assert [started[x] for x in ran] == sorted(started[x] for x in ran)
    # the report commands that read the set, printed, not run
    assert "read the set: " in p.stderr and " compare set/A set/B" in p.stderr


def test_read_names_the_command_that_reads_the_set(tmp_path: Path) -> None:
    """--read: the closing hint is that mpimb-report command over DIR (coll-tune-check's is tune --check),
    never the compare of the configurations; the mpimb-report is the checkout's or the installed one."""
    fake = script(tmp_path / "fake", FAKE)
    p = launches("--launches", "1", "-o", "r", "--read", "tune --check", "--", "default:", fake, "::", "tuned:", fake,
                 cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    hint = [line for line in p.stderr.splitlines() if "read the set: " in line]
    assert hint == [f"launches: read the set: {REPORT} tune --check r"], p.stderr


def test_the_seed_gives_the_order(tmp_path: Path) -> None:
    """The same seed, the same rounds; the token is one per series."""
    fake = script(tmp_path / "fake", FAKE)
    got = []
    for d in ("s1", "s2"):
        p = launches("--launches", "20", "-o", d, "--seed", "5", "--", "a:", fake, "::", "b:", fake, "::", "c:", fake,
                     cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        got.append(json.loads((tmp_path / d / "launches.json").read_text()))
    assert got[0]["orders"] == got[1]["orders"] and got[0]["series"] != got[1]["series"]
    assert len({tuple(o) for o in got[0]["orders"]}) > 1  # shuffled, not one fixed order
    assert (tmp_path / "s1" / "c" / "launch-20.csv").read_text().strip() == f"series={got[0]['series']};index=20;of=20"


BAD = [
    (["--launches", "0"], "--launches must be an integer from 1 to 10000, got '0'"),
    (["--launches", "x"], "--launches must be an integer from 1 to 10000"),
    (["--launches", "99999999999999999999"], "--launches must be an integer from 1 to 10000"),
    (["--launches", "10001"], "--launches must be an integer from 1 to 10000"),
    (["--launches", "2", "--seed", "-3"], "--seed must be"),
    (["--launches", "2", "--timeout", "0"], "--timeout must be"),
    (["--launches", "2", "--bogus"], "unknown option '--bogus'"),
    (["--launches", "2", "--"], "no configuration"),
    (["--launches", "2", "--", "A:"], "configuration 'A' has no command"),
    (["--launches", "2", "--", "FAKE"], "expected 'NAME:'"),
    (["--launches", "2", "--", "a/b:", "FAKE"], "configuration name 'a/b'"),
    (["--launches", "2", "--", "A:", "FAKE", "::", "A:", "FAKE"], "'A' is given twice"),
    (["--launches", "2", "--", "A:", "FAKE", "::"], "nothing after the last '::'"),
    (["--launches", "2", "--", "A:", "FAKE", "-o", "x.csv"], "'-o' is set by the script"),
    (["--launches", "2", "--", "A:", "FAKE", "--output=x.csv"], "'--output=x.csv' is set by the script"),
    (["--launches", "2", "--", "A:", "FAKE", "--label", "x"], "'--label' is set by the script"),
    (["--launches", "2", "--keep-labels", "--", "A:", "FAKE", "-ox.csv"], "'-ox.csv' is set by the script"),
]


@pytest.mark.parametrize("args, words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input(args: list[str], words: str, tmp_path: Path) -> None:
    """One line `launches: ...`, exit 2, nothing written."""
    fake = str(script(tmp_path / "fake", FAKE))
    before = files(tmp_path)
    p = launches(*[fake if a == "FAKE" else a for a in args[:2]], "-o", "set",
                 *[fake if a == "FAKE" else a for a in args[2:]], cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.startswith("launches: ") and len(p.stderr.splitlines()) == 1, p.stderr
    assert words in p.stderr, p.stderr
    assert files(tmp_path) == before


def test_a_directory_with_an_earlier_series_is_refused(tmp_path: Path) -> None:
    fake = script(tmp_path / "fake", FAKE)
    assert launches("--launches", "1", "-o", "set", "--", "A:", fake, cwd=tmp_path).returncode == 0
    before = files(tmp_path / "set")
    for d in ("set", "set/A/launch-1.csv"):
        p = launches("--launches", "1", "-o", d, "--", "A:", fake, cwd=tmp_path)
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
        assert ("is not empty" if d == "set" else "not a directory") in p.stderr
    assert files(tmp_path / "set") == before
    # the programs' --label stays where the commands give it (--keep-labels), -o never
    (tmp_path / "empty").mkdir()
    p = launches("--launches", "1", "-o", "empty", "--keep-labels", "--", "A:", fake, "--label", "x", cwd=tmp_path)
    assert p.returncode == 0 and files(tmp_path / "empty") == ["A", "A/launch-1.csv", "launches.json"], p.stderr


def test_a_failing_launch_stops_the_series_and_keeps_the_finished(tmp_path: Path) -> None:
    fake = script(tmp_path / "fake", FAKE)
    p = launches("--launches", "3", "-o", "set", "--seed", "1", "--", "A:", fake, "::", "B:", fake, cwd=tmp_path,
                 env={"FAIL": "B/launch-2.csv"})
    assert p.returncode == 3, p.stderr
    assert "launch 2 of B failed (exit 3)" in p.stderr.splitlines()[-1]
    series = json.loads((tmp_path / "set" / "launches.json").read_text())
    assert series["status"] == "failed: launch 2 of B (exit 3)"
    done = [f"{n}/launch-{r + 1}.csv" for r, o in enumerate(series["orders"]) for n in o]
    done = done[:done.index("B/launch-2.csv") + 1]  # every launch up to the failed one, its own rows too
    assert files(tmp_path / "set") == sorted({"A", "B", "launches.json", *done})
    # a series whose first launch fails without writing leaves nothing (and 1 stays 1)
    p = launches("--launches", "2", "-o", "none", "--", "B:", "false", cwd=tmp_path)
    assert p.returncode == 1 and not (tmp_path / "none").exists(), p.stderr
    assert p.stderr.splitlines()[-1] == "launches: launch 1 of B failed (exit 1); nothing was written"


def test_timeout_and_stop(tmp_path: Path) -> None:
    """A launch past --timeout is killed (exit 124, said); TERM to the script stops the launch under way."""
    fake = script(tmp_path / "fake", FAKE)
    t = time.monotonic()
    p = launches("--launches", "2", "-o", "t", "--timeout", "1", "--", "A:", fake, cwd=tmp_path,
                 env={"SLEEP": "launch-2.csv"})
    assert p.returncode == 124 and "launch 2 of A (killed after 1 s)" in p.stderr, p.stderr
    assert time.monotonic() - t < 50  # not the stand-in's 60 s sleep
    assert files(tmp_path / "t") == ["A", "A/launch-1.csv", "A/launch-2.csv", "launches.json"]
    q = subprocess.Popen([str(LAUNCHES), "--launches", "2", "-o", "s", "--", "A:", str(fake)], cwd=tmp_path,
                         env={**os.environ, "SLEEP": "launch-1.csv"}, stderr=subprocess.PIPE, text=True)
    while not (tmp_path / "s" / "A" / "launch-1.csv").exists():
        time.sleep(0.1)
    q.send_signal(signal.SIGTERM)
    _, err = q.communicate(timeout=30)
    assert q.returncode == 143 and "stopped by SIGTERM" in err, err
    assert not (tmp_path / "s" / "A" / "launch-2.csv").exists()
