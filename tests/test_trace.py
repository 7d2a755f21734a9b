"""Trace mode (docs/profile.md, "Trace mode"; the file: docs/results-format.md, "Traces"):
`halocompare --trace irecv-send/world/4-nbr` on 4 ranks with each library, checked against the
exchange's known structure (a 2x2 non-periodic mesh: every rank has 2 neighbours, so one exchange
is 8 messages); a bounded buffer that counts what it drops; the profiler never loaded without
--trace; bad inputs; `mpimb-report timeline` on the real trace, a 70-rank one and a corrupt one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, bindir, check_bad_input, launcher, run_mpi

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from helpers import browser_check, cli
from mpimb.schema import parse_params
from mpimb.timeline import notes, parse_ranks, read, timeline_plot

ITERS = 3
# halocompare's 2-D mesh of 4 ranks is 2x2 (MPI_Dims_create), row-major: the non-periodic
# 4-neighbour partners of each rank, and so the messages of one exchange
NEIGHBOURS = {0: {1, 2}, 1: {0, 3}, 2: {0, 3}, 3: {1, 2}}
PER_EXCHANGE = sum(len(v) for v in NEIGHBOURS.values())
ARGS = ["--tests", "halo", "--comms", "world", "--methods", "irecv-send,irecv-isend", "--neighbors", "4",
        "--periodic", "no", "-c", "100"]
TINY = {"openmpi": ["--quick"], "mpich": ["--quick", "--reps", "1", "--max-reps", "1", "--warmup", "0"]}


def need_profiler(lib: str) -> None:
    p = bindir(lib).parent / "lib" / "libmpimb-prof.so"
    if not p.exists():
        pytest.skip(f"{p} not built")


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def traced(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, dict[str, Any]]:
    lib = str(request.param)
    need_profiler(lib)
    out = tmp_path_factory.mktemp(f"trace-{lib}") / "halo.csv"
    r = run_mpi(lib, 4, "halocompare", *TINY[lib], *ARGS, "--trace", "irecv-send/world/4-nbr",
                "--trace-iters", str(ITERS), out=out, timeout=240)
    assert r.returncode == 0, r.stderr
    path = out.with_name("halo-trace.json")
    assert f"trace in {path}" in r.stderr
    # the profiler wrote the trace alone: no profile of its own (MPIMB_PROF_OUT=none)
    assert not (out.parent / "results").exists() and not list(out.parent.glob("profile-*"))
    return lib, path, json.loads(path.read_text())


def events(doc: dict[str, Any], ph: str) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e["ph"] == ph]


def test_trace_ties_to_its_run(traced: tuple[str, Path, dict[str, Any]]) -> None:
    lib, path, doc = traced
    meta = json.loads(path.with_name("halo.json").read_text())
    o = doc["otherData"]
    assert o["format"] == "mpimb-trace" and o["ranks"] == 4
    assert o["run_id"] == meta["run_id"]
    assert meta["trace"]["path"] == str(path) and meta["trace"]["pattern"] == "irecv-send/world/4-nbr"
    assert meta["trace"]["profiler"].endswith(f"build/{lib}/lib/libmpimb-prof.so")
    # one stretch: the matching test only (irecv-isend was measured too, not traced)
    [st] = o["stretches"]
    # the columns' words, then the row's params as key=value words
    assert st["test"]["key"] == "halo/irecv-send/world/4-nbr/non-periodic/800/" + st["test"]["params"].replace(";", "/")
    assert parse_params(st["test"]["params"]).get("dims") == "2"
    assert st["test"]["iters"] == ITERS and st["end_us"] > st["begin_us"]
    # the stretch spans every rank's: the first MPI_Pcontrol(1) to the last (0), so every call lies inside
    x = events(doc, "X")
    assert st["begin_us"] <= min(e["ts"] for e in x) and max(e["ts"] + e["dur"] for e in x) <= st["end_us"] + 1e-6
    assert o["dropped_events"] == 0 and o["unmatched_sends"] == 0 and o["unmatched_receives"] == 0
    assert o["clock"]["aligned_to"] == "rank 0" and o["clock"]["residual_error_s"] >= 0
    names = {e["pid"]: e["args"]["name"] for e in events(doc, "M") if e["name"] == "process_name"}
    assert names == {r: f"rank {r}" for r in range(4)}


def test_every_send_meets_its_receive(traced: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, doc = traced
    x = events(doc, "X")
    sends = [e for e in x if e["name"] == "MPI_Send"]
    irecvs = [e for e in x if e["name"] == "MPI_Irecv"]
    # the messages: exchange messages x traced iterations, each a send slice and a posted receive
    assert len(sends) == len(irecvs) == PER_EXCHANGE * ITERS == doc["otherData"]["messages"]
    for e in sends:
        assert e["args"]["dest"] in NEIGHBOURS[e["pid"]] and e["args"]["dest_world"] == e["args"]["dest"]
        assert e["args"]["bytes"] == 800
    s = {e["id"]: e for e in events(doc, "s")}
    f = {e["id"]: e for e in events(doc, "f")}
    assert set(s) == set(f) and len(s) == PER_EXCHANGE * ITERS
    # every aligned clock is within the check's error plus its resolution of rank 0's (docs/results-format.md),
    # so a sender's and a receiver's within twice that
    clock = doc["otherData"]["clock"]
    slack = 2 * (clock["residual_error_s"] + clock["check_resolution_s"]) * 1e6 + 0.01
    per_pair: dict[tuple[int, int], int] = defaultdict(int)
    for i, a in s.items():
        b = f[i]
        assert b["bp"] == "e"
        # the arrow starts inside a send slice of the sender and ends inside a Waitall of the receiver,
        # no earlier than the send began (within the clocks' residual error)
        [send] = [e for e in sends if e["pid"] == a["pid"] and e["ts"] <= a["ts"] <= e["ts"] + e["dur"]]
        assert send["args"]["dest"] == b["pid"]
        assert any(e["pid"] == b["pid"] and e["name"] == "MPI_Waitall" and e["ts"] <= b["ts"] <= e["ts"] + e["dur"]
                   for e in x)
        assert b["ts"] >= a["ts"] - slack
        per_pair[a["pid"], b["pid"]] += 1
    assert per_pair == {(r, p): ITERS for r, ps in NEIGHBOURS.items() for p in ps}


def test_request_lifetimes(traced: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, doc = traced
    b = {e["id"]: e for e in events(doc, "b")}
    e = {ev["id"]: ev for ev in events(doc, "e")}
    assert set(b) == set(e) and len(b) == PER_EXCHANGE * ITERS  # every Irecv's request, post -> Waitall
    for i, start in b.items():
        assert start["name"] == "receive request" and start["args"]["completed_by"] == "MPI_Waitall"
        assert e[i]["ts"] >= start["ts"] and e[i]["pid"] == start["pid"]


def test_slices_nest_and_time_runs_forward(traced: tuple[str, Path, dict[str, Any]]) -> None:
    _, _, doc = traced
    lanes: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for ev in events(doc, "X"):
        lanes[ev["pid"], ev["tid"]].append(ev)
    assert {p for p, _ in lanes} == {0, 1, 2, 3}
    for lane in lanes.values():
        ts = [ev["ts"] for ev in lane]
        assert ts == sorted(ts)  # monotone per rank and thread, in file order
        open_ends: list[float] = []
        for ev in lane:  # each slice starts after the previous ended, or lies inside it
            while open_ends and ev["ts"] >= open_ends[-1]:
                open_ends.pop()
            assert not open_ends or ev["ts"] + ev["dur"] <= open_ends[-1]
            open_ends.append(ev["ts"] + ev["dur"])


def test_timeline_of_the_trace(traced: tuple[str, Path, dict[str, Any]], tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    lib, path, _ = traced
    if lib != "openmpi":
        pytest.skip("one library's trace is enough for the figures")
    r = cli("timeline", str(path), "-o", str(tmp_path / "fig"), capsys=capsys)
    assert r.rc == 0, r.err
    made = sorted(p.name for p in (tmp_path / "fig").iterdir())
    assert made == ["halo-trace-sends.png", "halo-trace-sends.svg", "halo-trace-timeline.png",
                    "halo-trace-timeline.svg"]
    svg = (tmp_path / "fig" / "halo-trace-timeline.svg").read_text()
    assert "rank 3" in svg and "MPI_Waitall" in svg and "24 messages" in svg
    assert "Distribution of sends (24 sends)" in (tmp_path / "fig" / "halo-trace-sends.svg").read_text()


def test_report_embeds_the_timeline(traced: tuple[str, Path, dict[str, Any]], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    lib, path, _ = traced
    if lib != "openmpi":
        pytest.skip("one library's trace is enough for the report")
    out = tmp_path / "r.html"
    r = cli("report", str(path.with_name("halo.csv")), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    page = out.read_text()
    assert '<a href="#timelines">Timelines</a>' in page and '<section id="timelines">' in page
    section = page.split('<section id="timelines">')[1].split("</section>")[0]
    assert section.count("data:image/png;base64,") == 2
    assert "Timeline: halo-trace.json" in section and "Distribution of sends: halo-trace.json" in section
    ok, broken, _, ink = browser_check(out, tmp_path)  # headless Chromium: every image loads
    assert ok >= 2 and broken == 0 and ink > 0.02


def synthetic(ranks: int) -> dict[str, Any]:
    """A trace of a ring over many ranks: one send slice per rank and its message to the next rank."""
    ev: list[dict[str, Any]] = []
    for r in range(ranks):
        ev.append({"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}})
        ev.append({"ph": "X", "name": "MPI_Send", "cat": "p2p", "pid": r, "tid": 0, "ts": r, "dur": 2.0,
                   "args": {"dest": (r + 1) % ranks}})
        ev.append({"ph": "s", "name": "message", "cat": "message", "id": r + 1, "pid": r, "tid": 0, "ts": r + 0.5})
        ev.append({"ph": "f", "bp": "e", "name": "message", "cat": "message", "id": r + 1, "pid": (r + 1) % ranks,
                   "tid": 0, "ts": r + 3.0})
        ev.append({"ph": "X", "name": "MPI_Recv", "cat": "p2p", "pid": (r + 1) % ranks, "tid": 0, "ts": r + 2.5,
                   "dur": 1.0})
    return {"traceEvents": ev, "otherData": {"format": "mpimb-trace", "ranks": ranks, "dropped_events": 0,
                                             "clock": {"residual_error_s": 0}, "stretches": []}}


def test_timeline_window_above_64_ranks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "big.json"
    p.write_text(json.dumps(synthetic(70)))
    r = cli("timeline", str(p), capsys=capsys)
    assert r.rc == 0, r.err
    assert "70 ranks: ranks 0-63 drawn" in r.err
    svg = (tmp_path / "big-timeline.svg").read_text()
    assert "ranks 0–63 of 70 shown" in svg and "rank 63" in svg and "rank 64" not in svg
    assert notes(read(p), parse_ranks("6:69")) == ["70 ranks: ranks 6-69 drawn (--ranks FIRST:LAST for another window)"]
    r = cli("timeline", str(p), "--ranks", "0:64", capsys=capsys)
    assert r.rc == 2 and r.err.count("\n") == 1 and "at most 64 ranks" in r.err
    r = cli("timeline", str(p), "--time", "5:2", capsys=capsys)
    assert r.rc == 2 and r.err.count("\n") == 1 and "--time must be FROM:TO" in r.err


def test_timeline_time_window(tmp_path: Path) -> None:
    """--time: the calls and messages of a window (the synthetic ring's message r leaves at r + 0.5 µs)."""
    p = tmp_path / "ring.json"
    p.write_text(json.dumps(synthetic(8)))
    svg = timeline_plot(read(p), span=(2.0, 6.0)).svg.decode()
    assert "2 to 6 µs" in svg and "2 messages" in svg  # messages 2 and 3: sent at 2.5, 3.5, received by 6


@pytest.mark.parametrize("damage", ["truncated", "not-a-trace", "missing"])
def test_timeline_bad_file(damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "t.json"
    text = json.dumps(synthetic(4))
    if damage == "truncated":
        p.write_text(text[: len(text) // 2])
    elif damage == "not-a-trace":
        p.write_text(json.dumps({"traceEvents": [], "otherData": {"format": "something else"}}))
    r = cli("timeline", str(p), "-o", str(tmp_path / "fig"), capsys=capsys)
    assert r.rc == 1 and r.out == ""
    assert r.err.count("\n") == 1 and r.err.startswith(f"mpimb-report: {p}:") and "Traceback" not in r.err
    assert not (tmp_path / "fig").exists()


def test_a_full_buffer_counts_its_drops(tmp_path: Path) -> None:
    """2 ranks (a 2x1 mesh: one neighbour each); per traced iteration each rank records 4 events
    (MPI_Irecv, MPI_Send, MPI_Waitall and its request's completion): with room for 5, the rest drop."""
    need_profiler("openmpi")
    r = run_mpi("openmpi", 2, "halocompare", "--quick", *ARGS, "--trace", "irecv-send", "--trace-iters",
                str(ITERS), out=tmp_path / "d.csv", env={"MPIMB_PROF_TRACE_EVENTS": "5"})
    assert r.returncode == 0, r.stderr
    o = json.loads((tmp_path / "d-trace.json").read_text())["otherData"]
    assert o["buffer_events"] == 5 and o["events"] == 2 * 5
    assert o["dropped_per_rank"] == [4 * ITERS - 5] * 2 and o["dropped_events"] == 2 * (4 * ITERS - 5)
    assert f"{2 * (4 * ITERS - 5)} events dropped" in r.stderr


def traced_app(lib: str, compile_: list[str], src: str, n: int, tmp_path: Path) -> dict[str, Any]:
    """tests/profile/<src> built by the compile command, run on n ranks under the profiler's trace mode
    (MPIMB_PROF_TRACE, no profile): the trace."""
    exe = tmp_path / "app"
    subprocess.run([*compile_, "-o", str(exe), str(ROOT / "tests" / "profile" / src)], check=True)
    lib_so = bindir(lib).parent / "lib" / "libmpimb-prof.so"
    env = {**os.environ, "LD_PRELOAD": str(lib_so), "MPIMB_PROF_TRACE": str(tmp_path / "app.json"),
           "MPIMB_PROF_OUT": "none"}
    p = subprocess.run([*launcher(lib, n), str(exe)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                       env=env, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads((tmp_path / "app.json").read_text())


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_pcontrol_chooses_the_stretches(lib: str, tmp_path: Path) -> None:
    """An application (tests/profile/pcontrol.c) under MPIMB_PROF_TRACE: recorded from MPI_Init
    until MPI_Pcontrol(0), then only between MPI_Pcontrol(1) and (0); wildcard receives counted."""
    need_profiler(lib)
    doc = traced_app(lib, [f"mpicc.{lib}", "-O1"], "pcontrol.c", 3, tmp_path)
    o = doc["otherData"]
    assert o["run_id"] is None and len(o["stretches"]) == 2 and all(s["test"] is None for s in o["stretches"])
    calls = defaultdict(int)
    for e in events(doc, "X"):
        calls[e["name"]] += 1
    # stretch 1: the barrier; stretch 2: 3 ring exchanges; the 10 exchanges outside are not recorded
    assert dict(calls) == {"MPI_Barrier": 3, "MPI_Irecv": 9, "MPI_Isend": 9, "MPI_Waitall": 9}
    assert o["messages"] == 6 and o["wildcard_receives"] == 3 and o["unmatched_sends"] == 3
    assert sorted(str(e["args"]["source"]) for e in events(doc, "X") if e["name"] == "MPI_Irecv") == [
        "0", "0", "1", "1", "2", "2", "any", "any", "any"]
    assert len(events(doc, "b")) == 18  # every request's life, the wildcard receives' too
    b, s = o["stretches"]
    x = [e["ts"] for e in events(doc, "X") if e["name"] != "MPI_Barrier" and e["pid"] == 0]  # rank 0's stretches
    assert s["begin_us"] <= min(x) and max(x) <= s["end_us"] and b["end_us"] <= s["begin_us"]


@pytest.mark.parametrize(("lib", "binding"), [("openmpi", "mpi"), ("openmpi", "mpi_f08"), ("mpich", "mpi"),
                                              ("mpich", "mpi_f08")])
def test_fortran_pcontrol_chooses_the_stretches(lib: str, binding: str, tmp_path: Path) -> None:
    """MPI_PCONTROL from Fortran (tests/profile/pcontrol.f90) starts and stops the trace as from C, where the
    library's binding calls PMPI_Pcontrol past the C wrapper (Open MPI's mpif.h, use mpi and mpi_f08; MPICH's
    mpi_f08; MPICH's use mpi goes through the C symbol): the barrier before MPI_PCONTROL(0) and the 2 between
    (1) and (0) are recorded, the 10 others not."""
    need_profiler(lib)
    if not shutil.which(f"mpif90.{lib}"):
        pytest.skip(f"mpif90.{lib} not installed")
    compile_ = [f"mpif90.{lib}", "-O1", "-cpp", *(["-DF08"] if binding == "mpi_f08" else [])]
    doc = traced_app(lib, compile_, "pcontrol.f90", 2, tmp_path)
    assert len(doc["otherData"]["stretches"]) == 2
    assert [e["name"] for e in events(doc, "X")] == ["MPI_Barrier"] * 3 * 2


def test_thread_tracks(tmp_path: Path) -> None:
    """threads' latency-mt with 2 threads per rank (MPI_THREAD_MULTIPLE): each thread its own track,
    its own buffer, its messages matched to the other rank's same thread (distinct tags)."""
    need_profiler("openmpi")
    r = run_mpi("openmpi", 2, "threads", "--quick", "--tests", "latency-mt", "--pairing", "tags", "--trace",
                "latency-mt/threads-tags", out=tmp_path / "t.csv")
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "t-trace.json").read_text())
    o = doc["otherData"]
    [st] = o["stretches"]
    assert st["test"]["key"] == "latency-mt/threads-tags/shared/2T/8/" + st["test"]["params"].replace(";", "/")
    assert {(e["pid"], e["tid"]) for e in events(doc, "X")} == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert {(e["pid"], e["tid"]) for e in events(doc, "M") if e["name"] == "thread_name"} == {
        (0, 0), (0, 1), (1, 0), (1, 1)}
    assert o["messages"] > 0 and o["unmatched_sends"] == o["unmatched_receives"] == o["dropped_events"] == 0
    s = {e["id"]: (e["pid"], e["tid"]) for e in events(doc, "s")}
    f = {e["id"]: (e["pid"], e["tid"]) for e in events(doc, "f")}
    assert all(f[i][0] != s[i][0] and f[i][1] == s[i][1] for i in s)  # thread t talks to thread t


def test_compound_words(tmp_path: Path) -> None:
    """rma's test column joins an operation and a test (put-latency): a pattern may name it."""
    need_profiler("openmpi")
    r = run_mpi("openmpi", 2, "rma", "--quick", "-m", "8:8", "--ops", "put", "--syncs", "fence", "--tests", "latency",
                "--trace", "put-latency/fence", out=tmp_path / "r.csv")
    assert r.returncode == 0, r.stderr
    keys = [st["test"]["key"] for st in json.loads((tmp_path / "r-trace.json").read_text())["otherData"]["stretches"]]
    assert keys and all(k.startswith("put-latency/fence/") for k in keys)


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_a_setting_without_a_column_is_in_the_key(lib: str, tmp_path: Path) -> None:
    """--layout array measures each method with every packing, which only params tells apart: the stretch's
    key has it (packing=datatype), so a pattern may name the packing alone and each stretch is its own."""
    need_profiler(lib)
    r = run_mpi(lib, 2, "halocompare", *TINY["mpich"], *ARGS, "--layout", "array", "--trace", "irecv-send/datatype",
                out=tmp_path / "l.csv")
    assert r.returncode == 0, r.stderr
    st = json.loads((tmp_path / "l-trace.json").read_text())["otherData"]["stretches"]
    assert len(st) == 1 and "/packing=datatype/" in st[0]["test"]["key"] + "/", st
    assert parse_params(st[0]["test"]["params"]).get("packing") == "datatype"
    r = run_mpi(lib, 2, "halocompare", *TINY["mpich"], *ARGS, "--layout", "array", "--trace", "irecv-send/world",
                out=tmp_path / "m.csv")
    assert r.returncode == 0, r.stderr
    keys = [s["test"]["key"] for s in json.loads((tmp_path / "m-trace.json").read_text())["otherData"]["stretches"]]
    assert len(keys) == len(set(keys)) == 3, keys


# a bcast algorithm of each library whose name no --list or option choice spells
ALGORITHM = {"mpich": "scatter_ring_allgather", "openmpi": "scatter_allgather_ring"}


@pytest.mark.parametrize("lib", ["openmpi", "mpich"])
def test_an_algorithm_is_a_word_of_the_pattern(lib: str, tmp_path: Path) -> None:
    """--algorithms NAME makes NAME a word a pattern may use (it was refused at start: no word of the
    program's); with --algorithms library, whose names the library gives only once MPI runs, the setting's
    own form algorithm=NAME is taken at start and picks its stretch alone."""
    need_profiler(lib)
    name = ALGORITHM[lib]
    r = run_mpi(lib, 2, "collectives", "--quick", "--tests", "bcast", "-m", "8:8", "--algorithms", name, "--trace",
                name, out=tmp_path / "a.csv")
    assert r.returncode == 0, r.stderr
    [st] = json.loads((tmp_path / "a-trace.json").read_text())["otherData"]["stretches"]
    assert f"/algorithm={name}/" in st["test"]["key"]
    r = run_mpi(lib, 2, "collectives", "--quick", "--tests", "bcast", "-m", "8:8", "--algorithms", "library",
                "--trace", "algorithm=binomial", out=tmp_path / "b.csv")
    assert r.returncode == 0, r.stderr
    [st] = json.loads((tmp_path / "b-trace.json").read_text())["otherData"]["stretches"]
    assert "/algorithm=binomial/" in st["test"]["key"]


def test_under_asan(tmp_path: Path) -> None:
    """A sanitizer build re-executes itself with its runtime first in LD_PRELOAD (ASan refuses to run
    otherwise): the trace is written, exit 0."""
    p = bindir("mpich", "asan").parent / "lib" / "libmpimb-prof.so"
    if not p.exists():
        pytest.skip(f"{p} not built")
    r = run_mpi("mpich", 1, "collectives", "--quick", "--tests", "bcast", "-m", "8:8", "--trace", "bcast/8",
                out=tmp_path / "a.csv", san="asan")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "a-trace.json").read_text())["otherData"]["stretches"]


def test_without_trace_the_profiler_is_not_loaded(tmp_path: Path) -> None:
    r = run_mpi("openmpi", 2, "halocompare", "--quick", *ARGS, out=tmp_path / "n.csv")
    assert r.returncode == 0, r.stderr
    assert r.meta()["trace"] == {"pattern": None, "profiler": None}
    assert not list(tmp_path.glob("*trace*"))


def test_a_profiler_preloaded_by_hand_is_named(tmp_path: Path) -> None:
    """Without --trace only rank 0 looks for the profiler (reading the maps on every rank cost SMPI's 1024
    ranks seconds); a profiler the user preloaded is still in the metadata."""
    need_profiler("openmpi")
    lib = bindir("openmpi").parent / "lib" / "libmpimb-prof.so"
    r = run_mpi("openmpi", 2, "pingpong", "--quick", "--tests", "latency", "-m", "8:8", out=tmp_path / "p.csv",
                env={"LD_PRELOAD": str(lib), "MPIMB_PROF_OUT": "none"})
    assert r.returncode == 0, r.stderr
    assert r.meta()["trace"] == {"pattern": None, "profiler": str(lib)}


@pytest.mark.parametrize("args,message", [
    (["--trace", "foo"], "halocompare: --trace 'foo' matches no test: 'foo' is no word of a halocompare test"),
    (["--trace", "irecv-foo"], "halocompare: --trace 'irecv-foo' matches no test: 'irecv-foo' is no word"),
    (["--trace", "irecv-send", "--methods", "irecv-isend"],
     "halocompare: --trace 'irecv-send' matches no test: --methods does not select 'irecv-send'"),
    (["--trace", "irecv-send", "--trace-out", "/nonexistent/t.json"],
     "halocompare: --trace-out '/nonexistent/t.json' cannot be written"),
    (["--trace-iters", "2"], "halocompare: --trace-iters and --trace-out need --trace"),
    (["--trace", "halo//world"], "halocompare: --trace 'halo//world': an empty word"),
    (["--trace", "irecv-send", "--trace-iters", "0"], "halocompare: --trace-iters must be an integer from 1"),
    # a choice of an option that acts only with another's (--packing, with --layout array): refused at start, not
    # found unmatched after the whole run (issue 44, item 12)
    (["--trace", "irecv-send/datatype"], ("halocompare: --trace 'irecv-send/datatype' matches no test: 'datatype' is "
                                          "a choice of --packing, which acts only with --layout array")),
])
def test_bad_trace_options(args: list[str], message: str, tmp_path: Path) -> None:
    check_bad_input("halocompare", args, message, tmp_path)


def test_pattern_matching_no_run_test(tmp_path: Path) -> None:
    """Words of the vocabulary that no test of this run has (a size not measured): exit 2 at the
    end, no trace file."""
    need_profiler("mpich")
    r = run_mpi("mpich", 1, "halocompare", *TINY["mpich"], *ARGS, "--trace", "irecv-send/7", out=tmp_path / "u.csv")
    assert r.returncode == 2
    assert "halocompare: --trace 'irecv-send/7' matched no test of this run (no trace written)" in r.stderr
    assert not list(tmp_path.glob("*trace*"))


@pytest.mark.parametrize("value", ["0", "-3", "lots"])
def test_bad_buffer_size(value: str, tmp_path: Path) -> None:
    need_profiler("mpich")
    cmd = [*launcher("mpich", 2), str(bindir("mpich") / "halocompare"), "-o", str(tmp_path / "b.csv"),
           "--trace", "irecv-send"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
                       env={**os.environ, "MPIMB_PROF_TRACE_EVENTS": value})
    assert p.returncode == 2
    line = f"mpimb-prof: MPIMB_PROF_TRACE_EVENTS must be a positive number of events per thread (at most 1073741824), got '{value}'"
    assert p.stderr.splitlines() == [line]
    assert p.stdout == "" and list(tmp_path.iterdir()) == []
