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
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
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


class Run:
    """One program run: its rows and metadata.  Runs loaded together share one frame of all their rows
    (load): a run's own frame is cut from it only when asked for (rows), and frame() takes the shared
    one whole while no run's own frame was asked for."""

    def __init__(self, csv_path: Path, rows: pd.DataFrame | None = None, meta: dict[str, Any] | None = None,
                 warnings: list[str] | None = None, *, shared: pd.DataFrame | None = None,
                 span: tuple[int, int] = (0, 0)) -> None:
        self.csv_path = csv_path
        self.meta: dict[str, Any] = meta if meta is not None else {}
        self.warnings: list[str] = warnings if warnings is not None else []
        self._rows = rows
        self.shared = shared
        self.span = span if rows is None else (0, len(rows))

    @property
    def rows(self) -> pd.DataFrame:
        if self._rows is None:
            assert self.shared is not None, "rows of a released run"
            self._rows = self.shared.iloc[self.span[0]:self.span[1]].reset_index(drop=True)
        return self._rows

    @rows.setter
    def rows(self, df: pd.DataFrame) -> None:
        self._rows = df

    def release(self) -> None:
        """Forgets the rows, keeps the metadata: for a command that has put the rows into a frame of its own,
        so that their memory is reused by what it builds next instead of fresh pages (bench/report/README.md)."""
        self._rows = self.shared = None

    @property
    def cut(self) -> bool:
        """Whether this run's own frame exists (asked for, or given)."""
        return self._rows is not None

    @property
    def nrows(self) -> int:
        return self.span[1] - self.span[0] if self._rows is None else len(self._rows)

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
    def platform(self) -> str:
        """The platform model a simulated run rests on (the JSON's platform.name), '' for any other run."""
        p = self.meta.get("platform")
        return str(p.get("name") or "") if self.simulated and isinstance(p, dict) else ""

    @property
    def oversubscribed(self) -> bool:
        """More ranks x threads than cores on a node (meta.schema.json): the OS scheduler's figures."""
        return self.meta.get("oversubscribed") is True

    @property
    def busy(self) -> bool:
        """Others took a share of the ranks' cores while the run measured (meta.schema.json "busy")."""
        return self.meta.get("busy") is True

    @property
    def launch(self) -> str:
        """Which launch of a result set this run is: 'SERIES#INDEX' where scripts/launches started it (the
        JSON's "launch"), else its run_id (a launch of its own)."""
        ln = self.meta.get("launch")
        if isinstance(ln, dict) and ln.get("series") and isinstance(ln.get("index"), int):
            return f"{ln['series']}#{ln['index']}"
        return str(self.meta.get("run_id", "")) or rel(self.csv_path)

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
    unique = []
    for p in out:
        real = p.resolve()
        if real not in seen:
            seen.add(real)
            unique.append(p)
    return unique


def _line(i: int) -> int:
    return int(i) + 2  # header is line 1


def _json_line(text: str, key: str) -> int:
    """Line of the first '"key":' in a JSON text (1 when absent)."""
    m = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


@cache
def _validator(version: int, key: str) -> Draft202012Validator:
    """meta.schema.json's rule for one top-level field (the schema is a plain object of properties: no rule
    spans two fields)."""
    return Draft202012Validator(schema.meta_document(version)["properties"][key])


FieldErrors = tuple[tuple[tuple[str, ...], str, str, bool], ...]
_FIELD_ERRORS: dict[tuple[int, str, str], FieldErrors] = {}


def _field_errors(version: int, key: str, value: Any) -> FieldErrors:
    """One field's problems (path, validator, message, instance is an object).  Many runs carry the same
    topology, compiler, options ..., and each distinct value is checked once: the key is the value's repr,
    which tells apart every two different values json.loads gives (1, 1.0, true and '1' included; an
    object's keys in another order only cost a second check) at a quarter of json.dumps' time."""
    k = (version, key, repr(value))
    got = _FIELD_ERRORS.get(k)
    if got is None:
        got = _FIELD_ERRORS[k] = tuple(((key, *(str(x) for x in e.absolute_path)), str(e.validator), str(e.message),
                                        isinstance(e.instance, dict)) for e in _validator(version, key).iter_errors(value))
    return got


def _meta_problems(jp: Path, text: str, meta: dict[str, Any], version: int) -> list[str]:
    """meta.schema.json on one file: one line per problem (at most five), with the line of its field."""
    doc = schema.meta_document(version)
    errors: list[tuple[tuple[str, ...], str, str, bool]] = [
        ((), "required", f"'{k}' is a required property", True) for k in doc["required"] if k not in meta]
    for k, v in meta.items():
        if k in doc["properties"]:
            errors += _field_errors(version, k, v)
    errors.sort(key=lambda e: list(e[0]))
    probs = []
    for path, validator, message, is_object in errors[:5]:
        line = _json_line(text, path[0]) if path else 1
        if validator == "required" and is_object:
            missing = message.split("'")[1] if "'" in message else ""
            probs.append(f"{jp}:{line}: required field '{'.'.join([*path, missing])}' missing")
            continue
        probs.append(f"{jp}:{line}: field '{'.'.join(path) or '(top)'}': {message}")
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
    except RecursionError:
        return {}, None, "", [f"{jp}:1: not valid metadata: JSON nested too deep"]
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


