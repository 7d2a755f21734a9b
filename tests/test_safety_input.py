"""Bad input found at start (issue 26, parts 3, 5 and 6): outputs that would
overwrite each other, sizes above the 1G limit of every program, limits
said in the message.  One line from rank 0, exit 2 on every rank, in
seconds, no files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import COLUMNS, bindir, launcher
from kill_check import check_consistent, kill_after_row, whole_lines

CASES = [
    ("threads", ["--tests", "latency-mt", "-m", "64G:64G", "--quick"],
     "threads: --sizes: messages are at most 1G bytes (1073741824), got '64G:64G'"),
    ("threads", ["-m", "8:2G"], "threads: --sizes: messages are at most 1G bytes"),
    ("collectives", ["-m", "0:2G"], "collectives: --sizes: messages are at most 1G bytes"),
    ("rma", ["-m", "8:4G"], "rma: --sizes: messages are at most 1G bytes"),
    ("pingpong", ["-m", "0:1T"], "pingpong: --sizes: messages are at most 1G bytes (1073741824), got '0:1T'"),
    ("halocompare", ["-m", "0:1T"], "halocompare: --sizes: messages are at most 1G bytes"),
    ("threads", ["--long-size", "2G"], "threads: --long-size must be a size in bytes from 1 to 1073741824"),
    ("halocompare", ["--count", "16777217"], "halocompare: --count must be at most 16777216, got '16777217'"),
    ("halocompare", ["-o", "a.csv", "--raw", "a.json"],
     "halocompare: --raw 'a.json' is the metadata of -o 'a.csv' ('a.json'): give each output its own file"),
    ("pingpong", ["-o", "x/../a.csv", "--raw", "a.csv"], "pingpong: --raw 'a.csv' is the CSV of -o 'x/../a.csv'"),
    ("threads", ["-o", "run", "--raw", "run.json"], "threads: --raw 'run.json' is the metadata of -o 'run'"),
    ("halocompare", ["-o", "missing/newdir/"], "halocompare: cannot create directory 'missing/newdir'"),
    # the files written aside until measuring starts, and the rounds file, are outputs too
    ("halocompare", ["-o", "a.csv", "--raw", "a.csv.tmp"],
     "halocompare: --raw 'a.csv.tmp' is the CSV written aside of -o 'a.csv' ('a.csv.tmp')"),
    ("pingpong", ["-o", "b.tmp", "--raw", "b"],
     "pingpong: --raw 'b' is written aside as 'b.tmp', the CSV of -o 'b.tmp': give each output its own file"),
    ("halocompare", ["-o", "a.csv", "--raw", "a-rounds.csv"],
     "halocompare: --raw 'a-rounds.csv' is the rounds file of -o 'a.csv' ('a-rounds.csv')"),
]


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MPIMB_REPORT": "none"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd, env=env, check=False)


def workdir(tmp_path: Path) -> Path:
    (tmp_path / "x").mkdir()  # x/../a.csv resolves through it
    return tmp_path


@pytest.mark.parametrize("program,args,message", CASES, ids=[f"{c[0]} {' '.join(c[1])}" for c in CASES])
def test_refused_at_start(tmp_path: Path, program: str, args: list[str], message: str) -> None:
    exe = bindir("openmpi") / program
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    d = workdir(tmp_path)
    p = run([str(exe), *args], d)
    assert p.returncode == 2, p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(message), p.stderr
    assert p.stdout == ""
    assert [q.name for q in d.iterdir()] == ["x"]  # not even results/


@pytest.mark.parametrize("program,args,message", [CASES[0], CASES[8]], ids=["threads-64G", "raw-is-metadata"])
def test_refused_on_every_rank(tmp_path: Path, lib: str, program: str, args: list[str], message: str) -> None:
    exe = bindir(lib) / program
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    d = workdir(tmp_path)
    p = run([*launcher(lib, 2), str(exe), *args], d)
    assert p.returncode == 2, p.stderr
    ours = [line for line in p.stderr.splitlines() if line.startswith(f"{program}: ")]
    assert len(ours) == 1 and ours[0].startswith(message), p.stderr
    assert [q.name for q in d.iterdir()] == ["x"]


def test_a_replaced_csv_takes_its_rounds_file_along(tmp_path: Path) -> None:
    """-o same.csv again: the earlier run's same-rounds.csv goes with the CSV it belonged to, so a run
    that measures no group (--group none) leaves no rounds beside rows they do not belong to."""
    exe = bindir("openmpi") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    args = [str(exe), "--quick", "--methods", "irecv-isend,persistent", "--comms", "world", "--neighbors", "4",
            "--periodic", "no", "--reps", "1", "--max-reps", "1", "--warmup", "0", "-o", "same.csv"]
    first = run(args, tmp_path)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "same-rounds.csv").is_file()  # the two methods, one group
    again = run([*args, "--group", "none"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == ["same.csv", "same.json"]


def test_output_directory_with_a_slash_is_made(tmp_path: Path) -> None:
    """-o newdir/ names a directory: made like results/, the run's files in it (it used to say 'Is a directory')."""
    exe = bindir("openmpi") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    p = run([str(exe), "--quick", "--methods", "irecv-isend", "--comms", "world", "--neighbors", "4",
             "--periodic", "no", "-o", "newdir/"], tmp_path)
    assert p.returncode == 0, p.stderr
    made = sorted(q.name for q in (tmp_path / "newdir").iterdir() if not q.name.endswith("-rounds.csv"))
    assert len(made) == 2 and made[0].endswith(".csv") and made[1].endswith(".json"), made
    assert json.loads((tmp_path / "newdir" / made[1]).read_text())["complete"] is True


