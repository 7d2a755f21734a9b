"""compare: two or more result sets (machines, MPI libraries, dates) in one
self-contained HTML report plus a Markdown twin and a CSV of every ratio.

For each test configuration present in set A and set X the ratio is
time_X / time_A (< 1: X is faster).  Its 95 % interval is the conservative
quotient of the two medians' confidence intervals, [lo_X / hi_A, hi_X / lo_A];
a ratio is marked significant (*) when that interval excludes 1, i.e. when the
two confidence intervals do not overlap."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .load import Run, frame, groups, short_library
from .plots import Plot, compare_plots
from .report import banners, esc, html_page, img, meta_table
from .tables import Table, fmt, fmt_bytes, rate_mask

VARIANT = ["method", "comm", "neighbors", "periodic", "threads", "tl", "nprocs"]
KEY = ["program", "test", *VARIANT, "bytes"]


def set_names(sets: list[tuple[str, list[Run]]]) -> list[str]:
    """Label(s) of each set; where names collide, the MPI library, then the position is added."""
    names = ["+".join(sorted({r.label for r in runs})) or Path(p).name for p, runs in sets]
    libs = [" / ".join(sorted({short_library(r.meta) for r in runs})) for _, runs in sets]
    names = [f"{n} ({lib})" if names.count(n) > 1 else n for n, lib in zip(names, libs)]
    return [f"{n} #{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def aggregate(df: pd.DataFrame, stat: str) -> pd.DataFrame:
    """One row per (set, key): the time for stat, the CI of the median, n/a flag."""
    d = df
    d["tl"] = np.where(d["program"] == "threads", d["thread_level"], "")
    for k in ("neighbors", "periodic", "threads", "bytes", "nprocs"):
        d[k] = d[k].fillna(-1.0)
    d["t"] = d["time_min_s"] if stat == "min" else d["time_median_s"]
    if not d.duplicated(["set", *KEY]).any():  # the usual case: one row per configuration and set
        return pd.DataFrame({**{k: d[k] for k in ["set", *KEY]}, "t": d["t"], "lo": d["time_ci_lo_s"],
                             "hi": d["time_ci_hi_s"], "na": d["na"], "sent": d["sent_bytes"]})
    g = d.groupby(["set", *KEY], sort=False, observed=True)
    a = g.agg(t=("t", "median"), lo=("time_ci_lo_s", "min"), hi=("time_ci_hi_s", "max"), na=("na", "all"),
              sent=("sent_bytes", "median"))
    return a.reset_index()


def plot_frame(a: pd.DataFrame) -> pd.DataFrame:
    """The aggregated rows as plots want them: value in MB/s (bandwidth tests) or µs, and n/a flag."""
    rates = rate_mask(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(rates, a["sent"] / a["t"] / 1e6, a["t"] * 1e6)
    return a.assign(value=value, unit=np.where(rates, "MB/s", "µs"))


def ratios(a: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Wide frame: key, t/lo/hi per set, and ratio/ratio_lo/ratio_hi/sig per non-reference set."""
    base = a[a["set"] == names[0]].drop(columns=["set"]).set_index(KEY)
    out = base[["t", "lo", "hi", "na"]].add_suffix(f"@{names[0]}")
    for n in names[1:]:
        b = a[a["set"] == n].drop(columns=["set"]).set_index(KEY)[["t", "lo", "hi", "na"]].add_suffix(f"@{n}")
        out = out.join(b, how="outer")
    A = names[0]
    for n in names[1:]:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = out[f"t@{n}"] / out[f"t@{A}"]
            lo = out[f"lo@{n}"] / out[f"hi@{A}"]
            hi = out[f"hi@{n}"] / out[f"lo@{A}"]
        ok = out[f"na@{A}"].eq(False) & out[f"na@{n}"].eq(False)
        out[f"ratio@{n}"] = r.where(ok)
        out[f"rlo@{n}"] = lo.where(ok)
        out[f"rhi@{n}"] = hi.where(ok)
        out[f"sig@{n}"] = ok & ((out[f"rhi@{n}"] < 1) | (out[f"rlo@{n}"] > 1))
    return out.reset_index()


