"""halocompare's one-sided (RMA) and neighbourhood-collective methods (issue 3)
and the deliberately unsafe send-recv-naive (issue 10): every method verified
on 4/8 neighbours, periodic and not, on the grids that make degenerate cases
(1 process; 2x1 and 3x1 periodic = a process that is its own neighbour; 2x2
periodic = the same partner twice), both window flavours, the assertions, n/a
instead of a crash, bad input, and the watchdog.  --methods all on every
communicator (3x3 under Open MPI, 1x1 and 2x1 under MPICH) and large messages
in MPI_Win_allocate windows share the point-to-point runs of
tests/test_halocompare.py (test_all_methods_verified, test_large_messages_verified)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import (
    ONCE_BARRIER,
    Run,
    bindir,
    check_bad_input,
    check_schema,
    run_mpi,
    stdout_tables,
)

RMA = ["rma-fence-put", "rma-fence-get", "rma-pscw-put", "rma-pscw-get", "rma-lock-put", "rma-lock-get",
       "rma-lockall-flush"]
NBR = ["neighbor-alltoall", "neighbor-ineighbor"]
NEW = RMA + NBR
P2P = ["irecv-send", "irecv-isend", "phased", "persistent", "sendrecv"]
COMMS = ("world", "dup", "evenodd", "cart", "node", "random")
NAIVE = "send-recv-naive"


def check_verified(
    run: Run, n: int, methods: list[str], comms: tuple[str, ...] = COMMS, periodic: tuple[str, ...] = ("0", "1")
) -> list[dict[str, str]]:
    """Every (comm, method, 4/8, periodic) halo row is there, verified, with times."""
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", n)
    halo = [r for r in rows if r["test"] == "halo"]
    assert {(r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in halo} == {
        (c, m, nb, p) for c in comms for m in methods for nb in ("4", "8") for p in periodic
    }
    assert len(halo) == len(comms) * len(methods) * 2 * len(periodic)
    for r in halo:
        assert r["verified"] == "yes", r
        assert r["stop_reason"] in ("ci", "max-reps", "budget"), r
        assert 0 < float(r["time_min_s"]) <= float(r["time_median_s"]) <= float(r["time_max_s"])
        assert r["bytes"] == str(8 * int(run.meta()["halocompare"]["count"]))
    return halo


# ONCE_BARRIER (conftest) in the grid tests, which check every method verified
# (test_window_flavours_and_assertions keeps the defaults).


def one_sided_table(stdout: str) -> list[str]:
    """The lines of the one-sided/neighbourhood tables."""
    return [b for b in stdout_tables(stdout) if "one-sided and neighbourhood collectives" in b]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_self_neighbour_grids(tmp_path: Path, n: int) -> None:
    """1x1, 2x1 and 3x1 grids: periodic, a process is its own E/W neighbour (and 2x1: N = S).  Open MPI;
    MPICH's 1x1 and 2x1 run every method on every communicator in
    test_halocompare.py::test_all_methods_verified."""
    run = run_mpi("openmpi", n, "halocompare", "--quick", "--verify", "--methods", ",".join(NEW), "--tests",
                  "halo", "--comms", "world,cart", *ONCE_BARRIER, out=tmp_path / "h.csv", timeout=600)
    check_verified(run, n, NEW, comms=("world", "cart"))
    assert run.meta()["halocompare"]["dims"] == [n, 1]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_2x2_periodic_same_partner_twice(tmp_path: Path, lib: str) -> None:
    """2x2 periodic: N and S (E and W, and the diagonals) are the same process; slots must not collide.
    Open MPI on every communicator; MPICH (busy polling: 4 ranks cost ~0.5 s a test on 2 cores) on world,
    tiny — what is MPICH's own here is the library under repeated partners, not the rank maps (our code),
    which MPICH runs on every communicator on 1 and 2 ranks (test_halocompare.py::test_all_methods_verified).
    MPICH's partners repeated in several dimensions: test_halo_dims.py::test_mpich_4_ranks_every_method."""
    comms = ("world",) if lib == "mpich" else COMMS
    small = ["--count", "3", "--comms", ",".join(comms)] if lib == "mpich" else []
    run = run_mpi(lib, 4, "halocompare", "--quick", "--verify", "--periodic", "yes", "--tests", "halo",
                  "--methods", ",".join(NEW), *small, *ONCE_BARRIER, out=tmp_path / "h.csv", timeout=900)
    check_verified(run, 4, NEW, comms=comms, periodic=("1",))
    assert run.meta()["halocompare"]["dims"] == [2, 2]


def test_large_messages_2x2(tmp_path: Path) -> None:
    """Past the eager limit, 2x2 periodic, in MPI_Win_create windows (MPI_Win_allocate, the default: every
    method in test_halocompare.py::test_large_messages_verified)."""
    run = run_mpi("openmpi", 4, "halocompare", "--quick", "--verify", "--count", "100000", "--periodic", "yes",
                  "--comms", "world", "--tests", "halo", "--methods", ",".join(NEW), "--win", "create", *ONCE_BARRIER,
                  out=tmp_path / "create.csv", timeout=600)
    check_verified(run, 4, NEW, comms=("world",), periodic=("1",))
    assert run.meta()["halocompare"]["win"] == "create"


