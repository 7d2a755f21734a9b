"""One definition, checked: analysis/mpimb/schema/results.schema.json lists the
results columns; the C writer (src/common/output.c), the Python loader
(mpimb.load) and the tests (conftest.COLUMNS) must all say the same.  drift()
compares the four, and each test below changes exactly one of them to show
that the check then fails.  Real runs under both MPI libraries are checked
cell by cell against the schema, their JSON against meta.schema.json and
their --raw file against raw.schema.json, and the raw samples must reproduce
the CSV's statistics."""

from __future__ import annotations

import copy
import csv
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import conftest
import jsonschema
import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, run_mpi

SCHEMA_DIR = ROOT / "analysis" / "mpimb" / "schema"


def schema_doc(name: str = "results") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
    return doc


def drift(writer: list[str], loader: list[str], tests: list[str], doc: dict[str, Any]) -> list[str]:
    """What differs from the schema's columns: one line per party that drifted."""
    want = [c["title"] for c in doc["prefixItems"]]
    out = []
    for who, cols in (("C writer (src/common/output.c)", writer), ("loader (mpimb.load.COLUMNS)", loader),
                      ("tests (conftest.COLUMNS)", tests)):
        if cols != want:
            diff = [f"{a}!={b}" for a, b in zip(cols, want) if a != b] or [f"{len(cols)} vs {len(want)} columns"]
            out.append(f"{who} differs from results.schema.json: {', '.join(diff[:3])}")
    return out


