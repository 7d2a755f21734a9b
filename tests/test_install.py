"""make install / uninstall / dist as a user and a packager meet them, and the
build variables by convention: from a clean clone, `make install PREFIX=...`
gives programs, mpimb-report and Slurm scripts that work outside the
checkout; DESTDIR stages under DESTDIR only; uninstall leaves the prefix as
it was; a `make dist` tarball builds and installs without git and its
results carry the version and commit; CFLAGS and friends add to the flags
the build needs and never remove them; each build knows its MPI (issue 26,
part 1): every library's build lives in build/<library>/ whatever is built
after it, make says whose the root binaries are, make install installs the
build of the library it is given (MPI=...), by default the root binaries'
one, and says which.  One clean clone with two builds (MPICH's, then the
default Open MPI one) serves every test that needs a clone."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, launcher, mpich_turn

VERSION = (ROOT / "VERSION").read_text().splitlines()[0]
PROGRAMS = ("collectives", "halocompare", "pingpong", "rma", "threads")


def sh(cmd: list[str], cwd: Path, timeout: float = 900, env: dict[str, str] | None = None,
       check: bool = True) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    full.update(env or {})
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full, check=False)
    if check:
        assert p.returncode == 0, f"{cmd}: {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def tree(root: Path) -> list[str]:
    """Every path under root with its type and, for files, its content."""
    out = []
    for p in sorted(root.rglob("*")):
        kind = "l" if p.is_symlink() else "d" if p.is_dir() else "f"
        out.append(f"{kind} {p.relative_to(root)} {p.read_bytes().hex() if kind == 'f' else ''}")
    return out


# Every make in the clone (and in the tarball's tree) compiles at -O0, from the environment as a user's
# CFLAGS: nothing here depends on the optimisation (the default -O2 -g is what make test-builds compiles),
# and it halves the compile time.  The same CFLAGS for every make there, so none rebuilds for new flags.
CLONE_ENV = {"CFLAGS": "-O0"}


def make(args: list[str], cwd: Path, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess[str]:
    return sh(["make", *args], cwd, timeout=timeout, env=CLONE_ENV, check=check)


def libmpi(binary: Path) -> str:
    """The MPI library a binary is linked with, as ldd shows it."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    libs = {w for line in out.splitlines() for w in line.split() if w.startswith(("libmpich.so", "libmpi.so"))}
    assert len(libs) == 1, out
    return "mpich" if libs.pop().startswith("libmpich") else "openmpi"


def digest(d: Path) -> dict[str, str]:
    return {p: hashlib.sha256((d / p).read_bytes()).hexdigest() for p in PROGRAMS}


def note(stdout: str) -> list[str]:
    """make's line saying whose the root binaries are."""
    return [line for line in stdout.splitlines() if line.startswith("make: ./")]


@dataclass
class Clone:
    """The clean clone and what its two builds said and left, in order."""
    path: Path
    commit: str           # HEAD, 12 digits
    mpich_make: str       # stdout of the first build, make MPI=mpich
    mpich_root: str       # the library ./halocompare was linked with after it
    mpich_bins: dict[str, str]  # build/mpich/bin's programs after it
    default_make: str     # stdout of the second build, plain make
    default_root: str
    mpich_bins_after: dict[str, str]  # build/mpich/bin's programs after the second build


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Clone:
    """A clean clone of this checkout's HEAD, built with MPICH (make MPI=mpich), then with the default
    mpicc (Open MPI here) beside it: the root binaries are the default build's, as after a plain make."""
    for tool in ("mpicc", "mpicc.mpich", "mpiexec.openmpi", "ldd"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed")
    head = sh(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()
    d = tmp_path_factory.mktemp("clone") / "mpimb"
    sh(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(d)], ROOT)
    sh(["git", "checkout", "--quiet", head], d)
    first = make(["-j2", "MPI=mpich"], d)
    mpich_root, mpich_bins = libmpi(d / "halocompare"), digest(d / "build" / "mpich" / "bin")
    second = make(["-j2"], d)
    return Clone(d, head[:12], first.stdout, mpich_root, mpich_bins, second.stdout, libmpi(d / "halocompare"),
                 digest(d / "build" / "mpich" / "bin"))


# ------------------------------------------------------------------ install, use, uninstall
@pytest.fixture(scope="module")
def installed(clone: Clone, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], str]:
    """make install PREFIX=p into a prefix that already holds something: the prefix, its tree before, what
    make install said."""
    prefix = tmp_path_factory.mktemp("prefix") / "p"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "theirs").write_text("not mpimb's\n")
    (prefix / "share").mkdir()
    before = tree(prefix)
    p = make(["install", f"PREFIX={prefix}"], clone.path, timeout=1200)
    return prefix, before, p.stdout + p.stderr