def _read_fast(data: bytes | np.ndarray, threads: bool = True) -> pd.DataFrame | None:
    """Well-formed files: every numeric column parses as float64 (pyarrow when installed, multi-threaded
    unless threads is False).  None when anything is off; the careful path then finds and reports it."""
    numeric = {c: "float64" for c in INT_COLS + FLOAT_COLS}
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        from pyarrow import csv as pacsv  # type: ignore[import-untyped]
    except ImportError:
        pa = None
    if pa is not None:
        types = {**{c: pa.float64() for c in numeric}, **{c: pa.string() for c in STR_COLS}}
        try:
            table = pacsv.read_csv(pa.py_buffer(data), read_options=pacsv.ReadOptions(use_threads=threads),
                                   convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[""], strings_can_be_null=False, quoted_strings_can_be_null=False))
            return table.to_pandas()
        except (pa.ArrowException, ValueError, OSError):  # not well-formed
            return None
    try:
        text = data if isinstance(data, bytes) else data.tobytes()
        return pd.read_csv(io.BytesIO(text), dtype={**{c: "string" for c in STR_COLS}, **numeric},
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


TOL = 1e-6  # "within rounding": the writer prints 9 significant digits (%.9g); relations hold to far better


class _Problems:
    """Problem lines of many files at once: (file index, line) of every row, and the lines found so far
    (kept per file, in file order, when listed)."""

    def __init__(self, paths: list[Path], fidx: np.ndarray, lines: np.ndarray) -> None:
        self.paths, self.fidx, self.lines = paths, fidx, lines
        self.found: list[tuple[int, int, str]] = []

    def add(self, f: int, text: str) -> None:
        self.found.append((f, len(self.found), text))

    def _per_file(self, mask: Any) -> list[np.ndarray]:
        idx = np.flatnonzero(np.asarray(mask, dtype=bool))
        if not idx.size:
            return []
        return np.split(idx, np.flatnonzero(np.diff(self.fidx[idx])) + 1)

    def rows(self, mask: Any, what: Any) -> None:
        """At most 5 lines per file (then '... and N more'): 'file:line: what' (what(i) for row i)."""
        for hits in self._per_file(mask):
            f = int(self.fidx[hits[0]])
            for i in hits[:5]:
                self.add(f, f"{self.paths[f]}:{self.lines[i]}: {what(i) if callable(what) else what}")
            if len(hits) > 5:
                self.add(f, f"{self.paths[f]}: ... and {len(hits) - 5} more line(s) like that")

    def once(self, mask: Any, what: Any) -> None:
        """One line per file: the first row's line and how many rows are like it."""
        for hits in self._per_file(mask):
            f, i = int(self.fidx[hits[0]]), int(hits[0])
            more = f" ({len(hits)} line(s) like that)" if len(hits) > 1 else ""
            self.add(f, f"{self.paths[f]}:{self.lines[i]}: {what(i) if callable(what) else what}{more}")

    def by_file(self) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for f, _, text in sorted(self.found):
            out.setdefault(f, []).append(text)
        return out


def _shown(values: list[str], patterns: list[str], limit: int = 8) -> str:
    shown = [repr(v) if v else "empty" for v in values] + [f"'{p}' (pattern)" for p in patterns]
    return ", ".join(shown[:limit]) + (f", ... ({len(shown)} in all)" if len(shown) > limit else "")


def _with_param(params: pd.Series, key: str, value: str) -> pd.Series:
    """Rows whose params hold key=value (parsed once per distinct value)."""
    uniq = params.unique()
    hit = [u for u in uniq if not schema.params_problem(str(u)) and schema.parse_params(str(u)).get(key) == value]
    return params.isin(hit)


def _subtracted(params: pd.Series) -> pd.Series:
    """Rows whose times are differences to a reference (params timing=subtract)."""
    return _with_param(params, "timing", "subtract")


def check_rows(df: pd.DataFrame, p: _Problems, version: np.ndarray, typed: np.ndarray, start: np.ndarray,
               fresh: np.ndarray) -> None:
    """The rows of many files at once against results.schema.json (types are the readers') and among
    themselves, column by column over all files.  version, typed, start, fresh: per row, its file's schema
    version, whether every cell of its file had its type (else cells read as empty would make rows look like
    duplicates), the position of its file's first row, and whether the batch reader read it (its integer
    columns are checked here; the careful reader checks its own).  The steps below add their lines in this
    order."""
    v1_failed = ((version == 1) & (df["stop_reason"] == V1_FAILED)).to_numpy()
    _check_cells(df, p, fresh, v1_failed)
    na = na_mask(df["stop_reason"]).to_numpy()
    published = (df["stop_reason"] == PUBLISHED).to_numpy()
    measured = ~na & ~published & ~v1_failed & (df["stop_reason"] != "").to_numpy()
    t = {c: df[c].to_numpy() for c in [*schema.typed_columns("number"), "bytes", "iters", "reps", "neighbors"]}
    _check_times(df, p, t, measured, na, published, v1_failed)
    _check_rates(df, p, t, measured, typed)
    # profile rows (stop_reason finalize) count calls; they have no iterations or repetitions
    timed = measured & (df["stop_reason"] != "finalize").to_numpy()
    for c in ("iters", "reps"):
        p.rows(timed & ~(t[c] >= 1), f"column '{c}' must be >= 1")
    known = schema.stencils()
    p.rows(~np.isnan(t["neighbors"]) & ~np.isin(t["neighbors"], known) & (df["program"] == "halocompare").to_numpy(),
           f"halocompare neighbors must be {', '.join(map(str, known[:-1]))} or {known[-1]}")
    _check_one_run_per_file(df, p, start)
    _check_keys_once(df, p, typed)


def _check_cells(df: pd.DataFrame, p: _Problems, fresh: np.ndarray, v1_failed: np.ndarray) -> None:
    """Each cell alone: integers, required cells, vocabularies (the schema's and each program's own),
    ranges and enums, params that parse."""
    with np.errstate(invalid="ignore"):
        for c in INT_COLS:
            v = df[c].to_numpy()
            p.rows(fresh & ~np.isnan(v) & (v != np.floor(v)),
                   lambda i, c=c, v=v: f"column '{c}': expected an integer, got {v[i]:g}")
    for c in REQUIRED:
        col = df[c]
        p.rows(col.isna() | (col == ""), f"column '{c}' is empty")
    # vocabularies (enum / anyOf of the schema) and minimums
    for c in STR_COLS:
        values, patterns = schema.vocabulary(c)
        if (not values and not patterns) or c == "params":  # params: its own check below
            continue
        bad = _vocabulary_bad(df[c], values, patterns) & (df[c] != "" if c in REQUIRED else True)
        if c == "stop_reason":
            bad &= ~v1_failed
        p.rows(bad, lambda i, c=c, values=values, patterns=patterns:
               f"{c} {df[c].iloc[i]!r} is not {_allowed(values, patterns)}")
    _check_program_vocabularies(df, p)
    for c in INT_COLS + FLOAT_COLS:
        sp = schema.spec(c)
        with np.errstate(invalid="ignore"):
            if "minimum" in sp:
                p.rows(df[c] < sp["minimum"], lambda i, c=c, m=sp["minimum"]:
                       f"column '{c}' must be >= {m}, got {_show(df[c].iloc[i])}")
            if "exclusiveMinimum" in sp:
                p.rows(df[c] <= sp["exclusiveMinimum"], lambda i, c=c, m=sp["exclusiveMinimum"]:
                       f"column '{c}' must be > {m}, got {_show(df[c].iloc[i])}")
        if "enum" in sp:
            p.rows(df[c].notna() & ~df[c].isin([x for x in sp["enum"] if x is not None]),
                   lambda i, c=c, e=sp["enum"]: f"{c} must be one of {_allowed(e, [])}, got {_show(df[c].iloc[i])}")
    params = df["params"]
    uniq = params.unique()
    if len(uniq) > 1 or uniq[0] != "":
        why = {u: schema.params_problem(str(u)) for u in uniq}
        bad_vals = [u for u, w in why.items() if w]
        p.rows(params.isin(bad_vals), lambda i: f"params {params.iloc[i]!r} does not parse: {why[params.iloc[i]]}")


def _check_program_vocabularies(df: pd.DataFrame, p: _Problems) -> None:
    """method and comm: each program's own vocabulary (results.schema.json, x-vocabulary)."""
    prog = df["program"]
    for c in ("method", "comm"):
        for name, (values, patterns) in schema.program_vocabulary(c).items():
            rows = prog == name
            if not rows.any():
                continue
            ok = [u for u in df.loc[rows, c].unique() if u in values or any(re.match(x, str(u)) for x in patterns)]
            bad = rows & ~df[c].isin(ok)
            p.once(bad, lambda i, c=c, name=name, values=values, patterns=patterns:
                   f"{c} {df[c].iloc[i]!r} is not a {name} {c} ({_shown(values, patterns)}: results.schema.json, "
                   f"x-vocabulary)")


def _check_times(df: pd.DataFrame, p: _Problems, t: dict[str, np.ndarray], measured: np.ndarray, na: np.ndarray,
                 published: np.ndarray, v1_failed: np.ndarray) -> None:
    """Measured rows have ordered times, n/a rows none; the statistics of one row's samples agree."""
    times = df[TIMES]
    p.rows(measured & times.isna().any(axis=1), "measured row without time_min_s/median/max")
    p.rows(published & df["time_median_s"].isna(), "published row without time_median_s")
    p.rows(na & times.notna().any(axis=1), "'n/a' row has times")
    p.rows(v1_failed & times.notna().any(axis=1), "schema-1 'verification failed' row has times")
    tol = 1 + 1e-9
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        p.rows(measured & (t["time_min_s"] < 0), "negative time")
        order = (t["time_min_s"] <= t["time_median_s"] * tol) & (t["time_median_s"] <= t["time_max_s"] * tol)
        p.rows(measured & times.notna().all(axis=1).to_numpy() & ~order, "times not ordered: need min <= median <= max")
        ci = ~np.isnan(t["time_ci_lo_s"]) & ~np.isnan(t["time_ci_hi_s"])
        ci_ok = (t["time_ci_lo_s"] <= t["time_median_s"] * tol) & (t["time_median_s"] <= t["time_ci_hi_s"] * tol)
        p.rows(measured & ci & ~ci_ok, "confidence interval does not contain the median")
        # the mean, the interval's ends and the percentiles are statistics of the same samples: within [min, max];
        # each rank's own median is at most the median of the per-repetition maximum over ranks, so
        # rank_min <= rank_mean <= time_median
        for c in ("time_mean_s", "time_ci_lo_s", "time_ci_hi_s", "time_p90_s", "time_p99_s"):
            p.rows(measured & ~np.isnan(t[c]) & ((t[c] * tol < t["time_min_s"]) | (t[c] > t["time_max_s"] * tol)),
                   f"{c} outside [time_min_s, time_max_s]")
        p.rows(measured & (t["time_p90_s"] > t["time_p99_s"] * tol), "time_p90_s > time_p99_s")
        # (not where a reference is subtracted, collectives --timing subtract: the slowest rank's difference
        # can be smaller than a rank's own)
        p.rows(measured & ~_subtracted(df["params"]).to_numpy() & (
            (t["rank_min_s"] > t["rank_mean_s"] * tol) | (t["rank_mean_s"] > t["time_median_s"] * tol)),
            "need rank_min_s <= rank_mean_s <= time_median_s")


def _check_rates(df: pd.DataFrame, p: _Problems, t: dict[str, np.ndarray], measured: np.ndarray,
                 typed: np.ndarray) -> None:
    """Rates (docs/results-format.md, "Rates"): mbps is what one process sends per operation (a whole number
    of messages of `bytes`) / time_median_s; agg_mbps what the whole operation moves, a whole number of
    times that (at least once)."""
    mbps, agg = t["mbps"], t["agg_mbps"]
    has_mbps, has_agg = typed & ~np.isnan(mbps), typed & ~np.isnan(agg)  # (a cell of the wrong type is empty)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        p.once(has_mbps & ~(t["time_median_s"] > 0),
               "column 'mbps' set on a row without a positive time_median_s (mbps is bytes sent / time_median_s)")
        p.once(has_mbps & ~(t["bytes"] >= 1), "column 'mbps' set on a row without bytes (mbps is bytes sent / "
               "time_median_s)")
        k = mbps * t["time_median_s"] * 1e6 / t["bytes"]
        whole = lambda x: (x >= 1 - TOL) & (np.abs(x - np.round(x)) <= TOL * x)
        # (halocompare --layout array: bytes is a face; the edges and corners sent beside it are smaller)
        faces = _with_param(df["params"], "layout", "array").to_numpy()
        p.once(has_mbps & (t["time_median_s"] > 0) & (t["bytes"] >= 1) & ~whole(k) & ~faces,
               lambda i: f"column 'mbps' does not match bytes and time_median_s (mbps × time_median_s × 10^6 / "
               f"bytes = {k[i]:.6g}, where it is the whole number of messages of `bytes` one process sends per "
               f"operation): does the column hold another's values?")
        p.once(has_agg & ~has_mbps, "column 'agg_mbps' set where mbps is empty (the whole operation moves at "
               "least what one process sends): are mbps and agg_mbps swapped?")
        r = agg / mbps
        p.once(has_agg & has_mbps & ~whole(r),
               lambda i: f"column 'agg_mbps' is {r[i]:.6g} × mbps, where it is a whole number >= 1 of times mbps "
               f"(the whole operation moves what one process sends, once per receiving process): are mbps and "
               f"agg_mbps swapped?")


