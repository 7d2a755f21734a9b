"""libmpimb-prof.so, the PMPI profiler (docs/profile.md): its counts against counts made
independently (halocompare's known exchanges, Open MPI's own PML monitoring of LAMMPS, a Fortran
ring of known traffic), the collective checker, ASan, a killed job, bad settings, and
`mpimb-report profile` with its HTML in headless Chromium."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import COLUMNS, ONCE, ROOT, bindir, launcher, text_table

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from helpers import browser_check, cli, cli_proc

APP = ROOT / "tests" / "profile" / "app.c"
RING = ROOT / "tests" / "profile" / "ring.f90"
MELT = Path("/usr/share/lammps/examples/melt/in.melt")
# ONCE (conftest) for the runs whose timing is not what they check.
MATRIX_COLUMNS = [c["title"] for c in json.loads(
    (ROOT / "analysis" / "mpimb" / "schema" / "matrix.schema.json").read_text())["prefixItems"]]


def profiler(lib: str, san: str | None = None) -> Path:
    p = bindir(lib, san).parent / "lib" / "libmpimb-prof.so"
    if not p.exists():
        pytest.skip(f"{p} not built (make test-builds)")
    return p


def need(*cmds: str) -> None:
    for c in cmds:
        if not shutil.which(c):
            pytest.skip(f"{c} not installed (scripts/deps/test-profile.apt)")


def run_profiled(lib: str, n: int, cmd: list[str], out: Path, env: dict[str, str] | None = None,
                 timeout: float = 240, launch_extra: list[str] | None = None,
                 san: str | None = None) -> subprocess.CompletedProcess[str]:
    """cmd on n ranks with the profiler preloaded (the `env LD_PRELOAD=...` form), results to out/."""
    e = {"MPIMB_PROF_OUT": str(out), **(env or {})}
    preload = str(profiler(lib, san))
    if san == "asan":  # the ASan runtime must come first in the initial library list
        asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True,
                              check=True).stdout.strip()
        preload = f"{os.path.realpath(asan)} {preload}"
        e.update({"HWLOC_COMPONENTS": "-pci", "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
                  "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"})
    full = [*launcher(lib, n), *(launch_extra or []), "env", f"LD_PRELOAD={preload}",
            *(f"{k}={v}" for k, v in e.items()), *cmd]
    return subprocess.run(full, capture_output=True, text=True, timeout=timeout, cwd=out.parent, check=False)


def read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Profile:
    """The files of one profiled run in a directory."""

    def __init__(self, out: Path) -> None:
        csvs = [p for p in out.glob("profile-*.csv") if not p.name.endswith("-matrix.csv")]
        assert len(csvs) == 1, sorted(out.iterdir())
        self.csv = csvs[0]
        self.meta = json.loads(self.csv.with_suffix(".json").read_text())
        self.rows = read(self.csv)
        self.matrix_path = self.csv.with_name(self.meta["profile"]["matrix_csv"])
        self.matrix = read(self.matrix_path)

    def row(self, call: str, nbytes: str = "", method: str = "") -> dict[str, str]:
        found = [r for r in self.rows if r["test"] == call and r["bytes"] == nbytes and r["method"] == method]
        assert len(found) == 1, (call, nbytes, method, [r["test"] for r in self.rows])
        return found[0]

    def calls(self, call: str) -> int:
        found = [r for r in self.rows if r["test"] == call and r["bytes"] == "" and r["method"] == ""]
        return int(found[0]["calls"]) if found else 0

    def pairs(self, kind: str = "p2p") -> dict[tuple[int, int], tuple[int, int]]:
        return {(int(r["rank"]), int(r["peer"])): (int(r["messages"]), int(r["bytes"]))
                for r in self.matrix if r["kind"] == kind}

    def check_format(self, nprocs: int) -> None:
        assert self.meta["complete"] is True and self.meta["program"] == "profile"
        assert self.meta["rows"] == len(self.rows) and self.meta["nprocs"] == nprocs
        with open(self.csv, newline="") as f:
            assert next(csv.reader(f)) == COLUMNS
        with open(self.matrix_path, newline="") as f:
            assert next(csv.reader(f)) == MATRIX_COLUMNS
        for r in self.rows:
            assert r["program"] == "profile" and r["stop_reason"] == "finalize" and int(r["nprocs"]) == nprocs
            assert float(r["time_min_s"]) <= float(r["time_median_s"]) <= float(r["time_max_s"])
            assert 0 <= int(r["slowest_rank"]) < nprocs
        assert len(self.meta["profile"]["wall_seconds"]) == nprocs


_APPS: dict[tuple[str, Path, tuple[str, ...]], Path] = {}  # built once per session: (lib, src, extra) -> exe


def build_app(lib: str, tmp: Path, src: Path = APP, name: str = "app", extra: tuple[str, ...] = ()) -> Path:
    """The profiled application src built with lib's compiler wrapper; once per session (in the tmp of the
    first test that needs it, kept for the session), later calls get the same binary."""
    key = (lib, src, extra)
    if key in _APPS and _APPS[key].exists():
        return _APPS[key]
    cc = "mpicc" if src.suffix == ".c" else "mpif90"
    need(f"{cc}.{lib}")
    exe = tmp / "apps" / str(len(_APPS)) / f"{name}-{lib}"  # the name as the checker's reports show it
    exe.parent.mkdir(parents=True)
    flags = ["-O1"] if src.suffix == ".c" else ["-O1", "-cpp", "-fallow-argument-mismatch", "-w"]
    r = subprocess.run([f"{cc}.{lib}", *flags, *extra, "-o", str(exe), str(src)], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0, r.stderr
    _APPS[key] = exe
    return exe


# ---------------------------------------------------------------- the build

@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_library_built(lib: str) -> None:
    """make builds libmpimb-prof.so for each MPI: MPI symbols exported, the suite's own hidden."""
    so = profiler(lib)
    syms = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in syms.splitlines()}
    for s in ("MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Isend", "MPI_Startall", "MPI_Waitall", "MPI_Allreduce",
              "MPI_Ialltoallw", "MPI_Neighbor_alltoall", "MPI_Put", "MPI_Win_fence"):
        assert s in names, s
    assert not [n for n in names if n.startswith("mb_")], "the harness's symbols must stay hidden"
    # Fortran: Open MPI's bindings bypass the C symbols, MPICH's mpi_f08 only for calls without buffers
    assert ("mpi_send_" in names) == (lib == "openmpi")
    assert ("mpi_send_f08_" in names) == (lib == "openmpi")
    assert "mpi_waitall_f08_" in names and "mpi_finalize_f08_" in names


