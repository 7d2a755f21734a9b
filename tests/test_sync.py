"""The measurement harness on real ranks (issue 17): how repetitions start
(--sync barrier|window, the automatic choice), rejected repetitions and the
clock error in the results, the sweep budget, --order shuffle, the binding
check and the interval width in pingpong's table.  Times on this machine are
noise: nothing here checks a speed."""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest
from conftest import Run, bindir, check_bad_input, check_schema, run_mpi
from mpimb.schema import parse_params

QUICK = ["--quick", "--reps", "4", "--max-reps", "4"]


def params(row: dict[str, str]) -> dict[str, str]:
    return parse_params(row["params"])


def meta_of(csv: Path) -> dict:
    return json.loads(csv.with_suffix(".json").read_text())


def check_window_row(r: dict[str, str]) -> None:
    """A window-started row: the mode in params, the rejected count and the clock error in their columns."""
    assert params(r)["sync"] == "window", r
    assert int(r["reps_rejected"]) >= 0, r
    err = float(r["sync_error_s"])
    assert math.isfinite(err) and err >= 0, r


def check_barrier_row(r: dict[str, str]) -> None:
    assert params(r)["sync"] == "barrier", r
    assert r["reps_rejected"] == "" and r["sync_error_s"] == "", r


def test_window_rows(tmp_path: Path, lib: str) -> None:
    """--sync window: every measured row says so and carries the rejected count and the clock error."""
    run = run_mpi(lib, 2, "collectives", *QUICK, "--sync", "window", "--verify", "-t", "allreduce,barrier,ibcast",
                  "-m", "8:64", out=tmp_path / "w.csv", timeout=300)
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "collectives", 2)
    for r in rows:
        check_window_row(r)
        assert r["verified"] == ("" if r["test"] == "barrier" else "yes"), r
    sync = run.meta()["sync"]
    assert sync["mode"] == "window" and sync["rule"] is None
    assert sync["clocks_synchronised"] is True and sync["window_rows"] == len(rows) and sync["barrier_rows"] == 0
    assert sync["reps_rejected"] == sum(int(r["reps_rejected"]) for r in rows)
    assert sync["wtime_is_global"] is False  # neither library claims a global MPI_Wtime
    for key in ("startup_error_s", "last_error_s", "worst_error_s", "check_resolution_s", "barrier_exit_skew_s"):
        assert math.isfinite(sync[key]) and sync[key] >= 0, key
    assert sync["last_error_s"] == pytest.approx(float(rows[-1]["sync_error_s"]), rel=1e-6)
    assert "HCA3" in sync["algorithm"]


def test_barrier_rows(tmp_path: Path) -> None:
    run = run_mpi("mpich", 2, "collectives", *QUICK, "--sync", "barrier", "-t", "allreduce", "-m", "8:16",
                  out=tmp_path / "b.csv", timeout=300)
    assert run.returncode == 0, run.stderr
    for r in check_schema(run, "collectives", 2):
        check_barrier_row(r)
    sync = run.meta()["sync"]
    assert sync["mode"] == "barrier" and sync["clocks_synchronised"] is False and sync["window_rows"] == 0


@pytest.mark.parametrize("program,args", [
    ("pingpong", ["--tests", "latency,bw", "-m", "8:64", "--verify"]),
    ("rma", ["--ops", "put", "--syncs", "fence,lock-shared", "--windows", "create", "-m", "8:16", "--verify"]),
    ("threads", ["--tests", "overhead-latency,latency-mt", "-m", "8:8", "--threads", "2", "--verify"]),
    ("halocompare", ["--comms", "world,cart", "--methods", "irecv-isend,sendrecv", "--verify", "--group", "none"]),
])
def test_window_every_program(tmp_path: Path, program: str, args: list[str]) -> None:
    """Kernels that time themselves (threads, rma, pingpong) start on windows too, and still verify."""
    run = run_mpi("openmpi", 2, program, *QUICK, "--sync", "window", *args, out=tmp_path / "p.csv", timeout=300)
    assert run.returncode == 0, run.stderr
    measured = [r for r in run.rows() if not r["stop_reason"].startswith("n/a")]
    assert measured
    for r in measured:
        check_window_row(r)
    assert all(r["verified"] in ("yes", "") for r in measured) and any(r["verified"] == "yes" for r in measured)


