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

from .load import groups
from .tables import fmt, fmt_bytes, is_rate, with_values

MAX_SERIES = 12
SERIES = ["method", "comm", "neighbors", "periodic", "threads"]
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


def series_name(key: tuple[object, ...]) -> str:
    parts = []
    for name, v in zip(SERIES, key):
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
        else:
            parts.append(str(v))
    return " ".join(parts) or "all"


def _band(g: pd.DataFrame, rate_test: bool, stat: str) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = g["time_ci_lo_s"].to_numpy(float), g["time_ci_hi_s"].to_numpy(float)
    if rate_test:
        sent = g["sent_bytes"].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return sent / hi / 1e6, sent / lo / 1e6
    return lo * 1e6, hi * 1e6


def _fill_keys(d: pd.DataFrame) -> pd.DataFrame:
    d = d.copy()
    for k in ("neighbors", "periodic", "threads", "bytes"):
        d[k] = d[k].fillna(-1.0)
    return d


def sweep(g: pd.DataFrame, stat: str, title: str, name: str) -> Plot | None:
    """value vs bytes, one line per series, the CI of the median as a band."""
    g = g[~g["na"] & (g["bytes"] > 0)]
    if g["bytes"].nunique() < 2:
        return None
    rate_test = is_rate(str(g["program"].iloc[0]), str(g["test"].iloc[0]))
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    keys = list(dict.fromkeys(g[SERIES].itertuples(index=False, name=None)))
    for i, key in enumerate(keys[:MAX_SERIES]):
        s = g[(g[SERIES] == pd.Series(key, index=SERIES)).all(axis=1)].groupby("bytes").median(numeric_only=True)
        s = s.reset_index().sort_values("bytes")
        ax.plot(s["bytes"], s["value"], marker="o", ms=3, lw=1.5, label=series_name(key))
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
    """Grouped bars per communicator, one bar per method; a panel per neighbour count."""
    g = g[g["test"] == "halo"]
    if g.empty:
        return None
    nbrs = sorted(int(x) for x in g["neighbors"].dropna().unique())
    methods = list(dict.fromkeys(g["method"]))
    comms = list(dict.fromkeys(g["comm"]))
    fig, axes = plt.subplots(1, max(1, len(nbrs)), figsize=(5.2 * max(1, len(nbrs)), 4.0), sharey=True,
                             squeeze=False)
    width = 0.8 / max(1, len(methods))
    for ax, n in zip(axes[0], nbrs):
        h = g[g["neighbors"] == n].groupby(["comm", "method"], sort=False)["value"].median()
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


def heatmap(g: pd.DataFrame, title: str, name: str) -> Plot | None:
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
    ref = g[(g["method"] == "sendrecv") & ~g["na"]].groupby("bytes")["time_median_s"].median()
    r = g[(g["method"] != "sendrecv") & ~g["na"]]
    if ref.empty or r.empty or r["bytes"].nunique() < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.2, 4.0))
    for i, ((m, c), s) in enumerate(groups(r, ["method", "comm"], sort=False)):
        if i >= MAX_SERIES:
            break
        t = s.groupby("bytes")["time_median_s"].median()
        ax.plot(t.index, t.to_numpy() / ref.reindex(t.index).to_numpy(), marker="o", ms=3, label=f"{m} / {c}")
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
    h = g.groupby(["bytes", "thread_level"])["value"].median()
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
    d = d[~d["na"]]
    for (label, prog, test), g in groups(d, ["label", "program", "test"]):
        if g["nprocs"].nunique() < 2:
            continue
        sizes = g["bytes"].unique()
        b = sorted(sizes)[len(sizes) // 2]
        g = g[g["bytes"] == b]
        keys = list(dict.fromkeys(g[SERIES].itertuples(index=False, name=None)))
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        for key in keys[:MAX_SERIES]:
            s = g[(g[SERIES] == pd.Series(key, index=SERIES)).all(axis=1)].groupby("nprocs")["value"].median()
            if len(s) > 1:
                ax.plot(s.index, s.to_numpy(), marker="o", ms=3, label=series_name(key))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("MPI processes")
        ax.set_ylabel("MB/s per process" if g["unit"].iloc[0] == "MB/s" else f"time [µs] ({stat})")
        sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
        title = f"{label} — {prog} {test}, {fmt_bytes(b)} B: scaling with ranks{sim}"
        ax.set_title(title)
        ax.legend(fontsize=7, frameon=False)
        out.append(_save(fig, f"{label}-{prog}-{test}-scaling", title))
    return out


def all_plots(df: pd.DataFrame, stat: str = "median") -> list[Plot]:
    d = _fill_keys(with_values(df, stat))
    out: list[Plot] = []
    for (label, lib, prog, nprocs), g in groups(d, ["label", "library", "program", "nprocs"]):
        ctx = context(g)
        base = f"{label}-{prog}-np{int(nprocs)}"
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
    th = d[(d["program"] == "threads") & d["test"].str.startswith("overhead") & ~d["na"]]
    for (label, lib, test), g in groups(th, ["label", "library", "test"]):
        sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
        p = overhead_bars(g, f"thread-level overhead: {test}\n{label} · {lib}{sim}", f"{label}-threads-{test}-levels")
        if p:
            out.append(p)
    out += scaling(d, stat)
    return out


def compare_plots(d: pd.DataFrame, stat: str, names: list[str], max_plots: int = 24) -> list[Plot]:
    """Overlays: per (program, test) the sets in colour, up to 3 series as line styles."""
    d = d[~d["na"].astype(bool)]
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
        if g["bytes"].nunique() >= 2:
            fig, ax = plt.subplots(figsize=(7.2, 4.2))
            keys = list(g[SERIES].drop_duplicates().head(3).itertuples(index=False, name=None))
            chosen = g.merge(pd.DataFrame(keys, columns=SERIES), on=SERIES)
            med = chosen.groupby(["set", *SERIES, "bytes"], sort=True)["value"].median()
            for si, name in enumerate(names):
                for ki, key in enumerate(keys):
                    try:
                        s = med.loc[(name, *key)]
                    except KeyError:
                        continue
                    if not s.empty:
                        ax.plot(s.index, s.to_numpy(), styles[ki], color=COLORS[si % len(COLORS)], marker="o", ms=3,
                                label=f"{name}: {series_name(key)}")
            bytes_axis(ax)
            log_y(ax)
        elif prog == "halocompare" and test == "halo":
            fig, ax = plt.subplots(figsize=(7.2, 4.2))
            h = g.groupby(["set", "method"], sort=False)["value"].median()
            methods = list(dict.fromkeys(g["method"]))
            x = np.arange(len(methods))
            w = 0.8 / len(names)
            for si, name in enumerate(names):
                ax.bar(x + (si - (len(names) - 1) / 2) * w, [h.get((name, m), np.nan) for m in methods], w,
                       label=name, color=COLORS[si % len(COLORS)])
            ax.set_xticks(x, methods, rotation=20)
            ax.grid(axis="x", visible=False)
        else:
            continue
        ax.set_ylabel("bandwidth [MB/s per process]" if rate_test else f"time [µs] ({stat})")
        title = f"{prog} {test}: " + " vs ".join(names)
        if prog == "halocompare" and test == "halo":
            title += "\n(median over communicators, neighbour counts and periodicity)"
        ax.set_title(title)
        ax.legend(fontsize=7, frameon=False)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.14 if rate_test or g["bytes"].nunique() >= 2 else 0.2,
                            top=0.86 if "\n" in title else 0.91)
        out.append(_save(fig, f"compare-{prog}-{test}", title, svg=False, tight=False))
    return out
