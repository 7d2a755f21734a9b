"""One judgement (issue 24): for one small real run of each program, what the program prints on stdout
and what mpimb-report makes of the same CSV agree —

(a) the findings: the block that ends the program's stdout (the program runs `mpimb-report findings`
    after MPI_Finalize) is `mpimb-report findings CSV` verbatim, and the same sentences, under the same
    rule, are the findings of `mpimb-report table CSV` and of `mpimb-report report`;
(b) the tables: every number the program's stdout tables print is, cell for cell, the number
    `mpimb-report table` prints for the same measurement (tables that exist on one side only are
    listed in docs/report.md, "stdout and mpimb-report");
(c) the findings rules exist in analysis/ alone: no C source computes or words a finding.

The runs: Open MPI, 2 ranks, --quick with 6 repetitions (enough for verdicts), a few tests each."""

from __future__ import annotations

import html
import re
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPORT, ROOT, Run, report, run_mpi

SIX = ("--quick", "--reps", "6", "--max-reps", "6")
RUNS: dict[str, tuple[str, ...]] = {
    "halocompare": (*SIX, "--comms", "world,dup", "--methods", "irecv-isend,sendrecv,rma-fence-put,neighbor-alltoall"),
    "pingpong": (*SIX, "--sizes", "0:4K"),
    "collectives": (*SIX, "--tests", "bcast,allreduce,bcast-binomial,bcast-chain,bcast-2level", "--sizes", "0:4K"),
    "rma": (*SIX, "--ops", "put", "--windows", "create,allocate-shared"),
    "threads": (*SIX, "--tests", "overhead-latency,latency-mt,msgrate-mt,short-long,overlap,master-worker",
                "--blocks", "2", "--block-size", "4K", "--work", "spin", "--work-us", "20"),
}
NONE = {"", "-"}  # no figure: '-' in the C tables, an empty cell in mpimb-report's


# ------------------------------------------------------------------ plain-text tables
@dataclass
class TextTable:
    """A whitespace-aligned table as printed (by the C programs or mpimb-report): its title, its columns
    (group label, header; the row-label column left out) and its rows (label, cells); the blocks a wide
    table wraps into are joined back."""

    title: str
    cols: list[tuple[str, str]] = field(default_factory=list)
    rows: list[tuple[str, list[str]]] = field(default_factory=list)

    def row(self, label: str) -> list[str] | None:
        return next((c for lab, c in self.rows if lab == label), None)

    def col(self, group: str, header: str) -> int:
        hits = [i for i, c in enumerate(self.cols) if c == (group, header)]
        assert len(hits) == 1, f"{self.title!r}: column {(group, header)!r} in {self.cols}"
        return hits[0]

    def at(self, label: str, group: str, header: str) -> str | None:
        """The cell, or None where this table has no such row or column."""
        r = self.row(label)
        if r is None or (group, header) not in self.cols:
            return None
        return r[self.col(group, header)]


CELL = re.compile(r"\S+(?: \S+)*")  # a cell: words one space apart; cells are two or more spaces apart


def spans(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in CELL.finditer(line)]


