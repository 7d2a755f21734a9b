"""Plots of a result set: every program's plots per block (mpimb.registry), the programs' plots over
the whole set, scaling with the number of processes; and the overlays of compare.  Takes the frame
keys.prepared made (repeated runs resolved once)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np
import pandas as pd

from . import schema
from .crosssystem import at_talk_size
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
from .units import MBPS, axis_label, unit_of, with_values


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


def fit_title(fig: Any, title: str, size: float = 10.0) -> None:
    """The figure's title wrapped, then shrunk, until every line lies inside the figure (checked on the
    rendered text, not guessed from a character count)."""
    import textwrap

    chars = max(24, int(fig.get_figwidth() * 72 / (0.55 * size)))
    t = fig.suptitle(title, fontsize=size)
    renderer = fig.canvas.get_renderer()

    def fits() -> bool:
        box = t.get_window_extent(renderer)
        return bool(box.x0 >= 0.01 * fig.bbox.width and box.x1 <= 0.99 * fig.bbox.width)

    while not fits() and chars > 24:
        chars = int(chars * 0.9)
        t.set_text("\n".join(textwrap.fill(ln, chars) for ln in title.splitlines()))
    while not fits() and size > 6:
        size -= 0.5
        t.set_fontsize(size)


def _bar_rows(h: pd.DataFrame, test: str) -> pd.DataFrame:
    """The rows talk_bars can draw: for halo, the point-to-point methods on world."""
    return h[h["method"].isin(P2P) & (h["comm"] == "world")] if test == "halo" else h


def talk_bars(h: pd.DataFrame, prog: str, test: str, names: list[str], stat: str, talk: bool) -> Plot | None:
    """halocompare halo (the point-to-point methods on world, 4 neighbours, non-periodic or the first stencil
    present) or one-sender (per neighbour count), a bar per machine and layout, each at one size: the talk's
    (talk: a published set is among them; crosssystem.at_talk_size) or its own.  A log axis where the
    values span more than a decade, so a slow machine's bars stay visible."""
    h = _bar_rows(h, test)
    if h.empty:
        return None
    n = 4 if (h["neighbors"] == 4).any() else h["neighbors"].min()
    if test == "halo":
        h = h[h["neighbors"] == n]
    per = 0 if (h["periodic"] == 0).any() else max(h["periodic"].min(), 0)
    h = h[(h["periodic"] == per) | (h["periodic"] < 0)]
    if test == "halo":
        xs: list[Any] = [m for m in P2P if m in set(h["method"])]
        xcol, xlabels = "method", xs
    else:
        xs = sorted(h["neighbors"].unique())
        xcol, xlabels = "neighbors", [f"{int(x)} neighbours" for x in xs]
    bar_keys = ["set", *schema.key_roles("layout", "size", "settings")]
    bars = h.drop_duplicates(bar_keys)
    bars = bars.assign(o=bars["set"].astype(str).map({nm: i for i, nm in enumerate(names)})).sort_values(
        ["o", "nprocs"], kind="stable")
    fig, ax = pyplot().subplots(figsize=(9.6, 4.6))
    x = np.arange(len(xs))
    w = 0.8 / max(1, len(bars))
    vals = []
    b: Any
    for bi, b in enumerate(bars.itertuples(index=False)):
        sel = h[(h["set"] == b.set) & (h["nprocs"] == b.nprocs) & (h["nnodes"] == b.nnodes) &
                (h["ppn"] == b.ppn) & (h["bytes"] == b.bytes) & (h["params"] == b.params)]
        v = sel.set_index(xcol)["value"]
        ys = [float(v.get(m, np.nan)) for m in xs]
        vals += ys
        pub = " [published]" if getattr(b, "source", "") == "published" else ""
        first = bi == 0 or bars.iloc[bi - 1]["set"] != b.set
        ax.bar(x + (bi - (len(bars) - 1) / 2) * w, ys, w, color=COLORS[names.index(str(b.set)) % len(COLORS)],
               alpha=1.0 if first else 0.6, hatch="//" if pub else None, edgecolor="white", linewidth=0.5,
               label=f"{b.set} · {int(b.bytes)} B · np{b.nprocs:.0f}{pub}")
    pos = np.asarray([v for v in vals if np.isfinite(v) and v > 0])
    if len(pos) and pos.max() > 10 * pos.min():
        log_y(ax)
        ax.set_ylim(bottom=pos.min() / 2)
    ax.set_xticks(x, xlabels, rotation=20 if test == "halo" else 0)
    ax.grid(axis="x", visible=False)
    ax.set_ylabel(axis_label(unit_of(prog, test), stat))
    where = f"world, {int(n)} neighbours" if test == "halo" else "one process sending alone"
    at = " at the talk's size" if talk else ", each machine at its own size"
    sizes = "; ".join(f"{int(b)} B: {', '.join(dict.fromkeys(g['set'].astype(str)))}"
                      for (b,), g in groups(bars, ["bytes"], sort=False))
    title = (f"{prog} {test}{at}: " + " vs ".join(names) +
             f"\n({where}, {'periodic' if per == 1 else 'non-periodic'}; {sizes})")
    fit_title(fig, title)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, f"compare-{prog}-{test}", title, svg=False)


