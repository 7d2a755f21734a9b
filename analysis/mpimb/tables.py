"""Tables: the talk-shaped halocompare tables and a natural table per program,
rendered as text, Markdown, LaTeX, HTML or CSV."""

from __future__ import annotations

import csv
import html
import io
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .load import groups, rate, stat_time

RATE_TESTS = ("bw", "bibw", "msgrate", "halo", "one-sender")
KEY = ["test", "method", "comm", "neighbors", "periodic", "threads"]


def is_rate(program: str, test: str) -> bool:
    """Bandwidth-like tests are shown in MB/s, everything else as time in µs."""
    return program == "halocompare" or any(test == t or test.endswith("-" + t) or test.startswith(t + "-")
                                           for t in RATE_TESTS)


def rate_mask(d: pd.DataFrame) -> np.ndarray:
    """is_rate for every row, vectorised over the distinct test names."""
    tests = d["test"].unique()
    kinds = {t: is_rate("", str(t)) for t in tests}
    return np.asarray(d["test"].map(kinds), dtype=bool) | (d["program"] == "halocompare").to_numpy(bool)


def with_values(df: pd.DataFrame, stat: str) -> pd.DataFrame:
    """Adds value (MB/s or µs, by test) and unit columns."""
    d = df.copy()
    rates = rate_mask(d)
    d["value"] = np.where(rates, rate(d, stat), stat_time(d, stat) * 1e6)
    d["unit"] = np.where(rates, "MB/s", "µs")
    return d


def fmt(v: float) -> str:
    """Like the C programs' tables: 3 significant digits, no exponent for big values."""
    if v is None or not math.isfinite(v):
        return "-"
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


def fmt_bytes(b: float) -> str:
    if not math.isfinite(b):
        return ""
    b = int(b)
    for unit, n in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n}{unit}"
    return str(b)


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    groups: list[tuple[str, int]] = field(default_factory=list)  # spanning header over columns
    notes: list[str] = field(default_factory=list)
    kind: str = ""  # "ratio" tables get colour in HTML
    program: str = ""

    def text(self) -> str:
        w = [len(h) for h in self.header]
        for r in self.rows:
            w = [max(a, len(c)) for a, c in zip(w, r)]
        out = [self.title]
        if self.groups:
            line, col = "", 0
            for name, span in self.groups:
                width = sum(w[col:col + span]) + 2 * (span - 1)
                line += (name.ljust(width) if name else " " * width) + "  "
                col += span
            out.append(line.rstrip())

        def row(cells: list[str]) -> str:
            return "  ".join(c.ljust(w[0]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(cells)).rstrip()

        out.append(row(self.header))
        out.append("-" * (sum(w) + 2 * (len(w) - 1)))
        out += [row(r) for r in self.rows]
        out += self.notes
        return "\n".join(out) + "\n"

    def markdown(self) -> str:
        head = self.header
        if self.groups:
            names: list[str] = []
            for name, span in self.groups:
                names += [name] * span if name else [""] * span
            head = [f"{g} {h}".strip() if g else h for g, h in zip(names, self.header)]
        esc = [h.replace("|", "\\|") for h in head]
        out = [f"**{self.title}**", "", "| " + " | ".join(esc) + " |",
               "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in self.rows]
        if self.notes:
            out += [""] + [f"*{n.strip()}*" for n in self.notes]
        return "\n".join(out) + "\n"

    def latex(self) -> str:
        def tex(s: str) -> str:
            for a, b in (("\\", "\\textbackslash{}"), ("$", "\\$"), ("&", "\\&"), ("%", "\\%"), ("_", "\\_"),
                         ("#", "\\#"), ("{}", "{}"), ("µ", "$\\mu$"), ("×", "$\\times$"), ("±", "$\\pm$"),
                         ("·", "$\\cdot$"), ("—", "---"), ("–", "--")):
                s = s.replace(a, b)
            return s

        out = ["% " + self.title, "\\begin{tabular}{l" + "r" * (len(self.header) - 1) + "}", "\\hline"]
        if self.groups:
            out.append(" & ".join(f"\\multicolumn{{{s}}}{{c}}{{{tex(n)}}}" if s > 1 else tex(n)
                                  for n, s in self.groups) + " \\\\")
        out.append(" & ".join(tex(h) for h in self.header) + " \\\\ \\hline")
        out += [" & ".join(tex(c) for c in r) + " \\\\" for r in self.rows]
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"

    def html(self) -> str:
        e = html.escape
        out = [f'<table class="data {self.kind}"><caption>{e(self.title)}</caption><thead>']
        if self.groups:
            out.append("<tr>" + "".join(f'<th colspan="{s}" class="grp">{e(n)}</th>' for n, s in self.groups)
                       + "</tr>")
        out.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in self.header) + "</tr></thead><tbody>")
        for r in self.rows:
            cells = []
            for i, c in enumerate(r):
                cls = ""
                if i and self.kind == "ratio" and c.endswith("*"):
                    cls = ' class="win"' if c.startswith("↓") else ' class="loss"'
                elif c.startswith("n/a"):
                    cls = ' class="na"'
                cells.append(f"<td{cls}>{e(c)}</td>" if i else f'<th scope="row">{e(c)}</th>')
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table>")
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
        w.writerow(["# " + self.title])
        w.writerow(head)
        w.writerows(self.rows)
        return buf.getvalue()

    def render(self, fmt_name: str) -> str:
        return {"text": self.text, "markdown": self.markdown, "latex": self.latex, "html": self.html,
                "csv": self.csv}[fmt_name]()


