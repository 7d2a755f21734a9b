"""halocompare --phases and --mock (issue 45, part 3; docs/halo-phases.md): every exchange timed in four
phases (post receives; pack and post sends; wait; unpack) in the same repetitions as its time, from the
slowest rank of each; --mock packs and unpacks but sends nothing.

- both libraries at -n 2 with tiny counts: every method has its four phases in params (validated by the
  schema), or phase_na with the reason where its phases cannot be told apart; the phase table on stdout;
- the mock: packing and unpacking only, no post, no wait;
- on the exact simulated platform the phases add up to the row's time (exact: time is simulated);
- bad input: --mock where nothing can be mocked is one line and exit 2;
- the report draws the phases as stacked bars, and the recommendation says where the time goes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import check_bad_input, check_schema, report, run_mpi, text_table
from mpimb import load
from test_simulate import needs_smpi, sim_run

PHASES = ("post", "send", "wait", "unpack")
NO_PHASES = {"sendrecv", "neighbor-alltoall"}  # one call posts, sends and waits (p2p.c, neighbor.c)
QUICK = ("--quick", "--count", "16", "--comms", "world", "--periodic", "yes", "--tests", "halo")


def measured(out: Path) -> pd.DataFrame:
    """The run's measured rows with the measured params as columns (load: the schema's checks first)."""
    load.load([str(out)])  # raises on any row the schema refuses
    rows = pd.read_csv(out, keep_default_na=False)
    rows = rows[rows["stop_reason"].isin(["ci", "max-reps", "budget"])]
    for k in (*(f"phase_{p}_s" for p in PHASES), "phase_na", "mock"):
        rows = rows.assign(**{k: rows["params"].str.extract(rf"(?:^|;){k}=([^;]*)")[0]})
    return rows


def test_phases_every_method(lib: str, tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    r = run_mpi(lib, 2, "halocompare", *QUICK, "--phases", "--verify", out=out)
    assert r.returncode == 0, r.stderr[-3000:]
    check_schema(r, "halocompare", 2)
    rows = measured(out)
    assert not rows.empty and rows["verified"].eq("yes").all()
    none = rows["method"].isin(NO_PHASES)
    assert rows.loc[none, "phase_na"].str.contains("one call").all()
    assert rows.loc[none, [f"phase_{p}_s" for p in PHASES]].isna().all().all()
    ph = rows.loc[~none, [f"phase_{p}_s" for p in PHASES]]
    assert ph.notna().all().all(), rows.loc[~none, "params"].tolist()
    assert (ph.astype(float) >= 0).all().all()
    assert rows.loc[~none, "phase_na"].isna().all()
    table = text_table(r.stdout, "Phases")
    assert table[0][:4] == ["method", "comm", "nbrs", "bytes"]
    sendrecv = next(t for t in table if t and t[0] == "sendrecv")
    assert sendrecv.count("n/a") == 4
    assert "n/a sendrecv: each MPI_Sendrecv posts, sends and waits in one call" in r.stdout
    # off by default: no phase in params, no phase table
    off = tmp_path / "off.csv"
    r = run_mpi(lib, 2, "halocompare", *QUICK, "--methods", "irecv-isend", out=off)
    assert r.returncode == 0 and "phase_" not in off.read_text() and "Phases" not in r.stdout


def test_mock(lib: str, tmp_path: Path) -> None:
    out = tmp_path / "m.csv"
    r = run_mpi(lib, 2, "halocompare", *QUICK[:-2], "--tests", "halo", "--layout", "array", "--mock", "--phases",
                "--methods", "irecv-isend,neighbor-alltoall", "--neighbors", "8", out=out)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = measured(out)
    assert set(rows["params"].str.extract(r"packing=([^;]*)")[0]) == {"pack", "mpi-pack"}  # datatype cannot mock
    assert rows["mock"].eq("yes").all() and rows["verified"].eq("").all()  # nothing sent, nothing to verify
    # no communication: nothing posted, nothing waited for; packing and unpacking take time
    assert rows["phase_post_s"].astype(float).eq(0).all() and rows["phase_wait_s"].astype(float).eq(0).all()
    assert (rows["phase_send_s"].astype(float) > 0).all() and (rows["phase_unpack_s"].astype(float) > 0).all()
    assert "mock" in r.stdout.split("Phases")[1]
    assert "best method" not in report("findings", out)  # every method's mock does the same: nothing to judge


def test_phases_cost_pairs(tmp_path: Path) -> None:
    """--phases-cost: every test twice in one group, phases=off (no phases) and phases=on (its phases), so that
    the rounds file pairs them round by round (bench/phases/run)."""
    out = tmp_path / "c.csv"
    r = run_mpi("mpich", 2, "halocompare", *QUICK, "--phases-cost", "--methods", "irecv-isend,sendrecv", out=out)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = measured(out)
    mode = rows["params"].str.extract(r"(?:^|;)phases=(\w+)")[0]
    assert mode.value_counts().to_dict() == {"off": 4, "on": 4}  # 2 methods x 2 stencils, each off and on
    assert rows.loc[mode == "off", "phase_wait_s"].isna().all() and rows.loc[mode == "off", "phase_na"].isna().all()
    on = rows[(mode == "on") & (rows["method"] == "irecv-isend")]
    assert on["phase_wait_s"].notna().all()
    rounds = pd.read_csv(tmp_path / "c-rounds.csv")
    assert rounds.groupby("group")["row"].nunique().eq(4).all()  # a stencil's four tests: one group


@needs_smpi
def test_phases_add_up_exact(tmp_path: Path) -> None:
    """Simulated time is exact: each repetition's phases add up to its time, so their medians do too (every
    repetition is the same)."""
    out = tmp_path / "s.csv"
    methods = "irecv-send,irecv-isend,phased,persistent,rma-fence-put,rma-pscw-get,neighbor-ineighbor,sendrecv"
    sim_run("halocompare", 2, "two-node", "--tests", "halo", "--comms", "world", "--dims", "1", "--periodic", "no",
            "--count", "1000", "--methods", methods, "--phases", "--min-rep-time", "0", "--reps", "6",
            "--max-reps", "6", out=out, exact=True)
    rows = measured(out).set_index("method")
    assert rows.loc["sendrecv", "phase_na"].startswith("each MPI_Sendrecv")
    rows = rows.drop(index="sendrecv")
    assert {"irecv-send", "persistent", "rma-fence-put", "rma-pscw-get"} <= set(rows.index)  # (SMPI lacks some)
    total = sum(rows[f"phase_{p}_s"].astype(float) for p in PHASES)
    pd.testing.assert_series_equal(total, rows["time_median_s"].astype(float), check_names=False, rtol=1e-4)
    assert (rows["phase_wait_s"].astype(float) > 0).all()  # the message's flight: waited for


@pytest.mark.parametrize("args, message", [
    (["--mock"], "--mock needs --layout array"),
    (["--mock", "--layout", "array", "--packing", "datatype,pack"], "--mock cannot mock --packing datatype"),
    (["--mock", "--layout", "array", "--tests", "pack"], "--mock mocks the halo test"),
])
def test_mock_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    check_bad_input("halocompare", args, f"halocompare: {message}", tmp_path)


def test_mock_bad_input_launched(tmp_path: Path) -> None:
    """On every rank of a job, with both libraries; --overlap is checked after MPI_Init (a common option)."""
    check_bad_input("halocompare", ["--mock"], "halocompare: --mock needs --layout array", tmp_path, ranks=2,
                    libs=("mpich", "openmpi"))
    check_bad_input("halocompare", ["--mock", "--layout", "array", "--overlap", "1"],
                    "halocompare: --mock has no communication", tmp_path, ranks=2, libs=("mpich", "openmpi"))


def test_report_stacked_bars_and_why(tmp_path: Path) -> None:
    out = tmp_path / "r.csv"
    # methods that all have phases: which one the recommendation picks is the machine's (sendrecv, without
    # phases, won on a busy one and left the why empty, as it should); its n/a cells are checked above
    r = run_mpi("mpich", 2, "halocompare", *QUICK, "--phases", "--methods", "irecv-isend,persistent", out=out)
    assert r.returncode == 0, r.stderr[-3000:]
    report("plot", out, "-o", tmp_path / "plots")
    assert sorted(p.name for p in (tmp_path / "plots").glob("*halo-phases-periodic-128.png"))
    html = tmp_path / "r.html"
    report("report", out, "-o", html)
    assert "where the time goes: halo exchange" in html.read_text()
    rec = tmp_path / "rec.json"
    report("recommend", out, "-o", rec)
    whys = [x["why"] for m in json.loads(rec.read_text())["machines"] for x in m["recommendations"]]
    assert whys and all(w and set(w) == {"words", *(f"{p}_s" for p in PHASES)} for w in whys)