def test_defaults(tmp_path: Path) -> None:
    """halocompare and collectives choose per test (and say by which rule); pingpong starts on a barrier."""
    run = run_mpi("mpich", 2, "halocompare", *QUICK, "--comms", "world", "--methods", "irecv-isend",
                  out=tmp_path / "h.csv", timeout=300)
    assert run.returncode == 0, run.stderr
    sync = run.meta()["sync"]
    assert sync["mode"] == "auto" and "0.01 of a repetition" in sync["rule"] and sync["clocks_synchronised"]
    rows = run.rows()
    for r in rows:
        (check_window_row if params(r)["sync"] == "window" else check_barrier_row)(r)
    assert sync["window_rows"] + sync["barrier_rows"] == len(rows)
    pp = run_mpi("mpich", 2, "pingpong", *QUICK, "--tests", "latency", "-m", "8:16", out=tmp_path / "p.csv")
    assert pp.returncode == 0, pp.stderr
    for r in pp.rows():
        check_barrier_row(r)
    assert pp.meta()["sync"]["mode"] == "barrier" and pp.meta()["sync"]["clocks_synchronised"] is False


def test_clock_fault_is_a_usage_error(tmp_path: Path) -> None:
    check_bad_input("collectives", ["--quick"], "collectives: MPIMB_FAULT: 'clock:soon' is not clock:OFFSET[:DRIFT] "
                    "in seconds (docs/architecture.md, \"Fault injection\")", tmp_path, env={"MPIMB_FAULT": "clock:soon"},
                    exact=True)


# ------------------------------------------------------------ sweep budget


def test_sweep_budget_stops_the_sweep(tmp_path: Path) -> None:
    """A target no size can reach and a per-size budget of 100 s: only the sweep's budget ends the sizes."""
    run = run_mpi("mpich", 2, "pingpong", "--tests", "latency", "-m", "0:1K", "--rel-ci", "1e-9",
                  "--time-budget", "100", "--max-reps", "10000000", "--min-rep-time", "1e-4", "--sweep-budget", "0.5",
                  out=tmp_path / "s.csv", timeout=600)
    assert run.returncode == 0, run.stderr
    rows = run.rows()
    assert len(rows) == 12
    assert all(r["stop_reason"] == "budget" and int(r["reps"]) >= 10 for r in rows), rows
    assert run.meta()["options"]["sweep_budget"] == 0.5


def test_pingpong_defaults_in_help() -> None:
    exe = bindir("mpich") / "pingpong"
    if not exe.exists():
        pytest.skip("not built")
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60, check=False).stdout
    assert "pingpong's own defaults: --rel-ci 0.01 --min-rep-time 5e-05 --sweep-budget 1.4" in out


def test_ci_column_matches_csv(tmp_path: Path) -> None:
    """pingpong's table shows each figure's achieved interval, the CSV's half-width as % of the median."""
    run = run_mpi("mpich", 2, "pingpong", "--tests", "latency", "-m", "0:256", "--reps", "7", "--max-reps", "20",
                  out=tmp_path / "c.csv", timeout=300)
    assert run.returncode == 0, run.stderr
    assert "\u00b1CI" in run.stdout
    shown = dict(re.findall(r"^(\d+)\s.*?\u00b1(\d+(?:\.\d)?)%", run.stdout, re.MULTILINE))
    rows = run.rows()
    assert len(shown) == len(rows) == 10
    for r in rows:
        med, lo, hi = (float(r[k]) for k in ("time_median_s", "time_ci_lo_s", "time_ci_hi_s"))
        pct = 100 * max(med - lo, hi - med) / med
        assert float(shown[r["bytes"]]) == pytest.approx(pct, abs=0.051 if pct < 10 else 0.51), r


# ------------------------------------------------------------ order