def variant_name(row: pd.Series) -> str:
    parts = []
    for k in VARIANT:
        v = row[k]
        if isinstance(v, float) and v < 0 or v in ("", None):
            continue
        if k == "neighbors":
            parts.append(f"{int(v)}-nbr")
        elif k == "periodic":
            parts.append("periodic" if v == 1 else "non-periodic")
        elif k == "threads":
            if v != 1:
                parts.append(f"{int(v)} thr")
        elif k == "nprocs":
            parts.append(f"np{int(v)}")
        else:
            parts.append(str(v))
    return " ".join(parts)


def ratio_cell(r: float, lo: float, hi: float, sig: bool) -> str:
    if not math.isfinite(r):
        return ""
    mark = ("↓" if r < 1 else "↑") + f"{r:.3g}*" if sig else f"{r:.3g}"
    return mark


def ci_cell(lo: float, hi: float) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return f"{lo:.3g}–{hi:.3g}"


def value_cell(t: float, na: object) -> str:
    if na is True:
        return "n/a"
    return fmt(t * 1e6) if math.isfinite(t) else "—"


def ratio_tables(w: pd.DataFrame, names: list[str], max_rows: int) -> list[Table]:
    out: list[Table] = []
    A = names[0]
    for (prog, test), g in groups(w, ["program", "test"]):
        g = g.copy()
        n_all = len(g)
        if n_all > max_rows:
            score = np.zeros(len(g))
            for n in names[1:]:
                lr = np.abs(np.log(g[f"ratio@{n}"].to_numpy(float)))
                score = np.fmax(score, np.where(g[f"sig@{n}"].to_numpy(bool), lr + 100, np.nan_to_num(lr)))
            g = g.iloc[np.argsort(-score, kind="stable")[:max_rows]]
        header = ["configuration", "bytes", f"{A} [µs]"]
        grp: list[tuple[str, int]] = [("", 2), (A, 1)]
        for n in names[1:]:
            header += [f"{n} [µs]", "time ratio", "95% CI"]
            grp.append((f"{n} / {A}", 3))
        rows = []
        for _, r in g.iterrows():
            row = [variant_name(r) or "—", fmt_bytes(r["bytes"]) if r["bytes"] >= 0 else "",
                   value_cell(r[f"t@{A}"], r[f"na@{A}"])]
            for n in names[1:]:
                row += [value_cell(r[f"t@{n}"], r[f"na@{n}"]),
                        ratio_cell(r[f"ratio@{n}"], r[f"rlo@{n}"], r[f"rhi@{n}"], bool(r[f"sig@{n}"])),
                        ci_cell(r[f"rlo@{n}"], r[f"rhi@{n}"])]
            rows.append(row)
        notes = []
        if n_all > max_rows:
            notes.append(f"{max_rows} of {n_all} configurations shown (significant and largest differences "
                         f"first); --csv FILE writes every ratio.")
        out.append(Table(f"{prog} {test}: time, and ratio to {A} (< 1: faster than {A})", header, rows, grp,
                         notes, kind="ratio", program=str(prog)))
    return out


def per_test(w: pd.DataFrame, names: list[str]) -> Table:
    """Per (program, test): geometric-mean ratio and counts of significant wins/losses."""
    A = names[0]
    header = ["program test"]
    groups: list[tuple[str, int]] = [("", 1)]
    cols = {}
    for n in names[1:]:
        r = w[f"ratio@{n}"].where(w[f"ratio@{n}"] > 0)
        sig = w[f"sig@{n}"]
        cols[n] = w.assign(lr=np.log(r), fast=sig & (r < 1), slow=sig & (r > 1), ok=r.notna()).groupby(
            ["program", "test"], sort=True).agg(lr=("lr", "mean"), fast=("fast", "sum"), slow=("slow", "sum"),
                                                ok=("ok", "sum"))
        header += ["geo-mean ratio", "faster*", "slower*", "common"]
        groups.append((f"{n} / {A}", 4))
    keys = list(dict.fromkeys(map(tuple, w[["program", "test"]].drop_duplicates().sort_values(
        ["program", "test"]).itertuples(index=False, name=None))))
    rows = []
    for k in keys:
        row = [f"{k[0]} {k[1]}"]
        for n in names[1:]:
            c = cols[n].loc[k]
            gm = float(np.exp(c["lr"])) if math.isfinite(c["lr"]) else math.nan
            mark = ""
            if math.isfinite(gm) and (c["fast"] or c["slow"]):
                mark = ("↓" if gm < 1 else "↑") + "*" if (gm < 1 and c["fast"] > c["slow"]) or (
                    gm > 1 and c["slow"] > c["fast"]) else ""
            cell = (mark[:1] + f"{gm:.3g}" + mark[1:]) if math.isfinite(gm) else ""
            row += [cell, str(int(c["fast"])), str(int(c["slow"])), str(int(c["ok"]))]
        rows.append(row)
    return Table(f"Per test: geometric mean of time ratios to {A} (< 1: faster)", header, rows, groups,
                 ["faster*/slower*: configurations whose 95% CIs do not overlap."], kind="ratio")


