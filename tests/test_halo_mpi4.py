"""halocompare's MPI-4 methods (issue 28): persistent-neighbor (MPI_Neighbor_alltoall{,v,w}_init once,
MPI_Start/MPI_Wait per exchange) and partitioned (MPI_Psend_init/MPI_Precv_init once, MPI_Pready per
partition).  Verified under MPICH 4.0.2 on the buffers layout and on --layout array in 2-D and 3-D,
periodic and not; under Open MPI 4.1.4 partitioned is n/a naming the library and its MPI version, and
persistent-neighbor runs on its MPIX_ forms (the pcollreq extension); a wrong message is caught (fault
injection); bad --partitions is a usage error.  mpi4_na is the one statement of which rows are n/a and
why, for the other halocompare tests that run --methods all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ONCE_BARRIER, Run, check_bad_input, check_schema, run_mpi
from mpimb.schema import parse_params

MPI4 = ["partitioned", "persistent-neighbor"]
METHODS = ",".join(MPI4)
STENCILS = {2: ("4", "8"), 3: ("6", "26")}
DEFAULT_PARTITIONS = 4


def library(run: Run) -> str:
    """openmpi or mpich, from the run's metadata."""
    return "openmpi" if "Open MPI" in run.meta()["mpi"]["library_version"] else "mpich"


def mpi4_na(row: dict[str, str], lib: str) -> str | None:
    """The start of the n/a reason an MPI-4 method's row gives under lib (the installed MPICH 4.0.2 or
    Open MPI 4.1.4), or None where it must run: partitioned needs MPI-4 (Open MPI 4.1 is MPI-3.1), cannot
    split a face sent in place as one subarray element, and with --methods all a face its partitions do
    not divide is its n/a (named, it is a usage error)."""
    if row["method"] != "partitioned":
        return None
    if lib == "openmpi":
        return "MPI_Psend_init needs MPI-4; Open MPI "  # its version: test_mpi4_methods
    p = parse_params(row["params"])
    if p.get("packing") == "datatype":
        return "a face sent in place is one subarray element"
    face, parts = int(row["bytes"]) // 8, int(p["partitions"])
    return f"{parts} partitions (--partitions) do not divide a face of {face} doubles" if face % parts else None


def check_mpi4(run: Run, n: int, lib: str, dims: int, partitions: int, packings: tuple[str, ...] = ("",)) -> None:
    """Every (comm, method, packing, stencil, periodicity) row once: verified, or n/a as mpi4_na says;
    partitioned rows carry partitions=P in params."""
    assert run.returncode == 0, run.stderr[-3000:]
    assert library(run) == lib
    rows = [r for r in check_schema(run, "halocompare", n) if r["test"] == "halo"]
    key = {(r["comm"], r["method"], parse_params(r["params"]).get("packing", ""),
            r["neighbors"], r["periodic"]) for r in rows}
    assert len(key) == len(rows) == 2 * 2 * len(MPI4) * len(packings) * 2
    assert key == {(c, m, pk, nb, per) for c in ("world", "cart") for m in MPI4 for pk in packings
                   for nb in STENCILS[dims] for per in ("0", "1")}
    for r in rows:
        why = mpi4_na(r, lib)
        if why:
            assert r["stop_reason"].startswith(f"n/a: {why}"), r
        else:
            assert r["verified"] == "yes" and r["stop_reason"] == "max-reps", r
        assert (parse_params(r["params"]).get("partitions") == str(partitions)) == (r["method"] == "partitioned"), r


# (layout options, dims, --partitions or None, packings): the buffers layout with the default 4; the array in
# 2-D (16x16: faces of 16, corners of 1: one partition) and 3-D (4x4x4: faces 16, edges 4 and corners 1
# that 8 does not divide: one partition each)
CASES = [
    ([], 2, None, ("",)),
    (["--layout", "array", "--tests", "halo"], 2, 2, ("datatype", "pack", "mpi-pack")),
    (["--layout", "array", "--tests", "halo", "--dims", "3"], 3, 8, ("datatype", "pack", "mpi-pack")),
]


