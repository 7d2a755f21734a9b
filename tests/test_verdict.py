"""The paired verdict (analysis/mpimb/paired.py) on synthetic samples: equal,
5 % apart, drifting, and too few rounds to judge."""

from __future__ import annotations

import numpy as np
import pytest
from mpimb.paired import MIN_ROUNDS, median_ci_index, paired_ratio

RNG = np.random.default_rng(20261125)


def noisy(n: int, level: float, spread: float = 0.01) -> np.ndarray:
    return level * (1 + spread * RNG.normal(size=n))


def test_median_ci_index_matches_the_harness() -> None:
    # the same order statistics as src/common/stats.c (tests/unit/test_stats.c's values)
    assert median_ci_index(10) == (0, 9)
    assert median_ci_index(100) == (39, 60)
    assert median_ci_index(1000) == (468, 531)
    assert median_ci_index(5) == (0, 4)


def test_equal_is_within_the_noise() -> None:
    p = paired_ratio(noisy(40, 1.0), noisy(40, 1.0))
    assert p.judged and not p.called and p.lo < 1 < p.hi
    assert p.verdict() == "within the noise"


def test_five_percent_apart_is_called() -> None:
    p = paired_ratio(noisy(40, 1.05), noisy(40, 1.0))
    assert p.called and p.lo > 1 and abs(p.ratio - 1.05) < 0.02
    assert p.verdict() == "outside the noise"


def test_drift_cancels_in_the_ratio() -> None:
    """Both drift alike by a factor of 3 over the run: independent intervals overlap
    completely, the per-round ratio still finds the 5 %."""
    drift = np.linspace(1.0, 3.0, 30)
    a, b = 1.05 * drift * (1 + 0.002 * RNG.normal(size=30)), drift * (1 + 0.002 * RNG.normal(size=30))
    sa, sb = np.sort(a), np.sort(b)
    lo, hi = median_ci_index(30)
    assert not (sa[hi] < sb[lo] or sb[hi] < sa[lo])  # the independent CIs overlap: "noise"
    assert paired_ratio(a, b).called


def test_drift_alone_is_not_a_difference() -> None:
    """A drifts upward between B's rounds when measured minutes apart; alternated, no difference."""
    drift = np.linspace(1.0, 1.3, 30)
    p = paired_ratio(drift * (1 + 0.003 * RNG.normal(size=30)), drift * (1 + 0.003 * RNG.normal(size=30)))
    assert not p.called


@pytest.mark.parametrize("n", [1, 3, 5])
def test_too_few_rounds_is_not_judged(n: int) -> None:
    p = paired_ratio(np.full(n, 3.0), np.full(n, 1.0))  # 3x apart, but n rounds
    assert not p.judged and not p.called
    assert p.verdict() == f"not judged ({n} round{'' if n == 1 else 's'})"
    assert p.interval() == "[-]" and p.ratio == 3.0


def test_six_rounds_are_judged() -> None:
    p = paired_ratio(np.full(MIN_ROUNDS, 3.0), np.full(MIN_ROUNDS, 1.0))
    assert p.judged and p.called and p.lo == p.hi == 3.0


def test_missing_rounds_are_left_out() -> None:
    a = np.array([1.1, np.nan, 1.1, 1.1, 0, 1.1, 1.1, 1.1, 1.1])
    b = np.ones(9)
    assert paired_ratio(a, b).n == 7