def _check_one_run_per_file(df: pd.DataFrame, p: _Problems, start: np.ndarray) -> None:
    """Every row of a file is of the file's run: its run_id, label and layout are the first row's."""
    same_file = start[1:] == start[:-1]  # row i and row i + 1 are of one file
    for c in ("run_id", "label", *schema.key_roles("program", "layout", "thread-level")):
        col = df[c].array
        if col.dtype.kind == "f":
            v = np.asarray(col)
            changes = (v[1:] != v[:-1]) & ~(np.isnan(v[1:]) & np.isnan(v[:-1]))
        else:
            changes = np.asarray(col[1:] != col[:-1], dtype=bool)
        if not (changes & same_file).any():  # every file's rows all alike (the usual case): nothing to list
            continue
        first = col.take(start)
        if col.dtype.kind == "f":
            vals, firsts = np.asarray(col), np.asarray(first)
            differs = ~np.isnan(firsts) & ~np.isnan(vals) & (vals != firsts)
        else:  # strings compared where they are (pyarrow): a Python object per cell cost 0.2 s per 500,000 rows
            differs = np.asarray(col != first, dtype=bool)
        p.rows(differs, lambda i, c=c, col=col, first=first: f"{c} {_show(col[i])} differs from the first row's "
               f"{_show(first[i])} (one run per file)")


