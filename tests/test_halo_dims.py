"""halocompare in 1, 2 and 3 dimensions and against message size (issue 19):
every method on every communicator, verified, in 1-D and 3-D on 8 ranks
under both libraries; the degenerate 3-D grids (1 process = its own
neighbour in 26 directions, periodic extents of 1 and 2, primes); the
one-sender test from the centre process in every dimension; direction names
in verification messages; the -m MIN:MAX sweep (rows per size, the stdout
table, mpimb-report's table and plot); its bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ONCE_BARRIER, Run, check_bad_input, check_schema, run_mpi
from mpimb.schema import parse_params
from test_halo_mpi4 import MPI4, library, mpi4_na

P2P = ["irecv-send", "irecv-isend", "phased", "persistent", "sendrecv"]
RMA = ["rma-fence-put", "rma-fence-get", "rma-pscw-put", "rma-pscw-get", "rma-lock-put", "rma-lock-get",
       "rma-lockall-flush"]
NBR = ["neighbor-alltoall", "neighbor-ineighbor"]
ALL = P2P + RMA + NBR + MPI4
COMMS = ("world", "dup", "evenodd", "cart", "node", "random")
STENCILS = {1: ("2",), 2: ("4", "8"), 3: ("6", "26")}
# One repetition of one iteration, each starting on a barrier (no clock synchronisation rounds, no
# repetitions): where what is checked is that every method runs verified on a grid, not the statistics
# (test_1d_one_and_two_ranks keeps --quick's 3 repetitions and the clock-synchronised start)
# MPICH busy-polls: past 2 ranks on 2 cores only the smallest counts
TINY = ["--count", "1", *ONCE_BARRIER]


def check_dims(run: Run, n: int, dims: int, grid: list[int], methods: list[str] = ALL,
               comms: tuple[str, ...] = COMMS, periodic: tuple[str, ...] = ("0", "1"),
               stencils: tuple[str, ...] | None = None) -> list[dict[str, str]]:
    """Every (comm, method, stencil, periodic) row is there once, verified, measured, with dims= in params."""
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "halocompare", n)
    halo = [r for r in rows if r["test"] == "halo"]
    stencils = stencils or STENCILS[dims]
    want = {(c, m, nb, p) for c in comms for m in methods for nb in stencils for p in periodic}
    assert {(r["comm"], r["method"], r["neighbors"], r["periodic"]) for r in halo} == want
    assert len(halo) == len(want)
    one = [r for r in rows if r["test"] == "one-sender"]
    assert len(one) == len(stencils) * len(periodic)
    for r in halo + one:
        assert parse_params(r["params"]).get("dims") == str(dims), r
        why = mpi4_na(r, library(run))
        if why:  # an MPI-4 method the library lacks, or partitions that do not divide --count 1
            assert r["stop_reason"].startswith(f"n/a: {why}"), r
            continue
        assert r["verified"] == "yes", r
        assert r["stop_reason"] in ("ci", "max-reps", "budget"), r
        assert 0 < float(r["time_min_s"]) <= float(r["time_median_s"]) <= float(r["time_max_s"])
    meta = run.meta()["halocompare"]
    assert meta["ndims"] == dims and meta["dims"] == grid
    return rows


def check_table(stdout: str, dims: int, grid: list[int], comms: tuple[str, ...] = COMMS) -> None:
    """The talk's shape in any dimension: a column group per stencil, a row per communicator."""
    assert f"grid {'x'.join(map(str, grid))}," in stdout
    for nb in STENCILS[dims]:
        assert f"{nb} neighbours" in stdout
    for block in stdout.split("\n\n"):
        if "MB/s per process" in block and "mesh" in block:
            lines = block.splitlines()
            assert all(any(line.split()[:1] == [c] for line in lines) for c in comms), block
    assert "One sender" in stdout


@pytest.mark.parametrize(("dims", "grid"), [(1, [8]), (3, [2, 2, 2])])
def test_openmpi_8_ranks_every_method_and_comm(tmp_path: Path, dims: int, grid: list[int]) -> None:
    """The issue's "done when", Open MPI: 2x2x2 (periodic: every extent 2, partners repeat) and 8 in a row."""
    run = run_mpi("openmpi", 8, "halocompare", "--dims", str(dims), "--quick", "--verify", "--methods", "all",
                  *ONCE_BARRIER, out=tmp_path / "h.csv", timeout=900)
    check_dims(run, 8, dims, grid)
    check_table(run.stdout, dims, grid)


