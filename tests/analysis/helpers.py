"""Shared helpers for the mpimb-report tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPORT, Result, cli, cli_proc  # noqa: F401  (the one mpimb-report caller is conftest's)

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
ROOT = HERE.parents[1]


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


def launch_set(src: Path, dst: Path, n: int, scale: float = 1.0, shift: float = 0.0, jitter: float = 0.0,
               seed: int = 0, series: str | None = None, label: str | None = None) -> Path:
    """n launches of the result set src in dst: launch i's times are src's × scale × a factor of its own
    (log-normal, sd shift: what a launch draws) × a factor per row (sd jitter), its rates divided alike, its
    run_id its own; series: the launches as scripts/launches records them ("launch": {series, index, of});
    label: a new label."""
    import csv
    import json

    import numpy as np

    rng = np.random.default_rng(seed)
    dst.mkdir(parents=True, exist_ok=True)
    for p in sorted(src.glob("*.csv")):
        with open(p, newline="") as f:
            rows = list(csv.DictReader(f))
        meta = json.loads(p.with_suffix(".json").read_text())
        for i in range(1, n + 1):
            run = f"{label or meta['label']}-L{i}-{seed}-{p.stem}"
            f_launch = float(np.exp(rng.normal(0, shift))) * scale
            out = []
            for r in rows:
                r = dict(r)
                f_row = f_launch * float(np.exp(rng.normal(0, jitter)))
                for c in r:
                    if c.startswith(("time_", "rank_")) and r[c]:
                        r[c] = f"{float(r[c]) * f_row:.9g}"
                if r["mbps"]:
                    r["mbps"] = f"{float(r['mbps']) / f_row:.9g}"
                r["run_id"] = run
                if label:
                    r["label"] = label
                out.append(r)
            name = dst / f"{p.stem}-launch-{i}.csv"
            with open(name, "w", newline="") as f:
                w = csv.DictWriter(f, list(out[0]), lineterminator="\n")
                w.writeheader()
                w.writerows(out)
            m = dict(meta, run_id=run, csv=name.name, label=label or meta["label"],
                     start_utc=f"2026-11-20T12:{i:02d}:00Z")
            if series:
                m["launch"] = {"series": series, "index": i, "of": n}
            m.pop("rounds", None)
            name.with_suffix(".json").write_text(json.dumps(m))
    return dst