def _check_keys_once(df: pd.DataFrame, p: _Problems, typed: np.ndarray) -> None:
    """A run measures each configuration once: no two rows of a file with the same key columns."""
    keyed = df[KEYS].assign(_file=p.fidx)
    dup = keyed.duplicated(["_file", *KEYS], keep=False).to_numpy() & typed
    if not dup.any():
        return
    d = keyed[dup].assign(_pos=np.flatnonzero(dup))
    first_pos = d.groupby(["_file", *KEYS], dropna=False, sort=False)["_pos"].transform("min").to_numpy()
    where = dict(zip(d["_pos"].to_numpy(), first_pos))
    later = dup & keyed.duplicated(["_file", *KEYS], keep="first").to_numpy()
    p.rows(later, lambda i: f"same key columns as line {p.lines[where[i]]} (a run measures each "
           f"configuration once: {', '.join(KEYS)})")


META_KEYS = ["run_id", "program", "label", *schema.key_roles("layout")]  # a file's first row against its JSON


def check_meta(p: _Problems, f: int, first: dict[str, Any], start: int, stop: int,
               meta: dict[str, Any]) -> list[str]:
    """One file's rows (start:stop of all files') against its JSON, first: its first row's META_KEYS:
    problems go to p, warnings are returned."""
    path = p.paths[f]
    jp = path.with_suffix(".json")
    if stop == start or not meta:
        return []
    for k in ("run_id", "program", "label"):
        v = first[k]
        if k in meta and str(v) != str(meta[k]):
            p.add(f, f"{path}:2: {k} {v!r} differs from {jp.name}'s {meta[k]!r}")
    for k in schema.key_roles("layout"):
        v, first_v = meta.get(k), float(first[k])
        if isinstance(v, int) and not isinstance(v, bool) and not math.isnan(first_v) and first_v != v:
            p.add(f, f"{path}:2: {k} {first_v:g} differs from {jp.name}'s {v}")
    if meta.get("complete") is False:
        return [f"{jp}: run incomplete (\"complete\": false): using its {stop - start} finished row(s)"]
    if isinstance(meta.get("rows"), int) and meta["rows"] != stop - start:
        p.add(f, f"{path}: {stop - start} row(s), but {jp.name} says the complete run wrote {meta['rows']}")
    return []


def _published_without_source(df: pd.DataFrame, p: _Problems, metas: list[dict[str, Any]]) -> None:
    published = (df["stop_reason"] == PUBLISHED).to_numpy()
    if not published.any():
        return
    claims = np.array([m.get("source") == "published" for m in metas], dtype=bool)
    p.once(published & ~claims[p.fidx], lambda i: f"stop_reason 'published' in a run whose "
           f"{p.paths[p.fidx[i]].with_suffix('.json').name} does not say \"source\": \"published\"")


NL = ord("\n")
_COUNT_CHUNK = 1 << 20
_HEAD = 1 << 16  # a header line longer than this is no schema's


