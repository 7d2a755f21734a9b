"""threads: its tables (per test: size · threads × method, and the overhead tests per provided thread
level; the two studies of issue 18: master-worker — versions against the number of workers, blocks/s,
speedup against one worker of the same version, the master's CPU % — and overlap by placement —
methods × placements, µs per iteration and % change against serial), its plots (a sweep per test, the
thread-level overhead bars across the per-level runs) and its findings (MPI_THREAD_MULTIPLE against
MPI_THREAD_SINGLE on the overhead tests; T threads against T processes, the communication thread
against plain overlap, the best master-worker version against mpi-only at the most workers).  msgrate-mt is in Mmsg/s, as the program prints it
(mpimb.units)."""

from __future__ import annotations

import re
from typing import cast

import numpy as np
import pandas as pd

from .. import schema
from ..judge import BUSY, OVERSUBSCRIBED, judgement, pair, ratio, us
from ..keys import MACHINE, VARIANT, param_numbers, param_values
from ..load import groups
from ..plotting import Plot, log_y, per_test, pyplot, save
from ..render import Table, fmt, fmt_bytes, pivot
from ..units import axis_label


def test_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    for (test,), t in groups(d, ["test"], sort=False):
        rows = ["bytes", "threads"] if t["bytes"].notna().any() else ["threads"]
        cols = ["method", "thread_level"] if test.startswith("overhead") else ["method"]
        out.append(pivot(t, rows, cols, f"threads {test} ({t['unit'].iloc[0]}) — {ctx}", unit_in_header=False))
    return out


MW_ORDER = ("mpi-only", "comm-threads", "worker-overlap")
PL_METHODS = ("serial", "comm-thread", "spmd")
PLACES = ("same-pu", "smt-sibling", "other-core", "unbound")


def param(d: pd.DataFrame, key: str) -> pd.Series:
    """The value of key in each row's params (NaN where absent)."""
    return param_values(d["params"], key).replace("", np.nan)


def _cell(v: float, na: bool, spec: str = "") -> str:
    if na:
        return "n/a"
    if pd.isna(v):
        return "-"
    return f"{v:{spec}}" if spec else fmt(float(v))


def master_worker(t: pd.DataFrame, ctx: str) -> Table:
    d = t.assign(workers=pd.to_numeric(param(t, "workers")), blocks=pd.to_numeric(param(t, "blocks")))
    d["rate"] = d["blocks"] / (d["value"] * 1e-6)  # value: µs per farm under the chosen statistic
    a = d.groupby(["method", "workers"], sort=False).agg(rate=("rate", "median"), cpu=("cpu_pct", "median"),
                                                          na=("na", "all")).reset_index()
    one = a[a["workers"] == 1].set_index("method")["rate"]
    a["speedup"] = a["rate"] / a["method"].map(one)
    methods = [m for m in MW_ORDER if m in set(a["method"])] + sorted(set(a["method"]) - set(MW_ORDER))
    cells = {(str(m), float(w)): [_cell(r, bool(n)), _cell(s, bool(n), ".2f"), _cell(c, bool(n), ".0f")]
             for m, w, r, s, c, n in zip(a["method"], a["workers"], a["rate"], a["speedup"], a["cpu"], a["na"])}
    sub = ["blocks/s", "speedup", "cpu %"]
    rows = [[f"{int(w)}"] + [x for m in methods for x in cells.get((m, float(w)), ["", "", ""])]
            for w in sorted(a["workers"].unique())]
    first = t.iloc[0]
    work = param(t.iloc[:1], "work").iloc[0]
    title = (f"threads master-worker: {int(d['blocks'].iloc[0])} blocks of {int(first['bytes'])} B, {work} — "
             f"speedup against 1 worker of the same version, cpu: the master's threads (% of one core) — {ctx}")
    return Table(title, ["workers"] + sub * len(methods), rows, groups=[("", 1)] + [(m, len(sub)) for m in methods])


def placement(t: pd.DataFrame, ctx: str) -> Table:
    d = t.assign(placement=param(t, "placement"))
    a = d.groupby(["method", "placement"], sort=False).agg(value=("value", "median"), na=("na", "all")).reset_index()
    serial = a[a["method"] == "serial"].set_index("placement")["value"]
    a["pct"] = 100 * (a["value"] / a["placement"].map(serial) - 1)
    places = [p for p in PLACES if p in set(a["placement"])]
    cells = {(str(m), str(p)): [_cell(v, bool(n)), "" if m == "serial" or n or pd.isna(c) else f"{c:+.0f}%"]
             for m, p, v, c, n in zip(a["method"], a["placement"], a["value"], a["pct"], a["na"])}
    rows = [[m] + [x for p in places for x in cells.get((m, p), ["", ""])]
            for m in PL_METHODS if m in set(a["method"])]
    title = (f"threads overlap by placement of the communication thread: µs per iteration and % change against "
             f"serial under the same placement — {ctx}")
    return Table(title, ["method"] + ["µs", "vs serial"] * len(places), rows,
                 groups=[("", 1)] + [(p, 2) for p in places])


