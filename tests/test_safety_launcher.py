"""The wrong launcher (issue 26, part 2): a binary started by the other
library's mpiexec is a set of 1-process runs.  It stops with one line that
names both libraries, exit 2 on every process, in seconds, and no files.
And every result says which library its binary was built for."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import bindir, launcher, run_mpi

NAMES = {"mpich": "MPICH", "openmpi": "Open MPI"}
OTHER = {"mpich": "openmpi", "openmpi": "mpich"}
SIZE_VAR = {"openmpi": "OMPI_COMM_WORLD_SIZE", "mpich": "PMI_SIZE"}
QUIET = {"MPIMB_REPORT": "none"}


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(QUIET)
    full.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd, env=full, check=False)


@pytest.mark.parametrize("program", ["halocompare", "pingpong"])
def test_started_by_the_other_librarys_mpiexec(tmp_path: Path, lib: str, program: str) -> None:
    """lib's binary under the other library's mpiexec, 2 processes."""
    other = OTHER[lib]
    exe = bindir(lib) / program
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    p = run([*launcher(other, 2), str(exe), "--quick"], tmp_path)
    assert p.returncode == 2, p.stderr
    ours = [line for line in p.stderr.splitlines() if line.startswith(f"{program}: ")]
    assert ours == [(f"{program}: built for {NAMES[lib]} but started by {NAMES[other]}'s mpiexec "
                    f"({SIZE_VAR[other]}=2): use mpiexec.{lib}, or the {other} build (make MPI={other})")], p.stderr
    assert p.stdout == ""
    assert list(tmp_path.iterdir()) == []  # not even results/


def test_srun_without_a_pmi_the_library_speaks(tmp_path: Path) -> None:
    """srun's step of 2 tasks, as its variables say, around a 1-process MPICH world: refused; the task that is
    not srun's rank 0 says nothing."""
    exe = bindir("mpich") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    for procid, lines in (("0", 1), ("1", 0)):
        p = run([str(exe), "--quick"], tmp_path, env={"SLURM_STEP_NUM_TASKS": "2", "SLURM_PROCID": procid})
        assert p.returncode == 2
        ours = [line for line in p.stderr.splitlines() if line.startswith("halocompare: ")]
        assert len(ours) == lines, p.stderr
        assert all("built for MPICH but started by srun (SLURM_STEP_NUM_TASKS=2)" in s for s in ours)
        assert list(tmp_path.iterdir()) == []


def test_a_batch_script_alone_is_not_a_launcher(tmp_path: Path) -> None:
    """SLURM_NTASKS is set in the batch script too, where one process is what was asked for."""
    exe = bindir("mpich") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    p = run([str(exe), "--quick", "--methods", "irecv-isend", "--comms", "world", "--neighbors", "4",
             "--periodic", "no", "-o", "hc.csv"], tmp_path, env={"SLURM_NTASKS": "4", "SLURM_PROCID": "0"})
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "hc.json").read_text())["nprocs"] == 1


def test_results_and_version_say_the_library(tmp_path: Path, lib: str) -> None:
    r = run_mpi(lib, 2, "halocompare", "--quick", "--methods", "irecv-isend", "--comms", "world", "--neighbors", "4",
                "--periodic", "no", out=tmp_path / "hc.csv", env=QUIET)
    assert r.returncode == 0, r.stderr
    assert r.meta()["mpi"]["built_with"] == lib
    v = run([str(bindir(lib) / "halocompare"), "--version"], tmp_path)
    assert v.returncode == 0 and v.stdout.splitlines()[1] == f"built for {NAMES[lib]} ({lib})"