def test_order_shuffle(tmp_path: Path) -> None:
    """Tests run in a seeded random order (the same for the same seed); the tables keep theirs."""
    args = [*QUICK, "--comms", "world,evenodd,cart", "--methods", "irecv-send,irecv-isend,sendrecv,persistent",
            "--periodic", "no", "--sync", "barrier"]

    def keys(run: Run) -> list[tuple[str, ...]]:
        return [(r["test"], r["method"], r["comm"], r["neighbors"]) for r in run.rows()]

    def table(stdout: str) -> list[list[str]]:
        """The tables without their figures, nor what depends on them or on the machine's load while each
        launch ran: findings, the closing BUSY, FEW REPETITIONS and WIDE INTERVALS lines, the few mark ~."""
        return [re.sub(r"\d+(\.\d+)?~?", "N", line).split() for line in stdout.splitlines()
                if not line.startswith(("  * ", "BUSY: ", "FEW REPETITIONS: ", "WIDE INTERVALS: "))]

    fixed = run_mpi("openmpi", 4, "halocompare", *args, out=tmp_path / "f.csv", timeout=300)
    a = run_mpi("openmpi", 4, "halocompare", *args, "--order", "shuffle", "--order-seed", "7", out=tmp_path / "a.csv",
                timeout=300)
    b = run_mpi("openmpi", 4, "halocompare", *args, "--order", "shuffle", "--order-seed", "7", out=tmp_path / "b.csv",
                timeout=300)
    for run in (fixed, a, b):
        assert run.returncode == 0, run.stderr
    assert keys(a) == keys(b) and keys(a) != keys(fixed) and sorted(keys(a)) == sorted(keys(fixed))
    assert table(a.stdout) == table(fixed.stdout)
    assert a.meta()["order"] == {"mode": "shuffle", "seed": 7}
    assert fixed.meta()["order"] == {"mode": "fixed", "seed": None}
    # no seed given: one is drawn, and recorded so that the order can be repeated
    c = run_mpi("openmpi", 2, "collectives", *QUICK, "-t", "allreduce,bcast,gather", "-m", "8:8", "--order", "shuffle",
                out=tmp_path / "c.csv", timeout=300)
    assert c.returncode == 0, c.stderr
    seed = c.meta()["order"]["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**32


# ------------------------------------------------------------ binding


def test_binding_reported(tmp_path: Path) -> None:
    """MPICH leaves ranks unbound by default: one warning line saying how to bind; bound ranks: no warning."""
    exe = bindir("mpich") / "pingpong"
    if not exe.exists():
        pytest.skip("not built")
    args = [str(exe), *QUICK, "--tests", "latency", "-m", "8:8"]
    loose = subprocess.run(["mpiexec.mpich", "-n", "2", *args, "-o", str(tmp_path / "u.csv")], capture_output=True,
                           text=True, timeout=300, check=False)
    assert loose.returncode == 0, loose.stderr
    warn = [line for line in loose.stderr.splitlines() if "not bound" in line]
    assert len(warn) == 1 and warn[0].startswith("pingpong: warning: 2 of 2 ranks are not bound to cores")
    assert "-bind-to core (MPICH)" in warn[0] and "--bind-to core (Open MPI)" in warn[0] and "--cpu-bind=cores" in warn[0]
    meta = meta_of(tmp_path / "u.csv")
    assert meta["binding"] == {"checked": True, "bound": False, "unbound_ranks": 2, "ranks_sharing_cpus": 0}
    assert [r["bound"] for r in meta["ranks"]] == [False, False]
    bound = subprocess.run(["mpiexec.mpich", "-bind-to", "core", "-n", "2", *args, "-o", str(tmp_path / "b.csv")],
                           capture_output=True, text=True, timeout=300, check=False)
    assert bound.returncode == 0, bound.stderr
    assert "warning" not in bound.stderr
    meta = meta_of(tmp_path / "b.csv")
    assert meta["binding"]["bound"] is True and meta["binding"]["unbound_ranks"] == 0
    assert [r["bound"] for r in meta["ranks"]] == [True, True]


