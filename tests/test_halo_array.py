"""halocompare --layout array (issue 28, docs/halo-array.md): a local 2-D or 3-D array with one ghost
layer whose faces, edges and corners are exchanged, with every packing (datatype, pack, mpi-pack);
every ghost cell verified for every method x packing, on 4, 8 and 9 ranks (Open MPI) and on MPICH,
including the degenerate periodic grids (extents 1 and 2) and 3-D; one wrong ghost cell caught
(fault injection); packing on its own beside memcpy (--tests pack); the stdout tables, the findings
(method x packing, hand packing against datatypes, pack against memcpy) and the bad input."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from conftest import (
    ONCE_BARRIER,
    REPORT,
    Run,
    check_bad_input,
    check_schema,
    run_mpi,
)
from mpimb.schema import parse_params
from test_halo_mpi4 import MPI4, library, mpi4_na

P2P = ["irecv-send", "irecv-isend", "phased", "persistent", "sendrecv"]
ACTIVE = ["rma-fence-put", "rma-fence-get", "rma-pscw-put", "rma-pscw-get"]
PASSIVE = ["rma-lock-put", "rma-lock-get", "rma-lockall-flush"]
NBR = ["neighbor-alltoall", "neighbor-ineighbor"]
ALL = P2P + ACTIVE + PASSIVE + NBR + MPI4
PACKINGS = ("datatype", "pack", "mpi-pack")
STENCILS = {2: ("4", "8"), 3: ("6", "26")}
# one repetition of one iteration per test, each starting on a barrier: what is checked is that every
# method x packing runs and every ghost cell is right (MPICH busy-polls: tiny counts past 2 ranks)
TINY = ["--count", "4", *ONCE_BARRIER]
QUIET = {"MPIMB_REPORT": "none"}  # no findings after the run (conftest's default; one test asks for them)


def na_reason(method: str, packing: str) -> str | None:
    """The n/a a method x packing must be (the choice documented in docs/halo-array.md), or None."""
    if method.startswith("rma-") and packing == "mpi-pack":
        return "MPI_PACKED data is for send and receive"
    if method in PASSIVE and packing == "datatype":
        return "passive target needs two sets of landing slots"
    return None


def check_rows(run: Run, n: int, dims: int, methods: list[str], comms: tuple[str, ...],
               periodic: tuple[str, ...] = ("0", "1")) -> list[dict[str, str]]:
    """Every (comm, method, packing, stencil, periodic) row once: verified, or n/a with its reason."""
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "halocompare", n)
    assert {r["test"] for r in rows} <= {"halo", "pack"}  # no one-sender under --layout array
    rows = [r for r in rows if r["test"] == "halo"]
    got = {}
    for r in rows:
        p = parse_params(r["params"])
        assert p["layout"] == "array" and p["dims"] == str(dims), r
        got[(r["comm"], r["method"], p["packing"], r["neighbors"], r["periodic"])] = r
    want = {(c, m, pk, nb, per) for c in comms for m in methods for pk in PACKINGS for nb in STENCILS[dims]
            for per in periodic}
    assert set(got) == want and len(rows) == len(want)
    lib = library(run)
    for (_, m, pk, _, _), r in got.items():
        why = na_reason(m, pk) or mpi4_na(r, lib)
        if why:
            assert r["stop_reason"].startswith(f"n/a: {why}"), r
        else:
            assert r["verified"] == "yes" and r["stop_reason"] == "max-reps", r
    return rows


@pytest.fixture(scope="module")
def ompi4(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Open MPI, 4 ranks, 2-D (2x2: periodic extents of 2), every method and packing, two communicators."""
    out = tmp_path_factory.mktemp("array4") / "a.csv"
    return run_mpi("openmpi", 4, "halocompare", "--layout", "array", "--verify", "--comms", "world,cart", *TINY,
                   out=out)


def test_every_method_and_packing_verified(ompi4: Run) -> None:
    rows = check_rows(ompi4, 4, 2, ALL, ("world", "cart"))
    # bytes is a face (--count 4 doubles); one process sends its faces (and edges and corners) per exchange
    assert {r["bytes"] for r in rows} == {"32"}
    sent = {(r["neighbors"], r["periodic"]): float(r["mbps"]) * float(r["time_median_s"]) * 1e6 for r in rows
            if r["method"] == "irecv-isend" and r["comm"] == "world"}
    assert sent[("4", "1")] == pytest.approx(4 * 32) and sent[("8", "1")] == pytest.approx(4 * 32 + 4 * 8)