@pytest.mark.parametrize("win", ["create", "allocate"])
@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_window_flavours_and_assertions(tmp_path: Path, lib: str, win: str) -> None:
    """Both window flavours with every assertion, verified."""
    n = 3 if lib == "openmpi" else 2
    run = run_mpi(lib, n, "halocompare", "--quick", "--verify", "--methods", ",".join(RMA), "--win", win,
                  "--assert", "all", "--tests", "halo", "--comms", "world,random", out=tmp_path / "h.csv",
                  timeout=600)
    check_verified(run, n, RMA, comms=("world", "random"))
    meta = run.meta()["halocompare"]
    assert meta["win"] == win and meta["assert"] == "noprecede,nosucceed,nocheck"
    assert f"RMA: window MPI_Win_{win}, assertions noprecede,nosucceed,nocheck" in run.stdout


def test_missing_window_flavour_is_na(tmp_path: Path) -> None:
    """A window the library cannot create is an n/a cell with the reason, not a crash.

    Open MPI 4.1 cannot MPI_Win_create on a single process (no RMA-capable
    transport); where it can, the rows must be verified instead."""
    run = run_mpi("openmpi", 1, "halocompare", "--quick", "--verify", "--methods", ",".join(RMA + P2P[:1]),
                  "--win", "create", "--tests", "halo", "--comms", "world", out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", 1)
    assert len(rows) == len(RMA + P2P[:1]) * 4
    na = [r for r in rows if r["stop_reason"].startswith("n/a")]
    for r in na:
        assert r["method"] in RMA
        assert r["stop_reason"].startswith("n/a: MPI_Win_create failed: "), r
        assert r["time_median_s"] == "" and r["mbps"] == "" and r["verified"] == ""
    for r in rows:
        assert r in na or r["verified"] == "yes", r
    if na:
        assert "n/a" in "".join(one_sided_table(run.stdout))


@pytest.mark.parametrize("method", ["rma-lock-put", "rma-lock-get"])
def test_verification_covers_rma(tmp_path: Path, method: str) -> None:
    """The check reads the halo from the window (put) or what was got from the neighbour's exposed window
    (get): stale data there is reported."""
    run = run_mpi("openmpi", 2, "halocompare", "--quick", "--verify", "--methods", method,
                  out=tmp_path / "h.csv", env={"MPIMB_FAULT": f"halo/{method}@0"})
    assert run.returncode == 1
    assert f"verification failed in halocompare halo {method} world" in run.stderr
    rows = run.rows()
    assert {r["verified"] for r in rows if r["method"] == method} == {"no"}
    assert {r["verified"] for r in rows if r["test"] == "one-sender"} == {"yes"}


def test_asan_clean(tmp_path: Path) -> None:
    """The ASan+UBSan build (MPICH) runs every new method verified and reports nothing."""
    for n in (1, 2):
        run = run_mpi("mpich", n, "halocompare", "--quick", "--verify", "--methods", ",".join(NEW), "--tests",
                      "halo", "--comms", "world,cart", *ONCE_BARRIER, san="asan", out=tmp_path / f"a{n}.csv", timeout=600)
        assert run.returncode == 0, run.stderr
        assert "AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr
        check_verified(run, n, NEW, comms=("world", "cart"))


# ------------------------------------------------------------ the unsafe method


def test_unsafe_method_below_eager_limit(tmp_path: Path) -> None:
    """With --unsafe, send-recv-naive runs (and is correct) while the messages are small."""
    run = run_mpi("openmpi", 4, "halocompare", "--quick", "--verify", "--unsafe", "--methods", NAIVE,
                  "--count", "10", "--tests", "halo", "--comms", "world", out=tmp_path / "h.csv")
    check_verified(run, 4, [NAIVE], comms=("world",))
    assert NAIVE in run.stdout


def test_unsafe_method_deadlock_caught_by_watchdog(tmp_path: Path) -> None:
    """Above the eager limit it deadlocks: the watchdog names the test and the job exits non-zero."""
    run = run_mpi("openmpi", 2, "halocompare", "--unsafe", "--methods", NAIVE, "--count", "1000000",
                  "--timeout", "5", out=tmp_path / "h.csv", timeout=60)
    assert run.returncode != 0
    assert "halocompare: test 'halocompare halo send-recv-naive world 4-nbr non-periodic 8000000 B' timed out" \
        in run.stderr
    assert run.meta()["complete"] is False


def test_list_marks_unsafe_method() -> None:
    p = subprocess.run([str(bindir("openmpi") / "halocompare"), "--list"], capture_output=True, text=True,
                       timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    for m in NEW:
        assert f" {m}" in p.stdout
    assert f"{NAIVE} (needs --unsafe)" in p.stdout


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--methods", NAIVE], f"halocompare: --methods {NAIVE} needs --unsafe"),
        (["--methods", f"irecv-send,{NAIVE}"], f"halocompare: --methods {NAIVE} needs --unsafe"),
        (["--win", "shared"], "halocompare: --win: unknown value 'shared'"),
        (["--assert", "nostore"], "halocompare: --assert: unknown value 'nostore'"),
        (["--assert", ""], "halocompare: --assert needs a comma-separated list"),
        (["--unsafe=1"], "halocompare: --unsafe=1 takes no value"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    check_bad_input("halocompare", args, message, tmp_path)  # the binary alone (conftest)