# ---------------------------------------------------------------- counts against known counts

# --sync barrier: a window start (--sync window) adds the exchanges of its window calibration and of
# any rejected repetition, which the CSV counts (reps_rejected) but not exactly enough for this sum
HALO = ["--methods", "irecv-isend", "--comms", "world", "--neighbors", "4", "--periodic", "yes", "--tests", "halo",
        "--reps", "7", "--max-reps", "7", "--warmup", "3", "--min-rep-time", "0", "--verify", "--sync", "barrier"]


def grid_peers(n: int) -> list[list[int]]:
    """Each rank's N, S, E, W partners on halocompare's periodic grid (MPI_Dims_create, row-major)."""
    rows = {1: 1, 2: 2, 4: 2}[n]
    cols = n // rows
    out = []
    for r in range(n):
        i, j = divmod(r, cols)
        out.append([((i - 1) % rows) * cols + j, ((i + 1) % rows) * cols + j, i * cols + (j + 1) % cols,
                    i * cols + (j - 1) % cols])
    return out


@pytest.mark.parametrize("lib,n", [("openmpi", 4), ("mpich", 2)])
def test_halocompare_counts(lib: str, n: int, tmp_path: Path) -> None:
    """Every message of halocompare's irecv-isend exchange is counted, to the message and byte:
    exchanges = iters x reps + warm-up + 2 verified (from its own CSV), 4 messages of 2000 doubles each."""
    exe = bindir(lib) / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    out = tmp_path / "prof"
    r = run_profiled(lib, n, [str(exe), *HALO, "-o", str(tmp_path / "halo.csv")], out)
    assert r.returncode == 0, r.stderr
    halo = read(tmp_path / "halo.csv")
    assert len(halo) == 1 and halo[0]["verified"] == "yes"
    exchanges = int(halo[0]["iters"]) * int(halo[0]["reps"]) + 3 + 2
    p = Profile(out)
    p.check_format(n)
    msgs = n * 4 * exchanges
    for call in ("MPI_Isend", "MPI_Irecv"):
        total = p.row(call)
        assert int(total["calls"]) == msgs and int(total["total_bytes"]) == msgs * 16000
        binned = p.row(call, "8192")  # 16000 B lies in [8192, 16384)
        assert int(binned["calls"]) == msgs and int(binned["total_bytes"]) == msgs * 16000
    assert p.calls("MPI_Waitall") == n * exchanges
    assert p.row("MPI_Waitall")["total_bytes"] == ""  # a call without a size
    want: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, peers in enumerate(grid_peers(n)):
        for peer in peers:
            m, b = want.get((rank, peer), (0, 0))
            want[(rank, peer)] = (m + exchanges, b + exchanges * 16000)
    assert p.pairs() == want
    assert not p.pairs("rma")
    # the matrix is a companion of the run, not a result file of its own
    v = cli_proc("validate", str(out))
    assert v.rc == 0 and v.out.startswith("ok: 1 run(s)"), v.out + v.err


