"""halocompare end to end: every communicator x method x 4/8 neighbours x
periodic, verified, on the process counts that make degenerate grids
(1 process, 1xp for primes, 2x1 periodic = own neighbour, 2x2 periodic =
the same partner twice), under Open MPI and MPICH."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import COLUMNS, bindir, check_schema, launcher, run_mpi

P2P = "irecv-send,irecv-isend,phased,persistent,sendrecv"
COMMS = ("world", "dup", "evenodd", "cart", "node", "random")


def check_table(stdout: str, methods: list[str]) -> None:
    """The talk's shape: both blocks, every communicator a row, 4/8 groups, methods as columns."""
    for block in ("Non-periodic mesh", "Periodic mesh"):
        assert block in stdout
    assert "4 neighbours" in stdout and "8 neighbours" in stdout
    for part in stdout.split("Periodic mesh")[0:2]:
        lines = part.splitlines()
        for comm in COMMS:
            assert any(line.split()[:1] == [comm] for line in lines), f"no row for {comm}"
    header = next(line for line in stdout.splitlines() if line.startswith("comm "))
    for m in methods:
        assert header.split().count(m) == 2  # once per neighbour group
    assert "One sender" in stdout and "one-sender/halo" in stdout
    assert "cart: MPI_Cart_create(reorder=1) moved" in stdout


def check_halo_run(run, n: int) -> None:  # type: ignore[no-untyped-def]
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", n)
    halo = [r for r in rows if r["test"] == "halo"]
    assert len(halo) == len(COMMS) * len(P2P.split(",")) * 2 * 2
    assert {(r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in halo} == {
        (c, m, nb, p) for c in COMMS for m in P2P.split(",") for nb in ("4", "8") for p in ("0", "1")
    }
    for r in rows:
        assert r["verified"] == "yes", r
        assert r["stop_reason"] in ("ci", "max-reps", "budget"), r
        t = [float(r[c]) for c in ("time_min_s", "time_median_s", "time_max_s")]
        assert 0 < t[0] <= t[1] <= t[2]
        if int(r["reps"]) >= 6:  # below 6 repetitions no 95 % interval exists: none is written
            assert float(r["time_ci_lo_s"]) <= float(r["time_median_s"]) <= float(r["time_ci_hi_s"])
        else:
            assert r["time_ci_lo_s"] == r["time_ci_hi_s"] == ""
        assert r["bytes"] == "16000" and r["threads"] == "1" and r["thread_level"] == "single"
        if n > 1:
            assert float(r["mbps"]) > 0
    assert len([r for r in rows if r["test"] == "one-sender"]) == 4
    check_table(run.stdout, P2P.split(","))
    meta = run.meta()
    assert meta["program"] == "halocompare" and meta["nnodes"] == 1 and meta["ppn"] == n
    assert len(meta["ranks"]) == n and all(r["cpus"] for r in meta["ranks"])
    assert meta["topology"]["pus"] >= 1 and meta["topology"]["cores"] >= 1
    assert meta["mpi"]["library_version"]
    assert meta["halocompare"]["count"] == 2000
    assert "[1/" in run.stderr  # progress lines


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 9, 16])
def test_openmpi_all_grids(tmp_path: Path, n: int) -> None:
    run = run_mpi("openmpi", n, "halocompare", "--quick", "--verify", "--methods", P2P, out=tmp_path / "h.csv")
    check_halo_run(run, n)
    assert "Open MPI" in run.meta()["mpi"]["library_version"]


@pytest.mark.parametrize("n", [1, 2])
def test_mpich(tmp_path: Path, n: int) -> None:
    run = run_mpi("mpich", n, "halocompare", "--quick", "--verify", "--methods", P2P, out=tmp_path / "h.csv")
    check_halo_run(run, n)
    assert "MPICH" in run.meta()["mpi"]["library_version"]


