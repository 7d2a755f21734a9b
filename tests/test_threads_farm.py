"""threads: communication threads at work (issue 18) — master-worker farming
(mpi-only, comm-threads, worker-overlap; bzip2 verified block by block, spin),
overlap with --placement (serial, comm-thread, spmd per placement; n/a with
the reason where this machine cannot place), per-thread CPU time, bad input,
and the TSan / ASan builds under MPICH.  Which PUs each placement picks is
checked on hwloc synthetic topologies by the C unit test tests/unit/test_place.c
(run by tests/test_unit.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import ONCE, check_bad_input, check_schema, cli_proc, run_mpi, text_table
from mpimb.schema import parse_params

MW = ("mpi-only", "comm-threads", "worker-overlap")
PLACES = ("same-pu", "smt-sibling", "other-core", "unbound")
MEASURED = ("ci", "max-reps", "budget")
# ONCE (conftest) for the runs whose timing is not what they check.


def hwloc_count(*args: str) -> int:
    return int(subprocess.run(["hwloc-calc", *args], capture_output=True, text=True, check=True).stdout)


def param(row: dict[str, str], key: str) -> str:
    return parse_params(row["params"])[key]


def report_table(results: Path, title: str) -> list[list[str]]:
    """mpimb-report table on a directory of results: the table under title."""
    p = cli_proc("table", results)
    assert p.rc == 0, p.err
    return text_table(p.out, title)


def check_farm_rows(rows: list[dict[str, str]], blocks: int, block_size: int) -> None:
    """master-worker's rows on 4 ranks: every version with 1, 2, 3 workers, measured and verified, the
    threads each version runs, bzip2 the work."""
    assert [(r["method"], param(r, "workers")) for r in rows] == [(m, str(w)) for w in (1, 2, 3) for m in MW]
    for r in rows:
        w = int(param(r, "workers"))
        assert r["stop_reason"] in MEASURED and r["verified"] == "yes", r
        assert r["test"] == "master-worker" and r["comm"] == "farm" and r["bytes"] == str(block_size)
        assert param(r, "blocks") == str(blocks) and param(r, "work") == "bzip2" and "work-us" not in r["params"]
        assert r["threads"] == str({"mpi-only": 1, "comm-threads": w, "worker-overlap": 2}[r["method"]])
        assert float(r["mbps"]) > 0 and float(r["cpu_pct"]) >= 0
        assert r["thread_level"] == "multiple"


def test_master_worker(tmp_path: Path) -> None:
    """The 'Done when' command: -n 4 --tests master-worker --quick --verify, Open MPI (MPICH busy-polls 4 ranks
    on 2 cores: its 4-rank master-worker, the same rows with smaller blocks, is test_sanitizers_mpich's)."""
    run = run_mpi("openmpi", 4, "threads", "--tests", "master-worker", "--quick", "--verify",
                  out=tmp_path / "mw.csv", timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "threads", 4)
    check_farm_rows(rows, 6, 64 * 1024)
    meta = run.meta()
    mw = meta["master_worker"]
    assert mw["blocks"] == 6 and mw["block_size"] == 65536 and mw["work"] == "bzip2"
    assert [(x["method"], x["workers"]) for x in mw["rows"]] == [(m, w) for w in (1, 2, 3) for m in MW]
    for x in mw["rows"]:
        assert 0.45 < x["result_ratio"] < 0.56  # 4 bits of entropy per byte: bzip2 -9 gives ~51 %
        assert (x["probe_pct"] is None) == (x["method"] == "mpi-only")
    # per-thread CPU: the master has one thread per worker in comm-threads, workers two in worker-overlap,
    # ranks outside the farm ran nothing
    cpu = {(x["method"], param(x, "workers")): x["ranks"] for x in meta["thread_cpu"]["rows"]}
    assert len(cpu[("comm-threads", "3")][0]) == 3 and len(cpu[("worker-overlap", "1")][1]) == 2
    assert cpu[("mpi-only", "1")][2:] == [[], []] and len(cpu[("mpi-only", "3")][3]) == 1
    t = text_table(run.stdout, "master-worker: 6 blocks of 65536 B, bzip2")
    assert t[0] == list(MW) and t[1] == ["workers", *["blocks/s", "MB/s", "speedup", "eff", "%", "cpu", "%"] * 3]
    body = t[3:]
    assert [r[0] for r in body] == ["1", "2", "3"]
    for r in body:
        assert len(r) == 16 and all(float(v) > 0 for i, v in enumerate(r[1:]) if i % 5 != 4)
        assert all(float(v) >= 0 for v in r[5::5])  # the master's CPU %: Open MPI's may round to 0
    assert body[0][3] == body[0][8] == body[0][13] == "1.00"  # speedup of one worker against itself
    # mpimb-report's table (analysis/mpimb/threads_tables.py) from the same rows
    rep = report_table(tmp_path, "threads master-worker: 6 blocks of 65536 B, bzip2")
    assert rep[0] == list(MW) and rep[1] == ["workers", *["blocks/s", "speedup", "cpu", "%"] * 3]
    for c_row, py_row in zip(body, rep[3:], strict=True):
        assert py_row[0] == c_row[0]
        for m in range(3):  # blocks/s and speedup agree with the program's own table
            assert float(py_row[1 + 3 * m]) == pytest.approx(float(c_row[1 + 5 * m]), rel=0.01)
            assert py_row[2 + 3 * m] == c_row[3 + 5 * m]


@pytest.mark.parametrize("work,message", [
    ("bzip2", "decompressed, byte 0 differs from the block of this iteration"),
    ("spin", "the receipt does not match the block of this iteration"),
])
def test_master_worker_catches_stale_blocks(work: str, message: str, tmp_path: Path) -> None:
    """MPIMB_FAULT=master-worker: the master sends another iteration's blocks; its check of every result fails."""
    run = run_mpi("openmpi", 3, "threads", "--tests", "master-worker", "--quick", "--verify", "--work", work, *ONCE,
                  out=tmp_path / "f.csv", env={"MPIMB_FAULT": "master-worker"}, timeout=600)
    assert run.returncode == 1, run.stderr[-3000:]
    rows = run.rows()
    assert len(rows) == 6 and all(r["verified"] == "no" and r["time_median_s"] for r in rows)
    assert f"rank 0: block 0 of 6 ({work}, 65536 B): {message}" in run.stderr
    assert "threads: FAILED: 6 of 6 tests failed verification" in run.stderr


def test_dispatch_limit_spin(tmp_path: Path) -> None:
    """--work spin --work-us 0, two workers picked by --workers: the master's dispatch rate, results verified."""
    run = run_mpi("openmpi", 4, "threads", "--tests", "master-worker", "--work", "spin", "--work-us", "0",
                  "--workers", "2,1", "--blocks", "5", "--block-size", "1M", "--quick", "--verify", *ONCE,
                  out=tmp_path / "s.csv", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "threads", 4)
    assert [(r["method"], param(r, "workers")) for r in rows] == [(m, str(w)) for w in (1, 2) for m in MW]
    for r in rows:
        assert r["verified"] == "yes" and r["bytes"] == str(1 << 20)
        assert param(r, "work") == "spin" and param(r, "work-us") == "0" and param(r, "blocks") == "5"
    mw = run.meta()["master_worker"]
    assert mw["work"] == "spin" and all(x["result_ratio"] == pytest.approx(8 / (1 << 20)) for x in mw["rows"])


def test_master_worker_level_too_low(tmp_path: Path) -> None:
    """--level serialized: what needs MPI_THREAD_MULTIPLE (comm-threads with 2 workers, worker-overlap) is n/a with
    the reason; mpi-only and comm-threads with one worker (one master thread) run."""
    run = run_mpi("openmpi", 3, "threads", "--tests", "master-worker", "--level", "serialized", "--quick", "--verify",
                  "--blocks", "2", "--block-size", "4K", *ONCE, out=tmp_path / "l.csv", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    why = "n/a: needs MPI_THREAD_MULTIPLE, library provided serialized"
    got = {(r["method"], param(r, "workers")): r["stop_reason"] for r in check_schema(run, "threads", 3)}
    assert got == {("mpi-only", "1"): got[("mpi-only", "1")], ("comm-threads", "1"): got[("comm-threads", "1")],
                   ("worker-overlap", "1"): why, ("mpi-only", "2"): got[("mpi-only", "2")],
                   ("comm-threads", "2"): why, ("worker-overlap", "2"): why}
    assert all(got[k] in MEASURED for k in (("mpi-only", "1"), ("comm-threads", "1"), ("mpi-only", "2")))


def test_placement(lib: str, tmp_path: Path) -> None:
    """overlap --placement (2 ranks): serial, comm-thread, spmd per placement, the table, the binding read back;
    what this machine cannot place is n/a with the reason."""
    run = run_mpi(lib, 2, "threads", "--tests", "overlap", "--placement", ",".join(PLACES), "--quick", "--verify",
                  out=tmp_path / "p.csv", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "threads", 2)
    assert [r["method"] for r in rows[:5]] == ["comm-only", "compute-only", "plain", "comm-thread", "comm-thread-wait"]
    assert all("placement" not in r["params"] for r in rows[:5])
    place = rows[5:]
    assert [(param(r, "placement"), r["method"]) for r in place] == [
        (p, m) for p in PLACES for m in ("serial", "comm-thread", "spmd")]
    smt = hwloc_count("--number-of", "pu", "core:0") > 1
    cores = hwloc_count("--number-of", "core", "all")
    reason = {
        "smt-sibling": None if smt else "n/a: no SMT: core 0 has one PU (P#0)",
        "other-core": None if cores >= 4 else
        f"n/a: other-core needs 4 cores (2 per compute thread, 2 compute threads on this node), the node has {cores}",
    }
    for r in place:
        why = reason.get(param(r, "placement"))
        if why:
            assert r["stop_reason"] == why, r
        elif r["method"] == "spmd":
            assert r["stop_reason"] == "n/a: needs 4 ranks (two processes per side), job has 2"
        else:
            assert r["stop_reason"] in MEASURED and r["verified"] == "yes", r
            assert r["threads"] == ("2" if r["method"] == "comm-thread" else "1") and float(r["cpu_pct"]) > 0
    meta = run.meta()["placement"]["placements"]
    assert meta["smt-sibling"]["possible"] is smt
    same = meta["same-pu"]["ranks"]
    assert [x["rank"] for x in same] == [0, 1]
    assert all(x["compute"] == x["comm"] and x["compute"].isdigit() for x in same)  # one PU, read back
    assert same[0]["compute"] != same[1]["compute"]  # the two sides on different cores
    t = text_table(run.stdout, "overlap by placement of the communication thread")
    assert t[0] == list(PLACES) and [r[0] for r in t[3:7]] == ["serial", "comm-thread", "spmd", "same-pu:"]
    if not smt:
        assert "  smt-sibling: n/a: no SMT: core 0 has one PU (P#0)" in run.stdout
    assert f"  same-pu: rank 0 bound compute/comm {same[0]['compute']}/{same[0]['compute']}" in run.stdout
    rep = report_table(tmp_path, "threads overlap by placement of the communication thread")
    assert rep[0] == list(PLACES) and [r[0] for r in rep[3:]] == ["serial", "comm-thread", "spmd"]
    assert rep[3][2] == "n/a" if not smt else rep[3][2] != "n/a"


def test_placement_spmd(tmp_path: Path) -> None:
    """4 ranks: spmd runs (ranks 1 and 3 are the second processes), placed where the communication thread would be."""
    run = run_mpi("openmpi", 4, "threads", "--tests", "overlap", "--placement", "same-pu,unbound", "--quick",
                  "--verify", *ONCE, out=tmp_path / "s.csv", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [r for r in check_schema(run, "threads", 4) if "placement=" in r["params"]]
    assert len(rows) == 6 and all(r["stop_reason"] in MEASURED and r["verified"] == "yes" for r in rows)
    same = {x["rank"]: x for x in run.meta()["placement"]["placements"]["same-pu"]["ranks"]}
    assert same[1]["spmd_second"] == same[0]["comm"] and same[3]["spmd_second"] == same[2]["comm"]
    line = next(s for s in run.stdout.splitlines() if s.startswith("spmd "))
    assert "n/a" not in line and "%" in line


def test_cpu_time_every_test(tmp_path: Path) -> None:
    """cpu_pct is filled for every measured threads row (rank 0's threads), empty for n/a rows; thread_cpu in the
    JSON has every rank's threads for each measured row."""
    run = run_mpi("openmpi", 2, "threads", "--tests", "overhead-latency,latency-mt,short-long,coll-mt",
                  "--level", "serialized", "--threads", "1", "--quick", out=tmp_path / "c.csv", timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "threads", 2)
    measured = [r for r in rows if r["stop_reason"] in MEASURED]
    assert measured and len(measured) < len(rows)  # serialized: short-long with-long is n/a
    assert all(float(r["cpu_pct"]) > 0 for r in measured)
    assert all(r["cpu_pct"] == "" for r in rows if r["stop_reason"].startswith("n/a"))
    detail = run.meta()["thread_cpu"]["rows"]
    assert [(x["test"], x["method"], str(x["bytes"])) for x in detail] == [
        (r["test"], r["method"], r["bytes"]) for r in measured]
    for x in detail:
        assert len(x["ranks"]) == 2 and all(len(t) >= 1 and all(v >= 0 for v in t) for t in x["ranks"])
    pp = next(x for x in detail if x["method"] == "processes")
    assert all(len(t) == 1 for t in pp["ranks"])  # one thread per process
    assert "cpu %" in run.stdout


@pytest.mark.parametrize("san", ["tsan", "asan"])
def test_sanitizers_mpich(san: str, tmp_path: Path) -> None:
    """The new code under MPICH's TSan and ASan builds: master-worker (3 workers, every version) and the placement
    study with spmd, 4 ranks, tiny blocks, one repetition; no report, every block verified; master-worker's rows
    as under Open MPI (test_master_worker)."""
    env = {"UCX_MEM_EVENTS": "no", "TSAN_OPTIONS": "halt_on_error=1 exitcode=66"} if san == "tsan" else {}
    run = run_mpi("mpich", 4, "threads", "--tests", "overlap,master-worker", "--placement", ",".join(PLACES),
                  "--quick", "--verify", "--blocks", "3", "--block-size", "16K", *ONCE, out=tmp_path / f"{san}.csv", san=san,
                  env=env, timeout=900)
    assert "Sanitizer" not in run.stderr and "runtime error" not in run.stderr, run.stderr[-6000:]
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "threads", 4)
    mw = [r for r in rows if r["test"] == "master-worker"]
    assert len(mw) == 9 and all(r["verified"] == "yes" for r in mw)
    check_farm_rows(mw, 3, 16 * 1024)
    assert any(r["method"] == "spmd" and r["verified"] == "yes" for r in rows)


@pytest.mark.parametrize("args,message", [
    (["--blocks", "0"], "threads: --blocks must be an integer from 1 to 10000, got '0'"),
    (["--block-size", "0"], "threads: --block-size must be a size in bytes from 1 to 67108864"),
    (["--work-us", "-1"], "threads: --work-us must be a non-negative number, got '-1'"),
    (["--work-us", "5"], "threads: --work-us needs --work spin"),
    (["--placement", "nowhere"], "threads: --placement: unknown value 'nowhere'"),
    (["--workers", "0"], "threads: --workers must be a comma-separated list of worker counts from 1 to 1023, got '0'"),
    (["--workers", "1,x"], "threads: --workers must be a comma-separated list of worker counts from 1 to 1023, got '1,x'"),
    (["--work", "gzip"], "threads: --work: unknown value 'gzip'"),
    (["--workers", "2"], "threads: --workers 2 needs 3 ranks (a master and 2 workers), the job has 2"),
])
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    """The binary alone (conftest.check_bad_input); the worker count against the job's ranks on 2 ranks of
    each library."""
    if "the job has 2" in message:
        check_bad_input("threads", args, message, tmp_path, ranks=2, libs=("openmpi", "mpich"))
    else:
        check_bad_input("threads", args, message, tmp_path)
