"""Shared helpers for the integration tests: launch a program under MPICH or
Open MPI (the builds `make test-builds` puts in build/<lib>/bin) and read back
the CSV + JSON it wrote."""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import itertools
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, missing_tools

ROOT = Path(__file__).resolve().parents[1]
# The programs end by running mpimb-report's findings on their CSV; the tests check the CSV and the
# findings themselves (tests/test_trust.py, tests/analysis), so every other launch skips that step.
os.environ.setdefault("MPIMB_REPORT", "none")
# Two pytest workers each launch jobs that fit the 2 cores alone, so together they oversubscribe the
# machine while each mpiexec believes it fits.  Open MPI then polls for messages without yielding the
# core, and two busy-polling jobs take turns at the scheduler's slice (two concurrent `halocompare --quick`
# at -n 2: 31 s and 33 s against 6.5 s and 6.5 s with the setting, measured on a loaded machine);
# told to yield when idle it gives the core back.  Tests check correctness, never speed, so nothing they
# check changes.  (MPICH's ch4 device has no such setting.)
os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")

# The results columns: the schema's one definition (analysis/mpimb/schema/).
COLUMNS = [c["title"] for c in json.loads(
    (ROOT / "analysis" / "mpimb" / "schema" / "results.schema.json").read_text())["prefixItems"]]

LIBS = ("openmpi", "mpich")
# Run options for tests that check what a run writes, not its statistics: one repetition without warm-up;
# ONCE_BARRIER also skips the repetition-length calibration and starts each test on a barrier instead of
# synchronised clock windows (a clock synchronisation per test).  Tests of the statistics, the
# calibration or the window start keep a program's own defaults.
ONCE = ("--reps", "1", "--max-reps", "1", "--warmup", "0")
ONCE_BARRIER = (*ONCE, "--min-rep-time", "0", "--sync", "barrier")


def bindir(lib: str, san: str | None = None) -> Path:
    return ROOT / "build" / (f"{lib}-{san}" if san else lib) / "bin"


def have(lib: str, program: str, san: str | None = None) -> bool:
    return (bindir(lib, san) / program).exists()


