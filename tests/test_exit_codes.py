"""One exit-code convention for every tool: 0 done, 1 a run that failed
(verification, timeout, I/O), 2 a usage error.  The C programs' own cases
are in test_bad_input.py (2), test_faults.py (a full disk: 1) and each
program's verification tests (1); this file has one failing run and one
usage error per tool around them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPORT, ROOT, bindir, have, sh

FIXTURES = ROOT / "tests" / "analysis" / "fixtures"


def one_line(p: subprocess.CompletedProcess[str], prefix: str) -> str:
    lines = [line for line in p.stderr.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, p.stderr
    return lines[0]


# ------------------------------------------------------------------ mpimb-report
def test_mpimb_report(tmp_path: Path) -> None:
    if not REPORT.exists():
        pytest.skip("make venv first")
    ok = sh([REPORT, "validate", FIXTURES], tmp_path)
    assert ok.returncode == 0, ok.stderr
    missing = sh([REPORT, "table", tmp_path / "nothing-here"], tmp_path)
    assert missing.returncode == 1 and "no such file or directory" in one_line(missing, "mpimb-report: ")
    bad = sh([REPORT, "table", FIXTURES, "--stat", "mode"], tmp_path)
    assert bad.returncode == 2 and one_line(bad, "mpimb-report: ")


# ------------------------------------------------------------------ slurm/sweep, slurm/collect
def test_sweep_sbatch_failure_is_1(tmp_path: Path) -> None:
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "sbatch").write_text("#!/bin/sh\necho 'sbatch: error: Batch job submission failed' >&2\nexit 1\n")
    (fake / "sbatch").chmod(0o755)
    env = {"PATH": f"{fake}:{os.environ['PATH']}"}
    p = sh([ROOT / "slurm" / "sweep", "--results", tmp_path / "r", "--bindir", bindir("openmpi"), "--label", "x"],
            tmp_path, add_env=env)
    assert p.returncode == 1
    assert "sbatch failed for halocompare-N1-ppn1" in one_line(p, "sweep: ")
    usage = sh([ROOT / "slurm" / "sweep", "--nodes", "x"], tmp_path, add_env=env)
    assert usage.returncode == 2


def test_collect_strict_incomplete_is_1(tmp_path: Path) -> None:
    sweep = tmp_path / "results" / "lab"
    job = sweep / "17"
    job.mkdir(parents=True)
    (sweep / "sweep.tsv").write_text("submitted_utc\tjob_id\tconfig\tscript\n"
                                     "2026-01-01T00:00:00Z\t17\thalocompare-N1-ppn1\tsbatch/x.sh\n")
    (job / "job.json").write_text('{\n  "config": "halocompare-N1-ppn1",\n  "exit_code": 1,\n  "status": "failed"\n}\n')
    p = sh([ROOT / "slurm" / "collect", "--results", tmp_path / "results", "--no-report", "--strict", "lab"],
            tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "halocompare-N1-ppn1" in p.stdout and "failed" in p.stdout
    lenient = sh([ROOT / "slurm" / "collect", "--results", tmp_path / "results", "--no-report", "lab"], tmp_path)
    assert lenient.returncode == 0
    usage = sh([ROOT / "slurm" / "collect", "--strict"], tmp_path)
    assert usage.returncode == 2


# ------------------------------------------------------------------ scripts/
def test_simulate_failed_run_is_1(tmp_path: Path) -> None:
    exe = ROOT / "build" / "smpi" / "bin" / "pingpong"
    if not shutil.which("smpirun") or not exe.exists():
        pytest.skip("SimGrid or build/smpi not available")
    args = ["pingpong", "-n", "2", "--platform", "two-node", "--no-build", "--", "--quick", "--verify", "--tests",
            "latency", "-m", "8:8", "-o", str(tmp_path / "pp.csv")]
    p = sh([ROOT / "scripts" / "simulate", *args], tmp_path, add_env={"MPIMB_FAULT": "latency"})
    assert p.returncode == 1, p.stderr
    assert "failed verification" in p.stderr
    usage = sh([ROOT / "scripts" / "simulate", *args[:-2], "--count", "-1"], tmp_path)
    assert usage.returncode == 2, usage.stderr


def test_thread_overhead_failed_launch_is_1(tmp_path: Path) -> None:
    if not have("openmpi", "threads") or not shutil.which("mpiexec.openmpi"):
        pytest.skip("build/openmpi/bin/threads not built")
    p = sh([ROOT / "scripts" / "thread-overhead", "--lib", "openmpi", "--rounds", "1", "--quick", "-o",
            tmp_path / "o", "--", "-m", "8:8", "--verify"], tmp_path, add_env={"MPIMB_FAULT": "overhead-latency"},
           timeout=600)
    assert p.returncode == 1, p.stderr
    # the series (scripts/launches) stops at the first launch of round 1, whichever level the order put first
    first = r"^launches: launch 1 of (single|funneled|serialized|multiple) failed \(exit 1\)"
    assert re.search(first, p.stderr, re.MULTILINE), p.stderr
    assert "thread-overhead: openmpi: a launch failed (exit 1;" in p.stderr


def test_install_tree(tmp_path: Path) -> None:
    tool = ROOT / "scripts" / "install-tree"
    usage = sh([tool, "install", "--prefix", "relative/p", "--programs", "x"], tmp_path)
    assert usage.returncode == 2 and "PREFIX must be an absolute path" in one_line(usage, "install-tree: ")
    none = sh([tool, "uninstall", "--prefix", str(tmp_path / "p")], tmp_path)
    assert none.returncode == 2 and "no mpimb installed here" in none.stderr
    prog = tmp_path / "halocompare"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    failed = sh([tool, "install", "--destdir", "/proc/mpimb-stage", "--prefix", "/opt/x", "--programs", str(prog),
                  "--report", "no"], tmp_path)
    assert failed.returncode == 1 and "cannot create" in one_line(failed, "install-tree: ")
