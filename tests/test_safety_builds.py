"""Each build knows its MPI (issue 26, part 1): every library's build lives
in build/<library>/ whatever is built after it; make says whose the root
binaries are; make install installs the build of the library it is given
(MPI=...), by default the root binaries' one, and says which; the programs
say in --version which library they were built for.  Runs in a clean clone
of HEAD (two builds), like tests/test_install.py."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

PROGRAMS = ("collectives", "halocompare", "pingpong", "rma", "threads")


def sh(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    assert p.returncode == 0, f"{cmd}: {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def libmpi(binary: Path) -> str:
    """The MPI library a binary is linked with, as ldd shows it."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout
    libs = {w for line in out.splitlines() for w in line.split() if w.startswith(("libmpich.so", "libmpi.so"))}
    assert len(libs) == 1, out
    return "mpich" if libs.pop().startswith("libmpich") else "openmpi"


def digest(d: Path) -> dict[str, str]:
    return {p: hashlib.sha256((d / p).read_bytes()).hexdigest() for p in PROGRAMS}


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("mpicc", "mpicc.mpich", "ldd"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed")
    head = sh(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()
    d = tmp_path_factory.mktemp("builds") / "mpimb"
    sh(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(d)], ROOT)
    sh(["git", "checkout", "--quiet", head], d)
    return d


def note(p: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in p.stdout.splitlines() if line.startswith("make: ./")]


def test_two_libraries_two_builds_and_install_says_which(clone: Path, tmp_path: Path) -> None:
    src = clone
    # MPICH first: the root binaries are its build, and make says so in one line
    p = sh(["make", "-j2", "MPI=mpich"], src)
    assert note(p) == [("make: ./collectives ./halocompare ./pingpong ./rma ./threads are now the MPICH build "
                       "(build/mpich/bin)")], p.stdout[-2000:]
    assert libmpi(src / "halocompare") == "mpich"
    mpich = digest(src / "build" / "mpich" / "bin")
    v = sh([str(src / "build" / "mpich" / "bin" / "pingpong"), "--version"], tmp_path).stdout.splitlines()
    assert v[1] == "built for MPICH (mpich)"

    # make install now installs the MPICH build, and says so
    p = sh(["make", "install", f"PREFIX={tmp_path}/a", "REPORT=no"], src)
    assert "the MPICH build in build/mpich/bin" in p.stdout + p.stderr
    assert all(libmpi(tmp_path / "a" / "bin" / prog) == "mpich" for prog in PROGRAMS)

    # the default build (Open MPI here) beside it: the MPICH build stays intact
    p = sh(["make", "-j2"], src)
    assert note(p) == [("make: ./collectives ./halocompare ./pingpong ./rma ./threads are now the Open MPI build "
                       "(build/openmpi/bin)")]
    assert libmpi(src / "halocompare") == "openmpi"
    assert digest(src / "build" / "mpich" / "bin") == mpich
    assert all(libmpi(src / "build" / "mpich" / "bin" / prog) == "mpich" for prog in PROGRAMS)
    openmpi = digest(src / "build" / "openmpi" / "bin")

    # make install MPI=mpich after a default make: MPICH's build, the root binaries untouched
    p = sh(["make", "install", "MPI=mpich", f"PREFIX={tmp_path}/b", "REPORT=no"], src)
    assert "the MPICH build in build/mpich/bin" in p.stdout + p.stderr
    assert all(libmpi(tmp_path / "b" / "bin" / prog) == "mpich" for prog in PROGRAMS)
    assert libmpi(src / "halocompare") == "openmpi"
    # ... and plain make install: the root binaries' library
    p = sh(["make", "install", f"PREFIX={tmp_path}/c", "REPORT=no"], src)
    assert "the Open MPI build in build/openmpi/bin" in p.stdout + p.stderr
    assert all(libmpi(tmp_path / "c" / "bin" / prog) == "openmpi" for prog in PROGRAMS)

    # MPICH again: nothing of it is rebuilt, and the Open MPI build stays intact
    p = sh(["make", "-j2", "MPI=mpich"], src)
    assert " -c -o " not in p.stdout
    assert libmpi(src / "halocompare") == "mpich"
    assert digest(src / "build" / "openmpi" / "bin") == openmpi
    assert digest(src / "build" / "mpich" / "bin") == mpich
