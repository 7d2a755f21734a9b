#!/usr/bin/env python3
"""Before / after: `mpimb-report compare` of two checkouts' analysis packages, run alternately (so both see
the same load on a shared machine), on bench_compare.py's data.

    .venv/bin/python bench/report/ab_compare.py OLD_ANALYSIS_DIR [--pairs 4] [--dir DIR]

OLD_ANALYSIS_DIR: the `analysis/` directory of the other checkout (e.g. `git worktree add /tmp/old 42557cf`,
then /tmp/old/analysis); "after" is this checkout's.  DIR must hold bench_compare.py's A and B (run it
first).  Prints each run (wall, CPU of the command and its children, load average before it), then best and
median per side and the after / before ratio of each pair."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path, help="the other checkout's analysis/ directory")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/bcd"))
    a = ap.parse_args()
    if not (a.dir / "A").is_dir() or not (a.before / "mpimb").is_dir():
        print(f"need {a.dir}/A (bench_compare.py --dir {a.dir}) and {a.before}/mpimb", file=sys.stderr)
        return 2
    trees = {"before": a.before, "after": ROOT / "analysis"}
    got: dict[str, list[tuple[float, float, float]]] = {k: [] for k in trees}
    for _ in range(a.pairs):
        for name, tree in trees.items():
            load = os.getloadavg()[0]
            r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            subprocess.run([sys.executable, "-m", "mpimb", "compare", str(a.dir / "A"), str(a.dir / "B"), "-o",
                            str(a.dir / "ab" / "report.html")], env={**os.environ, "PYTHONPATH": str(tree)},
                           check=True, capture_output=True)
            wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            got[name].append((wall, cpu, load))
            print(f"{time.strftime('%H:%M:%S', time.gmtime())} {name:6s} wall {wall:6.2f} s  CPU {cpu:6.2f} s  "
                  f"load average before {load:.2f}", flush=True)
    for name, runs in got.items():
        w, c = [r[0] for r in runs], [r[1] for r in runs]
        print(f"{name:6s} wall best {min(w):.2f} median {statistics.median(w):.2f} s; CPU best {min(c):.2f} "
              f"median {statistics.median(c):.2f} s")
    print("after / before, pair by pair (wall):",
          " ".join(f"{y[0] / x[0]:.2f}" for x, y in zip(got["before"], got["after"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
