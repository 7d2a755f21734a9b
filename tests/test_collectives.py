"""collectives end to end: every library collective (blocking and nonblocking),
the user-level broadcast algorithms, the two-level forms and the series test,
verified, on 1..16 ranks including non-powers of two (Open MPI) and 1, 2 ranks
(MPICH); root placement, the two timing methods, the segment size, the
aggregate bandwidth, and bad input.  tests/test_collectives_2level.py has the
two-level algorithms and the communicators in depth."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import (
    ONCE,
    bindir,
    check_bad_input,
    check_schema,
    launcher,
    run_mpi,
    text_table,
)

LIBRARY = ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall",
           "reduce_scatter_block", "scan")
REDUCTIONS = {"reduce", "allreduce", "reduce_scatter_block", "scan"}
ALGORITHMS = ("binomial", "chain", "tree-pipelined", "scatter-allgather")
TWO_LEVEL = ("bcast", "reduce", "allreduce")
# bytes the whole operation moves, in message sizes, for P ranks (docs/collectives.md)
AGG = {"bcast": lambda p: p - 1, "reduce": lambda p: p - 1, "allreduce": lambda p: 2 * (p - 1),
       "gather": lambda p: p - 1, "scatter": lambda p: p - 1, "scan": lambda p: p - 1,
       "allgather": lambda p: p * (p - 1), "alltoall": lambda p: p * (p - 1),
       "reduce_scatter_block": lambda p: p * (p - 1), "series": lambda p: 8 * (p - 1)}
QUICK_SIZES = [0] + [1 << k for k in range(13)]  # --quick: 0 B .. 4 KiB
# one repetition, no warm-up, repetitions started by a barrier (no clock synchronisation): where what is
# checked is the rows, the verification and the tables, not the statistics or how repetitions start
ONE_REP = (*ONCE, "--sync", "barrier")


def expected_rows(sizes: list[int]) -> set[tuple[str, str, str]]:
    """(test, method, bytes) of a run of every test over sizes."""
    want: set[tuple[str, str, str]] = set()
    for name in LIBRARY:
        for test in (name, "i" + name):
            if name == "barrier":
                want.add((test, "library", ""))
                continue
            for b in sizes:
                if name not in REDUCTIONS or b % 8 == 0:
                    want.add((test, "library", str(b)))
                    if name in TWO_LEVEL and test == name:
                        want |= {(test, "2level", str(b)), (test, "2level-shm", str(b))}
    for b in sizes:
        want |= {("bcast", m, str(b)) for m in ALGORITHMS}
        want |= {("series", m, str(b)) for m in ("bcast-loop", "chain")}
    return want


def table_rows(stdout: str, title: str) -> list[list[str]]:
    """The data lines of the stdout table whose title starts with title (wrapped blocks joined)."""
    t = text_table(stdout, title)
    sep = next(i for i, row in enumerate(t) if row and set(row[0]) == {"-"})
    return t[sep + 1:]


def check_run(run, n: int, sizes: list[int]) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", n)
    assert {(r["test"], r["method"], r["bytes"]) for r in rows} == expected_rows(sizes)
    assert len(rows) == len(expected_rows(sizes))  # no duplicates
    for r in rows:
        assert r["comm"] == "world"
        assert r["stop_reason"] in ("ci", "max-reps", "budget"), r
        # a barrier has no data to check; everything else is verified
        assert r["verified"] == ("" if r["test"] in ("barrier", "ibarrier") else "yes"), r
        t = [float(r[c]) for c in ("time_min_s", "time_median_s", "time_max_s")]
        assert 0 <= t[0] <= t[1] <= t[2]
        assert r["neighbors"] == "" and r["periodic"] == ""
        check_agg(r, n)
    # stdout: one table per collective, the broadcast comparison, the series
    for name in LIBRARY:
        assert f"\n{name}: time per call in us" in run.stdout
    assert f"{n} ranks" in run.stdout
    bc = table_rows(run.stdout, "Broadcast algorithms")
    assert [line[0] for line in bc] == [fmt(b) for b in sizes]
    for line in bc:
        assert len(line) == 7 and line.count("*") == 1  # size, 5 algorithms, one marked fastest
    series = table_rows(run.stdout, "Series")
    assert [line[0] for line in series] == [fmt(b) for b in sizes]
    meta = run.meta()["collectives"]
    assert meta["root"] == "same" and meta["timing"] == "osu" and meta["series_messages"] == 8
    return rows


def check_agg(r: dict[str, str], n: int, instances: list[int] | None = None) -> None:
    """agg_mbps = bytes the operation moves (over every instance: the communicators' sizes) / median time."""
    base = r["test"].removeprefix("i") if r["test"] != "ibarrier" else "barrier"
    t, b = float(r["time_median_s"] or 0), int(r["bytes"] or 0)
    units = 0 if base == "barrier" else sum(AGG[base](p) for p in (instances or [n]))
    if units == 0 or b == 0 or t <= 0:
        assert r["agg_mbps"] == "", r
        return
    assert float(r["agg_mbps"]) == pytest.approx(units * b / t / 1e6, rel=1e-6), r


def fmt(b: int) -> str:
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return f"{b >> 20}M"
    if b >= 1024 and b % 1024 == 0:
        return f"{b >> 10}K"
    return str(b)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 16])
