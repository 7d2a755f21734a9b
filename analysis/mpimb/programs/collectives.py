"""collectives: its tables (time per call and aggregate bandwidth per collective × method ×
settings × size, and the layout table over every run: reduce / bcast / allreduce × nodes × ranks
per node × root, docs/slurm.md), its plots (the library's blocking and nonblocking collectives,
a sweep per test) and its findings (the library's broadcast against the best user-level
algorithm; rows that differ only in a setting; with --overlap, the share of each nonblocking collective
hidden behind computation: a table and a finding per collective, docs/collectives.md).

A run's layout in the layout table is its Slurm job's (the `layout` column keys.prepared gives
runs with a "slurm" record: nodes, ppn) when it has one, else what MPI saw (the CSV's nnodes ×
ppn).  Where they differ (a launcher that does not give MPI the job's nodes), a note says so."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge import overlap, pair, ratio, us
from ..keys import param_values, split_overlap
from ..load import groups
from ..plotting import Plot, per_test, sweep
from ..render import Table, agg, cell, fmt_bytes, pivot


def tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    rows = ["test", "method", "comm", "variant"]  # variant: the params that differ (pivot)
    d, ov = split_overlap(d)
    out = [pivot(d, rows, ["bytes"], f"collectives: time per call in µs, columns = bytes — {ctx}",
                 unit_in_header=False)] if not d.empty else []
    if not ov.empty:
        out.append(pivot(ov.assign(value=ov["overlap_pct"], unit="%"), rows, ["bytes"],
                         f"collectives: overlap, % of the nonblocking collective hidden behind computation of "
                         f"overlap × its own time (OMB's and IMB-NBC's definition, docs/collectives.md), columns = "
                         f"bytes — {ctx}", unit_in_header=False))
    agg = d[d["agg_mbps"] > 0]  # its median-time figure, scaled like mbps for --stat min
    if not agg.empty:
        out.append(pivot(agg.assign(value=agg["agg_mbps"] * agg["time_median_s"] * 1e6 / agg["value"], unit="MB/s"),
                         rows, ["bytes"], f"collectives: aggregate bandwidth in MB/s (bytes the whole operation "
                         f"moves / time; docs/collectives.md), columns = bytes — {ctx}", unit_in_header=False))
    return out


def plots(g: pd.DataFrame, stat: str, ctx: str, base: str) -> list[Plot]:
    """The library's collectives together (blocking, nonblocking), then a sweep per test of the algorithms."""
    out: list[Plot] = []
    g = split_overlap(g)[0]
    lib_coll = g[g["method"] == "library"]
    if not lib_coll.empty:
        lc = lib_coll.assign(method=lib_coll["test"], comm="")
        blocking = {str(t) for t in lc["test"]}
        nb = lc["test"].isin([t for t in blocking if t.startswith("i") and t[1:] in blocking])
        for part, kind, suffix in ((lc[~nb], "blocking", "library"), (lc[nb], "nonblocking", "library-nb")):
            p = sweep(part, stat, f"collectives (library, {kind}), time per call\n{ctx}", f"{base}-{suffix}") \
                if not part.empty else None
            if p:
                out.append(p)

    def library_only(test: str, t: pd.DataFrame) -> list[Plot] | None:
        return [] if set(t["method"]) <= {"library"} else None  # drawn together above

    return out + per_test(g, stat, ctx, base, instead=library_only)


