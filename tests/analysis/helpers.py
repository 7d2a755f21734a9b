"""Shared helpers for the mpimb-report tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
ROOT = HERE.parents[1]
VENV_BIN = ROOT / ".venv" / "bin"


@dataclass
class Result:
    rc: int
    out: str
    err: str


def cli(*args: str, capsys: pytest.CaptureFixture[str]) -> Result:
    """Runs mpimb-report in this process (fast); any exception fails the test."""
    from mpimb.cli import main

    try:
        rc = main(list(args))
    except SystemExit as e:  # argparse usage errors
        rc = int(e.code or 0)
    cap = capsys.readouterr()
    return Result(rc, cap.out, cap.err)


def cli_proc(*args: str, timeout: float = 300) -> Result:
    """Runs the installed console script in a subprocess."""
    exe = VENV_BIN / "mpimb-report"
    cmd = [str(exe), *args] if exe.exists() else [sys.executable, "-m", "mpimb", *args]
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return Result(p.returncode, p.stdout, p.stderr)


def copy_fixture(tmp: Path, *names: str) -> Path:
    """Copies fixture sets (e.g. 'clusterA') under tmp; returns tmp."""
    for n in names:
        shutil.copytree(FIXTURES / n, tmp / n)
    return tmp


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    pytest.skip("chromium not installed (scripts/deps/test-report.apt)")
    return ""


def rendered(page: Path, tmp: Path) -> str:
    """The page's DOM after headless Chromium has loaded and run it."""
    exe = chromium()
    profile = tmp / f"chromium-profile-{os.getpid()}"
    dom = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                          "--dump-dom", page.resolve().as_uri()], check=False, capture_output=True, text=True,
                         timeout=240)
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def browser_check(page: Path, tmp: Path, height: int = 2400) -> tuple[int, int, float, float]:
    """Renders page in headless Chromium: (images loaded, images broken, screenshot pixel standard
    deviation on a 0..1 scale, fraction of pixels that are not near-white)."""
    exe = chromium()
    url = page.resolve().as_uri()
    profile = tmp / f"chromium-profile-{os.getpid()}"
    dom = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000",
                          "--dump-dom", url], check=False, capture_output=True, text=True, timeout=240)
    assert dom.returncode == 0, dom.stderr[-2000:]
    import re

    m_ok = re.search(r'data-images-loaded="(\d+)"', dom.stdout)
    m_bad = re.search(r'data-images-broken="(\d+)"', dom.stdout)
    assert m_ok and m_bad, "the page's load handler did not run"
    shot = tmp / f"{page.stem}-shot.png"
    s = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size=1300,{height}",
                        f"--screenshot={shot}", url], check=False, capture_output=True, text=True, timeout=240)
    assert s.returncode == 0 and shot.exists(), s.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    px = np.asarray(mpimg.imread(str(shot)), dtype=float)[..., :3]
    if px.max() > 1.0:
        px = px / 255.0
    inked = float((px.min(axis=2) < 0.9).mean())
    return int(m_ok.group(1)), int(m_bad.group(1)), float(px.std()), inked
