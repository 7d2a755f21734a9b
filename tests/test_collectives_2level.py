"""collectives' two-level (node-aware) bcast, reduce and allreduce, by messages
and through an MPI-3 shared-memory window: the issue's done-when command on
both libraries, every method caught by the fault injection (the root off its
node's leader), the communicators of --comms side by side with their
aggregate bandwidth, root lists, and real multi-node runs (two simulated
hosts under SimGrid SMPI, where each node's window is shared by its ranks)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import Run, check_schema, run_mpi, text_table
from mpimb.schema import parse_params
from test_collectives import ONE_REP, check_agg, table_rows

METHODS = ("library", "2level", "2level-shm")
TESTS = ("bcast", "reduce", "allreduce")
QUICK_SIZES = [0] + [1 << k for k in range(13)]


def check_done_when(run, n: int, sizes: list[int]) -> None:  # type: ignore[no-untyped-def]
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", n)
    want = {(t, m, str(b)) for t in TESTS for m in METHODS for b in sizes if t == "bcast" or b % 8 == 0}
    assert {(r["test"], r["method"], r["bytes"]) for r in rows} == want and len(rows) == len(want)
    for r in rows:
        assert r["verified"] == "yes" and r["comm"] == "world", r
        sync = parse_params(r["params"])["sync"]  # the harness's choice per test
        assert sync in ("barrier", "window"), r
        want_params = f"sync={sync};timing=osu" if r["test"] == "allreduce" else f"root=0;sync={sync};timing=osu"
        assert r["params"] == want_params, r
        check_agg(r, n)
    for t in TESTS:  # each collective's table has its two-level columns and the aggregate bandwidth
        block = run.stdout.split(f"\n{t}: time per call in us", 1)[1].split("\n\n", 1)[0]
        assert f"{t}  i{t}" not in block and f"{t}  2level  2level-shm  agg MB/s" in block, block


def test_done_when_openmpi(tmp_path: Path) -> None:
    """The issue's command on 8 ranks; how repetitions start stays the harness's choice (one repetition)."""
    run = run_mpi("openmpi", 8, "collectives", "--tests", "bcast,reduce,allreduce", "--quick", "--verify",
                  "--reps", "1", "--max-reps", "1", "--warmup", "0", out=tmp_path / "c.csv", timeout=900)
    check_done_when(run, 8, QUICK_SIZES)


def test_done_when_mpich(tmp_path: Path) -> None:
    """MPICH busy-polls 2 cores: 2 ranks (one node: the same two-level code as 8, a leader and its node's
    shared window; Open MPI runs 8 above), one size, one repetition."""
    run = run_mpi("mpich", 2, "collectives", "--tests", "bcast,reduce,allreduce", "--quick", "--verify",
                  "-m", "64:64", "--reps", "1", "--max-reps", "1", "--warmup", "0", out=tmp_path / "c.csv",
                  timeout=900)
    check_done_when(run, 2, [64])


FAULTS = [("bcast", "2level", 3), ("bcast", "2level-shm", 3), ("reduce", "2level", 1), ("reduce", "2level-shm", 4),
          ("allreduce", "2level", 0), ("allreduce", "2level-shm", 2)]


@pytest.mark.parametrize(("test", "method", "rank"), FAULTS, ids=[f"{t}-{m}" for t, m, _ in FAULTS])
def test_fault_is_caught(tmp_path: Path, test: str, method: str, rank: int) -> None:
    """Stale input from one rank (a broadcast's root: rank 3, not its node's leader) fails the real check."""
    run = run_mpi("openmpi", 5, "collectives", "--quick", "--verify", *ONE_REP, "-m", "64:64", "-t", f"{test}-{method}",
                  "--root", "3", out=tmp_path / "f.csv", env={"MPIMB_FAULT": f"{test}/{method}@{rank}"})
    assert run.returncode == 1, run.stderr
    (row,) = run.rows()
    assert (row["test"], row["method"], row["verified"]) == (test, method, "no")
    what = "broadcast data from rank 3" if test == "bcast" else "reduced element 0: got"
    assert re.search(rf"verification failed in collectives {test} {method} world 64 B: rank \d: {what}", run.stderr)
    assert run.meta()["verification_failures"] == 1


def test_comms_roots_side_by_side(tmp_path: Path) -> None:
    """world, dup, split (3+2) and node on 5 ranks, three roots: every row verified, the comm column
    names the communicator, agg_mbps counts every instance (both halves), the stdout groups them."""
    run = run_mpi("openmpi", 5, "collectives", "--quick", "--verify", *ONE_REP, "-m", "0:256", "--segment", "24",
                  "-t", "bcast,reduce,allreduce,bcast-tree-pipelined", "--comms", "world,dup,split,node",
                  "--root", "same,rotate,1", out=tmp_path / "c.csv", timeout=900)
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", 5)
    assert {r["comm"] for r in rows} == {"world", "dup", "split", "node"}
    instances = {"world": [5], "dup": [5], "split": [3, 2], "node": [5]}
    for r in rows:
        assert r["verified"] == "yes", r
        check_agg(r, 5, instances[r["comm"]])
        root = re.search(r"(?:^|;)root=([^;]*)", r["params"])
        if r["test"] == "allreduce":
            assert root is None
        else:
            assert root and root.group(1) in ("0", "rotate", "1"), r
        assert ("segment=24" in r["params"]) == (r["method"] == "tree-pipelined")
    sizes = ["0"] + [str(1 << k) for k in range(9)]
    # sync (how repetitions start) is the harness's choice per size: not part of a configuration here
    per = {(r["test"], r["method"], r["comm"], re.sub(r"(^|;)sync=[^;]*", "", r["params"])) for r in rows}
    # bcast: 4 methods x 3 roots, reduce: 3 x 3, allreduce: 3, on each of 4 communicators
    assert len(per) == 4 * (4 * 3 + 3 * 3 + 3) and len(rows) == 4 * (4 * 3 * 10 + 3 * 3 * 7 + 3 * 7)
    assert {r["bytes"] for r in rows} == set(sizes)
    meta = run.meta()["collectives"]
    assert meta["root"] == ["same", "rotate", 1] and meta["comms"] == ["world", "dup", "split", "node"]
    for title in ("bcast: time per call in us (median); agg MB/s = bytes bcast moves / time; root rotate",
                  ("Broadcast algorithms: time per call in us (median), * = fastest; chain and tree segment 24 B; "
                   "root 1")):
        assert f"\n{title}\n" in run.stdout
        groups = " ".join(text_table(run.stdout, title)[0])  # the blocks of a wrapped table joined
        assert groups == "world: 5 ranks dup: 5 ranks split: 3+2 ranks node: 1x5 ranks", groups
    for line in table_rows(run.stdout, "Broadcast algorithms: time per call in us (median), * = fastest; "
                           "chain and tree segment 24 B; root same"):
        assert line.count("*") == 4  # the fastest in each communicator's group


def test_root_outside_a_smaller_communicator(tmp_path: Path) -> None:
    """--root 3 is in world (4 ranks) but not in a half (2 ranks): n/a there, with the reason."""
    run = run_mpi("openmpi", 4, "collectives", "--quick", "--verify", *ONE_REP, "-m", "8:8", "-t", "reduce",
                  "--comms", "world,split", "--root", "3", out=tmp_path / "c.csv")
    assert run.returncode == 0, run.stderr
    for r in check_schema(run, "collectives", 4):
        if r["comm"] == "world":
            assert r["verified"] == "yes", r
        else:
            assert r["stop_reason"] == "n/a: root 3 is outside this communicator (2 ranks)", r


# ------------------------------------------------------------ two real nodes (simulated)

needs_smpi = pytest.mark.skipif(not (shutil.which("smpirun") and shutil.which("smpicc")),
                                reason="SimGrid SMPI not installed (apt-get install libsimgrid-dev)")


@needs_smpi
def test_two_nodes_simulated(tmp_path: Path) -> None:
    """4 ranks on two simulated hosts (2 per host): two nodes for the node map, so the leader level
    and the root's node (root 1, and rotate's 1 and 3, lead nothing) are exercised; shared windows work."""
    from test_simulate import simulate

    out = tmp_path / "c.csv"
    p = simulate("collectives", "-n", "4", "--ppn", "2", "--platform", "two-node", "--", "-o", str(out), "--quick",
                 "--verify", "-m", "8:1K", "--root", "same,rotate,1", "-t", "bcast,reduce,allreduce",
                 "--comms", "world,split,node", cwd=tmp_path)
    run = Run(p.returncode, p.stdout, p.stderr, out)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "collectives", 4)
    meta = run.meta()
    assert meta["simulated"] is True and meta["nnodes"] == 2 and meta["ppn"] == 2
    assert {r["method"] for r in rows} == set(METHODS)
    for r in rows:
        assert r["verified"] == "yes", r
    assert "node: 2x2 ranks" in run.stdout
