"""mpimb-report guidelines: the self-consistent MPI performance guidelines checked on a result set
(docs/report.md, "Guidelines").

A guideline says that one way of doing something is never slower than another way of doing the same
(J. L. Träff, W. Gropp and R. Thakur, "Self-Consistent MPI Performance Guidelines", IEEE TPDS 21(5),
2010; for derived datatypes W. Gropp, T. Hoefler, R. Thakur and J. L. Träff, EuroMPI 2011; checked with
statistical tests as in S. Hunold's PGMPI).  Every check here is a pair of rows of one machine (label,
library) judged by the suite's one judge, judge.judgement(A, B): across launches where the set has
several, inside the one launch otherwise.  "A ≤ B" is

- violated where A is slower than B outside the noise;
- held where A is faster outside the noise or the two are within the noise;
- not judged where the judge cannot judge (too few launches or repetitions, no interval).

"A ≈ B" is violated where either is slower outside the noise.  A composite right side (Reduce + Bcast)
or a scaled one (k · t(m)) is a row made for the check (composite): per launch the sum of the parts'
times where there are several launches, so that the judge pairs launch by launch; in one launch the
sum of the medians with the sum of the parts' interval ends, wider than the interval of a sum of two
independent estimates (the half-widths add instead of adding in quadrature).

FAILED, n/a and --overlap rows take no part (the caller passes findings.usable's rows).  The findings
(findings.findings, given the runs) end each machine's with its guidelines (as_findings)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from . import schema
from .judge import ORDERING_METHOD, Finding, Judgement, judgements
from .judge import _launches as launches_of
from .keys import CART_MODEL, KEYS, MACHINE, machine_name, mocked, param_values, split_overlap, without_param
from .load import Run, groups, rel
from .render import fmt_bytes

HELD, VIOLATED, UNJUDGED = "held", "violated", "not judged"
SOURCES = ("Träff, Gropp, Thakur, IEEE TPDS 21(5) 2010; Gropp, Hoefler, Thakur, Träff, EuroMPI 2011")
USER_LEVEL = ("binomial", "chain", "tree-pipelined", "scatter-allgather", "2level", "2level-shm")
ONE_SIDED_PUT = ("put-latency", "put-bw")
Row = dict[str, Any]  # a row of the frame as a dict: the pairs are many, and a dict is read 10× faster than a Series


@dataclass
class Check:
    """One guideline judged on one pair: its outcome and the sentence of a violation."""

    guideline: str
    machine: str
    outcome: str  # HELD, VIOLATED or UNJUDGED
    text: str
    why: str = ""  # the judge's words where not judged
    oversubscribed: bool = False
    busy: bool = False


@dataclass
class Result:
    """A machine's checks (or those of one program's results), and the guidelines it could not check with why."""

    machine: str
    program: str = ""  # the program whose results were checked ('': every program of the machine)
    checks: list[Check] = field(default_factory=list)
    unchecked: dict[str, str] = field(default_factory=dict)  # guideline -> why

    def count(self, outcome: str | None = None) -> int:
        return sum(1 for c in self.checks if outcome is None or c.outcome == outcome)


# ---------------------------------------------------------------------------------------------------------------
# Rows made for a check


def composite(parts: list[Row], scale: float = 1.0) -> Row:
    """The row of scale × the sum of parts' times, for judge.judgement: across launches the per-launch sums
    over the launches every part has; in one launch the sum of medians and of interval ends (docstring)."""
    out = dict(parts[0])
    lts = [launches_of(cast(pd.Series, p)) for p in parts]  # (it reads a row by key only)
    many = any(len(t) > 1 for t, _ in lts)
    if many:
        common = [x for x in lts[0][1] if all(x in ids for _, ids in lts[1:])]
        per = [dict(zip(ids, t)) for t, ids in lts]
        out["launch_times"] = tuple(scale * sum(float(p[x]) for p in per) for x in common)
        out["launch_ids"] = tuple(common)
    else:
        ids = {i for _, x in lts for i in x}
        # parts of different launches make no sum of one launch: an id no row has, which the judge leaves unjudged
        out["launch_ids"] = tuple(ids) if len(ids) <= 1 else ("+".join(sorted(ids)),)
        out["launch_times"] = (scale * sum(float(p["time_median_s"]) for p in parts),)
    for col in ("time_median_s", "time_ci_lo_s", "time_ci_hi_s"):
        out[col] = scale * sum(float(p[col]) for p in parts)
    out["reps"] = min(float(p["reps"]) for p in parts)
    out["rounds"], out["round_group"] = (), math.nan
    out["oversubscribed"] = any(bool(p.get("oversubscribed", False)) for p in parts)
    out["busy"] = any(bool(p.get("busy", False)) for p in parts)
    return out


def outcome(j: Judgement, equal: bool = False) -> str:
    """A ≤ B (or A ≈ B where equal) from judgement(A, B): violated where called against it (factor = A / B)."""
    if j.verdict in ("few", "unjudged"):
        return UNJUDGED
    if j.verdict == "called" and (j.factor > 1 or equal):
        return VIOLATED
    return HELD


# ---------------------------------------------------------------------------------------------------------------
# Which rows are paired


def _base(d: pd.DataFrame, drop: tuple[str, ...] = ()) -> pd.Series:
    """params without the start synchronisation (the harness's choice per test) and the keys in drop."""
    p = d["params"].fillna("").astype(str)
    for k in ("sync", *drop):
        p = without_param(p, k)
    return p


def _match(a: pd.DataFrame, b: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    """(ia, ib): index pairs of a's and b's rows equal on the columns on."""
    m = a[on].assign(ia=a.index).merge(b[on].assign(ib=b.index), on=on, how="inner")
    return m[["ia", "ib"]]


KEEP = [c for c in KEYS if c != "params"]


def _where(r: Row, what: str = "", size: bool = True, hide: tuple[str, ...] = ()) -> str:
    """'at 16K B, 4 neighbours non-periodic, world, np4' — the sizes and the configuration of a check (its params
    but the start synchronisation and those in hide)."""
    parts = [f"at {fmt_bytes(float(r['bytes']))} B" if pd.notna(r.get("bytes")) else "without a size"][:int(size)]
    if r.get("program") == "halocompare":
        parts.append(f"{int(r['neighbors'])} neighbours {'periodic' if r['periodic'] == 1 else 'non-periodic'}")
    parts.append(str(r["comm"]))
    parts.append(f"np{int(r['nprocs'])}")
    params = schema.parse_params(str(r.get("params") or ""))
    v = ";".join(f"{k}={x}" for k, x in params.items() if k not in ("sync", *hide))
    if v:
        parts.append(f"[{v}]")
    return (what + " " if what else "") + ", ".join(parts)


Pair = tuple[Row, Row, str, str, str]  # A, B, A's name, B's name, where


def records(d: pd.DataFrame, index: list[Any]) -> dict[Any, Row]:
    """The rows of d at index, each once, as dicts."""
    sub = d.loc[list(dict.fromkeys(index))]
    return dict(zip(sub.index, sub.to_dict("records")))


def _checks(name: str, machine: str, pairs: list[Pair], rel_word: str = "≤") -> list[Check]:
    """One Check per pair, judged A against B; a violation's sentence names the guideline, the sizes, the
    ratio and its interval (the judge's words)."""
    out = []
    # judged together: across launches, the family's intervals at the Benjamini-Hochberg level (judge.judgements)
    js = judgements([(cast(pd.Series, a), cast(pd.Series, b)) for a, b, _, _, _ in pairs])  # (read by key only)
    for (a, b, an, bn, where), j in zip(pairs, js):
        o = outcome(j, equal=rel_word == "≈")
        how = "slower" if j.factor > 1 else "faster"
        factor = j.factor if j.factor >= 1 else 1 / j.factor
        text = (f"{an} is {factor:.2f}× {how} than {bn} {where} — guideline {name} ({rel_word}) violated, "
                f"{j.words}") if o == VIOLATED else \
            f"{name}: {an} {rel_word} {bn} {where}: " + (j.words if o == UNJUDGED else f"{o} — {j.words}")
        over = bool(a.get("oversubscribed", False) or b.get("oversubscribed", False))
        busy = bool(a.get("busy", False) or b.get("busy", False))
        out.append(Check(name, machine, o, text, j.words if o == UNJUDGED else "", over, busy))
    return out


Outcome = tuple[list[Pair], str]  # the pairs, or why there are none


def _simple(d: pd.DataFrame, sel_a: pd.Series, sel_b: pd.Series, on: list[str], an: str, bn: str,
            name_a: Callable[[Row], str] | None = None, name_b: Callable[[Row], str] | None = None,
            none: str = "") -> Outcome:
    a, b = d[sel_a.to_numpy(bool)], d[sel_b.to_numpy(bool)]
    if a.empty or b.empty:
        return [], f"no {an if a.empty else bn} rows"
    m = _match(a, b, on)
    if m.empty:
        return [], none or f"no {an} and {bn} rows of the same configuration"
    r = records(d, [*m["ia"], *m["ib"]])
    return [(r[i], r[k], name_a(r[i]) if name_a else an, name_b(r[k]) if name_b else bn, _where(r[i]))
            for i, k in zip(m["ia"], m["ib"])], ""


# ---------------------------------------------------------------------------------------------------------------
# The guidelines


def _halo(d: pd.DataFrame) -> pd.DataFrame:
    return d[(d["program"] == "halocompare") & (d["test"] == "halo") & ~mocked(d["params"])]  # --mock: no exchange


def _halo_methods(a: str, b: str) -> Callable[[pd.DataFrame, dict[str, Any]], Outcome]:
    def check(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
        h = _halo(d)
        if h.empty:
            return [], "no halocompare halo rows"
        on = [c for c in KEEP if c != "method"] + ["base"]
        return _simple(h, h["method"] == a, h["method"] == b, on, a, b)
    return check


def _halo_datatype(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
    h = _halo(d)
    if h.empty:
        return [], "no halocompare halo rows"
    packing = param_values(h["params"], "packing")
    if not (packing != "").any():
        return [], "no --layout array rows (packing=...)"
    h = h.assign(base=_base(h, ("packing",)))
    on = [*KEEP, "base"]
    return _simple(h, packing == "datatype", packing == "pack", on, "datatype exchange",
                   "pack + contiguous exchange + unpack",
                   name_a=lambda r: f"{r['method']} with datatypes",
                   name_b=lambda r: f"{r['method']} with packing + unpacking")


def _halo_comm(comm: str) -> Callable[[pd.DataFrame, dict[str, Any]], Outcome]:
    def check(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
        h = _halo(d)
        h = h[h["method"] == ORDERING_METHOD]
        if h.empty:
            return [], f"no halocompare {ORDERING_METHOD} rows"
        if comm == "cart":
            moved = h["file"].map(lambda f: ctx["cart"].get(f, {})).to_numpy()
            periodic = h["periodic"].to_numpy()
            keep = np.array([_moved(m, p) for m, p in zip(moved, periodic)], bool)
            cart = h["comm"] == "cart"
            if cart.any() and not any(isinstance(m, dict) and m for m in moved[cart.to_numpy()]):
                return [], "the runs do not say whether MPI_Cart_create reordered (halocompare.cart_reordered)"
            if cart.any() and not (keep & cart.to_numpy()).any():
                notes = sorted({str(m.get("periodic" if p == 1 else "non_periodic", "?")) for m, p in
                                zip(moved[cart.to_numpy()], periodic[cart.to_numpy()])})
                return [], f"the library did not reorder (MPI_Cart_create moved {'; '.join(notes)})"
            h = h[keep | ~cart.to_numpy()]
        on = [c for c in KEEP if c != "comm"] + ["base"]
        return _simple(h, h["comm"] == comm, h["comm"] == "world", on, comm, "world",
                       name_a=lambda r: f"{ORDERING_METHOD} on {comm}", name_b=lambda r: f"{ORDERING_METHOD} on world")
    return check


def _moved(m: Any, periodic: float) -> bool:
    """Whether halocompare's cart_reordered note ('N of P ranks') says MPI_Cart_create moved a rank."""
    note = str(m.get("periodic" if periodic == 1 else "non_periodic", "")) if isinstance(m, dict) else ""
    got = re.match(r"\s*(\d+) of", note)
    return bool(got) and int(got.group(1)) > 0  # type: ignore[union-attr]


COMPOSITES: dict[str, tuple[str, tuple[str, Callable[[float, float], float]], tuple[str, Callable[[float, float],
                                                                                                    float]]]] = {
    # A (bytes n) ≤ B1 (bytes f1(n, P)) + B2 (bytes f2(n, P)): bytes as docs/collectives.md defines them per call
    "allreduce": ("allreduce", ("reduce", lambda n, p: n), ("bcast", lambda n, p: n)),
    "bcast": ("bcast", ("scatter", lambda n, p: n / p), ("allgather", lambda n, p: n / p)),
    "allgather": ("allgather", ("gather", lambda n, p: n), ("bcast", lambda n, p: n * p)),
    "reduce-scatter-block": ("reduce_scatter_block", ("reduce", lambda n, p: n * p), ("scatter", lambda n, p: n)),
}


def _coll(d: pd.DataFrame) -> pd.DataFrame:
    """The collectives library rows on a communicator of every rank (world, dup), one root for every call."""
    c = d[(d["program"] == "collectives") & (d["method"] == "library") & d["comm"].isin(["world", "dup"])]
    c = c[(param_values(c["params"], "root") != "rotate") & (param_values(c["params"], "algorithm") == "")]
    return c.assign(base=_base(c, ("root",)))


def _composite(key: str) -> Callable[[pd.DataFrame, dict[str, Any]], Outcome]:
    test, (t1, f1), (t2, f2) = COMPOSITES[key]

    def check(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
        c = _coll(d)
        if c.empty:
            return [], "no collectives rows of the library's calls on world or dup"
        a, b1, b2 = (c[c["test"] == t] for t in (test, t1, t2))
        missing = [t for t, x in ((test, a), (t1, b1), (t2, b2)) if x.empty]
        if missing:
            return [], "no " + " or ".join(f"MPI_{t.capitalize()}" for t in missing) + " rows"
        on = [x for x in KEEP if x not in ("test", "bytes")] + ["base"]
        n, p = a["bytes"].to_numpy(float), a["nprocs"].to_numpy(float)
        a = a.assign(b1=f1(n, p), b2=f2(n, p))  # type: ignore[arg-type]
        m = a[[*on, "b1", "b2"]].assign(ia=a.index)
        m = m.merge(b1[on].assign(b1=b1["bytes"], i1=b1.index), on=[*on, "b1"])
        m = m.merge(b2[on].assign(b2=b2["bytes"], i2=b2.index), on=[*on, "b2"])
        if m.empty:
            return [], (f"no MPI_{t1.capitalize()} and MPI_{t2.capitalize()} rows at the sizes MPI_{test.capitalize()}"
                        " needs (same communicator, ranks and settings)")
        out = []
        r = records(d, [*m["ia"], *m["i1"], *m["i2"]])
        for ia, i1, i2 in zip(m["ia"], m["i1"], m["i2"]):
            r1, r2 = r[i1], r[i2]
            out.append((r[ia], composite([r1, r2]), f"MPI_{test.capitalize()}",
                        (f"MPI_{t1.capitalize()} ({fmt_bytes(float(r1['bytes']))} B) + MPI_{t2.capitalize()} "
                         f"({fmt_bytes(float(r2['bytes']))} B)"), _where(r[ia])))
        return out, ""
    return check


def _user_level(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
    c = d[d["program"] == "collectives"]
    c = c[param_values(c["params"], "algorithm") == ""]
    c = c.assign(base=_base(c, ("segment",)))
    lib = ((c["method"] == "library") & (c["test"] != "series")) | ((c["test"] == "series") &
                                                                     (c["method"] == "bcast-loop"))
    user = c["method"].isin(USER_LEVEL)
    on = [x for x in KEEP if x != "method"] + ["base"]
    return _simple(c, lib, user, on, "the library's call", "a user-level algorithm",
                   name_a=lambda r: f"MPI_{str(r['test']).capitalize()}" if r["test"] != "series" else "MPI_Bcast loop",
                   name_b=lambda r: f"the suite's {r['method']}",
                   none="no library call and user-level algorithm of the same collective and configuration")


def _default_algorithm(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
    c = d[d["program"] == "collectives"]
    alg = param_values(c["params"], "algorithm")
    c = c[alg != ""].assign(algorithm=alg[alg != ""], base=_base(c[alg != ""], ("algorithm",)))
    if c.empty:
        return [], "no --algorithms rows (algorithm=...)"
    dflt = c["file"].map(lambda f: ctx["default"].get(f, {})).to_numpy()
    c = c.assign(default=[str(x.get(t, "")) for x, t in zip(dflt, c["test"])])
    if (c["default"] == "").all():
        return [], "the runs do not record the library's own choice (library_algorithms in the JSON)"
    out: list[Pair] = []
    for _, g in groups(c, [*MACHINE, *KEEP, "base"], dropna=False):
        own = g[g["algorithm"] == g["default"]]
        others = g[g["algorithm"] != g["default"]].sort_values("time_median_s", kind="stable")
        if own.empty or others.empty:
            continue
        a, b = own.iloc[0], others.iloc[0]
        r = records(d, [own.index[0], others.index[0]])
        out.append((r[own.index[0]], r[others.index[0]], f"the library's own choice ({a['algorithm']})",
                    f"its fastest forced algorithm ({b['algorithm']})",
                    _where(r[own.index[0]], f"for MPI_{str(a['test']).capitalize()}", hide=("algorithm",))))
    return (out, "") if out else ([], "no size with both the library's own choice and a forced algorithm measured")


def _sweeps(d: pd.DataFrame) -> pd.DataFrame:
    """d's rows with a size, ordered by size within each sweep (every key but bytes), with the next size's index."""
    s = d[np.isfinite(d["bytes"].to_numpy(float))]
    s = s.assign(base=_base(s), ix=s.index).sort_values([*MACHINE, "bytes"], kind="stable")
    key = [*MACHINE, *(c for c in KEEP if c != "bytes"), "base"]
    nxt = s.groupby(key, dropna=False, sort=False, observed=True)[["bytes", "ix"]].shift(-1)
    return s.assign(next_bytes=nxt["bytes"], next_ix=nxt["ix"])


def _monotony(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
    s = _sweeps(d)
    s = s[s["next_ix"].notna()]
    if s.empty:
        return [], "no sweep of two sizes or more"
    nxt = s["next_ix"].astype(np.int64).to_numpy()
    r = records(d, [*s.index, *nxt])
    return [(r[i], r[k], f"t({fmt_bytes(float(r[i]['bytes']))} B)", f"t({fmt_bytes(float(r[k]['bytes']))} B)",
             _where(r[i], _what(r[i]), size=False)) for i, k in zip(s.index, nxt)], ""


def _split(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
    s = _sweeps(d)
    k = s["next_bytes"] / s["bytes"].where(s["bytes"] > 0)
    s = s.assign(k=k)[s["next_ix"].notna() & (k == np.round(k)) & (k > 1)]
    if s.empty:
        return [], "no sweep with a size m > 0 and a next size k·m (k a whole number) both measured"
    out: list[Pair] = []
    nxt = s["next_ix"].astype(np.int64).to_numpy()
    r = records(d, [*s.index, *nxt])
    for i, j, f in zip(s.index, nxt, s["k"]):
        small, big = r[i], r[j]
        out.append((big, composite([small], float(f)), f"t({fmt_bytes(float(big['bytes']))} B)",
                    f"{int(f)} × t({fmt_bytes(float(small['bytes']))} B)", _where(small, _what(small), size=False)))
    return out, ""


def _what(r: Row) -> str:
    return f"in the sweep of {r['program']} {r['test']} {r['method'] or ''}".strip()


def _rma_put(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
    r = d[(d["program"] == "rma") & d["test"].isin(ONE_SIDED_PUT)]
    if r.empty:
        return [], "no rma put-latency or put-bw rows"
    r = r.assign(base=_base(r))
    on = [x for x in KEEP if x not in ("method", "comm")] + ["base"]
    return _simple(r, r["method"] != "sendrecv", r["method"] == "sendrecv", on, "MPI_Put + synchronisation",
                   "Send/Recv", name_a=lambda x: f"MPI_Put + {x['method']} ({x['comm']} window)",
                   name_b=lambda x: "Send/Recv of the same bytes")


def _halo_base(check: Callable[[pd.DataFrame, dict[str, Any]], Outcome]) -> Callable[[pd.DataFrame, dict[str, Any]],
                                                                                       Outcome]:
    """A halo check on rows whose params lost only the start synchronisation and a simulated cart row's
    model of the mapping (the base column: that cart row is its world row's configuration)."""
    def wrapped(d: pd.DataFrame, ctx: dict[str, Any]) -> Outcome:
        return check(d.assign(base=_base(d, (CART_MODEL,))), ctx)
    return wrapped


@dataclass(frozen=True)
class Guideline:
    name: str
    statement: str
    check: Callable[[pd.DataFrame, dict[str, Any]], Outcome]
    relation: str = "≤"
    program: str = ""  # the program whose results it reads ('': every program's sweeps)


GUIDELINES: list[Guideline] = [
    Guideline("halo-neighbor", "neighbor-alltoall ≤ irecv-isend",
              _halo_base(_halo_methods("neighbor-alltoall", "irecv-isend")), program="halocompare"),
    Guideline("halo-persistent", "persistent ≤ irecv-isend", _halo_base(_halo_methods("persistent", "irecv-isend")),
              program="halocompare"),
    Guideline("halo-isend", "irecv-isend ≤ irecv-send", _halo_base(_halo_methods("irecv-isend", "irecv-send")),
              program="halocompare"),
    Guideline("halo-datatype", "datatype exchange ≤ pack + contiguous exchange + unpack (--layout array)",
              _halo_datatype, program="halocompare"),
    Guideline("halo-dup", "dup ≈ world", _halo_base(_halo_comm("dup")), "≈", program="halocompare"),
    Guideline("halo-cart", "cart ≤ world where MPI_Cart_create reorders", _halo_base(_halo_comm("cart")),
              program="halocompare"),
    Guideline("coll-allreduce", "MPI_Allreduce ≤ MPI_Reduce + MPI_Bcast", _composite("allreduce"),
              program="collectives"),
    Guideline("coll-bcast", "MPI_Bcast(n) ≤ MPI_Scatter(n/P) + MPI_Allgather(n/P)", _composite("bcast"),
              program="collectives"),
    Guideline("coll-allgather", "MPI_Allgather(n) ≤ MPI_Gather(n) + MPI_Bcast(P·n)", _composite("allgather"),
              program="collectives"),
    Guideline("coll-reduce-scatter", "MPI_Reduce_scatter_block(n) ≤ MPI_Reduce(P·n) + MPI_Scatter(n)",
              _composite("reduce-scatter-block"), program="collectives"),
    Guideline("coll-user", "the library's collective ≤ the suite's user-level algorithm for the same call",
              _user_level, program="collectives"),
    Guideline("coll-default", "the library's own algorithm ≤ its fastest forced algorithm (--algorithms)",
              _default_algorithm, program="collectives"),
    Guideline("monotony", "more bytes are never faster: t(m) ≤ t(m') for the next size m' > m", _monotony),
    Guideline("split", "t(k·m) ≤ k · t(m) for the next size k·m", _split),
    Guideline("rma-put", "MPI_Put + synchronisation ≤ Send/Recv of the same bytes", _rma_put, program="rma"),
]
NAMES = [g.name for g in GUIDELINES]


def unknown(only: str | None) -> str | None:
    """The first name in a --only list that is not a guideline, '' for an empty one (None: all known)."""
    if only is None:
        return None
    return next((n.strip() for n in only.split(",") if n.strip() not in NAMES), None)


def context(runs: list[Run]) -> dict[str, Any]:
    """What the checks read from the runs' JSON, per file: halocompare's cart_reordered note and the
    library's own algorithm per collective (library_algorithms)."""
    cart, default = {}, {}
    for r in runs:
        f = rel(r.csv_path)
        h = r.meta.get("halocompare")
        if isinstance(h, dict) and isinstance(h.get("cart_reordered"), dict):
            cart[f] = h["cart_reordered"]
        la = r.meta.get("library_algorithms")
        if isinstance(la, dict) and isinstance(la.get("collectives"), dict):
            default[f] = {str(k): str(v.get("default", "")) for k, v in la["collectives"].items()
                          if isinstance(v, dict)}
    return {"cart": cart, "default": default}


def check(rows: pd.DataFrame, runs: list[Run], only: list[str] | None = None,
          per_program: bool = False) -> list[Result]:
    """Every guideline (or those named in only) on every machine of rows (findings.usable of keys.prepared's
    frame: measured, not n/a, not FAILED); runs: the runs they came from (their JSON: context).  per_program:
    one Result per machine and program, of the guidelines about that program (findings: so that the findings
    of several files together are those of each file)."""
    if rows.empty:
        return []
    d = split_overlap(rows)[0]
    ctx = context(runs)
    out = []
    for key, m in groups(d, [*MACHINE, "program"] if per_program else MACHINE):
        res = Result(machine_name(str(key[0]), str(key[1]), m), str(key[2]) if per_program else "")
        for g in GUIDELINES:
            if (only and g.name not in only) or (per_program and g.program not in ("", res.program)):
                continue
            pairs, why = g.check(m, ctx)
            if not pairs:
                res.unchecked[g.name] = why
            res.checks += _checks(g.name, res.machine, pairs, g.relation)
        out.append(res)
    return out


def summary(res: Result) -> str:
    """'Guidelines (...): N checked — H held, V violated, U not judged (...); not checked: ...' ('N checked, none
    judged — not judged (why)' where no check was judged, for one reason)."""
    per: dict[str, list[int]] = {}
    for c in res.checks:
        per.setdefault(c.guideline, [0, 0, 0])[(HELD, VIOLATED, UNJUDGED).index(c.outcome)] += 1
    parts = "; ".join(f"{g} {h}/{v}/{u}" for g, (h, v, u) in per.items())
    whys = {c.why for c in res.checks}
    on = f" on {res.program}" if res.program else ""
    if res.checks and res.count(UNJUDGED) == res.count() and len(whys) == 1:  # nothing judged, for one reason
        text = f"Guidelines{on} ({SOURCES}): {res.count()} checked, none judged — {whys.pop()}"
    else:
        counts = f"{res.count(HELD)} held, {res.count(VIOLATED)} violated, {res.count(UNJUDGED)} not judged"
        text = (f"Guidelines{on} ({SOURCES}): {res.count()} checked — {counts}{_why_not(res)}" +
                (f" (held/violated/not judged: {parts})" if parts else ""))
    if res.unchecked:
        text += "; not checked: " + "; ".join(f"{g} ({why})" for g, why in res.unchecked.items())
    return text + "."


def as_findings(results: list[Result]) -> list[Finding]:
    """The findings section: per machine the counts (summary), then one finding per violation."""
    out = []
    for r in (x for x in results if x.checks):
        out.append(Finding(r.machine, "guidelines", summary(r),
                           any(c.oversubscribed for c in r.checks), any(c.busy for c in r.checks)))
        out += [Finding(r.machine, "guidelines", c.text[0].upper() + c.text[1:] + ".", c.oversubscribed, c.busy)
                for c in r.checks if c.outcome == VIOLATED]
    return out


def _why_not(r: Result) -> str:
    """' (12: 3 repetitions; 4: ...)': why checks were not judged, the commonest first."""
    why = pd.Series([c.why for c in r.checks if c.outcome == UNJUDGED], dtype=object).value_counts()
    if why.empty:
        return ""
    short = [(str(w)[12:-1] if str(w).startswith("not judged (") and str(w).endswith(")") else str(w), n)
             for w, n in why.head(3).items()]
    return " (" + "; ".join(f"{n}: {w}" for w, n in short) + ("; ..." if len(why) > 3 else "") + ")"


def render(results: list[Result], verbose: bool = False) -> str:
    """mpimb-report guidelines: per machine a line per guideline (its counts, or why it was not checked), then
    every violation (verbose: every check)."""
    if not results:
        return "Guidelines: nothing to check (no usable result rows).\n"
    lines = []
    width = max(len(n) for n in NAMES)
    for r in results:
        lines.append(f"{r.machine}: guidelines ({SOURCES})")
        lines.append(f"  {r.count()} checked: {r.count(HELD)} held, {r.count(VIOLATED)} violated, "
                     f"{r.count(UNJUDGED)} not judged{_why_not(r)}")
        for g in GUIDELINES:
            got = [c for c in r.checks if c.guideline == g.name]
            if g.name in r.unchecked:
                lines.append(f"  {g.name:<{width}}  not checked: {r.unchecked[g.name]}  [{g.statement}]")
            elif got:
                n = [sum(c.outcome == o for c in got) for o in (HELD, VIOLATED, UNJUDGED)]
                lines.append(f"  {g.name:<{width}}  {len(got)} checked: {n[0]} held, {n[1]} violated, {n[2]} not "
                             f"judged  [{g.statement}]")
        shown = [c for c in r.checks if verbose or c.outcome == VIOLATED]
        if shown:
            lines.append("  " + ("checks:" if verbose else "violations:"))
            lines += [f"  * {Finding(r.machine, '', c.text, c.oversubscribed, c.busy).sentence}" for c in shown]
    return "\n".join(lines) + "\n"
