"""The one statistical rule behind every verdict: a time ratio B / A, its interval, and whether that
interval lies outside the noise (docs/measurement.md, "Launches and the one judge").

Variation lives at more than one level (T. Kalibera and R. Jones, "Rigorous Benchmarking in
Reasonable Time", ISMM 2013): repetitions inside one launch, and launches, each of which draws its own
placement, memory layout, windows and machine state.  An interval made of one launch's repetitions
says nothing about the next launch, so a claim about a machine or a library rests on launches:

- every launch contributes one value per configuration (its median, or its minimum with --stat min);
  the estimate is the ratio of the geometric means of those values;
- **paired** where the two sides were measured in the same launches (two methods of one run) or in
  launches alternated by scripts/launches on one machine (the i-th of each side): the 95 % interval
  is Student's t on the per-launch log ratios (n - 1 degrees of freedom);
- **unpaired** between machines: Welch's t on the two sides' log values (Welch-Satterthwaite
  degrees of freedom) (B. L. Welch, Biometrika 34, 1947);
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

MARGIN = 0.01  # a difference smaller than 1 % is never called: launches and rounds are not fully independent
FDR = 0.05  # the false discovery rate over the rows of one comparison (compare)
LEVEL = 0.95
MIN_LAUNCHES = 3  # the fewest per side for a t interval that is not absurdly wide (t(0.975; 2) = 4.3)


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


def welch(na: np.ndarray, ma: np.ndarray, va: np.ndarray, nb: np.ndarray, mb: np.ndarray,
          vb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, degrees of freedom) of mean(log B) - mean(log A) from each side's count,
    mean and sample variance of log values; NaN degrees of freedom below MIN_LAUNCHES on a side."""
    na, nb = np.asarray(na, float), np.asarray(nb, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = va / na, vb / nb
        se = np.sqrt(a + b)
        df = (a + b) ** 2 / (a ** 2 / (na - 1) + b ** 2 / (nb - 1))
    df = np.where(se == 0, na + nb - 2, df)  # identical values on both sides (a simulation): no spread
    df = np.where((na >= MIN_LAUNCHES) & (nb >= MIN_LAUNCHES), df, np.nan)
    return mb - ma, se, df


def paired_logs(n: np.ndarray, mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, standard error, degrees of freedom) from n per-launch log ratios' mean and sample variance."""
    n = np.asarray(n, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(var / n)
    return mean, se, np.where(n >= MIN_LAUNCHES, n - 1, np.nan)


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
        d = np.log(b_f[keep]) - np.log(a_f[keep])
        n = int(d.size)
        if n == 0:
            return math.nan, math.nan, math.nan, 0
        est, se, df = paired_logs(np.array([n]), np.array([d.mean()]), np.array([d.var(ddof=1) if n > 1 else 0.0]))
    else:
        la, lb = _log(a), _log(b)
        n = min(la.size, lb.size)
        if n == 0:
            return math.nan, math.nan, math.nan, 0
        va = la.var(ddof=1) if la.size > 1 else 0.0
        vb = lb.var(ddof=1) if lb.size > 1 else 0.0
        est, se, df = welch(np.array([la.size]), np.array([la.mean()]), np.array([va]), np.array([lb.size]),
                            np.array([lb.mean()]), np.array([vb]))
    return float(est[0]), float(se[0]), float(df[0]), n


def ratio(a: np.ndarray, b: np.ndarray, paired: bool) -> Ratio:
    """B / A from per-launch values (parts) — one comparison, at LEVEL."""
    est, se, df, n = parts(a, b, paired)
    if n == 0:
        return Ratio(math.nan, math.nan, math.nan, 0, paired)
    e, s_, d = np.array([est]), np.array([se]), np.array([df])
    lo, hi, _, level = judge(e, s_, d, fdr=None)
    return Ratio(float(np.exp(est)), float(lo[0]), float(hi[0]), n, paired, level, float(_t_parts(e, s_, d)[0]))
