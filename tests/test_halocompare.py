"""halocompare end to end: every communicator x method x 4/8 neighbours x
periodic, verified, on the process counts that make degenerate grids
(1 process, 1xp for primes, 2x1 periodic = own neighbour, 2x2 periodic =
the same partner twice), under Open MPI and MPICH; --methods all (the
one-sided and neighbourhood-collective methods beside point-to-point, their
tables) on 3x3 (Open MPI) and 1x1, 2x1 (MPICH)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import (
    COLUMNS,
    ONCE_BARRIER,
    Run,
    bindir,
    check_schema,
    header_words,
    launcher,
    run_mpi,
    stdout_tables,
)
from test_halo_mpi4 import library, mpi4_na

P2P = "irecv-send,irecv-isend,phased,persistent,sendrecv"
RMA = ["rma-fence-put", "rma-fence-get", "rma-pscw-put", "rma-pscw-get", "rma-lock-put", "rma-lock-get",
       "rma-lockall-flush"]
NEW = [*RMA, "neighbor-alltoall", "neighbor-ineighbor", "persistent-neighbor"]
P2PS = P2P.split(",")
ALL = [*P2PS, "partitioned", *NEW]
NAIVE = "send-recv-naive"
COMMS = ("world", "dup", "evenodd", "cart", "node", "random")
# MPI_Dims_create(n, 2)
GRIDS = {1: [1, 1], 2: [2, 1], 3: [3, 1], 4: [2, 2], 5: [5, 1], 6: [3, 2], 8: [4, 2], 9: [3, 3], 16: [4, 4]}
# ONCE_BARRIER (conftest) for the runs whose point is every test verified on a grid; the others keep
# --quick's repetitions and clock-synchronised start.


def check_table(stdout: str, methods: list[str]) -> None:
    """The talk's shape: both blocks, every communicator a row, 4/8 groups, methods as columns."""
    for block in ("Non-periodic mesh", "Periodic mesh"):
        assert block in stdout
    assert "4 neighbours" in stdout and "8 neighbours" in stdout
    for part in stdout.split("Periodic mesh")[0:2]:
        lines = part.splitlines()
        for comm in COMMS:
            assert any(line.split()[:1] == [comm] for line in lines), f"no row for {comm}"
    # the non-periodic block's header lines: past 120 columns the table goes on in (cont.) blocks
    header = [w for line in stdout.split("Periodic mesh")[0].splitlines() if line.startswith("comm ")
              for w in line.split()]
    for m in methods:
        assert header.count(m) == 2  # once per neighbour group
    assert "One sender" in stdout and "one-sender/halo" in stdout
    assert "cart: MPI_Cart_create(reorder=1) moved" in stdout


def check_halo_run(run: Run, n: int, methods: list[str] = P2PS) -> None:
    """Every (comm, method, 4/8, periodic) halo row once and 4 one-sender rows: verified, measured, 2000
    doubles; the talk's table; the metadata (the grid MPI_Dims_create makes); progress lines."""
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", n)
    halo = [r for r in rows if r["test"] == "halo"]
    assert len(halo) == len(COMMS) * len(methods) * 2 * 2
    assert {(r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in halo} == {
        (c, m, nb, p) for c in COMMS for m in methods for nb in ("4", "8") for p in ("0", "1")
    }
    for r in rows:
        assert r["bytes"] == "16000" and r["threads"] == "1" and r["thread_level"] == "single"
        why = mpi4_na(r, library(run))
        if why:  # an MPI-4 method the library lacks
            assert r["stop_reason"].startswith(f"n/a: {why}"), r
            continue
        assert r["verified"] == "yes", r
        assert r["stop_reason"] in ("ci", "max-reps", "budget"), r
        t = [float(r[c]) for c in ("time_min_s", "time_median_s", "time_max_s")]
        assert 0 < t[0] <= t[1] <= t[2]
        if int(r["reps"]) >= 6:  # below 6 repetitions no 95 % interval exists: none is written
            assert float(r["time_ci_lo_s"]) <= float(r["time_median_s"]) <= float(r["time_ci_hi_s"])
        else:
            assert r["time_ci_lo_s"] == r["time_ci_hi_s"] == ""
        if n > 1:
            assert float(r["mbps"]) > 0
    assert len([r for r in rows if r["test"] == "one-sender"]) == 4
    check_table(run.stdout, P2P.split(","))
    meta = run.meta()
    assert meta["program"] == "halocompare" and meta["nnodes"] == 1 and meta["ppn"] == n
    assert len(meta["ranks"]) == n and all(r["cpus"] for r in meta["ranks"])
    assert meta["topology"]["pus"] >= 1 and meta["topology"]["cores"] >= 1
    assert meta["mpi"]["library_version"]
    assert meta["halocompare"]["count"] == 2000 and meta["halocompare"]["dims"] == GRIDS[n]
    assert "[1/" in run.stderr  # progress lines


def check_one_sided(run: Run) -> None:
    """--methods all: never the unsafe method; a one-sided/neighbourhood table per boundary (non-periodic,
    periodic), each new method once per stencil, a row per communicator, the window and assertions named,
    no n/a; the metadata's window and assertions."""
    assert NAIVE not in {r["method"] for r in run.rows()}  # "all" never selects the unsafe method
    blocks = [b for b in stdout_tables(run.stdout) if "one-sided and neighbourhood collectives" in b]
    assert len(blocks) == 2  # non-periodic and periodic
    for b in blocks:
        header = header_words(b, "comm")
        assert all(header.count(m) == 2 for m in NEW)  # once per neighbour group
        assert all(any(line.split()[:1] == [c] for line in b.splitlines()) for c in COMMS)
        assert "RMA: window MPI_Win_allocate, assertions none" in b
        assert "n/a" not in b
    meta = run.meta()["halocompare"]
    assert meta["win"] == "allocate" and meta["assert"] == "none"


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 8, 16])
def test_openmpi_all_grids(tmp_path: Path, n: int) -> None:
    """The point-to-point methods on every grid (3x3: test_all_methods_verified); from 4 ranks (on 2 cores)
    once per test: --quick's repetitions and clock-synchronised start are checked on 1, 2 and 3."""
    once = ONCE_BARRIER if n >= 4 else ()
    run = run_mpi("openmpi", n, "halocompare", "--quick", "--verify", "--methods", P2P, *once,
                  out=tmp_path / "h.csv")
    check_halo_run(run, n)
    assert "Open MPI" in run.meta()["mpi"]["library_version"]


