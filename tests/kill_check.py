"""Kill a rank of a --raw run at random points and check that the CSV, the metadata and the raw samples agree
(issue 26): shared by tests/test_safety_kill.py (5 points per library) and bench/safety/kill (20).

Whatever the instant of the kill:
- the raw file has no row the CSV lacks (a row's samples reach the disk only after the row);
- the metadata counts the rows on disk, or all but the one being written when the job died, and never a row
  that is not there;
- every measured row the metadata counts has all its samples in the raw file (one per repetition and rank)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from conftest import COLUMNS, launcher, mpich_turn, rank_pid

ARGS = ["--quick", "--sync", "barrier", "--reps", "12", "--max-reps", "12", "--min-rep-time", "0.002",
        "--methods", "irecv-isend,sendrecv", "--comms", "world,dup,evenodd", "--neighbors", "4"]


class Disagree(AssertionError):
    """The three files disagree (or the job hung after the kill)."""


def require(ok: bool, what: str) -> None:
    if not ok:
        raise Disagree(what)


class Job:
    """A 2-rank job being killed: the launcher's process, the victim rank's PID, the deadline, and whether it
    hung after the kill (set when `killed` ends)."""

    def __init__(self, p: subprocess.Popen[bytes], pid: int | None, deadline: float) -> None:
        self.p, self.pid, self.deadline, self.hung = p, pid, deadline, False


@contextlib.contextmanager
def killed(lib: str, exe: Path, out: Path, raw: Path, errfile: Path, env: dict[str, str], victim: int) -> Iterator[Job]:
    """The job on 2 ranks writing out and raw, with its victim rank's PID once it runs and a 120 s deadline;
    on leaving, SIGKILL of that rank if the job still runs, then the wait for the job to end (job.hung: it
    did not, and was killed whole).  MPICH jobs hold the MPICH turn throughout: two busy-polling MPICH jobs
    at once on 2 cores made each 10x slower."""
    with mpich_turn(lib, 2):
        with open(errfile, "w") as err:
            p = subprocess.Popen([*launcher(lib, 2), str(exe), "-o", str(out), "--raw", str(raw), *ARGS],
                                 stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, env=env,
                                 cwd=out.parent)
        job = Job(p, None, time.time() + 120)
        while p.poll() is None and job.pid is None and time.time() < job.deadline:
            job.pid = rank_pid(p.pid, victim)
        try:
            yield job
        finally:
            try:
                if job.pid is not None and p.poll() is None:
                    os.kill(job.pid, signal.SIGKILL)
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
            job.hung = p.poll() is None
            if job.hung:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def kill_after_row(lib: str, exe: Path, out: Path, raw: Path, errfile: Path, rows: int) -> None:
    """SIGKILL of rank 0 just after row `rows` reached the CSV (MPIMB_FAULT=row-delay holds that instant open:
    the row is in the CSV, its samples are not in the raw file yet); Disagree if the job never got there or hung."""
    env = {**os.environ, "MPIMB_REPORT": "none", "MPIMB_FAULT": "row-delay:3"}
    header = ",".join(COLUMNS)
    with killed(lib, exe, out, raw, errfile, env, 0) as job:
        while job.p.poll() is None and time.time() < job.deadline and not (
                whole_lines(out)[:1] == [header] and len(whole_lines(out)) > rows):
            time.sleep(0.01)  # this run's header (out may hold an earlier run's file) and its rows
        there = job.pid is not None and job.p.poll() is None
    require(there, f"no row {rows} to kill after: {errfile.read_text()}")
    require(not job.hung, "the job hung after rank 0 was killed")


def progress(errfile: Path) -> int:
    return sum(1 for line in errfile.read_text().splitlines() if line.startswith("["))


def whole_lines(path: Path) -> list[str]:
    """The lines of a file that were written whole (a kill may cut the last one)."""
    text = path.read_text() if path.exists() else ""
    return text.split("\n")[:-1]


def check_consistent(out: Path, raw: Path) -> tuple[int, int]:
    """(rows in the CSV, rows the metadata counts), once the three files are found to agree; Disagree if not."""
    lines = whole_lines(out)
    require(bool(lines) and next(csv.reader([lines[0]])) == COLUMNS, f"{out}: no CSV header")
    rows = list(csv.DictReader(io.StringIO("\n".join(lines) + "\n")))
    meta = json.loads(out.with_suffix(".json").read_text())  # always whole: written aside, then renamed
    n = len(rows)
    if meta["complete"]:
        require(meta["rows"] == n, f"complete metadata counts {meta['rows']} rows, the CSV has {n}")
    else:
        require(n - 1 <= meta["rows"] <= n, f"metadata counts {meta['rows']} rows, the CSV has {n}")
    samples: dict[int, list[tuple[int, int]]] = {}
    raw_lines = whole_lines(raw)
    require(raw_lines[:1] == ["run_id,row,test,method,comm,bytes,rep,rank,seconds"], f"{raw}: no raw header")
    for line in raw_lines[1:]:
        f = line.split(",")
        require(f[0] == meta["run_id"], f"raw sample of another run: {line}")
        samples.setdefault(int(f[1]), []).append((int(f[6]), int(f[7])))
    require(set(samples) <= set(range(1, n + 1)), f"raw samples of rows {sorted(samples)}, the CSV has {n} rows")
    for i, r in enumerate(rows[:meta["rows"]], start=1):
        if r["stop_reason"].startswith("n/a"):
            continue
        reps, nprocs = int(r["reps"]), int(r["nprocs"])
        require(sorted(samples.get(i, [])) == [(k, q) for k in range(reps) for q in range(nprocs)],
                f"row {i}: raw samples are not one per repetition and rank")
    return n, meta["rows"]


class Point(NamedTuple):
    """One kill: after which progress line, how long after it, which rank; what the files held; whether the run
    had already completed (then it was no kill)."""
    point: int
    after: int
    pause: float
    victim: int
    csv_rows: int
    meta_rows: int
    complete: bool


def kill_points(lib: str, exe: Path, workdir: Path, points: int, seed: str) -> list[Point]:
    """Kill a rank of `exe` (halocompare) at random points until `points` kills landed inside a run (at most
    3 x points launches), checking the files after each: Disagree at the first disagreement or hang."""
    rnd = random.Random(seed)
    env = {**os.environ, "MPIMB_REPORT": "none"}
    seen: list[Point] = []
    for point in range(3 * points):
        if sum(1 for s in seen if not s.complete) >= points:
            break
        d = workdir / str(point)
        d.mkdir()
        out, raw, errfile = d / "k.csv", d / "k.raw.csv", d / "err"
        after, pause, victim = rnd.randint(1, 10), rnd.uniform(0, 0.05), rnd.randint(0, 1)
        with killed(lib, exe, out, raw, errfile, env, victim) as job:
            while job.p.poll() is None and progress(errfile) < after and time.time() < job.deadline:
                time.sleep(0.005)
            time.sleep(pause)
        if job.hung:
            raise Disagree(f"point {point}: the job hung after rank {victim} was killed")
        complete = bool(json.loads(out.with_suffix(".json").read_text())["complete"])
        try:
            n, m = check_consistent(out, raw)
        except Disagree as e:
            raise Disagree(f"point {point} (after progress line {after}, +{pause:.3f} s, rank {victim} killed, "
                           f"files in {d}): {e}") from e
        seen.append(Point(point, after, pause, victim, n, m, complete))
    return seen
