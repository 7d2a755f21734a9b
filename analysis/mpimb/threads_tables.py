"""threads: the tables of the two studies of issue 18, beside the per-test tables of tables.threads_tables.

- master-worker: versions side by side against the number of workers — blocks/s, speedup against one worker of
  the same version, the master's CPU % (the parallel bzip2 study's table);
- overlap by placement: methods × placements — µs per iteration and % change against serial under the same
  placement (the SMT study's table).

Registering here replaces the threads builder of tables.BUILDERS (tables.py imports this module once); the rows
of neither study go to tables.threads_tables unchanged."""

from __future__ import annotations

import pandas as pd

from .tables import BUILDERS, Table, fmt, threads_tables

MW_ORDER = ("mpi-only", "comm-threads", "worker-overlap")
PL_METHODS = ("serial", "comm-thread", "spmd")
PLACES = ("same-pu", "smt-sibling", "other-core", "unbound")


def param(d: pd.DataFrame, key: str) -> pd.Series:
    """The value of key in each row's params ('' -> NaN)."""
    return d["params"].fillna("").str.extract(rf"(?:^|;){key}=([^;]*)(?:;|$)", expand=False)


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


def threads_study_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    mw = d["test"] == "master-worker"
    pl = (d["test"] == "overlap") & d["params"].fillna("").str.contains(r"(?:^|;)placement=", regex=True)
    out = threads_tables(d[~mw & ~pl], ctx) if (~mw & ~pl).any() else []
    if pl.any():
        out.append(placement(d[pl], ctx))
    if mw.any():
        out.append(master_worker(d[mw], ctx))
    return out


BUILDERS["threads"] = threads_study_tables
