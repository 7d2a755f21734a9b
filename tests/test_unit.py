"""The C unit tests (tests/unit/*.c), built by `make unit` for each build variant."""

from __future__ import annotations

import subprocess

import pytest
from conftest import ROOT

VARIANTS = ("mpich", "openmpi", "mpich-asan")
UNITS = sorted(p.stem for p in (ROOT / "tests" / "unit").glob("test_*.c"))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("unit", UNITS)
def test_unit(variant: str, unit: str) -> None:
    exe = ROOT / "build" / variant / "tests" / unit
    if not exe.exists():
        pytest.skip(f"{exe} not built (make test-builds)")
    # PATH: an MPI singleton (the timing-loop units start MPI alone) finds the library's helpers through it
    env = {"HWLOC_COMPONENTS": "-pci", "ASAN_OPTIONS": "detect_leaks=1", "PATH": "/usr/bin:/bin"}
    p = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=env, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert " 0 failed" in p.stdout