@pytest.mark.parametrize(("lib", "n"), [("openmpi", 9), ("mpich", 1), ("mpich", 2)])
def test_all_methods_verified(tmp_path: Path, lib: str, n: int) -> None:
    """The issue's "done when" (issue 3): --quick --verify --methods all, every method on every
    communicator, on 3x3 and on the grids where a process is its own neighbour (1x1; 2x1 periodic: E = W
    and N = S), with the one-sided and neighbourhood tables.  9 ranks and MPICH's 2 (busy polling) once
    per test; MPICH on 1 rank keeps --quick's repetitions."""
    once = ONCE_BARRIER if n > 1 else ()
    run = run_mpi(lib, n, "halocompare", "--quick", "--verify", "--methods", "all", *once, out=tmp_path / "h.csv",
                  timeout=900)
    check_halo_run(run, n, ALL)
    check_one_sided(run)
    assert ("Open MPI" if lib == "openmpi" else "MPICH") in run.meta()["mpi"]["library_version"]


def test_mpich_four_ranks_smallest(tmp_path: Path) -> None:
    """MPICH on the 2x2 grid, point-to-point (non-periodic and periodic: the same partner twice).  MPICH
    busy-polls: 4 ranks on 2 cores only with the smallest counts, once per test, on world (the rank maps
    are our code, the same under either library: MPICH runs every communicator on 1 and 2 ranks,
    test_all_methods_verified)."""
    run = run_mpi("mpich", 4, "halocompare", "--quick", "--verify", "--count", "1", *ONCE_BARRIER,
                  "--comms", "world", "--methods", "irecv-isend,phased,sendrecv", out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", 4)
    assert len(rows) == 3 * 2 * 2 + 4 and all(r["verified"] == "yes" for r in rows)


def test_sanitizers_clean(tmp_path: Path) -> None:
    """The ASan+UBSan build (MPICH: Open MPI needs suppressions) runs verified and reports nothing."""
    for n in (1, 2):
        run = run_mpi("mpich", n, "halocompare", "--quick", "--verify", "--methods", P2P, *ONCE_BARRIER, san="asan",
                      out=tmp_path / f"a{n}.csv")
        assert run.returncode == 0, run.stderr
        assert "AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr
        assert all(r["verified"] == "yes" for r in run.rows())


def test_large_messages_verified(tmp_path: Path) -> None:
    """Past the eager limit (rendezvous) on the 2x2 periodic mesh: same partner twice; every method (the
    one-sided ones in MPI_Win_allocate windows: MPI_Win_create in test_halocompare_rma), once per test."""
    run = run_mpi("openmpi", 4, "halocompare", "--quick", "--verify", "--count", "100000", "--periodic", "yes",
                  "--comms", "world,cart", *ONCE_BARRIER, out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", 4)
    assert all(r["verified"] == "yes" or mpi4_na(r, "openmpi") for r in rows)
    assert run.meta()["halocompare"]["dims"] == [2, 2] and run.meta()["halocompare"]["win"] == "allocate"
    halo = [r for r in rows if r["test"] == "halo"]
    assert sorted((r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in halo) == sorted(
        (c, m, nb, "1") for c in ("world", "cart") for m in ALL for nb in ("4", "8"))
    for r in (r for r in halo if not mpi4_na(r, "openmpi")):
        assert r["stop_reason"] in ("ci", "max-reps", "budget"), r
        assert 0 < float(r["time_min_s"]) <= float(r["time_median_s"]) <= float(r["time_max_s"])
        assert r["bytes"] == "800000"


def test_verification_catches_a_bad_element(tmp_path: Path) -> None:
    """Rank 0 sends stale data in one method: its neighbour names it; every other test goes on."""
    run = run_mpi("openmpi", 3, "halocompare", "--quick", "--verify", *ONCE_BARRIER, out=tmp_path / "h.csv",
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