def test_mpich_4_ranks_every_method(tmp_path: Path) -> None:
    """Every method under MPICH where several distinct partners each repeat: 3-D on 4 ranks, 2x2x1 periodic,
    the full stencil (3 partners in 6, 6 and 12 directions, and the process itself in 2): the one-edge-per-
    partner neighbourhood collectives and the RMA slots per direction under MPICH's pairing of repeated
    edges.  On world, tiny: MPICH busy-polls (4 ranks on 2 cores cost ~0.5 s a test), and what is MPICH's
    own here is the library under repeated partners, not the rank maps (cart, node: our code, the same
    under either library), which MPICH runs on 1 and 2 ranks in 3-D (test_mpich_3d_degenerate_grids).
    The 8-rank grids (2x2x2: 7 partners; 8 in a row) run every method and communicator under Open MPI
    (test_openmpi_8_ranks_every_method_and_comm), MPICH 1-D on 1 and 2 ranks; the whole matrix on 8 ranks
    under MPICH (9.5 minutes) is run by hand (docs/halo-dims.md)."""
    run = run_mpi("mpich", 4, "halocompare", "--dims", "3", "--quick", "--verify", "--methods", "all",
                  "--periodic", "yes", "--neighbors", "26", "--comms", "world", *TINY,
                  out=tmp_path / "h.csv", timeout=1500)
    check_dims(run, 4, 3, [2, 2, 1], comms=("world",), periodic=("1",), stencils=("26",))


# 3-D grids from MPI_Dims_create: 1x1x1 (own neighbour 26 times), 2x1x1 (extents 2 and 1), primes px1x1,
# 2x2x1 (periodic: partners twice and four times), 3x2x2 (extents 3 and 2, interior and boundary)
SHAPES = [(1, [1, 1, 1]), (2, [2, 1, 1]), (3, [3, 1, 1]), (4, [2, 2, 1]), (5, [5, 1, 1]), (12, [3, 2, 2])]


@pytest.mark.parametrize(("n", "grid"), SHAPES, ids=[str(s[0]) for s in SHAPES])
def test_openmpi_3d_degenerate_grids(tmp_path: Path, n: int, grid: list[int]) -> None:
    """Every method on every communicator, verified, on the grid MPI_Dims_create makes of n processes; on
    3x2x2 the non-periodic one-sender rows are test_one_sender_is_the_centre's third grid."""
    # 12 ranks on 2 cores: the shape is the point (node's block is the whole grid there: world's map)
    comms = COMMS if n < 12 else ("world", "cart")
    run = run_mpi("openmpi", n, "halocompare", "--dims", "3", "--quick", "--verify", "--methods", "all",
                  "--comms", ",".join(comms), *ONCE_BARRIER, out=tmp_path / "h.csv", timeout=900)
    rows = check_dims(run, n, 3, grid, comms=comms)
    if n == 12:
        check_centre([r for r in rows if r["test"] == "one-sender" and r["periodic"] == "0"], 3, 4, 11)


@pytest.mark.parametrize(("n", "grid"), [(1, [1, 1, 1]), (2, [2, 1, 1])])
def test_mpich_3d_degenerate_grids(tmp_path: Path, n: int, grid: list[int]) -> None:
    """Every method on every communicator under MPICH: one process its own neighbour 26 times; 2x1x1."""
    run = run_mpi("mpich", n, "halocompare", "--dims", "3", "--quick", "--verify", "--methods", "all",
                  *(TINY if n > 1 else []), out=tmp_path / "h.csv", timeout=900)
    check_dims(run, n, 3, grid)


def test_asan_3d_clean(tmp_path: Path) -> None:
    """The ASan+UBSan build (MPICH) runs every method in 3-D (26 directions: the arrays grew) and reports
    nothing."""
    for n, grid in ((1, [1, 1, 1]), (2, [2, 1, 1])):
        run = run_mpi("mpich", n, "halocompare", "--dims", "3", "--quick", "--verify", "--methods", "all",
                      "--comms", "world,cart", *ONCE_BARRIER, san="asan", out=tmp_path / f"a{n}.csv", timeout=600)
        assert "AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr
        check_dims(run, n, 3, grid, comms=("world", "cart"))


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_1d_one_and_two_ranks(tmp_path: Path, lib: str) -> None:
    """1-D: one process is its own W and E neighbour; two are each other's twice when periodic."""
    for n in (1, 2):
        run = run_mpi(lib, n, "halocompare", "--dims", "1", "--quick", "--verify", "--methods", "all",
                      out=tmp_path / f"h{n}.csv", timeout=600)
        check_dims(run, n, 1, [n])


