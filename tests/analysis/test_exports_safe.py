"""Exports that cannot inject (issue 26): every CSV the package writes neutralises a text cell that
starts with = + - @ tab or CR (OWASP's rule: a leading quote), numbers staying numbers; Markdown
escapes HTML (and '|' in table cells); the HTML pages escape everything they show.  The escaping
lives in one place, mpimb.render (csv_cell / csv_frame / write_csv, md_text / md_cell, esc, tex).

The end-to-end fixtures are the committed pingpong results with free-text fields (label, hosts, MPI
library string, the profiled command line) rewritten here to carry formulas and tags; the method-like
values (method and comm are checked against their vocabularies on load) go through the escaping
functions directly."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from helpers import FIXTURES, cli
from mpimb.render import (
    FORMULA_START,
    Table,
    csv_cell,
    csv_frame,
    esc,
    md_cell,
    md_text,
    tex,
    write_csv,
)
from test_profile_findings import write_profile

HYPERLINK = '=HYPERLINK("http://x","click")'
SUM = "@SUM(1+1)"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
INJECTIONS = [HYPERLINK, SUM, "+cmd|' /C calc'!A0", "-2+3", "\t=1+1", "\r=1+1", SCRIPT, IMG]
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
RAW_TAG = re.compile(r"<[A-Za-z/!?]")  # what a Markdown renderer would take as raw HTML


def formula_cells(text: str) -> list[str]:
    """The cells of a CSV text that a spreadsheet would run as a formula."""
    return [c for row in csv.reader(io.StringIO(text)) for c in row
            if c.startswith(FORMULA_START) and not NUMBER.fullmatch(c)]


# ---------------------------------------------------------------- the escaping functions

@pytest.mark.parametrize("value", INJECTIONS[:6] + ["=method", "@comm", "-irecv-isend"])
def test_csv_cell_quotes_formulas(value: str) -> None:
    assert csv_cell(value) == "'" + value


@pytest.mark.parametrize("value", ["-1.5", "-1", "1e-05", "-3.2E+04", "+3", "0", ".5", "irecv-isend", "n/a", "",
                                   "↓0.95*", "1.2–1.3", "# title"])
def test_csv_cell_keeps_numbers_and_plain_text(value: str) -> None:
    assert csv_cell(value) == value


def test_csv_frame_column_by_column(tmp_path: Path) -> None:
    """Method- and comm-like injections in text columns are quoted; float columns (negative too),
    booleans and empty cells are written as they are; a column name is a cell like the others."""
    df = pd.DataFrame({"method": [HYPERLINK, "irecv-isend", "-2+3", None], "comm": [SUM, "world", "-1.5", "cart"],
                       "ratio@x": [-1.0, 0.5, float("nan"), -2.5e-7], "sig@x": [True, False, True, False],
                       SUM: ["a", "b", "c", "d"]})
    out = csv_frame(df)
    assert list(out["method"][:3]) == ["'" + HYPERLINK, "irecv-isend", "'-2+3"] and pd.isna(out["method"][3])
    assert list(out["comm"]) == ["'" + SUM, "world", "-1.5", "cart"]
    assert out["ratio@x"].dtype == float and out["ratio@x"].iloc[0] == -1.0
    assert list(out.columns) == ["method", "comm", "ratio@x", "sig@x", "'" + SUM]
    path = tmp_path / "x.csv"
    write_csv(df, path)
    text = path.read_text()
    assert formula_cells(text) == []
    assert "-1.0," in text and "-2.5e-07" in text  # numbers stay numbers


def test_markdown_and_html_escaping() -> None:
    for s in (SCRIPT, IMG, "a & b <b>"):
        assert not RAW_TAG.search(md_text(s)) and not RAW_TAG.search(md_cell(s))
        assert not RAW_TAG.search(esc(s))
    assert md_text(SCRIPT) == "&lt;script>alert(1)&lt;/script>" and md_text("a > b & c") == "a > b &amp; c"
    assert md_cell("a|b\nc") == "a\\|b c"
    assert esc('"><script>') == "&quot;&gt;&lt;script&gt;"
    assert tex("\\input{/etc/passwd}") == "\\textbackslash{}input\\{/etc/passwd\\}"


def test_table_every_format_escapes() -> None:
    """A Table whose title, header, cells and notes carry injections: CSV cells are inert, Markdown
    and HTML carry no raw tag, '|' cannot open a Markdown cell, LaTeX forms no command."""
    t = Table(f"title {SCRIPT}", ["config", f"{IMG} [µs]", "x|y"],
              [[HYPERLINK, "-1.5", "a|b"], [SUM, "-", SCRIPT], ["-2+3", "1e-05", "\t=1"]],
              groups=[("", 1), (SUM, 2)], notes=[f"note {IMG}"], keys=1)
    c = t.csv()
    assert formula_cells(c) == []
    rows = list(csv.reader(io.StringIO(c)))
    assert rows[2] == ["'" + HYPERLINK, "-1.5", "a|b"] and rows[3][:2] == ["'" + SUM, ""]  # '-' (no value): empty
    md = t.markdown()
    assert not RAW_TAG.search(md) and "&lt;script>" in md
    assert "| a\\|b |" in md and "x\\|y" in md
    h = t.html()
    assert SCRIPT not in h and IMG not in h and "&lt;script&gt;alert(1)&lt;/script&gt;" in h
    assert "\\input" not in Table("t", ["a"], [["\\input{x}"]]).latex()


# ---------------------------------------------------------------- end to end, through the free-text fields

def _inject(src: Path, dst: Path, label: str) -> None:
    """A copy of a committed pingpong result (CSV + JSON; its latency rows, few plots) with label, hosts
    and MPI library string rewritten."""
    dst.mkdir(parents=True, exist_ok=True)
    with open(src) as f:
        rows = [r for r in csv.DictReader(f) if r["test"] == "latency"]
    for r in rows:
        r["label"] = label
    with open(dst / src.name, "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    meta = json.loads(src.with_suffix(".json").read_text())
    meta["label"] = label
    meta["rows"] = len(rows)
    meta["hosts"] = [SUM, IMG]
    meta["mpi"]["library_version"] = SCRIPT + " " + HYPERLINK
    meta["environment"] = {**meta.get("environment", {}), "NOTE": HYPERLINK + " " + SCRIPT}
    (dst / src.name).with_suffix(".json").write_text(json.dumps(meta))


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("inject")
    _inject(FIXTURES / "clusterA" / "pingpong-clusterA-np4.csv", tmp / "A", HYPERLINK)
    _inject(FIXTURES / "clusterB" / "pingpong-clusterB-np4.csv", tmp / "B", SCRIPT)
    _inject(FIXTURES / "clusterB" / "pingpong-clusterB-np4.csv", tmp / "C", "-2+3")
    prof = write_profile(tmp / "prof")
    for p in prof.glob("profile-*.json"):
        meta = json.loads(p.read_text())
        meta["command_line"] = ["/usr/bin/app", SCRIPT, HYPERLINK, IMG, "x|y"]
        p.write_text(json.dumps(meta))
    shutil.copytree(tmp / "A", tmp / "prof", dirs_exist_ok=True)
    return {"A": tmp / "A", "B": tmp / "B", "C": tmp / "C", "prof": tmp / "prof"}


def test_table_model_profile_exports(sets: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    both = [str(sets["A"]), str(sets["B"])]
    for cmd in (["table", *both], ["model", *both], ["profile", str(sets["prof"])]):
        c = cli(*cmd, "--format", "csv", capsys=capsys)
        assert c.rc == 0, c.err
        assert formula_cells(c.out) == [], cmd
        md = cli(*cmd, "--format", "markdown", capsys=capsys)
        assert md.rc == 0, md.err
        assert not RAW_TAG.search(md.out), (cmd, RAW_TAG.search(md.out))
    # the injection reached the exports, as text: the model's fit names start with the label
    model = cli("model", *both, "--format", "csv", capsys=capsys).out
    assert any(c.startswith("'" + HYPERLINK) for row in csv.reader(io.StringIO(model)) for c in row)
    md = cli("model", *both, "--format", "markdown", capsys=capsys).out
    assert "&lt;script>alert(1)&lt;/script>" in md
    prof = cli("profile", str(sets["prof"]), "--format", "markdown", capsys=capsys).out
    assert "&lt;img src=x onerror=alert(1)>" in prof and "x|y" in prof


def test_compare_exports(sets: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, table = tmp_path / "c.html", tmp_path / "c.csv"
    r = cli("compare", str(sets["A"]), str(sets["B"]), str(sets["C"]), "-o", str(out), "--csv", str(table),
            capsys=capsys)
    assert r.rc == 0, r.err
    assert formula_cells(table.read_text()) == []
    md = out.with_suffix(".md").read_text()
    assert not RAW_TAG.search(md), RAW_TAG.search(md)
    assert "&lt;script>alert(1)&lt;/script>" in md  # the machine named B, shown as text
    page = out.read_text()
    for s in (SCRIPT, IMG, "<script>alert"):
        assert s not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_report_and_table_pages(sets: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    r = cli("report", str(sets["A"]), str(sets["B"]), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    h = cli("table", str(sets["A"]), str(sets["B"]), "--format", "html", capsys=capsys)
    assert h.rc == 0, h.err
    prof = tmp_path / "p.html"
    p = cli("profile", str(sets["prof"]), "-o", str(prof), capsys=capsys)
    assert p.rc == 0, p.err
    for page in (out.read_text(), h.out, prof.read_text()):
        assert SCRIPT not in page and IMG not in page and "<script>alert" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