def launcher(lib: str, n: int) -> list[str]:
    """The mpiexec command line for lib; Open MPI quietly oversubscribed."""
    if lib == "openmpi":
        cmd = ["mpiexec.openmpi", "-q", "--oversubscribe"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        return [*cmd, "-n", str(n)]
    return ["mpiexec.mpich", "-n", str(n)]


# MPICH's ranks poll for messages without yielding the core (4.0.2 has no setting for it), so two MPICH
# jobs of two ranks each, one per pytest worker, are four pollers on 2 cores: each message then waits for
# a scheduler slice, and both jobs run 5 to 40 times longer than alone while burning both cores (a 2-rank
# run of 0.4 s took 18 s).  Such jobs take turns through this lock, one on the machine at a time; the
# other worker waits without using a core.
MPICH_TURN = ROOT / "build" / "tests-mpich-turn.lock"


@contextlib.contextmanager
def mpich_turn(lib: str, n: int) -> Iterator[None]:
    """Holds the machine's MPICH turn while an MPICH job of two or more ranks runs (no-op otherwise)."""
    if lib != "mpich" or n < 2:
        yield
        return
    MPICH_TURN.parent.mkdir(parents=True, exist_ok=True)
    with open(MPICH_TURN, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def sanitizer_env(lib: str) -> dict[str, str]:
    """Environment that keeps the MPI libraries quiet under ASan (docs/architecture.md, "Facts")."""
    env = {"HWLOC_COMPONENTS": "-pci", "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0"}
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    if lib == "openmpi":
        env["OMPI_MCA_mca_base_component_disable_dlclose"] = "1"
    return env


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    csv_path: Path

    @property
    def json_path(self) -> Path:
        return self.csv_path.with_suffix(".json")

    def rows(self) -> list[dict[str, str]]:
        with open(self.csv_path, newline="") as f:
            return list(csv.DictReader(f))

    def meta(self) -> dict:
        return json.loads(self.json_path.read_text())

    def header(self) -> list[str]:
        with open(self.csv_path, newline="") as f:
            return next(csv.reader(f))


def run_mpi(
    lib: str,
    n: int,
    program: str,
    *args: str,
    out: Path,
    timeout: float = 300,
    san: str | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Runs program on n ranks, writing its CSV to out (a .csv path)."""
    exe = bindir(lib, san) / program
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    full_env = dict(os.environ)
    full_env.update(sanitizer_env(lib) if san else {})
    full_env.update(env or {})
    cmd = [*launcher(lib, n), str(exe), "-o", str(out), *args]
    with mpich_turn(lib, n):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=out.parent,
                           check=False)
    return Run(p.returncode, p.stdout, p.stderr, out)


def check_schema(run: Run, program: str, nprocs: int) -> list[dict[str, str]]:
    """The CSV has exactly the common columns and the JSON says complete."""
    assert run.header() == COLUMNS
    rows = run.rows()
    assert rows, "no rows written"
    for r in rows:
        assert r["program"] == program
        assert int(r["nprocs"]) == nprocs
    meta = run.meta()
    assert meta["complete"] is True
    assert meta["schema_version"] == 2
    assert meta["rows"] == len(rows)
    assert meta["nprocs"] == nprocs
    return rows


@pytest.fixture(params=LIBS)
def lib(request: pytest.FixtureRequest) -> str:
    if not shutil.which(f"mpiexec.{request.param}"):
        pytest.skip(f"mpiexec.{request.param} not installed")
    return str(request.param)


def stdout_tables(stdout: str) -> list[str]:
    """A program's stdout split at blank lines into tables, each with the blocks it wraps into past 120
    columns joined back (a continuation starts with its indented group labels, or with its header row
    and the dashes under it, never with a title)."""
    out: list[str] = []
    for chunk in stdout.split("\n\n"):
        lines = chunk.split("\n")
        cont = bool(out) and (lines[0].startswith(" ") or (len(lines) > 1 and set(lines[1]) == {"-"}))
        if cont:
            out[-1] += "\n" + chunk
        else:
            out.append(chunk)
    return out


def header_words(table: str, first: str) -> list[str]:
    """The column names of a (possibly wrapped) table: the words of every header row starting with
    first, the repeated row-label column kept once."""
    words: list[str] = []
    for line in table.splitlines():
        if line.split()[:1] == [first]:
            words += line.split()[0 if not words else 1:]
    return words


def text_table(stdout: str, title: str) -> list[list[str]]:
    """The lines of the stdout table under title, split in cells (header and groups included); the
    blocks a table wider than 120 columns wraps into are joined back, row by row."""
    lines = stdout.splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith(title))
    while lines[start + 1].startswith("  ") and not lines[start + 1].startswith("   "):
        start += 1  # the title wrapped (mpimb-report indents its continuation by two spaces)
    blocks: list[list[str]] = [[]]
    for i in range(start + 1, len(lines)):
        s = lines[i]
        if s.strip():
            blocks[-1].append(s)
            continue
        after = lines[i + 1:i + 3]  # a continuation: group labels (indented), or a header over dashes
        if len(after) == 2 and (after[0].startswith(" ") or set(after[1]) == {"-"}):
            blocks.append([])
            continue
        break
    out = [s.split() for s in blocks[0]]

    def head(block: list[str]) -> list[str]:
        return next((s.split() for s, nxt in itertools.pairwise(block) if set(nxt) == {"-"}), [])

    for b in blocks[1:]:
        # the row-naming columns open every block (column 0, or more: mpimb-report's Table.keys): as many
        # header words as the blocks share at their start, of which a row repeats those it has
        keys = next((i for i, (x, y) in enumerate(zip(head(b), head(blocks[0]))) if x != y), 1) or 1
        for row, s in zip(out, b):
            words = s.split()
            if s.startswith(" "):  # group labels: a continued group's name is not repeated
                row += [] if words[-1] == "(cont.)" else words
            elif set(s) != {"-"}:
                n = 1
                while n < min(keys, len(words), len(row)) and words[n] == row[n]:
                    n += 1
                row += words[n:]
    return out


def sh(cmd: list[str | Path], cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 300,
       add_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The test package's one way to run a command that is not an MPI launch (run_mpi) or mpimb-report in this
    process (report): words (paths as text), output captured as text, the exit code returned, never raised.
    env replaces the environment, as subprocess does; add_env adds to this process's."""
    full = {**os.environ, **add_env} if add_env is not None else env
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout,
                          check=False)


@contextlib.contextmanager
def small_disk(where: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of size mounted at where (made here) for the test's while: a full disk, where root may mount."""
    where.mkdir()
    if not shutil.which("mount"):
        pytest.skip("no mount(8) here: a full disk needs a small tmpfs")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                       text=True, check=False)
    if p.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): {p.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


# ------------------------------------------------------------------ mpimb-report: the one caller of the tests
REPORT = ROOT / ".venv" / "bin" / "mpimb-report"  # the console script (make venv), for MPIMB_REPORT and subprocesses


@dataclass
class Result:
    rc: int
    out: str
    err: str


def cli(*args: str | Path, capsys: pytest.CaptureFixture[str] | None = None) -> Result:
    """mpimb-report run in this process (its start-up, pandas and matplotlib imported, is most of a short call's
    time, and each worker pays it once): exit code, stdout, stderr (through capsys where the test has it)."""
    from mpimb.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:  # argparse usage errors
            rc = int(e.code or 0)
    if capsys is not None:  # what reached the captured streams around the redirection, too
        cap = capsys.readouterr()
        return Result(rc, cap.out + out.getvalue(), cap.err + err.getvalue())
    return Result(rc, out.getvalue(), err.getvalue())


def cli_proc(*args: str | Path, timeout: float = 300, env: dict[str, str] | None = None,
             module: bool = False) -> Result:
    """mpimb-report as a user starts it: the console script in a subprocess (module, or no venv: python -m mpimb)."""
    import sys

    cmd = [str(REPORT)] if REPORT.exists() and not module else [sys.executable, "-m", "mpimb"]
    p = subprocess.run([*cmd, *(str(a) for a in args)], check=False, capture_output=True, text=True,
                       timeout=timeout, cwd=ROOT, env=None if env is None else {**os.environ, **env})
    return Result(p.returncode, p.stdout, p.stderr)


def report(*args: str | Path) -> str:
    """mpimb-report in this process, its stdout; any exit but 0 fails the test."""
    r = cli(*args)
    assert r.rc == 0, r.err[-3000:]
    return r.out


# ------------------------------------------------------------------ bad input
# Every program parses its command line before MPI_Init, on every rank, with the same argv, and reports
# a bad option right after MPI_Init: the binary alone (argv only, no launcher: a singleton MPI_Init, 0.05 s
# with MPICH, 0.4 s with Open MPI's orted) refuses it as every rank of a job does.  So the bad-input
# matrices run the MPICH binary alone, and tests/test_bad_input.py keeps cases launched on 2 ranks per
# library ("one line from rank 0, exit 2 on every rank") and the Open MPI binary alone.  A check that
# needs the job (the number of ranks) is launched.
OVERSUBSCRIBED = "mpimb: warning: oversubscribed"  # the harness's note when ranks exceed cores


def check_bad_input(program: str, args: list[str], message: str, cwd: Path, *, ranks: int = 0,
                    libs: tuple[str, ...] = ("mpich",), env: dict[str, str] | None = None, exact: bool = False,
                    out: bool = True) -> None:
    """program with args is a usage error: exit 2, one stderr line '<program>: ...' that starts with
    message (or contains it, when message does not name the program; equals it, exact=True), nothing
    on stdout, no file left in cwd (not even results/).  ranks=0: the binary alone, argv only; else
    launched on that many ranks.  out: an -o path in cwd is given first (a usage error writes nothing
    there either)."""
    assert not list(cwd.iterdir()), f"{cwd} must start empty"
    for lib in libs:
        exe = bindir(lib) / program
        if not exe.exists():
            pytest.skip(f"{exe} not built")
        cmd = [*(launcher(lib, ranks) if ranks else []), str(exe),
               *(["-o", str(cwd / "bad.csv")] if out else []), *args]
        full_env = {**os.environ, **(env or {})}
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd, env=full_env, check=False)
        where = f"{lib} {'alone' if not ranks else f'on {ranks} ranks'}: {args!r}"
        assert p.returncode == 2, f"{where}: exit {p.returncode}\n{p.stderr}"
        lines = [ln for ln in p.stderr.splitlines() if ln.strip() and not ln.startswith(OVERSUBSCRIBED)]
        assert len(lines) == 1 and lines[0].startswith(f"{program}: "), f"{where}: {p.stderr!r}"
        if exact:
            assert lines[0] == message, f"{where}: {lines[0]!r}"
        elif message.startswith(f"{program}: "):
            assert lines[0].startswith(message), f"{where}: {lines[0]!r}"
        else:
            assert message in lines[0], f"{where}: {lines[0]!r}"
        assert p.stdout == "", f"{where}: stdout {p.stdout!r}"
        assert list(cwd.iterdir()) == [], f"{where}: left {sorted(x.name for x in cwd.iterdir())}"


# ------------------------------------------------------------------ parallel workers
# scripts/run-tests runs pytest on one worker per core (pytest-xdist, --dist loadgroup).  A module whose
# tests share a module-scoped fixture (one launch for the module) is one unit of work, so the launch runs
# once; every module that needs the Slurm cluster shares one worker, so one cluster serves them; every
# other test is a unit of its own, for balance.  tryfirst: xdist reads the marks in its own hook.
def _shares_a_launch(item: pytest.Item) -> bool:
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return any(d.scope in ("module", "package") for ds in defs.values() for d in ds)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    slurm = {module(i) for i in items if "slurm_cluster" in getattr(i, "fixturenames", ())}
    shared = {module(i) for i in items if _shares_a_launch(i)}
    for item in items:
        m = module(item)
        if m in slurm or m in shared:
            item.add_marker(pytest.mark.xdist_group("slurm" if m in slurm else m))


# ------------------------------------------------------------------ Slurm
@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """One real single-host Slurm cluster (tests/slurm_cluster.py) for every test that needs one:
    partition "test" (the default), 4 nodes of 1 CPU, where jobs sharing a node queue instead of
    oversubscribing the 2 cores; partition "wide", 4 nodes of 4 CPUs, where one node holds 4 ranks.
    Stopped at the end of the session; nothing it started may outlive that."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"Slurm is not installed here (no {', '.join(missing)}); scripts/install-deps --test installs it")
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"), partitions={"test": (4, 1), "wide": (4, 4)})
    try:
        c.start()
        yield c
    finally:
        c.stop()
    assert c.alive() == [], f"left running after stop: {c.alive()}"


def rank_pid(launcher_pid: int, rank: int) -> int | None:
    """PID of the given MPI rank among the launcher's descendants (None: not there).  By parent, not by
    session: MPICH's proxy and ranks each start a session of their own."""
    parent: dict[int, int] = {}
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit():
                stat = Path(f"/proc/{pid}/stat").read_text()
                parent[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    for pid in parent:
        q = pid
        while q in parent and q != launcher_pid and q > 1:
            q = parent[q]
        if q != launcher_pid or pid == launcher_pid:
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        for var in (b"OMPI_COMM_WORLD_RANK", b"PMI_RANK"):
            if var + b"=" + str(rank).encode() in env:
                return pid
    return None