def test_openmpi_every_collective(tmp_path: Path, n: int) -> None:
    run = run_mpi("openmpi", n, "collectives", "--quick", "--verify", *ONE_REP, out=tmp_path / "c.csv", timeout=600)
    check_run(run, n, QUICK_SIZES)
    assert "Open MPI" in run.meta()["mpi"]["library_version"]


@pytest.mark.parametrize("n", [1, 2])
def test_mpich_every_collective(tmp_path: Path, n: int) -> None:
    """The harness's own choice of how repetitions start (window or barrier) is kept here, on 2 ranks."""
    args = ONE_REP if n == 1 else ()
    run = run_mpi("mpich", n, "collectives", "--quick", "--verify", *args, out=tmp_path / "c.csv", timeout=600)
    check_run(run, n, QUICK_SIZES)
    assert "MPICH" in run.meta()["mpi"]["library_version"]


def verify_failure_root(tmp_path: Path, n: int, *args: str) -> str:
    """Stale broadcast data (MPIMB_FAULT): rank 1's failure names the root of that call."""
    run = run_mpi("openmpi", n, "collectives", "--quick", "--verify", *ONE_REP, "-m", "64:64", "-t", "bcast", *args,
                  out=tmp_path / "v.csv", env={"MPIMB_FAULT": "bcast/library"})
    assert run.returncode == 1, run.stderr
    m = re.search(r"verification failed in collectives bcast library world 64 B: rank 1: "
                  r"broadcast data from rank (\d+): first bad byte at index 0 of 64", run.stderr)
    assert m, run.stderr
    (row,) = [r for r in run.rows() if r["method"] == "library"]
    assert row["verified"] == "no" and row["stop_reason"] in ("ci", "max-reps", "budget")
    return m.group(1)


def test_root_placement(tmp_path: Path) -> None:
    # The first verified call is call 1 (call 0 is the untimed support probe).
    assert verify_failure_root(tmp_path, 4) == "0"
    assert verify_failure_root(tmp_path, 4, "--root", "same") == "0"
    assert verify_failure_root(tmp_path, 4, "--root", "rotate") == "1"
    assert verify_failure_root(tmp_path, 4, "--root", "3") == "3"


@pytest.mark.parametrize("root", ["rotate", "2"])
def test_rooted_verified_with_other_roots(tmp_path: Path, root: str) -> None:
    """Every rooted operation and algorithm is right whoever the root is."""
    run = run_mpi("openmpi", 5, "collectives", "--quick", "--verify", *ONE_REP, "-m", "0:256", "--root", root,
                  "-t", "bcast,reduce,gather,scatter,ibcast,ireduce,igather,iscatter,"
                  "bcast-binomial,bcast-chain,bcast-tree-pipelined,bcast-scatter-allgather,series",
                  "--segment", "24", out=tmp_path / "r.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", 5)
    assert all(r["verified"] == "yes" for r in rows)
    assert run.meta()["collectives"]["root"] == (root if root == "rotate" else int(root))
    assert f"root {root}," in run.stdout


def test_reductions_catch_a_bad_element(tmp_path: Path) -> None:
    """Rank 2 alone contributes stale data: every rank's reduced result is wrong."""
    run = run_mpi("openmpi", 3, "collectives", "--quick", "--verify", *ONE_REP, "-m", "64:64", "-t", "iallreduce",
                  out=tmp_path / "v.csv", env={"MPIMB_FAULT": "iallreduce@2"})
    assert run.returncode == 1
    for r in range(3):
        assert f"iallreduce library world 64 B: rank {r}: reduced element 0: got" in run.stderr
    assert run.meta()["complete"] is True and run.meta()["verification_failures"] == 1


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_timing_subtract(tmp_path: Path, lib: str) -> None:
    n = 3 if lib == "openmpi" else 2
    run = run_mpi(lib, n, "collectives", "--quick", "--verify", "--timing", "subtract", "-m", "8:32",
                  "-t", "barrier,allreduce,ialltoall,bcast-chain,series", out=tmp_path / "s.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", n)
    # barrier; allreduce (library, 2level, 2level-shm), ialltoall, chain x 3 sizes; series 2 methods x 3 sizes
    assert len(rows) == 1 + 5 * 3 + 2 * 3
    for r in rows:
        assert float(r["time_median_s"]) >= 0 and r["stop_reason"] in ("ci", "max-reps", "budget")
    meta = run.meta()["collectives"]
    assert meta["timing"] == "subtract"
    ref = meta["barrier_reference_s"]  # one barrier-only loop per test that has a barrier to subtract
    assert ref["tests"] == len(rows) - 1 and 0 < ref["min"] <= ref["max"]
    assert "timing subtract" in run.stdout


