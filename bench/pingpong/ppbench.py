"""What the pingpong bench scripts share: running a command, the launcher, the
load average, building the repository's pingpong, reading a run's CSV."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "pingpong"


def sh(cmd: list[str], who: str, timeout: float = 600) -> str:
    """Runs cmd from the repository root; its stdout, or exit with its error."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False)
    if p.returncode != 0:
        sys.exit(f"{who}: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    return p.stdout


def launcher(mpi: str, bind: bool = False) -> list[str]:
    """mpiexec for 2 ranks; bind: one core each (unbound is MPICH's default)."""
    if mpi == "openmpi":
        extra = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        return ["mpiexec.openmpi", "-q", *extra, *(["--bind-to", "core"] if bind else []), "-n", "2"]
    return ["mpiexec.mpich", *(["-bind-to", "core"] if bind else []), "-n", "2"]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def build_pingpong(mpi: str, who: str, exe: Path | None) -> Path:
    """The given binary, or the repository's, built into build/<mpi>/bin."""
    if exe:
        return exe.resolve()
    bindir = f"build/{mpi}/bin"
    sh(["make", "--no-print-directory", "WERROR=1", f"MPI={mpi}", f"BINDIR={bindir}", f"{bindir}/pingpong"], who)
    return ROOT / bindir / "pingpong"


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
