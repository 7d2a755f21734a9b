"""Paired comparisons (issue 24): halocompare measures the tests a finding
compares as one group, interleaved round by round, and writes every kept
round's sample of every member to the rounds file beside the CSV
(docs/results-format.md, "The rounds file").  The file must agree with the
CSV: every row of a group has as many rounds as its reps, the samples are
the row's (its median is theirs), each round's order is a permutation, and
a killed run never has samples of rows the CSV lacks."""

from __future__ import annotations

import csv
import os
import re
import signal
import statistics
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import bindir, launcher, run_mpi
from mpimb import findings, keys, load
from mpimb.paired import paired_ratio

# tiny: K = 1, a handful of rounds; MPICH busy-polls, so 2 ranks only
SMALL = ["--count", "64", "--reps", "6", "--max-reps", "8", "--min-rep-time", "0", "--warmup", "1",
         "--time-budget", "0.05", "--rel-ci", "0.0001"]
COMMS = ["world", "dup"]
METHODS = ["irecv-isend", "irecv-send", "rma-fence-put"]


def read_rounds(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="") as f:
        r = csv.reader(f)
        header = next(r)
        return header, [dict(zip(header, line)) for line in r]


def check_rounds(rows: list[dict[str, str]], lines: list[dict[str, str]]) -> dict[int, list[int]]:
    """Every consistency rule of the format; returns group -> its rows (1-based CSV data rows)."""
    members: dict[int, set[int]] = defaultdict(set)
    samples: dict[int, dict[int, float]] = defaultdict(dict)  # row -> round -> time
    pos: dict[tuple[int, int], dict[int, int]] = defaultdict(dict)  # (group, round) -> row -> pos
    for ln in lines:
        g, rnd, row, p, t = int(ln["group"]), int(ln["round"]), int(ln["row"]), int(ln["pos"]), float(ln["time_s"])
        assert 1 <= row <= len(rows), f"rounds name row {row}; the CSV has {len(rows)}"
        assert t > 0
        assert rnd not in samples[row], f"row {row} round {rnd} twice"
        members[g].add(row)
        samples[row][rnd] = t
        pos[(g, rnd)][row] = p
    owner: dict[int, int] = {}
    for g, rs in members.items():
        for row in rs:
            assert row not in owner, f"row {row} in groups {owner[row]} and {g}"
            owner[row] = g
        first = rows[min(rs) - 1]
        for row in rs:
            r = rows[row - 1]
            assert r["test"] == "halo" and not r["stop_reason"].startswith("n/a"), r
            # one stencil, periodicity and size per group
            assert (r["neighbors"], r["periodic"], r["bytes"]) == (first["neighbors"], first["periodic"], first["bytes"])
            # as many rounds as its reps, numbered 0 .. reps-1
            assert sorted(samples[row]) == list(range(int(r["reps"]))), (row, r["reps"])
            # the samples are the row's: same median, min and max
            ts = list(samples[row].values())
            assert statistics.median(ts) == pytest.approx(float(r["time_median_s"]), rel=1e-6)
            assert min(ts) == pytest.approx(float(r["time_min_s"]), rel=1e-6)
            assert max(ts) == pytest.approx(float(r["time_max_s"]), rel=1e-6)
        rounds = {rnd for (gg, rnd) in pos if gg == g}
        for rnd in rounds:  # each round: every member once, positions a permutation
            assert set(pos[(g, rnd)]) == rs
            assert sorted(pos[(g, rnd)].values()) == list(range(len(rs)))
    return {g: sorted(rs) for g, rs in members.items()}


