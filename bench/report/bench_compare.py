#!/usr/bin/env python3
"""Benchmark: `mpimb-report compare` on 1 million result rows.

Writes two synthetic result sets (default 500,000 rows each, schema-2 CSV +
JSON valid against analysis/mpimb/schema, one configuration per row: 10
collectives x 5 methods x 4 communicators x 25 sizes x 20 process counts x 5
thread counts, with params on the rooted collectives), then times the full
compare (load + validate + keys + ratios + the machines x orderings table +
HTML + Markdown) as a user runs it.

    .venv/bin/python bench/report/bench_compare.py [--rows-per-set N] [--dir DIR] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
TARGET_S = 3.0  # issue 26: the best run, wall clock
SCHEMA = ROOT / "analysis" / "mpimb" / "schema" / "results.schema.json"
COLUMNS = [c["title"] for c in json.loads(SCHEMA.read_text())["prefixItems"]]
TESTS = ["bcast", "reduce", "allreduce", "gather", "scatter", "allgather", "alltoall", "reduce_scatter_block",
         "scan", "barrier"]
METHODS = ["library", "binomial", "chain", "scatter-allgather", "tree-pipelined"]
COMMS = ["world", "dup", "split", "node"]


def make_set(d: Path, label: str, rows: int, speed: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    d.mkdir(parents=True, exist_ok=True)
    i = np.arange(rows)
    shape = (len(TESTS), len(METHODS), len(COMMS), 25, 20, 5)
    idx = np.unravel_index(i % int(np.prod(shape)), shape)
    nbytes = 2 ** idx[3]
    nprocs = 2 ** (idx[4] + 1)
    threads = idx[5] + 1
    t = speed * (1e-6 * np.log2(nprocs) + nbytes / 1e10) * (1 + 0.1 * idx[1]) * rng.normal(1, 0.02, rows)
    spread = np.abs(rng.normal(0.03, 0.01, rows)) * t
    run_id = f"{label}-20261121T000000Z-beef"
    rooted = np.isin(np.array(TESTS)[idx[0]], ["bcast", "reduce", "gather", "scatter"])
    df = pd.DataFrame({
        "run_id": run_id, "program": "collectives", "test": np.array(TESTS)[idx[0]],
        "method": np.array(METHODS)[idx[1]], "comm": np.array(COMMS)[idx[2]], "neighbors": "", "periodic": "",
        "bytes": nbytes, "nprocs": nprocs, "nnodes": 1, "ppn": 1, "threads": threads, "thread_level": "single",
        "params": np.where(rooted, "root=0;timing=osu", "timing=osu"),
        "iters": 100, "reps": 20, "stop_reason": "ci", "time_min_s": t - spread, "time_median_s": t,
        "time_mean_s": t + spread / 4, "time_max_s": t + 2 * spread, "time_stddev_s": spread / 2,
        "time_ci_lo_s": t - spread / 2, "time_ci_hi_s": t + spread / 2, "time_p90_s": t + spread,
        "time_p99_s": t + 1.8 * spread, "rank_min_s": 0.8 * t, "rank_mean_s": 0.9 * t, "reps_rejected": "",
        "sync_error_s": "", "cpu_pct": "", "mbps": nbytes / t / 1e6, "agg_mbps": "", "calls": "", "total_bytes": "",
        "slowest_rank": "", "verified": "yes",
        "label": label,
    })
    df["nnodes"] = np.maximum(1, nprocs // 32)
    df["ppn"] = np.minimum(nprocs, 32)
    # one run (file) per process count, as a sweep writes them
    for n, part in df.groupby("nprocs"):
        rid = f"{run_id}-np{n}"
        part = part.assign(run_id=rid)
        csv = d / f"collectives-{label}-np{n}.csv"
        part[COLUMNS].to_csv(csv, index=False, float_format="%.9g")
        meta = {"schema_version": 2, "run_id": rid, "program": "collectives", "label": label,
                "suite_version": "bench", "git_commit": "", "command_line": ["bench_compare.py"],
                "start_utc": "2026-11-21T00:00:00Z", "end_utc": "2026-11-21T00:10:00Z", "complete": True,
                "simulated": True, "csv": csv.name, "rows": len(part), "nprocs": int(n),
                "nnodes": int(max(1, n // 32)), "ppn": int(min(n, 32)),
                "mpi": {"library_version": "synthetic", "standard_version": "4.0",
                        "thread_level_requested": "single", "thread_level_provided": "single"},
                "hosts": [], "ranks": [], "topology": {}, "compiler": {}, "options": {}, "environment": {}}
        (csv.with_suffix(".json")).write_text(json.dumps(meta))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows-per-set", type=int, default=500_000)
    ap.add_argument("--dir", type=Path, default=None, help="where to write the data (default: a temp dir)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    tmp = a.dir or Path(tempfile.mkdtemp(prefix="mpimb-bench-"))
    try:
        t0 = time.perf_counter()
        if not (tmp / "A").exists():
            make_set(tmp / "A", "machineA", a.rows_per_set, 1.0, 1)
            make_set(tmp / "B", "machineB", a.rows_per_set, 0.9, 2)
        print(f"data: 2 x {a.rows_per_set} rows in {time.perf_counter() - t0:.1f} s "
              f"({sum(p.stat().st_size for p in tmp.rglob('*.csv')) / 1e6:.0f} MB of CSV)")
        # this checkout's package (the venv's console script may belong to another checkout)
        cmd = [sys.executable, "-m", "mpimb"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(ROOT / "analysis"), os.environ.get("PYTHONPATH")] if p)}
        times = []
        cpus = []
        load0 = os.getloadavg()[0]
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run([*cmd, "compare", str(tmp / "A"), str(tmp / "B"), "-o", str(tmp / "out" /
                                "report.html")], check=False, capture_output=True, text=True, env=env)
            times.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            if p.returncode != 0:
                print(p.stderr, file=sys.stderr)
                return 1
        print(f"compare on {2 * a.rows_per_set} rows: best {min(times):.2f} s, median "
              f"{sorted(times)[len(times) // 2]:.2f} s over {a.repeat} run(s) (wall clock, whole command); "
              f"CPU (user+sys) best {min(cpus):.2f} s; peak RSS {r1.ru_maxrss / 1024:.0f} MiB; "
              f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
        print(f"outputs: {', '.join(f'{p.name} {p.stat().st_size / 1e6:.1f} MB' for p in sorted((tmp / 'out').glob('*.*')))}")
        return 0 if min(times) <= TARGET_S else 1
    finally:
        if a.dir is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
