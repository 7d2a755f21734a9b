"""Figures that say what they can carry (issue 24): no 'ci' stop below the
6 repetitions a 95 % interval of the median needs, rows below that carry no
interval, and a run whose ranks x threads exceed a node's PUs says so on
stderr, in its JSON and under every report heading."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import LIBS, REPORT, Run, report, run_mpi

ONE_REP = ("--reps", "1", "--max-reps", "1", "--comms", "world", "--methods", "irecv-isend,persistent,sendrecv",
           "--tests", "halo", "--periodic", "no", "--min-rep-time", "0", "--warmup", "1")
PUS = len(os.sched_getaffinity(0))


@pytest.fixture(scope="module", params=LIBS)
def mlib(request: pytest.FixtureRequest) -> str:
    if not shutil.which(f"mpiexec.{request.param}"):
        pytest.skip(f"mpiexec.{request.param} not installed")
    return str(request.param)


@pytest.fixture(scope="module")
def one_rep(tmp_path_factory: pytest.TempPathFactory, mlib: str) -> Run:
    """The issue's command on 4 ranks: more than this 2-core machine has."""
    out = tmp_path_factory.mktemp(f"one-rep-{mlib}") / "h.csv"
    return run_mpi(mlib, 4, "halocompare", *ONE_REP, out=out, timeout=120,
                   env={"MPIMB_REPORT": str(REPORT)})


def test_one_repetition_is_no_interval(one_rep: Run) -> None:
    assert one_rep.returncode == 0, one_rep.stderr
    rows = one_rep.rows()
    assert len(rows) == 6
    for r in rows:
        assert r["reps"] == "1" and r["stop_reason"] == "max-reps", r
        assert r["time_ci_lo_s"] == "" and r["time_ci_hi_s"] == "", r
        assert float(r["time_median_s"]) > 0
    assert "fewer than the 6 a 95 % interval needs: no verdicts" in one_rep.stdout


def test_stdout_ends_with_the_analysis_findings(one_rep: Run) -> None:
    """The run's own stdout ends with mpimb-report's findings: one judgement, and none from one sample."""
    tail = one_rep.stdout[one_rep.stdout.index("\nFindings (medians;"):].strip().splitlines()
    found = [x for x in tail[1:] if x.startswith("  * ")]
    assert found and len(found) == len(tail) - 1, tail
    for x in found:
        assert "— not judged (1 repetition)" in x, x
        assert "outside the noise" not in x and "within the noise" not in x
        if PUS < 4:
            assert "[oversubscribed: ranks × threads > cores" in x


@pytest.mark.skipif(PUS >= 4, reason="4 ranks fit this machine")
def test_oversubscription_said_everywhere(one_rep: Run) -> None:
    meta = one_rep.meta()
    assert meta["oversubscribed"] is True
    o = meta["oversubscription"]
    assert o["ranks"] == 4 and o["threads_per_rank"] == 1 and o["pus"] == PUS
    lines = [x for x in one_rep.stderr.splitlines() if "oversubscribed" in x]
    assert len(lines) == 1 and "run at most" in lines[0], one_rep.stderr
    head = one_rep.stdout.splitlines()[1]
    assert head.startswith("OVERSUBSCRIBED: 4 ranks x 1 thread(s) on ") and f"share {PUS} PUs" in head


@pytest.mark.skipif(PUS < 2, reason="needs 2 cores")
def test_fitting_run_is_not_marked(tmp_path: Path, lib: str) -> None:
    """2 ranks on 2 cores: no mark; rows that stop on 'ci' have at least 6 repetitions."""
    r = run_mpi(lib, 2, "halocompare", "--reps", "2", "--comms", "world", "--methods", "irecv-isend",
                "--tests", "halo", out=tmp_path / "h.csv", timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.meta()["oversubscribed"] is False
    assert "OVERSUBSCRIBED" not in r.stdout and "oversubscribed" not in r.stderr
    rows = r.rows()
    assert rows
    for row in rows:
        if row["stop_reason"] == "ci":
            assert int(row["reps"]) >= 6, row
            assert float(row["time_ci_lo_s"]) <= float(row["time_median_s"]) <= float(row["time_ci_hi_s"])


@pytest.mark.skipif(PUS != 2, reason="counts threads against this 2-core machine")
def test_threads_count_against_cores(tmp_path: Path) -> None:
    """2 ranks x 2 threads on 2 PUs: oversubscribed, though the ranks alone fit."""
    r = run_mpi("openmpi", 2, "threads", "--tests", "latency-mt", "--pairing", "tags", "--quick", "-t", "2",
                out=tmp_path / "t.csv", timeout=120)
    assert r.returncode == 0, r.stderr
    o = r.meta()["oversubscription"]
    assert r.meta()["oversubscribed"] is True and o["threads_per_rank"] == 2 and o["ranks"] == 2
    assert "OVERSUBSCRIBED: 2 ranks x 2 thread(s)" in r.stdout


def test_rows_of_few_repetitions_are_marked(tmp_path: Path, mlib: str) -> None:
    """A test asked for fewer than 6 repetitions whose budget is spent ends with them (the --max-reps caveat does
    not cover it): its cells carry ~ in the program's tables and in mpimb-report's, one line says so at the end,
    and the table's note explains the mark (issue 44, item 16)."""
    out = tmp_path / "h.csv"
    run = run_mpi(mlib, 2, "halocompare", "--tests", "halo", "--comms", "world", "--methods", "irecv-isend",
                  "--neighbors", "4", "--periodic", "no", "--group", "none", "--reps", "3", "--min-rep-time", "0.04",
                  "--time-budget", "0.005", "--warmup", "0", out=out, timeout=120, env={"MPIMB_REPORT": "none"})
    assert run.returncode == 0, run.stderr
    rows = [r for r in run.rows() if r["test"] == "halo"]
    assert rows and all(0 < int(r["reps"]) < 6 for r in rows), [r["reps"] for r in rows]
    assert "~" in run.stdout.split("FEW REPETITIONS")[0]
    assert any(ln.startswith(f"FEW REPETITIONS: {len(rows)} of {len(rows)} rows ended with fewer than the 6")
               for ln in run.stdout.splitlines()), run.stdout
    from mpimb.render import FEW
    t = report("table", out)
    assert FEW in t and f"{FEW}: {len(rows)} value(s) of fewer than 6 repetitions" in t.replace("\n  ", " ")
