"""Reading and checking mpimb results: a CSV (one row per test) with its JSON
metadata next to it (same name, .json).  Every problem is reported as one line
``file:line: what is wrong``; nothing here raises anything but InputError."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from jsonschema import Draft202012Validator

from . import schema

SCHEMA_VERSION = schema.SCHEMA_VERSION
READABLE_VERSIONS = schema.readable_versions()

# The columns, their types and vocabularies come from the one definition (mpimb/schema/).
COLUMNS = schema.columns()
STR_COLS = schema.typed_columns("string")
INT_COLS = schema.typed_columns("integer")
FLOAT_COLS = [c for c in schema.typed_columns("number") if c not in INT_COLS]
REQUIRED = schema.required_columns()
KEYS = schema.key_columns()
# Version 1 wrote a failed verification as a row without times (schema 2: the row keeps its times).
V1_FAILED = "verification failed"
PUBLISHED = "published"  # stop_reason of a figure transcribed from a publication (reference sets)
TIMES = ["time_min_s", "time_median_s", "time_max_s"]


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

    @property
    def oversubscribed(self) -> bool:
        """More ranks x threads than cores on a node (meta.schema.json): the OS scheduler's figures."""
        return self.meta.get("oversubscribed") is True

    @property
    def published(self) -> bool:
        """Figures transcribed from a publication (reference sets), not measured."""
        return self.meta.get("source") == "published"


MATRIX_SUFFIX = "-matrix.csv"  # a profile's communication matrix beside its results (mpimb.profile)
ROUNDS_SUFFIX = "-rounds.csv"  # a grouped run's per-round samples beside its results (docs/results-format.md)


def companion(p: Path) -> bool:
    """A profile's matrix CSV or a grouped run's rounds CSV (X-matrix.csv, X-rounds.csv next to X.json):
    part of that run, not a run of its own."""
    return any(p.name.endswith(suffix) and p.with_name(p.name[: -len(suffix)] + ".json").exists()
               for suffix in (MATRIX_SUFFIX, ROUNDS_SUFFIX))


def expand(paths: list[str]) -> list[Path]:
    """Files and directories -> the result CSVs they name (directories recursively)."""
    out: list[Path] = []
    problems: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.csv") if not companion(f))
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


