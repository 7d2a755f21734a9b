"""HTML pages: the style, the page frame, run metadata, the banners (FAILED, SIMULATED, PUBLISHED,
OVERSUBSCRIBED, warnings) and the findings section, shared by report, compare and profile."""

from __future__ import annotations

import base64
import re
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from . import __version__
from .judge import BUSY, OVERSUBSCRIBED, RULE, Finding
from .keys import failed_lines
from .load import Run, short_library
from .plotting import Plot
from .render import esc, heat_colour
from .schema import MIN_REPS_FOR_CI

CSS = """
:root { --fg:#1d2430; --muted:#5b6574; --line:#d9dee6; --accent:#1f5aa6; --bg:#f6f8fb; --win:#e3f4e6;
  --loss:#fbe4e6; --warn:#fff4d6; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); background: var(--bg); }
header.top { background: #14213d; color: #fff; padding: 22px 40px 18px; }
header.top h1 { margin: 0 0 4px; font-size: 22px; font-weight: 600; overflow-wrap: anywhere; }
header.top .sub { color: #c9d3e3; font-size: 13px; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 40px 60px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 16px 22px;
  margin: 18px 0; box-shadow: 0 1px 2px rgba(20,33,61,.05); }
h2 { font-size: 18px; margin: 0 0 12px; color: #14213d; border-bottom: 2px solid var(--accent);
  padding-bottom: 4px; display: inline-block; overflow-wrap: anywhere; }
h3 { font-size: 15px; margin: 18px 0 8px; color: #14213d; }
.banner { padding: 12px 18px; border-radius: 6px; margin: 14px 0; font-weight: 600; }
.banner.sim { background: #6a1b9a; color: #fff; font-size: 16px; letter-spacing: .02em; }
.banner.warn { background: var(--warn); border: 1px solid #e7c66b; color: #5c4500; font-weight: 500; }
.banner.failed { background: #b71c1c; color: #fff; font-size: 16px; }
.banner.failed ul { margin: 6px 0 0; font-weight: 500; font-size: 13px; }
.banner.oversubscribed { background: #e65100; color: #fff; font-size: 16px; letter-spacing: .02em; }
.banner.published { background: #37474f; color: #fff; font-size: 16px; letter-spacing: .02em; }
section#findings ul { margin: 4px 0; padding-left: 20px; }
section#findings li { margin: 4px 0; }
section#findings h3 { margin: 10px 0 4px; }
nav.toc { columns: 2; font-size: 13px; }
nav.toc a { color: var(--accent); text-decoration: none; }
/* a wide table scrolls sideways inside its box; shadows at the edges show that more is there */
.scroll { overflow-x: auto; max-width: 100%;
  background: linear-gradient(to right, #fff 30%, rgba(255,255,255,0)) left / 40px 100% no-repeat local,
    linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) right / 40px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(20,33,61,.25), rgba(20,33,61,0)) left / 14px 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(20,33,61,.25), rgba(20,33,61,0)) right / 14px 100% no-repeat
    scroll; }
table.data { border-collapse: collapse; margin: 8px 0 4px; font-size: 12.5px;
  font-variant-numeric: tabular-nums; }
table.data caption { caption-side: top; text-align: left; font-weight: 600; padding: 4px 0 6px; color: #14213d; }
table.data th, table.data td { border-bottom: 1px solid var(--line); padding: 4px 10px; white-space: nowrap; }
table.data thead th { background: #eef2f8; text-align: right; font-weight: 600; }
table.data thead th:first-child, table.data tbody th { text-align: left; }
table.data thead th.grp { text-align: center; border-bottom: 2px solid var(--accent); }
table.data td { text-align: right; }
table.data tbody tr:hover { background: #f3f6fb; }
table.data td.na { color: var(--muted); font-style: italic; }
table.data td.win { background: var(--win); font-weight: 600; }
table.data td.loss { background: var(--loss); font-weight: 600; }
table.data td.failed { background: #b71c1c; color: #fff; font-weight: 700; letter-spacing: .03em; }
p.legend span { display: inline-block; width: 44px; height: 12px; margin: 0 2px; vertical-align: middle; }
table.meta { border-collapse: collapse; font-size: 12.5px; width: 100%; }
table.meta th, table.meta td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left;
  vertical-align: top; overflow-wrap: anywhere; }
table.meta th { background: #eef2f8; width: 220px; }
table.meta td.diff { background: var(--warn); }
p.note { color: var(--muted); font-size: 12px; margin: 2px 0 12px; }
figure { margin: 14px 0; text-align: center; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
figure figcaption { color: var(--muted); font-size: 12px; }
/* plots one under the other, each at its own size up to the whole width: never shrunk to a column */
.grid { display: flex; flex-direction: column; gap: 8px; }
details summary { cursor: pointer; color: var(--accent); }
code, pre { font-family: "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12px; }
ul.summary li { margin: 3px 0; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 30px; }
"""

