"""The one definition of the results format: the JSON Schema files beside this
module (results.schema.json for the CSV columns, meta.schema.json for the JSON
metadata, raw.schema.json for --raw files).  The C writer, this package's
loader and the tests are all checked against them (tests/test_schema.py).

Everything the loader knows about a column (name, type, whether it may be
empty, its vocabulary, its minimum, whether it identifies a measurement)
comes from here; nothing is typed twice."""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_VERSION = 2


@cache
def document(name: str) -> dict[str, Any]:
    """One schema file ('results', 'meta' or 'raw') as parsed JSON."""
    text = resources.files(__package__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


def specs(name: str = "results", doc: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The column definitions of a CSV format, in order."""
    items: list[dict[str, Any]] = (doc or document(name))["prefixItems"]
    return items


def columns(name: str = "results", doc: dict[str, Any] | None = None) -> list[str]:
    """Column names of a CSV format, in order."""
    return [c["title"] for c in specs(name, doc)]


def types(name: str = "results", doc: dict[str, Any] | None = None) -> dict[str, set[str]]:
    """Column -> its JSON types ('string', 'integer', 'number', 'null')."""
    out = {}
    for c in specs(name, doc):
        t = c["type"]
        out[c["title"]] = {t} if isinstance(t, str) else set(t)
    return out


def typed_columns(kind: str, name: str = "results") -> list[str]:
    """Columns whose cells are kind ('string', 'integer' or 'number')."""
    return [c for c, t in types(name).items() if kind in t]


def key_columns(doc: dict[str, Any] | None = None) -> list[str]:
    """The columns that identify a measurement (x-key): never merged across."""
    return [c["title"] for c in specs("results", doc) if c.get("x-key")]


def roles() -> dict[str, str]:
    """Role name -> what it means (results.schema.json's x-roles)."""
    r: dict[str, str] = document("results")["x-roles"]
    return r


def key_roles(*names: str) -> list[str]:
    """The key columns of the given roles (x-role), role by role in the order given and in column order
    within a role: key_roles("config", "layout") -> method, comm, neighbors, periodic, threads, nprocs,
    nnodes, ppn.  Every subset of the key columns the package uses is named by its roles here."""
    known = roles()
    for n in names:
        if n not in known:
            raise KeyError(f"no key role {n!r} in results.schema.json (roles: {', '.join(known)})")
    return [c["title"] for n in names for c in specs("results") if c.get("x-role") == n]


def numeric_keys() -> list[str]:
    """The key columns that hold numbers (empty cells read as NaN)."""
    t = types()
    return [c for c in key_columns() if t[c] & {"integer", "number"}]


def required_columns(name: str = "results") -> list[str]:
    """Columns that may not be empty: strings with minLength >= 1, numbers that may not be null."""
    return [c["title"] for c in specs(name)
            if ("string" in types(name)[c["title"]] and c.get("minLength", 0) >= 1)
            or ("string" not in types(name)[c["title"]] and "null" not in types(name)[c["title"]])]


def spec(column: str, name: str = "results") -> dict[str, Any]:
    return next(c for c in specs(name) if c["title"] == column)


def measured_params() -> dict[str, str]:
    """The params keys that carry results, not settings (--overlap's pure_s, cpu_s, overlap_pct), with what each
    is: results.schema.json, column params, x-measured-keys."""
    return dict(spec("params").get("x-measured-keys", {}))


def measured_text_params() -> list[str]:
    """The measured params keys whose values are text, not numbers (--phases' phase_na: why a method has no
    phases): results.schema.json, column params, x-measured-text."""
    return list(spec("params").get("x-measured-text", []))


def vocabulary(column: str) -> tuple[list[Any], list[str]]:
    """(allowed values, allowed patterns) of a column: its enum, or the enums and
    patterns of its anyOf branches; ([], []) when the column takes anything."""
    s = spec(column)
    branches = s.get("anyOf", [s])
    values = [v for b in branches for v in b.get("enum", [])]
    patterns = [b["pattern"] for b in branches if "pattern" in b and "enum" not in b]
    return values, patterns


# ------------------------------------------------------------------ vocabularies

# Fewer repetitions than this: no usable nonparametric 95 % interval of the median (results.schema.json,
# column reps, x-min-reps-for-ci); no difference is judged with such a row.
MIN_REPS_FOR_CI: int = int(spec("reps")["x-min-reps-for-ci"])


def method_families(program: str = "halocompare") -> dict[str, str]:
    """method -> its family ('point-to-point', 'one-sided', 'neighbourhood collective') for a program
    (results.schema.json, column method, x-vocabulary)."""
    fam: dict[str, str] = spec("method")["x-vocabulary"].get(program, {})
    return fam


def stencils(program: str = "halocompare") -> list[int]:
    """The neighbour counts of a program's stencils (results.schema.json, column neighbors, x-stencils)."""
    counts: list[int] = spec("neighbors")["x-stencils"].get(program, [])
    return counts


def programs() -> list[str]:
    """The programs that write results (the program column's enum)."""
    names: list[str] = spec("program")["enum"]
    return names


def program_vocabulary(column: str) -> dict[str, tuple[list[str], list[str]]]:
    """A column whose values depend on the program (method, comm): program -> (allowed values,
    allowed patterns), from the column's x-vocabulary (and its x-patterns)."""
    voc = spec(column)["x-vocabulary"]
    pats = voc.get("x-patterns", {})
    return {p: (list(voc.get(p, {})), list(pats.get(p, {}))) for p in programs()}


UNKNOWN_FAMILY = "unknown"
POINT_TO_POINT = "point-to-point"
ONE_SIDED = "one-sided"
NEIGHBOURHOOD = "neighbourhood collective"


def thread_levels() -> list[str]:
    """The MPI thread levels, lowest first (the thread_level column's enum)."""
    levels: list[str] = spec("thread_level")["enum"]
    return levels


def mpi_thread_level(level: str) -> str:
    """'multiple' -> 'MPI_THREAD_MULTIPLE'."""
    return f"MPI_THREAD_{level.upper()}"


def previous_columns(version: int) -> list[str]:
    """The columns of an older schema version (results CSV)."""
    cols: list[str] = document("results")["x-previous-versions"][str(version)]["columns"]
    return cols


def columns_of(version: int) -> list[str]:
    return columns() if version == SCHEMA_VERSION else previous_columns(version)


def readable_versions() -> tuple[int, ...]:
    return (*sorted(int(v) for v in document("results")["x-previous-versions"]), SCHEMA_VERSION)


def meta_document(version: int) -> dict[str, Any]:
    """meta.schema.json for a readable version (older versions differ only in their number)."""
    doc = document("meta")
    if version == SCHEMA_VERSION:
        return doc
    old = copy.deepcopy(doc)
    old["properties"]["schema_version"] = {"const": version}
    return old


# ------------------------------------------------------------------ params

PARAMS_RE = re.compile(spec("params")["pattern"])


def params_problem(value: str) -> str | None:
    """None if value is a canonical params field, else what is wrong with it."""
    if not PARAMS_RE.match(value):
        for pair in value.split(";"):
            k, eq, _ = pair.partition("=")
            if not eq:
                return f"'{pair}' is not key=value"
            if not k:
                return f"'{pair}' has an empty key"
            if "=" in pair[len(k) + 1:]:
                return f"'{pair}' has more than one '='"
        return "keys are letters, digits, '_', '.', '-' (pairs joined by ';')"
    if not value:
        return None
    keys = [p.split("=", 1)[0] for p in value.split(";")]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        return f"key '{dup[0]}' appears more than once"
    if keys != sorted(keys):
        return f"keys not sorted ({', '.join(keys)}): canonical params are sorted by key"
    return None


def parse_params(value: str) -> dict[str, str]:
    """A canonical params field as a dict (call params_problem first).  The one parser of params:
    every other reader goes through it (mpimb.keys.param_values for a column of them)."""
    return dict(p.split("=", 1) for p in value.split(";")) if value else {}