def _json_line(text: str, key: str) -> int:
    """Line of the first '"key":' in a JSON text (1 when absent)."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


@cache
def _validator(version: int) -> Draft202012Validator:
    return Draft202012Validator(schema.meta_document(version))


def _meta_problems(jp: Path, text: str, meta: dict[str, Any], version: int) -> list[str]:
    """meta.schema.json on one file: one line per problem (at most five), with the line of its field."""
    probs = []
    errors = sorted(_validator(version).iter_errors(meta), key=lambda e: [str(x) for x in e.absolute_path])
    for e in errors[:5]:
        path = [str(x) for x in e.absolute_path]
        if e.validator == "required" and isinstance(e.instance, dict):
            missing = str(e.message).split("'")[1] if "'" in str(e.message) else ""
            where = ".".join([*path, missing])
            line = _json_line(text, path[0]) if path else 1
            probs.append(f"{jp}:{line}: required field '{where}' missing")
            continue
        line = _json_line(text, path[0]) if path else 1
        probs.append(f"{jp}:{line}: field '{'.'.join(path) or '(top)'}': {e.message}")
    if len(errors) > 5:
        probs.append(f"{jp}: ... and {len(errors) - 5} more problem(s) with meta.schema.json")
    return probs


def _read_meta(csv_path: Path) -> tuple[dict[str, Any], int | None, str, list[str]]:
    """(metadata, its schema version or None when unusable, 'file:line' of that version, problems)."""
    jp = csv_path.with_suffix(".json")
    if not jp.exists():
        return {}, None, "", [f"{jp}: metadata file missing (every result CSV needs its .json next to it)"]
    try:
        text = jp.read_text(encoding="utf-8")
        meta = json.loads(text)
    except (OSError, UnicodeDecodeError) as e:
        return {}, None, "", [f"{jp}: cannot read: {e}"]
    except json.JSONDecodeError as e:
        return {}, None, "", [f"{jp}:{e.lineno}: not valid JSON: {e.msg}"]
    if not isinstance(meta, dict):
        return {}, None, "", [f"{jp}:1: expected a JSON object"]
    if "schema_version" not in meta:
        return meta, None, "", [f"{jp}:1: required field 'schema_version' missing"]
    v = meta["schema_version"]
    line = _json_line(text, "schema_version")
    if v not in READABLE_VERSIONS or isinstance(v, bool):
        if isinstance(v, int) and not isinstance(v, bool) and v > SCHEMA_VERSION:
            return meta, None, "", [(f"{jp}:{line}: schema_version {v} is newer than this mpimb-report understands "
                                f"({SCHEMA_VERSION}); upgrade mpimb-report")]
        return meta, None, "", [(f"{jp}:{line}: unknown schema_version {v!r} (this mpimb-report reads versions "
                            f"{', '.join(map(str, READABLE_VERSIONS))}; no upgrade path from it)")]
    return meta, int(v), f"{jp}:{line}", _meta_problems(jp, text, meta, int(v))


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


def header_version(header: list[str]) -> int | None:
    """The schema version whose columns a header has (exactly, in any order), else None."""
    for v in READABLE_VERSIONS:
        if set(schema.columns_of(v)) == set(header):
            return v
    return None


def read_csv(path: Path, version: int | None = None, declared: str = "") -> tuple[pd.DataFrame, list[str]]:
    """The CSV as a typed frame with every schema-2 column (ints as float with NaN for
    empty; columns an older version lacks are added empty), plus problems.  version: the
    schema version the JSON declares ('file:line' declared; None: judged from the header)."""
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
    if version is None:  # no usable JSON: the newest version whose columns the header mostly has
        version = max(READABLE_VERSIONS, key=lambda v: (len(set(header) & set(schema.columns_of(v))), v))
    expected = schema.columns_of(version)
    missing = [c for c in expected if c not in header]
    other = header_version(header)
    if other is not None and other != version and declared:
        return pd.DataFrame(), [(f"{declared}: schema_version {version}, but {path.name} has the columns of "
                                 f"schema version {other}")]
    if missing:
        if len(missing) == len(expected):
            return pd.DataFrame(), [(f"{path}:1: not an mpimb result CSV (header has none of the columns "
                                    f"run_id, program, test, ...)")]
        return pd.DataFrame(), [f"{path}:1: missing column(s): {', '.join(missing)}"]
    probs: list[str] = []
    extra = [c for c in header if c not in expected]
    if extra:
        probs.append(f"{path}:1: unknown column(s): {', '.join(extra)} (schema version {version} has "
                     f"{len(expected)} columns: analysis/mpimb/schema/results.schema.json)")
    nlines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if not text.endswith("\n"):
        probs.append(f"{path}:{nlines}: truncated: the last line does not end with a newline "
                     f"(was the run killed while writing?)")
    dtypes: dict[str, Any] = {c: "string" for c in STR_COLS}
    fast = _read_fast(data) if not extra and text.endswith("\n") else None
    try:
        df = fast if fast is not None else pd.read_csv(
            io.StringIO(text), dtype=dtypes, keep_default_na=False, na_values={c: [""] for c in INT_COLS + FLOAT_COLS},
            engine="c", low_memory=False)
    except pd.errors.ParserError as e:
        msg = str(e)
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
    m = ~stop_reason.isin(MEASURED_STOPS) & (stop_reason != "")
    if m.any():
        m[m] = stop_reason[m].str.startswith("n/a")
    return m


MEASURED_STOPS = [v for v in schema.vocabulary("stop_reason")[0] if v != PUBLISHED]


def _show(v: Any) -> str:
    return f"{float(v):g}" if isinstance(v, (float, int, np.number)) else repr(str(v))


def _allowed(values: list[Any], patterns: list[str]) -> str:
    shown = [str(v) if v != "" else "empty" for v in values if v is not None]
    shown += ["'" + p.lstrip("^") + "...'" for p in patterns]
    return ", ".join(shown[:-1]) + (" or " if len(shown) > 1 else "") + shown[-1]


def _vocabulary_bad(col: pd.Series, values: list[Any], patterns: list[str]) -> pd.Series:
    """Cells outside a column's vocabulary (the check runs on the distinct values only)."""
    ok = [u for u in col.unique() if u in values or any(re.match(p, str(u)) for p in patterns)]
    return ~col.isin(ok)


