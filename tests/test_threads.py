"""threads end to end: every test at every thread level (a level too low for a
test: the row is skipped with the reason, exit 0), threads versus processes,
--pairing, --bind and the placement metadata, bad input, the TSan build under
MPICH, and scripts/thread-overhead for both libraries."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import (
    ONCE,
    REPORT,
    ROOT,
    bindir,
    check_bad_input,
    check_schema,
    cli_proc,
    run_mpi,
)
from mpimb.schema import parse_params

TESTS = (
    "overhead-latency",
    "overhead-bw",
    "latency-mt",
    "bw-mt",
    "msgrate-mt",
    "short-long",
    "overlap",
    "coll-mt",
    "master-worker",
)
MT = ("latency-mt", "bw-mt", "msgrate-mt")
LEVELS = ("single", "funneled", "serialized", "multiple")
MEASURED = ("ci", "max-reps", "budget")
# ONCE (conftest) for the runs whose timing is not what they check (test_every_test, the TSan run and
# scripts/thread-overhead keep --quick's counts).


def need(row: dict[str, str], threads: int) -> str | None:
    """The thread level a row needs (None: any), as the program decides it."""
    t, m = row["test"], row["method"]
    if t in MT and m.startswith("threads-") and threads > 1:
        return "multiple"
    if t == "short-long" and m == "with-long":
        return "multiple"
    if t == "coll-mt" and m.endswith("-concurrent") and threads > 1:
        return "multiple"
    if t == "overlap" and m.startswith("comm-thread"):
        return "serialized"
    if t == "master-worker" and m != "mpi-only":
        one_worker = parse_params(row["params"]).get("workers") == "1"
        return None if m == "comm-threads" and one_worker else "multiple"
    return None


def check_rows(
    rows: list[dict[str, str]], nprocs: int, threads: int, verified: bool = True
) -> None:
    """Every row is measured, or skipped for exactly the reason it should be."""
    provided = rows[0]["thread_level"]
    for r in rows:
        assert r["thread_level"] == provided
        lvl = need(r, threads)
        if r["method"] == "processes" and nprocs < 2 * threads:
            assert (
                r["stop_reason"]
                == f"n/a: needs 2T = {2 * threads} ranks (T processes per side), job has {nprocs}"
            )
        elif lvl and LEVELS.index(provided) < LEVELS.index(lvl):
            assert (
                r["stop_reason"]
                == f"n/a: needs MPI_THREAD_{lvl.upper()}, library provided {provided}"
            ), r
        else:
            assert r["stop_reason"] in MEASURED, r
            t = [float(r[c]) for c in ("time_min_s", "time_median_s", "time_max_s")]
            assert 0 < t[0] <= t[1] <= t[2], r
            if verified:
                assert r["verified"] == "yes", r
            if r["test"] in ("overhead-bw", "bw-mt", "msgrate-mt"):
                assert float(r["mbps"]) > 0
            continue
        assert r["time_median_s"] == "" and r["verified"] == "", r


def test_every_test(lib: str, tmp_path: Path) -> None:
    """The 'Done when' command: -n 2 --level multiple --threads 2 --quick --verify."""
    out = tmp_path / "t.csv"
    run = run_mpi(
        lib,
        2,
        "threads",
        "--level",
        "multiple",
        "--threads",
        "2",
        "--quick",
        "--verify",
        out=out,
    )
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 2)
    assert [r["test"] for r in rows] == [
        *["overhead-latency", "overhead-bw"],
        *[t for t in MT for _ in range(3)],
        *["short-long"] * 2,
        *["overlap"] * 5,
        *["coll-mt"] * 4,
        *["master-worker"] * 3,
    ]
    assert rows[0]["thread_level"] == "multiple"
    check_rows(rows, 2, 2)
    # the level MULTIPLE (test_levels has the others): nothing skipped for the level, the overhead rows at it
    assert not [r for r in rows if r["stop_reason"].startswith("n/a: needs MPI_THREAD")]
    assert {r["method"] for r in rows if r["test"].startswith("overhead-")} == {"multiple"}
    by = {(r["test"], r["method"]): r for r in rows}
    assert by[("latency-mt", "threads-tags")]["comm"] == "shared"
    assert by[("latency-mt", "threads-comms")]["comm"] == "per-thread"
    assert by[("latency-mt", "threads-tags")]["threads"] == "2"
    assert by[("overhead-latency", "multiple")]["threads"] == "1"
    assert by[("short-long", "with-long")]["threads"] == "2"
    assert by[("overhead-bw", "multiple")]["bytes"] == str(
        64 * 1024
    )  # --quick's long size
    for m in ("threads-tags", "threads-comms"):
        assert by[("latency-mt", m)]["stop_reason"] in MEASURED
    meta = run.meta()
    assert (
        meta["threads"]["requested_level"] == "multiple"
        and meta["threads"]["threads"] == 2
    )
    assert set(meta["overlap"]["overlap_percent"]) == {
        "plain",
        "comm-thread",
        "comm-thread-wait",
    }
    assert all(
        isinstance(v, float | int) for v in meta["overlap"]["overlap_percent"].values()
    )
    assert meta["overlap"]["compute_iterations"] > 0
    place = meta["thread_placement"]
    assert place["bind"] is False and len(place["ranks"]) == 2
    assert all(
        len(r["threads"]) == 2 and r["threads"][0]["cpuset"] for r in place["ranks"]
    )
    for title in (
        "single-threaded ping-pong, requested multiple",
        "2 threads per process vs 2 processes",
        "overlap",
    ):
        assert title in run.stdout
    assert "overlap " in run.stdout and "% vs alone" in run.stdout


def test_processes_side_by_side(tmp_path: Path) -> None:
    """With 2T ranks the processes variant runs next to the threads variants (Open MPI: 4 ranks)."""
    out = tmp_path / "p.csv"
    run = run_mpi(
        "openmpi",
        4,
        "threads",
        "--threads",
        "2",
        "--tests",
        ",".join(MT),
        "--quick",
        "--verify",
        *ONCE,
        out=out,
    )
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 4)
    assert [(r["test"], r["method"]) for r in rows] == [
        (t, m) for t in MT for m in ("threads-tags", "threads-comms", "processes")
    ]
    check_rows(rows, 4, 2)
    assert all(r["stop_reason"] in MEASURED and r["threads"] == "2" for r in rows)
    meta = run.meta()["threads"]
    assert meta["pair"] == [0, 2] and meta["pair_same_node"] is True
    line = next(s for s in run.stdout.splitlines() if s.startswith("latency-mt"))
    assert "n/a" not in line and len(line.split()) == 6


@pytest.mark.parametrize("lib,level", [("openmpi", "single"), ("mpich", "funneled"), ("openmpi", "serialized")])
def test_levels(lib: str, level: str, tmp_path: Path) -> None:
    """Each requested level below MULTIPLE (MULTIPLE: test_every_test, both libraries): the provided level in
    the CSV (both libraries provide what is asked), the tests needing more are skipped with the reason, exit 0;
    under MPICH at FUNNELED, exactly the multi-threaded rows."""
    out = tmp_path / "l.csv"
    run = run_mpi(lib, 2, "threads", "--level", level, "--quick", "--verify", *ONCE, out=out)
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 2)
    assert rows[0]["thread_level"] == level
    check_rows(rows, 2, 2)
    assert {r["method"] for r in rows if r["test"].startswith("overhead-")} == {level}
    skipped = {
        (r["test"], r["method"])
        for r in rows
        if r["stop_reason"].startswith("n/a: needs MPI_THREAD")
    }
    if level in ("single", "funneled"):
        assert ("overlap", "comm-thread") in skipped and (
            "latency-mt",
            "threads-tags",
        ) in skipped
    else:
        assert ("overlap", "comm-thread") not in skipped and (
            "short-long",
            "with-long",
        ) in skipped
    assert run.meta()["threads"]["requested_level"] == level
    if level == "funneled":
        na = [r for r in rows if r["stop_reason"] == "n/a: needs MPI_THREAD_MULTIPLE, library provided funneled"]
        assert len(na) == 2 * 3 + 1 + 2 + 1  # threads-* of 3 mt tests, with-long, 2 concurrent collectives, worker-overlap


def test_one_thread_single(tmp_path: Path) -> None:
    """--threads 1 at SINGLE: one thread needs no higher level; only the second-thread tests are skipped."""
    out = tmp_path / "s.csv"
    run = run_mpi(
        "openmpi",
        2,
        "threads",
        "--level",
        "single",
        "--threads",
        "1",
        "--quick",
        "--verify",
        *ONCE,
        out=out,
    )
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 2)
    check_rows(rows, 2, 1)
    skipped = {
        (r["test"], r["method"]) for r in rows if r["stop_reason"].startswith("n/a")
    }
    assert skipped == {
        ("short-long", "with-long"),
        ("overlap", "comm-thread"),
        ("overlap", "comm-thread-wait"),
        ("master-worker", "worker-overlap"),
    }


def test_pairing_sizes_and_bind(tmp_path: Path) -> None:
    """--pairing selects the variants, -m sweeps latency sizes, --bind pins and reports each thread."""
    out = tmp_path / "b.csv"
    run = run_mpi(
        "openmpi",
        2,
        "threads",
        "--pairing",
        "comms",
        "--tests",
        "latency-mt,overhead-latency",
        "-m",
        "8:32",
        "--threads",
        "3",
        "--bind",
        "--quick",
        "--verify",
        *ONCE,
        out=out,
    )
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 2)
    assert [(r["test"], r["method"], r["bytes"]) for r in rows] == [
        *[("overhead-latency", "multiple", b) for b in ("8", "16", "32")],
        *[
            ("latency-mt", m, b)
            for b in ("8", "16", "32")
            for m in ("threads-comms", "processes")
        ],
    ]
    check_rows(rows, 2, 3)
    place = run.meta()["thread_placement"]
    assert place["bind"] is True and place["team_threads"] == 3
    ncpu = os.cpu_count() or 1
    for r in place["ranks"]:
        assert len(r["threads"]) == 3
        if place["bound"]:
            for t in r["threads"]:
                assert t["cpuset"].isdigit() and int(t["cpuset"]) < ncpu  # one PU each


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--threads", "0"],
            "threads: --threads must be an integer from 1 to 1024, got '0'",
        ),
        (
            ["--threads", "100000"],
            "threads: --threads must be an integer from 1 to 1024, got '100000'",
        ),
        (["--level", "full"], "threads: --level: unknown value 'full'"),
        (["--tests", "latency"], "threads: --tests: unknown value 'latency'"),
        (["--pairing", "ranks"], "threads: --pairing: unknown value 'ranks'"),
        (
            ["--window", "0"],
            "threads: --window must be an integer from 1 to 4096, got '0'",
        ),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    check_bad_input("threads", args, message, tmp_path)  # the binary alone (conftest)


def test_list(tmp_path: Path) -> None:
    run = run_mpi("openmpi", 1, "threads", "--list", out=tmp_path / "x.csv")
    assert run.returncode == 0
    first = run.stdout.splitlines()[0].split()
    assert first[0] == "tests:" and tuple(first[1:]) == TESTS
    assert list(tmp_path.iterdir()) == []


def test_tsan_mpich(tmp_path: Path) -> None:
    """The TSan build (make MPI=mpich SAN=tsan) runs every test with 2 threads: no data race."""
    out = tmp_path / "tsan.csv"
    supp = ROOT / "tests" / "tsan.supp"
    opts = "halt_on_error=1 exitcode=66" + (
        f" suppressions={supp}" if supp.exists() else ""
    )
    run = run_mpi(
        "mpich",
        2,
        "threads",
        "--threads",
        "2",
        "--quick",
        "--verify",
        out=out,
        san="tsan",
        env={"UCX_MEM_EVENTS": "no", "TSAN_OPTIONS": opts},
        timeout=600,
    )
    assert "ThreadSanitizer" not in run.stderr, run.stderr[-6000:]
    assert run.returncode == 0, run.stderr[-3000:]
    rows = check_schema(run, "threads", 2)
    check_rows(rows, 2, 2)
    assert (
        sum(r["stop_reason"] in MEASURED for r in rows) == len(rows) - 3
    )  # all but processes


SCRIPT = ROOT / "scripts" / "thread-overhead"


def overhead(lib: str, out: Path, rounds: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "-n", "2", "--lib", lib, "--rounds", str(rounds), "--quick", "--label", "t",
                           "--seed", "7", "-o", str(out), *extra], check=False, capture_output=True, text=True,
                          timeout=600)


def table(stdout: str) -> dict[str, list[str]]:
    """The overhead table's rows by test, split at spaces, after checking its header; a table wider than the
    text width goes on in a block that repeats the key columns (test, bytes: render.Table.keys), joined here."""
    lines = stdout.splitlines()
    heads = [i for i, s in enumerate(lines) if s.startswith("test ")]
    header: list[str] = []
    rows: dict[str, list[str]] = {}
    for n, i in enumerate(heads):
        block = lines[i:heads[n + 1] if n + 1 < len(heads) else len(lines)]
        header += block[0].split()[2 if n else 0:]
        for t in ("overhead-latency", "overhead-bw"):
            rows[t] = rows.get(t, []) + next(s for s in block if s.startswith(t + " ")).split()[2 if n else 0:]
    assert header == ["test", "bytes", *LEVELS, "MULTIPLE-SINGLE", "µs", "%", "M/S", "verdict"]
    return rows


def test_thread_overhead_script(lib: str, tmp_path: Path) -> None:
    """scripts/thread-overhead -n 2: the four levels as the configurations of one scripts/launches series,
    and mpimb-report's overhead table; one round: two launches, not judged, whatever the repetitions."""
    if not (bindir(lib) / "threads").exists():
        pytest.skip(f"{bindir(lib) / 'threads'} not built")
    # 6 repetitions: enough for an interval inside one launch, which two launches must not be judged by
    p = overhead(lib, tmp_path, 1, "--", "--reps", "6", "--max-reps", "6")
    assert p.returncode == 0, p.stderr
    assert f"thread-overhead: {lib}, label t-{lib}, 1 round(s), seed 7; launches in {tmp_path}/{lib}" in p.stdout
    for test, line in table(p.stdout).items():
        assert len(line) == 11 and line[7].endswith("%") and "-" not in line[2:6]
        assert float(line[6]) == pytest.approx(float(line[5]) - float(line[2]), abs=2e-3)
        # printed to 3 decimals: a launch preempted under load can make the ratio print as 0.000
        assert float(line[8]) == pytest.approx(float(line[5]) / float(line[2]), rel=2e-2, abs=1e-3)
        assert line[9:] == ["not", "judged"]
        assert f"{test} {line[1]} B: MULTIPLE / SINGLE not judged (one launch of each;" in p.stdout
    d = tmp_path / lib
    series = json.loads((d / "launches.json").read_text())
    assert series["seed"] == 7 and series["launches"] == 1 and sorted(series["orders"][0]) == sorted(LEVELS)
    assert sorted(str(c.relative_to(d)) for c in d.rglob("*.csv")) == sorted(f"{lv}/launch-1.csv" for lv in LEVELS)
    for lv in LEVELS:
        meta = json.loads((d / lv / "launch-1.json").read_text())
        assert meta["complete"] is True and meta["label"] == f"t-{lib}"
        assert meta["launch"] == {"series": series["series"], "index": 1, "of": 1}
        with open(d / lv / "launch-1.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert {r["method"] for r in rows} == {lv} and {r["test"] for r in rows} == {"overhead-latency",
                                                                                     "overhead-bw"}
    # the table is mpimb-report's: the script prints what `mpimb-report table` says of the set
    q = cli_proc("table", d)
    assert q.rc == 0 and table(q.out) == table(p.stdout), q.err
    # the table carries its runs' marks as the findings do: one busy launch marks it busy, and a set of
    # quiet launches that own their cores carries none
    marks = {"busy": "[busy machine:", "oversubscribed": "[oversubscribed:"}
    for busy in (True, False):
        for j in d.rglob("launch-1.json"):
            meta = json.loads(j.read_text())
            meta.update(busy=busy and j.parent.name == "funneled", oversubscribed=False)
            j.write_text(json.dumps(meta))
        q = cli_proc("table", d)
        note = q.out[q.out.index("threads thread-level overhead"):]
        note = note[:note.index("\n\n") if "\n\n" in note else len(note)]
        assert (marks["busy"] in note) == busy and marks["oversubscribed"] not in note, note
    # the set is not reused
    again = overhead(lib, tmp_path, 1)
    assert again.returncode == 2 and again.stderr.strip().splitlines() == [
        f"thread-overhead: -o {tmp_path}: {tmp_path}/{lib} is not empty (an earlier run?): give a new or empty directory"]


