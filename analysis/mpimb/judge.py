"""The findings rules — the one place that decides when a difference is called and how a finding
says it (docs/report.md, "Findings"; docs/measurement.md, "Launches and the one judge").

- A difference is called only outside the noise (RULE, the one wording every output states): a 95 %
  interval of the time ratio A / B lies wholly outside [1 - MARGIN, 1 + MARGIN] (mpimb.launches.outside,
  the one rule of the suite).  Which interval (judgement):
  - rows measured by several launches (keys.combine): across the launches, paired per launch where
    both rows come from the same launches (mpimb.launches); fewer than MIN_LAUNCHES: not judged;
  - rows of one and the same launch: inside it, and the words say "in this launch" — the per-round
    ratio where both were measured in one group of rounds (mpimb.paired), else the quotient of the
    two medians' 95 % CIs;
  - one launch each of different launches: not judged.
  The factor a sentence states is the estimate its interval is about (Judgement.factor); "best" is
  said only where the best beats the runner-up outside the noise (spread).
- A row with fewer than schema.MIN_REPS_FOR_CI repetitions has no usable interval: a pair
  involving it is "not judged (N repetitions)", N the smaller count (few_reps).
- Figures without an interval (published ones) are not judged (UNJUDGED).
- An --overlap share is called only where the 95 % interval of the time hidden, t_pure + t_cpu - t_ovrl paired
  per repetition, lies above 0 (hidden); an operation shorter than MIN_OPERATION_S is not judged.
- A finding from an oversubscribed run (more ranks × threads than cores; the JSON's
  "oversubscribed") carries the OVERSUBSCRIBED mark in front of its sentence; one from a busy
  machine (others took a share of its cores: the JSON's "busy") the BUSY mark.
- Rank orderings are judged on ORDERING_METHOD (irecv-isend), as halocompare's own stdout does; without
  it, on a method that is not one-sided first.  A method whose objects carry a speed of their own
  (one-sided windows, persistent requests) is not judged across communicators inside one launch.
- Two runs compared across programs (a profiled application against the micro-benchmarks:
  mpimb-report profile's achieved / achievable) must have run under the same CONDITIONS; where
  they did not, the finding says which differ (unlike).

FAILED and n/a rows never reach these functions (the callers leave them out)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pandas as pd

from . import schema
from .launches import FDR, MIN_LAUNCHES, outside
from .launches import judge as launch_judge
from .launches import parts as launch_parts
from .load import rounds_rejected
from .paired import Z95, Paired, paired_ratio
from .render import fmt
from .units import MBPS, US

UNJUDGED = "not judged (no confidence interval)"
# two rows of one group whose rounds were rejected (load.read_rounds): compared as if measured apart
ROUNDS_REJECTED = "; not paired: the rounds file does not match the CSV, mpimb-report validate"
OVERSUBSCRIBED = "[oversubscribed: ranks × threads > cores — figures of the OS scheduler] "
BUSY = "[busy machine: other processes took a share of the ranks' cores while it ran] "
ORDERING_METHOD = "irecv-isend"
MIN_REPS = schema.MIN_REPS_FOR_CI
# The rule as every output states it (stdout, mpimb-report findings / table, the HTML pages).
RULE = ("a difference is called only outside the noise: a 95 % interval of the time ratio clear of 1 ± 1 %, across "
        "launches where there are several, else inside the one launch")
# The first line of the plain findings block (mpimb-report findings; the C programs print it).
HEADER = f"Findings (medians; {RULE}):"


def few_reps(n: int) -> str:
    return f"not judged ({n} repetition{'' if n == 1 else 's'})"


def few_launches(n: int, who: str = "") -> str:
    return f"not judged ({n} launch{'' if n == 1 else 'es'}{' of ' + who if who else ''}; {MIN_LAUNCHES} needed)"


@dataclass
class Finding:
    machine: str  # "label · library"
    topic: str  # "halo methods", "rank ordering", ...
    text: str  # one sentence with its numbers
    oversubscribed: bool = False  # from a run with more ranks × threads than cores
    busy: bool = False  # from a run during which other processes took a share of its cores

    @property
    def sentence(self) -> str:
        """The sentence as shown: with the oversubscription and busy marks in front where they apply."""
        return (OVERSUBSCRIBED if self.oversubscribed else "") + (BUSY if self.busy else "") + self.text


def usable_ci(reps: pd.Series) -> np.ndarray:
    """Rows whose repetitions are enough for a 95 % interval of the median (unknown counts pass)."""
    r = reps.to_numpy(float)
    return ~(r < MIN_REPS)


def reps(a: pd.Series, b: pd.Series) -> float:
    """The smaller repetition count of two rows (NaN when neither says)."""
    return float(np.fmin(float(a.get("reps", math.nan)), float(b.get("reps", math.nan))))


def paired(a: pd.Series, b: pd.Series, z: float = Z95) -> Paired | None:
    """A against B from their rounds, where both were measured in one group of one launch (else None); z: the
    interval's normal quantile (a family judged together: judgements)."""
    ga, gb = float(a.get("round_group", math.nan)), float(b.get("round_group", math.nan))
    if not (math.isfinite(ga) and ga == gb and a.get("file") == b.get("file")):
        return None
    ra, rb = a.get("rounds", ()), b.get("rounds", ())
    if not ra or len(ra) != len(rb):
        return None
    return paired_ratio(np.asarray(ra, float), np.asarray(rb, float), z)


