"""Reading and checking mpimb results: a CSV (one row per test) with its JSON
metadata next to it (same name, .json).  Every problem is reported as one line
``file:line: what is wrong``; nothing here raises anything but InputError."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import schema

SCHEMA_VERSION = schema.SCHEMA_VERSION
READABLE_VERSIONS = (1, 2)

# The columns and their types come from the one definition (mpimb/schema/).
COLUMNS = schema.columns()
COLUMNS_V1 = schema.previous_columns(1)
STR_COLS = schema.typed_columns("string")
INT_COLS = schema.typed_columns("integer")
FLOAT_COLS = [c for c in schema.typed_columns("number") if c not in INT_COLS]
REQUIRED = ["run_id", "program", "test", "nprocs", "stop_reason", "label"]
STOP_REASONS = {"ci", "max-reps", "budget"}
THREAD_LEVELS = {"single", "funneled", "serialized", "multiple"}
VERIFIED = {"yes", "no", ""}
META_REQUIRED = ["schema_version", "run_id", "program", "label", "complete", "nprocs"]


class InputError(Exception):
    """Bad input: args are the problem lines (``file:line: what``)."""

    @property
    def problems(self) -> list[str]:
        return [str(a) for a in self.args]


@dataclass
class Run:
    """One program run: its rows and metadata."""

    csv_path: Path
    rows: pd.DataFrame
    meta: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return str(self.meta.get("label", ""))

    @property
    def program(self) -> str:
        return str(self.meta.get("program", ""))

    @property
    def simulated(self) -> bool:
        return bool(self.meta.get("simulated", False))


def expand(paths: list[str]) -> list[Path]:
    """Files and directories -> the result CSVs they name (directories recursively)."""
    out: list[Path] = []
    problems: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.rglob("*.csv"))
            if not found:
                problems.append(f"{p}: no result files (*.csv) in this directory")
            out.extend(found)
        elif p.suffix == ".json" and p.with_suffix(".csv").exists():
            out.append(p.with_suffix(".csv"))
        elif p.exists():
            out.append(p)
        else:
            problems.append(f"{p}: no such file or directory")
    if problems:
        raise InputError(*problems)
    seen: set[Path] = set()
    return [p for p in out if not (p.resolve() in seen or seen.add(p.resolve()))]  # type: ignore[func-returns-value]


def _line(i: int) -> int:
    return int(i) + 2  # header is line 1


def _read_meta(csv_path: Path) -> tuple[dict[str, Any], list[str]]:
    jp = csv_path.with_suffix(".json")
    if not jp.exists():
        return {}, [f"{jp}: metadata file missing (every result CSV needs its .json next to it)"]
    try:
        meta = json.loads(jp.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        return {}, [f"{jp}: cannot read: {e}"]
    except json.JSONDecodeError as e:
        return {}, [f"{jp}:{e.lineno}: not valid JSON: {e.msg}"]
    if not isinstance(meta, dict):
        return {}, [f"{jp}:1: expected a JSON object"]
    probs = [f"{jp}: required field '{k}' missing" for k in META_REQUIRED if k not in meta]
    v = meta.get("schema_version")
    if "schema_version" in meta and v not in READABLE_VERSIONS:
        if isinstance(v, int) and not isinstance(v, bool) and v > SCHEMA_VERSION:
            probs.append(f"{jp}: schema_version {v} is newer than this mpimb-report understands "
                         f"({SCHEMA_VERSION}); upgrade mpimb-report")
        else:
            probs.append(f"{jp}: unknown schema_version {v!r} (this mpimb-report reads version "
                         f"{SCHEMA_VERSION}; no upgrade path from it)")
    for k in ("nprocs", "nnodes", "ppn", "rows"):
        if k in meta and (not isinstance(meta[k], int) or isinstance(meta[k], bool) or meta[k] < 0):
            probs.append(f"{jp}: field '{k}' must be a non-negative integer, got {meta[k]!r}")
    if "complete" in meta and not isinstance(meta["complete"], bool):
        probs.append(f"{jp}: field 'complete' must be true or false, got {meta['complete']!r}")
    return meta, probs


def _bad_numbers(raw: pd.Series, integer: bool) -> pd.Series:
    """Mask of non-empty cells that are not numbers (or not integers)."""
    s = raw.astype("string")
    num = pd.to_numeric(s, errors="coerce")
    bad = s.notna() & (s != "") & num.isna()
    if integer:
        with np.errstate(invalid="ignore"):
            bad |= num.notna() & ((num % 1) != 0)
    return bad


def _read_fast(data: bytes) -> pd.DataFrame | None:
    """Well-formed files: every numeric column parses as float64 (pyarrow when installed, multi-threaded).
    None when anything is off; the careful path then finds and reports it."""
    numeric = {c: "float64" for c in INT_COLS + FLOAT_COLS}
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        from pyarrow import csv as pacsv  # type: ignore[import-untyped]
    except ImportError:
        pa = None
    if pa is not None:
        types = {**{c: pa.float64() for c in numeric}, **{c: pa.string() for c in STR_COLS}}
        try:
            table = pacsv.read_csv(pa.py_buffer(data), convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[""], strings_can_be_null=False, quoted_strings_can_be_null=False))
            return table.to_pandas()
        except (pa.ArrowException, ValueError, OSError):  # not well-formed
            return None
    try:
        return pd.read_csv(io.BytesIO(data), dtype={**{c: "string" for c in STR_COLS}, **numeric},
                           keep_default_na=False, na_values={c: [""] for c in numeric}, engine="c")
    except (ValueError, pd.errors.ParserError, MemoryError):
        return None


def read_csv(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The CSV as a typed frame (ints as float with NaN for empty), plus problems."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return pd.DataFrame(), [f"{path}: cannot read: {e.strerror or e}"]
    if not data or data.isspace():
        return pd.DataFrame(), [f"{path}:1: empty file (no header, no rows)"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return pd.DataFrame(), [f"{path}: not UTF-8 text (byte {e.start}); is this a result CSV?"]
    nl = text.find("\n")
    header = next(csv.reader(io.StringIO(text[:nl] if nl >= 0 else text)), [])
    header = [h.strip() for h in header]
    # schema 1 (no params column) is read with its own columns; the ones it lacks are added empty
    expected = COLUMNS if "params" in header else COLUMNS_V1
    missing = [c for c in expected if c not in header]
    if missing:
        if len(missing) == len(expected):
            return pd.DataFrame(), [(f"{path}:1: not an mpimb result CSV (header has none of the columns "
                                    f"run_id, program, test, ...)")]
        return pd.DataFrame(), [f"{path}:1: missing column(s): {', '.join(missing)}"]
    probs: list[str] = []
    extra = [c for c in header if c not in expected]
    if extra:
        probs.append(f"{path}:1: unknown column(s): {', '.join(extra)}")
    nlines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if not text.endswith("\n"):
        probs.append(f"{path}:{nlines}: truncated: the last line does not end with a newline "
                     f"(was the run killed while writing?)")
    dtypes: dict[str, Any] = {c: "string" for c in STR_COLS}
    fast = _read_fast(data) if not extra and text.endswith("\n") else None
    try:
        df = fast if fast is not None else pd.read_csv(io.StringIO(text), dtype=dtypes, keep_default_na=False, na_values={c: [""] for c in
                         INT_COLS + FLOAT_COLS}, engine="c", low_memory=False)
    except pd.errors.ParserError as e:
        msg = str(e)
        import re

        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
        if m:
            return pd.DataFrame(), [f"{path}:{m.group(2)}: expected {m.group(1)} fields, found {m.group(3)}"]
        return pd.DataFrame(), [f"{path}: malformed CSV: {msg.splitlines()[0] if msg else 'parse error'}"]
    except (ValueError, MemoryError) as e:
        return pd.DataFrame(), [f"{path}: malformed CSV: {e}"]
    df.columns = [str(c).strip() for c in df.columns]
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = "" if c in STR_COLS else np.nan
    if df.empty:
        probs.append(f"{path}:2: no result rows (header only)")
        return df, probs
    # Types: numeric columns the parser could not read as numbers hold strings.
    for c in INT_COLS + FLOAT_COLS:
        col = df[c]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            bad = _bad_numbers(col, c in INT_COLS)
            for i in np.flatnonzero(bad.to_numpy())[:5]:
                kind = "an integer" if c in INT_COLS else "a number"
                probs.append(f"{path}:{_line(i)}: column '{c}': expected {kind}, got {col.iloc[i]!r}")
            if bad.sum() > 5:
                probs.append(f"{path}: column '{c}': {int(bad.sum()) - 5} more bad value(s)")
            df[c] = pd.to_numeric(col.astype("string"), errors="coerce")
        elif c in INT_COLS and col.dtype.kind == "f":
            v = col.to_numpy()
            with np.errstate(invalid="ignore"):
                frac = v != np.floor(v)
            frac &= ~np.isnan(v)
            for i in np.flatnonzero(frac)[:5]:
                probs.append(f"{path}:{_line(i)}: column '{c}': expected an integer, got {col.iloc[i]!r}")
        if df[c].dtype != np.float64:
            df[c] = df[c].astype("float64")
    for c in STR_COLS:
        if df[c].hasnans:
            df[c] = df[c].fillna("")
    return df, probs


def na_mask(stop_reason: pd.Series) -> pd.Series:
    """Rows whose stop_reason is 'n/a: reason' (string work only on the rare rows that are not measured)."""
    m = ~stop_reason.isin(STOP_REASONS) & (stop_reason != "")
    if m.any():
        m[m] = stop_reason[m].str.startswith("n/a")
    return m


def _show(v: Any) -> str:
    return f"{float(v):g}" if isinstance(v, (float, int, np.number)) else repr(str(v))


def check_rows(path: Path, df: pd.DataFrame) -> list[str]:
    """Consistency of the rows among themselves (vectorised; at most 5 lines per kind)."""
    probs: list[str] = []

    def report(mask: pd.Series, what: Any) -> None:
        idx = np.flatnonzero(mask.to_numpy())
        for i in idx[:5]:
            probs.append(f"{path}:{_line(i)}: {what(i) if callable(what) else what}")
        if len(idx) > 5:
            probs.append(f"{path}: ... and {len(idx) - 5} more line(s) like that")

    for c in REQUIRED:
        col = df[c]
        report(col.isna() | (col == ""), f"column '{c}' is empty")
    na = na_mask(df["stop_reason"])
    measured = ~na & (df["stop_reason"] != "")
    report(measured & ~df["stop_reason"].isin(STOP_REASONS),
           lambda i: f"stop_reason {df['stop_reason'].iloc[i]!r} is not ci, max-reps, budget or 'n/a: reason'")
    report(~df["thread_level"].isin(THREAD_LEVELS),
           lambda i: f"thread_level {df['thread_level'].iloc[i]!r} is not single/funneled/serialized/multiple")
    report(~df["verified"].isin(VERIFIED), lambda i: f"verified {df['verified'].iloc[i]!r} is not yes, no or empty")
    tcols = ["time_min_s", "time_median_s", "time_max_s"]
    report(measured & df[tcols].isna().any(axis=1), "measured row without time_min_s/median/max")
    report(na & df[tcols].notna().any(axis=1), "'n/a' row has times")
    t = df
    with np.errstate(invalid="ignore"):
        report(measured & (t["time_min_s"] < 0), "negative time")
        order = (t["time_min_s"] <= t["time_median_s"] * (1 + 1e-9)) & (t["time_median_s"] <= t["time_max_s"] * (1 + 1e-9))
        report(measured & t[tcols].notna().all(axis=1) & ~order, "times not ordered: need min <= median <= max")
        ci = t[["time_ci_lo_s", "time_ci_hi_s"]].notna().all(axis=1)
        ci_ok = (t["time_ci_lo_s"] <= t["time_median_s"] * (1 + 1e-9)) & (t["time_median_s"] <= t["time_ci_hi_s"] * (1 + 1e-9))
        report(measured & ci & ~ci_ok, "confidence interval does not contain the median")
    for c in ("nprocs", "iters", "reps"):
        report(measured & (df[c] < 1) if c != "nprocs" else df[c] < 1, f"column '{c}' must be >= 1")
    report(df["neighbors"].notna() & ~df["neighbors"].isin([2, 4, 6, 8, 26]) & (df["program"] == "halocompare"),
           "halocompare neighbors must be 2, 4, 6, 8 or 26")
    report(df["periodic"].notna() & ~df["periodic"].isin([0, 1]), "periodic must be 0 or 1")
    report(df["bytes"] < 0, "bytes is negative")
    for c in ("run_id", "program", "label", "nprocs"):
        first = df[c].iloc[0]
        same = df[c] == first
        if c == "nprocs" and (isinstance(first, float) and math.isnan(first)):
            continue
        report(~same & df[c].notna(), lambda i, c=c, first=first: f"{c} {_show(df[c].iloc[i])} differs from "
               f"the first row's {_show(first)} (one run per file)")
    return probs


def check_meta(path: Path, df: pd.DataFrame, meta: dict[str, Any]) -> tuple[list[str], list[str]]:
    """CSV against its JSON: (problems, warnings)."""
    probs: list[str] = []
    warns: list[str] = []
    jp = path.with_suffix(".json")
    if df.empty or not meta:
        return probs, warns
    for k in ("run_id", "program", "label"):
        if k in meta and str(df[k].iloc[0]) != str(meta[k]):
            probs.append(f"{path}:2: {k} {df[k].iloc[0]!r} differs from {jp.name}'s {meta[k]!r}")
    if isinstance(meta.get("nprocs"), int) and df["nprocs"].iloc[0] != meta["nprocs"]:
        probs.append(f"{path}:2: nprocs {df['nprocs'].iloc[0]:g} differs from {jp.name}'s {meta['nprocs']}")
    if meta.get("complete") is False:
        warns.append(f"{jp}: run incomplete (\"complete\": false): using its {len(df)} finished row(s)")
    elif isinstance(meta.get("rows"), int) and meta["rows"] != len(df):
        probs.append(f"{path}: {len(df)} row(s), but {jp.name} says the complete run wrote {meta['rows']}")
    return probs, warns


def load_run(path: Path) -> tuple[Run | None, list[str], list[str]]:
    """(run or None, problems, warnings) for one CSV."""
    df, probs = read_csv(path)
    meta, mprobs = _read_meta(path)
    probs += mprobs
    warns: list[str] = []
    if not df.empty and not any(":1: " in p and "missing column" in p for p in probs):
        probs += check_rows(path, df)
        p2, warns = check_meta(path, df, meta)
        probs += p2
    header_only = [p for p in probs if p.endswith(": no result rows (header only)")]
    if header_only and len(probs) == 1 and meta.get("complete") is False:
        # a run that has just started (or was killed before its first row): nothing to use yet
        return None, [], [f"{path}: run incomplete (\"complete\": false) and no finished rows yet: skipped"]
    if probs or df.empty:
        return None, probs, warns
    return Run(path, df, meta, warns), probs, warns


def load(paths: list[str], strict: bool = True) -> tuple[list[Run], list[str], list[str]]:
    """Loads every result under paths: (runs, problems, warnings).  Raises InputError
    (with every problem line) when strict and anything is wrong."""
    files = expand(paths)
    runs: list[Run] = []
    probs: list[str] = []
    warns: list[str] = []
    for f in files:
        run, p, w = load_run(f)
        probs += p
        warns += w
        if run is not None:
            runs.append(run)
    if strict and probs:
        raise InputError(*probs)
    if strict and not runs:
        raise InputError(f"{', '.join(paths)}: no usable results")
    return runs, probs, warns


def frame(runs: list[Run]) -> pd.DataFrame:
    """All rows of runs in one frame, with derived columns:
    simulated, library (short MPI name), sent_bytes (bytes one process sends per op)."""
    parts = []
    for r in runs:
        d = r.rows  # the run's own frame gains the derived columns (no copy)
        d["simulated"] = r.simulated
        d["library"] = short_library(r.meta)
        parts.append(d)
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["sent_bytes"] = df["mbps"] * 1e6 * df["time_median_s"]
    df["na"] = na_mask(df["stop_reason"])
    return df


def short_library(meta: dict[str, Any]) -> str:
    """'Open MPI 4.1.4', 'MPICH 4.0.2', 'SimGrid SMPI ...' from the library version string."""
    mpi = meta.get("mpi") if isinstance(meta.get("mpi"), dict) else {}
    s = str((mpi or {}).get("library_version", "")).strip()
    if not s:
        return "unknown MPI"
    first = s.splitlines()[0]
    import re

    m = re.match(r"Open MPI v?([\d.]+)", first)
    if m:
        return f"Open MPI {m.group(1)}"
    m = re.search(r"MPICH Version:\s*([\w.]+)", s)
    if m:
        return f"MPICH {m.group(1)}"
    m = re.search(r"Intel\(R\) MPI Library ([\d.]+)", s)
    if m:
        return f"Intel MPI {m.group(1)}"
    return first.split(",")[0][:40]


def stat_time(df: pd.DataFrame, stat: str) -> pd.Series:
    return df["time_min_s"] if stat == "min" else df["time_median_s"]


def rate(df: pd.DataFrame, stat: str) -> pd.Series:
    """MB/s (10^6 B/s of the bytes one process sends) for the chosen statistic."""
    if stat == "min":
        with np.errstate(invalid="ignore", divide="ignore"):
            return df["mbps"] * df["time_median_s"] / df["time_min_s"]
    return df["mbps"]


def rel(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def groups(df: pd.DataFrame, keys: list[str], sort: bool = True,
           dropna: bool = True) -> Iterator[tuple[tuple[Any, ...], pd.DataFrame]]:
    """df.groupby(keys) with the key always a plain tuple (typed loosely, as the values are)."""
    for k, g in df.groupby(keys, sort=sort, dropna=dropna):
        yield (tuple(k) if isinstance(k, tuple) else (k,)), g