def parse_tables(text: str) -> list[TextTable]:
    """Every table in text.  A table is found by the dashes under its header; above the header may be a
    line of group labels (indented past the row labels), above that the title (a title mpimb-report
    wraps goes on with two spaces); no title means the block continues the table before.  Body rows
    follow the dashes up to the first line that is not one: a row's first cell is its label (left
    aligned, before the first column) and every other cell ends where a column's header ends (numbers
    and headers are right-aligned), which notes under a table never do."""
    lines = text.splitlines()
    out: list[TextTable] = []
    for k in range(1, len(lines)):
        if not lines[k] or set(lines[k]) != {"-"}:
            continue
        head = spans(lines[k - 1])
        top = k - 1
        group = None
        if k >= 2 and lines[k - 2].startswith("   "):
            group, top = spans(lines[k - 2]), k - 2
        title: list[str] = []
        j = top - 1
        while j >= 0 and lines[j].strip() and not set(lines[j]) <= {"-"}:
            title.insert(0, lines[j].strip())
            if not lines[j].startswith("  "):
                break
            j -= 1
        ends = [e for _, e, _ in head[1:]]
        first_end = head[1][0] - 2 if len(head) > 1 else len(lines[k])
        body: list[tuple[str, list[str]]] = []
        w0 = head[0][1]
        for s in lines[k + 1:]:
            cells = spans(s)
            if not s.strip() or cells[0][0] != 0 or cells[0][1] > first_end or \
                    any(e not in ends for _, e, _ in cells[1:]):
                break
            w0 = max(w0, cells[0][1])
            row = [""] * len(ends)
            for _, e, v in cells[1:]:
                row[ends.index(e)] = v
            body.append((cells[0][2], row))
        # each column's left edge: where its group label starts
        left = [w0 + 2] + [e + 2 for e in ends[:-1]]
        groups = [""] * len(ends)
        for i, lo in enumerate(left):
            owner = [v for st, _, v in group or [] if st <= lo]
            groups[i] = owner[-1].removesuffix(" (cont.)") if owner else ""
        cols = list(zip(groups, [v for _, _, v in head[1:]]))
        if title:
            out.append(TextTable(" ".join(title), cols, body))
            continue
        assert out, f"a table block without a title and no table before it: {lines[k - 1]!r}"
        t = out[-1]
        assert [lab for lab, _ in t.rows] == [lab for lab, _ in body], f"{t.title!r}: continued rows differ"
        t.cols += cols
        t.rows = [(lab, a + b) for (lab, a), (_, b) in zip(t.rows, body)]
    return out


def test_parse_tables_joins_blocks_and_keeps_empty_cells() -> None:
    text = textwrap.dedent("""\
        A title
               g1                  g2
        rows     a  b (us)  ratio   c  ratio
        ------------------------------------
        one      1           0.50  12   1.00
        two-x   10     2.5   0.25          -
        a note under the table, not a row

        A wrapped
          title
        bytes   x
        ---------
        8     1.5
        notes: x=1

        bytes  y
        --------
        8      2
        """)
    a, b = parse_tables(text)
    assert a.title == "A title" and b.title == "A wrapped title"
    assert a.cols == [("g1", "a"), ("g1", "b (us)"), ("g1", "ratio"), ("g2", "c"), ("g2", "ratio")]
    assert a.rows == [("one", ["1", "", "0.50", "12", "1.00"]), ("two-x", ["10", "2.5", "0.25", "", "-"])]
    assert b.cols == [("", "x"), ("", "y")] and b.rows == [("8", ["1.5", "2"])]
    assert a.at("two-x", "g1", "b (us)") == "2.5" and a.at("nope", "g1", "a") is None


# ------------------------------------------------------------------ findings, as each output shows them
def stdout_findings(out: str) -> tuple[str, list[str]]:
    """The block that ends a program's stdout: its header line and 'machine: sentence' per finding."""
    at = out.rindex("\nFindings")
    lines = out[at + 1:].rstrip("\n").splitlines()
    assert all(x.startswith("  * ") for x in lines[1:]), lines
    return lines[0], [x[4:] for x in lines[1:]]


def table_findings(out: str) -> tuple[list[str], list[str]]:
    """The findings block of `mpimb-report table` (per machine, each sentence wrapped): its header lines
    and 'machine: sentence' per finding."""
    heads: list[str] = []
    found: list[str] = []
    last = heads
    for line in out.split("\n\n")[0].splitlines():
        if line.startswith("Findings — "):
            heads.append(line)
            last = heads
        elif line.startswith("- "):
            mach = heads[-1].removeprefix("Findings — ").split(" (", 1)[0]
            found.append(f"{mach}: {line[2:]}")
            last = found
        else:  # a wrapped line goes on with two spaces
            assert line.startswith("  ") and last, line
            last[-1] += " " + line.strip()
    return heads, found


def report_findings(page: str) -> tuple[str, list[str]]:
    """The findings section of the HTML report: its note and 'machine: sentence' per finding."""
    sec = re.search(r'<section id="findings">(.*?)</section>', page, re.DOTALL)
    assert sec, "the report has no findings section"
    note = html.unescape(re.sub(r"<[^>]+>", "", re.search(r'<p class="note">(.*?)</p>', sec[1], re.DOTALL)[1]))
    found = []
    for mach, items in re.findall(r"<h3>(.*?)</h3><ul>(.*?)</ul>", sec[1], re.DOTALL):
        found += [f"{html.unescape(mach)}: {html.unescape(li)}" for li in re.findall(r"<li>(.*?)</li>", items, re.DOTALL)]
    return note, found


