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
from conftest import bindir, launcher

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
