"""model: Hockney fit t(n) = α + β·n of the pingpong latency (half round trip)
per label and pair placement, then measured / predicted for the halo exchange
and for collectives under textbook algorithms (Thakur, Rabenseifner & Gropp 2005)."""

from __future__ import annotations

import math
from typing import Any, Callable, cast

import pandas as pd

from . import halo_steps
from .bcast_model import bcast_tables
from .hockney import fit_name, fits, pick
from .keys import LAYOUT, MACHINE, with_variant
from .load import InputError
from .render import Table, fmt, fmt_bytes
from .timeline import Trace


# A fit is made per pingpong configuration: every key column but the size.
def _log2(p: float) -> float:
    return float(math.ceil(math.log2(p))) if p > 1 else 0.0


# Collective models: f(p, n, α, β) -> seconds (n = bytes as in the CSV's bytes column).
COLL: dict[str, tuple[str, Callable[[float, float, float, float], float]]] = {
    "barrier": ("dissemination: ⌈log2 p⌉ α", lambda p, n, a, b: _log2(p) * a),
    "bcast": ("binomial tree: ⌈log2 p⌉(α + nβ)", lambda p, n, a, b: _log2(p) * (a + n * b)),
    "reduce": ("binomial tree: ⌈log2 p⌉(α + nβ)", lambda p, n, a, b: _log2(p) * (a + n * b)),
    "allreduce": ("recursive doubling: ⌈log2 p⌉(α + nβ)", lambda p, n, a, b: _log2(p) * (a + n * b)),
    "scan": ("recursive doubling: ⌈log2 p⌉(α + nβ)", lambda p, n, a, b: _log2(p) * (a + n * b)),
    "gather": ("binomial: ⌈log2 p⌉α + (p−1)nβ", lambda p, n, a, b: _log2(p) * a + (p - 1) * n * b),
    "scatter": ("binomial: ⌈log2 p⌉α + (p−1)nβ", lambda p, n, a, b: _log2(p) * a + (p - 1) * n * b),
    "allgather": ("ring: (p−1)(α + nβ)", lambda p, n, a, b: (p - 1) * (a + n * b)),
    "alltoall": ("pairwise: (p−1)(α + nβ)", lambda p, n, a, b: (p - 1) * (a + n * b)),
    "reduce_scatter_block": ("pairwise: (p−1)(α + nβ)", lambda p, n, a, b: (p - 1) * (a + n * b)),
}


def grid(p: int) -> tuple[int, int]:
    """MPI_Dims_create(p, 2): the most nearly square rows x cols, rows >= cols (halocompare's 2-D grid)."""
    cols = max(c for c in range(1, math.isqrt(p) + 1) if p % c == 0)
    return p // cols, cols


