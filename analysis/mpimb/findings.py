"""The answer first: findings computed from the data, one sentence each, with their numbers, per
machine (label, MPI library) and process layout — each program's own (mpimb.registry), judged by
the one set of rules in mpimb.judge (CIs that do not overlap, enough repetitions, oversubscription
marked).  FAILED and n/a rows take no part (the FAILED banner lists the failed ones).

Per program: halocompare — fastest and slowest method per stencil (world), the cost of rank
ordering (best and worst communicator, irecv-isend), one sender / halo, the best one-sided method
against the best send/recv method; pingpong — latency at the smallest size, peak bandwidth;
collectives — the library broadcast against the best user-level algorithm at the largest size, and
rows that differ only in a setting (--root ...); rma — per test the fastest one-sided variant against
send/recv; threads — MPI_THREAD_MULTIPLE against MPI_THREAD_SINGLE on the overhead tests."""

from __future__ import annotations

import math

import pandas as pd

from . import schema
from .guidelines import as_findings, check
from .judge import Finding
from .keys import KEYS, LAYOUT, MACHINE, machine_name, with_variant
from .load import Run, groups
from .registry import PROGRAMS

# The columns findings read (a narrow frame keeps the many selections below cheap).
COLUMNS = [*MACHINE, *KEYS, "reps", "time_median_s", "time_ci_lo_s", "time_ci_hi_s", "mbps", "oversubscribed",
           "busy", "simulated", "platform", "file", "round_group", "rounds", "launches", "launch_times", "launch_ids",
           *schema.measured_params()]


def usable(df: pd.DataFrame) -> pd.DataFrame:
    """The rows findings may use: measured, not n/a, not FAILED (with their variant column)."""
    keep = ~df["na"].to_numpy(bool) & ~df["failed"].to_numpy(bool)
    d, _ = with_variant(df.loc[keep, [c for c in COLUMNS if c in df]])
    return d


def _from(rows: pd.DataFrame, machine: str, where: str, scope: str) -> list[Finding]:
    """The findings of the programs whose findings are made over scope ('layout' or 'machine')."""
    out: list[Finding] = []
    for p in PROGRAMS.values():
        sub = rows[rows["program"] == p.name]
        if sub.empty or p.findings_over != scope:
            continue
        over = bool(sub["oversubscribed"].any()) if "oversubscribed" in sub else False
        busy = bool(sub["busy"].any()) if "busy" in sub else False
        out += [Finding(machine, topic, text, over, busy) for topic, text in p.findings(sub, where)]
    return out


def findings(df: pd.DataFrame, limit: int | None = None, runs: list[Run] | None = None) -> list[Finding]:
    """Every finding for the rows of df (keys.prepared's frame: one result set, its launches combined);
    limit: those of the first `limit` machines (label, library) only; runs (the runs df came from): each
    machine's findings end with its guidelines (mpimb.guidelines: the counts, then each violation)."""
    if df.empty:
        return []
    d = usable(df)
    out: list[Finding] = []
    for i, ((label, lib), mach) in enumerate(groups(d, MACHINE)):
        if limit is not None and i >= limit:
            break
        machine = machine_name(label, lib, mach)
        layouts = mach.groupby(LAYOUT, dropna=False).ngroups
        for (nprocs, nn, ppn), m in groups(mach, LAYOUT, dropna=False):
            where = f", np{int(nprocs)}" + (f" ({int(nn)}×{int(ppn)})" if math.isfinite(nn) and math.isfinite(ppn)
                                            else "") if layouts > 1 else ""
            out += _from(m, machine, where, "layout")
        out += _from(mach, machine, "", "machine")
        if runs is not None:
            out += as_findings(check(mach, runs, per_program=True))
    return out


def none_why(df: pd.DataFrame) -> str:
    """Why df gives no findings (for the one line mpimb-report findings prints then)."""
    if df.empty:
        return "no result rows"
    d = usable(df)
    if d.empty:
        return "every result is n/a or FAILED verification"
    progs = sorted(set(d["program"]) & set(PROGRAMS))
    if not progs:
        return f"findings are made for {', '.join(PROGRAMS)} results only"
    return ("no two results measured the same thing in different ways (" + ", ".join(progs) +
            ": e.g. two methods of one stencil, two thread levels, a library call and an algorithm)")
