"""The step model of one halo exchange (analysis/mpimb/halo_steps.py, docs/halo-timelines.md): small grids worked
by hand, the talk's six steps, and the steps measured from a trace (built here, in the trace format)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli
from mpimb import halo_steps, timeline
from mpimb.load import InputError


def test_send_order_is_halocompares() -> None:
    # rank 5 of a 4x4 grid: up 1, down 9, left 4, right 6 (faces), then the corners 0, 2, 8, 10
    assert halo_steps.sends(4, 4, 4, False)[5] == [1, 9, 4, 6]
    assert halo_steps.sends(4, 4, 8, False)[5] == [1, 9, 4, 6, 0, 2, 8, 10]
    assert halo_steps.sends(4, 4, 4, False)[0] == [4, 1]  # a corner: no up, no left
    assert halo_steps.sends(4, 4, 4, True)[0] == [12, 4, 3, 1]


def test_small_grids_by_hand() -> None:
    # 1x3: rank 1 is offered both ends' messages at step 1, takes rank 0's; rank 2's waits a step, as rank 1's
    # own second send (to 2) does: 2 steps either way
    assert halo_steps.steps(1, 3, 4, False, "irecv-send") == 2
    assert halo_steps.steps(1, 3, 4, False, "irecv-isend") == 2
    # 2x2: every receiver is offered one message per step
    assert halo_steps.steps(2, 2, 4, False, "irecv-send") == 2
    # 1x4: ranks 1 and 2 each get two offers at step 1; the waiting chain ends at step 3
    assert halo_steps.steps(1, 4, 4, False, "irecv-send") == 3


@pytest.mark.parametrize(("neighbors", "periodic", "send", "isend"),
                         [(4, False, 6, 4), (4, True, 4, 4), (8, False, 11, 8), (8, True, 8, 8)])
def test_4x4(neighbors: int, periodic: bool, send: int, isend: int) -> None:
    """The talk: blocking sends in a fixed order take 6 steps where 4 suffice; on a periodic grid every
    receiver gets exactly one message per step, so the order costs nothing."""
    assert halo_steps.steps(4, 4, neighbors, periodic, "irecv-send") == send
    assert halo_steps.steps(4, 4, neighbors, periodic, "irecv-isend") == isend


def test_predicted_table() -> None:
    p = halo_steps.predicted(4, 4)
    assert len(p) == 8 and (p.groupby(["neighbors", "periodic"])["steps"].agg(["max", "min"]).to_numpy() > 0).all()
    assert p.set_index(["neighbors", "periodic", "method"]).loc[(4, False, "irecv-send"), "steps"] == 6


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="4 or 8"):
        halo_steps.steps(4, 4, 6, False, "irecv-send")
    with pytest.raises(ValueError, match="method"):
        halo_steps.steps(4, 4, 4, False, "sendrecv")


def _trace(tmp: Path, sends: list[tuple[int, float, float]], method: str = "irecv-send") -> Path:
    """A trace of one halocompare stretch: each (rank, start µs, duration µs) a blocking MPI_Send (irecv-send)
    or an MPI_Waitall (irecv-isend)."""
    name = "MPI_Send" if method == "irecv-send" else "MPI_Waitall"
    ev = [{"ph": "X", "name": name, "cat": "p2p", "pid": r, "tid": 0, "ts": ts, "dur": d} for r, ts, d in sends]
    key = f"halo/{method}/world/4-nbr/non-periodic/1024"
    meta = {"format": "mpimb-trace", "version": 1, "ranks": 4, "messages": 0, "dropped_events": 0,
            "stretches": [{"begin_us": 0.0, "end_us": 1.0, "test": {"key": key, "program": "halocompare",
                           "method": method, "bytes": 1024, "iters": 1}}]}
    p = tmp / "t.json"
    p.write_text(json.dumps({"traceEvents": ev, "otherData": meta}))
    return p


def test_measured_from_a_trace(tmp_path: Path) -> None:
    # one transfer = the shortest blocking send (10 µs); the exchange from 5 µs to 65 µs: 6 steps
    t = timeline.read(_trace(tmp_path, [(0, 5, 10), (1, 15, 20), (2, 40, 25), (3, 5, 30)]))
    [m] = halo_steps.measured(t)
    assert (m.method, m.neighbors, m.periodic, m.bytes) == ("irecv-send", 4, False, 1024)
    assert (m.makespan_us, m.transfer_us, m.steps) == (60.0, 10.0, 6.0)
    assert halo_steps.measured(t, one_us=20.0)[0].steps == 3.0


def test_measured_needs_a_transfer_time(tmp_path: Path) -> None:
    t = timeline.read(_trace(tmp_path, [(0, 5, 0.0)]))
    with pytest.raises(InputError, match="no blocking send"):
        halo_steps.measured(t)


def test_model_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _trace(tmp_path, [(0, 0, 10), (1, 10, 10), (2, 20, 10), (3, 30, 10)])
    r = cli("model", "--trace", str(path), capsys=capsys)
    assert r.rc == 0, r.err
    row = next(line.split() for line in r.out.splitlines() if line.startswith("4-nbr non-periodic irecv-send"))
    assert row[3:7] == ["2x2", "1K", "2", "4.00"]  # the 2x2 grid of 4 ranks: 2 steps predicted, 4 measured
    assert cli("model", capsys=capsys).rc == 2
    # a trace without a blocking send (irecv-isend): one transfer from the other trace given, else from α + nβ
    (tmp_path / "isend").mkdir()
    isend = _trace(tmp_path / "isend", [(0, 0, 0.0), (1, 0, 0.0), (2, 0, 40.0)], "irecv-isend")
    both = cli("model", "--trace", str(path), "--trace", str(isend), capsys=capsys)
    assert next(w.split() for w in both.out.splitlines() if "irecv-isend" in w)[5:7] == ["2", "4.00"]
    assert cli("model", "--trace", str(isend), capsys=capsys).rc == 1
    fit = cli("model", "--trace", str(isend), "--alpha", "2", "--bandwidth", "128", capsys=capsys)  # 2 + 8 µs
    assert next(w.split() for w in fit.out.splitlines() if w.startswith("4-nbr"))[5:7] == ["2", "4.00"]
    path.write_text("{not json")
    bad = cli("model", "--trace", str(path), capsys=capsys)
    assert bad.rc == 1 and "not a readable mpimb trace" in bad.err
