"""halocompare: its tables (the talk's shape: communicators × stencils × methods per mesh, one
sender, rate against size), its plots (bars or heat maps per mesh, rate against size) and its
findings (fastest and slowest method, rank ordering on the ordering method, one-sided against
send/recv, one sender against the halo; with --overlap, the share of each nonblocking method's exchange
hidden behind computation and which method hides the most).  A method's family comes from the schema's vocabulary
(schema.method_families), never from its name."""

from __future__ import annotations

import math
from typing import cast

import numpy as np
import pandas as pd

from .. import schema
from ..judge import (
    ORDERING_METHOD,
    judgement,
    mbps,
    name,
    one_launch,
    overlap,
    pair,
    ranked,
    ratio,
    spread,
    stencil,
)
from ..keys import (
    mocked,
    param_numbers,
    param_values,
    params_note,
    split_overlap,
    with_variant,
    without_param,
)
from ..load import groups
from ..plotting import COLORS, Plot, bytes_axis, hsl, log_y, per_test, pyplot, save
from ..render import (
    FAILED,
    KEY,
    SHOWN,
    Table,
    agg,
    cell,
    extra_keys,
    failed_note,
    fmt,
    fmt_bytes,
    fmt_ratio,
    heat_colour,
    pivot,
)

MAX_BARS = 6  # more bars per group than this and a halo plot becomes a heat map
# Methods whose requests persist over the run: like a one-sided window, each communicator's objects keep a speed
# of their own for the whole launch (bench/README.md, "window by window"), so communicators are compared on them
# across launches only.
PERSISTENT = ("persistent", "partitioned", "persistent-neighbor")
SIZE_KEYS = ["dims", "periodic", "neighbors"]
# --phases: the phases of an exchange, in order, from the schema's measured keys (phase_NAME_s)
PHASES = [k[len("phase_"):-len("_s")] for k in schema.measured_params()
          if k.startswith("phase_") and k.endswith("_s") and not k.endswith(("_lo_s", "_hi_s"))]
PHASE_LABELS = {"post": "post receives", "send": "pack + post sends", "wait": "wait", "unpack": "unpack"}


def families(methods: pd.Series) -> pd.Series:
    """Each method's family (schema.method_families; unknown methods: schema.UNKNOWN_FAMILY)."""
    return methods.map(schema.method_families("halocompare")).fillna(schema.UNKNOWN_FAMILY).astype(str)


# ---------------------------------------------------------------- tables

def overlap_table(ov: pd.DataFrame, ctx: str) -> list[Table]:
    """--overlap: the share of each nonblocking method's exchange hidden behind computation (overlap_pct)."""
    if ov.empty:
        return []
    t = pivot(ov.assign(value=ov["overlap_pct"], unit="%"), ["comm", "neighbors", "periodic", "method"], ["bytes"],
              f"halocompare: overlap, % of the exchange hidden behind computation of overlap × its own time "
              f"(OMB's and IMB-NBC's definition, docs/halo-overlap.md), columns = bytes per neighbour — {ctx}",
              unit_in_header=False)
    return [t]


def tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    d, ov = split_overlap(d)
    out: list[Table] = []
    halo, constant = with_variant(d[d["test"] == "halo"])
    # the point-to-point methods in one table, the one-sided and neighbourhood collectives in the next
    fam = families(halo["method"])
    halo = halo.assign(family=np.where((fam == schema.POINT_TO_POINT) | (fam == schema.UNKNOWN_FAMILY), 0, 1))
    for (nbytes, per, family), h in groups(halo, ["bytes", "periodic", "family"], dropna=False):
        extra = extra_keys(h, ["comm", "neighbors", "method"])
        h = h.assign(row=h[["comm", *extra]].astype(str).agg(" · ".join, axis=1) if extra else h["comm"])
        a = agg(h, ["row", "neighbors", "method"])
        comms = list(dict.fromkeys(a["row"]))
        methods = list(dict.fromkeys(a["method"]))
        nbrs = sorted(int(x) for x in a["neighbors"].unique() if x >= 0)
        look = {(c, n, m): (v, na, f, w) for c, n, m, v, na, f, w in zip(a["row"], a["neighbors"], a["method"],
                                                                          a["value"], a["na"], a["failed"], a["few"])}
        header = ["comm" + "".join(f" · {SHOWN.get(x, x)}" for x in extra)] + [m for _ in nbrs for m in methods]
        grp = [("", 1)] + [(f"{n} neighbours", len(methods)) for n in nbrs]
        rows, heat = [], []
        for c in comms:
            row, rel = [c], []
            for n in nbrs:
                hits = [look.get((c, float(n), m)) for m in methods]
                good = [x[0] for x in hits if x and not x[1] and not x[2] and math.isfinite(x[0])]
                best = max(good) if good else math.nan
                for x in hits:
                    row.append(cell(x[0], bool(x[1]), bool(x[2]), few=bool(x[3])) if x else "")
                    ok = x is not None and not x[1] and not x[2] and math.isfinite(x[0]) and best > 0
                    rel.append(float(x[0]) / best if ok and x else None)
            rows.append(row)
            heat.append(rel)
        kind = ("Periodic" if per == 1 else "Non-periodic") + (
            " mesh, one-sided and neighbourhood collectives" if family else " mesh")
        per_nbr = f", {fmt_bytes(nbytes)} B per neighbour" if pd.notna(nbytes) else ""
        notes = [("MB/s = 10^6 bytes one process sends per exchange (neighbours × bytes) / time per exchange "
                 "(slowest rank).")]
        if bool(a["na"].any()):
            reasons = sorted(set(h.loc[h["na"], "stop_reason"]))
            notes.append("n/a: " + "; ".join(r.removeprefix("n/a: ") for r in reasons))
        notes += [n for n in (params_note(constant),) if n] + failed_note(h)
        out.append(Table(f"{kind}{per_nbr}: MB/s per process — {ctx}", header, rows, grp, notes, heat=heat))
    one = d[d["test"] == "one-sender"]
    if not one.empty:
        o = agg(one, ["neighbors", "periodic", "bytes"])
        hal = agg(halo, ["comm", "neighbors", "periodic", "bytes", "method"]) if not halo.empty else None
        rows = []
        for n, p, b, v, na, f, w in zip(o["neighbors"], o["periodic"], o["bytes"], o["value"], o["na"], o["failed"],
                                        o["few"]):
            ref, ref_bad = math.nan, False
            if hal is not None:
                m = hal[(hal["comm"] == "world") & (hal["neighbors"] == n) & (hal["periodic"] == p)
                        & (hal["bytes"] == b) & (hal["method"] == ORDERING_METHOD)]
                if not m.empty:
                    ref, ref_bad = float(m["value"].iloc[0]), bool(m["failed"].iloc[0])
            stencil = f"{int(n)}-nbr {'periodic' if p == 1 else 'non-periodic'}"
            ok = math.isfinite(ref) and ref > 0 and not na and not f and not ref_bad
            rows.append([stencil, cell(v, bool(na), bool(f), few=bool(w)), FAILED if ref_bad else fmt(ref) if math.isfinite(ref)
                         else "", fmt_ratio(v / ref) if ok else ""])
        out.append(Table(f"One sender (world): one interior process sends alone, MB/s — {ctx}",
                         ["stencil", "one-sender", f"halo {ORDERING_METHOD}", "one-sender/halo"], rows,
                         notes=failed_note(one)))
    rest = d[~d["test"].isin(["halo", "one-sender"])]
    if not rest.empty:
        out.append(pivot(rest, KEY, ["bytes"], f"halocompare, other tests — {ctx}"))
    out += size_tables(d, ctx)
    return out + overlap_table(ov, ctx)


def _swept(d: pd.DataFrame) -> pd.DataFrame:
    """The halocompare halo rows of (dims, periodic, stencil, comm) groups run at two or more sizes,
    with dims (from params, 2 where absent: results from before --dims) as a column."""
    h = d[(d["program"] == "halocompare") & (d["test"] == "halo") & (d["bytes"] > 0)]
    if h.empty:
        return h
    h = h.assign(dims=param_numbers(h["params"], "dims").fillna(2).astype(int))
    n = h.groupby([*SIZE_KEYS, "comm"], dropna=False)["bytes"].transform("nunique")
    return h[n >= 2]


