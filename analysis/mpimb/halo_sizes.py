"""halocompare against message size (halocompare -m MIN:MAX): each method's
rate per bytes per neighbour message, as a table (rows = bytes, columns =
methods) per grid, periodicity, stencil and communicator, and as a plot (a
panel per communicator, a line per method) per grid, periodicity and stencil.
Only where a halo run has two or more sizes (docs/halo-dims.md)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .load import groups
from .plots import Plot, _save, bytes_axis, log_y
from .tables import Table, pivot

KEYS = ["dims", "periodic", "neighbors"]


def _swept(d: pd.DataFrame) -> pd.DataFrame:
    """The halocompare halo rows of (dims, periodic, stencil, comm) groups run at two or more sizes,
    with dims (from params, 2 where absent: results from before --dims) as a column."""
    h = d[(d["program"] == "halocompare") & (d["test"] == "halo") & (d["bytes"] > 0)]
    if h.empty:
        return h
    dims = h["params"].fillna("").astype(str).str.extract(r"(?:^|;)dims=(\d)", expand=False)
    h = h.assign(dims=pd.to_numeric(dims, errors="coerce").fillna(2).astype(int))
    n = h.groupby([*KEYS, "comm"], dropna=False)["bytes"].transform("nunique")
    return h[n >= 2]


def _what(dims: int, per: float, nbrs: float) -> str:
    return f"{dims}-D {'periodic' if per == 1 else 'non-periodic'} mesh, {int(nbrs)} neighbours"


def size_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    """Rate against size: rows = bytes per neighbour message, columns = methods (d has value/unit)."""
    out: list[Table] = []
    h = _swept(d)
    h = h.assign(order=h["comm"].map({c: i for i, c in enumerate(dict.fromkeys(h["comm"]))}))  # as run
    for (dims, per, nbrs, _, comm), g in groups(h, [*KEYS, "order", "comm"], sort=True):
        t = pivot(g, ["bytes"], ["method"], f"{_what(dims, per, nbrs)}, comm {comm}: MB/s per process against "
                  f"bytes per neighbour message — {ctx}", unit_in_header=False)
        out.append(t)
    return out


def size_plots(g: pd.DataFrame, ctx: str, base: str) -> list[Plot]:
    """Rate against size, a panel per communicator, a line per method (g has value)."""
    out: list[Plot] = []
    for (dims, per, nbrs), s in groups(_swept(g[~g["na"]]), KEYS, sort=True):
        comms = list(dict.fromkeys(s["comm"]))
        methods = list(dict.fromkeys(s["method"]))
        ncol = min(3, len(comms))
        nrow = -(-len(comms) // ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(4.4 * ncol, 3.4 * nrow + 0.6), sharex=True, sharey=True,
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
        out.append(_save(fig, f"{base}-halo-sizes-{dims}d-{kind}-{int(nbrs)}", title, tight=False))
    return out
