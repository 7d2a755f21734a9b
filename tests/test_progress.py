"""The progress lines on stderr count every row the run writes: "[i/N]" runs from 1 to N, N the number of
rows of the CSV, in every program and under the options that add rows (several roots and communicators,
--overlap's second rows, --algorithms' groups, n/a placements, the placement study, several worker counts).
Each program counts N from the plan its loops iterate (docs/architecture.md, "Options -> plan -> loops"):
a loop that makes a row the plan does not count, or the reverse, fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ONCE_BARRIER, run_mpi

CASES = {
    "collectives": ("--tests", "bcast,ibcast,barrier,allreduce,series,bcast-chain", "--root", "same,rotate",
                    "--comms", "world,dup", "--sizes", "1:16", "--overlap", "0.5"),
    "collectives-algorithms": ("--algorithms", "library", "--tests", "bcast,barrier", "--sizes", "8:16"),
    "pingpong": ("--pairs", "intra,inter", "--tests", "latency,bw,msgrate,allpairs", "--sizes", "1:4"),
    "rma": ("--tests", "latency", "--ops", "put,compare_and_swap", "--syncs", "fence,load-store", "--sizes", "8:16"),
    "rma-bw": ("--tests", "bw", "--ops", "get", "--windows", "create,allocate-shared", "--no-reference",
               "--sizes", "4:8"),
    "threads": ("--tests", "overhead-latency,overhead-bw,latency-mt,short-long,overlap,coll-mt,master-worker",
                "--sizes", "1:4", "--pairing", "tags", "--placement", "unbound"),
    "halocompare": ("--neighbors", "4", "--periodic", "no", "--sizes", "8:16"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_progress_counts_every_row(lib: str, tmp_path: Path, case: str) -> None:
    program = case.split("-")[0]
    run = run_mpi(lib, 2, program, "--quick", *ONCE_BARRIER, *CASES[case], out=tmp_path / "p.csv",
                  env={"MPIMB_REPORT": "none"})
    assert run.returncode == 0, run.stderr[-3000:]
    lines = re.findall(r"^\[(\d+)/(\d+)\] ", run.stderr, re.MULTILINE)
    n = len(run.rows())
    assert n > 0
    assert [int(i) for i, _ in lines] == list(range(1, n + 1)), run.stderr[-3000:]
    assert {int(total) for _, total in lines} == {n}