def paired_verdict(p: Paired) -> str:
    """'called', 'noise' or 'few' for a paired ratio of rounds: called where launches.outside."""
    if not p.judged:
        return "few"
    return "called" if outside(p.lo, p.hi) else "noise"


@dataclass(frozen=True)
class Judgement:
    """A against B: the verdict ('called', 'noise', 'few', 'unjudged'), the words that end a finding, and the
    time ratio A / B the sentence states (the estimate its interval is about; NaN where there is none)."""

    verdict: str
    words: str
    factor: float
    lo: float = math.nan  # the interval of factor the words state (NaN where none is)
    hi: float = math.nan


def _launches(r: pd.Series) -> tuple[tuple[float, ...], tuple[str, ...]]:
    t = r.get("launch_times")
    ids = r.get("launch_ids")
    return (tuple(t) if isinstance(t, (tuple, list)) else ()), (tuple(ids) if isinstance(ids, (tuple, list)) else ())


def _across(ta: tuple[float, ...], ia: tuple[str, ...], tb: tuple[float, ...],
            ib: tuple[str, ...]) -> tuple[float, float, float, int, bool]:
    """(estimate, standard error, degrees of freedom, launches, paired) of log(A / B) over the two rows' launches:
    paired where they share launches (two configurations of one launch, or launches scripts/launches alternated),
    else unpaired (mpimb.launches)."""
    common = [x for x in ia if x in set(ib)]
    if common:
        at, bt = dict(zip(ia, ta)), dict(zip(ib, tb))
        return (*launch_parts(np.array([bt[x] for x in common]), np.array([at[x] for x in common]), True), True)
    return (*launch_parts(np.asarray(tb, float), np.asarray(ta, float), False), False)