def check_rows(path: Path, df: pd.DataFrame, version: int = SCHEMA_VERSION, typed: bool = True) -> list[str]:
    """The rows against results.schema.json (types are read_csv's) and among themselves:
    vectorised, at most 5 lines per kind of problem.  typed: every cell had its type (else
    cells read as empty would make rows look like duplicates)."""
    probs: list[str] = []

    def report(mask: pd.Series, what: Any) -> None:
        idx = np.flatnonzero(mask.to_numpy())
        for i in idx[:5]:
            probs.append(f"{path}:{_line(i)}: {what(i) if callable(what) else what}")
        if len(idx) > 5:
            probs.append(f"{path}: ... and {len(idx) - 5} more line(s) like that")

    v1_failed = (df["stop_reason"] == V1_FAILED) if version == 1 else pd.Series(False, index=df.index)
    for c in REQUIRED:
        col = df[c]
        report(col.isna() | (col == ""), f"column '{c}' is empty")
    # vocabularies (enum / anyOf of the schema) and minimums
    for c in STR_COLS:
        values, patterns = schema.vocabulary(c)
        if (not values and not patterns) or c == "params":  # params: its own check below
            continue
        bad = _vocabulary_bad(df[c], values, patterns) & (df[c] != "" if c in REQUIRED else True)
        if c == "stop_reason":
            bad &= ~v1_failed
        report(bad, lambda i, c=c, values=values, patterns=patterns:
               f"{c} {df[c].iloc[i]!r} is not {_allowed(values, patterns)}")
    for c in INT_COLS + FLOAT_COLS:
        sp = schema.spec(c)
        if "minimum" in sp:
            with np.errstate(invalid="ignore"):
                report(df[c] < sp["minimum"], lambda i, c=c, m=sp["minimum"]:
                       f"column '{c}' must be >= {m}, got {_show(df[c].iloc[i])}")
        if "enum" in sp:
            report(df[c].notna() & ~df[c].isin([x for x in sp["enum"] if x is not None]),
                   lambda i, c=c, e=sp["enum"]: f"{c} must be one of {_allowed(e, [])}, got {_show(df[c].iloc[i])}")
    params = df["params"]
    uniq = params.unique()
    if len(uniq) > 1 or uniq[0] != "":
        why = {u: schema.params_problem(str(u)) for u in uniq}
        bad_vals = [u for u, w in why.items() if w]
        report(params.isin(bad_vals), lambda i: f"params {params.iloc[i]!r} does not parse: {why[params.iloc[i]]}")
    # meaning: measured rows have ordered times, n/a rows none
    na = na_mask(df["stop_reason"])
    published = df["stop_reason"] == PUBLISHED
    measured = ~na & ~published & ~v1_failed & (df["stop_reason"] != "")
    report(measured & df[TIMES].isna().any(axis=1), "measured row without time_min_s/median/max")
    report(published & df["time_median_s"].isna(), "published row without time_median_s")
    report(na & df[TIMES].notna().any(axis=1), "'n/a' row has times")
    report(v1_failed & df[TIMES].notna().any(axis=1), "schema-1 'verification failed' row has times")
    t = df
    with np.errstate(invalid="ignore"):
        report(measured & (t["time_min_s"] < 0), "negative time")
        order = (t["time_min_s"] <= t["time_median_s"] * (1 + 1e-9)) & (t["time_median_s"] <= t["time_max_s"] * (1 + 1e-9))
        report(measured & t[TIMES].notna().all(axis=1) & ~order, "times not ordered: need min <= median <= max")
        ci = t[["time_ci_lo_s", "time_ci_hi_s"]].notna().all(axis=1)
        ci_ok = (t["time_ci_lo_s"] <= t["time_median_s"] * (1 + 1e-9)) & (t["time_median_s"] <= t["time_ci_hi_s"] * (1 + 1e-9))
        report(measured & ci & ~ci_ok, "confidence interval does not contain the median")
        # percentiles lie between min and max; each rank's own median is at most the median of the
        # per-repetition maximum over ranks, so rank_min <= rank_mean <= time_median
        tol = 1 + 1e-9
        for c in ("time_p90_s", "time_p99_s"):
            report(measured & t[c].notna() & ((t[c] * tol < t["time_min_s"]) | (t[c] > t["time_max_s"] * tol)),
                   f"{c} outside [time_min_s, time_max_s]")
        report(measured & (t["time_p90_s"] > t["time_p99_s"] * tol), "time_p90_s > time_p99_s")
        report(measured & ((t["rank_min_s"] > t["rank_mean_s"] * tol) | (t["rank_mean_s"] > t["time_median_s"] * tol)),
               "need rank_min_s <= rank_mean_s <= time_median_s")
    # profile rows (stop_reason finalize) count calls; they have no iterations or repetitions
    timed = measured & (df["stop_reason"] != "finalize")
    for c in ("iters", "reps"):
        report(timed & ~(df[c] >= 1), f"column '{c}' must be >= 1")
    report(df["neighbors"].notna() & ~df["neighbors"].isin([2, 4, 6, 8, 26]) & (df["program"] == "halocompare"),
           "halocompare neighbors must be 2, 4, 6, 8 or 26")
    for c in ("run_id", "label", *schema.key_roles("program", "layout", "thread-level")):  # one run per file
        first = df[c].iloc[0]
        if isinstance(first, float) and math.isnan(first):
            continue
        report(~(df[c] == first) & df[c].notna(), lambda i, c=c, first=first: f"{c} {_show(df[c].iloc[i])} "
               f"differs from the first row's {_show(first)} (one run per file)")
    dup = df.duplicated(KEYS, keep=False) if typed else pd.Series(False, index=df.index)
    if dup.any():
        first_line = df[dup].reset_index().groupby(KEYS, dropna=False, sort=False)["index"].transform("min")
        later = dup & df.duplicated(KEYS, keep="first")
        where = dict(zip(df.index[dup], first_line.to_numpy()))
        report(later, lambda i: f"same key columns as line {_line(where[df.index[i]])} (a run measures each "
               f"configuration once: {', '.join(KEYS)})")
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
    for k in schema.key_roles("layout"):
        v = meta.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and df[k].notna().any() and df[k].iloc[0] != v:
            probs.append(f"{path}:2: {k} {df[k].iloc[0]:g} differs from {jp.name}'s {v}")
    published = df["stop_reason"] == PUBLISHED
    if published.any() and meta.get("source") != "published":
        i = int(np.flatnonzero(published.to_numpy())[0])
        probs.append(f"{path}:{_line(i)}: stop_reason 'published' in a run whose {jp.name} does not say "
                     f"\"source\": \"published\"")
    if meta.get("complete") is False:
        warns.append(f"{jp}: run incomplete (\"complete\": false): using its {len(df)} finished row(s)")
    elif isinstance(meta.get("rows"), int) and meta["rows"] != len(df):
        probs.append(f"{path}: {len(df)} row(s), but {jp.name} says the complete run wrote {meta['rows']}")
    return probs, warns


