"""The small things a newcomer meets first (issue 26), each with its test: compare's --method outside
its vocabulary, output paths that cannot be written or that overwrite each other, the profile's title
with the whole command line, the achieved / achievable text table whose wrapped rows can be matched,
the HTML pages' plots at full size and wide tables that scroll, and the README's word on `.venv`."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers import CHROMIUM_FLAGS, FIXTURES, ROOT, chromium, cli
from mpimb import schema
from mpimb.load import short_library
from mpimb.render import Table
from test_profile_findings import bench, write_profile

EQUAL, OVERSUB = str(FIXTURES / "equal"), str(FIXTURES / "oversub")


# ---------------------------------------------------------------- compare --method

def test_compare_method_outside_the_vocabulary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A usage error naming the known methods, before anything is read or written."""
    out = tmp_path / "c.html"
    r = cli("compare", EQUAL, OVERSUB, "--method", "foo", "-o", str(out), capsys=capsys)
    assert r.rc == 2 and r.out == ""
    assert len(r.err.splitlines()) == 1 and "--method foo" in r.err
    assert all(m in r.err for m in schema.method_families("halocompare"))
    assert list(tmp_path.iterdir()) == []


def test_compare_method_nobody_measured_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A known method without rows: the orderings table cannot be drawn, and a warning says so."""
    out = tmp_path / "c.html"  # (a measured method: the table is printed, test_report_fixtures.py)
    r = cli("compare", EQUAL, OVERSUB, "--method", "rma-fence-put", "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    assert "Cross-system" not in r.out
    assert "warning: no halocompare halo result for --method rma-fence-put, 4 neighbours, non-periodic: no " \
           "machines × rank orderings table" in r.err
    assert "no machines × rank orderings table" in out.read_text()  # the page's warnings too


# ---------------------------------------------------------------- output paths

@pytest.mark.parametrize("args, says", [
    (["compare", EQUAL, OVERSUB, "-o", ""], "-o: an empty path"),
    (["compare", EQUAL, OVERSUB, "-o", "{tmp}"], "is a directory"),
    (["compare", EQUAL, OVERSUB, "-o", "{tmp}/c.md"], "name the same file"),
    (["compare", EQUAL, OVERSUB, "-o", "{tmp}/c.html", "--csv", "{tmp}/c.html"], "name the same file"),
    (["compare", EQUAL, OVERSUB, "-o", "{tmp}/c.html", "--csv", ""], "--csv: an empty path"),
    (["report", EQUAL, "-o", "{tmp}/"], "is a directory"),
    (["report", EQUAL, "-o", "{tmp}/file/r.html"], "is not a directory"),
    (["plot", EQUAL, "-o", "{tmp}/file"], "not a directory"),
    (["profile", EQUAL, "-o", ""], "-o: an empty path"),
    (["report", "{tmp}/file", "-o", "{tmp}/file"], "the input {tmp}/file and -o name the same file"),
])
def test_output_paths_are_usage_errors(args: list[str], says: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """One line, exit 2, nothing written nor overwritten (a traceback or '[Errno 21]' with exit 1 before)."""
    (tmp_path / "file").write_text("x")
    r = cli(*[a.replace("{tmp}", str(tmp_path)) for a in args], capsys=capsys)
    assert r.rc == 2, (r.rc, r.err)
    assert len(r.err.splitlines()) == 1 and says.replace("{tmp}", str(tmp_path)) in r.err and "Errno" not in r.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"] and (tmp_path / "file").read_text() == "x"


# ---------------------------------------------------------------- the profile's title

def _command(prof: Path, argv: list[str]) -> None:
    for p in prof.glob("profile-*.json"):
        meta = json.loads(p.read_text())
        meta["command_line"] = argv
        p.write_text(json.dumps(meta))


def test_profile_title_has_the_whole_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prof = write_profile(tmp_path / "prof")
    argv = ["/opt/app/bin/solver", "-n", "512", "-steps", "100", "--mesh", "big mesh.h5", "-o", "out", "--last"]
    _command(prof, argv)
    r = cli("profile", str(prof), capsys=capsys)
    assert r.rc == 0, r.err
    assert r.out.startswith("profile of `solver -n 512 -steps 100 --mesh 'big mesh.h5' -o out --last` — clusterA")
    # a command of 400 characters: its head and its tail, lines within the text width
    argv = ["/opt/app/bin/solver", *[f"--option{i}=value{i}" for i in range(22)], "input.h5"]
    _command(prof, argv)
    r = cli("profile", str(prof), capsys=capsys)
    head = r.out.split("\n\n")[0].split("Findings")[0]
    assert "profile of `solver --option0=value0" in head and " … " in head and "input.h5` — clusterA" in head
    assert "--option12=value12" not in head
    assert all(len(line) <= 120 for line in head.splitlines())
    md = cli("profile", str(prof), "--format", "markdown", capsys=capsys).out
    assert md.startswith("**profile of solver --option0=value0") and "input.h5 — clusterA" in md.splitlines()[0]


# ---------------------------------------------------------------- text tables whose rows can be matched

def blocks(text: str, title: str) -> list[list[str]]:
    """The blocks of a text table (rows under each dashed line), from its title to its notes."""
    part = text[text.index(title):]
    out: list[list[str]] = []
    lines = part.splitlines()[1:]
    for i, line in enumerate(lines):
        if set(line) == {"-"}:
            rows = []
            for row in lines[i + 1:]:
                if not row.strip() or set(row) == {"-"} or not row.startswith(("MPI_", "all ")):
                    break
                rows.append(row)
            out.append(rows)
        elif out and not line.strip() and i + 1 < len(lines) and not lines[i + 1].startswith("call"):
            break
    return out


def test_achieved_table_blocks_can_be_matched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Wider than 120 columns, the table wraps; every block opens with the call and the size bin, so the
    rows of each block are the same rows in the same order, and each names one (call, size bin)."""
    prof = write_profile(tmp_path / "prof")
    r = cli("profile", str(prof), str(bench(tmp_path)), capsys=capsys)
    assert r.rc == 0, r.err
    bs = blocks(r.out, "Achieved / achievable —")
    assert len(bs) >= 2 and all(len(b) == len(bs[0]) for b in bs)
    keys = [[re.split(r"\s{2,}", row)[0] + "|" + row[20:30].strip() for row in b] for b in bs]
    assert all(k == keys[0] for k in keys)
    assert len(set(keys[0])) == len(keys[0]), keys[0]  # MPI_Send twice: told apart by the size bin
    assert any(row.endswith("pingpong latency [inter]") for row in bs[-1])
    assert all(len(line) <= 120 for b in bs for line in b)


