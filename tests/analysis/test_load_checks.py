"""The loader's checks of issue 26: values outside their program's vocabulary, a header that lies (columns
swapped, ranges, rate relations), and many files checked at once with one summary line for repeated runs.
Fixtures are made here from the small real-looking sets in fixtures/ (no MPI launch)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import FIXTURES, ROOT, cli
from mpimb import load, schema
from mpimb.load import frame

PINGPONG = FIXTURES / "clusterA" / "pingpong-clusterA-np4.csv"
COLL = FIXTURES / "clusterA" / "collectives-clusterA-np16.csv"
RMA = FIXTURES / "clusterA" / "rma-clusterA-np2.csv"


def _copy(src: Path, d: Path, name: str = "run") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, d / f"{name}.csv")
    shutil.copy(src.with_suffix(".json"), d / f"{name}.json")
    return d / f"{name}.csv"


def _set(csv: Path, line: int, column: str, value: str) -> None:
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    df.loc[line - 2, column] = value
    df.to_csv(csv, index=False)


def _problems(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if not ln.startswith("ok:")]


# ------------------------------------------------------------------ 1. vocabularies


@pytest.mark.parametrize(("src", "column", "value"), [
    (PINGPONG, "method", '=HYPERLINK("http://x","click")'),
    (PINGPONG, "comm", "@SUM(1+1)"),
    (RMA, "comm", "world"),  # a real word, but not an rma window flavour
    (COLL, "method", "irecv-isend"),  # halocompare's, not a collectives method
    (PINGPONG, "program", "pongping"),
])
def test_unknown_vocabulary_is_one_line_naming_file_and_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], src: Path, column: str, value: str) -> None:
    csv = _copy(src, tmp_path / "a")
    _set(csv, 5, column, value)
    v = cli("validate", str(csv), capsys=capsys)
    assert v.rc == 1
    lines = _problems(v.out)
    assert lines[0].startswith(f"{csv}:5: {column} ") and value in lines[0]
    # one line; a program that differs from the file's other rows also says so
    assert len(lines) == 1 or (column == "program" and len(lines) == 2 and "differs from the first row" in lines[1])
    for cmd in (["table"], ["report", "-o", str(tmp_path / "r.html")]):
        r = cli(*cmd, str(csv), capsys=capsys)
        assert r.rc == 1 and f"{csv}:5:" in r.err and "Traceback" not in r.err
    r = cli("compare", str(tmp_path / "a"), str(FIXTURES / "clusterB"), "-o", str(tmp_path / "c.html"), capsys=capsys)
    assert r.rc == 1 and f"{csv}:5:" in r.err


def test_every_value_in_a_file_is_one_line_with_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = _copy(PINGPONG, tmp_path)
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    plain = df["method"] == ""  # (the allpairs rows' methods tell their pairs apart: left alone)
    df.loc[plain, "method"] = "@cmd"
    df.to_csv(csv, index=False)
    v = cli("validate", str(csv), capsys=capsys)
    (line,) = _problems(v.out)
    first = int(plain.to_numpy().argmax()) + 2
    assert v.rc == 1 and line.startswith(f"{csv}:{first}: method '@cmd'")
    assert f"({int(plain.sum())} line(s) like that)" in line and plain.sum() > 5


def _c_names(path: str, pattern: str) -> set[str]:
    src = (ROOT / "src" / path).read_text(encoding="utf-8")
    return {n for block in re.findall(pattern, src, re.DOTALL) for n in re.findall(r'"([^"]+)"', block)}


def test_the_vocabularies_cover_what_the_programs_write() -> None:
    """The C name tables (the values the programs write) are each in their program's vocabulary in the schema,
    which is the only list the loader knows."""
    method, comm = schema.program_vocabulary("method"), schema.program_vocabulary("comm")
    written = {
        ("comm", "halocompare"): _c_names("halocompare/grid.c", r"halo_comm_names\[NCOMM\] = \{(.*?)\};"),
        ("comm", "collectives"): _c_names("collectives/comms.c", r"names\[NCOMMS\] = \{(.*?)\};"),
        ("method", "rma"): _c_names("rma/sync.c", r"rma_syncs\[\] = \{(.*?)\{0\}") | {"sendrecv"},
        ("comm", "rma"): _c_names("rma/windows.c", r"rma_windows\[\] = \{(.*?)\{0\}") | {"p2p"},
        ("method", "threads"): set().union(*(_c_names(f"threads/{f}", r"names\[\w*\] = \{(.*?)\};")
                                             for f in ("coll.c", "farm.c", "overlap.c", "p2p.c", "place.c"))),
    }
    ops = "".join((ROOT / "src" / "collectives" / f).read_text() for f in ("library.c", "algorithms.c", "twolevel.c"))
    written["method", "collectives"] = set(re.findall(r'^\s*\{"\w+", "([\w-]+)",', ops, re.MULTILINE))
    assert all(len(v) >= 3 for v in written.values()), written
    for (col, prog), names in written.items():
        vocab = (method if col == "method" else comm)[prog][0]
        assert names - set(vocab) == set(), (col, prog)
    assert set(schema.thread_levels()) <= set(method["threads"][0])  # overhead tests: the level requested
    assert set(schema.method_families("halocompare")) == set(method["halocompare"][0])
    assert set(method) == set(comm) == set(schema.programs())


# ------------------------------------------------------------------ 2. a header that lies


def _collectives_with_agg(d: Path) -> Path:
    """The collectives fixture (bcast, reduce, gather ...: no rates) with its rates as the program writes
    them: mbps = bytes / time_median_s, agg_mbps = (P - 1) x mbps (docs/collectives.md, "Aggregate
    bandwidth"; the factor is the operation's, a whole number)."""
    csv = _copy(COLL, d)
    df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    mbps = pd.to_numeric(df["bytes"], errors="coerce") / pd.to_numeric(df["time_median_s"], errors="coerce") / 1e6
    mbps = mbps.where(mbps > 0)
    df["mbps"] = mbps.map(lambda x: "" if pd.isna(x) else f"{x:.9g}")
    df["agg_mbps"] = ((pd.to_numeric(df["nprocs"]) - 1) * mbps).map(lambda x: "" if pd.isna(x) else f"{x:.9g}")
    df.to_csv(csv, index=False)
    return csv


def _swap_header(csv: Path, a: str, b: str) -> None:
    lines = csv.read_text().splitlines(keepends=True)
    head = lines[0].rstrip("\n").split(",")
    i, j = head.index(a), head.index(b)
    head[i], head[j] = head[j], head[i]
    csv.write_text(",".join(head) + "\n" + "".join(lines[1:]))


@pytest.mark.parametrize("src", ["collectives", "rma"])
def test_swapped_mbps_and_agg_mbps_is_one_line_naming_the_column(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], src: str) -> None:
    csv = _collectives_with_agg(tmp_path) if src == "collectives" else _copy(RMA, tmp_path)
    assert cli("validate", str(csv), capsys=capsys).rc == 0  # as written: the relations hold
    _swap_header(csv, "mbps", "agg_mbps")
    v = cli("validate", str(csv), capsys=capsys)
    (line,) = _problems(v.out)
    assert v.rc == 1 and line.startswith(f"{csv}:") and "column 'agg_mbps'" in line and "swapped" in line
    t = cli("table", str(csv), capsys=capsys)
    assert t.rc == 1 and "agg_mbps" in t.err and t.out == ""


