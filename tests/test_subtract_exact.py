"""collectives --timing subtract end to end, where the truth is known (issue 25).

On the exact two-node platform (tests/test_simulate.py) simulated time is deterministic: with no
disturbance the loop of K x (bcast; barrier) and the barrier-only loop paired with it are the same at
every repetition, so their difference d is known.  A drift fault (MPIMB_FAULT drift:S/TEST, fault.c)
then makes the machine slow down: the n-th drifted repetition, and its paired reference, n x S longer.
The row's interval (the paired difference, docs/measurement.md) still contains d; the old subtraction,
the loop's own interval shifted by the median of a barrier loop measured at another time (here the run's
`barrier` row, measured first), does not: it is off by the drift between the two measurements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import check_bad_input, check_schema
from mpimb import load
from mpimb.paired import median_ci_index
from test_simulate import needs_smpi, sim_run

S = 1e-4  # seconds per drift step: the drift over the run (steps up to 24) is 200 x d (11 us)
STEPS = 6  # repetitions per row, each a drift step (K = 1: --min-rep-time 0)
ARGS = ("-t", "barrier,bcast", "-m", "1K:1K", "--timing", "subtract", "--sync", "barrier", "--min-rep-time", "0",
        "--reps", str(STEPS), "--max-reps", str(STEPS), "--verify")
EPS = 1e-12  # seconds: float rounding of a difference of ms-sized times, far below d and S


def run(tmp_path: Path, name: str) -> tuple[pd.DataFrame, pd.DataFrame, dict, str]:
    """The rows (in CSV order), the --raw samples, the metadata and stderr of one run on the exact platform."""
    out = tmp_path / f"{name}.csv"
    r = sim_run("collectives", 2, "two-node", *ARGS, "--raw", str(tmp_path / f"{name}-raw.csv"), out=out,
                exact=True)
    check_schema(r, "collectives", 2)
    load.load([str(out)])  # the analysis package's schema and consistency checks: raises on any problem
    rows = pd.read_csv(out)
    assert rows["reps"].eq(STEPS).all() and rows["test"].tolist()[0] == "barrier"
    bcast = rows[rows["test"] == "bcast"]
    assert len(bcast) >= 1 and bcast["verified"].eq("yes").all() and bcast["params"].str.contains("timing=subtract").all()
    return rows, pd.read_csv(tmp_path / f"{name}-raw.csv"), r.meta(), r.stderr


def contains(lo: pd.Series, hi: pd.Series, x: float) -> pd.Series:
    return (lo <= x + EPS) & (x - EPS <= hi)


def loop_times(raw: pd.DataFrame, method: str) -> np.ndarray:
    """The bcast rows' loop (or, method "reference", their paired barrier loop's) time per repetition, the
    slowest rank's: one line of the array per row, in CSV order, repetitions in order."""
    lines = raw[raw["method"] == method] if method == "reference" else raw[(raw["test"] == "bcast")]
    return lines.groupby(["row", "rep"])["seconds"].max().unstack("rep").to_numpy()


@needs_smpi
def test_subtract_interval_contains_the_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1. clean: every row's interval is a point; the bcast rows' is d, which is, at every repetition, the
    #    loop's time minus its reference's, both in the raw file (docs/results-format.md)
    monkeypatch.delenv("MPIMB_FAULT", raising=False)
    rows, raw, _, err = run(tmp_path, "clean")
    assert "MPIMB_FAULT" not in err
    assert (rows["time_ci_lo_s"] == rows["time_ci_hi_s"]).all()
    barrier_clean = rows["time_median_s"].iloc[0]
    bcast = rows[rows["test"] == "bcast"]
    d = bcast["time_median_s"].iloc[0]
    assert d > 0 and (bcast["time_median_s"] - d).abs().max() < EPS
    assert (raw.loc[raw["method"] == "reference", "test"] == "barrier").all()
    np.testing.assert_allclose(loop_times(raw, "loop") - loop_times(raw, "reference"), d, rtol=0, atol=EPS)

    # 2. drifting: the barrier row's repetitions are steps 1..6, then each bcast row's (loop and reference) the next 6
    unmatched = "drift:1e-4/allreduce"
    monkeypatch.setenv("MPIMB_FAULT", f"drift:{S}/barrier,drift:{S}/bcast,{unmatched}")
    rows, raw, meta, err = run(tmp_path, "drift")
    # the drift is real and as defined: the barrier row's samples (slowest rank) are the clean barrier + n S
    slowest = raw[raw["row"] == 1].groupby("rep")["seconds"].max().to_numpy()
    np.testing.assert_allclose(slowest, barrier_clean + S * np.arange(1, STEPS + 1), rtol=0, atol=EPS)
    bcast = rows[rows["test"] == "bcast"]
    first_step = STEPS * np.arange(1, len(bcast) + 1) + 1  # each bcast row's first drift step
    # ... and so are the references paired with the bcast rows: their medians, measured (the JSON's range)
    ref_medians = barrier_clean + S * (first_step + (STEPS - 1) / 2)
    ranged = meta["collectives"]["barrier_reference_s"]
    assert ranged["tests"] == len(bcast)
    assert ranged["min"] == pytest.approx(ref_medians.min(), abs=EPS)
    assert ranged["max"] == pytest.approx(ref_medians.max(), abs=EPS)

    # the paired interval contains d: the drift, shared by a repetition and its reference, cancels
    assert contains(bcast["time_ci_lo_s"], bcast["time_ci_hi_s"], d).all()
    # (here exactly: every repetition's difference is d, so each repetition's loop is d + its reference)
    assert ((bcast["time_min_s"] - d).abs() < EPS).all() and ((bcast["time_max_s"] - d).abs() < EPS).all()

    # the raw file holds both loops of each repetition as measured: the reference drifted by its step
    refs, loops = loop_times(raw, "reference"), loop_times(raw, "loop")
    np.testing.assert_allclose(refs, barrier_clean + S * (first_step[:, None] + np.arange(STEPS)), rtol=0, atol=EPS)
    np.testing.assert_allclose(loops - refs, d, rtol=0, atol=EPS)

    # the old way: the loop's own 95 % interval (order statistics, the harness's rule) shifted by the
    # median of the barrier row, a barrier loop measured before, at less drift
    loops = np.sort(loops, axis=1)
    j, k = median_ci_index(STEPS)
    shift = rows["time_median_s"].iloc[0]
    assert shift == pytest.approx(barrier_clean + S * (STEPS + 1) / 2, abs=EPS)
    assert not contains(pd.Series(loops[:, j] - shift), pd.Series(loops[:, k] - shift), d).any()

    # a drift fault that matched no test is reported as the others are
    assert f"collectives: warning: MPIMB_FAULT's '{unmatched}' matched no test" in err


def test_drift_bad_value(tmp_path: Path) -> None:
    check_bad_input("collectives", ["-t", "bcast"], "MPIMB_FAULT: 'drift:0/bcast' is not drift:SECONDS/", tmp_path,
                    env={"MPIMB_FAULT": "drift:0/bcast"})
