"""Integration tests of the pingpong program under MPICH and Open MPI.

No timing thresholds: only what the run did (rows, sizes, labels, verification,
metadata, tables, exit codes)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from conftest import check_bad_input, check_schema, run_mpi

PROG = "pingpong"
SWEEP_TESTS = ("latency", "pingping", "bw", "bibw", "msgrate")
ALL_TESTS = (*SWEEP_TESTS, "allpairs-latency", "allpairs-bw")


def sweep(lo: int, hi: int) -> list[int]:
    """The harness's power-of-two sweep: 0 -> 1 -> 2 -> 4 ..."""
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s = s * 2 if s else 1
    return out


def quick_args(max_size: int) -> list[str]:
    return ["--quick", "-m", f"0:{max_size}", "--verify"]


def test_every_test_two_ranks(lib: str, tmp_path: Path) -> None:
    """-n 2: every test, the whole sweep from 0 bytes, verified, in the schema."""
    hi = 4096 if lib == "mpich" else 65536  # MPICH busy-polls: keep it small
    r = run_mpi(lib, 2, PROG, *quick_args(hi), out=tmp_path / "pp.csv")
    assert r.returncode == 0, r.stderr
    rows = check_schema(r, PROG, 2)
    tests = {row["test"] for row in rows}
    assert tests == set(ALL_TESTS)
    for t in SWEEP_TESTS:
        got = [int(row["bytes"]) for row in rows if row["test"] == t]
        assert got == sweep(0, hi), t
        assert {row["comm"] for row in rows if row["test"] == t} == {"intra"}
        assert {row["method"] for row in rows if row["test"] == t} == {""}
    for row in rows:
        assert row["verified"] == "yes"
        assert row["stop_reason"] in ("ci", "max-reps", "budget")
        assert row["threads"] == "1"
        assert row["neighbors"] == "" and row["periodic"] == ""
        median = float(row["time_median_s"])
        if int(row["reps"]) >= 6:  # below 6 repetitions no 95 % interval exists: none is written
            assert 0 < float(row["time_ci_lo_s"]) <= median <= float(row["time_ci_hi_s"])
        else:
            assert row["time_ci_lo_s"] == row["time_ci_hi_s"] == ""
        size = int(row["bytes"])
        if size == 0:
            assert row["mbps"] == ""  # 0-byte messages: no bandwidth
        else:
            assert math.isclose(float(row["mbps"]), size / median / 1e6, rel_tol=1e-6)
    ap = [row for row in rows if row["test"].startswith("allpairs")]
    assert [(row["test"], row["method"], row["comm"]) for row in ap] == [
        ("allpairs-latency", "0-1", "intra"),
        ("allpairs-bw", "0-1", "intra"),
    ]
    assert [int(row["bytes"]) for row in ap] == [8, 65536]
    meta = r.meta()["pingpong"]
    assert meta["intra_pair"] == [0, 1] and meta["inter_pair"] is None
    assert meta["cache"] == "warm" and meta["window"] == 64
    # the OSU-shaped tables, with the CI: every size a line, its figures the CSV's
    for head in (
        "Latency (us)",
        "Bandwidth (MB/s)",
        "Messages/s",
        "CI low",
        "CI high",
        "All-pairs latency",
    ):
        assert head in r.stdout
    by = {(row["test"], int(row["bytes"])): row for row in rows}
    for title, test, column, value in (
        ("# Latency", "latency", "Latency (us)", lambda row, c: float(row[c]) * 1e6),
        ("# Ping-ping", "pingping", "Time (us)", lambda row, c: float(row[c]) * 1e6),
        ("# Bandwidth (osu_bw)", "bw", "Bandwidth (MB/s)", None),
        ("# Bidirectional bandwidth", "bibw", "Bandwidth (MB/s)", None),
        ("# Message rate", "msgrate", "MB/s", None),
    ):
        table = osu_table(r.stdout, title)
        assert [int(line["Size (B)"]) for line in table] == sweep(0, hi), title
        for line in table:
            row = by[test, int(line["Size (B)"])]
            assert int(line["reps"]) == int(row["reps"]) and line["stop"] == row["stop_reason"], (title, line)
            if value is not None:  # times: median and CI in us
                for shown, c in ((column, "time_median_s"), ("CI low", "time_ci_lo_s"), ("CI high", "time_ci_hi_s")):
                    if row[c] == "":  # below 6 repetitions: no interval, shown as '-'
                        assert line[shown] == "-", (title, shown, line)
                    else:
                        assert close(line[shown], value(row, c)), (title, shown, line, row[c])
            elif row["mbps"]:  # rates: the CSV's MB/s (bibw one direction, msgrate one pair), as mpimb-report's
                assert close(line[column], float(row["mbps"])), (title, line, row["mbps"])
            else:
                assert line[column] == "-"  # 0 bytes: no bandwidth
            if test == "msgrate" and row["mbps"]:  # messages per second = bytes per second / size
                want = float(row["mbps"]) * 1e6 / int(row["bytes"])
                assert math.isclose(int(line["Messages/s"]), want, rel_tol=5e-3), (line, want)


