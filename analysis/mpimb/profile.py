"""mpimb-report profile: what an application's MPI calls got (a libmpimb-prof.so profile,
docs/profile.md) and, given micro-benchmark results of the same machine, what the machine can
do for the same calls at the same sizes — the achieved / achievable table.

A profile row (program 'profile') is one MPI function x power-of-two size bin; its time columns
are each rank's total seconds in the call, aggregated over ranks; the row with bytes empty totals
every size.  The JSON's 'profile' object holds the per-rank wall and MPI times and each call's
family; the communication matrix is a CSV of its own beside the results (schema 'matrix').

The report opens with findings (judge.Finding, judge's rules): where the application's time goes,
the calls and sizes that lose most against what the micro-benchmarks achieve, and whether the
application and the benchmarks ran under the same conditions (judge.unlike)."""

from __future__ import annotations

import csv
import io
import shlex
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import schema
from .judge import MIN_REPS, Finding, few_reps, unlike
from .judge import text as findings_text
from .load import InputError, Run, frame, short_library
from .page import banners, findings_html, html_page, meta_table
from .render import WIDTH, Table, csv_cell, esc, fmt, fmt_bytes, md_text, write_file

# Blocking sends whose time per call is comparable with pingpong's one-way latency at the same size.
P2P_BLOCKING = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
# The families whose time counts for the aggregate point-to-point rate (sends, receives, waits).
P2P_FAMILIES = {"p2p", "p2p-nonblocking", "persistent", "completion", "probe"}
SHADES = " .:-=+*#%@"  # the text heat map, light to dark
COMMAND_MAX = 240  # characters of the application's command line in a title; a longer one: head … tail


