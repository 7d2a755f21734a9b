"""Why six steps, reproduced (issue 27): halocompare --trace under scripts/simulate writes a trace in simulated
time, and the steps of one exchange measured in it equal the talk's model (analysis/mpimb/halo_steps.py).

One small simulated run: 4x4 = 16 ranks on the fat-tree platform (one network link per node: a node takes one
message at a time, the talk's rule), 128 KiB per neighbour (past SMPI's 64 KiB eager limit, so a blocking send
waits for its receiver), --exact, one repetition, one traced exchange of irecv-send and of irecv-isend.
Simulated time is exact: these are correctness checks, never timed tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from mpimb import cli, halo_steps, timeline

SIMULATE = ROOT / "scripts" / "simulate"
PLATFORM = "fat-tree"
ROWS = COLS = 4
BYTES = 128 * 1024

pytestmark = pytest.mark.skipif(not (shutil.which("smpirun") and shutil.which("smpicc")),
                                reason="SimGrid SMPI not installed (apt-get install libsimgrid-dev)")


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the run's CSV, its trace)."""
    out = tmp_path_factory.mktemp("steps") / "halo.csv"
    p = subprocess.run([str(SIMULATE), "halocompare", "-n", str(ROWS * COLS), "--platform", PLATFORM, "--exact",
                        "--", "-o", str(out), "--tests", "halo", "--comms", "world",
                        "--methods", "irecv-send,irecv-isend", "--neighbors", "4", "--periodic", "no",
                        "-m", f"{BYTES}:{BYTES}", "--reps", "1", "--max-reps", "1", "--min-rep-time", "0",
                        "--trace", "halo/4-nbr", "--trace-iters", "1"],
                       check=False, capture_output=True, text=True, timeout=300, cwd=out.parent)
    assert p.returncode == 0, p.stderr[-3000:]
    trace = out.with_name("halo-trace.json")
    assert trace.is_file(), p.stderr[-3000:]
    return out, trace


def test_the_trace_is_in_simulated_time(traced: tuple[Path, Path]) -> None:
    csv, path = traced
    t = timeline.read(path)
    assert t.meta["simulated"] is True and t.meta["platform"] == PLATFORM
    assert t.meta["ranks"] == ROWS * COLS
    # 48 messages per exchange on a non-periodic 4x4 grid (24 neighbour pairs, both ways), one exchange each
    assert t.meta["messages"] == 2 * 48 and t.meta["unmatched_sends"] == 0 == t.meta["unmatched_receives"]
    assert [st["test"]["method"] for st in t.meta["stretches"]] == ["irecv-send", "irecv-isend"]
    # simulated time: one message alone takes the platform's latency + size / bandwidth (12.5 GB/s links)
    assert halo_steps.transfer_us(t) == pytest.approx(BYTES / 12.5e3, rel=0.05)
    meta = json.loads(csv.with_suffix(".json").read_text())
    assert meta["trace"]["profiler"].endswith("(linked in: SMPI)")
    assert "/build/smpi/trace/halocompare" in meta["trace"]["profiler"]


def test_measured_steps_equal_the_model(traced: tuple[Path, Path]) -> None:
    got = {m.method: m for m in halo_steps.measured(timeline.read(traced[1]))}
    assert set(got) == {"irecv-send", "irecv-isend"}
    for method, m in got.items():
        assert (m.neighbors, m.periodic, m.bytes) == (4, False, BYTES)
        predicted = halo_steps.steps(ROWS, COLS, 4, False, method)
        # the simulated network adds a latency per message: within a tenth of a step
        assert m.steps == pytest.approx(predicted, abs=0.1), (method, m.steps, predicted)
    assert halo_steps.steps(ROWS, COLS, 4, False, "irecv-send") == 6  # the talk's six where four suffice
    assert halo_steps.steps(ROWS, COLS, 4, False, "irecv-isend") == 4


def test_model_and_timeline_commands(traced: tuple[Path, Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    csv, trace = traced
    assert cli.main(["model", str(csv), "--trace", str(trace), "--alpha", "0.58", "--bandwidth", "12500"]) == 0
    # the table is wide: its first block has the steps, a second one (the same rows) the fit's time
    steps = capsys.readouterr().out.split("Halo exchange steps (Why six steps?)")[1]
    lines = [line.split() for line in steps.splitlines() if line.startswith("4-nbr non-periodic irecv-")]
    assert [w[2:3] + w[5:7] for w in lines[:2]] == [["irecv-send", "6", "5.97"], ["irecv-isend", "4", "3.95"]]
    # steps x (α + nβ): 6 and 4 times 0.58 µs + 128 KiB at 12.5 GB/s
    assert [w[3] for w in lines[2:]] == [f"{6 * (0.58 + BYTES / 12500):.2f}", f"{4 * (0.58 + BYTES / 12500):.2f}"]
    written = timeline.write(timeline.read(trace), tmp_path)
    assert {w.name for w in written} >= {"halo-trace-timeline.png", "halo-trace-sends.png"}


def test_the_plain_build_has_no_profiler() -> None:
    plain, traced_exe = ROOT / "build/smpi/bin/halocompare", ROOT / "build/smpi/trace/halocompare"
    if not (plain.exists() and traced_exe.exists()):
        pytest.skip("make MPI=smpi has not run")

    def symbols(exe: Path) -> str:
        return subprocess.run(["nm", "-D", "--defined-only", str(exe)], check=True, capture_output=True,
                              text=True).stdout

    assert "mbp_trace_builtin" in symbols(traced_exe)
    assert "mbp_trace_builtin" not in symbols(plain)


def test_the_plain_build_refuses_trace(tmp_path: Path) -> None:
    """--trace given to the plain SMPI build (smpirun by hand, not scripts/simulate): one line, exit 2, no files."""
    plain = ROOT / "build/smpi/bin/halocompare"
    if not plain.exists():
        pytest.skip("make MPI=smpi has not run")
    hosts = tmp_path / "hosts"
    hosts.write_text("node-0\nnode-1\n")  # platforms/two-node.xml's hosts
    p = subprocess.run(["smpirun", "-quiet", "-platform", str(ROOT / "platforms" / "two-node.xml"), "-hostfile",
                        str(hosts), "-np", "2", "--log=root.thresh:error", str(plain), "--trace", "halo", "-o", "x.csv"],
                       check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    line = ("halocompare: --trace in simulation needs the program built with the profiler: "
            "run it with scripts/simulate (it runs build/smpi/trace/PROGRAM)")
    assert p.stderr.splitlines() == [line], p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["hosts"]