def close(shown: str, value: float) -> bool:
    """A figure as the table prints it (3 to 4 significant digits) is the CSV's value."""
    return math.isclose(float(shown), value, rel_tol=6e-3, abs_tol=1.5e-3)


def osu_table(stdout: str, title: str) -> list[dict[str, str]]:
    """The lines of the stdout table whose title starts with title, by column name."""
    lines = stdout.splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith(title))
    header = re.split(r"\s{2,}", lines[start + 1].strip())
    assert set(lines[start + 2]) == {"-"}, lines[start + 2]
    out = []
    for line in lines[start + 3:]:
        if not line.strip():
            break
        cells = line.split()
        assert len(cells) == len(header), (header, line)
        out.append(dict(zip(header, cells, strict=True)))
    return out


def test_large_messages(tmp_path: Path) -> None:
    """The default sweep's end (4 MiB) works and is verified byte for byte."""
    r = run_mpi(
        "openmpi",
        2,
        PROG,
        "--quick",
        "--verify",
        "--tests",
        "latency,bw,bibw",
        "-m",
        "1M:4M",
        out=tmp_path / "big.csv",
    )
    assert r.returncode == 0, r.stderr
    rows = check_schema(r, PROG, 2)
    assert [int(x["bytes"]) for x in rows if x["test"] == "bw"] == [
        1 << 20,
        2 << 20,
        4 << 20,
    ]
    assert all(x["verified"] == "yes" for x in rows)