class _Texts:
    """Every file's text in one array, each file's header line left out but the first's, so that files of
    one header read one after the other already are the joined text the batch parser takes (no copy).  The
    array is numpy's, which asks the kernel for huge pages: the bytes of `read_bytes` take a page fault per
    4 KiB, a second of system time for 10^6 rows on a virtual machine (bench/report/README.md)."""

    def __init__(self, files: list[Path]) -> None:
        sizes = []
        for path in files:
            try:
                sizes.append(path.stat().st_size)
            except OSError:
                sizes.append(0)
        self.buf = np.empty(sum(sizes), np.uint8)
        self._end = 0  # where the next body goes
        # per file: (header line with its newline, body start, body end); None: unreadable or no header line
        self.spans: list[tuple[bytes, int, int] | None] = [self._read(path, size) for path, size in
                                                          zip(files, sizes)]

    def _read(self, path: Path, size: int) -> tuple[bytes, int, int] | None:
        """Up to the size the file had when listed (a run still writing may have grown since)."""
        at = self._end
        try:
            with open(path, "rb", buffering=0) as f:
                head = os.pread(f.fileno(), min(size, _HEAD), 0)
                nl = head.find(b"\n")
                if nl < 0:
                    return None
                header = head[:nl + 1]
                view = self.buf.data
                if at == 0:  # the first text keeps its header line
                    view[:len(header)] = header
                    at = len(header)
                start, stop = at, at + size - len(header)
                f.seek(len(header))
                while at < stop and (n := f.readinto(view[at:stop])):
                    at += n
        except OSError:
            return None
        self._end = at
        return header, start, at

    def version(self, f: int) -> int | None:
        """The schema version of a file the batch reader can take: a header of exactly one version's columns
        (any order, nothing around them) and every line ended by a newline."""
        span = self.spans[f]
        if span is None or (span[2] > span[1] and self.buf[span[2] - 1] != NL):
            return None
        return _exact_header(span[0][:-1])

    def lines(self, f: int) -> int:
        """The file's lines, its header's included (counted a chunk at a time: small temporaries)."""
        span = self.spans[f]
        if span is None:
            return 0
        body = self.buf[span[1]:span[2]]
        return 1 + sum(int(np.count_nonzero(body[i:i + _COUNT_CHUNK] == NL)) for i in range(0, len(body),
                                                                                             _COUNT_CHUNK))

    def joined(self, files: list[int]) -> np.ndarray:
        """The text of files of one header as one: the first's header line, then every body in order (a
        view where they lie so in the array already)."""
        spans = [s for s in (self.spans[f] for f in files) if s is not None]
        header, start = spans[0][0], spans[0][1] - len(spans[0][0])
        if start >= 0 and all(a[2] == b[1] for a, b in zip(spans, spans[1:])) and \
                self.buf[start:spans[0][1]].tobytes() == header:
            return self.buf[start:spans[-1][2]]
        return np.concatenate([np.frombuffer(header, np.uint8), *(self.buf[a:b] for _, a, b in spans)])


@cache
def _exact_header(line: bytes) -> int | None:
    names = line.decode("utf-8", "replace").split(",")
    v = header_version(names)
    return v if v is not None and len(names) == len(set(names)) else None


def _normalised(df: pd.DataFrame) -> pd.DataFrame:
    """A parsed frame with every schema-2 column in schema order: numbers float64, strings without NaN."""
    df.columns = [str(c).strip() for c in df.columns]
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = "" if c in STR_COLS else np.nan
        elif c not in STR_COLS and df[c].dtype != np.float64:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
        elif c in STR_COLS and df[c].hasnans:
            df[c] = df[c].fillna("")
    return df[COLUMNS]


def _read_together(texts: _Texts, items: list[tuple[int, int]], threads: bool = True) -> tuple[
        list[tuple[list[int], list[int], pd.DataFrame]], list[int]]:
    """Well-formed files of one header (file index, its number of lines) parsed as one text:
    ([(file indices, rows of each, frame)], files to read alone).  A text that does not parse is halved
    until the files that spoil it stand alone."""
    counts = [n - 1 for _, n in items]
    df = _read_fast(texts.joined([f for f, _ in items]), threads)
    if df is not None and len(df) == sum(counts):  # one line per row: the lines say which file a row is from
        return [([f for f, _ in items], counts, _normalised(df))], []
    if len(items) == 1:
        return [], [items[0][0]]
    half = len(items) // 2
    a, b = _read_together(texts, items[:half], threads), _read_together(texts, items[half:], threads)
    return a[0] + b[0], a[1] + b[1]


def _load_files(files: list[Path], threads: bool = True) -> tuple[list[Run], list[str], list[str]]:
    """Every file's rows read, then checked column by column over all files at once."""
    metas: list[dict[str, Any]] = []
    versions: list[int | None] = []
    declareds: list[str] = []
    problems: list[list[str]] = []
    warns: list[list[str]] = []
    fast: dict[tuple[bytes, int], list[tuple[int, int]]] = {}
    texts = _Texts(files)
    alone: list[int] = []
    for f, path in enumerate(files):
        meta, version, declared, probs = _read_meta(path)
        metas.append(meta)
        versions.append(version)
        declareds.append(declared)
        problems.append(probs)
        hv = texts.version(f)
        lines = texts.lines(f) if hv is not None else 0
        if hv is not None and (version is None or hv == version) and lines > 1:
            fast.setdefault((texts.spans[f][0], hv), []).append((f, lines))  # type: ignore[index]
        else:
            alone.append(f)
    pieces: list[tuple[list[int], list[int], pd.DataFrame]] = []
    typed_file = np.ones(len(files), dtype=bool)
    fresh_file = np.zeros(len(files), dtype=bool)
    for (_, hv), items in fast.items():
        got, more = _read_together(texts, items, threads)
        pieces += got
        alone += more
        for idx, _, _ in got:
            fresh_file[idx] = True
            for f in idx:
                versions[f] = versions[f] or hv
    del texts  # parsed: its memory is free before the checks
    for f in sorted(alone):
        df, read_probs = read_csv(files[f], versions[f], declareds[f])
        problems[f] = read_probs + problems[f]
        typed_file[f] = not read_probs
        if not df.empty:
            pieces.append(([f], [len(df)], _normalised(df)))
        elif versions[f] is None:
            versions[f] = SCHEMA_VERSION
    nrows = np.zeros(len(files), dtype=np.int64)
    for idx, counts, _ in pieces:
        nrows[idx] = counts
    bounds = np.concatenate([[0], np.cumsum(nrows)])
    if pieces:
        big = pd.concat([d for _, _, d in pieces], ignore_index=True) if len(pieces) > 1 else pieces[0][2]
        # in file order: each file's rows from bounds[f] to bounds[f + 1]
        src = np.concatenate([np.repeat(np.asarray(idx), counts) for idx, counts, _ in pieces])
        if (np.diff(src) < 0).any():
            big = big.iloc[np.argsort(src, kind="stable")].reset_index(drop=True)
    else:
        big = pd.DataFrame({c: pd.Series(dtype=object if c in STR_COLS else "float64") for c in COLUMNS})
    fidx = np.repeat(np.arange(len(files)), nrows)
    start = bounds[:-1][fidx]
    lines = np.arange(len(big)) - start + 2  # the header is line 1
    p = _Problems(files, fidx, lines)
    ver = np.array([v or SCHEMA_VERSION for v in versions], dtype=np.int64)
    if len(big):
        check_rows(big, p, ver[fidx], typed_file[fidx], start, fresh_file[fidx])
        _published_without_source(big, p, metas)
    # each file's first row (a file without rows is never looked at), taken in one step per column
    firsts = {k: big[k].take(np.minimum(bounds[:-1], max(len(big) - 1, 0))).to_numpy() if len(big) else
              np.zeros(len(files)) for k in META_KEYS}
    for f in range(len(files)):
        warns.append(check_meta(p, f, {k: v[f] for k, v in firsts.items()}, int(bounds[f]), int(bounds[f + 1]),
                                metas[f]))
    found = p.by_file()
    runs: list[Run] = []
    all_probs: list[str] = []
    all_warns: list[str] = []
    v1 = (ver[fidx] == 1) & (big["stop_reason"] == V1_FAILED).to_numpy() if len(big) else np.zeros(0, bool)
    if v1.any():
        big.loc[v1, "verified"] = "no"  # the upgrade rule (results.schema.json)
    for f, path in enumerate(files):
        probs = problems[f] + found.get(f, [])
        if (len(probs) == 1 and probs[0].endswith(": no result rows (header only)")
                and metas[f].get("complete") is False):
            # a run that has just started (or was killed before its first row): nothing to use yet
            all_warns.append(f"{path}: run incomplete (\"complete\": false) and no finished rows yet: skipped")
            continue
        all_probs += probs
        all_warns += warns[f]
        if not probs and nrows[f]:
            runs.append(Run(path, None, metas[f], warns[f], shared=big, span=(int(bounds[f]), int(bounds[f + 1]))))
    return runs, all_probs, all_warns



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


