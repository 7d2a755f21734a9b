#!/usr/bin/env python3
"""Benchmark: `mpimb-report validate`, `table` and `report` on many small result files.

Copies a real small run (bench/report/sample/: pingpong --quick, 2 ranks, 8 rows) into N result files
(default 2,000) the way a Slurm sweep of a few hundred jobs leaves them: each file its own run (run_id,
start time, host) with the same rows.  Two shapes:

- sweep:  one label, every file a new run of the same tests (the repeated-run rule keeps the newest, and
          says so in one warning line with a count);
- labels: every file its own label (2,000 machines).

Then times each command as a user runs it (wall clock of the whole process, best and median of --repeat),
and the peak memory (max RSS) of each.

    .venv/bin/python bench/report/bench_files.py [--files 2000] [--repeat 3] [--dir DIR] [--shape sweep|labels|both]
"""

from __future__ import annotations

import argparse
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
SAMPLE = Path(__file__).resolve().parent / "sample" / "pingpong-vm-np2.csv"
TARGET_S = 3.0  # issue 26: each command on 2,000 files of 8 rows


def make_files(d: Path, n: int, shape: str) -> None:
    """n copies of the sample run, each its own run (run_id, start, host; shape labels: its own label)."""
    rows = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    meta = json.loads(SAMPLE.with_suffix(".json").read_text())
    d.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        host = f"node{i:04d}"
        label = host if shape == "labels" else "cluster"
        stamp = f"20261125T{i // 3600 % 24:02d}{i // 60 % 60:02d}{i % 60:02d}Z"
        run_id = f"{label}-{stamp}-{i:04x}"
        name = f"pingpong-{label}-np2-{stamp}-{i:04d}"
        rows.assign(run_id=run_id, label=label).to_csv(d / f"{name}.csv", index=False)
        m = {**meta, "run_id": run_id, "label": label, "csv": f"{name}.csv", "hosts": [host],
             "start_utc": f"2026-11-25T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"}
        m["ranks"] = [{**r, "host": host} for r in meta.get("ranks", [])]
        (d / f"{name}.json").write_text(json.dumps(m))


def timed(cmd: list[str], repeat: int) -> tuple[list[float], list[float], float, int, str]:
    """(wall seconds of each run, CPU seconds (user + sys) of each, peak RSS in MiB of the biggest, exit code,
    what it printed: line counts).  On a shared machine the CPU time is the figure that load does not move."""
    times = []
    cpus = []
    rss = 0.0
    rc = 0
    summary = ""
    for _ in range(repeat):
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
            _, status, ru = os.wait4(p.pid, 0)  # this child's own peak memory
            times.append(time.perf_counter() - t0)
            cpus.append(ru.ru_utime + ru.ru_stime)
            rc = os.waitstatus_to_exitcode(status)
            rss = max(rss, ru.ru_maxrss / 1024)
            out.seek(0)
            err.seek(0)
            o, e = out.read().splitlines(), err.read().splitlines()
        summary = f"{len(o)} stdout line(s), {len(e)} stderr line(s)"
        if rc != 0:
            summary += ": " + (e or ["?"])[-1][:200]
    return times, cpus, rss, rc, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shape", choices=["sweep", "labels", "both"], default="both")
    ap.add_argument("--dir", type=Path, default=None, help="keep the data here (generated only when missing)")
    ap.add_argument("--commands", default="validate,table,report")
    a = ap.parse_args()
    tmp = a.dir or Path(tempfile.mkdtemp(prefix="mpimb-bench-files-"))
    # this checkout's package (the venv's console script may belong to another checkout)
    base = [sys.executable, "-m", "mpimb"]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(ROOT / "analysis"), os.environ.get("PYTHONPATH")] if p)
    ok = True
    try:
        for shape in (["sweep", "labels"] if a.shape == "both" else [a.shape]):
            d = tmp / f"{shape}-{a.files}"
            t0 = time.perf_counter()
            if not d.exists():
                make_files(d, a.files, shape)
            print(f"data ({shape}): {a.files} files of 8 rows in {time.perf_counter() - t0:.1f} s")
            for c in a.commands.split(","):
                extra = ["-o", str(tmp / f"report-{shape}.html")] if c == "report" else []
                load = os.getloadavg()[0]
                times, cpus, rss, rc, summary = timed([*base, c, str(d), *extra], a.repeat)
                best, med = min(times), sorted(times)[len(times) // 2]
                ok &= rc == 0 and best <= TARGET_S
                print(f"  {c:9s} best {best:.2f} s, median {med:.2f} s over {a.repeat}; CPU best {min(cpus):.2f} s, "
                      f"median {sorted(cpus)[len(cpus) // 2]:.2f} s; peak RSS {rss:.0f} MiB; exit {rc}; {summary}; "
                      f"load average {load:.1f} before")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        return 0 if ok else 1
    finally:
        if a.dir is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