def test_packing_on_its_own(ompi4: Run) -> None:
    """--tests pack (a default under --layout array): pack, mpi-pack and memcpy per stencil, measured together;
    MB/s counts every region of the stencil once (4 faces of 4 doubles; + 4 corners of 1)."""
    rows = [r for r in ompi4.rows() if r["test"] == "pack"]
    assert sorted((r["method"], r["neighbors"]) for r in rows) == sorted(
        (m, nb) for m in ("pack", "mpi-pack", "memcpy") for nb in ("4", "8"))
    for r in rows:
        assert r["stop_reason"] == "max-reps" and "layout=array" in r["params"], r
        sent = float(r["mbps"]) * float(r["time_median_s"]) * 1e6
        assert sent == pytest.approx(128 if r["neighbors"] == "4" else 160), r
    table = ompi4.stdout.split("Packing on its own", 1)[1].split("\n\n")[0].splitlines()
    assert table[1].split() == ["stencil", "face", "bytes", "pack", "mpi-pack", "memcpy", "pack/memcpy",
                                "mpi-pack/memcpy"]
    assert [ln.split()[:3] for ln in table[3:]] == [["4", "neighbours", "32"], ["8", "neighbours", "32"]]


def test_stdout_table(ompi4: Run) -> None:
    """A table per periodicity and communicator: rows = methods, a column per packing per stencil."""
    out = ompi4.stdout
    assert "grid 2x2, --layout array" in out
    blocks = [b for b in out.split("\n\n") if "array layout, 32-byte faces" in b]
    assert len(blocks) == 4  # 2 periodicities x 2 communicators
    for b in blocks:
        lines = b.splitlines()
        assert "4 neighbours" in lines[1] and "8 neighbours" in lines[1]
        assert lines[2].split() == ["method", *PACKINGS, *PACKINGS]
        assert {ln.split()[0] for ln in lines[4:]} == set(ALL)
        assert all(len(ln) <= 120 for ln in lines)
        lock = next(ln for ln in lines if ln.startswith("rma-lock-put")).split()
        assert lock[1] == "n/a" and lock[3] == "n/a" and lock[2] != "n/a"  # datatype, mpi-pack n/a; pack runs


@pytest.mark.parametrize("n,dims,grid", [(4, 3, "2x2x1"), (8, 3, "2x2x2"), (9, 2, "3x3")])
def test_ranks_and_dims(tmp_path: Path, n: int, dims: int, grid: str) -> None:
    """3-D with periodic extents of 1 and 2 (4 ranks), 2x2x2 (26 neighbours, 8 ranks), 3x3 (9 ranks)."""
    run = run_mpi("openmpi", n, "halocompare", "--layout", "array", "--verify", "--dims", str(dims),
                  "--comms", "world", *TINY, out=tmp_path / "a.csv", env=QUIET)
    check_rows(run, n, dims, ALL, ("world",))
    assert f"grid {grid}," in run.stdout


@pytest.mark.parametrize("n,dims,methods,periodic", [
    (2, 2, ALL, "both"),
    (4, 3, ["irecv-isend", "sendrecv", "neighbor-alltoall", "rma-fence-get"], "yes"),
])
def test_mpich(tmp_path: Path, n: int, dims: int, methods: list[str], periodic: str) -> None:
    run = run_mpi("mpich", n, "halocompare", "--layout", "array", "--verify", "--dims", str(dims), "--comms",
                  "world", "--methods", ",".join(methods), "--periodic", periodic, *TINY, out=tmp_path / "a.csv",
                  env=QUIET)
    check_rows(run, n, dims, methods, ("world",), ("0", "1") if periodic == "both" else ("1",))


def test_extents(tmp_path: Path) -> None:
    """--extents gives the interior: a 3x5 array's faces are 3 and 5 doubles (bytes: the largest)."""
    run = run_mpi("openmpi", 2, "halocompare", "--layout", "array", "--verify", "--extents", "3x5", "--comms",
                  "world", "--methods", "irecv-isend,neighbor-alltoall", "--packing", "pack,datatype",
                  *TINY[2:], out=tmp_path / "a.csv", env=QUIET)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = run.rows()
    assert {r["bytes"] for r in rows} == {"40"} and all("extents=3x5" in r["params"] for r in rows)
    halo = [r for r in rows if r["test"] == "halo"]
    assert all(r["verified"] == "yes" for r in halo)
    assert {parse_params(r["params"])["packing"] for r in halo} == {"datatype", "pack"}


@pytest.mark.parametrize("n,dims", [(4, 2), (2, 3)])
def test_one_cell_interiors_with_hand_packing(tmp_path: Path, n: int, dims: int) -> None:
    """1-cell interiors: every face, edge and corner is one double per row, and the copy loops take regions
    of the same rows two at a time (array.c, copy_pair: a face with its edges and corners would match
    several); every ghost cell right, periodic or not, on every stencil."""
    run = run_mpi("openmpi", n, "halocompare", "--layout", "array", "--verify", "--dims", str(dims), "--count", "1",
                  "--comms", "world", "--methods", "irecv-isend,sendrecv", "--packing", "pack", *TINY[2:],
                  out=tmp_path / "a.csv", env=QUIET)
    assert run.returncode == 0, run.stderr[-2000:]
    halo = [r for r in run.rows() if r["test"] == "halo"]
    assert {(r["neighbors"], r["periodic"]) for r in halo} == {(nb, p) for nb in STENCILS[dims] for p in "01"}
    assert len(halo) == 8 and all(r["verified"] == "yes" for r in halo), halo