def steps_table(traces: list[Trace], df: pd.DataFrame, fitted: pd.DataFrame) -> Table:
    """Predicted steps (halo_steps' rules), steps measured in each traced exchange, and the time the fit
    predicts for them: steps x (α + nβ)."""
    rows = []
    # one transfer: the trace's shortest blocking send, else the shortest of the other traces given (an
    # irecv-isend trace has none), else the fit's α + nβ at the exchange's size
    shortest = min((x for x in map(halo_steps.transfer_us, traces) if math.isfinite(x)), default=math.nan)
    for t in traces:
        rows_, cols = grid(t.ranks)
        run = df[df["run_id"] == t.meta.get("run_id")] if "run_id" in df else df.iloc[:0]
        first = run.iloc[0] if len(run) else None
        f = pick(fitted, str(first["label"]) if first is not None else "",
                 float(first["nnodes"]) if first is not None else 1.0,
                 str(first["library"]) if first is not None else "") if not fitted.empty else None
        one = halo_steps.transfer_us(t)
        one = one if math.isfinite(one) else shortest
        if not math.isfinite(one) and f is not None:
            sizes = {int(st["test"]["bytes"]) for st in t.meta.get("stretches") or []
                     if isinstance(st, dict) and isinstance(st.get("test"), dict) and "bytes" in st["test"]}
            one = (f.alpha + f.beta * sizes.pop()) * 1e6 if len(sizes) == 1 else math.nan
        for m in halo_steps.measured(t, one):
            pred = halo_steps.steps(rows_, cols, m.neighbors, m.periodic, m.method) \
                if m.method in halo_steps.METHODS else None
            rows.append([f"{m.neighbors}-nbr {'periodic' if m.periodic else 'non-periodic'} {m.method}",
                         f"{rows_}x{cols}", fmt_bytes(m.bytes), str(pred) if pred is not None else "-",
                         f"{m.steps:.2f}", fmt(m.makespan_us), fmt(m.transfer_us),
                         fmt(pred * (f.alpha + f.beta * m.bytes) * 1e6) if pred is not None and f else "-"])
    real = [t.path.name for t in traces if t.meta.get("simulated") is not True]
    contended = (f" The step model is for a contended network, where a node takes in one message at a time (a "
                 f"simulated one, docs/halo-timelines.md); {', '.join(real)} traced real ranks, whose shared memory "
                 f"or network interface may take in several at once, and whose steps also count the ranks' skew "
                 f"and each call's own cost: there measured and predicted steps need not agree."
                 if real else "")
    return Table("Halo exchange steps (Why six steps?): predicted and measured in the trace",
                 ["stencil method", "grid", "bytes/nbr", "predicted steps", "measured steps", "makespan [µs]",
                  "one transfer [µs]", "predicted [µs] (fit)"], rows,
                 notes=[("Predicted: sends in a fixed order, a receiver takes one message at a time, a blocking "
                        "send completes when its receiver takes it, nonblocking ones all posted at once "
                        "(docs/halo-timelines.md). Measured: one exchange's makespan in the trace over one "
                        "transfer time (the trace's shortest blocking send, else the other traces', else "
                        "α + nβ). Predicted time: steps x (α + nβ) of the pingpong fit ('-' without one)." +
                        contended)])


