"""The one statistical rule behind every verdict: a time ratio B / A, its interval, and whether that
interval lies outside the noise (docs/measurement.md, "Launches and the one judge").

Variation lives at more than one level (T. Kalibera and R. Jones, "Rigorous Benchmarking in
Reasonable Time", ISMM 2013): repetitions inside one launch, and launches, each of which draws its own
placement, memory layout, windows and machine state.  An interval made of one launch's repetitions
says nothing about the next launch, so a claim about a machine or a library rests on launches:

- every launch contributes one value per configuration (its median, or its minimum with --stat min);
  the estimate is the ratio of the trimmed geometric means of those values: from TRIM_FROM launches on,
  the lowest and the highest TRIM_PCT % of a side's log values (of the per-launch log ratios, paired)
  are left out of the mean and winsorized in its variance, so that a launch the machine's load slowed
  1000-fold cannot move a verdict (J. W. Tukey and D. H. McLaughlin, Sankhya A 25, 1963; K. K. Yuen,
  Biometrika 61, 1974; R. R. Wilcox, "Introduction to Robust Estimation and Hypothesis Testing");
  below TRIM_FROM launches nothing is trimmed, and the intervals are Student's and Welch's exactly;
- **paired** where the two sides were measured in the same launches (two methods of one run) or in
  launches alternated by scripts/launches on one machine (the i-th of each side): the 95 % interval
  is the trimmed t on the per-launch log ratios (h - 1 degrees of freedom, h the ratios kept);
- **unpaired** between machines: Yuen's trimmed Welch t on the two sides' log values (Welch-Satterthwaite
  degrees of freedom over the kept counts) (B. L. Welch, Biometrika 34, 1947; Yuen 1974);
- fewer than MIN_LAUNCHES launches on a side: not judged ("not judged (1 launch of B)");
- a report judging many rows at once (compare) corrects for their number: the Benjamini-Hochberg
  procedure at false discovery rate FDR over the rows of one comparison picks R rows, and every row's
  interval is then stated at level 1 - R * FDR / m (Benjamini and Yekutieli, "False discovery
  rate-adjusted multiple confidence intervals", JASA 100, 2005), so that a row is called exactly
  when it is selected and its interval clears the margin;
- the margin of practical significance: a difference is called only where the interval lies wholly
  outside [1 - MARGIN, 1 + MARGIN] (outside); an interval inside it, or across its edge, is within
  the noise, everywhere the suite judges (compare, findings, tune, tune --check).

Inside one launch (rounds of one group: mpimb.paired) the same `outside` decides, and the verdict
says that it holds for that launch."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

MARGIN = 0.01  # a difference smaller than 1 % is never called: launches and rounds are not fully independent
FDR = 0.05  # the false discovery rate over the rows of one comparison (compare)
LEVEL = 0.95
MIN_LAUNCHES = 3  # the fewest per side for a t interval that is not absurdly wide (t(0.975; 2) = 4.3)
TRIM_PCT = 10  # the share of a side's launches left out at each end of its mean (an integer percentage)
TRIM_FROM = 100 // TRIM_PCT  # the fewest launches of which one is trimmed at each end


def t_quantile(q: float, df: np.ndarray | float) -> np.ndarray:
    """Student's t quantile (scipy.special, imported on first use: a run of one launch, the common case, judges
    without it, and mpimb-report's start stays short for the programs that call it at their end)."""
    from scipy.special import stdtrit  # type: ignore[import-untyped]

    return np.asarray(stdtrit(np.asarray(df, float), q))