# Launcher bookkeeping that differs on every run and says nothing about behaviour.
NOISE = re.compile(r"^(OMPI_MCA_orte_|OMPI_COMM_WORLD_|OMPI_MCA_ess|OMPI_FILE_LOCATION|OMPI_ARGV|OMPI_COMMAND|"
                   r"OMPI_UNIVERSE_SIZE|OMPI_FIRST_RANKS|OMPI_APP_CTX|OMPI_NUM_APP_CTX|OMPI_MCA_initial_wdir|"
                   r"OMPI_MCA_pmix|OMPI_MCA_shmem_RUNTIME|PMIX_|PMI_|MPI_LOCALRANKID|MPI_LOCALNRANKS|"
                   r"SLURM_(JOB|STEP|TASK|PROC|LOCAL|NODEID|SRUN|LAUNCH|PRIO|SUBMIT|TOPOLOGY|CLUSTER|CONF|UMASK|"
                   r"GTIDS|WORKING|SPANK|JOBID|ARRAY)|OMPI_MCA_mpi_oversubscribe|OMPI_MCA_rmaps_base_oversubscribe)")


# Records on <body> how many images decoded (for headless-browser checks; no effect on viewing).
CHECK = ("<script>window.addEventListener('load',function(){var ok=0,bad=0;"
         "Array.prototype.forEach.call(document.images,function(i){if(i.complete&&i.naturalWidth>0)ok++;else bad++;});"
         "document.body.setAttribute('data-images-loaded',ok);document.body.setAttribute('data-images-broken',bad);"
         "});</script>")


def img(p: Plot, caption: str = "") -> str:
    """The plot as a figure; its caption the title's first line unless given."""
    data = base64.b64encode(p.png).decode("ascii")
    return (f'<figure><img alt="{esc(p.title)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(caption or p.title.splitlines()[0])}</figcaption></figure>")


def html_page(title: str, body: str, sub: str = "") -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f'<header class="top"><h1>{esc(title)}</h1><div class="sub">{sub}</div></header>\n'
            f"{body}\n<footer>generated by mpimb-report {__version__} on "
            f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}</footer>{CHECK}</body></html>\n")


def binding(meta: dict[str, Any]) -> str:
    ranks: list[Any] = meta["ranks"] if isinstance(meta.get("ranks"), list) else []
    cpus = [str(r.get("cpus", "?")) for r in ranks if isinstance(r, dict)]
    if not cpus:
        return "unknown"
    if len(set(cpus)) == 1:
        return f"every rank on cpus {cpus[0]} (not bound to a core)" if len(cpus) > 1 else f"cpus {cpus[0]}"
    shown = ", ".join(f"{i}:{c}" for i, c in enumerate(cpus[:16]))
    return shown + (" …" if len(cpus) > 16 else "")


