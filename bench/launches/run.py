#!/usr/bin/env python3
"""Launches: a machine against itself (bench/README.md, "Launches: a machine against itself").

    bench/launches/run.py self   --lib mpich|openmpi -L N -o DIR -- PROGRAM [OPTIONS...]
    bench/launches/run.py power  --lib mpich|openmpi -L N -o DIR --fault delay:0.05/TEST -- PROGRAM [OPTIONS...]
    bench/launches/run.py within DIR/A   (halocompare launches: identical communicator pairs)

self: scripts/launches runs N launches of two configurations A and B of the same command, alternated; the
one judge (mpimb-report compare DIR/A DIR/B) must call nothing, and the same with launch 1 of each alone
must judge nothing.  power: B with the delay fault (each timed repetition FRACTION longer, fault.c): the
share of the affected rows called.  within: on 2 ranks every communicator is one map, so every pair of
communicators of one method, stencil and size is identical: the share called inside each launch (the
findings' rule: one-sided and persistent methods are not judged inside one launch, reported apart), the
pairs called in two launches in opposite directions, and the share called across the launches.
Every figure is printed with the command that made it; nothing here is a test."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis"))

from mpimb import judge
from mpimb.keys import prepared
from mpimb.load import load
from mpimb.programs.halocompare import PERSISTENT, families
from mpimb.schema import ONE_SIDED

REPORT = ROOT / ".venv" / "bin" / "mpimb-report"


def launcher(lib: str, n: int) -> list[str]:
    if lib == "mpich":
        return ["mpiexec.mpich", "-bind-to", "core", "-n", str(n)]
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return ["mpiexec.openmpi", "-q", *root, "--bind-to", "core", "-n", str(n)]


def binary(lib: str, program: str) -> str:
    return str(ROOT / "build" / lib / "bin" / program)


def compare(a: Path, b: Path, out: Path) -> tuple[pd.DataFrame, str]:
    """(the ratios CSV, the summary) of mpimb-report compare a b."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(REPORT), "compare", str(a), str(b), "-o", str(out / "c.html"), "--csv", str(out / "r.csv")],
                   check=True, capture_output=True, text=True)
    md = (out / "c.md").read_text()
    return pd.read_csv(out / "r.csv", keep_default_na=False), md.split("## Summary", 1)[1].split("##", 1)[0].strip()


def busy(d: Path) -> str:
    shares = [json.loads(j.read_text()).get("load", {}).get("others_share") for j in sorted(d.rglob("launch-*.json"))]
    flags = [json.loads(j.read_text()).get("busy") for j in sorted(d.rglob("launch-*.json"))]
    known = [s for s in shares if isinstance(s, (int, float))]
    return (f"{sum(f is True for f in flags)} of {len(flags)} launches marked busy, others' share "
            f"{min(known):.0%}-{max(known):.0%}" if known else "no load recorded")


def series(a: argparse.Namespace, b_env: list[str]) -> float:
    cmd = launcher(a.lib, a.np) + [binary(a.lib, a.program[0]), *a.program[1:]]
    t0 = time.monotonic()
    subprocess.run([str(ROOT / "scripts" / "launches"), "--launches", str(a.launches), "-o", str(a.out), "--quiet",
                    "--", "A:", *cmd, "::", "B:", *b_env, *cmd], check=True, env={**os.environ, "MPIMB_REPORT": "none"})
    return time.monotonic() - t0


def one_launch_each(d: Path, tmp: Path) -> tuple[Path, Path]:
    for s in ("A", "B"):
        (tmp / s).mkdir(parents=True)
        for f in (d / s).glob("launch-1.*"):
            shutil.copy(f, tmp / s)
    return tmp / "A", tmp / "B"