@pytest.mark.parametrize("lib", ["mpich", "openmpi"])
@pytest.mark.parametrize(("layout", "dims", "parts", "packings"), CASES, ids=["buffers", "array-2d", "array-3d"])
def test_mpi4_methods(tmp_path: Path, lib: str, layout: list[str], dims: int, parts: int | None,
                      packings: tuple[str, ...]) -> None:
    """MPICH: every row verified (partitioned with datatypes n/a); Open MPI: partitioned n/a with the
    reason, persistent-neighbor verified (MPIX_Neighbor_alltoall{,v,w}_init), exit 0.  2 ranks: MPICH
    busy-polls; periodic, each is the other's neighbour twice (and its own along the extent of 1)."""
    run = run_mpi(lib, 2, "halocompare", "--methods", METHODS, "--verify", "--count", "16", "--comms", "world,cart",
                  *layout, *(["--partitions", str(parts)] if parts else []), *ONCE_BARRIER, out=tmp_path / "m.csv")
    check_mpi4(run, 2, lib, dims, parts or DEFAULT_PARTITIONS, packings)
    if lib == "openmpi":  # the reason names the library's own version
        v = re.search(r"Open MPI v(\d+\.\d+\.\d+)", run.meta()["mpi"]["library_version"])
        assert v, run.meta()["mpi"]["library_version"]
        assert {r["stop_reason"] for r in run.rows() if r["method"] == "partitioned"} == {
            f"n/a: MPI_Psend_init needs MPI-4; Open MPI {v[1]} is MPI-3.1"}


def test_a_wrong_message_is_found(tmp_path: Path) -> None:
    """Rank 0 sends the data of another iteration through its partitioned and persistent-neighbor
    requests (MPIMB_FAULT): its neighbour's check names the method, exit 1, those rows verified=no and
    irecv-isend's yes."""
    run = run_mpi("mpich", 2, "halocompare", "--methods", f"irecv-isend,{METHODS}", "--verify", "--count", "16",
                  "--comms", "world", "--neighbors", "4", "--periodic", "yes", *ONCE_BARRIER, out=tmp_path / "f.csv",
                  env={"MPIMB_FAULT": "verify:halo/partitioned@0,verify:halo/persistent-neighbor@0"})
    assert run.returncode == 1, run.stderr
    for m in MPI4:
        assert f"verification failed in halocompare halo {m} world" in run.stderr
    rows = run.rows()
    assert {r["method"]: r["verified"] for r in rows if r["test"] == "halo"} == {
        "irecv-isend": "yes", "partitioned": "no", "persistent-neighbor": "no"}


BAD = [
    (["--partitions", "0"], "halocompare: --partitions must be a positive integer, got '0'", 0),
    (["--partitions", "-4"], "halocompare: --partitions must be a positive integer, got '-4'", 0),
    (["--methods", "irecv-isend", "--partitions", "2"], "halocompare: --partitions is for the partitioned method", 0),
    (["--count", "6", "--partitions", "4"], "halocompare: --partitions 4 does not divide a face of 6 doubles", 2),
    (["--methods", "partitioned", "--count", "10"],
     "halocompare: --partitions 4 (the default) does not divide a face of 10 doubles", 2),
    (["--methods", "partitioned", "-m", "8:64"],
     "halocompare: --partitions 4 (the default) does not divide a face of 1 doubles", 2),
    (["--layout", "array", "--dims", "3", "--extents", "4x4x6", "--partitions", "16"],
     "halocompare: --partitions 16 does not divide a face of 24 doubles", 2),
]


def test_bad_partitions(tmp_path: Path) -> None:
    """0, negative, without the method, not dividing a face (--count, a size of -m, an array's face):
    one line, exit 2, on every rank, no files."""
    for args, message, ranks in BAD:
        check_bad_input("halocompare", args, message, tmp_path, ranks=ranks)
