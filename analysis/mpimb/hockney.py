"""The Hockney fit t(n) = α + β·n of pingpong's latency (half round trip), per machine, pair
placement and every other key column but the size, and the choice of fit for a run (model and
bcast_model use it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import schema
from .keys import LAYOUT, MACHINE, VARIANT
from .render import fmt_bytes

# A fit is made per pingpong configuration: every key column but the program, the test and the size.
FIT_KEYS = [*MACHINE, *schema.key_roles("config"), VARIANT, *LAYOUT]


def fit(n: np.ndarray, t: np.ndarray) -> tuple[float, float, float]:
    """(α, β, worst relative error): least squares on relative error, so small sizes count."""
    a = np.column_stack([1 / t, n / t])
    (alpha, beta), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    alpha, beta = max(float(alpha), 0.0), max(float(beta), 0.0)
    err = float(np.max(np.abs(alpha + beta * n - t) / t))
    return alpha, beta, err


def fits(df: pd.DataFrame, stat: str) -> pd.DataFrame:
    lat = df[(df["program"] == "pingpong") & (df["test"] == "latency") & ~df["na"] & ~df["failed"] &
             (df["bytes"] >= 0)]
    rows = []
    col = "time_min_s" if stat == "min" else "time_median_s"
    lat = lat.fillna({k: -1 for k in schema.numeric_keys()})
    for key, grp in lat.groupby(FIT_KEYS, sort=True):
        s = grp.set_index("bytes")[col].sort_index()  # one row per size: every other key is in FIT_KEYS
        if len(s) < 2:
            continue
        sizes = s.index.to_numpy(float)
        alpha, beta, err = fit(sizes, s.to_numpy(float))
        rows.append({**dict(zip(FIT_KEYS, key)), "alpha": alpha, "beta": beta, "err": err,
                     "sizes": f"{fmt_bytes(sizes.min())}–{fmt_bytes(sizes.max())}", "n": len(s)})
    return pd.DataFrame(rows)


def fit_name(r: dict[Any, Any], many: bool) -> str:
    """'label · library · comm' (+ method, settings and layout where one label has several fits of a comm)."""
    extra = ""
    if many:
        extra = " ".join(x for x in (str(r.get("method", "")), f"[{r['variant']}]" if r.get("variant") else "",
                                     f"np{int(r['nprocs'])}" if r.get("nprocs", -1) > 0 else "") if x)
    return " · ".join(x for x in (str(r["label"]), str(r["library"]), str(r["comm"]), extra) if x)


@dataclass
class Fit:
    comm: str
    alpha: float
    beta: float


def pick(fitted: pd.DataFrame, label: str, nnodes: float, library: str = "") -> Fit | None:
    """The fit for a run of label (and library, where one exists): inter-node when the run spans nodes,
    else intra; the default pingpong configuration (warm cache, no extra settings, fewest ranks) first."""
    f = fitted[fitted["label"] == label]
    if library and (f["library"] == library).any():
        f = f[f["library"] == library]
    if f.empty:
        f = fitted[fitted["label"] == "*"]
    if f.empty:
        return None
    want = "inter" if nnodes > 1 else "intra"
    m = f[f["comm"] == want]
    m = m if not m.empty else f
    m = m.assign(o=(m["method"] != "").astype(int) + (m["variant"] != "").astype(int)).sort_values(
        ["o", "nprocs"], kind="stable")
    r = m.to_dict("records")[0]
    return Fit(str(r["comm"]), float(r["alpha"]), float(r["beta"]))