def test_mpich_four_ranks_smallest(tmp_path: Path) -> None:
    """MPICH busy-polls: 4 ranks on 2 cores only with the smallest counts."""
    run = run_mpi("mpich", 4, "halocompare", "--quick", "--verify", "--count", "1", "--reps", "1",
                  "--warmup", "0", "--comms", "world,evenodd,cart", "--methods", "irecv-isend,phased,sendrecv",
                  out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", 4)
    assert len(rows) == 3 * 3 * 2 * 2 + 4 and all(r["verified"] == "yes" for r in rows)


def test_sanitizers_clean(tmp_path: Path) -> None:
    """The ASan+UBSan build (MPICH: Open MPI needs suppressions) runs verified and reports nothing."""
    for n in (1, 2):
        run = run_mpi("mpich", n, "halocompare", "--quick", "--verify", "--methods", P2P, san="asan",
                      out=tmp_path / f"a{n}.csv")
        assert run.returncode == 0, run.stderr
        assert "AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr
        assert all(r["verified"] == "yes" for r in run.rows())


def test_large_messages_verified(tmp_path: Path) -> None:
    """Past the eager limit (rendezvous) on the 2x2 periodic mesh: same partner twice."""
    run = run_mpi("openmpi", 4, "halocompare", "--quick", "--verify", "--count", "100000", "--periodic", "yes",
                  "--comms", "world,cart", out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    assert all(r["verified"] == "yes" for r in run.rows())
    assert run.meta()["halocompare"]["dims"] == [2, 2]


def test_verification_catches_a_bad_element(tmp_path: Path) -> None:
    """Rank 0 sends stale data in one method: its neighbour names it; every other test goes on."""
    run = run_mpi("openmpi", 3, "halocompare", "--quick", "--verify", out=tmp_path / "h.csv",
                  env={"MPIMB_FAULT": "halo/irecv-send@0"})
    assert run.returncode == 1
    assert "verification failed in halocompare halo irecv-send world" in run.stderr
    assert "rank 1: from neighbour 0 (N): first bad index 0" in run.stderr
    rows = run.rows()
    failed = [r for r in rows if r["verified"] == "no"]
    assert failed and all(r["method"] == "irecv-send" and r["time_median_s"] for r in failed)
    assert all(r["verified"] == "yes" for r in rows if r["method"] != "irecv-send" and not r["stop_reason"].startswith("n/a"))
    assert run.meta()["complete"] is True


def test_stat_min_and_selection(tmp_path: Path) -> None:
    run = run_mpi("openmpi", 2, "halocompare", "--quick", "--stat", "min", "--neighbors", "8", "--periodic", "no",
                  "--tests", "halo", "--comms", "cart", "--methods", "persistent", out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    rows = run.rows()
    assert [(r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in rows] == [("cart", "persistent", "8", "0")]
    assert "MB/s per process (min)" in run.stdout and "Periodic mesh" not in run.stdout


def test_help_version_list() -> None:
    exe = bindir("openmpi") / "halocompare"
    for arg, expect in (("--help", "--count"), ("--version", "mpimb"), ("--list", "irecv-isend")):
        p = subprocess.run([str(exe), arg], capture_output=True, text=True, timeout=60, check=False)
        assert p.returncode == 0 and expect in p.stdout, p.stderr


def test_killed_run_keeps_finished_rows(tmp_path: Path) -> None:
    """SIGKILL the whole job mid-way: every finished row is in the CSV, whole."""
    out = tmp_path / "k.csv"
    cmd = [*launcher("openmpi", 2), str(bindir("openmpi") / "halocompare"), "-o", str(out),
           "--time-budget", "0.2", "--min-rep-time", "0.002", "--group", "none"]  # rows one by one (groups: test_paired)
    errfile = tmp_path / "err"
    with open(errfile, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        deadline = time.time() + 120
        done = 0
        while time.time() < deadline and done < 5:
            time.sleep(0.2)
            done = sum(1 for line in errfile.read_text().splitlines() if line.startswith("["))
        assert done >= 5, "the run did not progress"
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == COLUMNS
    rows = lines[1:]
    assert len(rows) >= done
    assert all(len(r.split(",")) == len(COLUMNS) for r in rows)
    assert json.loads(out.with_suffix(".json").read_text())["complete"] is False