def _what(dims: int, per: float, nbrs: float) -> str:
    return f"{dims}-D {'periodic' if per == 1 else 'non-periodic'} mesh, {int(nbrs)} neighbours"


def size_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    """Rate against size: rows = bytes per neighbour message, columns = methods (d has value/unit)."""
    out: list[Table] = []
    h = _swept(d)
    h = h.assign(order=h["comm"].map({c: i for i, c in enumerate(dict.fromkeys(h["comm"]))}))  # as run
    for (dims, per, nbrs, _, comm), g in groups(h, [*SIZE_KEYS, "order", "comm"], sort=True):
        t = pivot(g, ["bytes"], ["method"], f"{_what(dims, per, nbrs)}, comm {comm}: MB/s per process against "
                  f"bytes per neighbour message — {ctx}", unit_in_header=False)
        out.append(t)
    return out


# ---------------------------------------------------------------- plots

def halo_bars(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    """Grouped bars per communicator, one bar per method; a panel per neighbour count.  With
    more than MAX_BARS methods the bars are unreadable and the plot is halo_heat instead."""
    g = g[g["test"] == "halo"]
    if g.empty:
        return None
    methods = list(dict.fromkeys(g["method"]))
    if len(methods) > MAX_BARS or g["variant"].nunique() > 1:
        return halo_heat(g, title, name)
    g = g[~g["failed"]]
    nbrs = sorted(int(x) for x in g["neighbors"].dropna().unique())
    comms = list(dict.fromkeys(g["comm"]))
    fig, axes = pyplot().subplots(1, max(1, len(nbrs)), figsize=(5.2 * max(1, len(nbrs)), 4.0), sharey=True,
                             squeeze=False)
    width = 0.8 / max(1, len(methods))
    for ax, n in zip(axes[0], nbrs):
        h = g[g["neighbors"] == n].set_index(["comm", "method"])["value"]
        x = np.arange(len(comms))
        for j, m in enumerate(methods):
            vals = [h.get((c, m), np.nan) for c in comms]
            ax.bar(x + (j - (len(methods) - 1) / 2) * width, vals, width, label=m)
        ax.set_xticks(x, comms)
        ax.set_title(f"{n} neighbours")
        ax.set_xlabel("communicator")
        ax.grid(axis="x", visible=False)
    axes[0][0].set_ylabel("MB/s per process (higher is better)")
    axes[0][-1].legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(title, fontsize=10)
    return save(fig, name, title)


def halo_heat(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    """Communicator × method per neighbour count, each cell coloured by its rate relative to the
    best of its row (as the report's heat-map tables) and labelled with the MB/s; FAILED and n/a
    cells say so."""
    from matplotlib.colors import to_rgb

    nbrs = sorted(int(x) for x in g["neighbors"].dropna().unique() if x >= 0)
    if not nbrs:
        return None
    g = g.assign(col=np.where(g["variant"] != "", g["method"] + "\n" + g["variant"], g["method"]))
    cols = list(dict.fromkeys(g["col"]))
    comms = list(dict.fromkeys(g["comm"]))
    fig, axes = pyplot().subplots(len(nbrs), 1, figsize=(max(6.0, 0.85 * len(cols) + 1.6), 1.0 + 0.42 * len(comms) *
                                                     len(nbrs) + 0.9 * len(nbrs)), squeeze=False)
    for ax, n in zip(axes[:, 0], nbrs):
        h = g[g["neighbors"] == n].set_index(["comm", "col"])
        val = np.full((len(comms), len(cols)), np.nan)
        label = [["" for _ in cols] for _ in comms]
        for i, c in enumerate(comms):
            for j, m in enumerate(cols):
                if (c, m) not in h.index:
                    continue
                r = h.loc[(c, m)]
                if bool(r["failed"]):
                    label[i][j] = "FAILED"
                elif bool(r["na"]):
                    label[i][j] = "n/a"
                elif math.isfinite(float(r["value"])):
                    val[i, j] = float(r["value"])
                    label[i][j] = fmt(float(r["value"]))
        with np.errstate(invalid="ignore", divide="ignore"):
            best = np.nanmax(np.where(np.isnan(val), -np.inf, val), axis=1, keepdims=True)
            rel = val / np.where(best > 0, best, np.nan)
        rgb = np.ones((len(comms), len(cols), 3))
        for i in range(len(comms)):
            for j in range(len(cols)):
                if math.isfinite(rel[i, j]):
                    rgb[i, j] = to_rgb(hsl(heat_colour(float(rel[i, j]))))
                elif label[i][j] == "FAILED":
                    rgb[i, j] = (0.72, 0.11, 0.11)
        ax.imshow(rgb, aspect="auto")
        for i in range(len(comms)):
            for j in range(len(cols)):
                ax.text(j, i, label[i][j], ha="center", va="center", fontsize=7,
                        color="white" if label[i][j] == "FAILED" else "#1d2430")
        ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right", fontsize=7)
        ax.set_yticks(range(len(comms)), comms)
        ax.set_title(f"{n} neighbours: MB/s per process, colour = share of the row's best", fontsize=9)
        ax.grid(False)
    fig.suptitle(title, fontsize=10)
    return save(fig, name, title)


def size_plots(g: pd.DataFrame, ctx: str, base: str) -> list[Plot]:
    """Rate against size, a panel per communicator, a line per method (g has value)."""
    out: list[Plot] = []
    for (dims, per, nbrs), s in groups(_swept(g[~g["na"]]), SIZE_KEYS, sort=True):
        comms = list(dict.fromkeys(s["comm"]))
        methods = list(dict.fromkeys(s["method"]))
        ncol = min(3, len(comms))
        nrow = -(-len(comms) // ncol)
        fig, axes = pyplot().subplots(nrow, ncol, figsize=(4.4 * ncol, 3.4 * nrow + 0.6), sharex=True, sharey=True,
                                 squeeze=False)
        for ax, ((comm,), c) in zip(axes.flat, groups(s, ["comm"], sort=False)):
            for m in methods:  # the same colour per method in every panel
                v = c[c["method"] == m].groupby("bytes", sort=True)["value"].median()
                ax.plot(v.index, v.to_numpy(), marker="o", ms=3, lw=1.2, label=m)
            ax.set_title(f"comm {comm}")
            bytes_axis(ax)
            log_y(ax)
        for ax in axes.flat[len(comms):]:
            ax.set_visible(False)
        for ax in axes[:, 0]:
            ax.set_ylabel("MB/s per process")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, fontsize=7, frameon=False, loc="lower center", ncol=min(5, len(methods)))
        kind = "periodic" if per == 1 else "non-periodic"
        title = f"halo exchange rate against message size, {_what(dims, per, nbrs)}\n{ctx}"
        fig.suptitle(title, fontsize=10)
        rows_of_legend = int(np.ceil(len(methods) / min(5, len(methods))))
        fig.tight_layout(rect=(0, 0.04 * rows_of_legend + 0.02, 1, 1))
        out.append(save(fig, f"{base}-halo-sizes-{dims}d-{kind}-{int(nbrs)}", title, tight=False))
    return out

def phase_label(r: pd.DataFrame) -> pd.Series:
    """A phase bar's label: method, communicator, stencil, and the packing and mock settings where set."""
    extra = param_values(r["params"], "packing") + param_values(r["params"], "mock").map({"yes": " mock"}).fillna("")
    return (r["method"].astype(str) + " · " + r["comm"].astype(str) + " · " + r["neighbors"].map("{:.0f}-nbr".format)
            + np.where(extra != "", " · " + extra.str.strip(), ""))


def phase_bars(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    """--phases: a stacked bar per halo row (µs per exchange: post, pack + send, wait, unpack), so that one
    sees which phase the time goes to; rows whose method has no separable phases are named under the bars."""
    cols = [f"phase_{p}_s" for p in PHASES]
    if not set(cols) <= set(g.columns):
        return None
    h = g[(g["test"] == "halo") & ~g["failed"] & g[cols].notna().any(axis=1)]
    if h.empty:
        return None
    fig, ax = pyplot().subplots(figsize=(7.5, 0.9 + 0.28 * len(h)))
    y, left = np.arange(len(h)), np.zeros(len(h))
    for p, c in zip(PHASES, cols):
        v = h[c].fillna(0).to_numpy(float) * 1e6
        ax.barh(y, v, left=left, label=PHASE_LABELS.get(p, p), color=COLORS[PHASES.index(p) % len(COLORS)])
        left += v
    ax.set_yticks(y, phase_label(h))
    ax.invert_yaxis()
    ax.set_xlabel("µs per exchange (median; the slowest rank's phases of each repetition)")
    ax.legend(fontsize=7, frameon=False, loc="lower right")
    why = g["phase_na"].fillna("").astype(str) if "phase_na" in g else pd.Series("", g.index)
    na = g.loc[(g["test"] == "halo") & (why != ""), "method"].unique()
    if len(na):
        ax.set_title("no separable phases: " + ", ".join(map(str, na)), fontsize=8)
    fig.suptitle(title, fontsize=10)
    return save(fig, name, title)


def plots(g: pd.DataFrame, stat: str, ctx: str, base: str) -> list[Plot]:
    """The block's halo plots per mesh and size, rate against size, then a sweep per other test."""
    out: list[Plot] = []
    g = split_overlap(g)[0]
    for (per, b), h in groups(g[g["test"] == "halo"], ["periodic", "bytes"]):
        kind = "periodic" if per == 1 else "non-periodic"
        p = halo_bars(h, f"halo exchange, {kind}, {fmt_bytes(b)} B per neighbour\n{ctx}",
                      f"{base}-halo-{kind}-{int(b)}")
        if p:
            out.append(p)
        p = phase_bars(h, f"where the time goes: halo exchange, {kind}, {fmt_bytes(b)} B per neighbour\n{ctx}",
                       f"{base}-halo-phases-{kind}-{int(b)}")
        if p:
            out.append(p)
    out += size_plots(g, ctx, base)
    return out + per_test(g, stat, ctx, base)


# ---------------------------------------------------------------- findings

def strided_faces_crossed(nprocs: float, dims: float) -> bool:
    """Whether a strided face of --layout array went to another process.  The strided faces are those across
    grid dimensions 1 .. dims-1 (the columns in 2-D, two of the three pairs in 3-D: docs/halo-array.md); the
    process grid is MPI_Dims_create's, as square as possible with the largest extent first
    (src/halocompare/grid.c), so those dimensions hold 2 or more processes exactly where nprocs has a divisor
    between 1 and itself.  A prime count (2 above all) is an nprocs × 1 grid: its strided faces have no
    neighbour (non-periodic) or are the process's own (periodic)."""
    n = int(nprocs) if math.isfinite(nprocs) else 0
    return dims >= 2 and any(n % k == 0 for k in range(2, math.isqrt(max(n, 0)) + 1))


def no_strided_face(nprocs: float, periodic: float) -> str:
    """The sentence that says no strided face crossed ranks at nprocs processes."""
    where = "wraps onto the process itself" if periodic == 1 else "has no neighbour"
    return (f"no strided face crossed ranks (a {int(nprocs)}×1 grid: each strided face {where}), so it speaks for "
            "the contiguous faces (and any edges and corners) only")


def best_per_packing(w: pd.DataFrame, packing: pd.Series) -> pd.DataFrame:
    """--layout array: each packing at its best across methods — its fastest row (lowest time) — fastest first."""
    k = w.assign(_packing=packing.to_numpy()).loc[lambda x: x["_packing"] != ""]
    k = k.sort_values("time_median_s", kind="stable")
    return k.drop_duplicates("_packing").drop(columns="_packing")


def packing_cost(w: pd.DataFrame, packing: pd.Series, what: str) -> list[tuple[str, str]]:
    """--layout array: hand packing against datatypes, each packing judged across methods — its best row against
    the other's best row (neither side picked on the other's terms) — and method by method, with how many methods
    each wins outside the noise; where no strided face crossed ranks (a prime process count), that is said."""
    best = best_per_packing(w, packing)
    pk = param_values(best["params"], "packing")
    dt, hand = best[(pk == "datatype").to_numpy()], best[(pk == "pack").to_numpy()]
    if dt.empty or hand.empty:
        return []
    a, c = hand.iloc[0], dt.iloc[0]
    text = pair(f"Hand packing vs datatypes, halo {what}, each packing at its best across methods", a, c,
                f"copy loops (pack) with {a['method']}", f"subarray datatypes in place with {c['method']}", mbps,
                "pack / datatype", ratio(a["mbps"], c["mbps"]))
    by = w.assign(_p=packing.to_numpy(), _k=without_param(w["params"], "packing").to_numpy())
    both = by[by["_p"] == "pack"].merge(by[by["_p"] == "datatype"], on=["method", "_k"], suffixes=("", "_dt"))
    if len(both) > 1:
        dtc = [c for c in both.columns if c.endswith("_dt")]
        verdicts = [judgement(cast(pd.Series, x), cast(pd.Series, y)) for x, y in zip(  # (read by key only)
            both.drop(columns=dtc).to_dict("records"),
            both[dtc].rename(columns=lambda s: s.removesuffix("_dt")).to_dict("records"))]
        won = sum(j.verdict == "called" and j.factor < 1 for j in verdicts)
        lost = sum(j.verdict == "called" and j.factor > 1 for j in verdicts)
        tie = sum(j.verdict == "noise" for j in verdicts)
        text += (f" Method by method ({len(verdicts)} with both): pack faster outside the noise with {won}, "
                 f"datatypes with {lost}, within the noise {tie}, not judged {len(verdicts) - won - lost - tie}.")
    nprocs, dims = float(w["nprocs"].max()), float(param_numbers(w["params"], "dims").fillna(2).max())
    if not strided_faces_crossed(nprocs, dims):
        text += f" Note: {no_strided_face(nprocs, float(w['periodic'].iloc[0]))}."
    return [("hand packing vs datatypes", text)]


def ordering_method(measured: pd.Index) -> str | None:
    """The method rank orderings are judged on, among those measured on several communicators:
    ORDERING_METHOD, else the first that is neither one-sided nor PERSISTENT (their objects carry a speed of
    their own), else the first that is not one-sided, else the first."""
    if ORDERING_METHOD in measured:
        return ORDERING_METHOD
    two_sided = measured[families(pd.Series(measured)).to_numpy() != schema.ONE_SIDED]
    plain = two_sided[~two_sided.isin(PERSISTENT)]  # requests made per exchange: comparable inside one launch
    for pick in (plain, two_sided, measured):
        if len(pick):
            return str(pick[0])
    return None


def ordering(s: pd.DataFrame, meth: str, what: str, nprocs: float) -> list[tuple[str, str]]:
    """The rank-ordering finding over s (one method's rows on several communicators): ranked only where the
    communicators can differ (more than two processes) and, for a method whose objects carry a speed of their
    own (one-sided windows, PERSISTENT requests), only across launches."""
    e = ranked(s, "mbps")
    if not e:
        return []
    comms = ", ".join(dict.fromkeys(s["comm"].astype(str)))
    if nprocs <= 2:
        return [("rank ordering", (f"{what}: not ranked — at {int(nprocs)} processes every communicator ({comms}) is "
                 f"the same map of the ranks onto the grid, so rank orderings cannot differ here "
                 f"({fmt(float(s['mbps'].min()))} to {fmt(float(s['mbps'].max()))} MB/s)."))]
    own = families(pd.Series([meth])).iloc[0] == schema.ONE_SIDED or meth in PERSISTENT
    if own and one_launch(s):
        kind = "window" if meth not in PERSISTENT else "persistent requests"
        return [("rank ordering", (f"{what}: not judged inside one launch — each communicator has its own {kind}, "
                 "whose speed is fixed for the launch; judge across launches (scripts/launches)."))]
    return [("rank ordering", spread(what, e[0], e[2], "comm", mbps, "communicator", second=e[1]))]


def findings(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    m, ov = split_overlap(m)
    for (n, p, b, comm), s in groups(ov[ov["test"] == "halo"], ["neighbors", "periodic", "bytes", "comm"],
                                     dropna=False):
        if comm != "world" and (ov["comm"] == "world").any():
            continue  # the methods on world, as the other findings; every communicator where world was not run
        st = stencil(n, p) + (f", {fmt_bytes(b)} B" if math.isfinite(b) else "")
        f = overlap(f"Overlap, halo {st}, {comm} (computation {param_values(s['params'], 'overlap').iloc[0]}× each "
                    f"method's time){where}", s, "method", "exchange")
        if f:
            out.append(("overlap", f))
    h = m[(m["test"] == "halo") & ~mocked(m["params"])]  # --mock rows exchange nothing: no method to judge
    one = m[m["test"] == "one-sender"]
    nprocs = float(h["nprocs"].max()) if len(h) else math.nan
    # two processes on a non-periodic 2×1 grid: every stencil is one message to the other process, so 4 and 8
    # neighbours coincide and no process is interior (periodic, the wrapped diagonals are messages of their own)
    coincide = nprocs <= 2 and {4.0, 8.0} <= set(h["neighbors"].astype(float))
    for (n, p, b), s in groups(h, ["neighbors", "periodic", "bytes"], dropna=False):
        st = stencil(n, p) + (f", {fmt_bytes(b)} B" if math.isfinite(b) else "")
        comm = "world" if (s["comm"] == "world").any() else str(s["comm"].iloc[0])
        w = s[s["comm"] == comm]
        packing = param_values(w["params"], "packing")
        array = " (array layout: method × packing)" if (packing != "").any() else ""
        e3 = ranked(w, "mbps")
        if e3 and coincide and n == 8 and p == 0:
            out.append(("halo methods", (f"Halo {st}, {comm}{where}: at {int(nprocs)} processes the 8-neighbour "
                        "stencil is the 4-neighbour one (no diagonal neighbour exists): see the 4-neighbour finding.")))
        elif e3:
            out.append(("halo methods", spread(f"Halo {st}, {comm}{where}{array}", e3[0], e3[2], "method", mbps,
                                                "method", second=e3[1])))
        out += packing_cost(w, packing, f"{st}, {comm}{where}")
        per_method = s.groupby("method", sort=False)["comm"].nunique()
        per_method = per_method[per_method > 1]
        meth = ordering_method(per_method.index)
        if meth:
            out += ordering(s[s["method"] == meth], meth, f"Rank ordering, halo {st}{where} with {meth}", nprocs)
        fam = families(w["method"])
        rma = w[fam == schema.ONE_SIDED]
        p2p = w[fam == schema.POINT_TO_POINT]
        if len(rma) and len(p2p):
            a = rma.sort_values("mbps", ascending=False).iloc[0]
            c = p2p.sort_values("mbps", ascending=False).iloc[0]
            out.append(("one-sided vs send/recv", pair(
                f"One-sided vs send/recv, halo {st}, {comm}{where}", a, c,
                f"best one-sided method {name(a, 'method')}", f"best send/recv method {name(c, 'method')}",
                mbps, "one-sided / send-recv", ratio(a["mbps"], c["mbps"]))))
        o = one[(one["neighbors"] == n) & (one["periodic"] == p) & ((one["bytes"] == b) | one["bytes"].isna())]
        ref = s[(s["comm"] == "world") & (s["method"] == ORDERING_METHOD)]
        if len(o) and len(ref) and nprocs <= 2 and p == 0:
            out.append(("one-sender / halo", (f"One sender, {st}{where}: not compared — at {int(nprocs)} processes no "
                        "process is interior (its neighbours are the other process or none), so one sender alone "
                        "and the halo exchange send the same messages.")))
        elif len(o) and len(ref):
            a, c = o.iloc[0], ref.iloc[0]
            out.append(("one-sender / halo", pair(
                f"One sender, {st}{where}", a, c, "one process sending alone reaches",
                f"a process in the halo exchange (world, {ORDERING_METHOD})", mbps, "one-sender / halo",
                ratio(a["mbps"], c["mbps"]))))
    pk = m[m["test"] == "pack"]
    for (n, b), s in groups(pk, ["neighbors", "bytes"], dropna=False):
        copy = s[s["method"] == "memcpy"]
        hand = s[s["method"] == "pack"]
        if len(copy) and len(hand):
            a, c = hand.iloc[0], copy.iloc[0]
            out.append(("packing on its own", pair(
                f"Packing on its own, {int(n)}-nbr stencil, {fmt_bytes(b)} B faces{where}", a, c,
                "copy loops packing and unpacking every region", "memcpy of the same bytes", mbps, "pack / memcpy",
                ratio(a["mbps"], c["mbps"]))))
    return out