def t_sf(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Student's t survival function, P(T > t)."""
    from scipy.special import stdtr  # type: ignore[import-untyped]

    return np.asarray(1.0 - stdtr(np.asarray(df, float), np.asarray(t, float)))


def outside(lo: np.ndarray | float, hi: np.ndarray | float) -> np.ndarray | bool:
    """The one rule: a ratio's interval [lo, hi] lies wholly outside [1 - MARGIN, 1 + MARGIN]."""
    lo_a, hi_a = np.asarray(lo, float), np.asarray(hi, float)
    out = (lo_a > 1 + MARGIN) | (hi_a < 1 - MARGIN)
    return bool(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Ratio:
    """B / A across launches: the estimate, its interval at `level`, the launches it rests on."""

    ratio: float
    lo: float
    hi: float
    n: int  # launch pairs (paired) or the smaller side's launches (unpaired)
    paired: bool
    level: float = LEVEL
    p: float = math.nan

    @property
    def judged(self) -> bool:
        return self.n >= MIN_LAUNCHES and math.isfinite(self.lo) and math.isfinite(self.hi)

    @property
    def called(self) -> bool:
        return self.judged and bool(outside(self.lo, self.hi))

    def interval(self) -> str:
        return f"[{self.lo:.3g}, {self.hi:.3g}]" if self.judged else "[-]"

    def how(self) -> str:
        """'paired, 5 launches' / 'unpaired, 4 and 5 launches' for the sentence."""
        return f"{'paired over' if self.paired else 'across'} {self.n} launch{'es' if self.n != 1 else ''}"


def _t_parts(est: np.ndarray, se: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Two-sided p-values of est = 0 (se 0: 1 where est is 0, else 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(est) / se
    p = 2 * t_sf(t, df)
    p = np.where(se == 0, np.where(est == 0, 1.0, 0.0), p)
    return np.where(np.isfinite(est) & np.isfinite(df), p, np.nan)


def bh_level(p: np.ndarray, fdr: float = FDR) -> float:
    """The level 1 - R * fdr / m at which the m finite p-values' intervals are stated, R the count the
    Benjamini-Hochberg procedure selects (R = 0: the level of one selection, 1 - fdr / m)."""
    q = np.sort(p[np.isfinite(p)])
    m = q.size
    if m == 0:
        return LEVEL
    below = np.flatnonzero(q <= fdr * np.arange(1, m + 1) / m)
    r = int(below[-1]) + 1 if below.size else 0
    return 1 - max(r, 1) * fdr / m


def intervals(est: np.ndarray, se: np.ndarray, df: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """exp(est ∓ t(level; df) se): the ratio's interval (NaN where df is not finite or below 1)."""
    ok = np.isfinite(df) & (df >= 1)
    tq = t_quantile(0.5 + level / 2, np.where(ok, df, 1.0))
    half = np.where(ok, tq * se, np.nan)
    return np.exp(est - half), np.exp(est + half)


def trimmed(group: np.ndarray, x: np.ndarray) -> pd.DataFrame:
    """Per group (the sorted distinct ids of group with a finite value): n the finite values, h those kept after
    trimming TRIM_PCT % at each end (n * TRIM_PCT // 100 values each), m the trimmed mean, v the winsorized sample
    variance (the trimmed values set to the nearest kept one; NaN for one value).  Below TRIM_FROM values nothing
    is trimmed: m and v are the plain mean and variance.  Vectorized: compare judges up to 10^6 rows."""
    xf = np.asarray(x, float)
    ok = np.isfinite(xf)
    g, v = np.asarray(group)[ok], xf[ok]
    order = np.lexsort((v, g))
    g, v = g[order], v[order]
    uniq, start, count = np.unique(g, return_index=True, return_counts=True)
    at = np.repeat(start, count)  # where each value's group starts
    n = np.repeat(count, count)
    cut = n * TRIM_PCT // 100
    rank = np.arange(v.size) - at
    keep = (rank >= cut) & (rank < n - cut)
    w = np.clip(v, v[at + cut] if v.size else v, v[at + n - 1 - cut] if v.size else v)
    per = pd.DataFrame({"g": g, "x": np.where(keep, v, np.nan), "w": w})
    a = per.groupby("g", sort=True).agg(n=("w", "size"), h=("x", "count"), m=("x", "mean"), v=("w", "var"))
    return a.set_axis(uniq) if len(a) else a


def one(x: np.ndarray) -> tuple[float, float, float, float]:
    """(n, h, m, v) of trimmed for one group of values (n 0: no finite value)."""
    t = trimmed(np.zeros(np.size(x), np.int64), x)
    if not len(t):
        return 0.0, 0.0, math.nan, math.nan
    r = t.iloc[0]
    return float(r["n"]), float(r["h"]), float(r["m"]), float(r["v"])


def center_interval(n: np.ndarray, h: np.ndarray, m: np.ndarray, v: np.ndarray,
                    level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The interval of one side's trimmed geometric mean exp(m) from (n, h, m, v) (trimmed), at level; NaN where
    fewer than MIN_LAUNCHES values (the callers then show the launches' own span)."""
    est, se, df = paired_logs(n, h, m, np.nan_to_num(np.asarray(v, float)))
    return intervals(est, se, df, level)


def welch(na: np.ndarray, ha: np.ndarray, ma: np.ndarray, va: np.ndarray, nb: np.ndarray, hb: np.ndarray,
          mb: np.ndarray, vb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, degrees of freedom) of m(log B) - m(log A) from each side's (n, h, m, v) (trimmed):
    Yuen's trimmed Welch (h = n: Welch's t exactly); NaN degrees of freedom below MIN_LAUNCHES on a side."""
    na, nb, ha, hb = (np.asarray(x, float) for x in (na, nb, ha, hb))
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = (na - 1) * va / (ha * (ha - 1)), (nb - 1) * vb / (hb * (hb - 1))
        se = np.sqrt(a + b)
        df = (a + b) ** 2 / (a ** 2 / (ha - 1) + b ** 2 / (hb - 1))
    df = np.where(se == 0, ha + hb - 2, df)  # identical values on both sides (a simulation): no spread
    df = np.where((na >= MIN_LAUNCHES) & (nb >= MIN_LAUNCHES), df, np.nan)
    return mb - ma, se, df


def paired_logs(n: np.ndarray, h: np.ndarray, mean: np.ndarray,
                var: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, degrees of freedom) from n per-launch log ratios' (n, h, m, v) (trimmed): the
    trimmed t (h = n: Student's t exactly)."""
    n, h = np.asarray(n, float), np.asarray(h, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var * n) / h
    return mean, se, np.where(n >= MIN_LAUNCHES, h - 1, np.nan)


def judge(est: np.ndarray, se: np.ndarray, df: np.ndarray, fdr: float | None = FDR) -> \
        tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(lo, hi, called, level) for many rows judged together: the Benjamini-Hochberg level over their
    p-values (fdr None: one comparison, LEVEL), every interval at it, called where `outside`."""
    p = _t_parts(est, se, df)
    level = LEVEL if fdr is None else bh_level(p, fdr)
    lo, hi = intervals(est, se, df, level)
    judged = np.isfinite(lo) & np.isfinite(hi)
    return lo, hi, judged & np.asarray(outside(lo, hi)), level


def _log(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, float)
    return np.log(x[np.isfinite(x) & (x > 0)])


def parts(a: np.ndarray, b: np.ndarray, paired: bool) -> tuple[float, float, float, int]:
    """(estimate, standard error, degrees of freedom, launches) of log(B / A) from per-launch values (paired:
    the i-th of each side belong together; pairs with a value missing are left out); degrees of freedom NaN
    below MIN_LAUNCHES."""
    if paired:
        a_f, b_f = np.asarray(a, float), np.asarray(b, float)
        keep = np.isfinite(a_f) & np.isfinite(b_f) & (a_f > 0) & (b_f > 0)
        n, h, m, v = one(np.log(b_f[keep]) - np.log(a_f[keep]))
        if n == 0:
            return math.nan, math.nan, math.nan, 0
        est, se, df = paired_logs(np.array([n]), np.array([h]), np.array([m]), np.array([v if n > 1 else 0.0]))
        return float(est[0]), float(se[0]), float(df[0]), int(n)
    sa, sb = one(_log(a)), one(_log(b))
    if min(sa[0], sb[0]) == 0:
        return math.nan, math.nan, math.nan, 0
    va, vb = (s[3] if s[0] > 1 else 0.0 for s in (sa, sb))
    est, se, df = welch(*(np.array([x]) for x in (sa[0], sa[1], sa[2], va, sb[0], sb[1], sb[2], vb)))
    return float(est[0]), float(se[0]), float(df[0]), int(min(sa[0], sb[0]))


def ratio(a: np.ndarray, b: np.ndarray, paired: bool) -> Ratio:
    """B / A from per-launch values (parts) — one comparison, at LEVEL."""
    est, se, df, n = parts(a, b, paired)
    if n == 0:
        return Ratio(math.nan, math.nan, math.nan, 0, paired)
    e, s_, d = np.array([est]), np.array([se]), np.array([df])
    lo, hi, _, level = judge(e, s_, d, fdr=None)
    return Ratio(float(np.exp(est)), float(lo[0]), float(hi[0]), n, paired, level, float(_t_parts(e, s_, d)[0]))