def meta_fields(meta: dict[str, Any]) -> dict[str, str]:
    """The metadata worth showing, flattened to strings (same keys for every run)."""
    mpi = meta.get("mpi") if isinstance(meta.get("mpi"), dict) else {}
    mpi = mpi or {}
    topo = meta.get("topology") if isinstance(meta.get("topology"), dict) else {}
    topo = topo or {}
    comp = meta.get("compiler") if isinstance(meta.get("compiler"), dict) else {}
    comp = comp or {}
    env = meta.get("environment") if isinstance(meta.get("environment"), dict) else {}
    env = env or {}
    opts = meta.get("options") if isinstance(meta.get("options"), dict) else {}
    hosts = meta.get("hosts") if isinstance(meta.get("hosts"), list) else []
    pub = meta.get("source") == "published"
    f = {
        "program": meta.get("program", ""),
        "label": meta.get("label", ""),
        "simulated": "YES — simulated (SimGrid SMPI)" if meta.get("simulated") else "no",
        "source": ("PUBLISHED — " + str((meta.get("reference") or {}).get("citation", "")) if pub
                   else "simulated" if meta.get("simulated") else "measured"),
        "complete": "yes" if meta.get("complete") else "NO — incomplete run",
        "MPI library": short_library(meta),
        "MPI library version": str(mpi.get("library_version", "")).splitlines()[0] if mpi.get("library_version")
        else "",
        "MPI standard": mpi.get("standard_version", ""),
        "thread level (provided)": mpi.get("thread_level_provided", ""),
        "processes": meta.get("nprocs", ""),
        "nodes": "not stated" if pub and not meta.get("nnodes") else meta.get("nnodes", ""),
        "ranks per node": "not stated" if pub and not meta.get("ppn") else meta.get("ppn", ""),
        "hosts": ", ".join(map(str, (hosts or [])[:8])) + (" …" if len(hosts or []) > 8 else ""),
        "binding": binding(meta),
        "topology": (f"{topo.get('packages', '?')} package(s), {topo.get('numa_nodes', '?')} NUMA, "
                     f"{topo.get('cores', '?')} cores, {topo.get('pus', '?')} PUs" if topo else ""),
        "compiler": f"{comp.get('mpicc', '')} {comp.get('version', '')} {comp.get('flags', '')}".strip(),
        "options": ", ".join(f"{k}={v}" for k, v in (opts or {}).items()),
        "suite / commit": f"{meta.get('suite_version', '')} / {meta.get('git_commit', '')}",
        "start (UTC)": meta.get("start_utc", ""),
        "run id": meta.get("run_id", ""),
    }
    for k, v in sorted(env.items()):
        if not NOISE.match(str(k)):
            f[f"env {k}"] = str(v)
    return {k: str(v) for k, v in f.items()}


def meta_table(columns: list[tuple[str, dict[str, Any]]], diff: bool = False) -> str:
    """Metadata side by side: one column per (name, meta); differing cells marked when diff."""
    fields = [meta_fields(m) for _, m in columns]
    keys = list(dict.fromkeys(k for f in fields for k in f))
    out = ['<div class="scroll"><table class="meta"><thead><tr><th></th>']
    out += [f"<th>{esc(n)}</th>" for n, _ in columns]
    out.append("</tr></thead><tbody>")
    for k in keys:
        vals = [f.get(k, "—") for f in fields]
        differs = diff and len(set(vals)) > 1
        if k in ("run id", "start (UTC)") and diff:
            differs = False
        cls = ' class="diff"' if differs else ""
        out.append(f"<tr><th>{esc(k)}</th>" + "".join(f"<td{cls}>{esc(v)}</td>" for v in vals) + "</tr>")
    out.append("</tbody></table></div>")
    if diff:
        out.append('<p class="note">Highlighted: settings that differ between the result sets. Launcher '
                   "bookkeeping variables (OMPI_COMM_WORLD_*, PMIX_*, SLURM_JOB_* …) are left out.</p>")
    return "".join(out)