def test_install_layout(installed: tuple[Path, list[str], str]) -> None:
    """Programs, mpimb-report, Slurm scripts, data and docs where docs/install.md says; what the prefix
    held is kept; plain make install after a plain make installs the root binaries' build (Open MPI's
    here), and says so."""
    prefix, _, said = installed
    for p in (*PROGRAMS, "mpimb-report"):
        assert os.access(prefix / "bin" / p, os.X_OK), p
    assert "the Open MPI build in build/openmpi/bin" in said
    assert all(libmpi(prefix / "bin" / prog) == "openmpi" for prog in PROGRAMS)
    share = prefix / "share" / "mpimb"
    for f in ("slurm/sweep", "slurm/collect", "slurm/lib/job-record", "platforms/two-node.xml",
              "schema/results.schema.json", "schema/meta.schema.json", "reframe/mpimb_checks.py",
              "reference/gropp-lusk/halocompare-Cray-XT4-np1024.csv", "reference/sources/gropp-lusk-halo-tables.csv", "VERSION", "install-manifest"):
        assert (share / f).is_file(), f
    assert (prefix / "share" / "doc" / "mpimb" / "architecture.md").is_file()
    assert (prefix / "lib" / "mpimb" / "venv" / "bin" / "python").exists()
    assert (prefix / "bin" / "theirs").read_text() == "not mpimb's\n"


def test_installed_programs_run_outside_the_checkout(installed: tuple[Path, list[str], str], clone: Clone,
                                                     tmp_path: Path) -> None:
    prefix, _, _ = installed
    commit = clone.commit
    p = sh([*launcher("openmpi", 2), str(prefix / "bin" / "halocompare"), "--quick", "-o", "hc.csv"], tmp_path,
           timeout=300)
    meta = json.loads((tmp_path / "hc.json").read_text())
    assert meta["complete"] is True and meta["suite_version"] == VERSION and meta["git_commit"] == commit, p.stderr
    r = sh([str(prefix / "bin" / "mpimb-report"), "report", "hc.csv", "-o", "report.html"], tmp_path, timeout=300)
    assert (tmp_path / "report.html").stat().st_size > 1000, r.stdout
    v = sh([str(prefix / "bin" / "mpimb-report"), "--version"], tmp_path)
    assert v.stdout.strip() == f"mpimb-report {VERSION}"
    u = sh([str(prefix / "bin" / "mpimb-report"), "table", "--format", "nope", "hc.csv"], tmp_path, check=False)
    assert u.returncode == 2


def test_installed_sweep_finds_the_installed_programs(installed: tuple[Path, list[str], str], tmp_path: Path) -> None:
    prefix, _, _ = installed
    share = prefix / "share" / "mpimb"
    p = sh([str(share / "slurm" / "sweep"), "--dry-run", "-p", "halocompare,pingpong", "-N", "1,2", "--label", "site"],
           tmp_path)
    assert p.stdout.count("#!/bin/bash") == 4
    assert re.search(rf"srun (--cpu-bind=cores )?{prefix}/bin/halocompare -o", p.stdout)
    assert re.search(rf"srun (--cpu-bind=cores )?{prefix}/bin/pingpong -o", p.stdout)
    assert f"mpimb={share}   #" in p.stdout
    assert f'out="{tmp_path}/results/site/$SLURM_JOB_ID"' in p.stdout  # results under the working directory
    assert "not built" not in p.stderr
    bad = sh([str(share / "slurm" / "sweep"), "--dry-run", "-N", "0"], tmp_path, check=False)
    assert bad.returncode == 2