def ompi_monitoring(prefix: Path, n: int) -> dict[tuple[int, int], tuple[int, int]]:
    """Open MPI's own count of the application's point-to-point messages (PML monitoring, 'E' lines)."""
    pairs = {}
    for rank in range(n):
        for line in (prefix.parent / f"{prefix.name}.{rank}.prof").read_text().splitlines():
            m = re.match(r"E\t(\d+)\t(\d+)\t(\d+) bytes\t(\d+) msgs sent", line)
            if m:
                pairs[(int(m[1]), int(m[2]))] = (int(m[4]), int(m[3]))
    return pairs


@pytest.fixture(scope="module")
def lammps(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """LAMMPS (Debian's, Open MPI) on its melt example, 250 steps, at 2 and 4 ranks, profiled while
    Open MPI's PML monitoring counts the same messages; at 4 ranks with the checker and the barrier."""
    need("lmp", "mpiexec.openmpi")
    if not MELT.exists():
        pytest.skip(f"{MELT} missing (lammps-examples)")
    base = tmp_path_factory.mktemp("lammps")
    out = {}
    for n in (2, 4):
        d = base / f"np{n}"
        d.mkdir()
        env = {"MPIMB_PROF_CHECK": "1", "MPIMB_PROF_SYNC": "1"} if n == 4 else {}
        mon = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
               "--mca", "pml_monitoring_filename", str(d / "mon")]
        r = run_profiled("openmpi", n, ["lmp", "-in", str(MELT), "-log", "none"], d / "prof", env=env,
                         launch_extra=mon)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert "Loop time of" in r.stdout and f"on {n} procs for 250 steps" in r.stdout
        assert "mismatch" not in r.stderr, r.stderr
        (d / "stdout.txt").write_text(r.stdout)
        out[n] = d
    return out


