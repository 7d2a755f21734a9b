"""Faults a batch job meets: SIGTERM at the time limit, a rank killed, a
full disk.  Finished rows must survive and the metadata must say the run is
incomplete; nothing may hang."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import COLUMNS, bindir, launcher, rank_pid

# Long enough to be stopped in the middle (44 rows), but its first group (the 10 tests of the 4-neighbour mesh, measured
# together) ends in 2 s of repetitions, not in the 6 s that all six communicators took (a sixth of the CPU to 3 rows).
SLOW = ["--time-budget", "0.2", "--min-rep-time", "0.002", "--methods", "irecv-send,irecv-isend,phased,persistent,sendrecv",
        "--comms", "world,dup"]


def start(lib: str, n: int, out: Path, errfile: Path) -> subprocess.Popen[bytes]:
    exe = bindir(lib) / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    with open(errfile, "w") as err:
        return subprocess.Popen([*launcher(lib, n), str(exe), "-o", str(out), *SLOW],
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)


def wait_progress(errfile: Path, tests: int, timeout: float = 120) -> int:
    deadline = time.time() + timeout
    done = 0
    while time.time() < deadline and done < tests:
        time.sleep(0.2)
        done = sum(1 for line in errfile.read_text().splitlines() if line.startswith("["))
    assert done >= tests, "the run did not progress:\n" + errfile.read_text()
    return done


def check_rows(out: Path, at_least: int) -> list[str]:
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == COLUMNS
    assert len(lines) - 1 >= at_least
    assert all(len(line.split(",")) == len(COLUMNS) for line in lines[1:])
    return lines[1:]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_sigterm_leaves_metadata(tmp_path: Path, lib: str) -> None:
    out, errfile = tmp_path / "t.csv", tmp_path / "err"
    p = start(lib, 2, out, errfile)
    try:
        done = wait_progress(errfile, 3)
        os.kill(p.pid, signal.SIGTERM)  # what Slurm does at the time limit (mpiexec forwards it)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    if lib == "openmpi":  # hydra's own exit status after forwarding a signal is 0 or not, by version
        assert p.returncode != 0
    rows = check_rows(out, done)
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["complete"] is False
    assert meta["ended_by"] == "terminated by SIGTERM"
    assert meta["rows"] == len(rows)


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_sigterm_right_after_a_row(tmp_path: Path, lib: str) -> None:
    """SIGTERM just after a row reaches the CSV, before the next test starts:
    the metadata must count that row.  The hook holds that moment open for
    2 s, so the signal lands inside it every time (a race CI once hit)."""
    exe = bindir(lib) / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    out = tmp_path / "r.csv"
    env = {**os.environ, "MPIMB_FAULT": "row-delay:2"}
    p = subprocess.Popen([str(exe), "-o", str(out), "--quick"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (out.exists() and len(out.read_text().splitlines()) >= 2):
            time.sleep(0.05)
        assert len(out.read_text().splitlines()) == 2, "no first row within 60 s"
        os.kill(p.pid, signal.SIGTERM)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == -signal.SIGTERM
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["ended_by"] == "terminated by SIGTERM"
    assert meta["rows"] == len(check_rows(out, 1)) == 1


def test_killed_rank_ends_the_job(tmp_path: Path) -> None:
    out, errfile = tmp_path / "k.csv", tmp_path / "err"
    p = start("openmpi", 3, out, errfile)
    try:
        done = wait_progress(errfile, 3)
        pid = rank_pid(p.pid, 1)
        assert pid is not None, "rank 1 not found"
        os.kill(pid, signal.SIGKILL)
        p.wait(timeout=120)  # no hang: the launcher tears the job down
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            pytest.fail("the job hung after a rank was killed")
    assert p.returncode != 0
    check_rows(out, done)
    assert json.loads(out.with_suffix(".json").read_text())["complete"] is False


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs with 400 KiB taken: less than the 1 MiB a run needs."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)],
                                           capture_output=True, check=False).returncode:
        pytest.skip("needs root to mount a small tmpfs")
    try:
        (disk / "filler").write_bytes(b"\0" * (400 * 1024))
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=False)


@pytest.mark.parametrize("output", ["file", "default"])
def test_full_disk_detected_at_start(full_disk: Path, lib: str, output: str) -> None:
    """A full disk is a run that failed (exit 1 on every rank), not a usage
    error (2): one line from rank 0 and no files, not even results/."""
    args = ["-o", str(full_disk / "x.csv")] if output == "file" else []
    p = subprocess.run([*launcher(lib, 2), str(bindir(lib) / "halocompare"), *args, "--quick"],
                       capture_output=True, text=True, timeout=120, cwd=full_disk, check=False)
    assert p.returncode == 1, p.stderr
    ours = [line for line in p.stderr.splitlines() if line.startswith("halocompare: ")]
    assert len(ours) == 1 and ours[0].startswith("halocompare: no space left for results in the directory of "), p.stderr
    if output == "file":
        assert ours[0] == f"halocompare: no space left for results in the directory of '{full_disk}/x.csv'"
    assert sorted(x.name for x in full_disk.iterdir()) == ["filler"]


# A disk that fills up mid-run: tests/test_outputs_safe.py (whole rows, the metadata counting them, exit 1).


def test_unwritable_output_path_is_still_a_usage_error(tmp_path: Path) -> None:
    """A path that cannot hold results is the command line's fault: exit 2."""
    p = subprocess.run([str(bindir("openmpi") / "halocompare"), "-o", str(tmp_path / "no" / "x.csv"), "--quick"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == f"halocompare: cannot write '{tmp_path}/no/x.csv': No such file or directory"
    assert list(tmp_path.iterdir()) == []
