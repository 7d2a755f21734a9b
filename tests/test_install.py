"""make install / uninstall / dist as a user and a packager meet them, and the
build variables by convention: from a clean clone, `make install PREFIX=...`
gives programs, mpimb-report and Slurm scripts that work outside the
checkout; DESTDIR stages under DESTDIR only; uninstall leaves the prefix as
it was; a `make dist` tarball builds and installs without git and its
results carry the version and commit; CFLAGS and friends add to the flags
the build needs and never remove them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, launcher

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


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A clean clone of this checkout's HEAD, built with the default mpicc."""
    if not shutil.which("mpicc") or not shutil.which("mpiexec.openmpi"):
        pytest.skip("mpicc / mpiexec.openmpi not installed")
    head = sh(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()
    d = tmp_path_factory.mktemp("clone") / "mpimb"
    sh(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(d)], ROOT)
    sh(["git", "checkout", "--quiet", head], d)
    sh(["make", "-j2"], d)
    return d, head[:12]


# ------------------------------------------------------------------ install, use, uninstall
@pytest.fixture(scope="module")
def installed(clone: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """make install PREFIX=p into a prefix that already holds something."""
    src, _ = clone
    prefix = tmp_path_factory.mktemp("prefix") / "p"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "theirs").write_text("not mpimb's\n")
    (prefix / "share").mkdir()
    before = tree(prefix)
    sh(["make", "install", f"PREFIX={prefix}"], src, timeout=1200)
    return prefix, before


def test_install_layout(installed: tuple[Path, list[str]]) -> None:
    prefix, _ = installed
    for p in (*PROGRAMS, "mpimb-report"):
        assert os.access(prefix / "bin" / p, os.X_OK), p
    share = prefix / "share" / "mpimb"
    for f in ("slurm/sweep", "slurm/collect", "slurm/lib/job-record", "platforms/two-node.xml",
              "schema/results.schema.json", "schema/meta.schema.json", "reframe/mpimb_checks.py",
              "reference/gropp-lusk/halocompare-Cray-XT4-np1024.csv", "reference/sources/gropp-lusk-halo-tables.csv", "VERSION", "install-manifest"):
        assert (share / f).is_file(), f
    assert (prefix / "share" / "doc" / "mpimb" / "architecture.md").is_file()
    assert (prefix / "lib" / "mpimb" / "venv" / "bin" / "python").exists()
    assert (prefix / "bin" / "theirs").read_text() == "not mpimb's\n"


def test_installed_programs_run_outside_the_checkout(installed: tuple[Path, list[str]], clone: tuple[Path, str],
                                                     tmp_path: Path) -> None:
    prefix, _ = installed
    _, commit = clone
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


def test_installed_sweep_finds_the_installed_programs(installed: tuple[Path, list[str]], tmp_path: Path) -> None:
    prefix, _ = installed
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


def test_uninstall_leaves_the_prefix_as_it_was(installed: tuple[Path, list[str]], clone: tuple[Path, str]) -> None:
    prefix, before = installed
    src, _ = clone
    sh(["make", "uninstall", f"PREFIX={prefix}"], src)
    assert tree(prefix) == before
    again = sh(["make", "uninstall", f"PREFIX={prefix}"], src, check=False)
    assert again.returncode != 0 and "no mpimb installed here" in again.stderr


def test_destdir_stages_under_destdir_only(clone: tuple[Path, str], tmp_path: Path) -> None:
    """mpimb-report's environment staged too, with mpimb alone in it (PIP_ARGS=--no-deps): its scripts
    and byte-code are relocated the same way whatever is installed (the full environment, pandas and
    all, is test_install_layout's), at a fraction of the time."""
    src, _ = clone
    final = Path("/opt/mpimb")
    existed = final.exists()
    stage = tmp_path / "stage"
    sh(["make", "install", f"DESTDIR={stage}", f"PREFIX={final}", "PIP_ARGS=--no-deps"], src, timeout=1200)
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
    sh(["make", "uninstall", f"DESTDIR={stage}", f"PREFIX={final}"], src)
    assert list(stage.iterdir()) == []


# ------------------------------------------------------------------ make dist
def test_dist_tarball_builds_and_installs_without_git(clone: tuple[Path, str], tmp_path: Path) -> None:
    src, commit = clone
    p = sh(["make", "dist"], src)
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
    sh(["make", "-j2", "install", f"PREFIX={prefix}", "REPORT=no", "PROGRAMS=pingpong"], tree_dir, timeout=1200)
    assert not (prefix / "bin" / "mpimb-report").exists()
    v = sh([str(prefix / "bin" / "pingpong"), "--version"], tmp_path)
    assert v.stdout.splitlines()[0] == f"pingpong (mpimb) {VERSION}"
    assert v.stdout.splitlines()[1] == "built for Open MPI (openmpi)"  # the build make install chose
    sh([*launcher("openmpi", 2), str(prefix / "bin" / "pingpong"), "--quick", "--tests", "latency", "-m", "8:8",
        "-o", "pp.csv"], tmp_path, timeout=300)
    meta = json.loads((tmp_path / "pp.json").read_text())
    assert meta["suite_version"] == VERSION and meta["git_commit"] == commit  # not unknown-dirty
    sh(["make", "uninstall", f"PREFIX={prefix}"], tree_dir)
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


def test_build_info_survives_quotes_in_cflags(tmp_path: Path) -> None:
    """The flags recorded in the metadata are the ones used, quotes and all."""
    if not shutil.which("mpicc.openmpi"):
        pytest.skip("mpicc.openmpi not installed")
    flags = "-O1 -DMB_TEST_NAME='\"it''s \\\"q\\\"\"'"
    b = tmp_path / "b"
    sh(["make", "-j2", "MPI=openmpi", f"BUILD={b}", f"BINDIR={b}/bin", f"CFLAGS={flags}", f"{b}/bin/halocompare"],
       ROOT)
    sh([str(b / "bin" / "halocompare"), "--quick", "--methods", "irecv-isend", "--comms", "world", "--neighbors", "4",
        "--periodic", "no", "-o", "hc.csv"], tmp_path, timeout=120)
    recorded = json.loads((tmp_path / "hc.json").read_text())["compiler"]["flags"]
    assert recorded.endswith(" -O1 -DMB_TEST_NAME='\"it''s \\\"q\\\"\"'"), recorded


def test_analysis_package_installs_on_its_own(clone: tuple[Path, str], tmp_path: Path) -> None:
    """pip install ./analysis: a wheel with the suite's version and the schema."""
    src, _ = clone
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