def findings(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    c, ov = split_overlap(m[m["program"] == "collectives"])
    for (test, comm), s in groups(ov, ["test", "comm"]):  # per nonblocking collective, at its largest size
        big = s[s["bytes"] == s["bytes"].max()] if s["bytes"].notna().any() else s
        size = f" at {fmt_bytes(big['bytes'].iloc[0])} B" if big["bytes"].notna().any() else ""
        f = overlap(f"Overlap, {test}{size}, {comm} (computation {param_values(big['params'], 'overlap').iloc[0]}× "
                    f"its time){where}", big, "test", "collective")
        if f:
            out.append(("overlap", f))
    bc = c[c["test"].str.startswith("bcast")].assign(
        alg=lambda x: np.where(x["test"] == "bcast", x["method"], x["test"].str.removeprefix("bcast-")))
    for var, s in groups(bc, ["variant"]):
        if not (s["alg"] == "library").any() or s["alg"].nunique() < 2 or s["bytes"].isna().all():
            continue
        big = s[s["bytes"] == s["bytes"].max()]
        lib = big[big["alg"] == "library"]
        users = big[~big["alg"].isin(["library", "persistent"])].sort_values("time_median_s")  # the library's own forms
        if len(lib) and len(users):
            a, u = lib.iloc[0], users.iloc[0]
            tag = f" [{var[0]}]" if var[0] else ""
            out.append(("collectives", pair(
                f"Broadcast at {fmt_bytes(a['bytes'])} B{tag}{where}", a, u, "the library's MPI_Bcast takes",
                f"the best user-level algorithm ({u['alg']})", us, "library / best algorithm",
                ratio(a["time_median_s"], u["time_median_s"]))))
    # rows that differ only in a setting (another --root, --timing, --segment ...)
    if c["variant"].nunique() > 1:
        for (test, meth), s in groups(c, ["test", "method"]):
            if s["variant"].nunique() < 2:
                continue
            common = s.groupby("bytes")["variant"].nunique()
            sizes = common[common == s["variant"].nunique()].index
            if len(sizes) == 0:
                continue
            at = s[s["bytes"] == sizes.max()].sort_values("time_median_s")
            a, b = at.iloc[-1], at.iloc[0]
            out.append(("collectives", pair(
                f"{test} {meth} at {fmt_bytes(a['bytes'])} B{where}", a, b, str(a["variant"]), str(b["variant"]),
                us, "time ratio", ratio(a["time_median_s"], b["time_median_s"]))))
            if len(out) >= 4:
                break
    return out


# ---------------------------------------------------------------- the layout table

TESTS = ("reduce", "bcast", "allreduce")
METHODS = ("library", "2level", "2level-shm")


def _mpi_layout(d: pd.DataFrame) -> pd.Series:
    return d["nnodes"].fillna(1).astype(int).astype(str) + "x" + d["ppn"].fillna(d["nprocs"]).astype(int).astype(str)


def _root(params: pd.Series) -> pd.Series:
    """"same" (root 0), "rotate", "root N" or "" (unrooted) from the rows' params."""
    r = param_values(params, "root")
    return r.map(lambda v: "same" if v == "0" else v if v in ("", "rotate") else f"root {v}")


def layout_tables(d: pd.DataFrame) -> list[Table]:
    """The table over every label and layout in d, when d has two-level collectives rows.

    d: every block of the set (with value and unit)."""
    c = d[(d["program"] == "collectives") & d["test"].isin(TESTS) & d["method"].isin(METHODS)
          & (d["comm"] == "world")]
    if not c["method"].str.startswith("2level").any():
        return []
    mpi = _mpi_layout(c)
    labels = c["label"].astype(str)
    who = (labels + " · " if labels.nunique() > 1 else "") + c["library"]
    c = c.assign(layout=c["layout"].fillna(mpi) if "layout" in c else mpi, mpi_layout=mpi,
                 root=_root(c["params"]), set=who + " · " + c["method"])
    a = agg(c, ["test", "root", "bytes", "layout", "set"])
    layouts = sorted(a["layout"].unique(), key=lambda s: (np.prod([int(x) for x in s.split("x")]),
                                                           -int(s.split("x")[0])))
    sets = sorted(a["set"].unique(), key=lambda s: (s.rsplit(" · ", 1)[0], METHODS.index(s.rsplit(" · ", 1)[1])))
    cells = {(t, r, b, lay, s): cell(v, bool(na), few=bool(w)) for t, r, b, lay, s, v, na, w in
             zip(a["test"], a["root"], a["bytes"], a["layout"], a["set"], a["value"], a["na"], a["few"], strict=True)}
    order = {"same": 0, "rotate": 1}
    keys = sorted({(t, r, b) for t, r, b, *_ in cells}, key=lambda k: (TESTS.index(k[0]), order.get(k[1], 2), k[1], k[2]))
    rows = [[f"{t} · {r or '-'} · {fmt_bytes(b)}"] + [cells.get((t, r, b, lay, s), "") for lay in layouts for s in sets]
            for t, r, b in keys]
    header = ["collective · root · bytes"] + [s for _ in layouts for s in sets]
    groups = [("", 1)] + [(f"{lay} (nodes x ppn)", len(sets)) for lay in layouts]
    notes = [("Time per call in µs (the statistic of the tables), communicator world; root same = rank 0, "
              "rotate = call k on rank k mod P; a set = [label ·] MPI library · method.")]
    differ = c[c["layout"] != c["mpi_layout"]]
    if not differ.empty:
        seen = sorted(set(zip(differ["layout"], differ["mpi_layout"], strict=True)))
        notes.append("Slurm's layout is not what MPI saw (the launcher did not give MPI the job's nodes): "
                     + ", ".join(f"{s} ran as {m}" for s, m in seen)
                     + " shared-memory nodes, so the two-level algorithms had MPI's nodes.")
    t = Table(f"Layouts: reduce / bcast / allreduce × nodes × ranks per node × root — {', '.join(sorted(set(labels)))}",
              header, rows, groups, notes)
    t.program = "collectives"
    return [t]
