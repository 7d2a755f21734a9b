"""Every shell script of the project passes shellcheck, and install-deps on a
machine that has everything installs nothing and says what it uses."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

DIRS = ("scripts", "slurm", "bench", ".ci")
SHEBANGS = (b"#!/usr/bin/env bash", b"#!/bin/bash", b"#!/bin/sh")


def shell_scripts() -> list[Path]:
    """Every shell script: a shell's #! line, or a sourced library's `# shellcheck shell=` line."""
    found = []
    for d in DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if not p.is_file():
                continue
            head = p.read_bytes()[:512].split(b"\n")
            if head[0] in SHEBANGS or any(line.startswith(b"# shellcheck shell=") for line in head[:5]):
                found.append(p)
    return found


def test_shellcheck() -> None:
    """The one shellcheck test, over every script of the project (the job scripts slurm/sweep writes are
    checked in tests/test_slurm.py, from its --dry-run)."""
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck not installed")
    scripts = shell_scripts()
    assert {ROOT / "scripts" / "launches", ROOT / "slurm" / "lib" / "common.sh", ROOT / "scripts" / "simulate"} <= \
        set(scripts)
    p = subprocess.run(["shellcheck", "-x", *map(str, scripts)], capture_output=True, text=True, timeout=300,
                       check=False)
    assert p.returncode == 0, p.stdout


def test_install_deps_is_idempotent() -> None:
    """make test installed everything already, so this run must install nothing."""
    p = subprocess.run([str(ROOT / "scripts" / "install-deps")], capture_output=True, text=True, timeout=300,
                       check=False)
    assert p.returncode == 0, p.stderr
    assert "installing" not in p.stdout and "install-deps: using mpicc=" in p.stdout


def test_no_grep_q_in_a_pipe_under_pipefail() -> None:
    """`cmd | grep -q x` under `set -o pipefail`: grep -q stops at the first match, cmd can then die of
    SIGPIPE and the pipeline is false although x was found (scripts/run-main once launched MPICH's
    binary with Open MPI's mpiexec that way).  grep ... >/dev/null reads all of its input."""
    found = [f"{s.relative_to(ROOT)}:{i}" for s in shell_scripts() if "pipefail" in s.read_text()
             for i, line in enumerate(s.read_text().splitlines(), 1) if re.search(r"\|\s*grep\s+-\w*q", line)]
    assert not found, found


def make_run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`make run` with its variables, up to scripts/run-main: deps taken as made (-o deps) and the
    recursive make of the builds a no-op (MAKE=true), so the programs are neither built nor run here
    unless run-main accepts the input."""
    return subprocess.run(["make", "--no-print-directory", "-o", "deps", "MAKE=true", "run",
                           *[f"{k}={v}" for k, v in env.items()]], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("var, value, words", [
    ("RUN_ARGS", "x'; touch {mark}; '", "RUN_ARGS may not hold quotes or backslashes"),
    ("RUN_ARGS", '--label "a b"', "RUN_ARGS may not hold quotes or backslashes"),
    ("RUN_ARGS", "$(touch {mark})", "RUN_NP must be"),
    ("RUN_NP", "abc", "RUN_NP must be a number of processes from 1 to 999999, got 'abc'"),
    ("RUN_NP", "0", "RUN_NP must be a number of processes from 1 to 999999, got '0'"),
    ("RUN_NP", "2 3", "RUN_NP must be a number of processes from 1 to 999999, got '2 3'"),
    ("RUN_NP", "99999999999999999999", "RUN_NP must be"),
    ("RUN_LAUNCHES", "0", "RUN_LAUNCHES must be a number of launches from 1 to 10000, got '0'"),
    ("RUN_LAUNCHES", "x", "RUN_LAUNCHES must be")])
def test_make_run_input(var: str, value: str, words: str, tmp_path: Path) -> None:
    """make run's variables reach scripts/run-main as values, never as shell text (issue 44 item 13: a
    quote broke the recipe, and RUN_ARGS="x'; cmd; '" ran cmd): one line `make run: ...`, exit 2, nothing
    run or written."""
    mark = tmp_path / "ran"
    env = {var: value.format(mark=mark)}
    if words.startswith("RUN_NP") and var != "RUN_NP":
        env["RUN_NP"] = "x"  # $(...) in RUN_ARGS stays text: the refusal is RUN_NP's, after it was read
    results = sorted((ROOT / "results").glob("*")) if (ROOT / "results").exists() else []
    p = make_run(tmp_path, **env)
    said = [line for line in p.stderr.splitlines() if line.startswith("make run: ")]
    assert p.returncode == 2 and len(said) == 1 and words in said[0], p.stderr
    assert not mark.exists()
    assert (sorted((ROOT / "results").glob("*")) if (ROOT / "results").exists() else []) == results