def summary(w: pd.DataFrame, names: list[str], top: int = 5) -> list[str]:
    """Sentences: overall geometric mean, counts, largest wins and losses per set."""
    A = names[0]
    lines: list[str] = []
    for n in names[1:]:
        r = w[f"ratio@{n}"]
        ok = r.notna() & (r > 0)
        if not ok.any():
            lines.append(f"{n}: no configuration measured in both {n} and {A}.")
            continue
        gm = float(np.exp(np.log(r[ok]).mean()))
        sig = w[f"sig@{n}"] & ok
        faster = int((sig & (r < 1)).sum())
        slower = int((sig & (r > 1)).sum())
        only_a = int((w[f"na@{A}"].notna() & w[f"na@{n}"].isna()).sum())
        only_n = int((w[f"na@{n}"].notna() & w[f"na@{A}"].isna()).sum())
        speed = f"{1 / gm:.2f}× faster" if gm < 1 else f"{gm:.2f}× slower"
        lines.append(f"{n} vs {A}: over {int(ok.sum())} common configurations {n} is {speed} (geometric mean of "
                     f"the time ratios); significantly faster in {faster}, slower in {slower}"
                     + (f"; {only_a} only in {A}, {only_n} only in {n}" if only_a or only_n else "") + ".")
        d = w[sig].assign(lr=np.log(r[sig]))
        for word, part in (("Win", d.nsmallest(top, "lr")), ("Loss", d.nlargest(top, "lr"))):
            part = part[part["lr"] < 0] if word == "Win" else part[part["lr"] > 0]
            for _, x in part.iterrows():
                what = f"{x['program']} {x['test']} {variant_name(x)}".strip()
                size = f", {fmt_bytes(x['bytes'])} B" if x["bytes"] >= 0 else ""
                ratio = x[f"ratio@{n}"]
                fac = f"{1 / ratio:.2f}× faster" if ratio < 1 else f"{ratio:.2f}× slower"
                lines.append(f"  {word}: {what}{size}: {n} {fac} "
                             f"(ratio {ratio:.3g}, 95% CI {ci_cell(x[f'rlo@{n}'], x[f'rhi@{n}'])})")
    return lines


def write_compare(sets: list[tuple[str, list[Run]]], out: Path, stat: str, warns: list[str],
                  max_rows: int = 40, max_plots: int = 12, csv_path: Path | None = None) -> Path:
    names = set_names(sets)
    parts = []
    for name, (_, runs) in zip(names, sets):
        f = frame(runs)
        f["set"] = name
        parts.append(f)
    df = pd.concat(parts, ignore_index=True)
    a = aggregate(df, stat)
    w = ratios(a, names)
    out.parent.mkdir(parents=True, exist_ok=True)
    if csv_path is not None:
        keep = [c for c in w.columns if not c.startswith(("lo@", "hi@"))]
        w[keep].rename(columns={"tl": "thread_level"}).to_csv(csv_path, index=False)
    tables = [per_test(w, names)] + ratio_tables(w, names, max_rows)
    summ = summary(w, names)
    plots = compare_plots(plot_frame(a), stat, names, max_plots)
    allruns = [r for _, runs in sets for r in runs]
    sim = any(r.simulated for r in allruns)
    metas = meta_columns(sets, names)
    _write_html(out, names, tables, summ, plots, metas, allruns, warns, stat, sim, csv_path)
    md = out.with_suffix(".md")
    _write_md(md, names, tables, summ, plots, metas, stat, sim, csv_path)
    return md