def cmd_self(a: argparse.Namespace, fault: str = "") -> None:
    wall = series(a, ["env", f"MPIMB_FAULT={fault}"] if fault else [])
    w, summ = compare(a.out / "A", a.out / "B", a.out / "compare")
    shown = w[w["ratio@B"] != ""]
    called = shown[shown["sig@B"].astype(str) == "True"]
    print(f"{a.lib} {' '.join(a.program)}: {a.launches} launches a side, {wall:.0f} s for the series ({busy(a.out)})")
    print(f"  rows with a ratio: {len(shown)}; called: {len(called)} ({len(called) / max(len(shown), 1):.1%})"
          + (f", of which slower: {int((called['ratio@B'].astype(float) > 1).sum())}" if len(called) else ""))
    print("  summary: " + summ.splitlines()[0].lstrip("- "))
    with tempfile.TemporaryDirectory() as t:
        w1, summ1 = compare(*one_launch_each(a.out, Path(t)), Path(t) / "compare")
        n1 = int((w1["sig@B"].astype(str) == "True").sum())
        print(f"  one launch of each: {n1} rows called; summary: " + summ1.splitlines()[0].lstrip("- "))


def pairs(df: pd.DataFrame) -> pd.DataFrame:
    """Every pair of communicators of one method, stencil, periodicity and size: (key, a, b, verdict, ratio)."""
    h = df[(df["program"] == "halocompare") & (df["test"] == "halo") & ~df["na"] & ~df["failed"]]
    found = []
    for key, g in h.groupby(["method", "neighbors", "periodic", "bytes", "params"], dropna=False):
        found += [(key, g.iloc[x], g.iloc[y]) for x, y in itertools.combinations(range(len(g)), 2)]
    js = judge.judgements([(a, b) for _, a, b in found])  # the pairs judged together, as a report would
    return pd.DataFrame([{"method": k[0], "key": k, "a": a["comm"], "b": b["comm"], "verdict": j.verdict,
                          "faster": (a["comm"] if j.factor < 1 else b["comm"]) if j.verdict == "called" else ""}
                         for (k, a, b), j in zip(found, js)])


def cmd_within(d: Path) -> None:
    files = sorted(f for f in d.glob("launch-*.csv") if not f.stem.endswith("-rounds"))
    per = []
    for f in files:
        runs, _, _ = load([str(f)])
        p = pairs(prepared(runs)[0])
        own = families(p["method"]).eq(ONE_SIDED) | p["method"].isin(PERSISTENT)
        n_all, n_own = len(p[~own]), len(p[own])
        c_all = int((p.loc[~own, "verdict"] == "called").sum())
        c_own = int((p.loc[own, "verdict"] == "called").sum())
        print(f"  {f.name}: {c_all} of {n_all} identical pairs called ({c_all / max(n_all, 1):.1%}); one-sided and "
              f"persistent (not judged by the findings inside one launch): {c_own} of {n_own} would be by the raw "
              f"per-launch interval")
        per.append(p.set_index(["key", "a", "b"]))
    if len(per) >= 2:
        both = per[0].join(per[1].add_suffix("_2"))
        flips = both[(both["verdict"] == "called") & (both["verdict_2"] == "called") &
                     (both["faster"] != both["faster_2"])]
        own = families(both["method"]).eq(ONE_SIDED) | both["method"].isin(PERSISTENT)
        print(f"  called in launches 1 and 2 in opposite directions: {int((~own[flips.index]).sum())} "
              f"(one-sided and persistent, raw: {int(own[flips.index].sum())})")
    runs, _, _ = load([str(d)])
    p = pairs(prepared(runs)[0])
    c = int((p["verdict"] == "called").sum())
    print(f"  across the {len(files)} launches (every method, one-sided included): {c} of {len(p)} identical pairs "
          f"called ({c / max(len(p), 1):.1%})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["self", "power", "within"])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--lib", default="openmpi", choices=["mpich", "openmpi"])
    ap.add_argument("-n", dest="np", type=int, default=2)
    ap.add_argument("-L", dest="launches", type=int, default=5)
    ap.add_argument("-o", dest="out", type=Path)
    ap.add_argument("--fault", default="delay:0.05/halo")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    a.program = argv[cut + 1:]
    if a.what == "within":
        cmd_within(Path(a.dir))
    else:
        cmd_self(a, a.fault if a.what == "power" else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
