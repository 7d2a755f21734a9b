"""Rendering tables: numbers as the C programs print them (fmt, fmt_bytes), the Table (text,
Markdown, LaTeX, HTML, CSV), the generic pivot every program's tables are built with, and the one
escaping of every export (esc for HTML, md_text / md_cell for Markdown, tex for LaTeX, csv_cell /
csv_frame for CSV): every writer of the package goes through these, so no label, host or
library string from a results file reaches a page as markup or a spreadsheet as a formula."""

from __future__ import annotations

import csv
import html
import io
import math
import os
import re
import secrets
import stat
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import schema
from .keys import MACHINE, VARIANT, params_note, with_variant


def shown(v: float) -> float:
    """v as the CSV keeps it (9 significant digits), the one input of fmt and fmt_ratio here and of
    mb_fmt_value / mb_fmt_ratio in src/common/output.c: a figure at a rounding tie (0.6965 µs) then
    rounds alike in the C program's table (from memory) and in mpimb-report's (from the CSV)."""
    return float(f"{v:.9g}")


def fmt(v: float) -> str:
    """Like the C programs' tables (mb_fmt_value): 3 significant digits, no exponent for big values."""
    if v is None or not math.isfinite(v):
        return "-"
    v = shown(v)
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3g}"


def fmt_ratio(r: float) -> str:
    """A ratio of two figures, two decimals (mb_fmt_ratio in the C programs' tables)."""
    return f"{shown(r):.2f}" if math.isfinite(r) else "-"


def fmt_bytes(b: float) -> str:
    if not math.isfinite(b):
        return ""
    b = int(b)
    for unit, n in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n}{unit}"
    return str(b)


WIDTH = 120  # text tables wrap into blocks that fit this many columns


# ---------------------------------------------------------------- escaping, one place for every export

def esc(s: object) -> str:
    """Text for HTML (element content or a quoted attribute): no tag, entity or quote survives."""
    return html.escape(str(s))


def md_text(s: object) -> str:
    """Free text for Markdown: '&' and '<' as entities, so a label like '<script>' or '<img onerror=...>'
    shows as text and never as a tag or an autolink (CommonMark decodes the entities); '>' opens
    nothing and stays as it is."""
    return str(s).replace("&", "&amp;").replace("<", "&lt;")


def md_cell(s: object) -> str:
    """A Markdown table cell: md_text, '|' escaped and line breaks as spaces (a cell is one line)."""
    return re.sub(r"[\r\n]+", " ", md_text(s)).replace("|", "\\|")


_TEX = str.maketrans({"\\": "\\textbackslash{}", "{": "\\{", "}": "\\}", "$": "\\$", "&": "\\&",
                      "%": "\\%", "_": "\\_", "#": "\\#", "^": "\\^{}", "~": "\\textasciitilde{}",
                      "µ": "$\\mu$", "×": "$\\times$", "±": "$\\pm$", "·": "$\\cdot$", "—": "---",
                      "–": "--"})


def tex(s: object) -> str:
    """Text for LaTeX: every special character as its literal (no command can be formed)."""
    return str(s).translate(_TEX)


# OWASP's CSV-injection rule: a spreadsheet takes a cell starting with one of these as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
MISSING = ("-", "—")  # a text table's 'no value', an empty cell in its CSV


def csv_cell(s: object) -> str:
    """A CSV cell that no spreadsheet runs: text starting with = + - @ tab or CR gets a leading quote
    (OWASP); a number, negative or not, stays a number."""
    t = "" if s is None else str(s)
    if t.startswith(FORMULA_START) and not _NUMBER.fullmatch(t):
        return "'" + t
    return t


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """df with every text cell and column name through csv_cell's rule, column by column (numbers,
    booleans and empty cells untouched)."""
    out = df.rename(columns=csv_cell)
    for c in out.columns:
        col = out[c]
        if col.dtype.kind not in "OSU" and not isinstance(col.dtype, pd.StringDtype):
            continue
        text = col.astype("string")
        bad = (text.str.startswith(FORMULA_START) & ~text.str.fullmatch(_NUMBER.pattern)).fillna(False)
        if bad.any():
            out[c] = col.where(~bad, "'" + text)
    return out


NOT_REGULAR = "exists and is not a regular file (a device, FIFO, socket, directory or link): refused, mpimb-report " \
    "replaces regular files only"


