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


def shell_scripts() -> list[Path]:
    found = []
    for d in DIRS:
        for p in sorted((ROOT / d).rglob("*")):
            if p.is_file() and p.read_bytes()[:64].split(b"\n")[0] in (b"#!/usr/bin/env bash", b"#!/bin/bash", b"#!/bin/sh"):
                found.append(p)
    return found


@pytest.mark.parametrize("script", shell_scripts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shellcheck(script: Path) -> None:
    if not shutil.which("shellcheck"):
        pytest.skip("shellcheck not installed")
    p = subprocess.run(["shellcheck", "-x", str(script)], capture_output=True, text=True, timeout=120, check=False)
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