@pytest.mark.parametrize("n", [2, 4])
def test_lammps_totals(lammps: dict[int, Path], n: int) -> None:
    """The profile's communication matrix equals Open MPI's own count of every message between every
    pair of ranks; the calls that send add up to the matrix; LAMMPS's exchanges are symmetric."""
    d = lammps[n]
    p = Profile(d / "prof")
    p.check_format(n)
    mon = ompi_monitoring(d / "mon", n)
    assert mon, "no PML monitoring output"
    assert p.pairs() == mon
    sends = sum(p.calls(c) for c in ("MPI_Send", "MPI_Isend", "MPI_Sendrecv", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend"))
    assert sends == sum(m for m, _ in mon.values())
    send_bytes = sum(int(p.row(c)["total_bytes"]) for c in ("MPI_Send", "MPI_Sendrecv") if p.calls(c))
    assert send_bytes == sum(b for _, b in mon.values())
    # every message LAMMPS receives was posted with its exact size: the receives carry the same bytes
    assert int(p.row("MPI_Irecv")["total_bytes"]) == int(p.row("MPI_Send")["total_bytes"])
    # the size histogram adds up to the total
    bins = [r for r in p.rows if r["test"] == "MPI_Send" and r["bytes"] != "" and r["method"] == ""]
    assert sum(int(r["calls"]) for r in bins) == p.calls("MPI_Send")
    assert sum(int(r["total_bytes"]) for r in bins) == int(p.row("MPI_Send")["total_bytes"])
    for r in bins:  # each bin's mean size lies in it
        lo = int(r["bytes"])
        assert lo <= int(r["total_bytes"]) / int(r["calls"]) < max(2 * lo, 1)
    # collectives with the barrier on: their wait is a row of its own, named, at 4 ranks only
    waits = [r for r in p.rows if r["method"] == "sync-wait"]
    assert bool(waits) == (n == 4)
    if waits:
        assert p.meta["profile"]["sync"] is True and p.meta["profile"]["check"] is True
        assert {r["params"] for r in waits} == {"sync=barrier"}
        assert p.row("MPI_Allreduce", method="sync-wait")["calls"] == p.row("MPI_Allreduce")["calls"]


def test_threads_multiple_exact(tmp_path: Path) -> None:
    """Under MPI_THREAD_MULTIPLE, with threads sending concurrently (the threads program), the counts
    stay exact (atomic updates): the matrix equals Open MPI's PML monitoring pair by pair."""
    exe = bindir("openmpi") / "threads"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    mon = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
           "--mca", "pml_monitoring_filename", str(tmp_path / "mon")]
    r = run_profiled("openmpi", 2, [str(exe), "--quick", *ONCE, "-o", str(tmp_path / "t.csv")], tmp_path / "prof",
                     launch_extra=mon)
    assert r.returncode == 0, r.stderr[-3000:]
    p = Profile(tmp_path / "prof")
    p.check_format(2)
    assert p.meta["mpi"]["thread_level_provided"] == "multiple"
    assert p.pairs() == ompi_monitoring(tmp_path / "mon", 2)


def test_matrix_across_communicators(tmp_path: Path) -> None:
    """Sends on several communicators, one of them reordered (evenodd), each created for its tests and
    freed after them: the profiler keeps the last communicator's rank map per thread and must drop it
    when any map is freed, since the library hands the same handle out again for another group. The
    matrix equals Open MPI's PML monitoring pair by pair."""
    exe = bindir("openmpi") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    mon = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
           "--mca", "pml_monitoring_filename", str(tmp_path / "mon")]
    cmd = [str(exe), "--quick", *ONCE, "--comms", "world,dup,evenodd,cart", "--methods", "irecv-isend,sendrecv",
           "--neighbors", "4", "--periodic", "yes", "--tests", "halo", "--sync", "barrier", "-o",
           str(tmp_path / "h.csv")]
    # 6 ranks: a 3x2 grid, whose partners change with the ordering (a 2x2 periodic grid's do not)
    r = run_profiled("openmpi", 6, cmd, tmp_path / "prof", launch_extra=mon)
    assert r.returncode == 0, r.stderr[-3000:]
    p = Profile(tmp_path / "prof")
    p.check_format(6)
    assert p.pairs() == ompi_monitoring(tmp_path / "mon", 6)


