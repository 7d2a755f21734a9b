"""The broadcast models of `mpimb-report model` (analysis/mpimb/bcast_model.py):
the formulas against hand-computed figures, and measured / predicted on the
simulated two-node platform with --exact (tests/test_simulate.py), where the
platform's latency and bandwidth are exactly known: the Hockney fit of
pingpong's latency predicts the segmented chain (and the tree, the series and
the other broadcasts at 2 ranks) within 5 %."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import cli_proc
from mpimb.bcast_model import predict
from test_simulate import needs_smpi, sim_run

A, B = 10e-6, 1e-9  # α = 10 µs, β = 1 ns/B (1 GB/s)


def one(test: str, method: str, p: int, n: int, params: str = "", nnodes: int = 1, ppn: int = 0) -> float:
    d = pd.DataFrame([{"test": test, "method": method, "nprocs": p, "bytes": n, "params": params,
                       "nnodes": nnodes, "ppn": ppn or p}])
    return float(predict(d, A, B)["predicted_s"].iloc[0])


# (test, method, p, n, params, nnodes, ppn, seconds worked out by hand)
HAND = [
    # binomial: ⌈log2 4⌉ = 2 steps of 10 + 65.536 µs
    ("bcast", "binomial", 4, 65536, "", 1, 0, 2 * (10e-6 + 65.536e-6)),
    # chain: s = 8 KiB, k = 8 segments: (4 − 2 + 8) steps of 10 + 8.192 µs
    ("bcast", "chain", 4, 65536, "root=0;segment=8192", 1, 0, 10 * 18.192e-6),
    # a segment larger than the message: one segment of n, p − 1 steps
    ("bcast", "chain", 4, 1024, "segment=8192", 1, 0, 3 * 11.024e-6),
    # 100-byte segments of 1000 bytes on 5 ranks: k = 10, (5 − 2 + 10) (10 + 0.1) µs
    ("bcast", "chain", 5, 1000, "segment=100", 1, 0, 13 * 10.1e-6),
    # binary tree on 4 ranks: depth h = 2, c = 2 children: 2 (2 + 8 − 1) (10 + 8.192) µs
    ("bcast", "tree-pipelined", 4, 65536, "segment=8192", 1, 0, 2 * 9 * 18.192e-6),
    # on 2 ranks the tree is the chain: 8 (10 + 8.192) µs
    ("bcast", "tree-pipelined", 2, 65536, "segment=8192", 1, 0, 8 * 18.192e-6),
    # van de Geijn: (2 + 3) α + 2 · 3/4 · 65536 β
    ("bcast", "scatter-allgather", 4, 65536, "", 1, 0, 5 * 10e-6 + 1.5 * 65.536e-6),
    # series of m = 8 messages of 1 KiB on 4 ranks: chain (4 − 2 + 8)(10 + 1.024), loop 8 · 2 (10 + 1.024)
    ("series", "chain", 4, 1024, "messages=8;root=0", 1, 0, 10 * 11.024e-6),
    ("series", "bcast-loop", 4, 1024, "messages=8", 1, 0, 16 * 11.024e-6),
    # two levels, 4 nodes x 2: (2 + 1)(10 + 1.024) µs
    ("bcast", "2level", 8, 1024, "", 4, 2, 3 * 11.024e-6),
    # nothing to send
    ("bcast", "chain", 4, 0, "segment=8192", 1, 0, 0.0),
    ("bcast", "tree-pipelined", 1, 4096, "segment=8192", 1, 0, 0.0),
]


@pytest.mark.parametrize("case", HAND, ids=[f"{c[1]}-p{c[2]}-n{c[3]}" for c in HAND])
def test_formulas_hand_computed(case: tuple[str, str, int, int, str, int, int, float]) -> None:
    test, method, p, n, params, nnodes, ppn, want = case
    assert one(test, method, p, n, params, nnodes, ppn) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_library_and_unknown_rows_are_left_out() -> None:
    d = pd.DataFrame([{"test": t, "method": m, "nprocs": 4, "bytes": 64, "params": "", "nnodes": 1, "ppn": 4}
                      for t, m in (("bcast", "library"), ("reduce", "2level"), ("bcast", "chain"))])
    got = predict(d, A, B)
    assert list(zip(got["test"], got["method"], strict=True)) == [("bcast", "chain")]
    assert got["formula"].iloc[0] == "(p − 2 + k)(α + sβ)" and got["terms"].iloc[0] == "s=64, k=1"


@needs_smpi
def test_exact_segmented_chain_two_nodes(tmp_path: Path) -> None:
    """pingpong's latency gives α and β; every user-level broadcast and the series over 1 KiB .. 1 MiB
    in 8 KiB segments, measured / predicted in `mpimb-report model`, within 5 % (measured: 1.00)."""
    sim_run("pingpong", 2, "two-node", "--tests", "latency", "-m", "0:1M", "--reps", "3", "--max-reps", "3",
            out=tmp_path / "pp.csv", exact=True)
    sim_run("collectives", 2, "two-node", "-t",
            "bcast-chain,bcast-tree-pipelined,bcast-binomial,bcast-scatter-allgather,series", "-m", "1K:1M",
            "--segment", "8K", "--reps", "3", "--max-reps", "3", out=tmp_path / "c.csv", exact=True)
    # as CSV: the text table, with its formula column, wraps past 120 columns
    p = cli_proc("model", tmp_path / "pp.csv", tmp_path / "c.csv", "--format", "csv")
    assert p.rc == 0, p.err
    block = p.out.split("Broadcast algorithms, sim-two-node", 1)[1].split("\n", 1)[1].split("\n#", 1)[0]
    seen: dict[str, list[tuple[str, int, float]]] = {}
    for name, size, terms, _meas, _pred, ratio, formula in list(csv.reader(io.StringIO(block)))[1:]:
        assert formula, name  # every row says the formula it used
        k = re.search(r"k=(\d+)", terms)
        seen.setdefault(name, []).append((size, int(k.group(1)) if k else 0, float(ratio)))
    sizes = [f"{1 << i}K" for i in range(10)] + ["1M"]
    for name in ("bcast chain", "bcast tree-pipelined", "bcast binomial", "bcast scatter-allgather",
                 "series chain", "series bcast-loop"):
        assert [s for s, _, _ in seen[name]] == sizes, (name, seen.get(name))
        for size, _, ratio in seen[name]:
            assert 0.95 <= ratio <= 1.05, (name, size, ratio)
    # the chain was segmented: 1 MiB in 128 segments of 8 KiB (unsegmented it would be 1 step)
    assert [k for _, k, _ in seen["bcast chain"]] == [1, 1, 1, 1, 2, 4, 8, 16, 32, 64, 128]