def test_rounds_file_matches_the_csv(tmp_path: Path, lib: str) -> None:
    run = run_mpi(lib, 2, "halocompare", "--verify", "--comms", ",".join(COMMS), "--methods", ",".join(METHODS),
                  *SMALL, out=tmp_path / "h.csv")
    assert run.returncode == 0, run.stderr
    rows = run.rows()
    meta = run.meta()
    assert meta["halocompare"]["group"] == "all"
    assert isinstance(meta["rounds_seed"], int)
    path = tmp_path / meta["rounds"]
    assert path == tmp_path / "h-rounds.csv"
    header, lines = read_rounds(path)
    assert header == ["group", "round", "row", "pos", "time_s"]
    groups = check_rounds(rows, lines)
    # one group per (stencil, periodicity): every method on every communicator, paired
    assert sorted(groups) == list(range(4))
    halo = [i + 1 for i, r in enumerate(rows) if r["test"] == "halo" and not r["stop_reason"].startswith("n/a")]
    assert sorted(x for rs in groups.values() for x in rs) == halo
    for rs in groups.values():
        assert {(rows[x - 1]["comm"], rows[x - 1]["method"]) for x in rs} == {(c, m) for c in COMMS for m in METHODS}
        assert all(rows[x - 1]["verified"] == "yes" and "sync=barrier" in rows[x - 1]["params"] for x in rs)
    # the one-sender tests are measured alone: in no group
    assert all(rows[x - 1]["test"] == "halo" for rs in groups.values() for x in rs)
    # the analysis pairs the rows of a group: the methods' and the orderings' verdicts are paired ones,
    # with the ratio of the two rows' rounds (checked here from the file) and the number of rounds
    runs, _, _ = load.load([str(run.csv_path)])
    d, _ = keys.prepared(runs)
    paired_ones = 0
    found = findings.findings(d)
    for f in found:
        if f.topic == "halo methods" and "not judged" not in f.text and "4-neighbour one" not in f.text:
            assert re.search(r"in this launch \(paired, \d+ rounds: time \d+\.\d{3}× ", f.text), f.text
            paired_ones += 1
    assert paired_ones > 0
    # on 2 ranks every communicator is one map, and the non-periodic 8-neighbour stencil is the 4-neighbour one:
    # said, never ranked (issue 42)
    order = [f.text for f in found if f.topic == "rank ordering"]
    assert len(order) == 4 and all("not ranked — at 2 processes every communicator" in t for t in order), order
    same = [f.text for f in found if "8-nbr non-periodic" in f.text and f.topic == "halo methods"]
    assert len(same) == 1 and "the 8-neighbour stencil is the 4-neighbour one" in same[0], same
    alone = [f.text for f in found if f.topic == "one-sender / halo" and "non-periodic" in f.text]
    assert alone and all("not compared — at 2 processes no process is interior" in t for t in alone), alone
    by_row = {int(x["row"]): [] for x in lines}
    for x in lines:
        by_row[int(x["row"])].append(float(x["time_s"]))
    a, b = next(iter(groups.values()))[:2]
    p = paired_ratio(by_row[a], by_row[b])
    assert p.n == int(rows[a - 1]["reps"]) == int(rows[b - 1]["reps"])


def test_group_comm_and_none(tmp_path: Path) -> None:
    """--group comm: one communicator's methods per group; --group none: no groups, no rounds file."""
    run = run_mpi("mpich", 2, "halocompare", "--group", "comm", "--comms", ",".join(COMMS), "--methods",
                  ",".join(METHODS), "--neighbors", "4", "--periodic", "no", "--tests", "halo", *SMALL,
                  out=tmp_path / "c.csv")
    assert run.returncode == 0, run.stderr
    rows = run.rows()
    groups = check_rounds(rows, read_rounds(tmp_path / run.meta()["rounds"])[1])
    assert len(groups) == 2 and all(len({rows[x - 1]["comm"] for x in rs}) == 1 for rs in groups.values())
    run = run_mpi("mpich", 2, "halocompare", "--group", "none", "--comms", "world", "--methods", "irecv-isend",
                  "--neighbors", "4", "--periodic", "no", "--tests", "halo", *SMALL, out=tmp_path / "n.csv")
    assert run.returncode == 0, run.stderr
    assert "rounds" not in run.meta() and not (tmp_path / "n-rounds.csv").exists()
    assert len(run.rows()) == 1


def test_fault_injection_names_one_member(tmp_path: Path) -> None:
    """MPIMB_FAULT still fails exactly the named member of a group; the others verify and the group is whole."""
    run = run_mpi("mpich", 2, "halocompare", "--verify", "--comms", ",".join(COMMS), "--methods", ",".join(METHODS),
                  "--neighbors", "4", "--periodic", "no", "--tests", "halo", *SMALL, out=tmp_path / "f.csv",
                  env={"MPIMB_FAULT": "halo/irecv-send@0"})
    assert run.returncode == 1
    rows = run.rows()
    bad = {(r["comm"], r["method"]) for r in rows if r["verified"] == "no"}
    assert bad == {("world", "irecv-send"), ("dup", "irecv-send")}
    groups = check_rounds(rows, read_rounds(tmp_path / run.meta()["rounds"])[1])
    assert [len(rs) for rs in groups.values()] == [6]


def test_killed_run_never_has_rounds_ahead_of_rows(tmp_path: Path) -> None:
    """SIGKILL while a group's rows are being written (each held open by the
    self-test delay): the rounds file has only whole groups, of rows in the CSV."""
    exe = bindir("mpich") / "halocompare"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    out = tmp_path / "k.csv"
    cmd = [*launcher("mpich", 2), str(exe), "-o", str(out), "--comms", ",".join(COMMS), "--methods",
           ",".join(METHODS), "--tests", "halo", *SMALL]
    env = dict(os.environ, MPIMB_FAULT="row-delay:0.3", MPIMB_REPORT="none")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        deadline = time.time() + 120
        n = 0
        while time.time() < deadline and n < 6 + 3:  # the first group (6 rows) done, the second half written
            time.sleep(0.05)
            n = len(out.read_text().splitlines()) - 1 if out.exists() else 0
        assert n >= 6 + 3, "the run did not progress"
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert 9 <= len(rows) < 24
    lines = read_rounds(tmp_path / "k-rounds.csv")[1]
    groups = check_rounds(rows, lines)  # every named row is in the CSV, every group whole
    assert 0 in groups and all(len(rs) == 6 for rs in groups.values())