def test_installed_launches_runs_a_series(installed: tuple[Path, list[str], str], tmp_path: Path) -> None:
    """share/mpimb/scripts/launches runs a two-launch series of the installed pingpong outside the
    checkout (it finds slurm/lib/common.sh beside it, and the installed mpimb-report through it), and the
    installed sweep takes --launches N, its jobs running that copy."""
    prefix, _, _ = installed
    share = prefix / "share" / "mpimb"
    tiny = [str(prefix / "bin" / "pingpong"), "--tests", "latency", "--quick", "-m", "8:8", "--reps", "1",
            "--max-reps", "1", "--warmup", "0"]
    p = sh([str(share / "scripts" / "launches"), "--launches", "2", "-o", "set", "--", "pp:",
            *launcher("openmpi", 2), *tiny], tmp_path, timeout=300, env={"MPIMB_REPORT": "none"})
    series = json.loads((tmp_path / "set" / "launches.json").read_text())
    assert series["status"] == "complete" and series["launches"] == 2
    for i in (1, 2):
        meta = json.loads((tmp_path / "set" / "pp" / f"launch-{i}.json").read_text())
        assert meta["complete"] is True and meta["label"] == "pp"
        assert meta["launch"] == {"series": series["series"], "index": i, "of": 2}
    assert f"read the set: {prefix}/bin/mpimb-report findings set/pp" in p.stderr
    d = sh([str(share / "slurm" / "sweep"), "--dry-run", "-p", "pingpong", "--launches", "2", "--label", "site"],
           tmp_path)
    assert f"mpimb={share}   #" in d.stdout
    assert re.search(rf'"\$mpimb/scripts/launches" --launches 2 -o "\$out/launches" .* pingpong: srun .*'
                     rf"{prefix}/bin/pingpong --label site", d.stdout), d.stdout


def test_uninstall_leaves_the_prefix_as_it_was(installed: tuple[Path, list[str], str], clone: Clone) -> None:
    prefix, before, _ = installed
    src = clone.path
    make(["uninstall", f"PREFIX={prefix}"], src)
    assert tree(prefix) == before
    again = make(["uninstall", f"PREFIX={prefix}"], src, check=False)
    assert again.returncode != 0 and "no mpimb installed here" in again.stderr


def test_destdir_stages_under_destdir_only(clone: Clone, tmp_path: Path) -> None:
    """mpimb-report's environment staged too, with mpimb alone in it (PIP_ARGS=--no-deps): its scripts
    and byte-code are relocated the same way whatever is installed (the full environment, pandas and
    all, is test_install_layout's), at a fraction of the time."""
    src = clone.path
    final = Path("/opt/mpimb")
    existed = final.exists()
    stage = tmp_path / "stage"
    make(["install", f"DESTDIR={stage}", f"PREFIX={final}", "PIP_ARGS=--no-deps"], src, timeout=1200)
    assert final.exists() == existed
    staged = stage / "opt" / "mpimb"
    assert sorted(p.name for p in stage.iterdir()) == ["opt"] and sorted(p.name for p in (stage / "opt").iterdir()) == [
        "mpimb"]
    assert (staged / "bin" / "halocompare").is_file()
    assert os.readlink(staged / "bin" / "mpimb-report") == f"{final}/lib/mpimb/venv/bin/mpimb-report"
    assert (staged / "lib" / "mpimb" / "venv" / "bin" / "mpimb-report").read_text().startswith(
        f"#!{final}/lib/mpimb/venv/bin/python")
    assert f"MPIMB_BINDIR={final}/bin" in (staged / "share" / "mpimb" / "slurm" / "lib" / "installed.sh").read_text()
    # nothing staged names the staging directory (scripts, metadata, byte-code)
    named = sh(["grep", "-rlF", str(stage), str(stage)], tmp_path, check=False)
    assert named.stdout == ""
    manifest = (staged / "share" / "mpimb" / "install-manifest").read_text().splitlines()
    assert all(line.split(" ", 1)[1].startswith(str(final)) or line.startswith("d /opt") for line in manifest)
    make(["uninstall", f"DESTDIR={stage}", f"PREFIX={final}"], src)
    assert list(stage.iterdir()) == []