def load(paths: list[str], strict: bool = True, threads: bool = True) -> tuple[list[Run], list[str], list[str]]:
    """Loads every result under paths: (runs, problems, warnings).  Raises InputError
    (with every problem line) when strict and anything is wrong.  threads=False: pyarrow parses on this
    thread alone (compare.load_sets, which reads each set on a thread of its own)."""
    found = expand(paths)
    files = [f for f in found if not is_raw(f)]
    if found and not files:
        raise InputError(*(f"{f}:1: {_sidecar(f)}, not a results CSV; give the run's CSV" for f in found))
    runs, probs, warns = _load_files(files, threads)
    runs, again = once_per_run(runs)
    warns += again
    if strict:  # a rounds file that does not match its CSV: the rows are used, not paired
        for r in runs:
            rp = read_rounds(r).problems if "rounds" in r.meta else []
            if rp:
                more = f" (and {len(rp) - 1} more: mpimb-report validate)" if len(rp) > 1 else ""
                warns.append(f"{rp[0]}{more}: the rows of {r.csv_path.name} are not paired by these rounds")
    else:
        probs += rounds_problems(runs)
    if strict and probs:
        raise InputError(*probs)
    if strict and not runs:
        raise InputError(f"{', '.join(paths)}: no usable results")
    return runs, probs, warns


def once_per_run(runs: list[Run]) -> tuple[list[Run], list[str]]:
    """Each run once: files of one run_id whose rows are one's (a copy in a subdirectory, a file given twice
    under two names, a copy taken while the run was still writing: its rows the first of the other's) are one
    run, or its rows would count twice and pair across the copies.  Kept: the copy with the most rows, then
    the one whose rounds file is beside it, then the first listed; one warning line per copy left out, naming
    both files.  Files of one run_id with other rows are two runs (simulated runs started in the same
    simulated second can share one), kept both."""
    by_id: dict[str, list[int]] = {}
    for i, r in enumerate(runs):
        rid = str(r.meta.get("run_id") or "")
        if rid:
            by_id.setdefault(rid, []).append(i)
    if all(len(v) == 1 for v in by_id.values()):
        return runs, []

    def has_rounds(r: Run) -> bool:
        name = r.meta.get("rounds")
        return isinstance(name, str) and r.csv_path.with_name(name).is_file()

    drop: set[int] = set()
    warns = []
    for rid, idx in by_id.items():
        if len(idx) < 2:
            continue
        kept: list[tuple[int, pd.DataFrame]] = []
        for i in sorted(idx, key=lambda i: (-runs[i].nrows, not has_rounds(runs[i]), i)):
            rows = _row_columns(runs[i], COLUMNS)
            same = next((k for k, big in kept if big.iloc[:len(rows)].reset_index(drop=True).equals(rows)), None)
            if same is None:
                kept.append((i, rows))
                continue
            drop.add(i)
            warns.append(f"{runs[i].csv_path}: the same run as {runs[same].csv_path} (run_id {rid}): counted once, "
                         f"from {runs[same].csv_path}")
    return [r for i, r in enumerate(runs) if i not in drop], warns


REJECTED = -1.0  # round_group of every row of a run whose rounds file does not match its CSV (read_rounds)


@dataclass
class Rounds:
    """A run's rounds file read and checked against its CSV: per row its group (NaN: in none) and its samples
    by round (empty: none, or rejected), and the problem lines (file:line: what)."""

    group: np.ndarray
    samples: np.ndarray
    problems: list[str]


_ROUNDS: weakref.WeakKeyDictionary[Run, Rounds] = weakref.WeakKeyDictionary()


def _row_columns(r: Run, cols: list[str]) -> pd.DataFrame:
    """Some columns of a run's rows, without cutting the run's own frame (frame() takes the shared one)."""
    if r.cut or r.shared is None:
        return r.rows[cols]
    return r.shared[cols].iloc[r.span[0]:r.span[1]].reset_index(drop=True)


