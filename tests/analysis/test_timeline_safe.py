"""`mpimb-report timeline` on hostile traces (issue 44, item 14): a field nested or of another type, a bad
clock, a rank window the trace does not have — one line and an exit code, never a traceback; a large
trace thinned to what the figure's pixels can show; every call kind in the legend, inside the figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import cli
from mpimb.timeline import DPI, WIDTH_IN, palette, read, thin_calls, timeline_plot

# thirteen kinds of call, as the 2-rank application trace of the issue had
KINDS = ["MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Irecv", "MPI_Isend", "MPI_Probe", "MPI_Recv",
         "MPI_Reduce", "MPI_Send", "MPI_Sendrecv", "MPI_Test", "MPI_Wait", "MPI_Waitall"]


def trace(n: int, ranks: int = 2, seed: int = 1) -> dict[str, Any]:
    """n calls of the thirteen kinds over ranks ranks within one second, and a message per ten calls."""
    rng = np.random.default_rng(seed)
    ts = np.sort(rng.uniform(0, 1e6, n))
    dur = rng.exponential(2.0, n)
    rank = rng.integers(0, ranks, n)
    kind = rng.integers(0, len(KINDS), n)
    kind[: len(KINDS)] = np.arange(len(KINDS))  # every kind at least once
    ev: list[dict[str, Any]] = [{"ph": "X", "name": KINDS[k], "cat": "p2p", "pid": int(r), "tid": 0,
                                 "ts": round(float(t), 3), "dur": round(float(d), 3)}
                                for t, d, r, k in zip(ts, dur, rank, kind)]
    for i in range(0, n, 10):
        ev.append({"ph": "s", "name": "message", "cat": "message", "id": i, "pid": 0, "tid": 0, "ts": float(ts[i])})
        ev.append({"ph": "f", "bp": "e", "name": "message", "cat": "message", "id": i, "pid": ranks - 1, "tid": 0,
                   "ts": float(ts[i]) + 5})
    return {"traceEvents": ev, "otherData": {"format": "mpimb-trace", "ranks": ranks, "dropped_events": 0,
                                             "clock": {"residual_error_s": 0}, "stretches": []}}


def damaged(how: str) -> dict[str, Any]:
    doc = trace(40)
    ev, meta = doc["traceEvents"], doc["otherData"]
    if how == "nested pid":
        ev[3]["pid"] = {"rank": 1}
    elif how == "nested ts":
        ev[5]["ts"] = [1, 2]
    elif how == "nested name":
        ev[2]["name"] = {"a": [1]}
    elif how == "string ts":
        ev[1]["ts"] = "soon"
    elif how == "huge ts":
        ev[1]["ts"] = 1e300
    elif how == "negative dur":
        ev[1]["dur"] = -4
    elif how == "rank past the trace's":
        ev[1]["pid"] = 7
    elif how == "nested message id":
        ev[-1]["id"] = {"x": 1}
    elif how == "clock a string":
        meta["clock"] = "tsc"
    elif how == "clock error a string":
        meta["clock"] = {"residual_error_s": "small"}
    elif how == "ranks negative":
        meta["ranks"] = -3
    elif how == "ranks huge":
        meta["ranks"] = 10 ** 30
    elif how == "dropped a list":
        meta["dropped_events"] = [1]
    elif how == "stretch nested":
        meta["stretches"] = [{"begin_us": {"x": 1}, "test": {"key": "a"}}]
    elif how == "stretch bytes text":
        meta["stretches"] = [{"begin_us": 0, "test": {"key": "a", "bytes": "8"}}]
    elif how == "stretches an object":
        meta["stretches"] = {"a": 1}
    return doc


HOW = ["nested pid", "nested ts", "nested name", "string ts", "huge ts", "negative dur", "rank past the trace's",
       "nested message id", "clock a string", "clock error a string", "ranks negative", "ranks huge",
       "dropped a list", "stretch nested", "stretch bytes text", "stretches an object"]


@pytest.mark.parametrize("how", HOW)
def test_a_damaged_trace_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps(damaged(how)))
    r = cli("timeline", str(p), "-o", str(tmp_path / "fig"), capsys=capsys)
    assert r.rc == 1 and r.out == "" and "Traceback" not in r.err
    assert r.err.count("\n") == 1 and r.err.startswith(f"mpimb-report: {p}: not a readable mpimb trace: "), r.err
    assert not (tmp_path / "fig").exists()


def test_deeply_nested_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "deep.json"
    p.write_text('{"traceEvents": ' + "[" * 100_000 + "]" * 100_000 + "}")
    r = cli("timeline", str(p), capsys=capsys)
    assert r.rc == 1 and r.err.count("\n") == 1 and "not a readable mpimb trace" in r.err


@pytest.mark.parametrize("window", ["99:100", "2:5"])
def test_a_rank_window_past_the_trace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       window: str) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace(40)))  # ranks 0 and 1
    r = cli("timeline", str(p), "--ranks", window, "-o", str(tmp_path / "fig"), capsys=capsys)
    assert r.rc == 2 and r.err == f"mpimb-report: --ranks {window}: the trace has 2 rank(s), 0-1\n"
    assert not (tmp_path / "fig").exists()
    r = cli("timeline", str(p), "--ranks", "1:5", "-o", str(tmp_path / "fig"), capsys=capsys)
    assert r.rc == 0, r.err  # a window that holds some of its ranks: those


def test_a_large_trace_is_drawn_to_its_pixels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """2 * 10^5 calls of 13 kinds on 2 ranks (2 * 10^4 messages): as many bars as the figure has pixels at
    most per lane and kind, an SVG of what it can show (before: 46 MB, 90 s), every kind in the legend."""
    p = tmp_path / "big.json"
    p.write_text(json.dumps(trace(200_000)))
    r = cli("timeline", str(p), "-o", str(tmp_path / "fig"), capsys=capsys)
    assert r.rc == 0, r.err
    assert sorted(f.name for f in (tmp_path / "fig").iterdir()) == ["big-sends.png", "big-sends.svg",
                                                                    "big-timeline.png", "big-timeline.svg"]
    svg = (tmp_path / "fig" / "big-timeline.svg").read_text()
    pixels = WIDTH_IN * DPI
    bars = int(svg.split("200000 calls drawn as ")[1].split(" bars")[0])
    assert bars <= 2 * len(KINDS) * pixels
    # an SVG path per bar and per arrow, each under 400 bytes: the size is bounded by the pixels, not the calls
    assert len(svg) < 400 * 2 * (len(KINDS) + 2) * pixels
    for k in KINDS:
        assert f"<!-- {k} -->" in svg


def test_thinning_merges_only_what_lies_under_a_pixel() -> None:
    import pandas as pd

    c = pd.DataFrame({"rank": [0, 0, 0, 0, 1], "tid": 0, "name": ["a", "a", "a", "b", "a"], "cat": "p2p",
                      "ts": [0.0, 1.5, 10.0, 0.5, 0.2], "dur": [1.0, 1.0, 1.0, 1.0, 1.0]})
    got = thin_calls(c, 1.0)  # a pixel is 1 µs: calls 0 and 1 of (0, a) touch within it, call 2 does not
    assert got[["rank", "name", "ts", "dur"]].values.tolist() == [[0, "a", 0.0, 2.5], [0, "a", 10.0, 1.0],
                                                                 [0, "b", 0.5, 1.0], [1, "a", 0.2, 1.0]]
    assert thin_calls(c, 0.0) is c


def test_the_legend_fits_every_kind(tmp_path: Path) -> None:
    """Thirteen kinds of call on two ranks: the figure grows until its legend fits, each kind its own colour."""
    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace(500)))
    plot = timeline_plot(read(p))
    fig = plot.fig
    assert fig is not None
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == KINDS
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    box = legend.get_window_extent(FigureCanvasAgg(fig).get_renderer())
    assert box.y0 >= 0 and box.y1 <= fig.bbox.height and box.x1 <= fig.bbox.width
    assert len(set(palette(len(KINDS)))) == len(KINDS)


def test_the_sends_histogram_counts_in_whole_numbers(tmp_path: Path) -> None:
    from mpimb.timeline import sends_plot

    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace(30)))  # 3 sends: matplotlib's default ticks would be 0, 0.25, 0.5 ...
    fig = sends_plot(read(p)).fig
    assert fig is not None
    ticks = fig.axes[0].get_yticks()
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)


def exchange(simulated: bool) -> dict[str, Any]:
    """One traced irecv-send exchange of 4 ranks (2x2, 4-nbr non-periodic): each rank's two blocking sends."""
    ev: list[dict[str, Any]] = []
    for r in range(4):
        for k in range(2):
            ev.append({"ph": "X", "name": "MPI_Send", "cat": "p2p", "pid": r, "tid": 0, "ts": 1.0 + 2 * k + r,
                       "dur": 2.0})
    test = {"program": "halocompare", "key": "halo/irecv-send/world/4-nbr", "method": "irecv-send", "bytes": 800,
            "iters": 1}
    meta = {"format": "mpimb-trace", "ranks": 4, "dropped_events": 0, "clock": {"residual_error_s": 0},
            "stretches": [{"begin_us": 0.0, "test": test}], "simulated": simulated}
    return {"traceEvents": ev, "otherData": meta}


@pytest.mark.parametrize("simulated", [False, True])
def test_model_of_real_ranks_says_the_step_model_is_for_contended_networks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], simulated: bool) -> None:
    p = tmp_path / "x-trace.json"
    p.write_text(json.dumps(exchange(simulated)))
    r = cli("model", "--trace", str(p), capsys=capsys)
    assert r.rc == 0, r.err
    text = " ".join(r.out.split())
    said = ("The step model is for a contended network, where a node takes in one message at a time (a simulated "
            "one, docs/halo-timelines.md); x-trace.json traced real ranks")
    assert (said in text) is not simulated, text