# ------------------------------------------------------------------ make dist
def test_dist_tarball_builds_and_installs_without_git(clone: Clone, tmp_path: Path) -> None:
    """The tarball has every file of the commit and a VERSION naming it; built and installed from it (no
    git) a program's results carry that version and commit; the user's CFLAGS it is built with, quotes and
    all, are the ones its results record."""
    src, commit = clone.path, clone.commit
    p = make(["dist"], src)
    tarball = src / f"mpimb-{VERSION}.tar.gz"
    assert tarball.is_file(), p.stdout
    out = tmp_path / "unpacked"
    out.mkdir()
    sh(["tar", "xzf", str(tarball), "-C", str(out)], tmp_path)
    tree_dir = out / f"mpimb-{VERSION}"
    assert (tree_dir / "VERSION").read_text() == f"{VERSION}\ncommit {commit}\n"
    assert not (tree_dir / ".git").exists()
    assert sh(["git", "rev-parse", "--show-toplevel"], tree_dir, check=False).returncode != 0
    # every file of the commit is in the tarball, so what the clone builds (every program) builds from it
    # too; the tarball builds and installs one program here (PROGRAMS=pingpong: the common code, the
    # profiler library, the build info without git), the clone has built them all
    names = sorted(str(p.relative_to(tree_dir)) for p in tree_dir.rglob("*") if p.is_file() or p.is_symlink())
    assert names == sorted(sh(["git", "ls-tree", "-r", "--name-only", "HEAD"], src).stdout.split())
    prefix = tmp_path / "q"
    flags = "-O0 -DMB_TEST_NAME='\"it''s \\\"q\\\"\"'"
    make(["-j2", "install", f"PREFIX={prefix}", "REPORT=no", "PROGRAMS=pingpong", f"CFLAGS={flags}"], tree_dir,
         timeout=1200)
    assert not (prefix / "bin" / "mpimb-report").exists()
    v = sh([str(prefix / "bin" / "pingpong"), "--version"], tmp_path)
    assert v.stdout.splitlines()[0] == f"pingpong (mpimb) {VERSION}"
    assert v.stdout.splitlines()[1] == "built for Open MPI (openmpi)"  # the build make install chose
    sh([*launcher("openmpi", 2), str(prefix / "bin" / "pingpong"), "--quick", "--tests", "latency", "-m", "8:8",
        "-o", "pp.csv"], tmp_path, timeout=300)
    meta = json.loads((tmp_path / "pp.json").read_text())
    assert meta["suite_version"] == VERSION and meta["git_commit"] == commit  # not unknown-dirty
    # the flags recorded in the metadata are the ones used, quotes and all
    recorded = meta["compiler"]["flags"]
    assert recorded.endswith(" -O0 -DMB_TEST_NAME='\"it''s \\\"q\\\"\"'"), recorded
    make(["uninstall", f"PREFIX={prefix}"], tree_dir)
    assert not prefix.exists()


def test_dist_needs_git(tmp_path: Path) -> None:
    """A tree without its own .git cannot make a tarball that names a commit."""
    (tmp_path / "VERSION").write_text("9.9\n")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    p = sh(["make", "dist"], tmp_path, check=False)
    assert p.returncode == 2 and "needs the git checkout" in p.stderr