def _middle(s: str, n: int) -> str:
    """s, or its head and tail cut at spaces around ' … ' when longer than n characters."""
    if len(s) <= n:
        return s
    head, tail = s[: 2 * n // 3], s[len(s) - n // 3:]
    head = head[: head.rfind(" ")] if " " in head else head
    tail = tail[tail.find(" ") + 1:] if " " in tail else tail
    return f"{head} … {tail}"


@dataclass
class Profile:
    """One profiled run: its rows, metadata and communication matrix."""

    run: Run
    rows: pd.DataFrame
    matrix: pd.DataFrame
    families: dict[str, str]
    wall: np.ndarray  # per rank: seconds from MPI_Init's return to MPI_Finalize
    mpi: np.ndarray  # per rank: seconds in wrapped calls

    @property
    def nprocs(self) -> int:
        return int(self.run.meta.get("nprocs", len(self.wall)))

    @property
    def command(self) -> str:
        """The application's whole command line as a shell would take it (the program's file name, not
        its path), its middle left out past COMMAND_MAX characters."""
        argv = self.run.meta.get("command_line")
        words = [str(c) for c in argv] if isinstance(argv, list) else []
        if words:
            words[0] = Path(words[0]).name
        return _middle(shlex.join(words), COMMAND_MAX)

    @property
    def title(self) -> str:
        """The application, the machine and the run: the heading of its section."""
        return f"profile of `{self.command}` — {self.context}, {self.run.meta.get('nnodes', '?')} node(s)"

    def heading(self, fmt_name: str) -> str:
        """The title as the first line(s) of the profile's section in a text format."""
        if fmt_name == "markdown":  # no code span: inside one the escaped entities would show
            return f"**{md_text(self.title.replace('`', ''))}**\n"
        if fmt_name == "latex":
            return "% " + " ".join(self.title.split()) + "\n"
        if fmt_name == "csv":
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow([csv_cell("# " + self.title)])
            return buf.getvalue()
        return textwrap.fill(self.title, WIDTH, subsequent_indent="  ", break_long_words=False,
                             break_on_hyphens=False) + "\n"

    @property
    def context(self) -> str:
        return f"{self.run.label} · {short_library(self.run.meta)} · {self.nprocs} ranks"


def read_matrix(run: Run) -> pd.DataFrame:
    """The run's communication matrix (columns of schema 'matrix'); empty when the run has none."""
    cols = schema.columns("matrix")
    name = (run.meta.get("profile") or {}).get("matrix_csv")
    if not name:
        return pd.DataFrame(columns=cols)
    path = run.csv_path.with_name(str(name))
    try:
        m = pd.read_csv(path, dtype={"run_id": "string", "kind": "string"}, keep_default_na=False)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: cannot read the communication matrix: {e}") from e
    if list(m.columns) != cols:
        raise InputError(f"{path}:1: not a communication matrix (columns {', '.join(cols)})")
    return m


def profiles(runs: list[Run]) -> list[Profile]:
    out = []
    for r in runs:
        if r.program != "profile":
            continue
        p = r.meta.get("profile") if isinstance(r.meta.get("profile"), dict) else None
        if p is None:
            raise InputError(f"{r.csv_path.with_suffix('.json')}: a profile's metadata has no 'profile' object")
        d = frame([r])
        out.append(Profile(r, d, read_matrix(r), dict(p.get("families", {})),
                           np.asarray(p.get("wall_seconds", []), float), np.asarray(p.get("mpi_seconds", []), float)))
    return out


def _totals(p: Profile) -> pd.DataFrame:
    """Each call's row over all sizes (time in the call), with its family and per-call figures."""
    t = p.rows[p.rows["bytes"].isna() & (p.rows["method"] == "")].copy()
    t["family"] = t["test"].map(p.families).fillna("")
    t["per_call_s"] = t["time_mean_s"] * p.nprocs / t["calls"]
    return t


def _bins(p: Profile, method: str = "") -> pd.DataFrame:
    b = p.rows[p.rows["bytes"].notna() & (p.rows["method"] == method)].copy()
    b["family"] = b["test"].map(p.families).fillna("")
    b["per_call_s"] = b["time_mean_s"] * p.nprocs / b["calls"]
    b["mean_bytes"] = b["total_bytes"] / b["calls"]
    return b


def _col(d: pd.DataFrame, c: str) -> list[float]:
    return [float(v) for v in d[c].to_numpy(float)]


def time_table(p: Profile) -> Table:
    t = _totals(p).sort_values("time_mean_s", ascending=False)
    wall = float(p.wall.mean()) if p.wall.size else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        t["pct"] = 100 * t["time_mean_s"] / wall
        t["imb"] = t["time_max_s"] / t["time_mean_s"]
    rows = [[str(call), str(fam), f"{calls:.0f}", fmt_bytes(nb), fmt(mean), fmt(mx), f"{slow:.0f}", fmt(pc), fmt(i),
             fmt(pc_s * 1e6)]
            for call, fam, calls, nb, mean, mx, slow, pc, i, pc_s in zip(
                t["test"], t["family"], *(_col(t, c) for c in ("calls", "total_bytes", "time_mean_s", "time_max_s",
                                                               "slowest_rank", "pct", "imb", "per_call_s")))]
    mpi_mean = float(p.mpi.mean()) if p.mpi.size else float("nan")
    mpi_max = float(p.mpi.max()) if p.mpi.size else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        rows.append(["all MPI", "", f"{t['calls'].sum():.0f}", "", fmt(mpi_mean), fmt(mpi_max),
                     str(int(np.argmax(p.mpi))) if p.mpi.size else "", fmt(100 * mpi_mean / wall),
                     fmt(mpi_max / mpi_mean), ""])
    wall_max = float(p.wall.max()) if p.wall.size else float("nan")
    return Table(f"Time in MPI by call — {p.context}",
                 ["call", "family", "calls", "bytes", "mean s/rank", "max s/rank", "slowest rank", "% of wall",
                  "max/mean", "µs/call"], rows,
                 notes=[(f"wall time per rank (MPI_Init to MPI_Finalize): mean {fmt(wall)} s, max "
                         f"{fmt(wall_max)} s; % of wall = mean s/rank over mean wall; max/mean: the imbalance over "
                         "ranks of the time in the call; µs/call: the mean over every call of every rank.")],
                 program="profile")


def size_table(p: Profile) -> Table:
    b = _bins(p)
    pv = b.pivot_table(index="test", columns="bytes", values="calls", aggfunc="sum", sort=True)
    pv = pv.reindex(_totals(p).sort_values("time_mean_s", ascending=False)["test"]).dropna(how="all")
    rows = [[str(call), *("" if np.isnan(v) else f"{v:.0f}" for v in vals)]
            for call, vals in zip(pv.index, pv.to_numpy(float))]
    return Table(f"Message sizes: calls per size bin [b, 2b) — {p.context}",
                 ["call", *(fmt_bytes(float(c)) for c in pv.columns)], rows,
                 notes=[("point-to-point: the message (receives: the posted buffer); collectives: the block one "
                         "process brings, as in the collectives benchmark; start-all: every request started.")],
                 program="profile")


def collective_table(p: Profile) -> Table | None:
    t = _totals(p)
    t = t[t["family"] == "collective"].copy()
    if t.empty:
        return None
    sync = p.rows[p.rows["bytes"].isna() & (p.rows["method"] == "sync-wait")].set_index("test")
    w = sync.reindex(t["test"])
    with np.errstate(invalid="ignore", divide="ignore"):
        t["imb"] = t["time_max_s"] / t["time_mean_s"]
    rows = [[str(call), f"{calls:.0f}", fmt(mean), fmt(mx), f"{slow:.0f}", fmt(i), fmt(wm), fmt(wx),
             "" if np.isnan(wr) else f"{wr:.0f}"]
            for call, calls, mean, mx, slow, i, wm, wx, wr in zip(
                t["test"], *(_col(t, c) for c in ("calls", "time_mean_s", "time_max_s", "slowest_rank", "imb")),
                *(_col(w, c) for c in ("time_mean_s", "time_max_s", "slowest_rank")))]
    if sync.empty:
        notes = [("no wait columns: run with MPIMB_PROF_SYNC=1 to separate waiting for the others from the "
                  "collective itself (here the time in the call includes it).")]
    else:
        notes = [("wait = the FPMPI-style barrier before each blocking collective (MPIMB_PROF_SYNC=1): how long a "
                  "rank waited for the others; the time in the call then excludes it.")]
    return Table(f"Imbalance at collectives — {p.context}",
                 ["call", "calls", "mean s/rank", "max s/rank", "slowest rank", "max/mean", "wait mean s",
                  "wait max s", "waited most"], rows, notes=notes, program="profile")


def matrix_grid(p: Profile, value: str = "bytes") -> pd.DataFrame:
    """Rank x peer (all kinds summed), every world rank present."""
    n = p.nprocs
    g = p.matrix.pivot_table(index="rank", columns="peer", values=value, aggfunc="sum", fill_value=0)
    return g.reindex(index=range(n), columns=range(n), fill_value=0)


def matrix_text(p: Profile) -> str:
    if p.matrix.empty:
        return "Communication matrix: no point-to-point or one-sided traffic.\n"
    g = matrix_grid(p)
    top = p.matrix.sort_values("bytes", ascending=False).head(10)
    t = Table(f"Communication matrix: largest pairs (of {len(p.matrix)}) — {p.context}",
              ["rank", "peer", "kind", "messages", "bytes"],
              [[str(a), str(b), str(k), str(m), str(n)]
               for a, b, k, m, n in zip(top["rank"], top["peer"], top["kind"], top["messages"], top["bytes"])],
              program="profile")
    out = t.text()
    if p.nprocs <= 64:
        v = g.to_numpy(float)
        lv = np.where(v > 0, np.log10(np.maximum(v, 1)), np.nan)
        lo, hi = np.nanmin(lv), np.nanmax(lv)
        idx = np.where(np.isnan(lv), 0, 1 + np.floor((lv - lo) / max(hi - lo, 1e-9) * (len(SHADES) - 2)))
        chars = np.asarray(list(SHADES))[idx.astype(int)]
        out += ("Heat map, bytes sent rank (row) -> peer (column), log scale: ' ' none, '.' least ... '@' most "
                f"({fmt_bytes(float(v[v > 0].min()))} .. {fmt_bytes(float(v.max()))} B)\n")
        out += "".join(f"{r:>4} |{''.join(c)}|\n" for r, c in enumerate(chars))
    return out


def heatmap_png(p: Profile) -> bytes | None:
    if p.matrix.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    v = matrix_grid(p).to_numpy(float)
    fig, ax = plt.subplots(figsize=(5.6, 4.6))
    im = ax.imshow(np.where(v > 0, v, np.nan), cmap="viridis", origin="upper",
                   norm=LogNorm(vmin=max(v[v > 0].min(), 1), vmax=max(v.max(), 2)))
    fig.colorbar(im, ax=ax, label="bytes sent")
    if p.nprocs <= 32:
        ax.set_xticks(range(p.nprocs))
        ax.set_yticks(range(p.nprocs))
    ax.set_xlabel("peer (world rank)")
    ax.set_ylabel("rank (world rank)")
    ax.grid(False)
    ax.set_title(f"communication matrix: {p.run.label}, {p.nprocs} ranks", fontsize=10)
    fig.tight_layout()
    b = io.BytesIO()
    fig.savefig(b, format="png", dpi=100)
    plt.close(fig)
    return b.getvalue()


# ---------------------------------------------------------------- achieved / achievable

def _bench_for(bench: pd.DataFrame, program: str, test: str, nprocs: int | None, placement: str | None
               ) -> pd.Series:
    """The benchmark's median time per size (sorted by size)."""
    # several runs of the same configuration: the median of their medians per size
    return _bench_rows(bench, program, test, nprocs, placement).groupby("bytes")["time_median_s"].median()


def _bench_rows(bench: pd.DataFrame, program: str, test: str, nprocs: int | None, placement: str | None
                ) -> pd.DataFrame:
    """The benchmark rows a comparison reads."""
    b = bench[(bench["program"] == program) & (bench["test"] == test) & ~bench["na"] & bench["bytes"].notna()]
    if program == "collectives":
        b = b[b["method"] == "library"]
    if nprocs is not None:
        b = b[b["nprocs"] == nprocs]
    if placement is not None and (b["comm"] == placement).any():
        b = b[b["comm"] == placement]
    return b


def _achievable(b: pd.Series, sizes: pd.Series) -> np.ndarray:
    """Benchmark time at each size, linear between its neighbouring sizes (alpha + beta n); NaN outside."""
    x = sizes.to_numpy(float)
    if b.empty:
        return np.full(len(x), np.nan)
    return np.interp(x, b.index.to_numpy(float), b.to_numpy(float), left=np.nan, right=np.nan)


def achieved(p: Profile, bench: pd.DataFrame) -> pd.DataFrame:
    """One row per compared call and size bin: the application's time per call, the benchmark's at the
    same mean size, and what they are compared against."""
    placement = "intra" if int(p.run.meta.get("nnodes", 1) or 1) <= 1 else "inter"
    bins = _bins(p)
    parts = []
    # blocking sends: time per call against pingpong's one-way latency at the same size
    p2p = bins[bins["test"].isin(P2P_BLOCKING)].assign(against=f"pingpong latency [{placement}]")
    p2p["t_bench"] = _achievable(_bench_for(bench, "pingpong", "latency", None, placement), p2p["mean_bytes"])
    p2p["reps"] = _bench_rows(bench, "pingpong", "latency", None, placement)["reps"].min()
    parts.append(p2p)
    # blocking collectives: against the collectives benchmark of the same call at the same process count
    for call, g in bins[bins["family"] == "collective"].groupby("test", sort=False):
        name = str(call).removeprefix("MPI_").lower()
        g = g.assign(against=f"collectives {name} at {p.nprocs} ranks")
        g["t_bench"] = _achievable(_bench_for(bench, "collectives", name, p.nprocs, None), g["mean_bytes"])
        g["reps"] = _bench_rows(bench, "collectives", name, p.nprocs, None)["reps"].min()
        parts.append(g)
    a = pd.concat(parts, ignore_index=True)[["test", "bytes", "mean_bytes", "calls", "per_call_s", "t_bench",
                                             "against", "reps"]]
    # every point-to-point call together: the time in sends, receives and waits per message sent
    t = _totals(p)
    p2p_time = float(t.loc[t["family"].isin(P2P_FAMILIES), "time_mean_s"].sum()) * p.nprocs
    sent = p.matrix[p.matrix["kind"] == "p2p"]
    nmsg, nbytes = float(sent["messages"].sum()), float(sent["bytes"].sum())
    if p2p_time > 0 and nmsg > 0:
        size = pd.Series([nbytes / nmsg])
        bw = _achievable(_bench_for(bench, "pingpong", "bw", None, placement), size)
        a.loc[len(a)] = ["all point-to-point", np.nan, size[0], nmsg, p2p_time / nmsg, bw[0],
                         f"pingpong bw [{placement}]", _bench_rows(bench, "pingpong", "bw", None, placement)["reps"].min()]
    with np.errstate(invalid="ignore", divide="ignore"):
        a["app_mbps"] = np.where(a["mean_bytes"] > 0, a["mean_bytes"] / a["per_call_s"] / 1e6, np.nan)
        a["bench_mbps"] = np.where(a["mean_bytes"] > 0, a["mean_bytes"] / a["t_bench"] / 1e6, np.nan)
        a["ratio"] = a["t_bench"] / a["per_call_s"]
    return a


def achieved_table(p: Profile, bench: pd.DataFrame) -> Table:
    a = achieved(p, bench)
    rows = [[str(call), "" if np.isnan(lo) else fmt_bytes(lo), fmt(size), f"{n:.0f}", fmt(ta * 1e6), fmt(am),
             fmt(tb * 1e6), fmt(bm), fmt(r), str(ag)]
            for call, lo, size, n, ta, am, tb, bm, r, ag in zip(
                a["test"], *(_col(a, c) for c in ("bytes", "mean_bytes", "calls", "per_call_s", "app_mbps",
                                                  "t_bench", "bench_mbps", "ratio")), a["against"])]
    return Table(f"Achieved / achievable — {p.context}",
                 ["call", "size bin", "mean size", "calls", "app µs/call", "app MB/s", "benchmark µs",
                  "benchmark MB/s", "achieved/achievable", "against"], rows,
                 notes=[("achieved/achievable = benchmark time / the application's time per call at the same "
                         "mean size (1: what the machine can do; above 1: the call returned before the transfer "
                         "was done, e.g. an eager send); benchmark times are medians, linear between its sizes."),
                        ("all point-to-point: the time in sends, receives, waits and probes per message sent, "
                         "against pingpong's streaming bandwidth — a lower bound (waits include waiting for "
                         "partners)."),
                        ("'-' = no benchmark result at this size, process count or call (give pingpong / "
                         "collectives results of this machine whose sizes cover the application's).")],
                 program="profile", kind="ratio", keys=2)


# ---------------------------------------------------------------- findings

TOP = 3  # calls named in 'where the time goes', call/size rows named in achieved / achievable
BENCH_PROGRAMS = ("pingpong", "collectives")  # the micro-benchmarks achieved / achievable reads


def conditions(r: Run) -> dict[str, str]:
    """A run's judge.CONDITIONS ('' where its metadata does not say)."""
    ppn = r.meta.get("ppn")
    over = r.meta.get("oversubscribed")
    return {"ranks per node": str(int(ppn)) if isinstance(ppn, (int, float)) and ppn > 0 else "",
            "oversubscribed": {True: "yes", False: "no"}.get(over, "") if isinstance(over, bool) else "",
            "MPI library": short_library(r.meta)}


def _pct(x: float) -> str:
    return f"{fmt(100 * x)} %"


def findings(p: Profile, bench: pd.DataFrame, others: list[Run]) -> list[Finding]:
    """What the profile says first: where the time goes (share of the wall time in MPI, of the MPI time
    by call), the call/size bins that lose most against the micro-benchmarks, and the conditions
    (judge.unlike) where the benchmarks ran differently from the application."""
    out: list[Finding] = []
    over = p.run.oversubscribed
    t = _totals(p).sort_values("time_mean_s", ascending=False)
    t = t[t["time_mean_s"] > 0]
    wall = float(p.wall.mean()) if p.wall.size else float("nan")
    mpi = float(p.mpi.mean()) if p.mpi.size else float(t["time_mean_s"].sum())
    total = float(t["time_mean_s"].sum())
    if total > 0:
        share = t["time_mean_s"] / total
        top = [f"{c} {_pct(float(x))}" for c, x in zip(t["test"].head(TOP), share.head(TOP))]
        rest = f" (these {len(top)} together {_pct(float(share.head(TOP).sum()))})" if len(t) > len(top) else ""
        of_wall = (f"MPI takes {_pct(mpi / wall)} of the wall time ({fmt(mpi)} of {fmt(wall)} s per rank, mean over "
                   f"ranks); " if wall > 0 else "")
        out.append(Finding(p.context, "where the time goes", f"Where the time goes: {of_wall}by call, the share of "
                           f"the MPI time is {', '.join(top)}{rest}.", over))
    bench_over = any(r.oversubscribed for r in others if r.program in BENCH_PROGRAMS)
    a = achieved(p, bench)
    with np.errstate(invalid="ignore"):
        a["lost"] = a["calls"] * (a["per_call_s"] - a["t_bench"]) / p.nprocs  # seconds per rank
    # the per-call rows and the all-point-to-point row count the same time: rank them apart
    single = a[a["test"] != "all point-to-point"]
    ranked = single[np.isfinite(single["lost"].to_numpy(float)) & (single["lost"] > 0)].sort_values(
        "lost", ascending=False).head(TOP)
    if bench.empty:
        out.append(Finding(p.context, "achieved / achievable", "Achieved / achievable: no micro-benchmark results "
                           "given (pingpong and collectives results of this machine give it).", over))
    elif ranked.empty and not np.isfinite(a["ratio"].to_numpy(float)).any():
        out.append(Finding(p.context, "achieved / achievable", "Achieved / achievable: no benchmark result covers "
                           "the application's calls, sizes and process count.", over))
    for r in ranked.itertuples(index=False):
        size = f", size bin {fmt_bytes(float(r.bytes))}" if np.isfinite(r.bytes) else ""
        few = f"; the benchmark {few_reps(int(r.reps))}" if np.isfinite(r.reps) and r.reps < MIN_REPS else ""
        out.append(Finding(p.context, "achieved / achievable", (
            f"Achieved / achievable, {r.test}{size}: {fmt(r.per_call_s * 1e6)} µs per call at a mean "
            f"{fmt(r.mean_bytes)} B ({r.calls:.0f} calls) against {fmt(r.t_bench * 1e6)} µs for {r.against} at "
            f"that size — {fmt(r.ratio)} of what the machine achieves, about {fmt(r.lost)} s per rank lost{few}."),
            over or bench_over))
    allp = a[(a["test"] == "all point-to-point") & np.isfinite(a["ratio"].to_numpy(float))]
    for r in allp.itertuples(index=False):
        out.append(Finding(p.context, "achieved / achievable", (
            f"Achieved / achievable, all point-to-point: {fmt(r.per_call_s * 1e6)} µs of sends, receives and waits "
            f"per message of a mean {fmt(r.mean_bytes)} B against {fmt(r.t_bench * 1e6)} µs for {r.against} — "
            f"{fmt(r.ratio)} (a lower bound: waits include waiting for partners)."), over or bench_over))
    app = conditions(p.run)
    seen = set()
    for r in others:
        if r.program not in BENCH_PROGRAMS:
            continue
        s = unlike(f"The application ({p.run.label}, {p.nprocs} ranks)", app,
                   f"the {r.program} benchmark ({r.label}, {r.meta.get('nprocs', '?')} ranks)", conditions(r))
        if s and s not in seen:
            seen.add(s)
            out.append(Finding(p.context, "conditions", s, over or r.oversubscribed))
    return out


# ---------------------------------------------------------------- output

def build(runs: list[Run]) -> tuple[list[Profile], pd.DataFrame, list[str]]:
    """(profiles, benchmark rows, warnings) from every loaded run."""
    profs = profiles(runs)
    if not profs:
        raise InputError("no program profile results among the inputs (run an application under "
                         "libmpimb-prof.so: docs/profile.md)")
    others = [r for r in runs if r.program != "profile"]
    bench = frame(others) if others else pd.DataFrame(columns=[*schema.columns(), "na"])
    warns = []
    for p in profs:
        labels = set(bench["label"]) - {p.run.label}
        if labels:
            warns.append(f"benchmark results labelled {', '.join(sorted(labels))} are compared with the profile "
                         f"from '{p.run.label}': are they the same machine?")
        if bench.empty:
            warns.append("no benchmark results given: the achieved/achievable table needs pingpong and "
                         "collectives results of the same machine")
    return profs, bench, warns


def tables(p: Profile, bench: pd.DataFrame) -> list[Table]:
    out = [time_table(p), size_table(p)]
    c = collective_table(p)
    if c is not None:
        out.append(c)
    out.append(achieved_table(p, bench))
    return out


def render(runs: list[Run], fmt_name: str) -> tuple[str, list[str]]:
    profs, bench, warns = build(runs)
    others = [r for r in runs if r.program != "profile"]
    parts = []
    for p in profs:
        parts.append(p.heading(fmt_name))
        fs = findings(p, bench, others)
        if fmt_name == "text":
            parts.append(findings_text(fs))
        elif fmt_name == "markdown":
            parts.append("**Findings**\n\n" + "".join(f"- {md_text(f.sentence)}\n" for f in fs))
        parts += [t.render(fmt_name) for t in tables(p, bench)]
        if fmt_name == "text":
            parts.append(matrix_text(p))
    return "\n".join(parts), warns


def write_html(runs: list[Run], out: Path, warns_in: list[str]) -> list[str]:
    import base64

    profs, bench, warns = build(runs)
    others = [r for r in runs if r.program != "profile"]
    body = ["<main>", banners(runs, warns_in + warns),
            findings_html([f for p in profs for f in findings(p, bench, others)])]
    for i, p in enumerate(profs):
        body.append(f'<section id="profile-{i}"><h2>{esc(p.title)}</h2>')
        body += [t.html() for t in tables(p, bench)]
        png = heatmap_png(p)
        if png:
            body.append('<h3>Communication matrix</h3><figure><img alt="communication matrix heat map" '
                        f'src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
                        "<figcaption>bytes each rank sent to each peer (point-to-point and one-sided, world "
                        "ranks, log colour scale)</figcaption></figure>")
        body.append("</section>")
    body.append('<section id="metadata"><h2>Run metadata</h2>'
                + meta_table([(f"{r.program} · {r.label} · np{r.meta.get('nprocs', '?')}", r.meta)
                              for r in runs[:12]]) + "</section></main>")
    title = f"mpimb profile: {', '.join(sorted({p.run.label for p in profs}))}"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_file(out, html_page(title, "".join(body), esc(
        f"{len(profs)} profile(s) · {len(runs) - len(profs)} benchmark run(s)")))
    return warns

