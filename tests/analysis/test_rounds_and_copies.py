"""A run counted once however often it is given (a copy in a subdirectory, one file under two names), and a
rounds file checked against its CSV (docs/results-format.md, "The rounds file"): a file that does not match
is a problem for `validate`, and the findings then compare the rows by their own intervals and say why
(issue 44, items 8 and 9).  The runs are built here: a halocompare group of four rows whose rounds make
persistent 3 % slower than irecv-isend in every round, while the rows' own 95 % intervals overlap."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import FIXTURES, cli

EQUAL = FIXTURES / "equal" / "halocompare-equal-np4.csv"
REPS = 15
# per row (irecv-isend world, persistent world, irecv-isend evenodd, persistent evenodd): its time factor
FACTOR = [1.0, 1.03, 1.9, 1.9 * 1.03]


def grouped_run(d: Path, stem: str = "h") -> Path:
    """A run of one group of rounds in d (CSV, JSON, rounds file); returns the CSV."""
    d.mkdir(parents=True, exist_ok=True)
    rows = pd.read_csv(EQUAL, dtype=str, keep_default_na=False)
    base = 40e-6 * (1 + 0.15 * np.sin(np.arange(REPS)))  # one drift all members share: paired, it cancels
    lines = []
    pos = np.array([np.random.default_rng(k).permutation(len(FACTOR)) for k in range(REPS)])  # each round's order
    for i, f in enumerate(FACTOR):
        t = base * f
        med = float(np.median(t))
        cols = {"reps": REPS, "time_min_s": t.min(), "time_median_s": med, "time_max_s": t.max(),
                "time_mean_s": t.mean(), "time_ci_lo_s": med * 0.93, "time_ci_hi_s": med * 1.07,
                "time_p90_s": np.quantile(t, 0.9), "time_p99_s": np.quantile(t, 0.99), "rank_min_s": med * 0.8,
                "rank_mean_s": med * 0.9, "mbps": 4 * 16000 / med / 1e6}
        for c, v in cols.items():
            rows.loc[i, c] = f"{v:.9g}"
        lines += [(0, k, i + 1, int(pos[k, i]), float(f"{t[k]:.9g}")) for k in range(REPS)]
    csv = d / f"{stem}.csv"
    rows.to_csv(csv, index=False)
    meta = json.loads(EQUAL.with_suffix(".json").read_text())
    meta.update(csv=csv.name, rounds=f"{stem}-rounds.csv", rounds_seed=1)
    csv.with_suffix(".json").write_text(json.dumps(meta))
    rounds = pd.DataFrame(sorted(lines), columns=["group", "round", "row", "pos", "time_s"])
    rounds.to_csv(d / f"{stem}-rounds.csv", index=False)
    return csv


def methods_finding(out: str) -> str:
    return next(ln for ln in out.splitlines() if "Halo 4-nbr non-periodic, 16000 B, world:" in ln)


def test_the_built_run_is_valid_and_paired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = grouped_run(tmp_path / "a")
    r = cli("validate", str(csv), capsys=capsys)
    assert r.rc == 0 and r.err == "", r.out + r.err
    r = cli("findings", str(tmp_path / "a"), capsys=capsys)
    assert r.rc == 0, r.err
    assert "outside the noise in this launch (paired, 15 rounds: time 1.030× [1.03, 1.03])" in methods_finding(r.out)


@pytest.mark.parametrize("where", ["subdirectory", "same file twice", "symlinked directory"])
def test_a_copy_of_a_run_changes_no_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    csv = grouped_run(tmp_path / "a")
    before = cli("findings", str(tmp_path / "a"), capsys=capsys)
    if where == "subdirectory":  # CSV, JSON and rounds copied: one run_id in two places
        (tmp_path / "a" / "copy").mkdir()
        for f in csv.parent.glob("h*"):
            shutil.copy(f, tmp_path / "a" / "copy" / f.name)
        args = [str(tmp_path / "a")]
    elif where == "same file twice":  # by its CSV and by its JSON, and as ./a
        args = [str(csv), str(csv.with_suffix(".json")), str(tmp_path / "a")]
    else:
        (tmp_path / "b").symlink_to(tmp_path / "a")
        args = [str(tmp_path / "a"), str(tmp_path / "b")]
    after = cli("findings", *args, capsys=capsys)
    assert after.rc == 0 and after.out == before.out
    if where == "subdirectory":  # (the same file by two names is one path, as before)
        warn = [ln for ln in after.err.splitlines() if "the same run as" in ln]
        assert len(warn) == 1 and "run_id equal-20261120T120017Z-004d" in warn[0] and "counted once" in warn[0]
        assert warn[0].count(".csv") == 3  # both files named (and the one used)
    v = cli("validate", *args, capsys=capsys)
    assert v.rc == 0 and "ok: 1 run(s), 4 row(s)" in v.out


def test_the_copy_without_its_rounds_is_the_one_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A copy of the CSV and JSON alone sorts first (a/0) but the run is taken where its rounds are."""
    csv = grouped_run(tmp_path / "a" / "1")
    (tmp_path / "a" / "0").mkdir()
    shutil.copy(csv, tmp_path / "a" / "0" / csv.name)
    shutil.copy(csv.with_suffix(".json"), tmp_path / "a" / "0" / csv.with_suffix(".json").name)
    r = cli("findings", str(tmp_path / "a"), capsys=capsys)
    assert "(paired, 15 rounds" in methods_finding(r.out)


