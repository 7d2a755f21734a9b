"""Plots (matplotlib, Agg): size sweeps with CI bands, halo bars, all-pairs heat
maps, RMA/send-recv ratios, thread overhead, scaling; and the overlays of compare."""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from typing import Any

import matplotlib
from cycler import cycler

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogFormatter

from .keys import resolve_duplicates, split_sync
from .load import groups
from .tables import fmt, fmt_bytes, heat_colour, is_rate, with_values, with_variant

MAX_SERIES = 12
MAX_BARS = 6  # more bars per group than this and a halo plot becomes a heat map
# What tells the lines of one plot apart: every key column a plot does not fix (variant: params that differ).
SERIES = ["method", "comm", "neighbors", "periodic", "threads", "thread_level", "variant", "ppn"]
COLORS = ["#1f5aa6", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6a9f", "#f26419", "#4d4d4d",
          "#66a182", "#b5651d", "#111111"]
plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.grid": True, "grid.alpha": 0.3,
                     "axes.spines.top": False, "axes.spines.right": False, "svg.hashsalt": "mpimb",
                     "axes.prop_cycle": cycler(color=COLORS)})


@dataclass
class Plot:
    name: str
    title: str
    png: bytes
    svg: bytes


def _save(fig: Figure, name: str, title: str, svg: bool = True, tight: bool = True) -> Plot:
    if tight:
        fig.tight_layout()
    b = io.BytesIO()
    fig.savefig(b, format="png", dpi=100, pil_kwargs={"compress_level": 3})
    s = io.BytesIO()
    if svg:
        fig.savefig(s, format="svg", metadata={"Date": None})
    plt.close(fig)
    return Plot(re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_"), title, b.getvalue(), s.getvalue())


def context(g: pd.DataFrame) -> str:
    r = g.iloc[0]
    sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
    return f"{r['label']} · {r['library']} · {int(r['nprocs'])} ranks{sim}"


class _Plain(LogFormatter):
    """LogFormatter's choice of which ticks to label, printed as plain numbers (0.3, 2, 3000)."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return fmt(x) if super().__call__(x, pos) else ""


def log_y(ax: Axes) -> None:
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(_Plain(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(_Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def bytes_axis(ax: Axes) -> None:
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(v) if v >= 1 else f"{v:g}"))
    ax.set_xlabel("message size [bytes]")


def series_name(key: tuple[object, ...], shown: list[str] | None = None) -> str:
    """A legend entry; shown: the SERIES columns that differ between the plot's lines (default all)."""
    parts = []
    for name, v in zip(SERIES, key):
        if shown is not None and name not in shown:
            continue
        if isinstance(v, float) and (math.isnan(v) or v < 0):
            continue
        if v in ("", None):
            continue
        if name == "neighbors":
            parts.append(f"{int(v)}-nbr")  # type: ignore[call-overload]
        elif name == "periodic":
            parts.append("periodic" if v == 1 else "non-periodic")
        elif name == "threads":
            if v != 1:
                parts.append(f"{int(v)} threads")  # type: ignore[call-overload]
        elif name == "ppn":
            parts.append(f"{int(v)} per node")  # type: ignore[call-overload]
        elif name == "thread_level":
            parts.append(f"MPI_THREAD_{str(v).upper()}")
        else:
            parts.append(str(v))
    return " ".join(parts) or "all"


def varying(keys: list[tuple[object, ...]]) -> list[str]:
    """The SERIES columns whose values differ among keys (what a legend needs to say);
    method, comm, neighbors and periodic are always named where they are set."""
    out = []
    for i, name in enumerate(SERIES):
        vals = {str(k[i]) for k in keys}
        if len(vals) > 1 or name in ("method", "comm", "neighbors", "periodic"):
            out.append(name)
    return out


def _band(g: pd.DataFrame, rate_test: bool, stat: str) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = g["time_ci_lo_s"].to_numpy(float), g["time_ci_hi_s"].to_numpy(float)
    if rate_test:
        sent = g["sent_bytes"].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return sent / hi / 1e6, sent / lo / 1e6
    return lo * 1e6, hi * 1e6


def _fill_keys(d: pd.DataFrame) -> pd.DataFrame:
    d, _ = with_variant(d)
    for k in ("neighbors", "periodic", "threads", "bytes", "nnodes", "ppn"):
        d[k] = d[k].fillna(-1.0)
    return d


def sweep(g: pd.DataFrame, stat: str, title: str, name: str) -> Plot | None:
    """value vs bytes, one line per series, the CI of the median as a band."""
    g = g[~g["na"] & ~g["failed"] & (g["bytes"] > 0)]
    if g["bytes"].nunique() < 2:
        return None
    rate_test = is_rate(str(g["program"].iloc[0]), str(g["test"].iloc[0]))
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    keys = list(dict.fromkeys(g[SERIES].itertuples(index=False, name=None)))
    shown = varying(keys)
    for i, key in enumerate(keys[:MAX_SERIES]):
        # one row per (series, size): every key column is a SERIES column or fixed by the plot
        s = g[(g[SERIES] == pd.Series(key, index=SERIES)).all(axis=1)].sort_values("bytes")
        ax.plot(s["bytes"], s["value"], marker="o", ms=3, lw=1.5, label=series_name(key, shown))
        if stat == "median" and len(keys) <= 4:  # bands only where they stay readable
            lo, hi = _band(s, rate_test, stat)
            ax.fill_between(s["bytes"], lo, hi, alpha=0.2, lw=0)
    bytes_axis(ax)
    log_y(ax)
    ax.set_ylabel("bandwidth [MB/s per process]" if rate_test else f"time [µs] ({stat})")
    ax.set_title(title)
    if len(keys) > 1:
        ax.legend(fontsize=7, ncol=2 if len(keys) > 5 else 1, frameon=False)
    if len(keys) > MAX_SERIES:
        ax.text(0.99, 0.01, f"first {MAX_SERIES} of {len(keys)} series", transform=ax.transAxes, ha="right",
                fontsize=7, color="#666")
    return _save(fig, name, title)


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
    fig, axes = plt.subplots(1, max(1, len(nbrs)), figsize=(5.2 * max(1, len(nbrs)), 4.0), sharey=True,
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
    return _save(fig, name, title)


def halo_heat(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    """Communicator × method per neighbour count, each cell coloured by its rate relative to the
    best of its row (as the report's heat-map tables) and labelled with the MB/s; FAILED and n/a
    cells say so."""
    nbrs = sorted(int(x) for x in g["neighbors"].dropna().unique() if x >= 0)
    if not nbrs:
        return None
    g = g.assign(col=np.where(g["variant"] != "", g["method"] + "\n" + g["variant"], g["method"]))
    cols = list(dict.fromkeys(g["col"]))
    comms = list(dict.fromkeys(g["comm"]))
    fig, axes = plt.subplots(len(nbrs), 1, figsize=(max(6.0, 0.85 * len(cols) + 1.6), 1.0 + 0.42 * len(comms) *
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
                    rgb[i, j] = matplotlib.colors.to_rgb(_hsl(heat_colour(float(rel[i, j]))))
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
    return _save(fig, name, title)


def _hsl(css: str) -> tuple[float, float, float]:
    """'hsl(h, s%, l%)' (tables.heat_colour) as an RGB triple."""
    import colorsys

    h, sat, light = (float(x.strip().rstrip("%")) for x in css[4:-1].split(","))
    r, g, b = colorsys.hls_to_rgb(h / 360, light / 100, sat / 100)
    return r, g, b


def heatmap(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    g = g[~g["failed"]]
    ab = g["method"].str.split("-", n=1, expand=True)
    if ab.shape[1] != 2:
        return None
    a = pd.to_numeric(ab[0], errors="coerce")
    b = pd.to_numeric(ab[1], errors="coerce")
    ok = a.notna() & b.notna()
    if not ok.any():
        return None
    n = int(max(a[ok].max(), b[ok].max())) + 1
    m = np.full((n, n), np.nan)
    for i, j, v in zip(a[ok].astype(int), b[ok].astype(int), g["value"][ok]):
        m[i, j] = m[j, i] = v
    unit = str(g["unit"].iloc[0])
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    im = ax.imshow(m, cmap="viridis_r" if unit == "µs" else "viridis", origin="upper")
    fig.colorbar(im, ax=ax, label="time [µs]" if unit == "µs" else "bandwidth [MB/s]")
    ax.set_xlabel("rank")
    ax.set_ylabel("rank")
    ax.grid(False)
    ax.set_title(title)
    return _save(fig, name, title)


def rma_ratio(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    g = g[~g["na"] & ~g["failed"]]
    ref = g[g["method"] == "sendrecv"].set_index(["variant", "bytes"])["time_median_s"]
    r = g[g["method"] != "sendrecv"]
    if ref.empty or r.empty or r["bytes"].nunique() < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.2, 4.0))
    for i, ((m, c, v), s) in enumerate(groups(r, ["method", "comm", "variant"], sort=False)):
        if i >= MAX_SERIES:
            break
        t = s.set_index("bytes")["time_median_s"].sort_index()
        base = ref.reindex(pd.MultiIndex.from_product([[v], t.index])).to_numpy()
        ax.plot(t.index, t.to_numpy() / base, marker="o", ms=3, label=f"{m} / {c}" + (f" [{v}]" if v else ""))
    ax.axhline(1.0, color="#333", lw=0.8, ls="--")
    bytes_axis(ax)
    ax.set_ylabel("time RMA / time send-recv  (< 1: RMA faster)")
    ax.set_title(title)
    ax.legend(fontsize=7, frameon=False, ncol=2)
    return _save(fig, name, title)


def overhead_bars(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    """Thread-level overhead: bars per size, one bar per provided thread level."""
    if g.empty:
        return None
    levels = [lv for lv in ("single", "funneled", "serialized", "multiple") if lv in set(g["thread_level"])]
    sizes = sorted(g["bytes"].unique())
    h = g.set_index(["bytes", "thread_level"])["value"]  # one row each: the plot is per variant
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    x = np.arange(len(sizes))
    w = 0.8 / max(1, len(levels))
    for j, lv in enumerate(levels):
        ax.bar(x + (j - (len(levels) - 1) / 2) * w, [h.get((s, lv), np.nan) for s in sizes], w,
               label=f"MPI_THREAD_{lv.upper()}")
    ax.set_xticks(x, [fmt_bytes(s) for s in sizes])
    ax.set_xlabel("message size [bytes]")
    ax.set_ylabel(f"{'bandwidth [MB/s]' if g['unit'].iloc[0] == 'MB/s' else 'time [µs]'}")
    log_y(ax)
    ax.grid(axis="x", visible=False)
    ax.legend(fontsize=7, frameon=False)
    ax.set_title(title)
    return _save(fig, name, title)


def scaling(d: pd.DataFrame, stat: str) -> list[Plot]:
    """value vs ranks for keys measured at several process counts (one plot per program/test)."""
    out: list[Plot] = []
    # a run's start synchronisation (sync=window|barrier, chosen per run) does not split a line
    d, _ = with_variant(split_sync(d[~d["na"] & ~d["failed"]]))
    many_libs = d.groupby("label")["library"].nunique()
    for (label, lib, prog, test), g in groups(d, ["label", "library", "program", "test"]):
        if g["nprocs"].nunique() < 2:
            continue
        sizes = g["bytes"].unique()
        b = sorted(sizes)[len(sizes) // 2]
        g = g[g["bytes"] == b]
        # a line keeps the node count (ranks added per node) or, across node counts, the ranks per node:
        # either way (line, nprocs) is one layout, so no two layouts share a point
        fixed_nodes = g["nnodes"].nunique() == 1
        keys = [(*k, -1.0) if fixed_nodes else k for k in dict.fromkeys(
            g[SERIES[:-1] if fixed_nodes else SERIES].itertuples(index=False, name=None))]
        shown = varying(keys)
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        lines = 0
        for key in keys[:MAX_SERIES]:
            cols = SERIES[:-1] if fixed_nodes else SERIES
            s = g[(g[cols] == pd.Series(key[:len(cols)], index=cols)).all(axis=1)].sort_values("nprocs")
            if len(s) > 1:
                ax.plot(s["nprocs"], s["value"].to_numpy(), marker="o", ms=3, label=series_name(key, shown))
                lines += 1
        if not lines:  # no configuration at two process counts
            plt.close(fig)
            continue
        ax.set_xscale("log", base=2)
        ax.set_xlabel("MPI processes")
        ax.set_ylabel("MB/s per process" if g["unit"].iloc[0] == "MB/s" else f"time [µs] ({stat})")
        sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
        title = f"{label} — {prog} {test}, {fmt_bytes(b)} B: scaling with ranks{sim}"
        ax.set_title(title)
        ax.legend(fontsize=7, frameon=False)
        tag = "-" + re.sub(r"[^A-Za-z0-9.]+", "", str(lib)) if many_libs[label] > 1 else ""
        out.append(_save(fig, f"{label}-{prog}-{test}-scaling{tag}", title))
    return out


def _suffixes(d: pd.DataFrame) -> dict[tuple[Any, ...], str]:
    """File-name suffix per (label, library, program, nprocs, nnodes, ppn): empty unless one label
    has that program at that size on several libraries or layouts (names must not collide)."""
    blocks = d[["label", "library", "program", "nprocs", "nnodes", "ppn"]].drop_duplicates()
    out = {}
    for _, g in groups(blocks, ["label", "program", "nprocs"]):
        libs, lays = g["library"].nunique() > 1, g[["nnodes", "ppn"]].drop_duplicates().shape[0] > 1
        for r in g.itertuples(index=False):
            suf = ("-" + re.sub(r"[^A-Za-z0-9.]+", "", str(r.library)) if libs else "") + \
                (f"-{r.nnodes:.0f}x{r.ppn:.0f}" if lays else "")
            out[tuple(r)] = suf
    return out


def all_plots(df: pd.DataFrame, stat: str = "median") -> list[Plot]:
    df, _ = resolve_duplicates(df)
    d = _fill_keys(with_values(df, stat))
    out: list[Plot] = []
    suffixes = _suffixes(d)
    for key, g in groups(d, ["label", "library", "program", "nprocs", "nnodes", "ppn"]):
        label, lib, prog, nprocs = key[:4]
        ctx = context(g)
        base = f"{label}-{prog}-np{int(nprocs)}{suffixes[key]}"
        lib_coll = g[(g["program"] == "collectives") & (g["method"] == "library")]
        if not lib_coll.empty:
            lc = lib_coll.assign(method=lib_coll["test"], comm="")
            blocking = {str(t) for t in lc["test"]}
            nb = lc["test"].isin([t for t in blocking if t.startswith("i") and t[1:] in blocking])
            for part, kind, suffix in ((lc[~nb], "blocking", "library"), (lc[nb], "nonblocking", "library-nb")):
                p = sweep(part, stat, f"collectives (library, {kind}), time per call\n{ctx}", f"{base}-{suffix}") \
                    if not part.empty else None
                if p:
                    out.append(p)
        if prog == "halocompare":
            for (per, b), h in groups(g[g["test"] == "halo"], ["periodic", "bytes"]):
                kind = "periodic" if per == 1 else "non-periodic"
                p = halo_bars(h, f"halo exchange, {kind}, {fmt_bytes(b)} B per neighbour\n{ctx}",
                              f"{base}-halo-{kind}-{int(b)}")
                if p:
                    out.append(p)
            from .halo_sizes import size_plots  # here, not at the top: halo_sizes builds on this module
            out += size_plots(g, ctx, base)
        for (test,), t in groups(g, ["test"], sort=False):
            test = str(test)
            if test.startswith("allpairs"):
                for (b,), h in groups(t, ["bytes"]):
                    p = heatmap(h, f"{test}, {fmt_bytes(b)} B\n{ctx}", f"{base}-{test}-{int(b)}-heatmap")
                    if p:
                        out.append(p)
                continue
            if prog == "threads" and test.startswith("overhead"):
                continue
            if prog == "collectives" and set(t["method"]) <= {"library"}:
                continue  # drawn together below
            p = sweep(t, stat, f"{prog} {test}\n{ctx}", f"{base}-{test}")
            if p:
                out.append(p)
            if prog == "rma":
                p = rma_ratio(t, f"{test}: RMA vs send-recv\n{ctx}", f"{base}-{test}-ratio")
                if p:
                    out.append(p)
    # thread overhead: the per-level runs are separate files, so group across runs.
    th = d[(d["program"] == "threads") & d["test"].str.startswith("overhead") & ~d["na"] & ~d["failed"]]
    for (label, lib, test, var, nprocs, ppn), g in groups(th, ["label", "library", "test", "variant", "nprocs",
                                                                "ppn"]):
        sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
        many = th[(th["label"] == label) & (th["test"] == test)][["library", "variant", "nprocs", "ppn"]]
        tag = "" if len(many.drop_duplicates()) == 1 else "-" + re.sub(r"[^A-Za-z0-9.=]+", "_",
                                                                          f"{lib}-{var}-np{nprocs:.0f}-{ppn:.0f}")
        p = overhead_bars(g, f"thread-level overhead: {test}{f' [{var}]' if var else ''}\n{label} · {lib}{sim}",
                          f"{label}-threads-{test}-levels{tag}")
        if p:
            out.append(p)
    out += scaling(d, stat)
    return out


COMPARE_SERIES = [*(c if c != "variant" else "params" for c in SERIES), "nprocs", "nnodes"]
P2P = ["irecv-send", "irecv-isend", "phased", "persistent", "sendrecv"]


def compare_plots(d: pd.DataFrame, stat: str, names: list[str], max_plots: int = 24) -> list[Plot]:
    """Overlays: per (program, test) the machines in colour, up to 3 series as line styles (a series
    is every key column but the size, so nothing is merged); halo: the point-to-point methods on
    world, 4 neighbours, non-periodic (or the first stencil present), a bar per machine and layout."""
    d = d.loc[~d["na"].to_numpy(bool), ["set", "program", "test", *COMPARE_SERIES, "bytes", "value"]]
    for k in ("nnodes", "ppn"):
        d[k] = d[k].fillna(-1.0)
    out: list[Plot] = []
    styles = ["-", "--", ":"]
    todo = [(k, g) for k, g in groups(d, ["program", "test"]) if not str(k[1]).startswith("allpairs")]
    # round-robin over programs so every program gets plots before the limit
    rank: dict[tuple[Any, ...], int] = {}
    seen: dict[str, int] = {}
    for (prog, test), _ in todo:
        rank[(prog, test)] = seen.get(prog, 0)
        seen[prog] = seen.get(prog, 0) + 1
    todo.sort(key=lambda kg: (rank[kg[0]], kg[0][0]))
    for (prog, test), g in todo:
        if len(out) >= max_plots:
            break
        rate_test = is_rate(str(prog), str(test))
        title = f"{prog} {test}: " + " vs ".join(names)
        if g["bytes"].nunique() >= 2:
            fig, ax = plt.subplots(figsize=(7.2, 4.2))
            keys = list(g[COMPARE_SERIES].drop_duplicates().head(3).itertuples(index=False, name=None))
            shown = [c for i, c in enumerate(COMPARE_SERIES) if len({str(k[i]) for k in keys}) > 1 or
                     c in ("method", "comm")]
            chosen = g.merge(pd.DataFrame(keys, columns=COMPARE_SERIES).assign(ki=range(len(keys))),
                             on=COMPARE_SERIES)
            # one row per (machine, series, size): every other key column is in the series
            for gk, sel in groups(chosen.sort_values("bytes"), ["set", "ki"], sort=False):
                name, ki = str(gk[0]), int(gk[1])
                si, key = names.index(name), keys[ki]
                label = " ".join(x for x in (series_name(key[:len(SERIES)], shown),
                                             f"np{key[-2]:.0f}" if "nprocs" in shown else "") if x)
                ax.plot(sel["bytes"], sel["value"].to_numpy(), styles[ki], color=COLORS[si % len(COLORS)],
                        marker="o", ms=3, label=f"{name}: {label}")
            bytes_axis(ax)
            log_y(ax)
        elif prog == "halocompare" and test == "halo":
            h = g[g["method"].isin(P2P) & (g["comm"] == "world")]
            if h.empty:
                continue
            n = 4 if (h["neighbors"] == 4).any() else h["neighbors"].min()
            per = 0 if (h[h["neighbors"] == n]["periodic"] == 0).any() else h[h["neighbors"] == n]["periodic"].min()
            h = h[(h["neighbors"] == n) & ((h["periodic"] == per) | (h["periodic"] < 0))]
            bars = h.drop_duplicates(["set", "nprocs", "nnodes", "ppn", "bytes", "params"])[
                ["set", "nprocs", "nnodes", "ppn", "bytes", "params"]]
            bars = bars.assign(o=bars["set"].map({nm: i for i, nm in enumerate(names)})).sort_values(["o", "nprocs"])
            methods = [m for m in P2P if m in set(h["method"])]
            fig, ax = plt.subplots(figsize=(7.2, 4.2))
            x = np.arange(len(methods))
            w = 0.8 / max(1, len(bars))
            for bi, b in enumerate(bars.itertuples(index=False)):
                sel = h[(h["set"] == b.set) & (h["nprocs"] == b.nprocs) & (h["nnodes"] == b.nnodes) &
                        (h["ppn"] == b.ppn) & (h["bytes"] == b.bytes) & (h["params"] == b.params)]
                v = sel.set_index("method")["value"]
                ax.bar(x + (bi - (len(bars) - 1) / 2) * w, [v.get(m, np.nan) for m in methods], w,
                       label=f"{b.set} np{b.nprocs:.0f}", color=COLORS[names.index(str(b.set)) % len(COLORS)],
                       alpha=1.0 if bi == 0 or bars.iloc[bi - 1]["set"] != b.set else 0.6)
            ax.set_xticks(x, methods, rotation=20)
            ax.grid(axis="x", visible=False)
            title += f"\n(world, {int(n)} neighbours, {'periodic' if per == 1 else 'non-periodic'}; each machine's own size)"
        else:
            continue
        ax.set_ylabel("bandwidth [MB/s per process]" if rate_test else f"time [µs] ({stat})")
        ax.set_title(title)
        ax.legend(fontsize=7, frameon=False)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.14 if rate_test or g["bytes"].nunique() >= 2 else 0.2,
                            top=0.86 if "\n" in title else 0.91)
        out.append(_save(fig, f"compare-{prog}-{test}", title, svg=False, tight=False))
    return out