def check_centre(rows: list[dict[str, str]], dims: int, faces: int, full: int) -> None:
    """Non-periodic one-sender rows, one per stencil: the sender sends to the centre's faces or full
    stencil."""
    assert len(rows) == len(STENCILS[dims])
    for r in rows:
        assert r["verified"] == "yes"
        sent = float(r["mbps"]) * 1e6 * float(r["time_median_s"])  # bytes the sender sends per exchange
        want = faces if r["neighbors"] == STENCILS[dims][0] else full
        assert round(sent / int(r["bytes"])) == want, r


@pytest.mark.parametrize(("dims", "n", "faces", "full"), [(1, 5, 2, 2), (2, 9, 4, 8)])
def test_one_sender_is_the_centre(tmp_path: Path, dims: int, n: int, faces: int, full: int) -> None:
    """The sender is the centre process: on a non-periodic grid it sends to as many neighbours as the centre
    has (5 in a row: 2; 3x3: 4 and 8; 3x2x2: 4 and 11, in test_openmpi_3d_degenerate_grids[12] — a corner
    would have 1; 2 and 3; 3 and 7)."""
    run = run_mpi("openmpi", n, "halocompare", "--dims", str(dims), "--quick", "--verify", "--tests",
                  "one-sender", "--periodic", "no", out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    check_centre(check_schema(run, "halocompare", n), dims, faces, full)


def test_3d_direction_names_in_verification(tmp_path: Path) -> None:
    """Stale data from rank 0 on a 3x1x1 grid: rank 1 names the direction it came from (U, the first
    dimension's -1 side), and the periodic self-neighbour directions are checked too."""
    run = run_mpi("openmpi", 3, "halocompare", "--dims", "3", "--quick", "--verify", "--methods", "irecv-isend",
                  "--comms", "world", "--tests", "halo", out=tmp_path / "h.csv",
                  env={"MPIMB_FAULT": "halo/irecv-isend@0"})
    assert run.returncode == 1
    assert "rank 1: from neighbour 0 (U): first bad index 0" in run.stderr
    assert "rank 0: from neighbour 0 (N)" in run.stderr  # periodic: rank 0 is its own N neighbour
    assert {r["verified"] for r in run.rows()} == {"no"}


def test_dims_2_is_the_default(tmp_path: Path) -> None:
    run = run_mpi("openmpi", 4, "halocompare", "--quick", "--verify", "--methods", "irecv-isend", "--comms", "world",
                  out=tmp_path / "h.csv")
    rows = check_dims(run, 4, 2, [2, 2], methods=["irecv-isend"], comms=("world",))
    assert all(r["bytes"] == "16000" for r in rows)
    assert run.meta()["options"]["sizes"] == [16000, 16000]


# ------------------------------------------------------------------ size sweep


def test_size_sweep_table_and_report(tmp_path: Path) -> None:
    """-m 8:64K: a row per size and method, the stdout rate-vs-size table, mpimb-report's table and plot."""
    from mpimb.load import frame, load
    from mpimb.plots import all_plots
    from mpimb.tables import build

    sizes = [8 << i for i in range(14)]  # 8 .. 64K
    run = run_mpi("openmpi", 4, "halocompare", "-m", "8:64K", "--quick", "--verify", "--methods",
                  "irecv-isend,rma-lock-get", "--comms", "world,cart", "--periodic", "no", "--neighbors", "4",
                  *ONCE_BARRIER, out=tmp_path / "h.csv", timeout=600)
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", 4)
    halo = [r for r in rows if r["test"] == "halo"]
    assert sorted((r["comm"], r["method"], int(r["bytes"])) for r in halo) == sorted(
        (c, m, b) for c in ("world", "cart") for m in ("irecv-isend", "rma-lock-get") for b in sizes)
    assert sorted(int(r["bytes"]) for r in rows if r["test"] == "one-sender") == sizes
    assert all(r["verified"] == "yes" for r in rows)
    meta = run.meta()
    assert meta["options"]["sizes"] == [8, 65536] and meta["halocompare"]["bytes"] == sizes
    # stdout: one compact table per communicator, rows = sizes, columns = methods (+ one-sender on world)
    blocks = [b for b in run.stdout.split("\n\n") if "against bytes per neighbour message" in b]
    assert len(blocks) == 2 and "comm world" in blocks[0] and "comm cart" in blocks[1]
    for b in blocks:
        lines = b.splitlines()
        assert lines[1].split()[:3] == ["bytes", "irecv-isend", "rma-lock-get"]
        assert [int(line.split()[0]) for line in lines[3:]] == sizes
    assert blocks[0].splitlines()[1].split()[-1] == "one-sender"
    assert "doubles per neighbour: MB/s" not in run.stdout  # no talk table per size on stdout
    # mpimb-report
    runs, _, _ = load([str(tmp_path / "h.csv")])
    tables = [t for t in build(frame(runs)) if "against bytes per neighbour message" in t.title]
    assert [t.title.split(":")[0] for t in tables] == ["2-D non-periodic mesh, 4 neighbours, comm world",
                                                        "2-D non-periodic mesh, 4 neighbours, comm cart"]
    for t in tables:
        assert t.header == ["bytes", "irecv-isend", "rma-lock-get"] and len(t.rows) == 14
        assert t.rows[0][0] == "8" and t.rows[-1][0] == "64K"
        assert all(c not in ("", "n/a") for r in t.rows for c in r)
    plots = [p for p in all_plots(frame(runs)) if "halo-sizes" in p.name]
    assert [p.name for p in plots] == [f"{runs[0].label}-halocompare-np4-halo-sizes-2d-non-periodic-4"]
    assert plots[0].png.startswith(b"\x89PNG")


def test_size_sweep_3d_every_method(tmp_path: Path) -> None:
    """A sweep in 3-D runs and verifies every method at every size (the windows follow the size: 4 sizes
    from one double up, on the 2x2x2 periodic grid)."""
    run = run_mpi("openmpi", 8, "halocompare", "--dims", "3", "-m", "8:64", "--quick", "--verify", "--methods",
                  "all", "--comms", "world", "--periodic", "yes", *ONCE_BARRIER, out=tmp_path / "h.csv", timeout=600)
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "halocompare", 8)
    assert {(r["method"], r["neighbors"], int(r["bytes"])) for r in rows if r["test"] == "halo"} == {
        (m, nb, 8 << i) for m in ALL for nb in ("6", "26") for i in range(4)}
    for r in rows:
        assert parse_params(r["params"]).get("dims") == "3", r
        why = mpi4_na(r, "openmpi")  # an MPI-4 method Open MPI lacks: its n/a, with the reason
        assert r["stop_reason"].startswith(f"n/a: {why}") if why else r["verified"] == "yes", r