def test_one_wrong_ghost_cell(tmp_path: Path) -> None:
    """2 ranks in a 2x1 non-periodic grid, 1x1 interiors, faces only: rank 0's one ghost cell is the only
    data rank 1 sends it.  Rank 1 fills another iteration's data (MPIMB_FAULT): that one cell is caught."""
    run = run_mpi("openmpi", 2, "halocompare", "--layout", "array", "--verify", "--count", "1", "--periodic",
                  "no", "--neighbors", "4", "--tests", "halo", "--comms", "world", "--methods", "irecv-isend,sendrecv", "--packing",
                  "datatype", *TINY[2:], out=tmp_path / "a.csv",
                  env={**QUIET, "MPIMB_FAULT": "halo/irecv-isend@1"})
    assert run.returncode == 1, run.stderr[-2000:]
    errors = [ln for ln in run.stderr.splitlines() if "verification failed" in ln]
    assert len(errors) == 1 and "rank 0: ghost cell (2,1) from neighbour 1 (S)" in errors[0], run.stderr
    assert {r["method"]: r["verified"] for r in run.rows()} == {"irecv-isend": "no", "sendrecv": "yes"}


def test_findings(tmp_path: Path) -> None:
    """The findings (mpimb-report, after the run on stdout): the best method x packing and the cost of hand
    packing against datatypes, per stencil.  6 paired rounds (as before) of one iteration each,
    starting on barriers: the sentences are checked, not the figures."""
    if not REPORT.exists():
        pytest.skip("make venv")
    run = run_mpi("openmpi", 2, "halocompare", "--layout", "array", "--count", "16", "--comms", "world",
                  "--methods", "irecv-isend,neighbor-alltoall", "--periodic", "no", "--reps", "6", "--max-reps",
                  "6", "--warmup", "0", "--min-rep-time", "0", "--sync", "barrier", out=tmp_path / "a.csv",
                  env={"MPIMB_REPORT": str(REPORT)})
    assert run.returncode == 0, run.stderr[-2000:]
    tail = run.stdout.split("Findings", 1)[1]
    assert "Halo 4-nbr non-periodic, 128 B, world (array layout: method × packing):" in tail
    # on 2 ranks the non-periodic 8-neighbour stencil is the 4-neighbour one: said, not ranked again
    assert "Halo 8-nbr non-periodic, 128 B, world: at 2 processes the 8-neighbour stencil is the 4-neighbour" in tail
    for nb in ("4", "8"):
        assert f"Hand packing vs datatypes, halo {nb}-nbr non-periodic, 128 B, world," in tail
    assert "pack / datatype = " in tail
    assert "Packing on its own, 4-nbr stencil, 128 B faces" in tail and "pack / memcpy = " in tail


BAD = [
    (["--layout", "array", "--extents", "0x4"], "--extents: expected 2 extents >= 1"),
    (["--layout", "array", "--extents", "4x4x4"], "--extents: --dims 2 needs 2 extents"),
    (["--layout", "array", "--extents", "100000x100000"], "the local array does not fit"),
    (["--layout", "array", "--dims", "3", "--count", "16777216"], "the local array does not fit"),
    (["--layout", "array", "--packing", "foo"], "--packing: unknown value 'foo'"),
    (["--packing", "pack"], "--packing needs --layout array"),
    (["--extents", "4x4"], "--extents needs --layout array"),
    (["--tests", "pack"], "--tests pack needs --layout array"),
    (["--layout", "array", "--dims", "1"], "--layout array needs --dims 2 or 3"),
    (["--layout", "array", "--tests", "one-sender"], "it does not take --layout array"),
    (["--layout", "array", "--count", "3", "--extents", "4x4"], "--extents and --count are alternatives"),
    (["--layout", "grid"], "--layout: unknown value 'grid'"),
]


def test_bad_input(tmp_path: Path) -> None:
    """Each: one line, exit 2, no files: the binary alone (conftest.check_bad_input)."""
    for i, (args, message) in enumerate(BAD):
        cwd = tmp_path / str(i)
        cwd.mkdir()
        check_bad_input("halocompare", args, message, cwd)


def test_bad_input_sizes(tmp_path: Path) -> None:
    """--extents with -m (checked after MPI_Init): on every rank, one line."""
    check_bad_input("halocompare", ["--layout", "array", "-m", "8:64", "--extents", "4x4"],
                    "--extents and --sizes are alternatives", tmp_path, ranks=2)


def test_buffers_layout_unchanged(tmp_path: Path) -> None:
    """The default layout's rows carry neither layout nor packing (today's tables keep their meaning)."""
    run = run_mpi("openmpi", 2, "halocompare", "--verify", "--comms", "world", "--methods", "irecv-isend",
                  *TINY, out=tmp_path / "a.csv", env=QUIET)
    assert run.returncode == 0, run.stderr[-2000:]
    for r in csv.DictReader((tmp_path / "a.csv").open()):
        assert "layout=" not in r["params"] and "packing=" not in r["params"] and r["verified"] == "yes"
