"""The answer first: findings computed from the data, one sentence each, with
their numbers.  A difference is called only where the two 95 % confidence
intervals of the medians (time_ci_lo_s .. time_ci_hi_s) do not overlap;
otherwise the sentence says the two are within the noise.  Rows that failed
verification, n/a rows and figures without a CI (published) never decide
anything silently: FAILED rows are left out (the FAILED banner lists them),
and a pair without CIs says it cannot be judged.

Per machine (label, MPI library) and process layout:
- halocompare: fastest and slowest method per stencil (communicator world), the
  cost of rank ordering (best and worst communicator, irecv-isend), one sender /
  halo, the best one-sided method against the best send/recv method;
- pingpong: latency at the smallest size, peak bandwidth;
- collectives: the library broadcast against the best user-level algorithm at
  the largest size, and rows that differ only in a setting (--root ...);
- rma: per test the fastest one-sided variant against send/recv;
- threads: MPI_THREAD_MULTIPLE against MPI_THREAD_SINGLE on the overhead tests."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .keys import resolve_duplicates
from .load import groups
from .tables import fmt, fmt_bytes, with_variant

NOISE = "within the noise (95 % CIs overlap)"
CALLED = "outside the noise (95 % CIs do not overlap)"
UNJUDGED = "not judged (no confidence interval)"


@dataclass
class Finding:
    machine: str  # "label · library"
    topic: str  # "halo methods", "rank ordering", ...
    text: str  # one sentence with its numbers


def verdict(a: pd.Series, b: pd.Series) -> str:
    """'called', 'noise' or 'unjudged' for two rows' time CIs."""
    lo_a, hi_a, lo_b, hi_b = (float(x) for x in (a["time_ci_lo_s"], a["time_ci_hi_s"], b["time_ci_lo_s"],
                                                  b["time_ci_hi_s"]))
    if not all(math.isfinite(x) for x in (lo_a, hi_a, lo_b, hi_b)):
        return "unjudged"
    return "called" if hi_a < lo_b or hi_b < lo_a else "noise"


def _sync(r: pd.Series) -> str:
    m = re.search(r"(?:^|;)sync=([^;]*)", str(r.get("params", "")))
    return m.group(1) if m else ""


def _started(a: pd.Series, b: pd.Series, a_name: str, b_name: str) -> str:
    """' (repetitions started differently: ...)' where the harness chose other starts for a and b."""
    sa, sb = _sync(a), _sync(b)
    if not sa or not sb or sa == sb:
        return ""
    return f" (repetitions started differently: {a_name} by {sa}, {b_name} by {sb}; docs/measurement.md)"


def _mbps(r: pd.Series) -> str:
    return f"{fmt(float(r['mbps']))} MB/s"


def _us(r: pd.Series) -> str:
    return f"{fmt(float(r['time_median_s']) * 1e6)} µs"


def _name(r: pd.Series, col: str) -> str:
    v = str(r[col])
    return f"{v} [{r['variant']}]" if r.get("variant") else v


def _stencil(n: float, p: float) -> str:
    return f"{int(n)}-nbr {'periodic' if p == 1 else 'non-periodic'}"


def _extremes(g: pd.DataFrame, col: str, higher: bool = True) -> tuple[pd.Series, pd.Series] | None:
    """(best, worst) rows of g by col (rates: higher is better), or None with fewer than two."""
    g = g[np.isfinite(g[col].to_numpy(float))]
    if len(g) < 2:
        return None
    order = g.sort_values(col, ascending=not higher, kind="stable")
    return order.iloc[0], order.iloc[-1]


def _spread(what: str, best: pd.Series, worst: pd.Series, col: str, value: Callable[[pd.Series], str],
            kind: str, ratio: float) -> str:
    """'{what}: X is the fastest ... , 1.87× the slowest, Y at ...' or the within-the-noise form."""
    v = verdict(best, worst)
    a, b = _name(best, col), _name(worst, col)
    started = _started(best, worst, a, b)
    if v == "called":
        return (f"{what}: {a} is the best {kind} at {value(best)}, {ratio:.2f}× the worst, {b} at {value(worst)} "
                f"— {CALLED}{started}.")
    if v == "noise":
        return f"{what}: the {kind}s are {NOISE[:-1]}; {a} {value(best)} to {b} {value(worst)}){started}."
    return (f"{what}: best {kind} {a} at {value(best)}, worst {b} at {value(worst)}, {ratio:.2f}× — "
            f"{UNJUDGED}{started}.")