def run_model(df: pd.DataFrame, stat: str, out_fmt: str, alpha_us: float | None = None,
              bandwidth_mbps: float | None = None, traces: list[Trace] | None = None) -> str:
    df, _ = with_variant(df)  # df: keys.prepared's frame (repeated runs resolved)
    fitted = fits(df, stat)
    if alpha_us is not None and bandwidth_mbps is not None:
        given = pd.DataFrame([{"label": "*", "library": "given", "comm": "--alpha/--bandwidth", "method": "",
                               "variant": "", "nprocs": -1, "alpha": alpha_us * 1e-6,
                               "beta": 1 / (bandwidth_mbps * 1e6), "err": math.nan, "sizes": "", "n": 0}])
        fitted = given if fitted.empty else pd.concat([fitted, given], ignore_index=True)
    if fitted.empty and traces:
        return steps_table(traces, df, fitted).render(out_fmt)
    if fitted.empty:
        raise InputError("no pingpong 'latency' rows over two or more message sizes in the input: the model "
                         "fits α and β from them (pass pingpong results too, or give --alpha and --bandwidth)")
    col = "time_min_s" if stat == "min" else "time_median_s"
    per = fitted.groupby([*MACHINE, "comm"])["alpha"].transform("size").to_numpy()
    tables = [Table("Hockney fit of pingpong latency: t(n) = α + β·n", ["label · MPI · pairs", "α [µs]",
                    "β [ns/B]", "1/β [MB/s]", "worst fit error", "sizes"],
                    [[fit_name(r, bool(many > 1)), fmt(r["alpha"] * 1e6),
                      f"{r['beta'] * 1e9:.4g}", fmt(1 / r["beta"] / 1e6) if r["beta"] > 0 else "∞",
                      f"{r['err'] * 100:.1f} %" if math.isfinite(r["err"]) else "given", str(r["sizes"])]
                     for r, many in zip(fitted.to_dict("records"), per)],
                    notes=[("Weighted least squares on relative error over all sizes; intra = both ranks on one "
                           "node, inter = on two nodes.")])]
    layout = [*MACHINE, *LAYOUT]
    ok = ~df["na"] & ~df["failed"]
    nfail = df["failed"] & df["program"].isin(["halocompare", "collectives"])
    halo = df[(df["program"] == "halocompare") & (df["test"] == "halo") & ok]
    for key, h in halo.fillna({"nnodes": -1, "ppn": -1}).groupby(layout, sort=True):
        label, lib, nprocs, nnodes, _ = cast(tuple[Any, ...], key)
        f = pick(fitted, str(label), float(nnodes), str(lib))
        if f is None:
            continue
        comm = "world" if (h["comm"] == "world").any() else str(h["comm"].iloc[0])
        h = h[h["comm"] == comm].sort_values(["neighbors", "periodic", "bytes", "method", "variant"])
        rows = []
        for r in h.to_dict("records"):  # one row per configuration: comm and the layout are fixed
            pred = r["neighbors"] * (f.alpha + f.beta * r["bytes"])
            meas = r[col]
            kind = "periodic" if r["periodic"] == 1 else "non-periodic"
            var = f" [{r['variant']}]" if r["variant"] else ""
            rows.append([f"{int(r['neighbors'])}-nbr {kind} {r['method']}{var}", fmt_bytes(r["bytes"]),
                         fmt(meas * 1e6), fmt(pred * 1e6), f"{meas / pred:.2f}"])
        tables.append(Table(f"Halo exchange, {label}, {int(nprocs)} ranks, comm {comm}: measured / predicted "
                            f"(fit {f.comm})", ["stencil method", "bytes/nbr", "measured [µs]", "predicted [µs]",
                                                "measured/predicted"], rows,
                            notes=[("Prediction: k(α + nβ) — the k messages of one process leave one after the "
                                   "other; > 1 means slower than the point-to-point model explains.")]))
    coll = df[(df["program"] == "collectives") & ok]
    for key, c in coll.fillna({"nnodes": -1, "ppn": -1}).groupby(layout, sort=True):
        label, lib, nprocs, nnodes, _ = cast(tuple[Any, ...], key)
        f = pick(fitted, str(label), float(nnodes), str(lib))
        if f is None:
            continue
        p = float(nprocs)
        rows = []
        for r in c.to_dict("records"):  # one row per configuration (test, method, size, settings)
            test, method, nb = str(r["test"]), str(r["method"]), float(r["bytes"])
            base = test[1:] if test.startswith("i") and test[1:] in COLL else test
            model = COLL.get(base) if method == "library" else None  # the algorithms: bcast_model
            if model is None:
                continue
            n = 0.0 if math.isnan(nb) or nb < 0 else nb
            pred = model[1](p, n, f.alpha, f.beta)
            meas = float(r[col])
            var = f" [{r['variant']}]" if r["variant"] else ""
            rows.append([f"{test} {method}{var}", fmt_bytes(n) if n else "", fmt(meas * 1e6), fmt(pred * 1e6),
                         f"{meas / pred:.2f}" if pred > 0 else "", model[0]])
        if rows:
            tables.append(Table(f"Collectives, {label}, {int(nprocs)} ranks: measured / predicted (fit {f.comm})",
                                ["collective method", "bytes", "measured [µs]", "predicted [µs]",
                                 "measured/predicted", "model"], rows))
    if nfail.any():
        tables[-1].notes.append(f"FAILED: {int(nfail.sum())} halo/collective result(s) failed verification and are "
                                "left out of the model.")
    tables += bcast_tables(df, fitted, col)
    if traces:
        tables.append(steps_table(traces, df, fitted))
    return "\n".join(t.render(out_fmt) for t in tables)
