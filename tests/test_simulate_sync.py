"""--sync window against the exact model (issue 17), on simulated platforms
where time is exact, so these are correctness checks, never timed tests.

On two-node with --exact, an allreduce of s bytes between the two ranks is one
exchange over the full-duplex link: L + s/B (+ SMPI's per-message constant).
Started on windows it measures exactly that; started when each rank leaves a
barrier it also measures the barrier's exit skew, which the window run
measures on its synchronised clocks (JSON sync.barrier_exit_skew_s): zero for
the recursive-doubling barrier scripts/simulate configures (both ranks leave
after one exchange), one latency for the linear barrier Open MPI also uses
(the root releases the others by message).

MPIMB_FAULT=clock:OFFSET:DRIFT gives every rank r a clock r * (OFFSET + DRIFT * t) off
the simulated global one, so the synchronisation has offsets and drifts to
find: the results must not change.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Run, check_schema
from test_simulate import BW, LAT, SMPI_PER_MESSAGE, needs_smpi, simulate

SIZES = [8 << k for k in range(14)]  # 8 B .. 64 KiB


def model(s: int) -> float:
    return LAT + s / BW + SMPI_PER_MESSAGE


def allreduce(tmp_path: Path, name: str, platform: str, n: int, *opts: str, sync: str) -> Run:
    out = tmp_path / f"{name}-{sync}.csv"
    p = simulate("collectives", "-n", str(n), "--platform", platform, "--exact", *opts, "--", "-o", str(out),
                 "--tests", "allreduce", "-m", "8:64K", "--sync", sync, "--min-rep-time", "0", "--reps", "5",
                 "--max-reps", "5", "--warmup", "1", cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return Run(p.returncode, p.stdout, p.stderr, out)


@needs_smpi
@pytest.mark.parametrize("barrier,skew", [("ompi_basic_linear", LAT), ("ompi_recursivedoubling", 0.0)])
def test_window_exact_barrier_off_by_skew(tmp_path: Path, barrier: str, skew: float) -> None:
    opts = ("--cfg", f"smpi/barrier:{barrier}")
    win = allreduce(tmp_path, barrier, "two-node", 2, *opts, sync="window")
    bar = allreduce(tmp_path, barrier, "two-node", 2, *opts, sync="barrier")
    # the library's MPI_Allreduce (--tests allreduce also runs the two-level forms)
    wrows, brows = ([r for r in check_schema(x, "collectives", 2) if r["method"] == "library"] for x in (win, bar))
    assert [int(r["bytes"]) for r in wrows] == SIZES == [int(r["bytes"]) for r in brows]
    measured_skew = win.meta()["sync"]["barrier_exit_skew_s"]
    assert measured_skew == pytest.approx(skew, abs=0.02 * LAT)
    for w, b in zip(wrows, brows):
        s = int(w["bytes"])
        tw, tb = float(w["time_median_s"]), float(b["time_median_s"])
        assert tw == pytest.approx(model(s), rel=0.01), (s, tw, model(s))
        assert int(w["reps_rejected"]) == 0 and float(w["sync_error_s"]) < 0.001 * LAT
        # barrier: the same exchange plus the barrier's exit skew, once per repetition
        assert tb == pytest.approx(tw + measured_skew, rel=0.01), (s, tb, tw, measured_skew)
    if skew:
        assert float(brows[0]["time_median_s"]) > 1.5 * model(8)  # far beyond 1 %: the skew is a latency


@needs_smpi
def test_clock_fault_two_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rank 1's clock 1 ms ahead and 10 ppm fast: learned, and the figures stay exact."""
    monkeypatch.setenv("MPIMB_FAULT", "clock:0.001:1e-5")
    run = allreduce(tmp_path, "fault", "two-node", 2, "--cfg", "smpi/barrier:ompi_basic_linear", sync="window")
    rows = [r for r in check_schema(run, "collectives", 2) if r["method"] == "library"]
    sync = run.meta()["sync"]
    assert sync["wtime_is_global"] is False and sync["clocks_synchronised"] is True
    for r in rows:
        s = int(r["bytes"])
        assert float(r["time_median_s"]) == pytest.approx(model(s), rel=0.01), r
        assert int(r["reps_rejected"]) == 0
        assert float(r["sync_error_s"]) < 0.01 * LAT  # the error a row reports: measured after it ran


@needs_smpi
def test_clock_fault_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six ranks (a tree that is not a power of two), each clock r ms off: every rank finds rank 0's time,
    known to within the half-widths along its path."""
    monkeypatch.setenv("MPIMB_FAULT", "clock:0.001:1e-5")
    out = tmp_path / "t.csv"
    p = simulate("collectives", "-n", "6", "--platform", "fat-tree", "--exact", "--", "-o", str(out), "--tests",
                 "bcast,allreduce", "-m", "8:4K", "--sync", "window", "--min-rep-time", "0", "--reps", "5",
                 "--max-reps", "5", "--warmup", "1", cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    run = Run(0, p.stdout, p.stderr, out)
    for r in check_schema(run, "collectives", 6):
        assert int(r["reps_rejected"]) == 0 and float(r["sync_error_s"]) < 1e-7, r
    sync = run.meta()["sync"]
    assert sync["worst_error_s"] < 1e-7 and sync["startup_error_s"] < 1e-7
    # the check's resolution sums the half-widths along a rank's path: ranks 3 and 5 are two levels down
    # (3 -> 2 -> 0, 5 -> 1 -> 0), every hop of the fat tree alike, so twice a one-level tree's (2 ranks)
    one = tmp_path / "one.csv"
    p = simulate("collectives", "-n", "2", "--platform", "fat-tree", "--exact", "--", "-o", str(one), "--tests",
                 "allreduce", "-m", "8:8", "--sync", "window", "--min-rep-time", "0", "--reps", "1", "--max-reps",
                 "1", "--warmup", "0", cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    hop = Run(0, p.stdout, p.stderr, one).meta()["sync"]["check_resolution_s"]
    assert hop > 0 and sync["check_resolution_s"] == pytest.approx(2 * hop, rel=0.01)