@pytest.mark.parametrize(("column", "value", "says"), [
    ("mbps", "0", "column 'mbps' must be > 0"),
    ("time_stddev_s", "-1e-6", "column 'time_stddev_s' must be >= 0"),
    ("time_mean_s", "1", "time_mean_s outside [time_min_s, time_max_s]"),
    ("time_ci_lo_s", "0", "time_ci_lo_s outside [time_min_s, time_max_s]"),
    ("mbps", "123.4", "column 'mbps' does not match bytes and time_median_s"),
])
def test_ranges_and_relations(tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, value: str,
                              says: str) -> None:
    csv = _copy(PINGPONG, tmp_path)
    _set(csv, 3, column, value)
    v = cli("validate", str(csv), capsys=capsys)
    assert v.rc == 1 and f"{csv}:3: {says}" in v.out, v.out


def test_rate_relations_hold_on_every_real_set(capsys: pytest.CaptureFixture[str]) -> None:
    """Every result set of the repository (fixtures of every program, simulated and published sets) passes."""
    v = cli("validate", str(FIXTURES), str(ROOT / "reference" / "gropp-lusk"), str(ROOT / "bench" / "simulated"),
            str(ROOT / "bench" / "report" / "sample"), capsys=capsys)
    assert v.rc == 0 and v.out.startswith("ok:"), v.out[:2000]


