"""Every command of the README's examples runs (issue 43).

The fenced `sh` blocks of README.md are split into commands (a backslash continues a line, `&&` joins
two commands, `#` starts a comment) and each command is run here, a block's commands in order in one
directory, as written except:
- fewer ranks where the example asks for more than this 2-core machine has (`-n 4` runs on 2);
- `--quick` added to a program's options where the example names the full run (seconds, not minutes);
- Open MPI's `mpiexec` as conftest.launcher gives it (`--allow-run-as-root` as root, `--oversubscribe`);
- the outputs go to the test's directory (`-o`, `--results`), never into the checkout;
- `make` with no target (or only `MPI=`) is the build `make test-builds` made: its programs must be there
  (building here would replace binaries other tests are running); `make test` is this suite itself;
- Slurm commands run on the session's test cluster (conftest.slurm_cluster): 2 nodes of 1 CPU instead
  of the example's node counts and ranks per node, Open MPI's mpiexec as the launcher; collect without
  the report and plots (tests/test_slurm.py makes them).
A command no runner here knows fails the test: a new kind of README example needs its runner."""

from __future__ import annotations

import csv
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, bindir, check_schema, launcher, mpich_turn, report, run_mpi
from slurm_cluster import SlurmCluster

README = ROOT / "README.md"
PROGRAMS = ("halocompare", "pingpong", "collectives", "rma", "threads")
RANKS = 2  # this machine's cores
LIB_OF = {"mpiexec": "openmpi", "mpiexec.openmpi": "openmpi", "mpiexec.mpich": "mpich"}  # Debian's mpiexec: Open MPI


def blocks() -> list[list[list[str]]]:
    """The README's fenced sh blocks, each a list of commands (argument lists)."""
    out = []
    for body in re.findall(r"^```(?:sh|bash)\n(.*?)^```", README.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL):
        cmds: list[list[str]] = []
        for line in body.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words:
                cut = words.index("&&") if "&&" in words else len(words)
                cmds.append(words[:cut])
                words = words[cut + 1:]
        out.append(cmds)
    return out


BLOCKS = blocks()


def is_slurm(block: list[list[str]]) -> bool:
    return any(c[0].startswith("slurm/") for c in block)


def block_id(block: list[list[str]]) -> str:
    return " / ".join(" ".join(c[:3]) for c in block)[:80]


def sh(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None,
       timeout: float = 600) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                       check=False)
    assert p.returncode == 0, f"{shlex.join(map(str, cmd))}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-3000:]}"
    return p


def quick(args: list[str]) -> list[str]:
    return args if "--quick" in args else [*args, "--quick"]


def parse_launch(words: list[str]) -> tuple[str, int, str, list[str]]:
    """`mpiexec[.lib] -n N PROGRAM ARGS...`: (library, ranks here, program path, args)."""
    assert words[0] in LIB_OF and words[1] == "-n", f"a launch the test cannot read: {shlex.join(words)}"
    return LIB_OF[words[0]], min(int(words[2]), RANKS), words[3], words[4:]


def program_path(lib: str, path: str) -> Path:
    """./PROGRAM (the root copy of the last plain build) runs the library's own build; build/... as given."""
    exe = bindir(lib) / Path(path).name if path.startswith("./") else ROOT / path
    assert Path(path).name in PROGRAMS, path
    if not exe.exists():
        pytest.skip(f"{exe} not built (make test-builds)")
    return exe


def run_launch(words: list[str], tmp: Path) -> None:
    lib, n, path, args = parse_launch(words)
    program = Path(program_path(lib, path)).name
    run = run_mpi(lib, n, program, *quick(args), out=tmp / f"{program}.csv")
    assert run.returncode == 0, run.stderr[-3000:]
    check_schema(run, program, n)


def run_launches(words: list[str], tmp: Path) -> None:
    """scripts/launches OPTIONS -- NAME: LAUNCH :: NAME: LAUNCH ...: each LAUNCH as run_launch reads it."""
    sep = words.index("--")
    parts: list[list[str]] = [[]]
    for w in words[sep + 1:]:
        parts[-1:] = [parts[-1], []] if w == "::" else [[*parts[-1], w]]
    configs: list[str] = []
    names, mpich_ranks = [], 0
    for name, *launch in parts:
        lib, n, path, args = parse_launch(launch)
        mpich_ranks = max(mpich_ranks, n if lib == "mpich" else 0)
        names.append(name.rstrip(":"))
        configs += [*(["::"] if configs else []), name, *launcher(lib, n), str(program_path(lib, path)), *quick(args)]
    with mpich_turn("mpich", mpich_ranks):  # the series' MPICH launches are the machine's MPICH job
        sh([ROOT / words[0], *words[1:sep], "--", *configs], cwd=tmp)
    out = tmp / words[words.index("-o") + 1]
    want = [f"launch-{i}.csv" for i in range(1, int(words[words.index("--launches") + 1]) + 1)]
    for name in names:
        assert sorted(p.name for p in (out / name).glob("launch-*.csv") if p.name in want) == sorted(want), name