def _rounds_lines(path: Path) -> tuple[pd.DataFrame | None, str]:
    """The lines of a rounds file, typed, or (None, the one line saying why not)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return None, f"{path}: cannot read the rounds file: {e.strerror or e}"
    head = data.split(b"\n", 1)[0].rstrip(b"\r")
    if head != ROUNDS_HEADER.encode():
        shown = head[:60].decode("utf-8", "replace")
        return None, f"{path}:1: not a rounds file: the header is {shown!r}, not '{ROUNDS_HEADER}'"
    try:
        t = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, engine="c")
    except (ValueError, pd.errors.ParserError) as e:
        return None, f"{path}: malformed rounds file: {str(e).splitlines()[0] if str(e) else 'parse error'}"
    num = {c: pd.to_numeric(t[c], errors="coerce") for c in ROUNDS_HEADER.split(",")}
    ok = pd.Series(True, index=t.index)
    for c in ("group", "round", "row", "pos"):
        ok &= num[c].notna() & (num[c] % 1 == 0) & (num[c] >= (1 if c == "row" else 0))
    ok &= np.isfinite(num["time_s"]) & (num["time_s"] > 0)
    if not ok.all():
        i = int(np.flatnonzero(~ok.to_numpy())[0])
        return None, (f"{path}:{i + 2}: expected integers group, round, pos >= 0, row >= 1 and time_s > 0, got "
                      f"{','.join(t.iloc[i].astype(str))!r}" + (f" ({int((~ok).sum())} lines like that)"
                                                                if (~ok).sum() > 1 else ""))
    return pd.DataFrame({c: v.astype("float64") for c, v in num.items()}), ""


def read_rounds(r: Run) -> Rounds:
    """A grouped run's rounds file (docs/results-format.md, "The rounds file") against its CSV (read once per
    run): every line names a row of the CSV, in one group; each member has its reps rounds, 0 .. reps - 1, once
    each; and the median, minimum and maximum of its samples are its time_median_s, time_min_s and time_max_s
    (to the 9 digits printed).  A file that breaks a rule is not this CSV's: every row is then unpaired, with
    the group REJECTED (the findings say why).  A group whose members lack rounds in a run killed while writing
    ("complete": false) stands alone, without a problem."""
    got = _ROUNDS.get(r)
    if got is not None:
        return got
    n = r.nrows
    group = np.full(n, np.nan)
    samples = np.empty(n, dtype=object)
    samples.fill(())
    out = _ROUNDS[r] = Rounds(group, samples, [])
    name = r.meta.get("rounds")
    if name is None:
        return out
    jp = r.csv_path.with_suffix(".json")
    if not isinstance(name, str) or not name or "/" in name:
        why = (f"{jp}:{_json_line(jp.read_text(errors='replace'), 'rounds')}: field 'rounds' must be the rounds "
               f"file's name, without a directory, got {name!r}")
    elif not (path := r.csv_path.with_name(name)).is_file():
        why = f"{jp}: names the rounds file {name}, which is not beside it"
    else:
        t, why = _rounds_lines(path)
        if t is not None:
            _check_rounds(r, path, t, out)
            return out
    out.problems.append(why)
    group[:] = REJECTED
    return out


def _check_rounds(r: Run, path: Path, t: pd.DataFrame, out: Rounds) -> None:
    """The rules of read_rounds on a file's typed lines; fills out."""
    n, csv_name = r.nrows, r.csv_path.name
    probs: list[str] = []
    lines = pd.Series(np.arange(len(t)) + 2)
    outside = (t["row"] > n).to_numpy()
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        probs.append(f"{path}:{lines[i]}: row {int(t['row'][i])}, but {csv_name} has {n} row(s)"
                     + (f" ({int(outside.sum())} lines like that)" if outside.sum() > 1 else ""))
    t = t[~outside].assign(line=lines[~outside].to_numpy())
    rows = _row_columns(r, ["reps", "time_median_s", "time_min_s", "time_max_s"])
    per_row = t.groupby("row", sort=True)
    stats = per_row["time_s"].agg(["median", "min", "max", "count"])
    stats["groups"] = per_row["group"].nunique()
    stats["first_group"] = per_row["group"].first()
    stats["distinct"] = per_row["round"].nunique()
    stats["top"] = per_row["round"].max()
    stats["line"] = per_row["line"].first()
    at = stats.index.to_numpy(int) - 1
    reps = rows["reps"].to_numpy(float)[at]
    whole = (stats["count"].to_numpy() == reps) & (stats["distinct"].to_numpy() == reps) & \
        (stats["top"].to_numpy() == reps - 1)
    one_group = stats["groups"].to_numpy() == 1
    with np.errstate(invalid="ignore"):
        same = np.ones(len(stats), dtype=bool)
        for c, col in (("median", "time_median_s"), ("min", "time_min_s"), ("max", "time_max_s")):
            want = rows[col].to_numpy(float)[at]
            same &= np.abs(stats[c].to_numpy() - want) <= TOL * np.abs(want)
    # a group cut short in a run killed while writing: unpaired, not a problem
    killed = one_group & ~whole if r.meta.get("complete") is False else np.zeros(len(stats), dtype=bool)
    bad = ~one_group | (~whole & ~killed) | (whole & ~same)
    for i in np.flatnonzero(bad)[:5]:
        row, s = int(stats.index[i]), stats.iloc[i]
        where = f"{path}:{int(s['line'])}: row {row} ({csv_name}:{row + 1})"
        if not one_group[i]:
            probs.append(f"{where} is in {int(s['groups'])} groups (a row is in one)")
        elif not whole[i]:
            probs.append(f"{where} has {int(s['count'])} line(s) of {int(s['distinct'])} distinct round(s); its "
                         f"reps is {reps[i]:g}: rounds 0 .. reps - 1 once each")
        else:
            probs.append(f"{where}: median, min, max of its rounds {s['median']:.9g}, {s['min']:.9g}, "
                         f"{s['max']:.9g} s, but the row's are {rows['time_median_s'][row - 1]:.9g}, "
                         f"{rows['time_min_s'][row - 1]:.9g}, {rows['time_max_s'][row - 1]:.9g} s (are these "
                         f"another run's rounds?)")
    if bad.sum() > 5:
        probs.append(f"{path}: ... and {int(bad.sum()) - 5} more row(s) like that")
    out.problems += probs
    if probs:  # the file is not this CSV's: none of its rounds are used
        out.group[:] = REJECTED
        return
    # a group with a member cut short by the kill stands alone, as the format's reader rule says
    cut = np.isin(stats["first_group"].to_numpy(), stats["first_group"].to_numpy()[killed])
    out.group[at[~cut]] = stats["first_group"].to_numpy()[~cut]
    use = np.flatnonzero(~cut)
    if len(use):
        times = t.sort_values(["row", "round"], kind="stable").groupby("row", sort=True)["time_s"].agg(tuple)
        out.samples[at[use]] = times.to_numpy()[use]