def test_table_keys_open_every_block() -> None:
    t = Table("t", ["name", "bin", *[f"column {i:02d}" for i in range(12)]],
              [["a", "1", *["x" * 8] * 12], ["a", "2", *["y" * 8] * 12]], keys=2)
    text = t.text(width=60)
    rows = [ln for ln in text.splitlines() if ln.startswith("a ")]
    assert len(rows) > 2 and len(rows) % 2 == 0
    assert [r.split()[:2] for r in rows] == [["a", "1"], ["a", "2"]] * (len(rows) // 2)
    assert all(len(ln) <= 60 for ln in text.splitlines())


# ---------------------------------------------------------------- the HTML pages in a browser

LAYOUT = """<script>window.addEventListener('load', function () {
  var figs = [], tables = [];
  document.querySelectorAll('figure img').forEach(function (i) {
    var r = i.getBoundingClientRect();
    figs.push([i.naturalWidth, r.width, Math.round(r.top), i.closest('section').clientWidth]);
  });
  document.querySelectorAll('table.data').forEach(function (t) {
    var box = t.parentElement;
    box.scrollLeft = box.scrollWidth;
    tables.push([getComputedStyle(box).overflowX, t.getBoundingClientRect().width, box.clientWidth,
                 t.getBoundingClientRect().right - box.getBoundingClientRect().right]);
  });
  document.body.setAttribute('data-layout', JSON.stringify({figs: figs, tables: tables}));
});</script>"""


def layout(page: Path, tmp: Path) -> dict[str, list[list[float | str]]]:
    """Every figure's (natural width, shown width, top, section width) and every data table's
    (overflow-x of its box, width, box width, right edge beyond the box once scrolled to the end), as
    headless Chromium lays the page out in a 1300-pixel window."""
    probe = tmp / f"{page.stem}-probe.html"
    probe.write_text(page.read_text().replace("</body>", LAYOUT + "</body>"))
    dom = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chr'}", "--window-size=1300,2400",
                          "--virtual-time-budget=10000", "--dump-dom", probe.resolve().as_uri()],
                         check=False, capture_output=True, text=True, timeout=240)
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = re.search(r'data-layout="([^"]*)"', dom.stdout)
    assert m, "the probe did not run"
    got: dict[str, list[list[float | str]]] = json.loads(html.unescape(m.group(1)))
    return got