def banners(runs: list[Run], warns: list[str], df: pd.DataFrame | None = None) -> str:
    """FAILED results first (count and names), then SIMULATED and PUBLISHED sets, then warnings."""
    out = []
    if df is not None:
        n, names = failed_lines(df, limit=12)
        if n:
            more = f"<li>… and {n - len(names)} more</li>" if n > len(names) else ""
            out.append(f'<div class="banner failed">FAILED VERIFICATION: {n} result(s) failed their data check '
                       "(the data received was wrong); they are marked FAILED below and their times are not "
                       "used in any finding.<ul>" + "".join(f"<li>{esc(x)}</li>" for x in names) + more +
                       "</ul></div>")
    sims = [r for r in runs if r.simulated]
    if sims:
        out.append(f'<div class="banner sim">{esc(simulated_banner(sims))}</div>')
    over = [r for r in runs if r.oversubscribed]
    if over:
        out.append(f'<div class="banner oversubscribed">{esc(oversubscribed_banner(over))}</div>')
    busy = [r for r in runs if r.busy]
    if busy:
        out.append(f'<div class="banner oversubscribed">{esc(busy_banner(busy))}</div>')
    pubs = [r for r in runs if r.published]
    if pubs:
        labels = ", ".join(sorted({r.label for r in pubs}))
        cites = sorted({str((r.meta.get("reference") or {}).get("citation", "")) for r in pubs} - {""})
        out.append(f'<div class="banner published">PUBLISHED FIGURES ({esc(labels)}): transcribed from '
                   f"{esc('; '.join(cites) or 'a publication')}, not measured by mpimb; their times are derived from "
                   "the published rates and carry no confidence interval.</div>")
    for w in warns:
        out.append(f'<div class="banner warn">Warning: {esc(w)}</div>')
    return "".join(out)


def oversubscribed_banner(runs: list[Run]) -> str:
    """The loud line about oversubscribed runs (HTML banner, Markdown, text)."""
    names = sorted({f"{r.program} · {r.label} · np{r.meta.get('nprocs', '?')}" for r in runs})
    return (f"OVERSUBSCRIBED: {len(runs)} run(s) had more ranks × threads than cores on a node "
            f"({', '.join(names[:6])}{' …' if len(names) > 6 else ''}): their times are figures of the operating "
            f"system's scheduler, not of MPI; every finding and verdict from them is marked "
            f"{OVERSUBSCRIBED.strip()}")


def simulated_banner(runs: list[Run]) -> str:
    """The line about simulated runs, naming the platform model each rests on (the JSON's platform.name)."""
    labels = ", ".join(sorted({r.label for r in runs}))
    models = sorted({r.platform for r in runs} - {""})
    return (f"SIMULATED RESULTS ({labels}): times come from a SimGrid SMPI model of a platform"
            + (f" ({', '.join(models)}: platforms/, docs/simulate.md)" if models else "") + ", not from real hardware.")


def busy_banner(runs: list[Run]) -> str:
    """The loud line about runs on a busy machine (HTML banner, Markdown, text): the JSON's "busy" and "load"."""
    shares = [f"{r.program} · {r.label}: {100 * float((r.meta.get('load') or {}).get('others_share', 0)):.0f} %"
              for r in runs]
    return (f"BUSY MACHINE: while {len(runs)} run(s) measured, other processes took a share of their ranks' cores "
            f"({', '.join(sorted(shares)[:6])}{' …' if len(shares) > 6 else ''}): their times include the wait for "
            f"the cores; every finding and verdict from them is marked {BUSY.strip()}")


def findings_html(fs: list[Finding]) -> str:
    """The findings section: per machine, one sentence each."""
    if not fs:
        return ""
    out = [('<section id="findings"><h2>Findings</h2><p class="note">Computed from the data (medians); '
           f"{RULE}, otherwise the sentence says it is within the noise; a result of fewer than "
           f"{MIN_REPS_FOR_CI} repetitions judges nothing. FAILED results are left out.</p>")]
    for mach in dict.fromkeys(f.machine for f in fs):
        out.append(f"<h3>{esc(mach)}</h3><ul>" + "".join(f"<li>{esc(f.sentence)}</li>" for f in fs if f.machine == mach)
                   + "</ul>")
    out.append("</section>")
    return "".join(out)


HEAT_LEGEND = ('<p class="note legend">Heat map: each cell coloured by its rate relative to the best in its row and '
               "stencil: " + "".join(f'<span style="background:{heat_colour(f)}"></span>' for f in (0, .25, .5, .75, 1))
               + " 0 % … 100 %.</p>")


def anchor(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