def rounds(r: Run) -> tuple[np.ndarray, np.ndarray]:
    """A grouped run's per-round samples (read_rounds) for each of its rows: (the row's group or NaN, the row's
    times by round; empty where it has none or its rounds were rejected)."""
    got = read_rounds(r)
    return got.group, got.samples


def rounds_rejected(a: Any, b: Any) -> bool:
    """Whether two rows of one run (frame's rows) are unpaired because its rounds file does not match the CSV
    (read_rounds)."""
    return bool(a.get("round_group") == REJECTED == b.get("round_group") and a.get("file") == b.get("file"))


def rounds_problems(runs: list[Run]) -> list[str]:
    """Every rounds file's problems (read_rounds), in the runs' order."""
    return [x for r in runs if "rounds" in r.meta for x in read_rounds(r).problems]


def per_run_text(values: list[str], counts: Any) -> Any:
    """A str column of values[i] repeated counts[i] times, by one take of the values (from 10^6 Python objects
    or a NumPy text array, pandas takes 0.15-0.3 s to build it)."""
    return pd.array(values, dtype="str").take(np.repeat(np.arange(len(values)), counts))


def frame(runs: list[Run]) -> pd.DataFrame:
    """All rows of runs in one frame, with derived columns: simulated, platform (Run.platform), published,
    oversubscribed, busy,
    launch (Run.launch), library (short MPI name), start_utc and file (of the run), failed (verification failed: a result
    shown as FAILED), na (not applicable), sent_bytes (bytes one process sends per op), round_group and
    rounds (a grouped run's per-round samples of the row: rounds()).  Runs loaded together whose own
    frames were never cut are taken from their shared frame in one step."""
    shared = runs[0].shared if runs else None
    if shared is not None and all(r.shared is shared and not r.cut for r in runs):
        spans = [r.span for r in runs]
        whole = spans[0][0] == 0 and spans[-1][1] == len(shared) and all(
            a[1] == b[0] for a, b in zip(spans, spans[1:]))
        df = shared.copy(deep=False) if whole else shared.take(
            np.concatenate([np.arange(a, b) for a, b in spans])).reset_index(drop=True)
    elif runs:
        df = pd.concat([r.rows for r in runs], ignore_index=True)
    else:
        df = pd.DataFrame(columns=COLUMNS)
    n = np.array([r.nrows for r in runs], dtype=np.int64)

    def per_run(values: list[Any], dtype: Any = object) -> Any:
        if dtype is str and runs:
            return per_run_text(values, n)
        return np.repeat(np.array(values, dtype=object if dtype is str else dtype), n)

    df["simulated"] = per_run([r.simulated for r in runs], bool)
    df["platform"] = per_run([r.platform for r in runs], str)
    df["published"] = per_run([r.published for r in runs], bool)
    df["oversubscribed"] = per_run([r.oversubscribed for r in runs], bool)
    df["busy"] = per_run([r.busy for r in runs], bool)
    df["launch"] = per_run([r.launch for r in runs], str)
    df["build"] = per_run([build(r.meta) for r in runs], str)
    df["library"] = per_run([short_library(r.meta) for r in runs], str)
    df["start_utc"] = per_run([str(r.meta.get("start_utc") or "") for r in runs], str)
    df["file"] = per_run([rel(r.csv_path) for r in runs], str)
    df["schema"] = per_run([int(r.meta.get("schema_version", SCHEMA_VERSION)) for r in runs], np.int64)
    group = np.full(len(df), np.nan)
    samples = np.empty(len(df), dtype=object)
    samples.fill(())
    at = np.concatenate([[0], np.cumsum(n)])
    for i, r in enumerate(runs):
        if "rounds" in r.meta:  # paired samples (mpimb.paired), where measured as a group
            g, t = rounds(r)
            group[at[i]:at[i + 1]] = g
            samples[at[i]:at[i + 1]] = t
    df["round_group"], df["rounds"] = group, samples
    with np.errstate(invalid="ignore", divide="ignore"):
        df["sent_bytes"] = df["mbps"] * 1e6 * df["time_median_s"]
    df["na"] = na_mask(df["stop_reason"])
    df["failed"] = df["verified"] == "no"
    return df


def build(meta: dict[str, Any]) -> str:
    """What a run's numbers were made with: suite version and commit, compiler flags, MPI library
    ('mpimb 0.1.0 be725f763a31 -O2 -g, Open MPI 4.1.4'): launches of one machine should share it."""
    comp = meta.get("compiler") if isinstance(meta.get("compiler"), dict) else {}
    flags = str((comp or {}).get("flags", "") or "")
    return " ".join(x for x in ("mpimb", str(meta.get("suite_version", "")), str(meta.get("git_commit", "")),
                                flags) if x) + f", {short_library(meta)}"


def short_library(meta: dict[str, Any]) -> str:
    """'Open MPI 4.1.4', 'MPICH 4.0.2', 'SimGrid SMPI 3.32' from the library version string."""
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
    m = re.match(r"SMPI Version ([\d.]+)", first)  # 'SMPI Version 3.32. Copyright The SimGrid Team 2007-2022'
    if m:
        return f"SimGrid SMPI {m.group(1).rstrip('.')}"
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