def writer_header(tmp: Path, rename: tuple[str, str] | None = None) -> list[str]:
    """The header the C writer prints: a copy of src/common/output.c (one column renamed if asked),
    compiled with mpicc into a tiny program that calls mb_csv_header."""
    mpicc = next((c for c in ("mpicc.openmpi", "mpicc.mpich", "mpicc") if shutil.which(c)), None)
    if mpicc is None:
        pytest.skip("no mpicc")
    src = (ROOT / "src" / "common" / "output.c").read_text()
    if rename:
        old, new = rename
        src, n = re.subn(rf"([\",]){old},", rf"\g<1>{new},", src, count=1)
        assert n == 1, f"column {old} not found in output.c"
    d = tmp / ("renamed" if rename else "original")
    d.mkdir()
    (d / "output.c").write_text(src)
    (d / "main.c").write_text("#include <stdio.h>\nvoid mb_csv_header(FILE *f);\n"
                              "int main(void) { mb_csv_header(stdout); return 0; }\n")
    exe = d / "header"
    subprocess.run([mpicc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror", f"-I{ROOT / 'src' / 'common'}",
                    str(d / "main.c"), str(d / "output.c"), "-o", str(exe), "-lm"], check=True, timeout=300,
                   capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout
    return out.strip().split(",")


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return writer_header(tmp_path_factory.mktemp("writer"))


def loader_columns() -> list[str]:
    from mpimb import load

    return list(load.COLUMNS)


# ---------------------------------------------------------------- the drift check, and each party changed alone


def test_all_agree(header: list[str]) -> None:
    assert drift(header, loader_columns(), conftest.COLUMNS, schema_doc()) == []


def test_writer_renamed_fails(tmp_path: Path, header: list[str]) -> None:
    renamed = writer_header(tmp_path, ("params", "parameters"))
    assert renamed != header and "parameters" in renamed
    problems = drift(renamed, loader_columns(), conftest.COLUMNS, schema_doc())
    assert len(problems) == 1 and problems[0].startswith("C writer") and "parameters!=params" in problems[0]


def test_loader_changed_fails(header: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mpimb import load

    cols = list(load.COLUMNS)
    cols[cols.index("rank_min_s")] = "rank_minimum_s"
    monkeypatch.setattr(load, "COLUMNS", cols)
    problems = drift(header, loader_columns(), conftest.COLUMNS, schema_doc())
    assert len(problems) == 1 and problems[0].startswith("loader") and "rank_minimum_s" in problems[0]


def test_tests_changed_fails(header: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "COLUMNS", [c for c in conftest.COLUMNS if c != "agg_mbps"])
    problems = drift(header, loader_columns(), conftest.COLUMNS, schema_doc())
    assert len(problems) == 1 and problems[0].startswith("tests")


def test_schema_file_changed_fails(header: list[str], tmp_path: Path) -> None:
    """A mutated copy of the schema file no longer matches writer, loader and tests."""
    mutated = tmp_path / "results.schema.json"
    doc = schema_doc()
    doc["prefixItems"][doc["prefixItems"].index(next(c for c in doc["prefixItems"] if c["title"] == "time_p90_s"))][
        "title"] = "time_q90_s"
    mutated.write_text(json.dumps(doc))
    problems = drift(header, loader_columns(), conftest.COLUMNS, json.loads(mutated.read_text()))
    assert len(problems) == 3 and all("time_p90_s!=time_q90_s" in p for p in problems)


def test_loader_types_follow_the_schema() -> None:
    """The loader's typed column lists are the schema's types, and its key columns the x-key ones."""
    from mpimb import keys, load

    types = {c["title"]: {c["type"]} if isinstance(c["type"], str) else set(c["type"])
             for c in schema_doc()["prefixItems"]}
    assert set(load.STR_COLS) == {c for c, t in types.items() if "string" in t}
    assert set(load.INT_COLS) == {c for c, t in types.items() if "integer" in t}
    assert set(load.FLOAT_COLS) == {c for c, t in types.items() if t & {"number"} and "integer" not in t}
    assert keys.KEYS == [c["title"] for c in schema_doc()["prefixItems"] if c.get("x-key")]


# ---------------------------------------------------------------- real output against the schema


def typed_cells(row: list[str], doc: dict[str, Any]) -> list[Any]:
    """A CSV row as the schema's array: '' is null, integer and number cells parsed (a cell that does not
    parse as its declared type stays text, so the schema check names it)."""
    out: list[Any] = []
    for cell, spec in zip(row, doc["prefixItems"]):
        t = {spec["type"]} if isinstance(spec["type"], str) else set(spec["type"])
        if cell == "" and "null" in t:
            out.append(None)
        elif "integer" in t and re.fullmatch(r"-?\d+", cell):
            out.append(int(cell))
        elif "number" in t:
            try:
                out.append(float(cell))
            except ValueError:
                out.append(cell)
        else:
            out.append(cell)
    return out


@pytest.fixture(scope="module", params=conftest.LIBS)
def real(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """halocompare (2 ranks: RMA methods for win/assert, random for seed) with --raw, under one library."""
    lib = str(request.param)
    if not shutil.which(f"mpiexec.{lib}"):
        pytest.skip(f"mpiexec.{lib} not installed")
    d = tmp_path_factory.mktemp(f"real-{lib}")
    r = run_mpi(lib, 2, "halocompare", "--quick", "--verify", "--methods", "irecv-isend,sendrecv,rma-fence-put",
                "--comms", "world,random", "--raw", str(d / "raw.csv"), out=d / "h.csv", timeout=600)
    assert r.returncode == 0, r.stderr
    return d


def test_real_rows_follow_the_schema(real: Path, header: list[str]) -> None:
    doc = schema_doc()
    with open(real / "h.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == header == [c["title"] for c in doc["prefixItems"]]
    for i, row in enumerate(rows[1:], start=2):
        jsonschema.validate(typed_cells(row, doc), doc)  # raises with the cell that is wrong
        assert len(row) == len(header), i
    # the harness adds how repetitions started (sync=...) to every measured row
    params = {re.sub(r"(^|;)sync=[^;]*", "", r[header.index("params")]).lstrip(";") for r in rows[1:]}
    assert "assert=none;dims=2;win=allocate" in params and "dims=2;seed=1" in params


def test_real_json_follows_meta_schema(real: Path) -> None:
    meta = json.loads((real / "h.json").read_text())
    jsonschema.validate(meta, schema_doc("meta"))
    bad = copy.deepcopy(meta)
    bad["schema_version"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema_doc("meta"))


def test_raw_follows_its_schema_and_reproduces_the_rows(real: Path) -> None:
    doc = schema_doc("raw")
    with open(real / "raw.csv", newline="") as f:
        lines = list(csv.reader(f))
    assert lines[0] == [c["title"] for c in doc["prefixItems"]]
    for line in lines[1:]:
        jsonschema.validate(typed_cells(line, doc), doc)
    raw = pd.read_csv(real / "raw.csv", keep_default_na=False)
    rows = pd.read_csv(real / "h.csv", keep_default_na=False)
    rows["row"] = np.arange(1, len(rows) + 1)
    measured = rows[rows["stop_reason"].isin(["ci", "max-reps", "budget"])]
    assert set(raw["row"]) == set(measured["row"]), "every measured row has its samples, n/a rows none"
    for _, r in measured.iterrows():
        s = raw[(raw["row"] == r["row"]) & (raw["test"] == r["test"]) & (raw["method"] == r["method"]) &
                (raw["comm"] == r["comm"])]
        per_rep = s.groupby("rep")["seconds"].max().to_numpy()  # the slowest rank of each repetition
        assert len(per_rep) == r["reps"]
        assert np.median(per_rep) == pytest.approx(r["time_median_s"], rel=1e-6)
        assert np.percentile(per_rep, 90) == pytest.approx(r["time_p90_s"], rel=1e-6)
        assert np.percentile(per_rep, 99) == pytest.approx(r["time_p99_s"], rel=1e-6)
        own = s.groupby("rank")["seconds"].median()  # each rank's own median
        assert own.min() == pytest.approx(r["rank_min_s"], rel=1e-6)
        assert own.mean() == pytest.approx(r["rank_mean_s"], rel=1e-6)


def test_the_format_doc_names_every_column() -> None:
    """docs/results-format.md, for people parsing results with their own tools, lists every column of
    every file the schema defines, and the version it documents."""
    doc = (ROOT / "docs" / "results-format.md").read_text()
    for name in ("results", "raw"):
        for c in schema_doc(name)["prefixItems"]:
            assert f"`{c['title']}`" in doc or c["title"] in doc, c["title"]
    for field in schema_doc("meta")["required"]:
        assert f"`{field}`" in doc, field
    assert f"schema_version` ({schema_doc()['x-schema-version']})" in doc


def test_raw_files_are_not_read_as_results(real: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A directory holding a run and its --raw file reports the run; the raw file alone is refused in one line."""
    from mpimb.cli import main

    assert main(["validate", str(real)]) == 0
    assert capsys.readouterr().out.startswith("ok: 1 run(s)")
    assert main(["table", str(real / "raw.csv")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "raw.csv:1: a --raw samples file" in err[0]