def test_thread_overhead_judged_across_launches(tmp_path: Path) -> None:
    """Three rounds: MULTIPLE / SINGLE judged across the launches, paired per round (one library: the
    judging is the analysis package's, the same for both)."""
    if not (bindir("openmpi") / "threads").exists():
        pytest.skip(f"{bindir('openmpi') / 'threads'} not built")
    p = overhead("openmpi", tmp_path, 3)
    assert p.returncode == 0, p.stderr
    for test, line in table(p.stdout).items():
        assert " ".join(line[9:]) in ("outside the noise", "within the noise"), line
        words = "outside" if line[9] == "outside" else "within"
        assert f"{test} {line[1]} B: MULTIPLE / SINGLE {words} the noise (paired over 3 launches: time " in p.stdout


def test_thread_overhead_keeps_a_wrapped_table(tmp_path: Path) -> None:
    """A table wider than the text width wraps into blocks, each under its own "test" header and after a blank
    line (render.Table.text): the script prints the whole overhead table, the verdict's block and the notes
    included (it once stopped at the first blank line, which dropped the verdicts), and nothing after it."""
    if not (bindir("openmpi") / "threads").exists():
        pytest.skip(f"{bindir('openmpi') / 'threads'} not built")
    # the script and its launcher in a tree of their own, whose mpimb-report prints a wrapped table
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    for f in ("thread-overhead", "launches"):
        (tree / "scripts" / f).symlink_to(ROOT / "scripts" / f)
    for d in ("slurm", "build"):
        (tree / d).symlink_to(ROOT / d)
    fake = tree / REPORT.relative_to(ROOT)  # where the script looks for mpimb-report in its tree
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\ncat <<'END'\nFindings: none\n\n"
                    "threads thread-level overhead: µs per message per requested level, MULTIPLE against SINGLE\n"
                    "test              bytes  single  multiple\n-----\noverhead-latency  8       0.287    43.827\n\n"
                    "test              bytes            verdict\n-----\noverhead-latency  8      outside the noise\n"
                    "overhead-latency 8 B: MULTIPLE / SINGLE outside the noise\n\nthreads another table\nEND\n")
    fake.chmod(0o755)
    p = subprocess.run([str(tree / "scripts" / "thread-overhead"), "-n", "2", "--lib", "openmpi", "--rounds", "1",
                        "--quick", "--label", "t", "-o", str(tmp_path / "out")], check=False, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    out = p.stdout.split("threads thread-level overhead:", 1)[1]
    assert "outside the noise\noverhead-latency 8 B: MULTIPLE / SINGLE outside the noise" in out
    assert out.count("test              bytes") == 2 and "another table" not in out and "Findings" not in out


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--rounds", "0"],
            "thread-overhead: --rounds must be an integer from 1 to 10000, got '0'",
        ),
        (["-n", "1"], "thread-overhead: -n must be an integer from 2 to 999999, got '1'"),
        (["--seed", "-3"], "thread-overhead: --seed must be an integer from 0 to 4294967295, got '-3'"),
        (["--rounds", "99999999999999999999"],
         "thread-overhead: --rounds must be an integer from 1 to 10000, got '99999999999999999999'"),
        (
            ["--lib", "intel"],
            "thread-overhead: --lib must be mpich, openmpi or all, got 'intel'",
        ),
        (
            ["--frobnicate"],
            "thread-overhead: unknown option '--frobnicate' (see --help)",
        ),
    ],
)
def test_thread_overhead_bad_input(
    tmp_path: Path, args: list[str], message: str
) -> None:
    p = subprocess.run(
        [str(SCRIPT), *args, "-o", str(tmp_path / "o")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [message]
    assert list(tmp_path.iterdir()) == []


def test_one_rank(tmp_path: Path) -> None:
    """One rank: the two-party tests say why they cannot run, coll-mt still runs."""
    run = run_mpi(
        "openmpi", 1, "threads", "--quick", "--verify", *ONCE, out=tmp_path / "one.csv"
    )
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 1)
    for r in rows:
        if r["test"] == "coll-mt":
            assert r["stop_reason"] in MEASURED and r["verified"] == "yes"
        elif r["method"] == "processes":
            assert r["stop_reason"].startswith("n/a: needs 2T = 4 ranks")
        else:
            assert r["stop_reason"] == "n/a: needs at least 2 ranks", r


def test_three_ranks_one_thread(tmp_path: Path) -> None:
    """Odd rank count, T = 1: the pair is 0 and N/2 = 1, rank 2 waits; everything runs."""
    run = run_mpi(
        "openmpi",
        3,
        "threads",
        "--threads",
        "1",
        "--quick",
        "--verify",
        *ONCE,
        out=tmp_path / "three.csv",
    )
    assert run.returncode == 0, run.stderr
    rows = check_schema(run, "threads", 3)
    check_rows(rows, 3, 1)
    assert all(r["stop_reason"] in MEASURED for r in rows)
    assert run.meta()["threads"]["pair"] == [0, 1]


@pytest.mark.parametrize("tests", [TESTS[:5], TESTS[5:]], ids=["first5", "last4"])
def test_verify_catches_corruption(tests: tuple[str, ...], tmp_path: Path) -> None:
    """--verify works for every test: stale data (the harness's MPIMB_FAULT, one fault per test, up to 8 in
    one variable) is found in each, its rows say verified=no and the run exits 1."""
    run = run_mpi(
        "openmpi",
        2,
        "threads",
        "--tests",
        ",".join(tests),
        "--quick",
        "--verify",
        *ONCE,
        out=tmp_path / "v.csv",
        env={"MPIMB_FAULT": ";".join(tests)},
    )
    assert run.returncode == 1, run.stderr
    failed = [r for r in run.rows() if r["verified"] == "no"]
    for test in tests:
        assert f"threads: verification failed in threads {test} " in run.stderr, test
        assert any(r["test"] == test for r in failed), test
    assert all(r["test"] in tests and r["time_median_s"] for r in failed)