LEVELS = tuple(schema.thread_levels())  # the requested levels, lowest first
SHORT = {"called": "outside the noise", "noise": "within the noise"}  # else: not judged


def overhead(d: pd.DataFrame, ctx: str) -> Table | None:
    """What a single-threaded ping-pong pays for the thread level it requested (scripts/thread-overhead: the
    per-level runs of one machine, each its own launch): per overhead test and size, µs per message per
    requested level (bandwidth: window time / window), MULTIPLE - SINGLE, and MULTIPLE / SINGLE with the one
    judge's verdict (judge.judgement: across launches, paired per launch where scripts/launches alternated
    them); a note per row gives the verdict's interval, one per level the library provided otherwise."""
    t = d[d["test"].str.startswith("overhead") & d["method"].isin(LEVELS) & d["time_median_s"].notna()]
    if not ({"single", "multiple"} <= set(t["method"])):
        return None
    window = param_numbers(t["params"], "window").where(t["test"] == "overhead-bw").fillna(1.0)
    # latency before bandwidth, each by size: the rows and their notes in one order
    t = t.assign(us=t["time_median_s"] * 1e6 / window, bw=t["test"] != "overhead-latency")
    t = t.sort_values(["bw", "test", "bytes"], kind="stable")
    rows: list[list[str]] = []
    notes: list[str] = []
    for (test, nbytes), g in t.groupby(["test", "bytes"], sort=False):
        size = f"{float(nbytes):.0f}"  # type: ignore[arg-type]
        one = g.drop_duplicates("method").set_index("method")
        by = {str(lv): cast(pd.Series, one.loc[lv]) for lv in one.index}
        cells = [str(test), size] + [f"{float(by[lv]['us']):.3f}" if lv in by else "-" for lv in LEVELS]
        if "single" in by and "multiple" in by:
            m, s = by["multiple"], by["single"]
            j = judgement(m, s)
            diff = float(m["us"]) - float(s["us"])
            cells += [f"{diff:+.3f}", f"{100 * diff / float(s['us']):+.1f}%", f"{j.factor:.3f}",
                      SHORT.get(j.verdict, "not judged")]
            notes.append(f"{test} {size} B: MULTIPLE / SINGLE {j.words}")
        else:
            cells += ["-"] * 4
        rows.append(cells)
    provided = t.groupby("method")["thread_level"].unique()
    # the marks the findings carry, for the whole table: a run of it was oversubscribed or on a busy machine
    notes += [mark.strip() for mark, col in ((OVERSUBSCRIBED, "oversubscribed"), (BUSY, "busy"))
              if col in t and bool(t[col].any())]
    notes += [f"requested {lv}, the library provided {', '.join(sorted(map(str, p)))}"
              for lv, p in provided.items() if set(p) != {lv}]
    return Table(f"threads thread-level overhead: µs per message per requested level, MULTIPLE against SINGLE — "
                 f"{ctx}", ["test", "bytes", *LEVELS, "MULTIPLE-SINGLE µs", "%", "M/S", "verdict"], rows,
                 notes=notes, keys=2)


def tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    mw = d["test"] == "master-worker"
    pl = (d["test"] == "overlap") & (param_values(d["params"], "placement") != "")
    out = test_tables(d[~mw & ~pl], ctx) if (~mw & ~pl).any() else []
    if (o := overhead(d, ctx)) is not None:
        out.append(o)
    if pl.any():
        out.append(placement(d[pl], ctx))
    if mw.any():
        out.append(master_worker(d[mw], ctx))
    return out


# ---------------------------------------------------------------- plots