def test_html_plots_full_size_and_wide_tables_scroll(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report: plots one under the other, none shrunk below its own size (a heat map's numbers at
    the size they were drawn); the tables page: a table wider than the page scrolls sideways in its
    box and its last column comes into view."""
    src = FIXTURES / "clusterA" / "pingpong-clusterA-np4.csv"
    keep = [ln for i, ln in enumerate(src.read_text().splitlines(keepends=True))
            if i == 0 or ",latency," in ln or ",allpairs-latency," in ln]
    d = tmp_path / "pp"
    d.mkdir()
    (d / src.name).write_text("".join(keep))
    meta = json.loads(src.with_suffix(".json").read_text())
    meta["rows"] = len(keep) - 1
    (d / src.with_suffix(".json").name).write_text(json.dumps(meta))
    report = tmp_path / "r.html"
    assert cli("report", str(d), "-o", str(report), capsys=capsys).rc == 0
    figs = layout(report, tmp_path)["figs"]
    assert len(figs) >= 3  # the latency plot and the rank × rank heat maps
    for natural, shown, _, width in figs:
        assert float(shown) >= min(float(natural), float(width) - 60) - 1, (natural, shown, width)
    tops = [f[2] for f in figs]
    assert len(set(tops)) == len(tops), "two plots side by side"

    page = tmp_path / "t.html"
    t = cli("table", str(src), "--format", "html", capsys=capsys)
    page.write_text(t.out)
    tables = layout(page, tmp_path)["tables"]
    assert tables and all(ov == "auto" for ov, *_ in tables)
    assert any(float(w) > float(box) for _, w, box, _ in tables), "no table wider than the page: nothing tested"
    assert all(float(beyond) <= 1 for *_, beyond in tables)


# ---------------------------------------------------------------- the README

def test_readme_says_which_make_gives_the_venv() -> None:
    """The README's sentence about `.venv/` names `make venv`, and plain `make` does not build it (a
    dry run of each with the package's pyproject taken as new)."""
    paras = [" ".join(p.split()) for p in (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")]
    para = next(p for p in paras if "into `.venv/`" in p)
    assert re.findall(r"`(make[^`]*)` installs `mpimb-report` into `.venv/`", para) == ["make venv"], para
    assert "plain `make` builds only the programs" in para

    def dry(*target: str) -> str:
        p = subprocess.run(["make", "-n", "-W", "analysis/pyproject.toml", *target], cwd=ROOT, check=False,
                           capture_output=True, text=True, timeout=120)
        return p.stdout

    assert "-m venv .venv" in dry("venv")
    assert "-m venv" not in dry()


@pytest.mark.parametrize(("version", "short"), [
    ("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022", "Open MPI 4.1.4"),
    ("MPICH Version:      4.0.2\nMPICH Release date: Thu Apr  7 12:34:45 CDT 2022", "MPICH 4.0.2"),
    ("SMPI Version 3.32. Copyright The SimGrid Team 2007-2022", "SimGrid SMPI 3.32"),
    ("", "unknown MPI"),
])
def test_short_library_names_each_library(version: str, short: str) -> None:
    """The library a finding, a page and compare's machine names (not the first 40 characters of its banner)."""
    assert short_library({"mpi": {"library_version": version}}) == short