def judgements(pairs: list[tuple[pd.Series, pd.Series]]) -> list[Judgement]:
    """judgement(a, b) of many pairs judged together (a report's family of comparisons: guidelines, every pair
    of communicators): those judged across launches are stated at the Benjamini-Hochberg level over their
    p-values (mpimb.launches.judge, as compare's rows), so that many identical pairs are not called 5 % of
    the time; the others (inside one launch, or not judged) as judgement says."""
    out: list[Judgement | None] = [None] * len(pairs)
    idx, got, inside = [], [], []
    for i, (a, b) in enumerate(pairs):
        ta, ia = _launches(a)
        tb, ib = _launches(b)
        if len(ta) > 1 or len(tb) > 1:
            idx.append(i)
            got.append(_across(ta, ia, tb, ib))
        else:
            inside.append(i)
    # the pairs paired by rounds inside one launch have no p-value (order statistics): their family is stated at
    # the Bonferroni level, 1 - 0.05 / m for m such pairs
    m = sum(paired(*pairs[i]) is not None for i in inside)
    z = NormalDist().inv_cdf(1 - 0.025 / m) if m > 1 else Z95
    for i in inside:
        a, b = pairs[i]
        out[i] = _one_launch(a, b, _launches(a)[1], _launches(b)[1], z, m)
    if got:
        est, se, df = (np.array([g[k] for g in got], float) for k in range(3))
        lo, hi, called, level = launch_judge(est, se, df, fdr=FDR if len(got) > 1 else None)
        at = f", {100 * level:.3g} % intervals over {len(got)} comparisons" if len(got) > 1 else ""
        for k, i in enumerate(idx):
            n, pr = got[k][3], got[k][4]
            how = f"{'paired over' if pr else 'across'} {n} launch{'es' if n != 1 else ''}"
            if not np.isfinite(lo[k]):
                out[i] = Judgement("few", few_launches(n), float(np.exp(est[k])))
                continue
            words = "outside the noise" if called[k] else "within the noise"
            out[i] = Judgement("called" if called[k] else "noise",
                               f"{words} ({how}: time {np.exp(est[k]):.3f}× [{lo[k]:.3g}, {hi[k]:.3g}]{at})",
                               float(np.exp(est[k])), float(lo[k]), float(hi[k]))
    return [j for j in out if j is not None]


def judgement(a: pd.Series, b: pd.Series) -> Judgement:
    """The one verdict of two rows (docs/measurement.md, "Launches and the one judge"):
    - several launches on either side: across launches (mpimb.launches; fewer than MIN_LAUNCHES: not judged);
    - one launch each, the same launch: inside it, said so — the per-round ratio where both were measured in
      one group of rounds, else the quotient of the two medians' 95 % CIs; both called where launches.outside;
    - one launch each of different launches: not judged (one launch of each).
    Many pairs judged together: judgements."""
    return judgements([(a, b)])[0]


def _one_launch(a: pd.Series, b: pd.Series, ia: tuple[str, ...], ib: tuple[str, ...], z: float = Z95,
                m: int = 1) -> Judgement:
    """judgement of two rows of one launch each; z, m: the level of a family of m pairs paired by rounds."""
    # two runs are two launches even where they share a round of scripts/launches (one launch id)
    if ia and ib and (ia[0] != ib[0] or a.get("file") != b.get("file")):
        return Judgement("few", f"not judged (one launch of each; {MIN_LAUNCHES} launches needed: scripts/launches)",
                         ratio(float(a["time_median_s"]), float(b["time_median_s"])))
    p = paired(a, b, z)
    if p is not None:
        if not p.judged:
            return Judgement("few", few_reps(p.n), p.ratio)
        v = paired_verdict(p)
        words = "outside the noise" if v == "called" else "within the noise"
        at = f", {100 * (1 - 0.05 / m):.3g} % intervals over {m} comparisons" if m > 1 else ""
        return Judgement(v, f"{words} in this launch (paired, {p.n} rounds: time {p.ratio:.3f}× {p.interval()}{at})",
                         p.ratio, p.lo, p.hi)
    n = reps(a, b)
    t = ratio(float(a["time_median_s"]), float(b["time_median_s"]))
    if n < MIN_REPS:
        return Judgement("few", few_reps(int(n)), t)
    lo_a, hi_a, lo_b, hi_b = (float(x) for x in (a["time_ci_lo_s"], a["time_ci_hi_s"], b["time_ci_lo_s"],
                                                  b["time_ci_hi_s"]))
    if not all(math.isfinite(x) and x > 0 for x in (lo_a, hi_a, lo_b, hi_b)):
        return Judgement("unjudged", UNJUDGED, t)
    lo, hi = lo_a / hi_b, hi_a / lo_b  # the conservative quotient of the two intervals
    v = "called" if outside(lo, hi) else "noise"
    words = "outside the noise" if v == "called" else "within the noise"
    return Judgement(v, f"{words} in this launch (95 % CIs of the medians: time {t:.3f}× [{lo:.3g}, {hi:.3g}]"
                        f"{rejected(a, b)})", t, lo, hi)