# ------------------------------------------------------------------ 3. many files


def _sweep(d: Path, n: int, label: str = "clusterA") -> list[Path]:
    """n runs of the pingpong fixture, each its own run (run_id, start), one machine."""
    meta = json.loads(PINGPONG.with_suffix(".json").read_text())
    rows = pd.read_csv(PINGPONG, dtype=str, keep_default_na=False)
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        rid = f"{label}-2026112{i % 10}T0000{i // 10 % 60:02d}Z-{i:04x}"
        rows.assign(run_id=rid, label=label).to_csv(d / f"run{i:03d}.csv", index=False)
        (d / f"run{i:03d}.json").write_text(json.dumps({**meta, "run_id": rid, "label": label,
                                                        "start_utc": f"2026-11-2{i % 10}T00:00:{i // 10 % 60:02d}Z"}))
        out.append(d / f"run{i:03d}.csv")
    return out


def test_launches_are_taken_together_and_builds_named_in_one_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """12 runs of one configuration are 12 launches of it: one row each in the table, no warning; where their
    JSONs name different commits, one warning line for the machine, however many files."""
    files = _sweep(tmp_path / "s", 12)
    t = cli("table", str(tmp_path / "s"), capsys=capsys)
    assert t.rc == 0 and t.err == ""
    assert t.out.count("pingpong: latency") == 1  # one table of 12 launches, not 12 tables
    for i, f in enumerate(files):
        j = f.with_suffix(".json")
        j.write_text(json.dumps({**json.loads(j.read_text()), "git_commit": f"{i:012x}"}))
    t = cli("table", str(tmp_path / "s"), capsys=capsys)
    warn = [ln for ln in t.err.splitlines() if "different builds" in ln]
    assert t.rc == 0 and len(warn) == 1
    assert "12 different builds" in warn[0] and files[0].name in warn[0] and "..." in warn[0]


def test_one_bad_file_among_many_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The files are read as one text; a file that spoils it is found and named with its own line."""
    files = _sweep(tmp_path / "s", 40)
    _set(files[17], 4, "bytes", "x")
    _set(files[30], 6, "comm", "=1+1")
    v = cli("validate", str(tmp_path / "s"), capsys=capsys)
    probs = _problems(v.out)
    assert v.rc == 1 and len(probs) == 2, probs
    assert probs[0].startswith(f"{files[17]}:4: column 'bytes': expected an integer")
    assert probs[1].startswith(f"{files[30]}:6: comm '=1+1' is not a pingpong comm")


def test_text_tables_stop_after_the_block_limit(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Hundreds of machines do not print tens of thousands of lines: text stops after TABLE_BLOCKS runs
    and says how many it left out (stdout and stderr); csv, for programs, keeps every run."""
    from mpimb import cli as cli_module

    every = cli("table", str(FIXTURES / "clusterA"), "--format", "csv", capsys=capsys)
    full = cli("table", str(FIXTURES / "clusterA"), capsys=capsys)
    monkeypatch.setattr(cli_module, "TABLE_BLOCKS", 2)
    t = cli("table", str(FIXTURES / "clusterA"), capsys=capsys)
    m = re.search(r"(\d+) more of the (\d+) runs \(machine, program, processes\) are not shown", t.out)
    assert t.rc == 0 and m and int(m.group(2)) - int(m.group(1)) == 2, t.out[-500:]
    assert m.group(0) in t.err
    assert len(t.out) < len(full.out) and "not shown" not in full.out + full.err
    capped = cli("table", str(FIXTURES / "clusterA"), "--format", "csv", capsys=capsys)
    assert capped.out == every.out and "not shown" not in capped.out + capped.err


