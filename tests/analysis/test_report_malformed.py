"""Malformed input: every case is a clear one-line-per-problem error, a non-zero
exit, no traceback and no output file — for validate and for the other commands."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, cli
from mpimb.schema import columns

NCOL = len(columns())

BASE = FIXTURES / "clusterA" / "pingpong-clusterA-np4.csv"


def _setup(tmp: Path) -> Path:
    csv = tmp / "run.csv"
    shutil.copy(BASE, csv)
    shutil.copy(BASE.with_suffix(".json"), tmp / "run.json")
    return csv


def _lines(p: Path) -> list[str]:
    return p.read_text().splitlines(keepends=True)


def _edit_cell(p: Path, line: int, column: str, value: str) -> None:
    rows = _lines(p)
    head = rows[0].rstrip("\n").split(",")
    cells = rows[line - 1].rstrip("\n").split(",")
    cells[head.index(column)] = value
    rows[line - 1] = ",".join(cells) + "\n"
    p.write_text("".join(rows))


def _meta(p: Path, **kw: object) -> None:
    j = p.with_suffix(".json")
    m = json.loads(j.read_text())
    m.update(kw)
    j.write_text(json.dumps(m))


def empty(p: Path) -> None:
    p.write_text("")


def header_only(p: Path) -> None:
    p.write_text(_lines(p)[0])


def missing_columns(p: Path) -> None:
    rows = [r.rstrip("\n").split(",") for r in _lines(p)]
    i = rows[0].index("mbps")
    p.write_text("".join(",".join(c for j, c in enumerate(r) if j != i) + "\n" for r in rows))


def not_a_result(p: Path) -> None:
    p.write_text("name,value\nx,1\n")


def wrong_int(p: Path) -> None:
    _edit_cell(p, 3, "bytes", "abc")


def wrong_float(p: Path) -> None:
    _edit_cell(p, 5, "time_median_s", "fast")


def truncated(p: Path) -> None:
    data = p.read_text()
    p.write_text(data[: len(data) - 200])


def extra_field(p: Path) -> None:
    rows = _lines(p)
    rows[3] = rows[3].rstrip("\n") + ",surplus\n"
    p.write_text("".join(rows))


def unknown_schema(p: Path) -> None:
    _meta(p, schema_version=99)


def old_schema(p: Path) -> None:
    _meta(p, schema_version="0.9")


def json_missing(p: Path) -> None:
    p.with_suffix(".json").unlink()


def json_malformed(p: Path) -> None:
    p.with_suffix(".json").write_text('{"schema_version": 1, "run_id": ')


def binary(p: Path) -> None:
    p.write_bytes(bytes(range(256)) * 4)


def unordered_times(p: Path) -> None:
    _edit_cell(p, 2, "time_min_s", "1")


def rows_missing(p: Path) -> None:
    p.write_text("".join(_lines(p)[:-3]))


def bad_stop_reason(p: Path) -> None:
    _edit_cell(p, 4, "stop_reason", "tired")


def edit(line: int, column: str, value: str) -> Callable[[Path], None]:
    """A case that sets one cell."""
    return lambda p: _edit_cell(p, line, column, value)


def meta(**kw: object) -> Callable[[Path], None]:
    """A case that sets JSON fields."""
    return lambda p: _meta(p, **kw)


def unknown_column(p: Path) -> None:
    rows = _lines(p)
    p.write_text("".join(r.rstrip("\n") + (",surplus\n" if i == 0 else ",1\n") for i, r in enumerate(rows)))








def json_field_missing(p: Path) -> None:
    j = p.with_suffix(".json")
    m = json.loads(j.read_text())
    del m["mpi"]
    j.write_text(json.dumps(m, indent=2))




def duplicate_key(p: Path) -> None:
    rows = _lines(p)
    rows[5] = rows[4]
    p.write_text("".join(rows))





CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "empty file": (empty, r"run\.csv:1: empty file"),
    "header only": (header_only, r"run\.csv:2: no result rows"),
    "missing columns": (missing_columns, r"run\.csv:1: missing column\(s\): mbps"),
    "not a result csv": (not_a_result, r"run\.csv:1: not an mpimb result CSV"),
    "wrong type int": (wrong_int, r"run\.csv:3: column 'bytes': expected an integer, got 'abc'"),
    "wrong type float": (wrong_float, r"run\.csv:5: column 'time_median_s': expected a number, got 'fast'"),
    "truncated file": (truncated, r"run\.csv:\d+: truncated"),
    "extra field": (extra_field, rf"run\.csv:4: expected {NCOL} fields, found {NCOL + 1}"),
    "unknown schema version": (unknown_schema, r"run\.json:1: schema_version 99 is newer"),
    "old schema version": (old_schema, r"run\.json:1: unknown schema_version '0\.9'"),
    "json missing": (json_missing, r"run\.json: metadata file missing"),
    "json malformed": (json_malformed, r"run\.json:1: not valid JSON"),
    "binary file": (binary, r"run\.csv: not UTF-8 text"),
    "times not ordered": (unordered_times, r"run\.csv:2: times not ordered"),
    "rows missing from complete run": (rows_missing, r"run\.csv: \d+ row\(s\), but run\.json says"),
    "bad stop_reason": (bad_stop_reason, r"run\.csv:4: stop_reason 'tired'"),
    "unknown column": (unknown_column, r"run\.csv:1: unknown column\(s\): surplus"),
    "params not sorted": (edit(6, "params", "window=64;cache-bytes=4096"), (r"run\.csv:6: params 'window=64;cache-bytes=4096' does not parse: keys not "
                                           r"sorted")),
    "params empty key": (edit(6, "params", "=64"), r"run\.csv:6: params '=64' does not parse: '=64' has an empty key"),
    "params key twice": (edit(6, "params", "window=64;window=8"), r"run\.csv:6: params .* key 'window' appears more than once"),
    "params without =": (edit(6, "params", "window"), r"run\.csv:6: params 'window' does not parse: 'window' is not key=value"),
    "json of another schema version": (meta(schema_version=1), (r"run\.json:1: schema_version 1, but run\.csv has the "
                                                           r"columns of schema version 2")),
    "json field of the wrong type": (meta(hosts="n1"), r"run\.json:1: field 'hosts': 'n1' is not of type 'array'"),
    "json required field missing": (json_field_missing, r"run\.json:1: required field 'mpi' missing"),
    "thread_level not in the schema": (edit(3, "thread_level", "many"), r"run\.csv:3: thread_level 'many' is not single"),
    "below the schema's minimum": (edit(7, "reps_rejected", "-3"), r"run\.csv:7: column 'reps_rejected' must be >= 0, got -3"),
    "a key twice in one run": (duplicate_key, r"run\.csv:6: same key columns as line 5"),
    "schema-1 failure row in schema 2": (edit(8, "stop_reason", "verification failed"), r"run\.csv:8: stop_reason 'verification failed' is not"),
    "percentile outside min..max": (edit(10, "time_p90_s", "1"), r"run\.csv:10: time_p90_s outside \[time_min_s, time_max_s\]"),
    "published row in a measured run": (edit(9, "stop_reason", "published"), (r"run\.csv:9: stop_reason 'published' in a run "
                                                                     r"whose run\.json does not say")),
}
# The bad-input promise: exactly one line, naming the file and the line.
ONE_LINE = {"unknown column", "params not sorted", "params empty key", "params key twice", "params without =",
            "json of another schema version"}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make, expect = CASES[case]
    csv = _setup(tmp_path)
    make(csv)
    before = sorted(tmp_path.iterdir())
    v = cli("validate", str(csv), capsys=capsys)
    assert v.rc == 1, v
    problems = v.out.strip().splitlines()
    assert problems and all(re.match(r"^\S+\.(csv|json)(:\d+)?: \S", ln) for ln in problems), problems
    assert any(re.search(expect, ln) for ln in problems), problems
    if case in ONE_LINE:
        assert len(problems) == 1, problems
    assert "Traceback" not in v.out + v.err
    for cmd in (["table"], ["model"], ["plot", "-o", str(tmp_path / "plots")],
                ["report", "-o", str(tmp_path / "r.html")], ["compare", str(FIXTURES / "clusterB"), "-o",
                                                              str(tmp_path / "c.html")]):
        args = [cmd[0], str(csv), *cmd[1:]]
        r = cli(*args, capsys=capsys)
        assert r.rc == 1, (cmd, r)
        err = r.err.strip().splitlines()
        assert err and all(ln.startswith("mpimb-report: ") for ln in err), err
        assert any(re.search(expect, ln) for ln in err), err
        assert "Traceback" not in r.err and r.out == ""
        assert sorted(tmp_path.iterdir()) == before, "no output files on error"


def test_mixed_schema_versions_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _setup(a)
    csv_b = _setup(b)
    unknown_schema(csv_b)
    r = cli("table", str(tmp_path), capsys=capsys)
    assert r.rc == 1 and r.err.count("\n") == 1
    assert "b/run.json:1: schema_version 99 is newer than this mpimb-report understands (2)" in r.err


def test_directory_without_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = cli("validate", str(tmp_path), capsys=capsys)
    assert r.rc == 1 and "no result files" in r.err and r.err.count("\n") == 1


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["table", str(BASE), "--format", "pdf"], ["plot", str(BASE)], ["frobnicate"], ["table"]):
        r = cli(*args, capsys=capsys)
        assert r.rc == 2, args
        assert len(r.err.strip().splitlines()) == 1 and r.err.startswith("mpimb-report: "), r.err


def test_many_bad_lines_are_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = _setup(tmp_path)
    for line in range(2, 30):
        _edit_cell(csv, line, "bytes", "x")
    v = cli("validate", str(csv), capsys=capsys)
    lines = v.out.strip().splitlines()
    assert v.rc == 1 and len(lines) == 6 and "23 more bad value(s)" in lines[-1]


def test_started_run_without_rows_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """complete: false and only the header (killed before its first row): a warning, not an error."""
    (tmp_path / "a").mkdir()
    _setup(tmp_path / "a")
    other = tmp_path / "b"
    other.mkdir()
    started = _setup(other)
    header_only(started)
    _meta(started, complete=False, rows=0)
    r = cli("table", str(tmp_path), capsys=capsys)
    assert r.rc == 0 and "no finished rows yet: skipped" in r.err and "pingpong: latency" in r.out
    v = cli("validate", str(other), capsys=capsys)
    assert v.rc == 1 and "no usable results" in v.err


def test_schema_1_file_with_a_schema_2_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A schema-1 CSV whose JSON claims version 2: one line naming the JSON and the line, exit 1."""
    v1 = FIXTURES / "v1" / "clusterA" / "rma-clusterA-np2.csv"
    shutil.copy(v1, tmp_path / "run.csv")
    shutil.copy(v1.with_suffix(".json"), tmp_path / "run.json")
    _meta(tmp_path / "run.csv", schema_version=2)
    r = cli("table", str(tmp_path), capsys=capsys)
    assert r.rc == 1 and r.out == ""
    assert r.err.splitlines() == [(f"mpimb-report: {tmp_path}/run.json:1: schema_version 2, but run.csv has the "
                                  "columns of schema version 1")]