def meta_columns(sets: list[tuple[str, list[Run]]], names: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """One metadata column per set: its first run of the most common program (halocompare preferred)."""
    cols = []
    for name, (_, runs) in zip(names, sets):
        progs = [r.program for r in runs]
        pick = next((r for r in runs if r.program == "halocompare"), None) or max(runs, key=lambda r: progs.count(
            r.program))
        cols.append((name, pick.meta))
    return cols


def _every(csv_path: Path | None) -> str:
    return f"Every ratio: {csv_path.name}." if csv_path else "Every ratio: run compare with --csv FILE."


def _write_html(out: Path, names: list[str], tables: list[Table], summ: list[str], plots: list[Plot],
                metas: list[tuple[str, dict[str, Any]]], runs: list[Run], warns: list[str], stat: str, sim: bool,
                csv_path: Path | None) -> None:
    title = "mpimb comparison: " + " vs ".join(names) + (" — SIMULATED" if sim else "")
    sub = esc(f"reference (A) = {names[0]} · statistic: {stat} · ratios are time(X) / time(A): < 1 means X is "
              f"faster; * = the 95% confidence intervals do not overlap")
    body = ["<main>", banners(runs, warns), '<section id="summary"><h2>Summary</h2><ul class="summary">']
    for line in summ:
        li = html.escape(line.strip())
        body.append(f"<li>{li}</li>" if not line.startswith("  ") else f'<li style="margin-left:24px">{li}</li>')
    body.append("</ul></section>")
    body.append('<section id="metadata"><h2>Machines and settings</h2>' + meta_table(metas, diff=True) +
                "</section>")
    if plots:
        body.append('<section id="plots"><h2>Overlaid results</h2><div class="grid">' +
                    "".join(img(p) for p in plots) + "</div></section>")
    body.append('<section id="ratios"><h2>Ratio tables</h2><p class="note">Green ↓: significantly faster than '
                f"{esc(names[0])}; red ↑: significantly slower. {esc(_every(csv_path))}"
                "</p>")
    body += [f'<div class="scroll">{t.html()}</div>' for t in tables]
    body.append("</section></main>")
    out.write_text(html_page(title, "".join(body), sub), encoding="utf-8")


def _write_md(md: Path, names: list[str], tables: list[Table], summ: list[str], plots: list[Plot],
              metas: list[tuple[str, dict[str, Any]]], stat: str, sim: bool, csv_path: Path | None) -> None:
    from .report import meta_fields

    pdir = Path(f"{md.with_suffix('')}-plots")
    lines = [f"# mpimb comparison: {' vs '.join(names)}", ""]
    if sim:
        lines += ["> **SIMULATED RESULTS** in at least one set (SimGrid SMPI), not real hardware.", ""]
    lines += [(f"Reference (A) = {names[0]}; statistic: {stat}; ratios are time(X)/time(A), < 1 = faster; "
              "`*` = the 95% confidence intervals do not overlap."), "", "## Summary", ""]
    lines += [("    - " if s.startswith("  ") else "- ") + s.strip() for s in summ]
    lines += ["", "## Machines and settings", ""]
    fields = [meta_fields(m) for _, m in metas]
    keys = list(dict.fromkeys(k for f in fields for k in f))
    lines.append("| | " + " | ".join(n for n, _ in metas) + " |")
    lines.append("|---|" + "---|" * len(metas))
    for k in keys:
        vals = [f.get(k, "—").replace("|", "\\|") for f in fields]
        mark = " **(differs)**" if len(set(vals)) > 1 and k not in ("run id", "start (UTC)") else ""
        lines.append(f"| {k}{mark} | " + " | ".join(vals) + " |")
    if plots:
        pdir.mkdir(parents=True, exist_ok=True)
        lines += ["", "## Overlaid results", ""]
        for p in plots:
            (pdir / f"{p.name}.png").write_bytes(p.png)
            lines.append(f"![{p.title.splitlines()[0]}]({pdir.name}/{p.name}.png)")
    lines += ["", "## Ratio tables", "", _every(csv_path), ""]
    for t in tables:
        lines += [t.markdown()]
    md.write_text("\n".join(lines) + "\n", encoding="utf-8")