def test_series_and_segment(tmp_path: Path) -> None:
    """m messages: the CSV time is the total, mbps counts m x bytes, the table
    divides by m; the chain's segment need not divide the message."""
    run = run_mpi("openmpi", 4, "collectives", "--quick", "--verify", *ONE_REP, "-m", "1K:4K", "--messages", "5",
                  "--segment", "100", "-t", "bcast-chain,series", out=tmp_path / "s.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", 4)
    assert {(r["test"], r["method"]) for r in rows} == {("bcast", "chain"), ("series", "bcast-loop"),
                                                         ("series", "chain")}
    assert all(r["verified"] == "yes" for r in rows)
    for r in rows:
        if float(r["time_median_s"]) > 0:
            m = 5 if r["test"] == "series" else 1
            assert float(r["mbps"]) == pytest.approx(m * int(r["bytes"]) / float(r["time_median_s"]) / 1e6,
                                                     rel=1e-6)
    meta = run.meta()["collectives"]
    assert meta["series_messages"] == 5 and meta["segment"] == 100
    assert "chain and tree segment 100 B" in run.stdout and "Series: 5 successive broadcasts" in run.stdout
    for line in table_rows(run.stdout, "Series"):
        assert line.count("*") == 1  # the faster total
        # size, total, per message, total, per message; per message = total / 5 (3 digits)
        v = [float(x) for x in line[1:] if x != "*"]
        assert v[1] == pytest.approx(v[0] / 5, rel=0.02) and v[3] == pytest.approx(v[2] / 5, rel=0.02)


def test_select_tests(tmp_path: Path) -> None:
    run = run_mpi("openmpi", 2, "collectives", "--quick", "-m", "8:8", "-t", "scan,iscan",
                  out=tmp_path / "t.csv")
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", 2)
    assert [(r["test"], r["bytes"]) for r in rows] == [("scan", "8"), ("iscan", "8")]
    assert "\nscan: time per call" in run.stdout and "Broadcast algorithms" not in run.stdout


def test_list_and_help() -> None:
    exe = bindir("openmpi") / "collectives"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    out = subprocess.run([*launcher("openmpi", 1), str(exe), "--list"], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0
    for word in ("ireduce_scatter_block", "bcast-scatter-allgather", "series", "rotate", "subtract",
                 "bcast-tree-pipelined", "allreduce-2level-shm", "world,dup,split,node"):
        assert word in out.stdout
    out = subprocess.run([*launcher("openmpi", 1), str(exe), "--help"], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0
    for opt in ("--root", "--timing", "--segment", "--messages", "--tests", "--comms"):
        assert opt in out.stdout


BAD = [
    (["--root", "4"], "collectives: --root 4 is outside the communicator (ranks 0 to 3)"),
    (["--root", "-1"], "collectives: --root must be same, rotate or a rank number, got '-1'"),
    (["--root", "first"], "collectives: --root must be same, rotate or a rank number, got 'first'"),
    (["--root", "same,rotate,0"], "collectives: --root lists root 0 twice ('same' and '0')"),
    (["--root", "rotate,"], "collectives: --root must be a list of same, rotate or rank numbers, got 'rotate,'"),
    (["--root", "1,9"], "collectives: --root 9 is outside the communicator (ranks 0 to 3)"),
    (["--comms", "world,nowhere"], "collectives: --comms: unknown value 'nowhere'"),
    (["--segment", "0"], "collectives: --segment must be a size in bytes from 1 to"),
    (["--tests", "bcast,allreduc"], "collectives: --tests: unknown value 'allreduc'"),
    (["--messages", "0"], "collectives: --messages must be an integer from 1 to 65536, got '0'"),
    (["--timing", "fast"], "collectives: --timing: unknown value 'fast'"),
]


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    """The binary alone (conftest.check_bad_input); a root checked against the communicator on 4 Open MPI
    ranks (ranks 0 to 3)."""
    ranks, libs = (4, ("openmpi",)) if "outside the communicator" in message else (0, ("mpich",))
    check_bad_input("collectives", ["--quick", *args], message, tmp_path, ranks=ranks, libs=libs)


def test_bad_root_mpich(tmp_path: Path) -> None:
    check_bad_input("collectives", ["--quick", "--root", "2"],
                    "collectives: --root 2 is outside the communicator (ranks 0 to 1)", tmp_path, ranks=2,
                    libs=("mpich",), exact=True)
