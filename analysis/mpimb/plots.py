"""Plots of a result set: every program's plots per block (mpimb.registry), the programs' plots over
the whole set, scaling with the number of processes; and the overlays of compare.  Takes the frame
keys.prepared made (repeated runs resolved once)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from . import schema
from .keys import MACHINE, VARIANT, split_sync, with_variant
from .load import groups
from .plotting import (
    COLORS,
    MAX_SERIES,
    SERIES,
    Plot,
    bytes_axis,
    context,
    fill_keys,
    log_y,
    pyplot,
    save,
    series_name,
    varying,
)
from .registry import PROGRAMS, program
from .render import BLOCK, fmt_bytes
from .units import MBPS, US, axis_label, unit_of, with_values


def scaling(d: pd.DataFrame, stat: str) -> list[Plot]:
    """value vs ranks for keys measured at several process counts (one plot per program/test)."""
    out: list[Plot] = []
    # a run's start synchronisation (sync=window|barrier, chosen per run) does not split a line
    d, _ = with_variant(split_sync(d[~d["na"] & ~d["failed"]]))
    many_libs = d.groupby("label")["library"].nunique()
    for (label, lib, prog, test), g in groups(d, [*MACHINE, *schema.key_roles("program", "test")]):
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
        fig, ax = pyplot().subplots(figsize=(6.4, 3.8))
        lines = 0
        for key in keys[:MAX_SERIES]:
            cols = SERIES[:-1] if fixed_nodes else SERIES
            s = g[(g[cols] == pd.Series(key[:len(cols)], index=cols)).all(axis=1)].sort_values("nprocs")
            if len(s) > 1:
                ax.plot(s["nprocs"], s["value"].to_numpy(), marker="o", ms=3, label=series_name(key, shown))
                lines += 1
        if not lines:  # no configuration at two process counts
            pyplot().close(fig)
            continue
        ax.set_xscale("log", base=2)
        ax.set_xlabel("MPI processes")
        unit = str(g["unit"].iloc[0])
        ax.set_ylabel("MB/s per process" if unit == MBPS else axis_label(unit, stat))
        sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
        title = f"{label} — {prog} {test}, {fmt_bytes(b)} B: scaling with ranks{sim}"
        ax.set_title(title)
        ax.legend(fontsize=7, frameon=False)
        tag = "-" + re.sub(r"[^A-Za-z0-9.]+", "", str(lib)) if many_libs[label] > 1 else ""
        out.append(save(fig, f"{label}-{prog}-{test}-scaling{tag}", title))
    return out


def _suffixes(d: pd.DataFrame) -> dict[tuple[Any, ...], str]:
    """File-name suffix per (label, library, program, nprocs, nnodes, ppn): empty unless one label
    has that program at that size on several libraries or layouts (names must not collide)."""
    blocks = d[BLOCK].drop_duplicates()
    out = {}
    for _, g in groups(blocks, ["label", "program", "nprocs"]):
        libs, lays = g["library"].nunique() > 1, g[["nnodes", "ppn"]].drop_duplicates().shape[0] > 1
        for r in g.itertuples(index=False):
            suf = ("-" + re.sub(r"[^A-Za-z0-9.]+", "", str(r.library)) if libs else "") + \
                (f"-{r.nnodes:.0f}x{r.ppn:.0f}" if lays else "")
            out[tuple(r)] = suf
    return out


def all_plots(df: pd.DataFrame, stat: str = "median") -> list[Plot]:
    """Every plot of df (keys.prepared's frame): per block its program's, then the set's, then scaling."""
    d = fill_keys(with_values(df, stat))
    out: list[Plot] = []
    suffixes = _suffixes(d)
    for key, g in groups(d, BLOCK):
        label, _, prog, nprocs = key[:4]
        base = f"{label}-{prog}-np{int(nprocs)}{suffixes[key]}"
        out += program(str(prog)).plots(g, stat, context(g), base)
    for p in PROGRAMS.values():
        if p.set_plots is not None:
            out += p.set_plots(d, stat)
    return out + scaling(d, stat)


COMPARE_SERIES = [*(c if c != VARIANT else "params" for c in SERIES), "nprocs", "nnodes"]
# the halo bars of compare: the point-to-point methods of the schema's vocabulary, in its order
P2P = [m for m, f in schema.method_families("halocompare").items() if f == schema.POINT_TO_POINT]


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
        unit = unit_of(str(prog), str(test))
        title = f"{prog} {test}: " + " vs ".join(names)
        if g["bytes"].nunique() >= 2:
            fig, ax = pyplot().subplots(figsize=(7.2, 4.2))
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
            bar_keys = ["set", *schema.key_roles("layout", "size", "settings")]
            bars = h.drop_duplicates(bar_keys)[bar_keys]
            bars = bars.assign(o=bars["set"].map({nm: i for i, nm in enumerate(names)})).sort_values(["o", "nprocs"])
            methods = [m for m in P2P if m in set(h["method"])]
            fig, ax = pyplot().subplots(figsize=(7.2, 4.2))
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
        ax.set_ylabel(axis_label(unit, stat))
        ax.set_title(title)
        ax.legend(fontsize=7, frameon=False)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.14 if unit != US or g["bytes"].nunique() >= 2 else 0.2,
                            top=0.86 if "\n" in title else 0.91)
        out.append(save(fig, f"compare-{prog}-{test}", title, svg=False, tight=False))
    return out
