"""The self-contained HTML report of one result set (findings, tables, plots, metadata)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .findings import findings
from .load import InputError, Run
from .page import HEAT_LEGEND, anchor, banners, findings_html, html_page, img, meta_table
from .plots import all_plots
from .recommend import ranges
from .recommend import table as recommendation
from .render import esc, write_file
from .tables import build
from .timeline import read, sends_plot, timeline_plot


def trace_files(runs: list[Run]) -> list[Path]:
    """The traces the runs wrote (--trace: the JSON's trace.path), found as named or beside the CSV."""
    out = []
    for r in runs:
        t = r.meta.get("trace")
        path = t.get("path") if isinstance(t, dict) else None
        if not isinstance(path, str) or not path:
            continue
        for p in (Path(path), r.csv_path.parent / Path(path).name):
            if p.is_file():
                out.append(p)
                break
    return out


def timelines(runs: list[Run], warns: list[str]) -> str:
    """The section of the runs' traces: each one's timeline and distribution of sends ("" without any);
    a trace that cannot be read is a warning (the report of the results still stands)."""
    figs = []
    for p in trace_files(runs):
        try:
            t = read(p)
        except InputError as e:
            warns.extend(e.problems)
            continue
        figs.append(img(timeline_plot(t), f"Timeline: {p.name}") + img(sends_plot(t), f"Distribution of sends: {p.name}"))
    if not figs:
        return ""
    return ('<section id="timelines"><h2>Timelines</h2><p class="note">Traced with --trace (docs/profile.md, '
            '"Trace mode"): ranks against time, each MPI call a bar, each message an arrow from its send to its '
            'receive\'s completion.</p><div class="grid">' + "".join(figs) + "</div></section>")


def write_report(runs: list[Run], df: pd.DataFrame, out: Path, stat: str, warns: list[str]) -> None:
    """The page of runs; df: keys.prepared(runs)'s frame (warns: the loader's and its repeated-run warnings)."""
    tables = build(df, stat)
    plots = all_plots(df, stat)
    programs = list(dict.fromkeys(df["program"]))
    labels = sorted(set(df["label"]))
    libs = sorted(set(df["library"]))
    nprocs = sorted({int(x) for x in df["nprocs"].dropna()})
    sim = " — SIMULATED" if any(r.simulated for r in runs) else ""
    sim += " — PUBLISHED FIGURES" if any(r.published for r in runs) else ""
    nfail = int(df["failed"].sum())
    fail = f" — {nfail} FAILED" if nfail else ""
    title = f"mpimb report: {', '.join(labels)}{sim}{fail}"
    sub = esc(f"{', '.join(programs)} · {', '.join(libs)} · {', '.join(map(str, nprocs))} ranks · "
              f"{len(df)} results · statistic: {stat}")
    traced = timelines(runs, warns := list(warns))
    body = ["<main>", banners(runs, warns, df), findings_html(findings(df, runs=runs))]
    toc = ['<section><h2>Contents</h2><nav class="toc"><ul>']
    if len(body[-1]):
        toc.append('<li><a href="#findings">Findings</a></li>')
    secs = []
    rec = recommendation(ranges(df))
    if rec:  # the halo exchange to use, from the halocompare results (docs/report.md, "Recommendation")
        toc.append('<li><a href="#recommendation">Recommendation</a></li>')
        secs.append(f'<section id="recommendation"><h2>Recommendation</h2>{rec.html()}</section>')
    for prog in programs:
        pt = [t for t in tables if t.program == prog]
        pp = [p for p in plots if f"-{prog}-" in p.name]
        toc.append(f'<li><a href="#{anchor(prog)}">{esc(prog)}</a> ({len(pt)} tables, {len(pp)} plots)</li>')
        s = [f'<section id="{anchor(prog)}"><h2>{esc(prog)}</h2>']
        if any(t.heat for t in pt):
            s.append(HEAT_LEGEND)
        s += [t.html() for t in pt]
        if pp:
            s.append('<h3>Plots</h3><div class="grid">' + "".join(img(p) for p in pp) + "</div>")
        s.append("</section>")
        secs.append("".join(s))
    if traced:
        toc.append('<li><a href="#timelines">Timelines</a></li>')
        secs.append(traced)
    toc.append('<li><a href="#metadata">Run metadata</a></li></ul></nav></section>')
    body += toc + secs
    cols = [(f"{r.program} · {r.label} · np{r.meta.get('nprocs', '?')}"
             + (f" · {r.meta['mpi'].get('thread_level_provided', '')}" if r.program == "threads" and
                isinstance(r.meta.get("mpi"), dict) else ""), r.meta) for r in runs]
    body.append('<section id="metadata"><h2>Run metadata</h2>' + meta_table(cols[:12]) +
                (f'<p class="note">{len(cols) - 12} more run(s) not shown.</p>' if len(cols) > 12 else "")
                + "</section></main>")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_file(out, html_page(title, "".join(body), sub))