# ------------------------------------------------------------------ the runs and mpimb-report on them
@dataclass
class Outputs:
    run: Run
    findings: str  # mpimb-report findings CSV
    table: str  # mpimb-report table CSV

    def c_tables(self) -> list[TextTable]:
        return parse_tables(self.run.stdout[:self.run.stdout.rindex("\nFindings")])

    def py_tables(self) -> list[TextTable]:
        return parse_tables(self.table)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """One run per program, its stdout ending with the analysis package's findings."""
    if not shutil.which("mpiexec.openmpi"):
        pytest.skip("mpiexec.openmpi not installed")
    if not REPORT.exists():
        pytest.skip(f"{REPORT} missing: make venv")
    d = tmp_path_factory.mktemp("one-judgement")
    out = {}
    for prog, args in RUNS.items():
        r = run_mpi("openmpi", 2, prog, *args, out=d / f"{prog}.csv", timeout=240, env={"MPIMB_REPORT": str(REPORT)})
        assert r.returncode == 0, f"{prog}: {r.stderr}"
        out[prog] = r
    return out


@pytest.fixture(scope="module")
def made(runs: dict[str, Run]) -> dict[str, Outputs]:
    """mpimb-report findings and table of each run's CSV."""
    return {p: Outputs(r, report("findings", str(r.csv_path)), report("table", str(r.csv_path))) for p, r in runs.items()}


@pytest.fixture(params=list(RUNS))
def outputs(request: pytest.FixtureRequest, made: dict[str, Outputs]) -> Outputs:
    return made[request.param]