def rejected(a: pd.Series, b: pd.Series) -> str:
    """ROUNDS_REJECTED where a and b would have been paired but for rounds that do not match the CSV."""
    return ROUNDS_REJECTED if rounds_rejected(a, b) else ""


def verdict(a: pd.Series, b: pd.Series) -> str:
    """'called', 'noise', 'few' (too few repetitions or launches) or 'unjudged' (no CI): judgement(a, b)."""
    return judgement(a, b).verdict


def tail(a: pd.Series, b: pd.Series) -> str:
    """The verdict of two rows as the words that end a finding, with the time ratio and its interval
    ("outside the noise in this launch (paired, 40 rounds: time 1.08× [1.05, 1.11])")."""
    return judgement(a, b).words


def one_launch(g: pd.DataFrame) -> bool:
    """Whether g's rows each come from one launch (a frame without the launches column: yes)."""
    return "launches" not in g or not bool((g["launches"].to_numpy(float) > 1).any())


def started(a: pd.Series, b: pd.Series, a_name: str, b_name: str) -> str:
    """' (repetitions started differently: ...)' where the harness chose other starts for a and b."""
    sa = schema.parse_params(str(a.get("params", ""))).get("sync", "")
    sb = schema.parse_params(str(b.get("params", ""))).get("sync", "")
    if not sa or not sb or sa == sb:
        return ""
    return f" (repetitions started differently: {a_name} by {sa}, {b_name} by {sb}; docs/measurement.md)"


# What two runs compared across programs must share (ranks per node, the oversubscription flag, the MPI library).
CONDITIONS = ("ranks per node", "oversubscribed", "MPI library")


def unlike(a_name: str, a: dict[str, str], b_name: str, b: dict[str, str]) -> str:
    """'' when a and b (CONDITIONS -> value, '' unknown) ran under the same conditions as far as both
    say; else the sentence naming each that differs."""
    diff = [f"{k} {a[k]} against {b[k]}" for k in CONDITIONS if a.get(k) and b.get(k) and a[k] != b[k]]
    if not diff:
        return ""
    return (f"{a_name} and {b_name} ran under different conditions ({'; '.join(diff)}): a ratio of their times "
            "compares unlike runs.")


def mbps(r: pd.Series) -> str:
    return f"{fmt(float(r['mbps']))} {MBPS}"


def us(r: pd.Series) -> str:
    return f"{fmt(float(r['time_median_s']) * 1e6)} {US}"


def name(r: pd.Series, col: str) -> str:
    v = str(r[col])
    return f"{v} [{r['variant']}]" if r.get("variant") else v


def stencil(n: float, p: float) -> str:
    return f"{int(n)}-nbr {'periodic' if p == 1 else 'non-periodic'}"


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def extremes(g: pd.DataFrame, col: str, higher: bool = True) -> tuple[pd.Series, pd.Series] | None:
    """(best, worst) rows of g by col (rates: higher is better), or None with fewer than two."""
    e = ranked(g, col, higher)
    return None if e is None else (e[0], e[2])


def ranked(g: pd.DataFrame, col: str, higher: bool = True) -> tuple[pd.Series, pd.Series, pd.Series] | None:
    """(best, runner-up, worst) rows of g by col (rates: higher is better), or None with fewer than two."""
    g = g[np.isfinite(g[col].to_numpy(float))]
    if len(g) < 2:
        return None
    order = g.sort_values(col, ascending=not higher, kind="stable")
    return order.iloc[0], order.iloc[1], order.iloc[-1]