# ------------------------------------------------------------------ build variables
def compile_lines(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    p = sh(["make", "-n", "-B", f"BUILD={tmp_path}/b", f"BINDIR={tmp_path}/b/bin", *args, "all"], ROOT, env=env)
    return p.stdout.splitlines()


def test_user_flags_add_to_what_the_smpi_build_needs(tmp_path: Path) -> None:
    lines = compile_lines(tmp_path, "MPI=smpi", "CFLAGS=-O3", "CPPFLAGS=-DUSER_CPP=1", "LDFLAGS=-L/opt/user")
    compiles = [line for line in lines if " -c -o " in line]
    links = [line for line in lines if "/b/bin/" in line and " -c " not in line and line.startswith("smpicc")]
    assert compiles and links
    for c in compiles:
        words = c.split()
        assert words[0] == "smpicc"
        for flag in ("-DMB_SIMULATED", "-std=c11", "-D_GNU_SOURCE", "-Isrc/common", "-Wall", "-O3", "-DUSER_CPP=1"):
            assert flag in words, (flag, c)
        assert "-O2" not in words
        assert words.index("-O3") > words.index("-std=c11")  # the user's come after
    # one meta.o: the programs' and the traced build's profiler copy (build/smpi/trace/) alike
    meta = [c for c in compiles if c.endswith("src/common/meta.c")]
    assert len(meta) == 1 and "-DMB_VERSION='\"" + VERSION + "\"'" in meta[0] and "-DMB_GIT_COMMIT=" in meta[0]
    assert "-DMB_CFLAGS='\"-D_GNU_SOURCE -Isrc/common -DMB_SIMULATED -DUSER_CPP=1 -std=c11" in meta[0]
    assert all("-L/opt/user" in link for link in links)


def test_user_flags_keep_the_sanitizer(tmp_path: Path) -> None:
    lines = compile_lines(tmp_path, "SAN=asan", "CFLAGS=-O1", "LDFLAGS=-Wl,-z,now", "LDLIBS=-ldl")
    compiles = [line for line in lines if " -c -o " in line]
    links = [line for line in lines if "/b/bin/" in line and " -c " not in line and line.startswith("mpicc")]
    assert all("-fsanitize=address,undefined" in c and "-O1" in c for c in compiles)
    assert all("-fsanitize=address,undefined" in link and "-Wl,-z,now" in link for link in links)
    # the build's libraries (threads adds -lbz2), then the user's
    assert all(re.search(r"-lhwloc -lm -lpthread( -lbz2)? +-ldl$", link.rstrip()) for link in links)


def test_cc_names_the_mpi_wrapper_like_osu(tmp_path: Path) -> None:
    """make CC=mpicc.mpich as OSU's configure CC=mpicc; an environment CC
    (usually the plain compiler) is not used; MPI= and MPICC= win."""
    assert all(line.startswith("mpicc.mpich ") for line in compile_lines(tmp_path, "CC=mpicc.mpich")
               if " -c -o " in line)
    assert all(line.startswith("mpicc ") for line in compile_lines(tmp_path, env={"CC": "gcc"}) if " -c -o " in line)
    assert all(line.startswith("mpicc.openmpi ") for line in compile_lines(tmp_path, "CC=gcc", "MPI=openmpi")
               if " -c -o " in line)


def test_analysis_package_installs_on_its_own(clone: Clone, tmp_path: Path) -> None:
    """pip install ./analysis: a wheel with the suite's version and the schema."""
    src = clone.path
    py = ROOT / ".venv" / "bin" / "python"
    if not py.exists():
        pytest.skip("make venv first")
    sh([str(py), "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(tmp_path), "./analysis"], src, timeout=600)
    wheel = tmp_path / f"mpimb-{VERSION}-py3-none-any.whl"
    assert wheel.is_file(), sorted(p.name for p in tmp_path.iterdir())
    names = sh(["python3", "-m", "zipfile", "-l", str(wheel)], tmp_path).stdout
    for f in ("mpimb/schema/results.schema.json", "mpimb/schema/meta.schema.json", "mpimb/cli.py",
              f"mpimb-{VERSION}.dist-info/entry_points.txt"):
        assert f in names, f


# ------------------------------------------------------------------ two libraries, two builds
def test_two_libraries_two_builds_and_install_says_which(clone: Clone, tmp_path: Path) -> None:
    """Each build knows its MPI: MPICH's build stays intact when the default one is built beside it and
    is not rebuilt when asked for again; make says whose the root binaries are; make install installs
    MPI='s build, else the root binaries' one, and says which; --version says the library.  (Plain make
    install after the plain make: test_install_layout.)  Ends as it began: the root binaries the default
    build's."""
    src = clone.path
    # MPICH first: the root binaries were its build, and make said so in one line
    assert note(clone.mpich_make) == [("make: ./collectives ./halocompare ./pingpong ./rma ./threads are now the "
                                       "MPICH build (build/mpich/bin)")], clone.mpich_make[-2000:]
    assert clone.mpich_root == "mpich"
    v = sh([str(src / "build" / "mpich" / "bin" / "pingpong"), "--version"], tmp_path).stdout.splitlines()
    assert v[1] == "built for MPICH (mpich)"
    # the default build (Open MPI here) beside it: the MPICH build stayed intact
    assert note(clone.default_make) == [("make: ./collectives ./halocompare ./pingpong ./rma ./threads are now the "
                                         "Open MPI build (build/openmpi/bin)")], clone.default_make[-2000:]
    assert clone.default_root == "openmpi"
    assert clone.mpich_bins_after == clone.mpich_bins
    assert all(libmpi(src / "build" / "mpich" / "bin" / prog) == "mpich" for prog in PROGRAMS)
    openmpi = digest(src / "build" / "openmpi" / "bin")

    # make install MPI=mpich after a default make: MPICH's build, the root binaries untouched
    p = make(["install", "MPI=mpich", f"PREFIX={tmp_path}/b", "REPORT=no"], src)
    assert "the MPICH build in build/mpich/bin" in p.stdout + p.stderr
    assert all(libmpi(tmp_path / "b" / "bin" / prog) == "mpich" for prog in PROGRAMS)
    assert libmpi(src / "halocompare") == "openmpi"

    # MPICH again: nothing of it is rebuilt, and the Open MPI build stays intact
    p = make(["-j2", "MPI=mpich"], src)
    assert " -c -o " not in p.stdout
    assert libmpi(src / "halocompare") == "mpich"
    assert digest(src / "build" / "openmpi" / "bin") == openmpi
    assert digest(src / "build" / "mpich" / "bin") == clone.mpich_bins
    # ... and make install now installs the MPICH build, and says so
    p = make(["install", f"PREFIX={tmp_path}/a", "REPORT=no"], src)
    assert "the MPICH build in build/mpich/bin" in p.stdout + p.stderr
    assert all(libmpi(tmp_path / "a" / "bin" / prog) == "mpich" for prog in PROGRAMS)

    # the default build again: nothing rebuilt either, the root binaries its copies again
    p = make(["-j2"], src)
    assert " -c -o " not in p.stdout
    assert libmpi(src / "halocompare") == "openmpi"
    assert digest(src / "build" / "openmpi" / "bin") == openmpi


# ------------------------------------------------------------------ make run's job (last: it adds .venv to the clone)
def test_make_run_job(clone: Clone) -> None:
    """What `make run` runs once it has built (scripts/run-main), the README's one-step job, with the root
    binaries of each library in turn: that library's launcher with one rank per core, halocompare with
    RUN_ARGS added, one launch (scripts/launches) whose CSV and JSON are under results/ as the README names them, the findings (the environment's
    default, not the tests' MPIMB_REPORT=none) and the report of that run, said once."""
    src = clone.path
    (src / ".venv").symlink_to(ROOT / ".venv")  # what `make run` builds before run-main
    env = {k: v for k, v in os.environ.items() if k not in ("MPIMB_REPORT", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env["RUN_ARGS"] = "--quick --comms world --methods irecv-isend"
    root = "--allow-run-as-root " if os.geteuid() == 0 else ""
    launch = {"openmpi": f"mpiexec -q {root}--bind-to core -n 2", "mpich": "mpiexec.mpich -bind-to core -n 2"}
    try:
        for lib in ("openmpi", "mpich"):  # the clone's root binaries are the default (Open MPI) build's
            if lib == "mpich":
                make(["-j2", "MPI=mpich"], src)
            with mpich_turn(lib, 2):
                p = subprocess.run(["scripts/run-main", "2"], cwd=src, capture_output=True, text=True, timeout=300,
                                   env=env, check=False)
            assert p.returncode == 0, p.stderr[-3000:]
            said = [line for line in p.stderr.splitlines() if line.startswith("launches: round ")]
            m = re.fullmatch(rf"launches: round 1/1, halocompare: {re.escape(launch[lib])} ./halocompare "
                             r"--quick --comms world --methods irecv-isend -o "
                             r"(results/halocompare-[A-Za-z0-9._-]+-np2-\d{8}T\d{6}Z/halocompare/launch-1\.csv)",
                             said[0] if said else "")
            assert m and len(said) == 1, p.stderr[-3000:]
            out = src / m.group(1)
            rows = list(csv.DictReader(out.open()))
            assert rows and {(r["method"], r["comm"], r["nprocs"]) for r in rows if r["test"] == "halo"} == {
                ("irecv-isend", "world", "2")}, rows[:2]
            meta = json.loads(out.with_suffix(".json").read_text())
            assert (meta["nprocs"], meta["mpi"]["built_with"]) == (2, lib)
            assert "\nFindings" in p.stdout
            assert (p.stdout + p.stderr).count("report: results/report.html") == 1
            assert meta["run_id"] in (src / "results" / "report.html").read_text()  # the report of this run
    finally:
        make(["-j2"], src)  # the root binaries back to the default build's