def regular_or_none(path: Path) -> bool:
    """Whether path names nothing, or a regular file (a link is neither: it is never written through nor replaced)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):  # nothing there (a parent that is no directory: said apart)
        return True


def write_file(path: Path, data: bytes | str) -> None:
    """Every file mpimb-report writes: through a file of its own beside path (O_EXCL: never another's, never a
    link's target), renamed into place, so that a full disk or a kill leaves the earlier file or none, never a
    cut one, and removed when anything fails.  What path may name (a regular file, or nothing) is checked before
    any work (cli._unwritable)."""
    if not regular_or_none(path):
        raise OSError(f"{path}: {NOT_REGULAR}")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)  # (umask applies)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_csv(df: pd.DataFrame, path: Path) -> None:
    """A frame as a CSV export (csv_frame's rule), without the index."""
    write_file(path, csv_frame(df).to_csv(index=False))


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    groups: list[tuple[str, int]] = field(default_factory=list)  # spanning header over columns
    notes: list[str] = field(default_factory=list)
    kind: str = ""  # "ratio" tables get colour in HTML
    program: str = ""
    # per body row, per column after the first: the value relative to its row's best in its column
    # group (0..1), or None; the HTML colours such a table as a heat map
    heat: list[list[float | None]] | None = None

    # how many leading columns name a row: they open every block of a wrapped text table, so the
    # blocks' rows can be matched (the first column alone where it is unique)
    keys: int = 1

    def _chunks(self, w: list[int], width: int) -> list[list[int]]:
        """Column indices (after the key columns) of each block that fits width: whole column groups
        where they fit, a group wider than a block split column by column."""
        k = max(1, min(self.keys, len(w) - 1))
        cols = list(range(k, len(w)))
        if sum(w) + 2 * (len(w) - 1) <= width or len(cols) < 2:
            return [cols]
        spans: list[list[int]] = []
        col = 0
        for _, span in self.groups or [("", 1)] * len(w):
            spans.append([c for c in range(col, col + span) if c >= k])
            col += span
        spans = [sp for sp in spans if sp]
        out: list[list[int]] = [[]]
        key = sum(w[:k]) + 2 * (k - 1)

        def size(cs: list[int]) -> int:
            return key + sum(w[c] + 2 for c in cs)

        for sp in spans:
            if size(out[-1] + sp) <= width:
                out[-1] += sp
                continue
            if out[-1] and size(sp) <= width:
                out.append(list(sp))
                continue
            for c in sp:  # a group wider than a block
                if out[-1] and size(out[-1] + [c]) > width:
                    out.append([])
                out[-1].append(c)
        return [o for o in out if o]

    def text(self, width: int = WIDTH) -> str:
        w = [len(h) for h in self.header]
        for r in self.rows:
            w = [max(a, len(c)) for a, c in zip(w, r)]
        names: list[str] = []
        for name, span in self.groups:
            names += [name] + [""] * (span - 1) if name else [""] * span
        k = max(1, min(self.keys, len(w) - 1))
        out = textwrap.wrap(self.title, width, subsequent_indent="  ") or [""]
        for bi, chunk in enumerate(self._chunks(w, width)):
            idx = [*range(k), *chunk]
            if bi:
                out.append("")
            if self.groups:  # each label starts above its group's first column, as the C tables' do
                line, at = "", sum(w[:k]) + 2 * (k - 1)
                for c in chunk:
                    at += 2
                    label = names[c] if c < len(names) else ""
                    if not label and c == chunk[0] and c < len(names):  # a group continued from the last block
                        owner = next((names[x] for x in range(c, 0, -1) if names[x]), "")
                        label = f"{owner} (cont.)" if owner else ""
                    if label:
                        line = line.ljust(at) if len(line) + 2 <= at else line + "  "
                        line += label
                    at += w[c]
                out.append(line.rstrip())

            def row(cells: list[str], idx: list[int] = idx) -> str:
                return "  ".join(cells[i].ljust(w[i]) if i < k else cells[i].rjust(w[i]) for i in idx).rstrip()

            out.append(row(self.header))
            out.append("-" * (sum(w[i] for i in idx) + 2 * (len(idx) - 1)))
            out += [row(r) for r in self.rows]
        out += [ln for n in self.notes for ln in textwrap.wrap(n, width, subsequent_indent="  ")]
        return "\n".join(out) + "\n"

    def markdown(self) -> str:
        head = self.header
        if self.groups:
            names: list[str] = []
            for name, span in self.groups:
                names += [name] * span if name else [""] * span
            head = [f"{g} {h}".strip() if g else h for g, h in zip(names, self.header)]
        out = [f"**{md_text(self.title)}**", "", "| " + " | ".join(md_cell(h) for h in head) + " |",
               "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        out += ["| " + " | ".join("**FAILED**" if c == FAILED else md_cell(c) for c in r) + " |" for r in self.rows]
        if self.notes:
            out += [""] + [f"*{md_text(n.strip())}*" for n in self.notes]
        return "\n".join(out) + "\n"

    def latex(self) -> str:
        out = ["% " + " ".join(self.title.split()), "\\begin{tabular}{l" + "r" * (len(self.header) - 1) + "}", "\\hline"]
        if self.groups:
            out.append(" & ".join(f"\\multicolumn{{{s}}}{{c}}{{{tex(n)}}}" if s > 1 else tex(n)
                                  for n, s in self.groups) + " \\\\")
        out.append(" & ".join(tex(h) for h in self.header) + " \\\\ \\hline")
        out += [" & ".join(("\\textbf{FAILED}" if c == FAILED else tex(c)) for c in r) + " \\\\" for r in self.rows]
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"

    def html(self) -> str:
        """The table in a horizontally scrollable box (a wide table scrolls, never clipped)."""
        e = esc
        kind = f"{self.kind} heat" if self.heat else self.kind
        out = [f'<div class="scroll"><table class="data {kind}"><caption>{e(self.title)}</caption><thead>']
        if self.groups:
            out.append("<tr>" + "".join(f'<th colspan="{s}" class="grp">{e(n)}</th>' for n, s in self.groups)
                       + "</tr>")
        out.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in self.header) + "</tr></thead><tbody>")
        for ri, r in enumerate(self.rows):
            cells = []
            for i, c in enumerate(r):
                attr = ""
                if c == FAILED:
                    attr = ' class="failed" title="verification FAILED: the data received was wrong"'
                elif i and self.kind == "ratio" and c.rstrip("§‡").endswith("*"):
                    attr = ' class="win"' if c.startswith("↓") else ' class="loss"'
                elif c.startswith("n/a"):
                    attr = ' class="na"'
                elif i and self.heat and ri < len(self.heat) and self.heat[ri][i - 1] is not None:
                    f = float(self.heat[ri][i - 1] or 0.0)
                    attr = (f' style="background:{heat_colour(f)}" data-rel="{f:.3f}" '
                            f'title="{f * 100:.0f} % of the best in its row and stencil"')
                cells.append(f"<td{attr}>{e(c)}</td>" if i else f'<th scope="row">{e(c)}</th>')
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table></div>")
        if self.notes:
            out.append('<p class="note">' + "<br>".join(e(n.strip()) for n in self.notes) + "</p>")
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        names: list[str] = []
        for name, span in self.groups:
            names += [name] * span
        head = [f"{g} {h}".strip() for g, h in zip(names, self.header)] if names else self.header
        w.writerow(["# " + " ".join(self.title.split())])
        w.writerow([csv_cell(h) for h in head])
        w.writerows([csv_cell("" if c in MISSING else c) for c in r] for r in self.rows)
        return buf.getvalue()

    def render(self, fmt_name: str) -> str:
        return {"text": self.text, "markdown": self.markdown, "latex": self.latex, "html": self.html,
                "csv": self.csv}[fmt_name]()


FAILED = "FAILED"


def heat_colour(f: float) -> str:
    """Background for a value at fraction f of its row's best: red (far below) to green (the best)."""
    f = min(max(f, 0.0), 1.0)
    return f"hsl({f * 120:.0f}, 62%, {88 - 10 * f:.0f}%)"


FEW = "~"  # a value of fewer than schema.MIN_REPS_FOR_CI repetitions (as the programs' own tables mark it: mb_cell)


def cell(v: float, na: bool, failed: bool = False, show: Callable[[float], str] = fmt, few: bool = False) -> str:
    if failed:
        return FAILED
    if na:
        return "n/a"
    if v is None or not math.isfinite(v):
        return ""
    return show(v) + (FEW if few else "")


def context(d: pd.DataFrame) -> str:
    r = d.iloc[0]
    mark = " [PUBLISHED]" if bool(d["published"].any()) else " [SIMULATED]" if bool(d["simulated"].any()) else ""
    nodes = ""
    if pd.notna(r["nnodes"]):
        nodes = f", {int(r['nnodes'])} node(s)" + (f" × {int(r['ppn'])}" if pd.notna(r["ppn"]) else "")
    return f"{r['label']} · {r['library']} · {int(r['nprocs'])} ranks{nodes}{mark}"


# Key columns tried, in this order, when a table's rows and columns leave cells with several values.
# (threads first: a second thread count is the likeliest difference after the settings)
EXTRA_ORDER = [VARIANT, *dict.fromkeys(["threads", *schema.key_roles("thread-level", "config", "size", "test",
                                                                       "program", "layout")])]
SHOWN = {"variant": "settings", "thread_level": "level"}


def extra_keys(d: pd.DataFrame, used: list[str]) -> list[str]:
    """Key columns to add to used so that every (used + extra) cell holds one row: a table
    never merges two measurements (d has been through resolve_duplicates)."""
    extra: list[str] = []
    for k in EXTRA_ORDER:
        if not d.duplicated(used + extra).any():
            break
        if k not in used and d[k].nunique(dropna=False) > 1:
            extra.append(k)
    return extra


def agg(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per key (keys are unique: see extra_keys), with n/a and FAILED flags."""
    d = d.copy()
    for k in keys:
        if d[k].dtype.kind == "f":
            d[k] = d[k].fillna(-1.0)
    g = d.groupby(keys, sort=False, dropna=False)
    d["few"] = few_by_budget(d)
    out = g.agg(value=("value", "first"), na=("na", "all"), failed=("failed", "any"),
                reason=("stop_reason", "first"), unit=("unit", "first"))
    out["few"] = d.groupby(keys, sort=False, dropna=False)["few"].any().to_numpy()
    return out.reset_index()


def _show(name: str, v: object) -> str:
    if isinstance(v, float):
        if math.isnan(v) or v < 0:
            return ""
        return fmt_bytes(v) if name == "bytes" else f"{v:g} thr" if name == "threads" else f"{v:g}"
    return str(v)


def few_by_budget(d: pd.DataFrame) -> np.ndarray:
    """Rows the time budget ended with fewer repetitions than a 95 % interval needs (stop_reason budget), marked
    FEW as the programs' tables mark them; a --max-reps below that ends rows on max-reps, said once elsewhere."""
    if "reps" not in d or "stop_reason" not in d:
        return np.zeros(len(d), dtype=bool)
    return (d["reps"].to_numpy(float) < schema.MIN_REPS_FOR_CI) & (d["stop_reason"].astype(str) == "budget").to_numpy()


def failed_note(d: pd.DataFrame) -> list[str]:
    """The notes a table's rows call for: FAILED results, and values of fewer repetitions than a verdict needs."""
    n = int(d["failed"].sum())
    few = int(few_by_budget(d).sum())
    out = [f"FAILED: {n} result(s) failed verification (wrong data received); their times are in the CSV"] if n else []
    if few:
        out.append(f"{FEW}: {few} value(s) of fewer than {schema.MIN_REPS_FOR_CI} repetitions (the time budget ran "
                   "out): no 95 % interval, so no verdict rests on them")
    return out


def pivot(d: pd.DataFrame, rows: list[str], cols: list[str], title: str, row_fmt: dict[str, object] | None = None,
          unit_in_header: bool = True, value_fmt: Callable[[float], str] = fmt) -> Table:
    """Generic block: rows × columns of d's value (shown by value_fmt); key columns that would otherwise
    leave two values in a cell (another --root, a second thread level ...) are added to the rows."""
    d, constant = with_variant(d)
    rows = rows + extra_keys(d, rows + cols)
    a = agg(d, rows + cols)
    row_keys = list(dict.fromkeys(map(tuple, a[rows].itertuples(index=False, name=None))))
    col_keys = list(dict.fromkeys(map(tuple, a[cols].itertuples(index=False, name=None))))
    if "bytes" in cols:
        col_keys.sort(key=lambda k: k[cols.index("bytes")])
    if "bytes" in rows:
        pos = rows.index("bytes")
        row_keys.sort(key=lambda k: (k[:pos], k[pos]))
    lookup = {tuple(k): (v, n, f, u, w) for k, v, n, f, u, w in zip(a[rows + cols].itertuples(index=False, name=None),
                                                                    a["value"], a["na"], a["failed"], a["unit"],
                                                                    a["few"])}
    fmts = row_fmt or {}

    def show(name: str, v: object) -> str:
        f = fmts.get(name)
        return str(f(v)) if callable(f) else _show(name, v)

    units = {}
    for ck in col_keys:
        us = {lookup[rk + ck][3] for rk in row_keys if rk + ck in lookup}
        units[ck] = us.pop() if len(us) == 1 else ""

    def join(names: list[str], key: tuple[object, ...], sep: str) -> str:
        parts = [s for s in (show(c, x) for c, x in zip(names, key)) if s]
        return sep.join(dict.fromkeys(parts))

    header = [" · ".join(SHOWN.get(r, r) for r in rows)] + [
        (join(cols, ck, " ") or "·") + (f" [{units[ck]}]" if unit_in_header and units[ck] else "") for ck in col_keys]
    body = []
    for rk in row_keys:
        cells = [join(rows, rk, " · ") or "-"]
        for ck in col_keys:
            hit = lookup.get(rk + ck)
            cells.append(cell(hit[0], bool(hit[1]), bool(hit[2]), value_fmt, bool(hit[4])) if hit else "")
        body.append(cells)
    notes = [n for n in (params_note(constant),) if n] + failed_note(d)
    return Table(title, header, body, notes=notes)


# The generic table's rows (a program without tables of its own) and the block every table belongs to.
KEY = schema.key_roles("test", "config")
BLOCK = [*MACHINE, *schema.key_roles("program", "layout")]