def test_msgrate_allpairs_six_ranks(tmp_path: Path) -> None:
    """The issue's command: -n 6 --tests msgrate,allpairs --quick --verify."""
    r = run_mpi(
        "openmpi",
        6,
        PROG,
        "--tests",
        "msgrate,allpairs",
        "--quick",
        "--verify",
        out=tmp_path / "six.csv",
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    rows = check_schema(r, PROG, 6)
    assert {x["test"] for x in rows} == {"msgrate", "allpairs-latency", "allpairs-bw"}
    assert [int(x["bytes"]) for x in rows if x["test"] == "msgrate"] == sweep(0, 65536)
    pairs = [f"{a}-{b}" for a in range(6) for b in range(a + 1, 6)]
    for t in ("allpairs-latency", "allpairs-bw"):
        assert [x["method"] for x in rows if x["test"] == t] == pairs
        assert {x["comm"] for x in rows if x["test"] == t} == {"intra"}
    assert all(x["verified"] == "yes" for x in rows)
    meta = r.meta()["pingpong"]
    assert meta["msgrate_pairs"] == 3 and meta["idle_rank"] == -1
    assert "3 pair(s) i <-> i+3" in r.stdout
    assert (
        len(re.findall(r"^rank(?:\s+\d){6}$", r.stdout, re.MULTILINE)) == 2
    )  # latency and bandwidth matrices


def test_odd_rank_count(tmp_path: Path) -> None:
    """-n 3: msgrate pairs 0<->1, rank 2 idles (and the run says so)."""
    r = run_mpi(
        "openmpi",
        3,
        PROG,
        "--tests",
        "latency,msgrate,allpairs",
        "--quick",
        "--verify",
        "-m",
        "0:8",
        out=tmp_path / "odd.csv",
    )
    assert r.returncode == 0, r.stderr
    rows = check_schema(r, PROG, 3)
    meta = r.meta()["pingpong"]
    assert meta["msgrate_pairs"] == 1 and meta["idle_rank"] == 2
    assert "the last rank idle (odd count)" in r.stdout
    assert "wait in the harness's barrier (idle)" in r.stdout
    assert [x["method"] for x in rows if x["test"] == "allpairs-latency"] == [
        "0-1",
        "0-2",
        "1-2",
    ]
    assert [int(x["bytes"]) for x in rows if x["test"] == "latency"] == [0, 1, 2, 4, 8]
    assert all(x["verified"] == "yes" for x in rows)


def test_cold_cache(lib: str, tmp_path: Path) -> None:
    """--cache cold rotates through pools larger than the cache; rows say 'cold'."""
    r = run_mpi(
        lib,
        2,
        PROG,
        "--quick",
        "--verify",
        "--cache",
        "cold",
        "--cache-bytes",
        "64K",
        "-m",
        "0:8K",
        "--tests",
        "latency,pingping,bw,bibw",
        out=tmp_path / "cold.csv",
    )
    assert r.returncode == 0, r.stderr
    rows = check_schema(r, PROG, 2)
    assert {x["method"] for x in rows} == {"cold"}
    assert all(x["verified"] == "yes" for x in rows)
    meta = r.meta()["pingpong"]
    assert meta["cache"] == "cold" and meta["cache_bytes"] == 65536
    assert meta["pool_bytes"] > meta["cache_bytes"]
    assert "cold (rotating) buffers" in r.stdout


def test_window_and_stat(tmp_path: Path) -> None:
    r = run_mpi(
        "openmpi",
        2,
        PROG,
        "--quick",
        "--tests",
        "bw",
        "--window",
        "3",
        "-m",
        "64:64",
        "--stat",
        "min",
        out=tmp_path / "w.csv",
    )
    assert r.returncode == 0, r.stderr
    check_schema(r, PROG, 2)
    assert r.meta()["pingpong"]["window"] == 3
    assert "window 3" in r.stdout and "statistic: min" in r.stdout


def test_missing_placement_is_na(tmp_path: Path) -> None:
    """Asking for an inter-node pair on one node gives n/a rows, not a crash."""
    r = run_mpi(
        "openmpi",
        2,
        PROG,
        "--quick",
        "--pairs",
        "inter",
        "--tests",
        "latency,bw",
        out=tmp_path / "na.csv",
    )
    assert r.returncode == 0, r.stderr
    rows = check_schema(r, PROG, 2)
    assert [(x["test"], x["comm"]) for x in rows] == [
        ("latency", "inter"),
        ("bw", "inter"),
    ]
    for x in rows:
        assert x["stop_reason"] == "n/a: every rank is on one node: no inter-node pair"
        assert x["time_median_s"] == "" and x["bytes"] == ""


def test_list(tmp_path: Path) -> None:
    r = run_mpi("openmpi", 2, PROG, "--list", out=tmp_path / "l.csv")
    assert r.returncode == 0
    assert "tests: latency pingping bw bibw msgrate allpairs" in r.stdout
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("nprocs", "args", "message"),
    [
        (2, ["-m", "8:4"], "pingpong: --sizes must be MIN:MAX"),
        (
            2,
            ["--window", "0"],
            "pingpong: --window must be an integer from 1 to 4096, got '0'",
        ),
        (2, ["--tests", "latency,foo"], "pingpong: --tests: unknown value 'foo'"),
        (2, ["--cache", "lukewarm"], "pingpong: --cache: unknown value 'lukewarm'"),
        (2, ["--pairs", "far"], "pingpong: --pairs: unknown value 'far'"),
        (2, ["-m", "0:2G"], "pingpong: --sizes: messages are at most 1G bytes"),
        (1, [], "pingpong: needs at least 2 processes, got 1"),
    ],
)
def test_bad_input(nprocs: int, args: list[str], message: str, tmp_path: Path) -> None:
    """Exit 2, exactly one line on stderr, no files left behind: the binary alone (argv only; alone it is
    one process, which is the 1-process case too)."""
    # alone (argv only) is 1 process: the 1-process case, and every option refused before the process
    # count is; the size limit is checked after it, so that case is launched on 2 Open MPI ranks
    after_count = args == ["-m", "0:2G"]
    check_bad_input(PROG, args, message, tmp_path, ranks=nprocs if after_count else 0,
                    libs=("openmpi",) if after_count else ("mpich",))