SIZES_BAD = [
    (["-m", "4:64"], "--sizes: messages are whole doubles: MIN must be a multiple of 8 bytes, got 4"),
    (["-m", "12:96"], "--sizes: messages are whole doubles: MIN must be a multiple of 8 bytes, got 12"),
    (["-m", "0:8"], "--sizes: messages are whole doubles: MIN must be a multiple of 8 bytes, got 0"),
    (["-m", "8:1G"], "--sizes: messages are at most 134217728 bytes (2^24 doubles), got a maximum of"),
    (["-m", "8:64", "--count", "10"], "--count and --sizes are alternatives: give one of them"),
    (["-m", "64:8"], "--sizes must be MIN:MAX in bytes with MIN <= MAX"),
]


def test_sizes_bad_input(tmp_path: Path) -> None:
    """Each: one line, exit 2, no files: the binary alone (conftest.check_bad_input)."""
    for i, (args, message) in enumerate(SIZES_BAD):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        check_bad_input("halocompare", args, f"halocompare: {message}", cwd)


def test_sizes_not_a_power_of_two_start(tmp_path: Path) -> None:
    """MIN a multiple of 8 but not a power of two: the sweep doubles from it (24, 48, 96)."""
    run = run_mpi("openmpi", 2, "halocompare", "-m", "24:100", "--quick", "--verify", "--methods", "irecv-isend",
                  "--comms", "world", "--tests", "halo", out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    assert sorted({int(r["bytes"]) for r in run.rows()}) == [24, 48, 96]
    assert all(r["verified"] == "yes" for r in run.rows())
