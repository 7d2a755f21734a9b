"""What identifies a measurement, and what to do when one is there twice.

KEYS are the schema's x-key columns (program, test, method, comm, neighbors,
periodic, bytes, nprocs, nnodes, ppn, threads, thread_level, params): two rows
that measure different things differ in at least one of them, so every table,
plot, comparison and model groups by all of them and never merges across them.
Every subset of them is named by its roles (schema.key_roles, x-role in
results.schema.json).  The params column is read only through schema.parse_params
(param_values, param_numbers, without_param here: once per distinct value).
A machine is a (label, MPI library) pair; within one machine a key that occurs
in more than one run is measured by several **launches**, and every launch is
used (combine): the verdicts rest on them (mpimb.launches), and launches of one
machine that ran different builds are named in a warning (builds)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from . import schema
from .launches import MIN_LAUNCHES, center_interval, trimmed
from .load import Run, frame

KEYS = schema.key_columns()
MACHINE = ["label", "library"]  # derived columns (load.frame): what makes a machine
# Key columns that are the same on every row of a run (a run is one program on one layout).
PER_RUN = schema.key_roles("program", "layout", "thread-level")
LAYOUT = schema.key_roles("layout")  # nprocs, nnodes, ppn
VARIANT = "variant"  # derived column (with_variant): the params pairs that differ within a frame
SYNC = "sync"  # the params key of how a test's repetitions started (docs/measurement.md)
# the params key of a simulated cart row: the platform's model of its MPI's MPI_Cart_create mapping, which
# halocompare applies under SimGrid (docs/simulate.md); the row is the same configuration as its world row
CART_MODEL = "cart_model"


def machine_name(label: str, library: str, rows: pd.DataFrame) -> str:
    """How findings and guidelines name a machine (MACHINE: 'label · library'), with ' [SIMULATED on
    bgl-cop-64]' where its rows come from a SimGrid model: the platform model its findings rest on."""
    name = f"{label} · {library}"
    if "simulated" not in rows or not rows["simulated"].any():
        return name
    models = sorted(set(rows["platform"].astype(str)) - {""}) if "platform" in rows else []
    return name + (f" [SIMULATED on {', '.join(models)}]" if models else " [SIMULATED]")


def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def describe(row: pd.Series | dict[str, Any], with_layout: bool = True) -> str:
    """'halocompare halo irecv-isend world 4-nbr non-periodic 16000 B np4 (1×4) [root=0]'."""
    r = row
    parts = [str(r.get("program", "")), str(r.get("test", "")), str(r.get("method", "")), str(r.get("comm", ""))]
    n = _num(r.get("neighbors"))
    if math.isfinite(n) and n >= 0:
        parts.append(f"{int(n)}-nbr")
    p = _num(r.get("periodic"))
    if math.isfinite(p) and p >= 0:
        parts.append("periodic" if p == 1 else "non-periodic")
    t = _num(r.get("threads"))
    if math.isfinite(t) and t > 1:
        parts.append(f"{int(t)} threads")
    b = _num(r.get("bytes"))
    if math.isfinite(b) and b >= 0:
        parts.append(f"{int(b)} B")
    if with_layout:
        np_ = _num(r.get("nprocs"))
        if math.isfinite(np_):
            parts.append(f"np{int(np_)}")
        nn, ppn = _num(r.get("nnodes")), _num(r.get("ppn"))
        if math.isfinite(nn) and math.isfinite(ppn) and nn > 0:
            parts.append(f"({int(nn)} node{'s' if nn != 1 else ''} × {int(ppn)})")
    if r.get("params"):
        parts.append(f"[{r['params']}]")
    return " ".join(x for x in parts if x)