def load_run(path: Path) -> tuple[Run | None, list[str], list[str]]:
    """(run or None, problems, warnings) for one CSV."""
    meta, version, declared, probs = _read_meta(path)
    df, p = read_csv(path, version, declared)
    probs = p + probs
    warns: list[str] = []
    if not df.empty:
        probs += check_rows(path, df, version or SCHEMA_VERSION, typed=not p)
        p2, warns = check_meta(path, df, meta)
        probs += p2
    header_only = [x for x in probs if x.endswith(": no result rows (header only)")]
    if header_only and len(probs) == 1 and meta.get("complete") is False:
        # a run that has just started (or was killed before its first row): nothing to use yet
        return None, [], [f"{path}: run incomplete (\"complete\": false) and no finished rows yet: skipped"]
    if probs or df.empty:
        return None, probs, warns
    if version == 1:
        df.loc[df["stop_reason"] == V1_FAILED, "verified"] = "no"  # the upgrade rule (results.schema.json)
    return Run(path, df, meta, warns), probs, warns


def is_raw(path: Path) -> bool:
    """A --raw samples file (raw.schema.json) or a rounds file (docs/results-format.md), which belong to a
    run and are not read as one."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().strip() in (RAW_HEADER, ROUNDS_HEADER)
    except OSError:
        return False


ROUNDS_HEADER = "group,round,row,pos,time_s"


def _sidecar(path: Path) -> str:
    """What a file that belongs to a run is, for the one line that refuses it as a run."""
    if path.name.endswith(ROUNDS_SUFFIX):
        return "a rounds file (docs/results-format.md)"
    return "a --raw samples file (analysis/mpimb/schema/raw.schema.json)"


RAW_HEADER = ",".join(schema.columns("raw"))


def load(paths: list[str], strict: bool = True) -> tuple[list[Run], list[str], list[str]]:
    """Loads every result under paths: (runs, problems, warnings).  Raises InputError
    (with every problem line) when strict and anything is wrong."""
    found = expand(paths)
    files = [f for f in found if not is_raw(f)]
    if found and not files:
        raise InputError(*(f"{f}:1: {_sidecar(f)}, not a results CSV; give the run's CSV" for f in found))
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


def rounds(r: Run) -> tuple[np.ndarray, list[tuple[float, ...]]]:
    """A grouped run's per-round samples (its rounds file, docs/results-format.md) for each of its rows:
    (the row's group or NaN, the row's times by round).  A group whose members lack a round (a run
    killed while writing) and a missing or unreadable file give no pairs: rows then stand alone."""
    n = len(r.rows)
    group = np.full(n, np.nan)
    samples: list[tuple[float, ...]] = [()] * n
    name = r.meta.get("rounds")
    path = r.csv_path.with_name(str(name)) if isinstance(name, str) and "/" not in name else None
    if path is None or not path.exists():
        return group, samples
    try:
        t = pd.read_csv(path, dtype={"group": "int64", "round": "int64", "row": "int64", "time_s": "float64"})
    except (ValueError, OSError, pd.errors.ParserError):
        return group, samples
    t = t[(t["row"] >= 1) & (t["row"] <= n)].sort_values(["group", "row", "round"], kind="stable")
    per_row = t.groupby("row", sort=False)
    counts, first = per_row["round"].count(), per_row["group"].first()
    whole = counts.groupby(first).transform("nunique") == 1  # every member of the group has every round
    keep = whole.index[whole.to_numpy(bool)]  # the CSV's 1-based data rows with every round
    group[keep.to_numpy(int) - 1] = first[keep].to_numpy(float)
    times = np.empty(n, dtype=object)
    times[:] = samples
    times[keep.to_numpy(int) - 1] = per_row["time_s"].agg(tuple)[keep].to_numpy()
    return group, list(times)


def frame(runs: list[Run]) -> pd.DataFrame:
    """All rows of runs in one frame, with derived columns: simulated, published, oversubscribed,
    library (short MPI name), start_utc and file (of the run), failed (verification failed: a result
    shown as FAILED), na (not applicable), sent_bytes (bytes one process sends per op), round_group and
    rounds (a grouped run's per-round samples of the row: rounds())."""
    parts = []
    for r in runs:
        d = r.rows  # the run's own frame gains the derived columns (no copy)
        d["simulated"] = r.simulated
        d["published"] = r.published
        d["oversubscribed"] = r.oversubscribed
        d["library"] = short_library(r.meta)
        d["start_utc"] = str(r.meta.get("start_utc") or "")
        d["file"] = rel(r.csv_path)
        d["schema"] = int(r.meta.get("schema_version", SCHEMA_VERSION))
        d["round_group"], d["rounds"] = rounds(r)  # paired samples (mpimb.paired), where measured as a group
        parts.append(d)
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COLUMNS)
    if not parts:
        df["oversubscribed"] = pd.Series(dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["sent_bytes"] = df["mbps"] * 1e6 * df["time_median_s"]
    df["na"] = na_mask(df["stop_reason"])
    df["failed"] = df["verified"] == "no"
    return df


def short_library(meta: dict[str, Any]) -> str:
    """'Open MPI 4.1.4', 'MPICH 4.0.2', 'SimGrid SMPI ...' from the library version string."""
    mpi = meta.get("mpi") if isinstance(meta.get("mpi"), dict) else {}
    s = str((mpi or {}).get("library_version", "")).strip()
    if not s:
        return "unknown MPI"
    first = s.splitlines()[0]
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
    """df.groupby(keys) with the key always a plain tuple (typed loosely, as the values are); only
    combinations that occur (categorical keys never yield empty groups)."""
    for k, g in df.groupby(keys, sort=sort, dropna=dropna, observed=True):
        yield (tuple(k) if isinstance(k, tuple) else (k,)), g