def _cell(v: float, na: bool, reason: str = "") -> str:
    if na:
        return "n/a"
    if v is None or not math.isfinite(v):
        return ""
    return fmt(v)


def _context(d: pd.DataFrame) -> str:
    r = d.iloc[0]
    sim = " [SIMULATED]" if bool(d["simulated"].any()) else ""
    nodes = f", {int(r['nnodes'])} node(s)" if pd.notna(r["nnodes"]) else ""
    return f"{r['label']} · {r['library']} · {int(r['nprocs'])} ranks{nodes}{sim}"


def _agg(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One value per key (median over repeated runs), with n/a flag and reason."""
    d = d.copy()
    for k in keys:
        if d[k].dtype.kind == "f":
            d[k] = d[k].fillna(-1.0)
    g = d.groupby(keys, sort=False, dropna=False)
    out = g.agg(value=("value", "median"), na=("na", "all"), reason=("stop_reason", "first"),
                unit=("unit", "first"))
    return out.reset_index()


def pivot(d: pd.DataFrame, rows: list[str], cols: list[str], title: str, row_fmt: dict[str, object] | None = None,
          unit_in_header: bool = True) -> Table:
    """Generic block: rows × columns of d's value."""
    a = _agg(d, rows + cols)
    row_keys = list(dict.fromkeys(map(tuple, a[rows].itertuples(index=False, name=None))))
    col_keys = list(dict.fromkeys(map(tuple, a[cols].itertuples(index=False, name=None))))
    if "bytes" in cols:
        col_keys.sort(key=lambda k: k[cols.index("bytes")])
    if "bytes" in rows:
        pos = rows.index("bytes")
        row_keys.sort(key=lambda k: (k[:pos], k[pos]))
    lookup = {tuple(k): (v, n, u) for k, v, n, u in zip(a[rows + cols].itertuples(index=False, name=None),
                                                        a["value"], a["na"], a["unit"])}
    fmts = row_fmt or {}

    def show(name: str, v: object) -> str:
        f = fmts.get(name)
        if callable(f):
            return str(f(v))
        if isinstance(v, float):
            return "" if math.isnan(v) or v < 0 else (fmt_bytes(v) if name == "bytes" else f"{v:g}")
        return str(v)

    units = {}
    for ck in col_keys:
        us = {lookup[rk + ck][2] for rk in row_keys if rk + ck in lookup}
        units[ck] = us.pop() if len(us) == 1 else ""
    def join(names: list[str], key: tuple[object, ...], sep: str) -> str:
        parts = [s for s in (show(c, x) for c, x in zip(names, key)) if s]
        return sep.join(dict.fromkeys(parts))

    header = [" · ".join(rows)] + [(join(cols, ck, " ") or "·")
                                   + (f" [{units[ck]}]" if unit_in_header and units[ck] else "") for ck in col_keys]
    body = []
    for rk in row_keys:
        cells = [join(rows, rk, " · ") or "-"]
        for ck in col_keys:
            hit = lookup.get(rk + ck)
            cells.append(_cell(hit[0], bool(hit[1])) if hit else "")
        body.append(cells)
    return Table(title, header, body)


def halocompare_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    halo = d[d["test"] == "halo"]
    for (nbytes, per), h in groups(halo, ["bytes", "periodic"], dropna=False):
        a = _agg(h, ["comm", "neighbors", "method"])
        comms = list(dict.fromkeys(a["comm"]))
        methods = list(dict.fromkeys(a["method"]))
        nbrs = sorted(int(x) for x in a["neighbors"].dropna().unique())
        look = {(c, n, m): (v, na) for c, n, m, v, na in zip(a["comm"], a["neighbors"], a["method"], a["value"],
                                                              a["na"])}
        header = ["comm"] + [m for _ in nbrs for m in methods]
        grp = [("", 1)] + [(f"{n} neighbours", len(methods)) for n in nbrs]
        rows = []
        for c in comms:
            row = [c]
            for n in nbrs:
                for m in methods:
                    v = look.get((c, float(n), m))
                    row.append(_cell(v[0], bool(v[1])) if v else "")
            rows.append(row)
        kind = "Periodic" if per == 1 else "Non-periodic"
        per_nbr = f", {fmt_bytes(nbytes)} B per neighbour" if pd.notna(nbytes) else ""
        notes = [("MB/s = 10^6 bytes one process sends per exchange (neighbours × bytes) / time per exchange "
                 "(slowest rank).")]
        if bool(a["na"].any()):
            reasons = sorted(set(h.loc[h["na"], "stop_reason"]))
            notes.append("n/a: " + "; ".join(r.removeprefix("n/a: ") for r in reasons))
        out.append(Table(f"{kind} mesh{per_nbr}: MB/s per process — {ctx}", header, rows, grp, notes))
    one = d[d["test"] == "one-sender"]
    if not one.empty:
        o = _agg(one, ["neighbors", "periodic", "bytes"])
        hal = _agg(halo, ["comm", "neighbors", "periodic", "bytes", "method"]) if not halo.empty else None
        rows = []
        for n, p, b, v, na in zip(o["neighbors"], o["periodic"], o["bytes"], o["value"], o["na"]):
            ref = math.nan
            if hal is not None:
                m = hal[(hal["comm"] == "world") & (hal["neighbors"] == n) & (hal["periodic"] == p)
                        & (hal["bytes"] == b) & (hal["method"] == "irecv-isend")]
                if not m.empty:
                    ref = float(m["value"].iloc[0])
            stencil = f"{int(n)}-nbr {'periodic' if p == 1 else 'non-periodic'}"
            ratio = v / ref if math.isfinite(ref) and ref > 0 and not na else math.nan
            rows.append([stencil, _cell(v, bool(na)), fmt(ref) if math.isfinite(ref) else "",
                         fmt(ratio) if math.isfinite(ratio) else ""])
        out.append(Table(f"One sender (world): one interior process sends alone, MB/s — {ctx}",
                         ["stencil", "one-sender", "halo irecv-isend", "one-sender/halo"], rows))
    rest = d[~d["test"].isin(["halo", "one-sender"])]
    if not rest.empty:
        out.append(pivot(rest, KEY, ["bytes"], f"halocompare, other tests — {ctx}"))
    from .halo_sizes import size_tables  # here, not at the top: halo_sizes builds on this module
    out += size_tables(d, ctx)
    return out


def _dashless(v: object) -> str:
    return "" if v in ("", None) else str(v)


def pingpong_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    pairs = d[d["test"].str.startswith("allpairs")]
    main = d[~d["test"].str.startswith("allpairs")]
    if not main.empty:
        out.append(pivot(main, ["bytes"], ["test", "comm", "method"],
                         f"pingpong: latency in µs, bandwidth in MB/s — {ctx}"))
    for (test, b), p in groups(pairs, ["test", "bytes"]):
        ab = p["method"].str.split("-", n=1, expand=True)
        if ab.shape[1] != 2:
            continue
        q = p.assign(a=ab[0], b=ab[1])
        t = pivot(q, ["a"], ["b"], f"{test}, {fmt_bytes(b)} B, rank × rank ({p['unit'].iloc[0]}) — {ctx}",
                  unit_in_header=False)
        t.header[0] = "rank"
        out.append(t)
    return out


def collectives_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    return [pivot(d, ["test", "method"], ["bytes"], f"collectives: time per call in µs, columns = bytes — {ctx}",
                  unit_in_header=False)]


def rma_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    for (test,), t in groups(d, ["test"], sort=False):
        out.append(pivot(t, ["bytes"], ["method", "comm"], f"rma {test} — {ctx}"))
        ref = t[t["method"] == "sendrecv"]
        if ref.empty:
            continue
        a = _agg(t, ["method", "comm", "bytes"])
        r = _agg(ref, ["bytes"]).set_index("bytes")["value"]
        a = a[a["method"] != "sendrecv"].copy()
        base = a["bytes"].map(r)
        lat = a["unit"].iloc[0] == "µs" if len(a) else True
        a["value"] = a["value"] / base if lat else base / a["value"]
        a["na"] = a["na"] | a["value"].isna()
        a["stop_reason"] = ""
        tb = pivot(a, ["bytes"], ["method", "comm"], f"rma {test}: time ratio RMA / send-recv (< 1: RMA faster) "
                   f"— {ctx}", unit_in_header=False)
        out.append(tb)
    return out


def threads_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    for (test,), t in groups(d, ["test"], sort=False):
        rows = ["bytes", "threads"] if t["bytes"].notna().any() else ["threads"]
        cols = ["method", "thread_level"] if test.startswith("overhead") else ["method"]
        out.append(pivot(t, rows, cols, f"threads {test} ({t['unit'].iloc[0]}) — {ctx}", unit_in_header=False))
    return out


BUILDERS = {"halocompare": halocompare_tables, "pingpong": pingpong_tables, "collectives": collectives_tables,
            "rma": rma_tables, "threads": threads_tables}


def build(df: pd.DataFrame, stat: str = "median") -> list[Table]:
    """Every table for the rows in df, one block per (label, library, program, nprocs)."""
    d = with_values(df, stat)
    out: list[Table] = []
    keys = ["label", "library", "program", "nprocs", "nnodes"]
    for _, g in d.groupby(keys, sort=True, dropna=False):
        prog = str(g["program"].iloc[0])
        ctx = _context(g)
        builder = BUILDERS.get(prog)
        made = [pivot(g, KEY, ["bytes"], f"{prog} — {ctx}")] if builder is None else builder(g, ctx)
        for t in made:
            t.program = prog
        out += made
    return out