def test_lammps_report(lammps: dict[int, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mpimb-report profile on the LAMMPS run plus pingpong and collectives results of this machine:
    the application's tables and the achieved / achievable table with numbers; the HTML renders."""
    bench = tmp_path / "bench"
    bench.mkdir()
    for prog, n, args in (("pingpong", 2, ["--tests", "latency,bw", "-m", "0:64K", *ONCE]),
                          ("collectives", 4, ["-t", "allreduce,bcast", "-m", "0:64", *ONCE, "--sync", "barrier"])):
        exe = bindir("openmpi") / prog
        if not exe.exists():
            pytest.skip(f"{exe} not built")
        r = subprocess.run([*launcher("openmpi", n), str(exe), "--quick", "-o", str(bench), *args],
                           capture_output=True, text=True, timeout=300, check=False)
        assert r.returncode == 0, r.stderr
    page = tmp_path / "profile.html"
    res = cli("profile", str(lammps[4] / "prof"), str(bench), "-o", str(page), capsys=capsys)
    assert res.rc == 0, res.err
    out = res.out
    for title in ("Time in MPI by call", "Message sizes", "Imbalance at collectives", "Achieved / achievable",
                  "Communication matrix", "Heat map"):
        assert title in out, title
    assert "lmp -in" in out
    ach = [" ".join(cells) for cells in text_table(out, "Achieved / achievable")]  # wrapped blocks joined
    line = next(x for x in ach if x.startswith("MPI_Allreduce ") and "collectives allreduce at 4" in x)
    # a benchmark time, rate and the ratio at the application's size
    assert re.search(r"\s[\d.]+\s+[\d.]+\s+[\d.]+\s+collectives allreduce at 4 ranks$", line), line
    assert any(x.startswith("MPI_Send ") and "pingpong latency [intra]" in x for x in ach)
    assert any(x.startswith("all point-to-point ") for x in ach)
    assert "wait mean s" in out and "MPIMB_PROF_SYNC=1" in out
    ok, broken, _, ink = browser_check(page, tmp_path)
    assert ok == 1 and broken == 0, "the heat map must load"
    assert ink > 0.02
    # without benchmark results the tables still print, and a warning says what is missing
    res = cli("profile", str(lammps[2] / "prof"), capsys=capsys)
    assert res.rc == 0 and "Time in MPI by call" in res.out and "no benchmark results given" in res.err


def test_report_needs_a_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixture = ROOT / "tests" / "analysis" / "fixtures" / "clusterA"
    res = cli("profile", str(fixture), capsys=capsys)
    assert res.rc == 1 and "no program profile results" in res.err


# ---------------------------------------------------------------- Fortran

@pytest.mark.parametrize("binding", ["mpi", "mpi_f08"])
@pytest.mark.parametrize("lib,n", [("openmpi", 3), ("mpich", 2)])
def test_fortran(lib: str, n: int, binding: str, tmp_path: Path) -> None:
    """A Fortran ring of known traffic is counted exactly with both bindings under both libraries:
    Open MPI's Fortran symbols are wrapped, MPICH's go through C except mpi_f08's buffer-less calls."""
    exe = build_app(lib, tmp_path, RING, "ring", ("-DF08",) if binding == "mpi_f08" else ())
    out = tmp_path / "prof"
    r = run_profiled(lib, n, [str(exe)], out, env={"MPIMB_PROF_CHECK": "1"})
    assert r.returncode == 0 and "wrong data" not in r.stdout, r.stdout + r.stderr
    p = Profile(out)
    p.check_format(n)
    expect = {"MPI_Irecv": 10, "MPI_Isend": 10, "MPI_Sendrecv": 7, "MPI_Send_init": 1, "MPI_Recv_init": 1,
              "MPI_Startall": 4, "MPI_Waitall": 14, "MPI_Request_free": 2, "MPI_Allreduce": 7, "MPI_Barrier": 3}
    assert {c: p.calls(c) for c in expect} == {c: k * n for c, k in expect.items()}
    assert int(p.row("MPI_Isend", "512")["total_bytes"]) == 10 * n * 800
    assert int(p.row("MPI_Startall", "512")["total_bytes"]) == 4 * n * 800  # a send and a receive of 400 B
    assert int(p.row("MPI_Allreduce", "8")["calls"]) == 7 * n  # MPI_IN_PLACE: the block is the receive side
    assert p.pairs() == {(r, (r + 1) % n): (10 + 7 + 4, 10 * 800 + 7 * 80 + 4 * 400) for r in range(n)}


# ---------------------------------------------------------------- the collective checker

@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_checker(lib: str, tmp_path: Path) -> None:
    """MPIMB_PROF_CHECK=1: a root mismatch ends the job with the call site instead of a hang; so do a
    count, a datatype and an alltoallv mismatch; correct collectives pass silently."""
    exe = build_app(lib, tmp_path)
    n = 3 if lib == "openmpi" else 2
    env = {"MPIMB_PROF_CHECK": "1"}
    r = run_profiled(lib, n, [str(exe), "ok"], tmp_path / "ok", env=env, timeout=120)
    assert r.returncode == 0 and "mismatch" not in r.stderr, r.stderr
    assert Profile(tmp_path / "ok").meta["profile"]["check"] is True
    r = run_profiled(lib, n, [str(exe), "root"], tmp_path / "root", env=env, timeout=120)
    assert r.returncode != 0
    err = r.stderr
    assert "mpimb-prof: MPIMB_PROF_CHECK: collective mismatch on MPI_COMM_WORLD" in err and "different roots" in err
    assert re.search(r"world rank 0: collective call #2, MPI_Bcast root=0, 8 B of MPI_INT, called from app-\w+\+0x",
                     err), err
    assert re.search(r"world rank 1: collective call #2, MPI_Bcast root=1", err), err
    assert err.count("collective mismatch") == 1  # one report, not one per rank
    # nothing claims to be complete
    meta = json.loads(next((tmp_path / "root").glob("profile-*.json")).read_text())
    assert meta["complete"] is False
    if lib == "openmpi":
        for mode, what in (("count", "different message sizes"), ("type", "different datatype signatures"),
                           ("v", "world rank 0 expects 8 B from world rank 1, which sends it 4 B")):
            r = run_profiled(lib, n, [str(exe), mode], tmp_path / mode, env=env, timeout=120)
            assert r.returncode != 0 and what in r.stderr, (mode, r.stderr)


def test_checker_silent_on_the_suites_collectives(tmp_path: Path) -> None:
    """No false alarm over every collective of the collectives program (blocking, nonblocking,
    rotating roots, in-place-free scatterv), with the barrier on too; counts and sizes still right.
    The two ends of --quick's sizes, 0 B and 4 KiB, one launch each (every call the whole range makes is
    made at 4 KiB; its 386 rows on 4 oversubscribed ranks took 3 min on a loaded machine); one repetition
    after the warm-up, so each row's calls still rotate the root; barrier starts (the harness's window
    calls under the checker: test_asan_mpich)."""
    exe = bindir("openmpi") / "collectives"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    for size in ("0", "4096"):
        cmd = [str(exe), "--quick", "--reps", "1", "--max-reps", "1", "--sync", "barrier", "--verify", "--root",
               "rotate", "-m", f"{size}:{size}", "-o", str(tmp_path / f"c{size}.csv")]
        r = run_profiled("openmpi", 4, cmd, tmp_path / f"prof{size}",
                         env={"MPIMB_PROF_CHECK": "1", "MPIMB_PROF_SYNC": "1"})
        assert r.returncode == 0 and "mismatch" not in r.stderr, (size, r.stderr[-3000:])
        p = Profile(tmp_path / f"prof{size}")
        p.check_format(4)
    fam = p.meta["profile"]["families"]
    for call in ("MPI_Bcast", "MPI_Ibcast", "MPI_Alltoall", "MPI_Ireduce_scatter_block", "MPI_Scatterv", "MPI_Iscan"):
        assert call in fam, call
    assert fam["MPI_Ibcast"] == "collective-nonblocking" and fam["MPI_Bcast"] == "collective"
    # the 4 KiB broadcasts (--quick's largest) are in the 4K bin
    assert int(p.row("MPI_Bcast", "4096")["calls"]) > 0


@pytest.mark.parametrize("lib,form", [("openmpi", "-x"), ("mpich", "-genv")])
def test_launcher_forms(lib: str, form: str, tmp_path: Path) -> None:
    """The launchers' own ways to set LD_PRELOAD, as docs/profile.md shows them."""
    exe = build_app(lib, tmp_path)
    out = tmp_path / "prof"
    sets = {"LD_PRELOAD": str(profiler(lib)), "MPIMB_PROF_OUT": str(out)}
    opts = [a for k, v in sets.items() for a in ((form, f"{k}={v}") if form == "-x" else (form, k, v))]
    r = subprocess.run([*launcher(lib, 2), *opts, str(exe), "ok"], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path, check=False)
    assert r.returncode == 0, r.stderr
    p = Profile(out)
    p.check_format(2)
    assert p.calls("MPI_Alltoallv") == 2


# ---------------------------------------------------------------- sanitizers, faults, settings

def test_asan_mpich(tmp_path: Path) -> None:
    """The ASan+UBSan build of the library inside ASan-built halocompare (persistent requests, a
    Cartesian communicator, the checker and the barrier) and the checker test program: clean."""
    exe = bindir("mpich", "asan") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    env = {"MPIMB_PROF_CHECK": "1", "MPIMB_PROF_SYNC": "1"}
    r = run_profiled("mpich", 2, [str(exe), "--methods", "irecv-isend,persistent", "--comms", "world,cart",
                                  "--neighbors", "4", "--quick", "--verify", "-o", str(tmp_path / "h.csv")],
                     tmp_path / "halo", env=env, san="asan")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    p = Profile(tmp_path / "halo")
    assert p.calls("MPI_Startall") > 0 and p.calls("MPI_Send_init") > 0
    app = build_app("mpich", tmp_path, extra=("-fsanitize=address,undefined",))
    r = run_profiled("mpich", 2, [str(app), "ok"], tmp_path / "app", env=env, san="asan")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_killed_rank_leaves_nothing_complete(lib: str, tmp_path: Path) -> None:
    """SIGKILL of one rank mid-run: the JSON written at MPI_Init says complete: false, the CSV has
    its header only, there is no matrix; mpimb-report skips the run with a warning."""
    exe = build_app(lib, tmp_path)
    out = tmp_path / "prof"
    n = 3 if lib == "openmpi" else 2
    cmd = [*launcher(lib, n), "env", f"LD_PRELOAD={profiler(lib)}", f"MPIMB_PROF_OUT={out}", str(exe), "hold"]
    job = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           start_new_session=True)
    try:
        pidfile = tmp_path / f"hold-{n - 1}.pid"
        deadline = time.time() + 120
        while time.time() < deadline and not (pidfile.exists() and pidfile.read_text().endswith("\n")):
            time.sleep(0.2)
        assert pidfile.exists(), "the job did not start"
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
        job.wait(timeout=120)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    assert job.returncode != 0
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == 2 and not [f for f in files if f.endswith("-matrix.csv")], files
    meta = json.loads(next(out.glob("*.json")).read_text())
    assert meta["complete"] is False and meta["rows"] == 0
    assert (next(out.glob("*.csv")).read_text().splitlines()) == [",".join(COLUMNS)]


@pytest.mark.parametrize("var,value,message", [
    ("MPIMB_PROF_SYNC", "yes", "mpimb-prof: MPIMB_PROF_SYNC must be 0 or 1, got 'yes'"),
    ("MPIMB_PROF_CHECK", "2", "mpimb-prof: MPIMB_PROF_CHECK must be 0 or 1, got '2'"),
    ("MPIMB_PROF_LABEL", "a b", "mpimb-prof: MPIMB_PROF_LABEL may contain only letters, digits"),
    ("MPIMB_PROF_OUT", "/proc/no/such/dir", "mpimb-prof: MPIMB_PROF_OUT: cannot create directory '/proc/no/such/dir'"),
])
def test_bad_setting(var: str, value: str, message: str, tmp_path: Path) -> None:
    """A bad setting: one line from rank 0, every rank exits 2, no files."""
    exe = build_app("openmpi", tmp_path)
    out = tmp_path / "prof"
    env = {"MPIMB_PROF_OUT": str(out)} if var != "MPIMB_PROF_OUT" else {}
    env[var] = value
    cmd = [*launcher("openmpi", 2), "env", f"LD_PRELOAD={profiler('openmpi')}",
           *(f"{k}={v}" for k, v in env.items()), str(exe), "ok"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.startswith("mpimb-prof:")]
    assert len(lines) == 1 and lines[0].startswith(message), r.stderr
    assert not out.exists() or not any(out.iterdir())