def damage(csv: Path, how: str) -> None:
    path = csv.with_name("h-rounds.csv")
    t = pd.read_csv(path)
    if how == "no header":
        path.write_text("\n".join(",".join(map(str, x)) for x in t.itertuples(index=False)) + "\n")
        return
    if how == "row outside the CSV":
        t.loc[t["row"] == 2, "row"] = 9
    elif how == "a round missing":
        t = t.drop(index=t.index[(t["row"] == 2) & (t["round"] == 3)])
    elif how == "another run's rounds":  # the rows' times swapped: the rounds file of another run
        t.loc[t["row"] == 1, "time_s"], t.loc[t["row"] == 2, "time_s"] = (t.loc[t["row"] == 2, "time_s"].to_numpy(),
                                                                            t.loc[t["row"] == 1, "time_s"].to_numpy())
    elif how == "not numbers":
        t["time_s"] = t["time_s"].astype(object)
        t.loc[5, "time_s"] = "fast"
    t.to_csv(path, index=False)


@pytest.mark.parametrize("how, said", [("no header", "h-rounds.csv:1: not a rounds file: the header is '0,0,1,"),
                                       ("row outside the CSV", "row 9, but h.csv has 4 row(s)"),
                                       ("a round missing", "row 2 (h.csv:3) has 14 line(s) of 14 distinct round(s)"),
                                       ("another run's rounds", "row 1 (h.csv:2): median, min, max of its rounds"),
                                       ("not numbers", "h-rounds.csv:7: expected integers group")])
def test_rounds_that_do_not_match_the_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str,
                                          said: str) -> None:
    csv = grouped_run(tmp_path / "a")
    damage(csv, how)
    v = cli("validate", str(csv), capsys=capsys)
    assert v.rc == 1 and said in v.out, v.out
    assert "Traceback" not in v.err and v.err.count("\n") == 1
    # the findings: not paired by those rounds, said so; the rows compared by their own (overlapping) intervals
    r = cli("findings", str(csv), capsys=capsys)
    assert r.rc == 0, r.err
    f = methods_finding(r.out)
    assert "paired," not in f and "within the noise in this launch (95 % CIs of the medians" in f
    assert "the rounds file does not match the CSV" in f
    assert any(said in ln and "not paired by these rounds" in ln for ln in r.err.splitlines()), r.err
    t = cli("table", str(csv), capsys=capsys)
    assert t.rc == 0 and "Traceback" not in t.err


def test_a_killed_run_cut_in_a_group_stands_alone_without_a_problem(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    csv = grouped_run(tmp_path / "a")
    damage(csv, "a round missing")
    meta = json.loads(csv.with_suffix(".json").read_text())
    csv.with_suffix(".json").write_text(json.dumps({**meta, "complete": False, "end_utc": None}))
    v = cli("validate", str(csv), capsys=capsys)
    assert v.rc == 0, v.out
    f = methods_finding(cli("findings", str(csv), capsys=capsys).out)
    assert "paired," not in f and "does not match" not in f


def test_a_copy_taken_while_the_run_wrote_is_the_same_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A copy of the first rows (the run still writing: "complete": false) is the run: its rows are the run's."""
    csv = grouped_run(tmp_path / "a")
    early = tmp_path / "a" / "early"
    early.mkdir()
    lines = csv.read_text().splitlines(keepends=True)
    (early / csv.name).write_text("".join(lines[:3]))
    meta = json.loads(csv.with_suffix(".json").read_text())
    (early / csv.with_suffix(".json").name).write_text(json.dumps({**meta, "complete": False, "end_utc": None}))
    r = cli("findings", str(tmp_path / "a"), capsys=capsys)
    assert "(paired, 15 rounds" in methods_finding(r.out)
    assert f"{early / csv.name}: the same run as {csv} " in r.err


def test_two_runs_of_one_run_id_are_two_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Simulated runs started in the same simulated second share a run_id (bench/simulated/full-1024): files of
    one run_id with other rows are kept both, without a warning."""
    grouped_run(tmp_path / "a")
    other = grouped_run(tmp_path / "b")
    d = pd.read_csv(other, dtype=str, keep_default_na=False)
    d["bytes"] = "32000"  # another size: another measurement
    d["mbps"] = [f"{float(x) * 2:.9g}" for x in d["mbps"]]
    d.to_csv(other, index=False)
    v = cli("validate", str(tmp_path / "a"), str(tmp_path / "b"), capsys=capsys)
    assert v.rc == 0 and "ok: 2 run(s), 8 row(s)" in v.out and "the same run" not in v.err
