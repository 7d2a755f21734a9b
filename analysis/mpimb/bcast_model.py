"""Cost models of collectives' user-level broadcasts (docs/collectives.md, "The model").

Every message of m bytes costs T(m) = α + mβ (Hockney, α and β fitted on
pingpong by model.py), a rank sends one message at a time, and a segmented
algorithm cuts the n-byte message into k = ⌈n/s⌉ segments of s = min(--segment, n)
bytes.  Then, for p ranks:

- binomial tree: ⌈log2 p⌉ T(n)
- pipelined chain: (p − 2 + k) T(s) — the first segment needs p − 1 steps to
  reach the last rank, the other k − 1 follow one step apart
- pipelined binary tree: c (h + k − 1) T(s), h = ⌊log2 p⌋ the tree's depth and
  c = min(2, p − 1) the children an inner rank serves one after the other
  (exact for p ≤ 3 and full trees, an upper bound otherwise).  With one child
  per rank (c = 1) and α = 0 this is the talk's segmented tree, b·log p + (n − b)
  per-byte times against n·log p unsegmented
- scatter + allgather (van de Geijn): (⌈log2 p⌉ + p − 1) α + 2 (p − 1)/p · nβ
- the series, m messages of n bytes: an MPI_Bcast loop m ⌈log2 p⌉ T(n); the
  pipelined chain (p − 2 + m) T(n), the talk's (m + p)·n
- two-level: ⌈log2 N⌉ T(n) + ⌈log2 ppn⌉ T(n) over N nodes of ppn ranks (one α, β
  for both levels: the fit of the run's placement)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from .hockney import pick
from .keys import LAYOUT, MACHINE, param_numbers
from .render import Table, fmt, fmt_bytes

Arr = np.ndarray


def log2_ceil(x: Arr) -> Arr:
    """⌈log2 x⌉, 0 for x ≤ 1."""
    return np.ceil(np.log2(np.maximum(x, 1.0)))


@dataclass(frozen=True)
class Formula:
    text: str
    # (p, n, s, m, nodes, ppn, α, β) -> seconds; arrays of one length
    time: Callable[[Arr, Arr, Arr, Arr, Arr, Arr, float, float], Arr]
    terms: Callable[[pd.DataFrame], pd.Series]  # the row's values of the formula's symbols, as text


def _k(n: Arr, s: Arr) -> Arr:
    return np.where(n > 0, np.ceil(n / np.maximum(s, 1.0)), 0.0)


def _seg(n: Arr, s: Arr) -> Arr:
    return np.minimum(s, n)


def chain(p: Arr, n: Arr, s: Arr, a: float, b: float) -> Arr:
    seg, k = _seg(n, s), _k(n, s)
    return np.where((p > 1) & (n > 0), (p - 2 + k) * (a + seg * b), 0.0)


def tree(p: Arr, n: Arr, s: Arr, a: float, b: float) -> Arr:
    seg, k = _seg(n, s), _k(n, s)
    h, c = np.floor(np.log2(np.maximum(p, 1.0))), np.minimum(2.0, p - 1)
    return np.where((p > 1) & (n > 0), c * (h + k - 1) * (a + seg * b), 0.0)


def _seg_terms(d: pd.DataFrame) -> pd.Series:
    n, s = d["n"].to_numpy(float), d["s"].to_numpy(float)
    k = pd.Series(_k(n, s).astype(int), index=d.index).astype(str)
    seg = pd.Series(_seg(n, s), index=d.index).map(fmt_bytes)
    return "s=" + seg + ", k=" + k


def _tree_terms(d: pd.DataFrame) -> pd.Series:
    p = d["p"].to_numpy(float)
    h = pd.Series(np.floor(np.log2(np.maximum(p, 1.0))).astype(int), index=d.index).astype(str)
    c = pd.Series(np.minimum(2.0, p - 1).astype(int), index=d.index).astype(str)
    return "h=" + h + ", c=" + c + ", " + _seg_terms(d)


def _no_terms(d: pd.DataFrame) -> pd.Series:
    return pd.Series("", index=d.index)


def _m_terms(d: pd.DataFrame) -> pd.Series:
    return "m=" + d["m"].astype(int).astype(str)


def _level_terms(d: pd.DataFrame) -> pd.Series:
    return "N=" + d["nodes"].astype(int).astype(str) + ", ppn=" + d["ppn"].astype(int).astype(str)


# (test, method) of the CSV -> its formula
FORMULAS: dict[tuple[str, str], Formula] = {
    ("bcast", "binomial"): Formula("⌈log2 p⌉(α + nβ)", lambda p, n, s, m, N, q, a, b: log2_ceil(p) * (a + n * b),
                                   _no_terms),
    ("bcast", "chain"): Formula("(p − 2 + k)(α + sβ)", lambda p, n, s, m, N, q, a, b: chain(p, n, s, a, b),
                                _seg_terms),
    ("bcast", "tree-pipelined"): Formula("c(h + k − 1)(α + sβ)", lambda p, n, s, m, N, q, a, b: tree(p, n, s, a, b),
                                         _tree_terms),
    ("bcast", "scatter-allgather"): Formula(
        "(⌈log2 p⌉ + p − 1)α + 2(p − 1)/p·nβ",
        lambda p, n, s, m, N, q, a, b: np.where(p > 1, (log2_ceil(p) + p - 1) * a + 2 * (p - 1) / p * n * b, 0.0),
        _no_terms),
    ("bcast", "2level"): Formula("(⌈log2 N⌉ + ⌈log2 ppn⌉)(α + nβ)",
                                 lambda p, n, s, m, N, q, a, b: (log2_ceil(N) + log2_ceil(q)) * (a + n * b),
                                 _level_terms),
    ("series", "bcast-loop"): Formula("m⌈log2 p⌉(α + nβ)",
                                      lambda p, n, s, m, N, q, a, b: m * log2_ceil(p) * (a + n * b), _m_terms),
    ("series", "chain"): Formula("(p − 2 + m)(α + nβ)",
                                 lambda p, n, s, m, N, q, a, b: chain(p, m * n, np.maximum(n, 1.0), a, b), _m_terms),
}


def predict(d: pd.DataFrame, alpha: float, beta: float) -> pd.DataFrame:
    """d's rows that have a formula, with columns p, n, s, m, nodes, ppn, predicted_s, formula, terms.

    d needs test, method, nprocs, bytes, params, nnodes, ppn."""
    keys = list(zip(d["test"], d["method"], strict=True))
    out = d[[k in FORMULAS for k in keys]].copy()
    out["p"] = out["nprocs"].astype(float)
    out["n"] = out["bytes"].fillna(0).clip(lower=0).astype(float)
    out["s"] = param_numbers(out["params"], "segment").fillna(out["n"]).astype(float)
    out["m"] = param_numbers(out["params"], "messages").fillna(1).astype(float)
    out["nodes"] = out["nnodes"].fillna(1).astype(float)
    out["ppn"] = out["ppn"].fillna(out["p"]).astype(float)
    parts = []
    for key, g in out.groupby(["test", "method"], sort=False):
        f = FORMULAS[cast(tuple[str, str], key)]
        p, n, s, m, nodes, ppn = (g[c].to_numpy(float) for c in ("p", "n", "s", "m", "nodes", "ppn"))
        parts.append(g.assign(predicted_s=f.time(p, n, s, m, nodes, ppn, alpha, beta), formula=f.text,
                              terms=f.terms(g)))
    return pd.concat(parts) if parts else out.assign(predicted_s=np.nan, formula="", terms="")


def bcast_tables(df: pd.DataFrame, fitted: pd.DataFrame, col: str) -> list[Table]:
    """measured / predicted for every user-level broadcast and the series, per label, MPI and ranks
    (on world and its duplicate: the other communicators have other sizes)."""
    rows = df[(df["program"] == "collectives") & ~df["na"] & ~df["failed"] & df["comm"].isin(["world", "dup"])]
    out: list[Table] = []
    # one table per machine and layout; within it every key is one row (repeated runs were resolved upstream)
    for key, g in rows.groupby([*MACHINE, *LAYOUT], sort=True, dropna=False):
        label, lib, nprocs, nnodes, ppn = cast(tuple[Any, Any, Any, Any, Any], key)
        f = pick(fitted, str(label), float(g["nnodes"].max()))
        if f is None:
            continue
        med = g.groupby(["test", "method", "comm", "bytes", "params"], sort=False, dropna=False).agg(
            measured=(col, "first"), nprocs=("nprocs", "first"), nnodes=("nnodes", "first"),
            ppn=("ppn", "first")).reset_index()
        pr = predict(med, f.alpha, f.beta)
        if pr.empty:
            continue
        pr = pr.sort_values(["test", "method", "comm", "params", "n"], kind="stable")
        ratio = pr["measured"] / pr["predicted_s"].where(pr["predicted_s"] > 0)
        table_rows = [[f"{t} {m}" + ("" if c == "world" else f" ({c})"), fmt_bytes(n) if n else "0", terms,
                       fmt(meas * 1e6), fmt(pred * 1e6), f"{r:.2f}" if np.isfinite(r) else "", formula]
                      for t, m, c, n, terms, meas, pred, r, formula in zip(
                          pr["test"], pr["method"], pr["comm"], pr["n"], pr["terms"], pr["measured"],
                          pr["predicted_s"], ratio, pr["formula"], strict=True)]
        layout = f" ({int(nnodes)}x{int(ppn)})" if pd.notna(nnodes) and pd.notna(ppn) else ""
        out.append(Table(f"Broadcast algorithms, {label} · {lib}, {int(nprocs)} ranks{layout}: measured / predicted "
                         f"(fit {f.comm}: α = {fmt(f.alpha * 1e6)} µs, β = {f.beta * 1e9:.4g} ns/B)",
                         ["broadcast", "bytes", "terms", "measured [µs]", "predicted [µs]", "measured/predicted",
                          "model"], table_rows,
                         notes=[("Hockney model per message, one message at a time per rank; s = segment, "
                                 "k = ⌈n/s⌉ segments, m = messages of the series (time for all m), "
                                 "h = tree depth, c = children per rank, N × ppn = nodes × ranks per node.")]))
    return out