def first_series(cols: list[np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(the positions of the first n distinct rows of the key columns cols (numbers, or codes of text), in
    order of appearance; each row's place among them, -1 for the others): drop_duplicates().head(n), by one
    comparison per column and series (NaN equal to NaN) instead of hashing every row."""
    place = np.full(len(cols[0]), -1)
    first: list[int] = []
    left = np.ones(len(place), dtype=bool)
    while len(first) < n and left.any():
        f = int(np.argmax(left))
        same = left.copy()
        for c in cols:
            same &= (c == c[f]) | (np.isnan(c) & np.isnan(c[f])) if c.dtype.kind == "f" else c == c[f]
        place[same] = len(first)
        left &= ~same
        first.append(f)
    return np.asarray(first, dtype=np.intp), place


# A figure to draw: a function of this module that returns its Plot, and its arguments (the points it draws,
# already chosen): picklable, so that compare can have them drawn in another process (compare.plotter).
Spec = tuple[Callable[..., "Plot | None"], tuple[Any, ...]]  # (a string: X | None needs Python 3.10 at run time)
Line = tuple[np.ndarray, np.ndarray, str, str, str]  # x, y, line style, colour, legend entry


def compare_plots(d: pd.DataFrame, stat: str, names: list[str], max_plots: int = 24) -> list[Plot]:
    """compare's overlays (compare_specs), drawn here."""
    return draw(list(compare_specs(d, stat, names, max_plots)))


def draw(specs: list[Spec]) -> list[Plot]:
    """The Plots of specs, in their order."""
    return [p for fn, args in specs if (p := fn(*args)) is not None]


def compare_specs(d: pd.DataFrame, stat: str, names: list[str], max_plots: int = 24) -> Iterator[Spec]:
    """Overlays: per (program, test) the machines in colour, up to 3 series as line styles (a series
    is every key column but the size, so nothing is merged); halocompare halo and one-sender: bars
    (talk_bars) of every machine at the talk's size where a published set is given (beside a size
    sweep if a measured machine has one), at each machine's own size where each has one.  Each spec
    gives one Plot; each is yielded as soon as it is chosen (compare has it drawn meanwhile)."""
    talk = at_talk_size(d) if "source" in d.columns else d.iloc[:0]
    cols = ["set", "program", "test", *COMPARE_SERIES, "bytes", "value"]
    d = d.loc[~d["na"].to_numpy(bool), cols + (["source"] if "source" in d.columns else [])]
    talk = talk.loc[~talk["na"].to_numpy(bool), d.columns]
    for k in ("nnodes", "ppn"):
        d[k] = d[k].fillna(-1.0)
    made = 0
    styles = ["-", "--", ":"]
    # the series columns as numbers (text as codes), for first_series on each plot's rows
    series = [d[c].cat.codes.to_numpy() if isinstance(d[c].dtype, pd.CategoricalDtype) else
              d[c].to_numpy(float) if pd.api.types.is_numeric_dtype(d[c]) else pd.factorize(d[c])[0]
              for c in COMPARE_SERIES]
    # each plot's rows by position: a plot takes only the rows it draws (a (program, test) has 100,000 of 10^6)
    at = {cast(tuple[Any, ...], k): np.asarray(v) for k, v in d.groupby(["program", "test"], observed=True).indices.items()}
    todo = [(k, at[k]) for k in sorted(at) if not str(k[1]).startswith("allpairs")]
    # round-robin over programs so every program gets plots before the limit
    rank: dict[tuple[Any, ...], int] = {}
    seen: dict[str, int] = {}
    for (prog, test), _ in todo:
        rank[(prog, test)] = seen.get(prog, 0)
        seen[prog] = seen.get(prog, 0) + 1
    todo.sort(key=lambda kg: (rank[kg[0]], kg[0][0]))
    for (prog, test), rows in todo:
        if made >= max_plots:
            break
        unit = unit_of(str(prog), str(test))
        bars = prog == "halocompare" and test in ("halo", "one-sender")
        if bars and not talk.empty:
            h = talk[talk["test"] == test]
            if not _bar_rows(h, test).empty:
                made += 1
                yield talk_bars, (h, str(prog), str(test), names, stat, True)
            rows = rows[(d["source"].iloc[rows] != "published").to_numpy()]  # the sweep, if any, of the measured
        elif bars and (g := d.iloc[rows]).groupby("set", observed=True)["bytes"].nunique().max() < 2:
            if not _bar_rows(g, test).empty:
                made += 1
                yield talk_bars, (g, str(prog), str(test), names, stat, False)
            continue
        if d["bytes"].iloc[rows].nunique() < 2 or made >= max_plots:
            continue
        present = {str(x) for x in d["set"].iloc[rows].unique()}
        title = f"{prog} {test}: " + " vs ".join(n for n in names if n in present)
        # the first three series in row order (a series: every key column but the size, so nothing is
        # merged), and each row's place among them (-1: not drawn)
        first, place = first_series([c[rows] for c in series], 3)
        keys = list(d.iloc[rows[first]][COMPARE_SERIES].itertuples(index=False, name=None))
        shown = [c for i, c in enumerate(COMPARE_SERIES) if len({str(k[i]) for k in keys}) > 1 or
                 c in ("method", "comm")]
        chosen = d.iloc[rows[place >= 0]][["set", "bytes", "value"]].assign(ki=place[place >= 0])
        # one row per (machine, series, size): every other key column is in the series
        lines: list[Line] = []
        for gk, sel in groups(chosen.sort_values("bytes"), ["set", "ki"], sort=False):
            name, ki = str(gk[0]), int(gk[1])
            si, key = names.index(name), keys[ki]
            label = " ".join(x for x in (series_name(key[:len(SERIES)], shown),
                                         f"np{key[-2]:.0f}" if "nprocs" in shown else "") if x)
            lines.append((sel["bytes"].to_numpy(), sel["value"].to_numpy(), styles[ki], COLORS[si % len(COLORS)],
                          f"{name}: {label}"))
        made += 1
        yield overlay, (lines, title, f"compare-{prog}-{test}" + ("-sizes" if bars else ""), unit, stat)


# compare's overlays are drawn one after another in one figure, emptied between them: the ticks of its two
# log axes are then made once, not for every figure (a third of a figure's time), and each PNG is the same
# bytes as from a new figure (tests/analysis/test_compare_tables.py)
_OVERLAY: list[tuple[Any, Any]] = []


def _overlay_axes() -> tuple[Any, Any]:
    """The overlays' figure and axes, without the last overlay's lines and legend, and with a new figure's
    margins (tight_layout starts from them)."""
    if not _OVERLAY:
        fig, ax = pyplot().subplots(figsize=(7.2, 4.2))
        bytes_axis(ax)
        log_y(ax)
        _OVERLAY.append((fig, ax))
    fig, ax = _OVERLAY[0]
    for line in list(ax.lines):
        line.remove()
    if (legend := ax.get_legend()) is not None:
        legend.remove()
    rc = pyplot().rcParams
    fig.subplots_adjust(**{k: rc[f"figure.subplot.{k}"] for k in ("left", "right", "bottom", "top", "wspace", "hspace")})
    return fig, ax


def overlay(lines: list[Line], title: str, name: str, unit: str, stat: str) -> Plot:
    """compare's size sweep: the lines on log axes."""
    fig, ax = _overlay_axes()
    for x, y, style, color, label in lines:
        ax.plot(x, y, style, color=color, marker="o", ms=3, label=label)
    ax.relim()
    ax.autoscale_view()
    ax.set_ylabel(axis_label(unit, stat))
    fit_title(fig, title)
    ax.legend(fontsize=7, frameon=False)
    return save(fig, name, title, svg=False, close=False)