def test_findings_are_one_judgement(made: dict[str, Outputs], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(a) stdout's block is `mpimb-report findings` verbatim; the table's and the report's findings are
    the same sentences under the same stated rule.  (The report is made without its plots: they are
    most of its time and none of its findings.)"""
    from mpimb import report as html_report
    from mpimb.judge import RULE

    monkeypatch.setattr(html_report, "all_plots", lambda df, stat: [])
    every: list[str] = []
    judged = 0
    for prog, o in made.items():
        head, found = stdout_findings(o.run.stdout)
        assert o.run.stdout.endswith(o.findings), f"{prog}: stdout does not end with mpimb-report findings:\n{o.findings}"
        assert found, f"{prog}: no findings on stdout"
        assert RULE in head, head
        heads, in_table = table_findings(o.table)
        assert in_table == found, f"{prog}: the table's findings differ from stdout's"
        assert heads and all(RULE in h for h in heads), heads
        every += found
        judged += sum("outside the noise" in f or "within the noise" in f for f in found)
    assert judged >= 5, "the runs gave too few judged findings to compare verdicts"
    page = tmp_path / "report.html"
    report("report", *(str(o.run.csv_path) for o in made.values()), "-o", str(page))
    note, in_report = report_findings(page.read_text(encoding="utf-8"))
    assert RULE in note, note
    assert sorted(in_report) == sorted(every)


# ------------------------------------------------------------------ (b) the tables, cell by cell
Pairs = list[tuple[str, str, str | None]]  # (where, the C cell, mpimb-report's cell or None: no such cell)


def only(tables: list[TextTable], start: str) -> TextTable:
    hits = [t for t in tables if t.title.startswith(start)]
    assert len(hits) == 1, f"{len(hits)} mpimb-report tables titled {start!r}: {[t.title for t in tables]}"
    return hits[0]


def halocompare_cells(c: list[TextTable], py: list[TextTable]) -> Pairs:
    """Same shape on both sides: rows communicators (stencils for one-sender), columns method per
    neighbour count; the size in doubles on stdout, in bytes in mpimb-report."""
    out: Pairs = []
    for t in c:
        key = re.sub(r"(\d+) doubles", lambda m: f"{int(m[1]) * 8} B", t.title).split(":")[0]
        p = only(py, key + ":")
        for label, cells in t.rows:
            out += [(f"{key} | {label} | {g} {h}", v, p.at(label, g, h)) for (g, h), v in zip(t.cols, cells)]
    return out


PP_TESTS = {"Latency": "latency", "Ping-ping": "pingping", "Bandwidth (osu_bw)": "bw", "Bidirectional": "bibw",
            "Message rate": "msgrate", "All-pairs latency": "allpairs-latency", "All-pairs bandwidth": "allpairs-bw"}


def pingpong_cells(c: list[TextTable], py: list[TextTable]) -> Pairs:
    """stdout: a block per test and placement (size, value, its CI ...); mpimb-report: one table, a column
    per test and placement; the all-pairs matrices alike (mpimb-report keeps the upper triangle)."""
    from mpimb.render import fmt_bytes

    main = only(py, "pingpong:")
    out: Pairs = []
    for t in c:
        test = next(v for k, v in PP_TESTS.items() if t.title.startswith(f"# {k}"))
        if test.startswith("allpairs"):
            nbytes = int(re.search(r", (\d+) bytes:", t.title)[1])
            p = only(py, f"{test}, {fmt_bytes(nbytes)} B,")
            out += [(f"{test} {a}-{b}", v, p.at(a, "", b)) for a, cells in t.rows
                    for (_, b), v in zip(t.cols, cells) if int(a) < int(b)]
            continue
        comm = t.title.rsplit("[", 1)[1].rstrip("]")
        head = next(h for _, h in main.cols if h.startswith(f"{test} {comm} ["))
        out += [(f"{test} {comm} {size} B", cells[0], main.at(fmt_bytes(int(size)), "", head)) for size, cells in t.rows]
    return out


def collectives_cells(c: list[TextTable], py: list[TextTable]) -> Pairs:
    """stdout: a table per collective (sizes × library call and algorithms, aggregate MB/s of the
    library call) and the broadcast algorithms (* marks the fastest); mpimb-report: times and aggregate
    bandwidths, a row per test · method · communicator, a column per size."""
    times, agg = only(py, "collectives: time per call"), only(py, "collectives: aggregate bandwidth")
    out: Pairs = []
    for t in c:
        test = "bcast" if t.title.startswith("Broadcast algorithms") else t.title.split(":")[0]
        for size, cells in t.rows:
            for (g, h), v in zip(t.cols, cells):
                comm = g.split(":")[0]
                method = "library" if h in (test, "MPI_Bcast", "agg MB/s") else h
                p = agg if h == "agg MB/s" else times
                out.append((f"{t.title[:30]} | {size} | {h}", v.removesuffix(" *"),
                            p.at(f"{test} · {method} · {comm}", "", size)))
    return out


def rma_cells(c: list[TextTable], py: list[TextTable]) -> Pairs:
    """stdout: a table per test and window (sizes × send/recv, then each synchronisation and its time
    ratio to send/recv); mpimb-report: a table per test (columns synchronisation × window) and one of
    the ratios."""
    out: Pairs = []
    for t in c:
        test, window = re.match(r"(\S+), window (\S+):", t.title).groups()
        vals, ratios = only(py, f"rma {test} — "), only(py, f"rma {test}: time ratio")
        unit = "MB/s" if test.endswith("-bw") else "µs"
        for size, cells in t.rows:
            sync = ""
            for (_, h), v in zip(t.cols, cells):
                if h == "ratio":
                    out.append((f"{test} {window} {size} B {sync} ratio", v, ratios.at(size, "", f"{sync} {window}")))
                    continue
                sync = h
                col = f"sendrecv p2p [{unit}]" if h == "sendrecv" else f"{h} {window} [{unit}]"
                out.append((f"{test} {window} {size} B {h}", v, vals.at(size, "", col)))
    return out


def threads_cells(c: list[TextTable], py: list[TextTable]) -> Pairs:
    """stdout: tables by study (a row per test, or per test and method); mpimb-report: a table per test
    (rows size · threads, columns methods or the thread level), master-worker alike on both sides."""
    from mpimb.render import fmt_bytes

    out: Pairs = []

    def one(p: TextTable, rows: list[tuple[str, list[str]]], head: str) -> str | None:
        """The one figure of column head among rows (None: no such figure)."""
        got = [cells[p.col("", head)] for _, cells in rows if ("", head) in p.cols]
        got = [x for x in got if x not in NONE]
        return got[0] if len(got) == 1 else None

    for t in c:
        if t.title.startswith("master-worker"):
            p = only(py, "threads master-worker")
            out += [(f"master-worker {w} {g} {h}", v, p.at(w, g, h)) for w, cells in t.rows
                    for (g, h), v in zip(t.cols, cells) if (g, h) in p.cols]
            continue
        heads = [h for _, h in t.cols]
        for test, cells in t.rows:
            p = only(py, f"threads {test} (")
            if "method" in heads:  # short-long, overlap, coll-mt: one row per method
                out.append((f"{test} {cells[0]}", cells[heads.index("value")], one(p, p.rows, cells[0])))
                continue
            size = fmt_bytes(int(cells[heads.index("bytes")]))
            rows = [(lab, cs) for lab, cs in p.rows if lab.startswith(f"{size} · ")]
            if "value" in heads:  # the overhead tests at the requested thread level
                got = [x for _, cs in rows for x in cs if x not in NONE]
                out.append((f"{test} {size}", cells[heads.index("value")], got[0] if len(got) == 1 else None))
                continue
            out += [(f"{test} {size} {h}", v, one(p, rows, h)) for h, v in zip(heads, cells) if h not in ("bytes", "unit")]
    return out


CELLS: dict[str, Callable[[list[TextTable], list[TextTable]], Pairs]] = {
    "halocompare": halocompare_cells, "pingpong": pingpong_cells, "collectives": collectives_cells,
    "rma": rma_cells, "threads": threads_cells}
# Columns of the stdout tables that mpimb-report does not show (docs/report.md, "stdout and mpimb-report").
C_ONLY = {"pingpong": ("CI low", "CI high", "±CI", "reps", "stop", "Messages/s"),
          "threads": ("cpu %", "note", "MB/s", "eff %")}


def test_table_cells_are_the_same(outputs: Outputs) -> None:
    """(b) every number of every stdout table is mpimb-report's number for it, as printed."""
    prog = outputs.run.csv_path.stem
    c, py = outputs.c_tables(), outputs.py_tables()
    assert c and py, f"{prog}: no tables parsed"
    pairs = CELLS[prog](c, py)
    skip = C_ONLY.get(prog, ())
    compared = [(w, a, b) for w, a, b in pairs if not any(w.endswith(f" {s}") for s in skip)]
    missing = [w for w, a, b in compared if b is None and a not in NONE]
    differ = [f"{w}: stdout {a!r}, mpimb-report {b!r}" for w, a, b in compared
              if b is not None and a != b and not (a in NONE and b in NONE)]
    numbers = [a for _, a, b in compared if b is not None and a not in NONE]
    assert differ == [], f"{prog}: {len(differ)} of {len(compared)} cells differ:\n" + "\n".join(differ)
    assert missing == [], f"{prog}: stdout cells mpimb-report does not show: {missing}"
    assert len(numbers) >= 8, f"{prog}: only {len(numbers)} numbers compared"


# ------------------------------------------------------------------ (c) the rules in one place
def test_no_finding_is_made_in_c() -> None:
    """The C sources neither judge nor word a finding: the words of the findings rules (analysis/mpimb/
    judge.py, programs/*) appear in no src/ file, and src/common/findings.c only runs mpimb-report."""
    from mpimb import judge

    words = [judge.UNJUDGED, "within the noise", "outside the noise", "not judged", "in this launch",
             "is the best", "the worst", "runner-up", "CIs overlap", judge.OVERSUBSCRIBED.strip(), judge.BUSY.strip()]
    found = [f"{p.relative_to(ROOT)}: {w!r}" for p in sorted((ROOT / "src").rglob("*.[ch]"))
             for w in words if w in p.read_text(encoding="utf-8")]
    assert found == []
    f = (ROOT / "src" / "common" / "findings.c").read_text(encoding="utf-8")
    assert '"findings"' in f and "execl(" in f
    assert not re.search(r"\bci_(lo|hi)\b|median|mb_row", f), "src/common/findings.c reads results"