def test_meta_checked_once_per_value_still_tells_true_from_1(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """meta.schema.json is checked once per distinct field value across files; 1 (an integer, equal to
    true in Python and hashing alike) where a boolean belongs is still a problem of its own file."""
    files = _sweep(tmp_path / "s", 3)
    jp = files[2].with_suffix(".json")
    jp.write_text(json.dumps({**json.loads(jp.read_text()), "complete": 1}))
    v = cli("validate", str(tmp_path / "s"), capsys=capsys)
    probs = _problems(v.out)
    assert v.rc == 1 and len(probs) == 1, probs
    assert probs[0].startswith(f"{jp}:") and "'complete'" in probs[0] and "boolean" in probs[0]


@pytest.mark.parametrize(("column", "value"), [("nprocs", "8"), ("label", "clusterB")])
def test_a_row_of_another_run_in_a_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str,
                                                 value: str) -> None:
    """One run per file: a row whose layout or label differs from the file's first row is named, also among
    many files whose rows are all alike (those are passed over in one step)."""
    files = _sweep(tmp_path / "s", 5)
    _set(files[3], 5, column, value)
    v = cli("validate", str(tmp_path / "s"), capsys=capsys)
    lines = [ln for ln in _problems(v.out) if "differs from the first row's" in ln]
    assert v.rc == 1 and len(lines) == 1, v.out
    assert lines[0].startswith(f"{files[3]}:5: {column} ") and value in lines[0]


# ------------------------------------------------------------------ reading many files as one text


def test_files_of_one_header_are_the_joined_text_without_a_copy(tmp_path: Path) -> None:
    """load._Texts: the files in one array, each header line but the first's left out, so the batch parser
    takes them as they lie; files that do not follow each other are joined by a copy, with the header."""
    files = _sweep(tmp_path / "s", 3)
    texts = load._Texts(files)
    whole = texts.joined([0, 1, 2])
    assert np.shares_memory(whole, texts.buf)
    raw = [f.read_bytes() for f in files]
    header, bodies = raw[0][:raw[0].index(b"\n") + 1], [r[r.index(b"\n") + 1:] for r in raw]
    assert whole.tobytes() == header + b"".join(bodies)
    some = texts.joined([0, 2])
    assert not np.shares_memory(some, texts.buf) and some.tobytes() == header + bodies[0] + bodies[2]
    assert [texts.lines(f) for f in range(3)] == [r.count(b"\n") for r in raw]


def test_a_file_in_another_column_order_among_many_keeps_every_row(tmp_path: Path) -> None:
    """Two headers in one set: each header's files are parsed as one text (the second group by a copy,
    as its files do not follow each other in the array), and every row is there, in file order."""
    files = _sweep(tmp_path / "s", 5)
    before = frame(load.load([str(tmp_path / "s")])[0])
    rows = pd.read_csv(files[2], dtype=str, keep_default_na=False)
    rows[list(reversed(rows.columns))].to_csv(files[2], index=False)
    runs, probs, _ = load.load([str(tmp_path / "s")])
    assert not probs and [r.csv_path for r in runs] == files
    pd.testing.assert_frame_equal(frame(runs).drop(columns="file"), before.drop(columns="file"))


def test_a_file_that_grew_after_it_was_listed_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run still writing: the array holds the file as long as it was when listed; cut inside a line,
    the file goes the careful way, which reads it whole."""
    files = _sweep(tmp_path / "s", 2)
    size = files[1].stat().st_size
    real_stat = Path.stat
    monkeypatch.setattr(Path, "stat", lambda p, **k: os.stat_result(
        (*real_stat(p, **k)[:6], size - 5, *real_stat(p, **k)[7:])) if p == files[1] else real_stat(p, **k))
    texts = load._Texts(files)
    monkeypatch.undo()
    assert texts.version(0) == schema.SCHEMA_VERSION and texts.version(1) is None  # its last line is cut
    runs, probs, _ = load.load([str(tmp_path / "s")])
    assert not probs and [r.nrows for r in runs] == [len(pd.read_csv(PINGPONG))] * 2
