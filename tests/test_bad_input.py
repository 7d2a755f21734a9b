"""Bad input: one clear line from rank 0, exit 2 on every rank, within
seconds, and no stray files (halocompare's options, the common ones, and
collectives' own)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import ONCE, bindir, check_bad_input

CASES = [
    (["--count", "-5"], "--count must be a positive integer, got '-5'"),
    (["--count", "0"], "--count must be a positive integer, got '0'"),
    (["--count", "99999999999"], "got '99999999999'"),
    (["--count", "abc"], "got 'abc'"),
    (["--count"], "--count needs a value"),
    (["--methods", "bogus"], "--methods: unknown value 'bogus'"),
    (["--comms", "world,nope"], "--comms: unknown value 'nope'"),
    (["--neighbors", "5"], "--neighbors: unknown value '5'"),
    (["--periodic", "maybe"], "--periodic: unknown value 'maybe'"),
    (["--dims", "4"], "--dims must be an integer from 1 to 3, got '4'"),
    (["--dims", "0"], "--dims must be an integer from 1 to 3, got '0'"),
    (["--root", "3"], "unrecognized option '--root'"),
    (["--reps", "0"], "--reps must be a positive integer"),
    (["--reps", "50", "--max-reps", "10"], "--max-reps (10) must be at least --reps (50)"),
    (["--timeout", "-1"], "--timeout must be a positive number"),
    (["--rel-ci", "1.5"], "--rel-ci must be below 1"),
    (["--stat", "mode"], "--stat: unknown value 'mode'"),
    (["--label", "a b"], "--label may contain only"),
    (["--label", "x/y"], "--label may contain only"),
    (["extra"], "unexpected argument 'extra'"),
    (["-o", "/nonexistent/dir/x.csv"], "cannot write '/nonexistent/dir/x.csv'"),
    (["-o", "/proc/x.csv"], "cannot write '/proc/x.csv'"),
    # the harness's measurement options (issue 17)
    (["--sync", "never"], "--sync: unknown value 'never' (choose from: barrier, window)"),
    (["--window-us", "-5"], "--window-us must be a positive number up to 1000000, got '-5'"),
    (["--window-us", "1e9"], "--window-us must be a positive number up to 1000000, got '1e9'"),
    (["--sync", "barrier", "--window-us", "10"], "--window-us needs --sync window"),
    (["--order", "sideways"], "--order: unknown value 'sideways' (choose from: fixed, shuffle)"),
    (["--order-seed", "3"], "--order-seed needs --order shuffle"),
    (["--order", "shuffle", "--order-seed", "-1"], "--order-seed must be an integer from 0 to 4294967295"),
    (["--neighbors", "26", "--dims", "2"], "--neighbors 26 does not apply to --dims 2 (choose from: 4, 8)"),
    (["--neighbors", "6"], "--neighbors 6 does not apply to --dims 2 (choose from: 4, 8)"),
    (["--dims", "1", "--neighbors", "4,2"], "--neighbors 4 does not apply to --dims 1 (choose from: 2)"),
    (["--dims", "3", "--neighbors", "8"], "--neighbors 8 does not apply to --dims 3 (choose from: 6, 26)"),
    (["--dims", "x"], "--dims must be an integer from 1 to 3, got 'x'"),
]

# --sweep-budget belongs to the programs that sweep message sizes
SWEEP_CASES = [
    (["--sweep-budget", "0"], "--sweep-budget must be a positive number up to 86400, got '0'"),
    (["--sweep-budget", "-2"], "--sweep-budget must be a positive number up to 86400, got '-2'"),
    (["--sweep-budget", "soon"], "--sweep-budget must be a positive number up to 86400, got 'soon'"),
]

# collectives (issue 19): the same rules for its own options
COLL_CASES = [
    (["--segment", "0"], "--segment must be a size in bytes from 1 to"),
    (["--comms", "nowhere"], "--comms: unknown value 'nowhere'"),
    (["--comms", "world,"], "--comms: unknown value ''"),
    (["--root", "combo"], "--root must be same, rotate or a rank number, got 'combo'"),
    (["--root", "same,0"], "--root lists root 0 twice ('same' and '0')"),
    (["--tests", "bcast-3level"], "--tests: unknown value 'bcast-3level'"),
]
ALL = [("halocompare", *c) for c in CASES] + [("collectives", *c) for c in COLL_CASES]


@pytest.mark.parametrize("program,args,message", ALL, ids=[f"{c[0]} {' '.join(c[1])}" for c in ALL])
def test_bad_input_single_rank(tmp_path: Path, program: str, args: list[str], message: str) -> None:
    """The binary alone (argv only), no -o: not even results/ is created."""
    check_bad_input(program, args, message, tmp_path, out=False)


# A few cases launched on 2 ranks per library: every rank exits 2 and rank 0 alone speaks.
LAUNCHED = [ALL[0], ALL[5], ALL[20], next(c for c in ALL if c[1][:2] == ["--neighbors", "26"]), ALL[len(CASES) + 1]]


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
@pytest.mark.parametrize("program,args,message", LAUNCHED,
                         ids=["count", "methods", "output", "stencil-of-dims", "collectives-comms"])
def test_bad_input_every_rank_exits_2(tmp_path: Path, lib: str, program: str, args: list[str], message: str) -> None:
    check_bad_input(program, args, message, tmp_path, ranks=2, libs=(lib,), out=False)


@pytest.mark.parametrize("program,args,message", LAUNCHED,
                         ids=["count", "methods", "output", "stencil-of-dims", "collectives-comms"])
def test_bad_input_openmpi_alone(tmp_path: Path, program: str, args: list[str], message: str) -> None:
    """The Open MPI binary alone (no launcher: MPI is never started) refuses as MPICH's does."""
    check_bad_input(program, args, message, tmp_path, libs=("openmpi",), out=False)