def _pair(what: str, a: pd.Series, b: pd.Series, a_name: str, b_name: str, value: Callable[[pd.Series], str],
          ratio_name: str, ratio: float) -> str:
    """'{what}: A x against B y: ratio r — outside/within the noise.'"""
    v = verdict(a, b)
    tail = CALLED if v == "called" else NOISE if v == "noise" else UNJUDGED
    started = _started(a, b, a_name, b_name)
    return f"{what}: {a_name} {value(a)} against {b_name} {value(b)}; {ratio_name} = {ratio:.2f} — {tail}{started}."


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def halo(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    h = m[m["test"] == "halo"]
    one = m[m["test"] == "one-sender"]
    for (n, p, b), s in groups(h, ["neighbors", "periodic", "bytes"], dropna=False):
        stencil = _stencil(n, p) + (f", {fmt_bytes(b)} B" if math.isfinite(b) else "")
        comm = "world" if (s["comm"] == "world").any() else str(s["comm"].iloc[0])
        w = s[s["comm"] == comm]
        e = _extremes(w, "mbps")
        if e:
            out.append(("halo methods", _spread(f"Halo {stencil}, {comm}{where}", e[0], e[1], "method", _mbps,
                                                "method", _ratio(e[0]["mbps"], e[1]["mbps"]))))
        per_method = s.groupby("method", sort=False)["comm"].nunique()
        per_method = per_method[per_method > 1]
        meth = "irecv-isend" if "irecv-isend" in per_method.index else (per_method.index[0] if len(per_method) else None)
        if meth:
            e = _extremes(s[s["method"] == meth], "mbps")
            if e:
                out.append(("rank ordering", _spread(f"Rank ordering, halo {stencil}{where} with {meth}", e[0], e[1],
                                                     "comm", _mbps, "communicator",
                                                     _ratio(e[0]["mbps"], e[1]["mbps"]))))
        rma = w[w["method"].str.startswith("rma-")]
        p2p = w[~w["method"].str.match(r"(rma|neighbor)-")]
        if len(rma) and len(p2p):
            a = rma.sort_values("mbps", ascending=False).iloc[0]
            c = p2p.sort_values("mbps", ascending=False).iloc[0]
            out.append(("one-sided vs send/recv", _pair(
                f"One-sided vs send/recv, halo {stencil}, {comm}{where}", a, c,
                f"best one-sided method {_name(a, 'method')}", f"best send/recv method {_name(c, 'method')}",
                _mbps, "one-sided / send-recv", _ratio(a["mbps"], c["mbps"]))))
        o = one[(one["neighbors"] == n) & (one["periodic"] == p) & ((one["bytes"] == b) | one["bytes"].isna())]
        ref = s[(s["comm"] == "world") & (s["method"] == "irecv-isend")]
        if len(o) and len(ref):
            a, c = o.iloc[0], ref.iloc[0]
            out.append(("one-sender / halo", _pair(
                f"One sender, {stencil}{where}", a, c, "one process sending alone reaches",
                "a process in the halo exchange (world, irecv-isend)", _mbps, "one-sender / halo",
                _ratio(a["mbps"], c["mbps"]))))
    return out


def pingpong(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pp = m[m["program"] == "pingpong"]
    for (comm, meth, var), s in groups(pp, ["comm", "method", "variant"]):
        lat = s[(s["test"] == "latency") & s["bytes"].notna()].sort_values("bytes")
        bw = s[(s["test"] == "bw") & s["mbps"].notna()]
        parts = []
        if len(lat):
            r = lat.iloc[0]
            parts.append(f"latency {_us(r)} at {fmt_bytes(r['bytes'])} B")
        if len(bw):
            r = bw.sort_values("mbps", ascending=False).iloc[0]
            parts.append(f"peak bandwidth {_mbps(r)} at {fmt_bytes(r['bytes'])} B")
        if parts:
            name = " ".join(x for x in (str(comm), str(meth), f"[{var}]" if var else "") if x)
            out.append(("pingpong", f"Pingpong {name}{where}: " + ", ".join(parts) + "."))
    return out


def collectives(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    c = m[m["program"] == "collectives"]
    bc = c[c["test"].str.startswith("bcast")].assign(
        alg=lambda x: np.where(x["test"] == "bcast", x["method"], x["test"].str.removeprefix("bcast-")))
    for var, s in groups(bc, ["variant"]):
        if not (s["alg"] == "library").any() or s["alg"].nunique() < 2 or s["bytes"].isna().all():
            continue
        big = s[s["bytes"] == s["bytes"].max()]
        lib = big[big["alg"] == "library"]
        users = big[big["alg"] != "library"].sort_values("time_median_s")
        if len(lib) and len(users):
            a, u = lib.iloc[0], users.iloc[0]
            tag = f" [{var[0]}]" if var[0] else ""
            out.append(("collectives", _pair(
                f"Broadcast at {fmt_bytes(a['bytes'])} B{tag}{where}", a, u, "the library's MPI_Bcast takes",
                f"the best user-level algorithm ({u['alg']})", _us, "library / best algorithm",
                _ratio(a["time_median_s"], u["time_median_s"]))))
    # rows that differ only in a setting (another --root, --timing, --segment ...)
    if c["variant"].nunique() > 1:
        for (test, meth), s in groups(c, ["test", "method"]):
            if s["variant"].nunique() < 2:
                continue
            common = s.groupby("bytes")["variant"].nunique()
            sizes = common[common == s["variant"].nunique()].index
            if len(sizes) == 0:
                continue
            at = s[s["bytes"] == sizes.max()].sort_values("time_median_s")
            a, b = at.iloc[-1], at.iloc[0]
            out.append(("collectives", _pair(
                f"{test} {meth} at {fmt_bytes(a['bytes'])} B{where}", a, b, str(a["variant"]), str(b["variant"]),
                _us, "time ratio", _ratio(a["time_median_s"], b["time_median_s"]))))
            if len(out) >= 4:
                break
    return out


def rma(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    r = m[m["program"] == "rma"]
    for (test, var), s in groups(r, ["test", "variant"], sort=False):
        ref = s[s["method"] == "sendrecv"]
        if ref.empty or s["bytes"].isna().all():
            continue
        size = ref["bytes"].min() if "latency" in str(test) else ref["bytes"].max()
        at = s[s["bytes"] == size]
        one = at[at["method"] != "sendrecv"].sort_values("time_median_s")
        if one.empty:
            continue
        a, c = one.iloc[0], at[at["method"] == "sendrecv"].iloc[0]
        out.append(("one-sided vs send/recv", _pair(
            f"RMA {test} at {fmt_bytes(size)} B{where}", a, c, f"the fastest one-sided variant ({a['method']}, "
            f"{a['comm']} window) takes", "send/recv", _us, "time RMA / send-recv",
            _ratio(a["time_median_s"], c["time_median_s"]))))
    return out


def threads(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    t = m[(m["program"] == "threads") & m["test"].str.startswith("overhead")]
    for (test,), s in groups(t, ["test"]):
        mult, single = s[s["thread_level"] == "multiple"], s[s["thread_level"] == "single"]
        if mult.empty or single.empty:
            continue
        both = sorted(set(mult["bytes"]) & set(single["bytes"]))
        if not both:
            continue
        size = both[0] if "latency" in str(test) else both[-1]
        a, b = mult[mult["bytes"] == size].iloc[0], single[single["bytes"] == size].iloc[0]
        out.append(("MULTIPLE vs SINGLE", _pair(
            f"MPI_THREAD_MULTIPLE vs SINGLE, {test} at {fmt_bytes(size)} B{where}", a, b, "MULTIPLE takes",
            "SINGLE", _us, "time MULTIPLE / SINGLE", _ratio(a["time_median_s"], b["time_median_s"]))))
    return out


def findings(df: pd.DataFrame) -> list[Finding]:
    """Every finding for the rows of df (one result set), per machine and layout."""
    df, _ = resolve_duplicates(df)
    if df.empty:
        return []
    d, _ = with_variant(df[~df["na"].to_numpy(bool) & ~df["failed"].to_numpy(bool)])
    out: list[Finding] = []
    for (label, lib), mach in groups(d, ["label", "library"]):
        layouts = mach.groupby(["nprocs", "nnodes", "ppn"], dropna=False).ngroups
        for (nprocs, nn, ppn), m in groups(mach, ["nprocs", "nnodes", "ppn"], dropna=False):
            where = f", np{int(nprocs)}" + (f" ({int(nn)}×{int(ppn)})" if math.isfinite(nn) and math.isfinite(ppn)
                                            else "") if layouts > 1 else ""
            found = halo(m[m["program"] == "halocompare"], where) + pingpong(m, where) + collectives(m, where) + \
                rma(m, where)
            out += [Finding(f"{label} · {lib}", topic, text) for topic, text in found]
        out += [Finding(f"{label} · {lib}", topic, text) for topic, text in threads(mach, "")]
    return out


def text(fs: list[Finding], width: int = 120) -> str:
    """The findings as text, per machine, each sentence wrapped to width."""
    if not fs:
        return ""
    out = []
    for mach in dict.fromkeys(f.machine for f in fs):
        out.append(f"Findings — {mach} (a difference is called only where the 95 % CIs do not overlap):")
        for f in fs:
            if f.machine == mach:
                out.append(textwrap.fill(f.text, width, initial_indent="- ", subsequent_indent="  "))
    return "\n".join(out) + "\n"
