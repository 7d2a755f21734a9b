"""Paired verdicts: A against B from samples taken in the same rounds.

Where two configurations were measured alternately (rounds of one
repetition or one launch each, in shuffled order), round r gives the ratio
A_r / B_r, and drift of the machine, which moves both alike, cancels in it.
The verdict is the 95 % nonparametric confidence interval of the median of
those ratios (order statistics, J.-Y. Le Boudec, "Performance Evaluation of
Computer and Communication Systems", 2.1; the harness's mb_median_ci_index):
a difference is called only where that interval clears 1 ± 1 % (mpimb.launches.outside, the one rule; T. Hoefler and
R. Belli, "Scientific Benchmarking of Parallel Computing Systems", SC15,
rules 5-6; the paired design as in T. Kalibera and R. Jones, "Rigorous
Benchmarking in Reasonable Time", ISMM 2013).  Below 6 rounds no 95 %
interval of a median exists: "not judged"."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .launches import outside
from .schema import MIN_REPS_FOR_CI

MIN_ROUNDS = MIN_REPS_FOR_CI  # no 95 % interval of a median below it (the harness's MB_CI_MIN_REPS)


Z95 = 1.96  # the normal quantile of a 95 % two-sided interval


def median_ci_index(n: int, z: float = Z95) -> tuple[int, int]:
    """0-based order statistics bounding the median of n samples with 95 % confidence (z: the normal quantile of
    another level, for a family of comparisons judged together)."""
    if n < MIN_ROUNDS:
        return 0, max(n - 1, 0)
    r = z * math.sqrt(n)
    j = max(math.floor((n - r) / 2), 1)
    k = min(math.ceil(1 + (n + r) / 2), n)
    return j - 1, k - 1


@dataclass(frozen=True)
class Paired:
    """The median of A_r / B_r over n rounds and its 95 % interval (NaN below MIN_ROUNDS)."""

    ratio: float
    lo: float
    hi: float
    n: int

    @property
    def judged(self) -> bool:
        return self.n >= MIN_ROUNDS and math.isfinite(self.lo) and math.isfinite(self.hi)

    @property
    def called(self) -> bool:
        """A and B differ beyond the noise: the one rule, launches.outside (the interval clear of 1 ± MARGIN)."""
        return self.judged and bool(outside(self.lo, self.hi))

    def verdict(self, unit: str = "rounds") -> str:
        if not self.judged:
            return f"not judged ({self.n} {unit[:-1] if self.n == 1 else unit})"
        return "outside the noise" if self.called else "within the noise"

    def interval(self) -> str:
        return f"[{self.lo:.3g}, {self.hi:.3g}]" if self.judged else "[-]"


def paired_ratio(a: np.ndarray, b: np.ndarray, z: float = Z95) -> Paired:
    """A against B from per-round samples of equal length (rounds where either is missing or not positive left out);
    z: median_ci_index's."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    keep = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    r = np.sort(a[keep] / b[keep])
    n = int(r.size)
    if n == 0:
        return Paired(math.nan, math.nan, math.nan, 0)
    med = float(np.median(r))
    if n < MIN_ROUNDS:
        return Paired(med, math.nan, math.nan, n)
    lo, hi = median_ci_index(n, z)
    return Paired(med, float(r[lo]), float(r[hi]), n)