@pytest.mark.parametrize(("args", "code"), [
    (["--count", "0"], 2), (["--list"], 0), (["--version"], 0),
    # the control: a run that measures starts MPI, which this environment breaks
    (["--tests", "halo", "--methods", "irecv-isend", "--comms", "world", *ONCE, "-o", "h.csv"], 1),
], ids=["bad", "list", "version", "control"])
def test_no_launcher_no_mpi(tmp_path: Path, args: list[str], code: int) -> None:
    """A process no launcher started answers bad input, --list and --version without MPI_Init (run.c,
    launched; docs/architecture.md, "Exit codes"): with an Open MPI whose MPI_Init cannot succeed (a
    point-to-point component that does not exist), they still give their answer and exit code."""
    exe = bindir("openmpi") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_COMM_WORLD", "PMI_", "SLURM_"))}
    # an isolated singleton (no orted of its own): singletons started at once by other workers made their
    # orteds lose each other's messages, Open MPI's text included ("ORTE_ERROR_LOG: Data unpack would read
    # past end of buffer ... show_help.c": 19 of 36 concurrent runs here, none isolated)
    env = {**env, "OMPI_MCA_pml": "nosuch", "OMPI_MCA_ess_singleton_isolated": "1"}
    p = subprocess.run([str(exe), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode == code, p.stderr
    if code == 2:
        assert p.stderr.splitlines() == ["halocompare: --count must be a positive integer, got '0'"]
    elif code == 0:
        assert p.stderr == "" and p.stdout.startswith(("tests: halo", "halocompare (mpimb)")), p.stdout
    else:
        # MPI_Init was reached, and failed
        assert "component was not found" in p.stderr and "An error occurred in MPI_Init" in p.stderr, p.stderr


@pytest.mark.parametrize("program", ["pingpong", "collectives"])
@pytest.mark.parametrize("args,message", SWEEP_CASES, ids=[" ".join(c[0]) for c in SWEEP_CASES])
def test_bad_sweep_budget(tmp_path: Path, program: str, args: list[str], message: str) -> None:
    check_bad_input(program, args, f"{program}: {message}", tmp_path, exact=True, out=False)


# --overlap (issues 28, 29): the programs with nonblocking operations, through the option table's bounds
OVERLAP_CASES = [
    (["--overlap", "0"], "--overlap must be a positive number up to 1000, got '0'"),
    (["--overlap", "-1"], "--overlap must be a positive number up to 1000, got '-1'"),
    (["--overlap", "abc"], "--overlap must be a positive number up to 1000, got 'abc'"),
    (["--overlap", "1001"], "--overlap must be a positive number up to 1000, got '1001'"),
]


@pytest.mark.parametrize("program", ["halocompare", "collectives"])
@pytest.mark.parametrize("args,message", OVERLAP_CASES, ids=[" ".join(c[0]) for c in OVERLAP_CASES])
def test_bad_overlap(tmp_path: Path, program: str, args: list[str], message: str) -> None:
    check_bad_input(program, args, f"{program}: {message}", tmp_path, exact=True, out=False)


def test_overlap_only_where_nonblocking(tmp_path: Path) -> None:
    """A program without nonblocking operations to hide (pingpong) refuses --overlap."""
    check_bad_input("pingpong", ["--overlap", "2"], "pingpong: --overlap does not apply to pingpong", tmp_path,
                    exact=True, out=False)