def run_report(words: list[str], tmp: Path) -> None:
    """mpimb-report in this process (conftest.report), from the block's directory."""
    cwd = Path.cwd()
    os.chdir(tmp)
    try:
        out = report(*words[1:])
    finally:
        os.chdir(cwd)
    if words[1] == "compare":
        html = tmp / words[words.index("-o") + 1]
        md = html.with_suffix(".md").read_text()
        assert html.exists() and "Cross-system" in out
        # judged on the launches of each set: enough of them on each side
        assert "across launches" in md and "not judged (" not in md, md[:3000]


def run_make(words: list[str], tmp: Path) -> None:
    target = [w for w in words[1:] if "=" not in w]
    assigns = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    if not target:  # the build: made by make test-builds, each library into its own build/<lib>/bin
        lib = assigns.pop("MPI", "openmpi")
        assert not assigns, words
        for p in PROGRAMS:
            program_path(lib, f"./{p}")
        return
    if target == ["test"]:
        return  # this suite
    assert target == ["simulate"], f"no runner for {shlex.join(words)}"
    if not (shutil.which("smpirun") and shutil.which("smpicc")):
        pytest.skip("SimGrid SMPI not installed (apt-get install libsimgrid-dev)")
    # the Makefile's default SIM_ARGS, with the results sent here instead of the checkout's results/
    (default,) = re.findall(r"^SIM_ARGS \?= (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    sh(["make", "--no-print-directory", "-C", ROOT, *words[1:], f"SIM_ARGS={default} -o {tmp}"], cwd=tmp)
    (result,) = tmp.glob("*.csv")
    assert f"-sim-{assigns['SIM_PLATFORM']}-" in result.name, result.name


RUNNERS = {"scripts/launches": run_launches, "make": run_make}


def run_command(words: list[str], tmp: Path) -> None:
    if words[0] in LIB_OF:
        run_launch(words, tmp)
    elif words[0].endswith("mpimb-report"):
        run_report(words, tmp)
    elif words[0] in RUNNERS:
        RUNNERS[words[0]](words, tmp)
    else:
        pytest.fail(f"no runner for the README's command {shlex.join(words)}")


def test_the_readme_shows_what_a_newcomer_needs() -> None:
    """The blocks hold the two commands, one launch of every program, a comparison of launches, a
    simulation and the Slurm sweep (else the tests below would pass on an emptied README)."""
    cmds = [c for b in BLOCKS for c in b]
    assert ["make"] in cmds and ["make", "test"] in cmds
    launched = {Path(c[3]).name for c in cmds if c[0] in LIB_OF}
    assert launched == set(PROGRAMS)
    assert any(c[0] == "scripts/launches" for c in cmds)
    assert any(c[0].endswith("mpimb-report") and c[1] == "compare" for c in cmds)
    assert any(c[:2] == ["make", "simulate"] for c in cmds)
    assert {c[0] for c in cmds if is_slurm([c])} == {"slurm/sweep", "slurm/collect"}
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("block", [b for b in BLOCKS if not is_slurm(b)], ids=block_id)
def test_block(block: list[list[str]], tmp_path: Path) -> None:
    for words in block:
        run_command(words, tmp_path)


@pytest.fixture
def slurm(slurm_cluster: SlurmCluster) -> Iterator[SlurmCluster]:
    if not (bindir("openmpi") / "halocompare").exists():
        pytest.skip(f"{bindir('openmpi')}/halocompare not built (make test-builds)")
    yield slurm_cluster


@pytest.mark.parametrize("block", [b for b in BLOCKS if is_slurm(b)], ids=block_id)
def test_slurm_block(block: list[list[str]], slurm: SlurmCluster, tmp_path: Path) -> None:
    results = tmp_path / "results"
    mpiexec = shlex.join(launcher("openmpi", 1)[:-2])
    for words in block:
        words = list(words)
        if words[0] == "slurm/sweep":
            for opt, here in (("-N", "2"), ("--ppn", "1")):  # 2 ranks on 2 nodes of 1 CPU
                words[words.index(opt) + 1] = here
            words += ["--partition", slurm.partition, "--time", "5", "--bindir", str(bindir("openmpi")),
                      "--launcher", "mpiexec", "--mpiexec", mpiexec, "--", "--quick"]
            p = sh([ROOT / words[0], "--results", results, *words[1:]], cwd=tmp_path,
                   env=dict(slurm.env, MPIMB_SWEEP_POLL="1"))
            assert re.search(r"\b(\d+) of \1 job\(s\) completed, 0 failed", p.stdout), p.stdout
        else:
            assert words[0] == "slurm/collect", f"no runner for {shlex.join(words)}"
            # without the sweep's report and plots (40 s here; tests/test_slurm.py makes them from a sweep)
            sh([ROOT / words[0], "--results", results, "--no-report", *words[1:]], cwd=tmp_path, env=slurm.env)
            with open(results / words[-1] / "collect.tsv", newline="") as f:
                status = {r["config"]: r["status"] for r in csv.DictReader(f, delimiter="\t")}
            assert status and set(status.values()) == {"complete"}, status