def overhead_bars(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    """Thread-level overhead: bars per size, one bar per provided thread level."""
    if g.empty:
        return None
    levels = [lv for lv in schema.thread_levels() if lv in set(g["thread_level"])]
    sizes = sorted(g["bytes"].unique())
    h = g.set_index(["bytes", "thread_level"])["value"]  # one row each: the plot is per variant
    fig, ax = pyplot().subplots(figsize=(6.4, 3.8))
    x = np.arange(len(sizes))
    w = 0.8 / max(1, len(levels))
    for j, lv in enumerate(levels):
        ax.bar(x + (j - (len(levels) - 1) / 2) * w, [h.get((s, lv), np.nan) for s in sizes], w,
               label=schema.mpi_thread_level(lv))
    ax.set_xticks(x, [fmt_bytes(s) for s in sizes])
    ax.set_xlabel("message size [bytes]")
    ax.set_ylabel(axis_label(str(g["unit"].iloc[0]), "", per_process=False))
    log_y(ax)
    ax.grid(axis="x", visible=False)
    ax.legend(fontsize=7, frameon=False)
    ax.set_title(title)
    return save(fig, name, title)


def plots(g: pd.DataFrame, stat: str, ctx: str, base: str) -> list[Plot]:
    """A sweep per test; the overhead tests are drawn across the per-level runs (set_plots)."""
    def overhead(test: str, t: pd.DataFrame) -> list[Plot] | None:
        return [] if test.startswith("overhead") else None

    return per_test(g, stat, ctx, base, instead=overhead)


def set_plots(d: pd.DataFrame, stat: str) -> list[Plot]:
    """Thread-level overhead: the per-level runs are separate files, so group across runs."""
    out: list[Plot] = []
    th = d[(d["program"] == "threads") & d["test"].str.startswith("overhead") & ~d["na"] & ~d["failed"]]
    for (label, lib, test, var, nprocs, ppn), g in groups(th, [*MACHINE, "test", VARIANT, "nprocs", "ppn"]):
        sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
        many = th[(th["label"] == label) & (th["test"] == test)][["library", "variant", "nprocs", "ppn"]]
        tag = "" if len(many.drop_duplicates()) == 1 else "-" + re.sub(r"[^A-Za-z0-9.=]+", "_",
                                                                          f"{lib}-{var}-np{nprocs:.0f}-{ppn:.0f}")
        p = overhead_bars(g, f"thread-level overhead: {test}{f' [{var}]' if var else ''}\n{label} · {lib}{sim}",
                          f"{label}-threads-{test}-levels{tag}")
        if p:
            out.append(p)
    return out


# ---------------------------------------------------------------- findings

def findings(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    t = m[(m["program"] == "threads") & m["test"].str.startswith("overhead")]
    for (test,), s in groups(t, ["test"]):
        mult, single = s[s["thread_level"] == "multiple"], s[s["thread_level"] == "single"]
        if mult.empty or single.empty:
            continue
        both = sorted(set(mult["bytes"]) & set(single["bytes"]))
        if not both:
            continue
        size = both[0] if "latency" in str(test) else both[-1]
        a, b = mult[mult["bytes"] == size].iloc[0], single[single["bytes"] == size].iloc[0]
        out.append(("MULTIPLE vs SINGLE", pair(
            f"MPI_THREAD_MULTIPLE vs SINGLE, {test} at {fmt_bytes(size)} B{where}", a, b, "MULTIPLE takes",
            "SINGLE", us, "time MULTIPLE / SINGLE", ratio(a["time_median_s"], b["time_median_s"]))))
    out += versus(m, where)
    return out


def _fastest(s: pd.DataFrame) -> pd.Series | None:
    s = s[s["time_median_s"].notna() & (s["time_median_s"] > 0)]
    return None if s.empty else s.sort_values("time_median_s", kind="stable").iloc[0]


def versus(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    """One run's comparisons: the faster threads variant against processes (latency-mt at its smallest
    size, bw-mt at its largest), comm-thread against plain overlap, and the fastest master-worker version
    against mpi-only at the most workers measured."""
    out: list[tuple[str, str]] = []
    t = m[m["program"] == "threads"]
    cases: list[tuple[str, pd.DataFrame, pd.DataFrame]] = []
    for test, smallest in (("latency-mt", True), ("bw-mt", False)):
        s = t[(t["test"] == test) & t["time_median_s"].notna()]
        if s.empty:
            continue
        size = s["bytes"].min() if smallest else s["bytes"].max()
        s = s[s["bytes"] == size]
        cases.append((f"Concurrent {test} at {fmt_bytes(size)} B, threads against processes",
                      s[s["method"] != "processes"], s[s["method"] == "processes"]))
    o = t[t["test"] == "overlap"]
    cases.append(("Overlap of communication and computation", o[o["method"] == "comm-thread"],
                  o[o["method"] == "plain"]))
    mw = t[t["test"] == "master-worker"]
    if not mw.empty:
        workers = param_numbers(mw["params"], "workers")
        most = workers.max()
        mw = mw[workers == most]
        cases.append((f"Master-worker with {most:.0f} workers", mw[mw["method"] != "mpi-only"],
                      mw[mw["method"] == "mpi-only"]))
    for what, xs, ys in cases:
        a, b = _fastest(xs), _fastest(ys)
        if a is None or b is None:
            continue
        out.append(("threads vs processes", pair(f"{what}{where}", a, b, str(a["method"]), str(b["method"]), us,
                                                 f"time {a['method']} / {b['method']}",
                                                 ratio(a["time_median_s"], b["time_median_s"]))))
    return out