def _first_per(df: pd.DataFrame, scope: list[str], shared: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(group id per row, its order) for the rows of runs that share a machine and layout: one group per
    (scope, KEYS), the start synchronisation left out (split_sync: the harness's choice per launch)."""
    d = split_sync(df)
    gid = d.groupby([*scope, *KEYS], dropna=False, sort=False, observed=True).ngroup().to_numpy()
    return gid, np.lexsort((d["start_utc"].astype(str).to_numpy(), gid))


def launch_parts(launch: pd.Series) -> tuple[pd.Series, pd.Series]:
    """(series, index) of each load.Run.launch value: 'SERIES#INDEX' for a launch of a scripts/launches series,
    ('', '') for a launch of its own (its run_id)."""
    s = launch.astype(str)
    tagged = s.str.contains("#", regex=False)
    parts = s.str.split("#")
    return parts.str[:-1].str.join("#").where(tagged, ""), parts.str[-1].where(tagged, "")


def builds(df: pd.DataFrame, scope: list[str] | None = None) -> list[str]:
    """One warning per machine whose launches ran different builds (suite version, commit, compiler flags,
    MPI library version): they are judged together only because they share a label, and that is named."""
    scope = scope or MACHINE
    if df.empty or "build" not in df:
        return []
    runs = df[["run_id", *scope, "build", "file"]].drop_duplicates("run_id")
    out = []
    for key, g in runs.groupby(scope, sort=True, observed=True):
        if g["build"].nunique() > 1:
            first = g.drop_duplicates("build")
            name = " · ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
            shown = "; ".join(f"{b} in {f}" for b, f in zip(first["build"][:3], first["file"][:3]))
            out.append(f"{name}: its launches ran {len(first)} different builds or libraries ({shown}"
                       f"{'; ...' if len(first) > 3 else ''}): judged as launches of one machine because they share "
                       "a label")
    return out


def combine(df: pd.DataFrame, scope: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per (scope, KEYS): every launch of a configuration taken together (docs/measurement.md,
    "Launches and the one judge"), and the warnings about launches that ran different builds (builds).

    Added columns: launches (how many launches measured it), launch_times (each launch's median, in
    launch order) and launch_ids (each launch's load.Run.launch).  With more than one launch,
    time_median_s, time_min_s and mbps are the trimmed geometric means over the launches
    (mpimb.launches.trimmed), time_ci_lo_s .. time_ci_hi_s the 95 % trimmed t interval of that mean (two launches: the span of their own
    intervals), reps the smallest count, oversubscribed / busy / failed if any launch was, na if every
    one was, and the rounds of one launch no longer apply (round_group NaN).  Nothing is ever dropped."""
    scope = scope or MACHINE
    warns = builds(df, scope)
    t = df["time_median_s"].to_numpy(float) if len(df) else np.zeros(0)
    runs = df[["run_id", *scope, *PER_RUN]].drop_duplicates("run_id") if len(df) else df
    shared = runs.duplicated([*scope, *PER_RUN], keep=False) if len(df) else pd.Series(dtype=bool)
    if not shared.any():  # the usual case: one launch of every configuration
        ok = np.isfinite(t) & (t > 0)
        own = [(x,) for x in df["launch"]] if "launch" in df else [()] * len(df)
        return df.assign(launches=ok.astype(np.int64), launch_times=pd.Series([(x,) for x in t], index=df.index),
                         launch_ids=pd.Series(own, index=df.index, dtype=object)), warns
    gid, order = _first_per(df, scope, shared)
    d = df.iloc[order].reset_index(drop=True)
    gid = gid[order]
    tt = d["time_median_s"].to_numpy(float)
    ok = np.isfinite(tt) & (tt > 0)
    lt = np.where(ok, np.log(np.where(ok, tt, 1.0)), np.nan)
    g = pd.DataFrame({"g": gid, "lt": lt, "ok": ok,
                      "lmin": np.log(d["time_min_s"].where(d["time_min_s"] > 0)),
                      "lmb": np.log(d["mbps"].where(d["mbps"] > 0)),
                      "lo": d["time_ci_lo_s"], "hi": d["time_ci_hi_s"], "reps": d["reps"],
                      "over": d["oversubscribed"], "busy": d.get("busy", False),
                      "failed": d["failed"], "na": d["na"]})
    a = g.groupby("g", sort=True).agg(size=("ok", "size"), lo=("lo", "min"), hi=("hi", "max"), reps=("reps", "min"),
                                      over=("over", "any"), busy=("busy", "any"), failed=("failed", "any"),
                                      na=("na", "all"))
    tr = trimmed(gid, lt).reindex(a.index)  # the launches' centre, the one judge's (mpimb.launches)
    lmin, lmb = (trimmed(gid, x.to_numpy(float))["m"].reindex(a.index) for x in (g["lmin"], g["lmb"]))
    first = np.unique(gid, return_index=True)[1]
    out = d.iloc[first].reset_index(drop=True)
    n = tr["n"].fillna(0).to_numpy(np.int64)
    many = a["size"].to_numpy() > 1
    m = tr["m"].to_numpy(float)
    clo, chi = center_interval(n, tr["h"].fillna(0).to_numpy(float), m, tr["v"].to_numpy(float))
    lo = np.where(n >= MIN_LAUNCHES, clo, a["lo"].to_numpy(float))
    hi = np.where(n >= MIN_LAUNCHES, chi, a["hi"].to_numpy(float))
    times = d.groupby(gid, sort=True)["time_median_s"].agg(tuple)
    ids = d.groupby(gid, sort=True)["launch"].agg(tuple) if "launch" in d else pd.Series([()] * len(out))
    out = out.assign(
        time_median_s=np.where(many, np.exp(m), out["time_median_s"]),
        time_min_s=np.where(many, np.exp(lmin.to_numpy(float)), out["time_min_s"]),
        mbps=np.where(many, np.exp(lmb.to_numpy(float)), out["mbps"]),
        time_ci_lo_s=np.where(many, lo, out["time_ci_lo_s"]), time_ci_hi_s=np.where(many, hi, out["time_ci_hi_s"]),
        reps=np.where(many, a["reps"].to_numpy(float), out["reps"]),
        oversubscribed=a["over"].to_numpy(bool), busy=a["busy"].to_numpy(bool), failed=a["failed"].to_numpy(bool),
        na=a["na"].to_numpy(bool), round_group=np.where(many, np.nan, out["round_group"]),
        launches=n, launch_times=times.to_numpy(), launch_ids=ids.to_numpy())
    return out, warns


def _distinct(params: pd.Series) -> tuple[np.ndarray, list[str]]:
    """params (NaN as '') as codes into its distinct values: per-value work, then one take per result
    (Series.map and to_numeric would do per-row work on a str column: 10^6 rows in compare)."""
    codes, uniq = pd.factorize(params.fillna("").astype(str))
    return codes, [str(u) for u in uniq]


def _spread(values: list[Any], codes: np.ndarray, index: pd.Index, numeric: bool = False) -> pd.Series:
    """values (one per distinct value) back onto the rows; numeric: as numbers (NaN where not one)."""
    vals = pd.Series(values)
    if numeric:
        vals = pd.to_numeric(vals, errors="coerce")
    return vals.take(codes).set_axis(index)


def _per_value(params: pd.Series, f: Any) -> pd.Series:
    """f(parsed params) for every row, computed once per distinct params value."""
    codes, uniq = _distinct(params)
    return _spread([f(schema.parse_params(u)) for u in uniq], codes, params.index)


def param_values(params: pd.Series, key: str) -> pd.Series:
    """The value of key in every row's params, '' where the row has no such pair."""
    return _per_value(params, lambda d: d.get(key, "")).astype(str)


def param_numbers(params: pd.Series, key: str) -> pd.Series:
    """The value of key in every row's params as a number, NaN where absent or not a number."""
    return pd.to_numeric(param_values(params, key), errors="coerce")


def without_param(params: pd.Series, key: str) -> pd.Series:
    """Every row's params with the pair of key taken out (canonical: the others stay sorted)."""
    return _per_value(params, lambda d: ";".join(f"{k}={v}" for k, v in d.items() if k != key)).astype(str)


def split_sync(df: pd.DataFrame) -> pd.DataFrame:
    """df with the start synchronisation taken out of params into a column `sync`.

    How a test's repetitions start (sync=window|barrier) is the harness's choice per run
    (docs/measurement.md): window where the clocks agree well enough, else barrier.  Rows of
    different runs (machines, process counts) that differ only in it measure the same operation
    and are matched by comparisons and scaling plots, which mark the pairs whose sync differs
    (a barrier-started figure includes the barrier's exit skew)."""
    if df.empty or "params" not in df:
        return df.assign(sync="")
    return df.assign(sync=param_values(df["params"], SYNC), params=without_param(df["params"], SYNC))


def split_measured(df: pd.DataFrame) -> pd.DataFrame:
    """df with the results some rows carry in params (schema.measured_params: --overlap's pure_s, cpu_s and
    overlap_pct) taken out into numeric columns of those names (NaN on other rows), so that params holds
    settings only and a row's key is the same in every run; an overlap row keeps overlap=F there."""
    keys = schema.measured_params()
    if df.empty or "params" not in df:
        return df.assign(**{k: np.nan for k in keys})
    codes, uniq = _distinct(df["params"])
    parsed = [{} if schema.params_problem(u) else schema.parse_params(u) for u in uniq]
    text = schema.measured_text_params()
    cols = {k: _spread([d.get(k, "") for d in parsed], codes, df.index, numeric=k not in text) for k in keys}
    kept = _spread([";".join(f"{k}={v}" for k, v in d.items() if k not in keys) if d else u
                    for u, d in zip(uniq, parsed)], codes, df.index)
    return df.assign(params=kept, **cols)


def mocked(params: pd.Series) -> pd.Series:
    """Whether each row is a halocompare --mock row (mock=yes: packed and unpacked, nothing sent;
    docs/halo-phases.md): never an exchange to compare with others."""
    return param_values(params, "mock") == "yes"


def split_overlap(d: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(d's ordinary rows, its --overlap rows: those with an overlap share, split_measured)."""
    o = d["overlap_pct"].notna().to_numpy() if "overlap_pct" in d else np.zeros(len(d), bool)
    return d[~o], d[o]


def param_split(params: pd.Series) -> tuple[pd.Series, dict[str, str]]:
    """(per row the pairs whose key takes more than one value in params, 'key=value;...';
    the pairs that never vary: key -> value).  Works on the distinct values only."""
    uniq = [str(u) for u in params.unique()]
    parsed = {u: schema.parse_params(u) for u in uniq}
    values: dict[str, set[str]] = {}
    for d in parsed.values():
        for k, v in d.items():
            values.setdefault(k, set()).add(v)
    # how repetitions started is the harness's choice per test (split_sync): a note, never a variant
    varying = {k for k, vs in values.items() if len(vs) > 1 and k != SYNC}
    part = {u: ";".join(f"{k}={v}" for k, v in d.items() if k in varying) for u, d in parsed.items()}
    constant = {k: "|".join(sorted(vs)) for k, vs in sorted(values.items()) if k not in varying}
    return params.map(part).fillna("").astype(str), constant


def with_variant(d: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """d with a 'variant' column (the params pairs that differ within d) and the constant ones."""
    variant, constant = param_split(d["params"])
    return d.assign(variant=variant.to_numpy()), constant


def params_note(constant: dict[str, str]) -> str:
    """'settings: root=0, timing=osu' for a table's notes (empty when there are none)."""
    return ("settings (params): " + ", ".join(f"{k}={v}" for k, v in constant.items())) if constant else ""


def failed_lines(df: pd.DataFrame, limit: int = 8) -> tuple[int, list[str]]:
    """(how many rows FAILED verification, the first limit of them described, with label and file)."""
    where = np.flatnonzero(df["failed"].to_numpy(bool)) if "failed" in df else np.zeros(0, dtype=np.intp)
    if not len(where):  # (a take from pyarrow text columns joins their chunks first, even for no row: 0.2 s
        return 0, []    # on compare's 10^6 rows)
    names = [f"{describe(r)} — {r['label']} ({r['file']})" for _, r in df.iloc[where[:limit]].iterrows()]
    return len(where), names


def failed_banner(df: pd.DataFrame, limit: int = 8) -> str:
    """'FAILED verification: N result(s) ...:' and one indented line per result (empty when none)."""
    n, names = failed_lines(df, limit)
    if not n:
        return ""
    lines = [(f"FAILED verification: {n} result(s) failed their data check (the data received was wrong; "
             "shown as FAILED):")] + [f"  {x}" for x in names]
    if n > len(names):
        lines.append(f"  ... and {n - len(names)} more")
    return "\n".join(lines)


def layouts(runs: list[Run]) -> list[str | None]:
    """Every run's layout ("4x1") from its Slurm record, where it has one (the "slurm" section slurm/sweep's
    jobs add to the metadata: nodes, ppn), else None."""
    out: list[str | None] = []
    for r in runs:
        slurm: Any = r.meta.get("slurm")
        ok = isinstance(slurm, dict) and isinstance(slurm.get("nodes"), int) and isinstance(slurm.get("ppn"), int)
        out.append(f"{slurm['nodes']}x{slurm['ppn']}" if ok else None)
    return out


def prepared(runs: list[Run]) -> tuple[pd.DataFrame, list[str]]:
    """The one pipeline's first step: frame(runs) with every configuration's launches taken together
    (combine), and the warnings about launches of one machine that ran different builds; runs from a Slurm sweep carry their layout (nodes x ranks per node).
    Everything after it (tables, plots, findings) takes this frame and never loads or keys again."""
    df = split_measured(frame(runs))
    lay = layouts(runs)
    if any(x is not None for x in lay):
        df["layout"] = np.repeat(np.array(lay, dtype=object), [r.nrows for r in runs])
    return combine(df)
