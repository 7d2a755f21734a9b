"""Tables: the talk-shaped halocompare tables and a natural table per program,
rendered as text, Markdown, LaTeX, HTML or CSV."""

from __future__ import annotations

import csv
import html
import io
import math
import textwrap
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .keys import param_split, params_note, resolve_duplicates
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


WIDTH = 120  # text tables wrap into blocks that fit this many columns


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

    def _chunks(self, w: list[int], width: int) -> list[list[int]]:
        """Column indices (after the first) of each block that fits width: whole column groups
        where they fit, a group wider than a block split column by column."""
        cols = list(range(1, len(w)))
        if sum(w) + 2 * (len(w) - 1) <= width or len(cols) < 2:
            return [cols]
        spans: list[list[int]] = []
        col = 0
        for _, span in self.groups or [("", 1)] + [("", 1)] * (len(w) - 1):
            spans.append([c for c in range(col, col + span) if c >= 1])
            col += span
        spans = [sp for sp in spans if sp]
        out: list[list[int]] = [[]]

        def size(cs: list[int]) -> int:
            return w[0] + sum(w[c] + 2 for c in cs)

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
        out = textwrap.wrap(self.title, width, subsequent_indent="  ") or [""]
        for bi, chunk in enumerate(self._chunks(w, width)):
            idx = [0, *chunk]
            if bi:
                out.append("")
            if self.groups:
                line = " " * w[0]
                for c in chunk:
                    label = names[c] if c < len(names) else ""
                    if not label and c == chunk[0] and c < len(names):  # a group continued from the last block
                        owner = next((names[x] for x in range(c, 0, -1) if names[x]), "")
                        label = f"{owner} (cont.)" if owner else ""
                    line += "  " + label.ljust(w[c])
                out.append(line.rstrip())

            def row(cells: list[str], idx: list[int] = idx) -> str:
                return "  ".join(cells[i].ljust(w[i]) if i == 0 else cells[i].rjust(w[i]) for i in idx).rstrip()

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
        esc = [h.replace("|", "\\|") for h in head]
        out = [f"**{self.title}**", "", "| " + " | ".join(esc) + " |",
               "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(head))) + "|"]
        out += ["| " + " | ".join(("**FAILED**" if c == FAILED else c).replace("|", "\\|") for c in r) + " |"
                for r in self.rows]
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
        out += [" & ".join(("\\textbf{FAILED}" if c == FAILED else tex(c)) for c in r) + " \\\\" for r in self.rows]
        out += ["\\hline", "\\end{tabular}"]
        return "\n".join(out) + "\n"

    def html(self) -> str:
        e = html.escape
        kind = f"{self.kind} heat" if self.heat else self.kind
        out = [f'<table class="data {kind}"><caption>{e(self.title)}</caption><thead>']
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
                elif i and self.kind == "ratio" and c.endswith("*"):
                    attr = ' class="win"' if c.startswith("↓") else ' class="loss"'
                elif c.startswith("n/a"):
                    attr = ' class="na"'
                elif i and self.heat and ri < len(self.heat) and self.heat[ri][i - 1] is not None:
                    f = float(self.heat[ri][i - 1] or 0.0)
                    attr = (f' style="background:{heat_colour(f)}" data-rel="{f:.3f}" '
                            f'title="{f * 100:.0f} % of the best in its row and stencil"')
                cells.append(f"<td{attr}>{e(c)}</td>" if i else f'<th scope="row">{e(c)}</th>')
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


FAILED = "FAILED"


def heat_colour(f: float) -> str:
    """Background for a value at fraction f of its row's best: red (far below) to green (the best)."""
    f = min(max(f, 0.0), 1.0)
    return f"hsl({f * 120:.0f}, 62%, {88 - 10 * f:.0f}%)"


def _cell(v: float, na: bool, failed: bool = False) -> str:
    if failed:
        return FAILED
    if na:
        return "n/a"
    if v is None or not math.isfinite(v):
        return ""
    return fmt(v)


def _context(d: pd.DataFrame) -> str:
    r = d.iloc[0]
    mark = " [PUBLISHED]" if bool(d["published"].any()) else " [SIMULATED]" if bool(d["simulated"].any()) else ""
    nodes = ""
    if pd.notna(r["nnodes"]):
        nodes = f", {int(r['nnodes'])} node(s)" + (f" × {int(r['ppn'])}" if pd.notna(r["ppn"]) else "")
    return f"{r['label']} · {r['library']} · {int(r['nprocs'])} ranks{nodes}{mark}"


# Key columns tried, in this order, when a table's rows and columns leave cells with several values.
EXTRA_ORDER = ["variant", "threads", "thread_level", "method", "comm", "neighbors", "periodic", "bytes", "test",
               "program", "nprocs", "nnodes", "ppn"]
SHOWN = {"variant": "settings", "thread_level": "level"}


def with_variant(d: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """d with a 'variant' column (the params pairs that differ within d) and the constant ones."""
    variant, constant = param_split(d["params"])
    return d.assign(variant=variant.to_numpy()), constant


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


def _agg(d: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per key (keys are unique: see extra_keys), with n/a and FAILED flags."""
    d = d.copy()
    for k in keys:
        if d[k].dtype.kind == "f":
            d[k] = d[k].fillna(-1.0)
    g = d.groupby(keys, sort=False, dropna=False)
    out = g.agg(value=("value", "first"), na=("na", "all"), failed=("failed", "any"),
                reason=("stop_reason", "first"), unit=("unit", "first"))
    return out.reset_index()


def _show(name: str, v: object) -> str:
    if isinstance(v, float):
        if math.isnan(v) or v < 0:
            return ""
        return fmt_bytes(v) if name == "bytes" else f"{v:g} thr" if name == "threads" else f"{v:g}"
    return str(v)


def failed_note(d: pd.DataFrame) -> list[str]:
    n = int(d["failed"].sum())
    return [f"FAILED: {n} result(s) failed verification (wrong data received); their times are in the CSV"] if n \
        else []


def pivot(d: pd.DataFrame, rows: list[str], cols: list[str], title: str, row_fmt: dict[str, object] | None = None,
          unit_in_header: bool = True) -> Table:
    """Generic block: rows × columns of d's value; key columns that would otherwise leave two
    values in a cell (another --root, a second thread level ...) are added to the rows."""
    d, constant = with_variant(d)
    rows = rows + extra_keys(d, rows + cols)
    a = _agg(d, rows + cols)
    row_keys = list(dict.fromkeys(map(tuple, a[rows].itertuples(index=False, name=None))))
    col_keys = list(dict.fromkeys(map(tuple, a[cols].itertuples(index=False, name=None))))
    if "bytes" in cols:
        col_keys.sort(key=lambda k: k[cols.index("bytes")])
    if "bytes" in rows:
        pos = rows.index("bytes")
        row_keys.sort(key=lambda k: (k[:pos], k[pos]))
    lookup = {tuple(k): (v, n, f, u) for k, v, n, f, u in zip(a[rows + cols].itertuples(index=False, name=None),
                                                              a["value"], a["na"], a["failed"], a["unit"])}
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
            cells.append(_cell(hit[0], bool(hit[1]), bool(hit[2])) if hit else "")
        body.append(cells)
    notes = [n for n in (params_note(constant),) if n] + failed_note(d)
    return Table(title, header, body, notes=notes)


def halocompare_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    halo, constant = with_variant(d[d["test"] == "halo"])
    halo = halo.assign(family=np.where(halo["method"].str.match(r"(rma|neighbor)-"), 1, 0))
    for (nbytes, per, family), h in groups(halo, ["bytes", "periodic", "family"], dropna=False):
        extra = extra_keys(h, ["comm", "neighbors", "method"])
        h = h.assign(row=h[["comm", *extra]].astype(str).agg(" · ".join, axis=1) if extra else h["comm"])
        a = _agg(h, ["row", "neighbors", "method"])
        comms = list(dict.fromkeys(a["row"]))
        methods = list(dict.fromkeys(a["method"]))
        nbrs = sorted(int(x) for x in a["neighbors"].unique() if x >= 0)
        look = {(c, n, m): (v, na, f) for c, n, m, v, na, f in zip(a["row"], a["neighbors"], a["method"], a["value"],
                                                                    a["na"], a["failed"])}
        header = ["comm" + "".join(f" · {SHOWN.get(x, x)}" for x in extra)] + [m for _ in nbrs for m in methods]
        grp = [("", 1)] + [(f"{n} neighbours", len(methods)) for n in nbrs]
        rows, heat = [], []
        for c in comms:
            row, rel = [c], []
            for n in nbrs:
                hits = [look.get((c, float(n), m)) for m in methods]
                good = [x[0] for x in hits if x and not x[1] and not x[2] and math.isfinite(x[0])]
                best = max(good) if good else math.nan
                for x in hits:
                    row.append(_cell(x[0], bool(x[1]), bool(x[2])) if x else "")
                    ok = x is not None and not x[1] and not x[2] and math.isfinite(x[0]) and best > 0
                    rel.append(float(x[0]) / best if ok and x else None)
            rows.append(row)
            heat.append(rel)
        kind = ("Periodic" if per == 1 else "Non-periodic") + (
            " mesh, one-sided and neighbourhood collectives" if family else " mesh")
        per_nbr = f", {fmt_bytes(nbytes)} B per neighbour" if pd.notna(nbytes) else ""
        notes = [("MB/s = 10^6 bytes one process sends per exchange (neighbours × bytes) / time per exchange "
                 "(slowest rank).")]
        if bool(a["na"].any()):
            reasons = sorted(set(h.loc[h["na"], "stop_reason"]))
            notes.append("n/a: " + "; ".join(r.removeprefix("n/a: ") for r in reasons))
        notes += [n for n in (params_note(constant),) if n] + failed_note(h)
        out.append(Table(f"{kind}{per_nbr}: MB/s per process — {ctx}", header, rows, grp, notes, heat=heat))
    one = d[d["test"] == "one-sender"]
    if not one.empty:
        o = _agg(one, ["neighbors", "periodic", "bytes"])
        hal = _agg(halo, ["comm", "neighbors", "periodic", "bytes", "method"]) if not halo.empty else None
        rows = []
        for n, p, b, v, na, f in zip(o["neighbors"], o["periodic"], o["bytes"], o["value"], o["na"], o["failed"]):
            ref, ref_bad = math.nan, False
            if hal is not None:
                m = hal[(hal["comm"] == "world") & (hal["neighbors"] == n) & (hal["periodic"] == p)
                        & (hal["bytes"] == b) & (hal["method"] == "irecv-isend")]
                if not m.empty:
                    ref, ref_bad = float(m["value"].iloc[0]), bool(m["failed"].iloc[0])
            stencil = f"{int(n)}-nbr {'periodic' if p == 1 else 'non-periodic'}"
            ok = math.isfinite(ref) and ref > 0 and not na and not f and not ref_bad
            rows.append([stencil, _cell(v, bool(na), bool(f)), FAILED if ref_bad else fmt(ref) if math.isfinite(ref)
                         else "", fmt(v / ref) if ok else ""])
        out.append(Table(f"One sender (world): one interior process sends alone, MB/s — {ctx}",
                         ["stencil", "one-sender", "halo irecv-isend", "one-sender/halo"], rows,
                         notes=failed_note(one)))
    rest = d[~d["test"].isin(["halo", "one-sender"])]
    if not rest.empty:
        out.append(pivot(rest, KEY, ["bytes"], f"halocompare, other tests — {ctx}"))
    from .halo_sizes import size_tables  # here, not at the top: halo_sizes builds on this module
    out += size_tables(d, ctx)
    return out


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
        t.header[0] = "rank" + t.header[0][1:]
        out.append(t)
    return out


def collectives_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    rows = ["test", "method", "comm", "variant"]  # variant: the params that differ (pivot)
    out = [pivot(d, rows, ["bytes"], f"collectives: time per call in µs, columns = bytes — {ctx}",
                 unit_in_header=False)]
    agg = d[d["agg_mbps"] > 0]  # its median-time figure, scaled like mbps for --stat min
    if not agg.empty:
        out.append(pivot(agg.assign(value=agg["agg_mbps"] * agg["time_median_s"] * 1e6 / agg["value"], unit="MB/s"),
                         rows, ["bytes"], f"collectives: aggregate bandwidth in MB/s (bytes the whole operation "
                         f"moves / time; docs/collectives.md), columns = bytes — {ctx}", unit_in_header=False))
    return out


def rma_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    for (test,), t in groups(d, ["test"], sort=False):
        out.append(pivot(t, ["bytes"], ["method", "comm"], f"rma {test} — {ctx}"))
        t, _ = with_variant(t)
        ref = t[t["method"] == "sendrecv"]
        if ref.empty:
            continue
        # each RMA row against the send/recv reference of the same size and settings
        match = ["bytes", *[k for k in ("variant", "threads") if t[k].nunique(dropna=False) > 1]]
        a = _agg(t, ["method", "comm", *match])
        r = _agg(ref, match)[[*match, "value", "failed"]].rename(columns={"value": "base", "failed": "base_failed"})
        a = a[a["method"] != "sendrecv"].merge(r, on=match, how="left")
        lat = a["unit"].iloc[0] == "µs" if len(a) else True
        a["value"] = a["value"] / a["base"] if lat else a["base"] / a["value"]
        a["failed"] = a["failed"] | a["base_failed"].fillna(False).astype(bool)
        a["na"] = a["na"] | a["value"].isna()
        a["stop_reason"] = ""
        a["params"] = ""
        tb = pivot(a, ["bytes", *match[1:]], ["method", "comm"], f"rma {test}: time ratio RMA / send-recv (< 1: RMA "
                   f"faster) — {ctx}", unit_in_header=False)
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
BLOCK = ["label", "library", "program", "nprocs", "nnodes", "ppn"]


def build(df: pd.DataFrame, stat: str = "median") -> list[Table]:
    """Every table for the rows in df, one block per (label, library, program, nprocs, nnodes,
    ppn).  Repeated runs are resolved first (keys.resolve_duplicates; callers warn)."""
    df, _ = resolve_duplicates(df)
    d = with_values(df, stat)
    out: list[Table] = []
    for _, g in d.groupby(BLOCK, sort=True, dropna=False):
        prog = str(g["program"].iloc[0])
        ctx = _context(g)
        builder = BUILDERS.get(prog)
        made = [pivot(g, KEY, ["bytes"], f"{prog} — {ctx}")] if builder is None else builder(g, ctx)
        for t in made:
            t.program = prog
        out += made
    from .layouts import layout_tables  # (here: layouts builds on this module)

    return out + layout_tables(d)
from . import threads_tables as _studies  # noqa: F401  (registers threads' master-worker, placement tables)