def spread(what: str, best: pd.Series, worst: pd.Series, col: str, value: Callable[[pd.Series], str],
           kind: str, second: pd.Series | None = None) -> str:
    """'{what}: X is the best {kind} ..., F× faster than the runner-up Y ...' — best only where it beats the
    runner-up (second, default the worst) outside the noise; the factor stated is the judgement's estimate
    (the time ratio of the worst or runner-up to the best), never a ratio beside it."""
    a, b = name(best, col), name(worst, col)
    jw = judgement(worst, best)
    st = started(best, worst, a, b)
    if jw.verdict in ("few", "unjudged"):
        return f"{what}: best {kind} {a} at {value(best)}, worst {b} at {value(worst)} — {jw.words}{st}."
    if jw.verdict == "noise":
        return f"{what}: the {kind}s are {jw.words}; {a} {value(best)} to {b} {value(worst)}{st}."
    if second is None or second is worst or name(second, col) == b:
        return (f"{what}: {a} is the best {kind} at {value(best)}, {jw.factor:.2f}× faster than the worst, {b} at "
                f"{value(worst)} — {jw.words}{st}.")
    js = judgement(second, best)
    c = name(second, col)
    if js.verdict == "called":
        return (f"{what}: {a} is the best {kind} at {value(best)}, {js.factor:.2f}× faster than the runner-up {c} at "
                f"{value(second)} — {js.words}; the worst, {b} at {value(worst)}, {jw.factor:.2f}× slower than {a}{st}.")
    return (f"{what}: no single best {kind}: {a} at {value(best)} and {c} at {value(second)} are {js.words}; "
            f"the worst, {b} at {value(worst)}, is {jw.factor:.2f}× slower than {a} — {jw.words}{st}.")


def pair(what: str, a: pd.Series, b: pd.Series, a_name: str, b_name: str, value: Callable[[pd.Series], str],
         ratio_name: str, r: float) -> str:
    """'{what}: A x against B y: ratio r — outside/within the noise.'  The ratio stated is the judgement's
    estimate (A / B in time; its inverse where value is a rate), r (the medians' ratio) only where there is none."""
    j = judgement(a, b)
    if math.isfinite(j.factor) and j.factor > 0:
        r = 1 / j.factor if value is mbps else j.factor
    return (f"{what}: {a_name} {value(a)} against {b_name} {value(b)}; {ratio_name} = {r:.2f} — "
            f"{j.words}{started(a, b, short(a), short(b))}.")


def short(r: pd.Series) -> str:
    """A row named by its test, method and communicator ('one-sender isend world'): for a clause that names both
    rows of a pair, whose sentence names them by longer phrases."""
    return " ".join(str(r.get(c)) for c in ("test", "method", "comm") if r.get(c))


def text(fs: list[Finding], width: int = 120) -> str:
    """The findings as the table command prints them: per machine, each sentence wrapped to width."""
    if not fs:
        return ""
    out = []
    for mach in dict.fromkeys(f.machine for f in fs):
        out.append(textwrap.fill(f"Findings — {mach} (medians; {RULE}):", width, subsequent_indent="  ",
                                 break_on_hyphens=False, break_long_words=False))
        for f in fs:
            if f.machine == mach:
                out.append(textwrap.fill(f.sentence, width, initial_indent="- ", subsequent_indent="  ",
                                         break_on_hyphens=False, break_long_words=False))
    return "\n".join(out) + "\n"


def plain(fs: list[Finding], none_why: str = "") -> str:
    """The plain findings block (mpimb-report findings): HEADER, then '  * machine: sentence' per
    finding, one line each; with no findings one line saying none could be made and why."""
    if not fs:
        return f"Findings: none could be made ({none_why or 'nothing to compare'}).\n"
    return HEADER + "\n" + "".join(f"  * {f.machine}: {f.sentence}\n" for f in fs)


def _num(r: pd.Series, col: str) -> float:
    v = r.get(col, math.nan)
    return float(v) if pd.notna(v) else math.nan


