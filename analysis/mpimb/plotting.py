"""Plot helpers (matplotlib, Agg): the Plot record, axes, legends, the size sweep with CI bands
every program draws, and the per-test loop.  matplotlib is imported on first use (pyplot()), so
modules that only compute (mpimb-report findings) never load it."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import schema
from .keys import VARIANT, with_variant
from .load import groups
from .render import fmt, fmt_bytes
from .units import axis_label, units, value

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_SERIES = 12
# What tells the lines of one plot apart: every key column a plot does not fix (variant: params that differ).
SERIES = [*schema.key_roles("config", "thread-level"), VARIANT, "ppn"]
COLORS = ["#1f5aa6", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6a9f", "#f26419", "#4d4d4d",
          "#66a182", "#b5651d", "#111111"]


@cache
def pyplot() -> Any:
    """matplotlib.pyplot with the Agg backend and the suite's style (imported here, once)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "axes.grid": True, "grid.alpha": 0.3,
                         "axes.spines.top": False, "axes.spines.right": False, "svg.hashsalt": "mpimb",
                         "axes.prop_cycle": cycler(color=COLORS)})
    return plt


@dataclass
class Plot:
    """A rendered plot: its PNG at once, its SVG on first use (only `mpimb-report plot` writes SVG;
    the reports embed PNG, and an SVG costs a full redraw of the figure)."""

    name: str
    title: str
    png: bytes
    fig: Figure | None = field(default=None, repr=False, compare=False)
    _svg: bytes | None = field(default=None, repr=False, compare=False)

    @property
    def svg(self) -> bytes:
        if self._svg is None:
            s = io.BytesIO()
            if self.fig is not None:
                self.fig.savefig(s, format="svg", metadata={"Date": None})
            self._svg, self.fig = s.getvalue(), None
        return self._svg


def save(fig: Figure, name: str, title: str, svg: bool = True, tight: bool = True, close: bool = True) -> Plot:
    """The Plot of fig (closed in pyplot unless close is False: a closed figure still renders); svg=False:
    PNG only."""
    if tight:
        fig.tight_layout()
        # tight_layout leaves a placeholder layout engine, and savefig draws a figure with any engine twice
        # (once to lay it out, once to print): the layout is done, so the PNG is drawn once
        fig.set_layout_engine(None)
    b = io.BytesIO()
    fig.savefig(b, format="png", dpi=100, pil_kwargs={"compress_level": 3})
    if close:
        pyplot().close(fig)
    return Plot(re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_"), title, b.getvalue(), fig if svg else None)


def context(g: pd.DataFrame) -> str:
    r = g.iloc[0]
    sim = " — SIMULATED" if bool(g["simulated"].any()) else ""
    return f"{r['label']} · {r['library']} · {int(r['nprocs'])} ranks{sim}"


def log_y(ax: Axes) -> None:
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        """LogFormatter's choice of which ticks to label, printed as plain numbers (0.3, 2, 3000)."""

        def __call__(self, x: float, pos: int | None = None) -> str:
            return fmt(x) if super().__call__(x, pos) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(Plain(labelOnlyBase=False))
    ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def bytes_axis(ax: Axes) -> None:
    from matplotlib.ticker import FuncFormatter

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
            parts.append(schema.mpi_thread_level(str(v)))
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

def band(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % CI of the median in the rows' unit (a rate's interval is the time's, inverted)."""
    u = units(g)
    lo = value(u, g["time_ci_hi_s"], g["sent_bytes"], g["bytes"])
    hi = value(u, g["time_ci_lo_s"], g["sent_bytes"], g["bytes"])
    return np.fmin(lo, hi), np.fmax(lo, hi)


def fill_keys(d: pd.DataFrame) -> pd.DataFrame:
    """d with its variant column and empty numeric key cells as -1 (so they group)."""
    d, _ = with_variant(d)
    for k in schema.numeric_keys():
        d[k] = d[k].fillna(-1.0)
    return d


def sweep(g: pd.DataFrame, stat: str, title: str, name: str) -> Plot | None:
    """value vs bytes, one line per series, the CI of the median as a band."""
    g = g[~g["na"] & ~g["failed"] & (g["bytes"] > 0)]
    if g["bytes"].nunique() < 2:
        return None
    unit = str(units(g.iloc[:1])[0])
    fig, ax = pyplot().subplots(figsize=(7.2, 4.2))
    keys = list(dict.fromkeys(g[SERIES].itertuples(index=False, name=None)))
    shown = varying(keys)
    for i, key in enumerate(keys[:MAX_SERIES]):
        # one row per (series, size): every key column is a SERIES column or fixed by the plot
        s = g[(g[SERIES] == pd.Series(key, index=SERIES)).all(axis=1)].sort_values("bytes")
        ax.plot(s["bytes"], s["value"], marker="o", ms=3, lw=1.5, label=series_name(key, shown))
        if stat == "median" and len(keys) <= 4:  # bands only where they stay readable
            lo, hi = band(s)
            ax.fill_between(s["bytes"], lo, hi, alpha=0.2, lw=0)
    bytes_axis(ax)
    log_y(ax)
    ax.set_ylabel(axis_label(unit, stat))
    ax.set_title(title)
    if len(keys) > 1:
        ax.legend(fontsize=7, ncol=2 if len(keys) > 5 else 1, frameon=False)
    if len(keys) > MAX_SERIES:
        ax.text(0.99, 0.01, f"first {MAX_SERIES} of {len(keys)} series", transform=ax.transAxes, ha="right",
                fontsize=7, color="#666")
    return save(fig, name, title)


def per_test(g: pd.DataFrame, stat: str, ctx: str, base: str,
             instead: Callable[[str, pd.DataFrame], list[Plot] | None] | None = None,
             after: Callable[[str, pd.DataFrame], list[Plot]] | None = None) -> list[Plot]:
    """A size sweep per test of one block (g: one program on one layout); instead(test, rows) may give a
    test's plots in place of the sweep (None: the sweep), after(test, rows) adds plots behind it."""
    out: list[Plot] = []
    prog = str(g["program"].iloc[0]) if len(g) else ""
    for (test,), t in groups(g, ["test"], sort=False):
        test = str(test)
        alt = instead(test, t) if instead is not None else None
        if alt is not None:
            out += alt
            continue
        p = sweep(t, stat, f"{prog} {test}\n{ctx}", f"{base}-{test}")
        if p:
            out.append(p)
        if after is not None:
            out += after(test, t)
    return out


def hsl(css: str) -> tuple[float, float, float]:
    """'hsl(h, s%, l%)' (tables.heat_colour) as an RGB triple."""
    import colorsys

    h, sat, light = (float(x.strip().rstrip("%")) for x in css[4:-1].split(","))
    r, g, b = colorsys.hls_to_rgb(h / 360, light / 100, sat / 100)
    return r, g, b