# An earlier run's files under the names a run is given (-o's CSV, its JSON and rounds file, --raw): known bytes
EARLIER = {"old.csv": b"run_id,earlier\nyesterday,1\n", "old.json": b'{"earlier": true}\n',
           "old-rounds.csv": b"group,round,row,pos,time_s\n0,0,1,0,1e-6\n", "old.raw.csv": b"earlier samples\n"}
TINY = ["--quick", "--reps", "6", "--max-reps", "6", "--warmup", "0", "--min-rep-time", "0.0001"]


def earlier_run(d: Path) -> None:
    for name, data in EARLIER.items():
        (d / name).write_bytes(data)


def test_a_usage_error_after_mpi_init_keeps_an_earlier_runs_files(tmp_path: Path, lib: str) -> None:
    """A check that needs the job (--root against the communicator's size) fails after MPI_Init, when the
    outputs are already open: the earlier run's CSV, JSON, rounds file and raw file stay byte for byte,
    and nothing else is left (the run's own files were written aside, docs/results-format.md)."""
    exe = bindir(lib) / "collectives"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    earlier_run(tmp_path)
    p = run([*launcher(lib, 2), str(exe), "-o", "old.csv", "--raw", "old.raw.csv", "--root", "2", *TINY],
            tmp_path)
    assert p.returncode == 2, p.stderr
    ours = [line for line in p.stderr.splitlines() if line.startswith("collectives: ")]
    assert ours == ["collectives: --root 2 is outside the communicator (ranks 0 to 1)"], p.stderr
    assert {q.name: q.read_bytes() for q in tmp_path.iterdir()} == EARLIER


def test_a_run_replaces_an_earlier_runs_files(tmp_path: Path) -> None:
    """Once it measures, a run replaces the earlier run's files of its names: its own CSV, JSON, rounds and
    raw file (one run id in all four), nothing written aside left over."""
    exe = bindir("mpich") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    earlier_run(tmp_path)
    p = run([*launcher("mpich", 2), str(exe), "-o", "old.csv", "--raw", "old.raw.csv", "--methods",
             "irecv-isend,sendrecv", "--comms", "world", "--neighbors", "4", "--periodic", "no", *TINY], tmp_path)
    assert p.returncode == 0, p.stderr
    assert sorted(q.name for q in tmp_path.iterdir()) == sorted(EARLIER)
    meta = json.loads((tmp_path / "old.json").read_text())
    assert meta["complete"] is True and meta["rounds"] == "old-rounds.csv"
    lines = (tmp_path / "old.csv").read_text().splitlines()
    assert lines[0].split(",") == COLUMNS and len(lines) == 1 + meta["rows"] >= 3
    assert {line.split(",")[0] for line in lines[1:]} == {meta["run_id"]}
    raw = (tmp_path / "old.raw.csv").read_text().splitlines()
    assert raw[0].startswith("run_id,row,") and {line.split(",")[0] for line in raw[1:]} == {meta["run_id"]}
    rounds = (tmp_path / "old-rounds.csv").read_text().splitlines()
    rows = {line.split(",")[2] for line in rounds[1:]}
    assert rounds[0] == "group,round,row,pos,time_s" and rows and rows <= {str(i) for i in range(1, len(lines))}


def test_a_run_killed_after_its_first_row_keeps_it(tmp_path: Path) -> None:
    """SIGKILL of rank 0 right after the first row reached the CSV (the self-test hook holds that instant
    open), over an earlier run's files: the row is there, in the run's own files, which agree
    (tests/kill_check.py); the earlier run's files are gone (the rounds file is this run's, named before its
    group's rows and holding only its header) and nothing written aside is left."""
    exe = bindir("mpich") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    earlier_run(tmp_path)
    out, raw = tmp_path / "old.csv", tmp_path / "old.raw.csv"
    kill_after_row("mpich", exe, out, raw, tmp_path.parent / f"{tmp_path.name}.err", 1)
    assert check_consistent(out, raw) == (1, 0)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert whole_lines(out)[1].split(",")[0] == meta["run_id"]
    assert sorted(q.name for q in tmp_path.iterdir()) == sorted(EARLIER)
    assert (tmp_path / "old-rounds.csv").read_text() == "group,round,row,pos,time_s\n"
