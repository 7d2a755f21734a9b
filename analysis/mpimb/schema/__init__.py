"""The one definition of the results format: the JSON Schema files beside this
module (results.schema.json for the CSV columns, meta.schema.json for the JSON
metadata, raw.schema.json for --raw files).  The C writer, this package's
loader and the tests are all checked against them (tests/test_schema.py)."""

from __future__ import annotations

import json
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


def columns(name: str = "results") -> list[str]:
    """Column names of a CSV format, in order."""
    return [c["title"] for c in document(name)["prefixItems"]]


def _types(name: str) -> dict[str, set[str]]:
    out = {}
    for c in document(name)["prefixItems"]:
        t = c["type"]
        out[c["title"]] = {t} if isinstance(t, str) else set(t)
    return out


def typed_columns(kind: str, name: str = "results") -> list[str]:
    """Columns whose cells are kind ('string', 'integer' or 'number')."""
    return [c for c, t in _types(name).items() if kind in t]


def key_columns() -> list[str]:
    """The columns that identify a measurement (x-key): never merged across."""
    return [c["title"] for c in document("results")["prefixItems"] if c.get("x-key")]


def previous_columns(version: int) -> list[str]:
    """The columns of an older schema version (results CSV)."""
    cols: list[str] = document("results")["x-previous-versions"][str(version)]["columns"]
    return cols