# The shortest operation whose overlap is judged: the timing loop's own cost around a computation leaves a few ns
# "hidden" with nothing to hide (an exchange with no neighbours, 5-14 ns: bench/README.md, "The harness's own
# overlap"); from 0.1 us on, that is a few % of the operation at most, and shared-memory MPI takes longer.
MIN_OPERATION_S = 1e-7


def _unjudged_overlap(r: pd.Series) -> str | None:
    """Why an --overlap row's share cannot be judged, or None: too few repetitions, no per-repetition interval of
    the time hidden (a file from before it was measured), or an operation too short (MIN_OPERATION_S)."""
    n = int(r["reps"]) if pd.notna(r["reps"]) else 0
    if n < MIN_REPS:
        return few_reps(n)
    if not math.isfinite(_num(r, "hidden_ci_lo_s")):
        return "not judged (no per-repetition interval of the time hidden: measured before mpimb kept one)"
    if not _num(r, "pure_s") >= MIN_OPERATION_S:
        return (f"not judged (the operation alone took {fmt(_num(r, 'pure_s') * 1e6)} {US}, less than the "
                f"{fmt(MIN_OPERATION_S * 1e6)} {US} needed to time what it hides)")
    return None


def beyond_noise(r: pd.Series) -> bool:
    """Whether an --overlap row hides something outside the noise: judged (_unjudged_overlap) and the 95 % CI of the
    time hidden, t_pure + t_cpu - t_ovrl paired per repetition (hidden_ci_lo_s .. hidden_ci_hi_s), above 0."""
    return _unjudged_overlap(r) is None and _num(r, "hidden_ci_lo_s") > 0


def hidden(r: pd.Series, kind: str) -> str:
    """An --overlap row's share (OMB's and IMB-NBC's overlap, the row's overlap_pct) and how it is judged: hidden
    only where the 95 % CI of the time hidden, paired per repetition, lies above 0 (beyond_noise)."""
    share = f"{float(r['overlap_pct']):.0f} % of its {kind} hidden"
    why = _unjudged_overlap(r)
    if why:
        return f"{share}, {why}"
    ci = f"[{fmt(_num(r, 'hidden_ci_lo_s') * 1e6)}, {fmt(_num(r, 'hidden_ci_hi_s') * 1e6)}] {US}"
    if beyond_noise(r):
        return f"{share} — outside the noise (paired per repetition: {fmt(_num(r, 'hidden_s') * 1e6)} {US} " \
               f"hidden, 95 % CI {ci})"
    return f"{share} — nothing hidden beyond the noise (paired per repetition: the 95 % CI of the time hidden, " \
           f"{ci}, reaches 0)"


def overlap(what: str, g: pd.DataFrame, col: str, kind: str) -> str | None:
    """'{what}: A hides the most, N % of its {kind} hidden ...; B the least, ...' over g's --overlap rows (one row:
    its share), or None without one."""
    g = g[np.isfinite(g["overlap_pct"].to_numpy(float))].sort_values("overlap_pct", ascending=False, kind="stable")
    if g.empty:
        return None
    best, worst = g.iloc[0], g.iloc[-1]
    if len(g) == 1:
        return f"{what}: {hidden(best, kind)}."
    both = f"{name(best, col)} {hidden(best, kind)}; {name(worst, col)} {hidden(worst, kind)}"
    if beyond_noise(best) and not beyond_noise(worst):  # one hides beyond the noise, the other does not
        return f"{what}: {name(best, col)} hides the most, {hidden(best, kind)}; {name(worst, col)} the least, " \
               f"{hidden(worst, kind)}."
    if beyond_noise(best) and best["overlap_pct"] != worst["overlap_pct"]:  # both do: shares, not a ranking
        return f"{what}: every {col} hides something beyond the noise, {name(best, col)} the largest share " \
               f"({hidden(best, kind)}), {name(worst, col)} the smallest ({hidden(worst, kind)})."
    return f"{what}: no {col} is judged to hide more than another; {both}."
