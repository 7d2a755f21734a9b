"""The one judge across launches (mpimb.launches, docs/measurement.md "Launches and the one judge"): a set
compared with itself is not called different, a real 5 % difference is found, one launch judges nothing, a
launch shift larger than the noise inside a launch is not a difference, the margin's edge gets one verdict
everywhere, launches alternated by scripts/launches are paired, a busy run is marked, and launches of one
label that ran different builds are named."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import FIXTURES, cli, launch_set
from mpimb import judge, launches
from mpimb.paired import Paired

EQUAL = FIXTURES / "equal"
CLUSTER = FIXTURES / "clusterA"


def compare(tmp: Path, a: Path, b: Path, capsys: pytest.CaptureFixture[str]) -> tuple[pd.DataFrame, str, str]:
    out = tmp / "c.html"
    r = cli("compare", str(a), str(b), "-o", str(out), "--csv", str(tmp / "r.csv"), capsys=capsys)
    assert r.rc == 0, r.err
    return pd.read_csv(tmp / "r.csv", keep_default_na=False), out.with_suffix(".md").read_text(), r.err


def sig(w: pd.DataFrame, name: str) -> pd.Series:
    return w[f"sig@{name}"].astype(str) == "True"


def summary(md: str) -> str:
    return md.split("## Summary", 1)[1].split("##", 1)[0]


def test_equal_sets_are_not_called_different(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two sets of 5 launches drawn alike (a launch shift of 3 %, 1 % per row): no row called, and the summary
    names no difference."""
    a = launch_set(CLUSTER, tmp_path / "A", 5, shift=0.03, jitter=0.01, seed=1, label="A")
    b = launch_set(CLUSTER, tmp_path / "B", 5, shift=0.03, jitter=0.01, seed=2, label="B")
    w, md, _ = compare(tmp_path, a, b, capsys)
    assert len(w) > 100
    assert not sig(w, "B").any()
    s = summary(md)
    assert "within the noise" in s and "faster in 0, slower in 0" in s and "significantly" not in s
    assert "× faster" not in s and "× slower" not in s  # no direction named that the interval does not call
    assert "Win:" not in s and "Loss:" not in s


def test_five_percent_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """B 5 % slower everywhere, with the same launch-to-launch noise: found in at least 80 % of the rows (every
    one called is slower), and the summary's geometric mean is called with its interval."""
    a = launch_set(CLUSTER, tmp_path / "A", 5, shift=0.01, jitter=0.005, seed=1, label="A")
    b = launch_set(CLUSTER, tmp_path / "B", 5, scale=1.05, shift=0.01, jitter=0.005, seed=2, label="B")
    w, md, _ = compare(tmp_path, a, b, capsys)
    called = sig(w, "B")
    assert called.mean() >= 0.8
    assert (w.loc[called, "ratio@B"].astype(float) > 1).all()
    gm = re.search(r"B is (\d\.\d\d)× slower \(geometric mean of the time ratios [\d.]+, 95 % CI \[([\d.]+), "
                   r"([\d.]+)\] across 5 launches\) — outside the noise", summary(md))
    assert gm and 1.03 <= float(gm[1]) <= 1.07 and float(gm[2]) > 1.01


def test_one_launch_judges_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One launch of A against 5 of B, twice as slow: ratios shown, none marked, every interval 'not judged (1
    launch of A)', no geometric-mean verdict."""
    a = launch_set(CLUSTER, tmp_path / "A", 1, seed=1, label="A")
    b = launch_set(CLUSTER, tmp_path / "B", 5, scale=2.0, shift=0.01, seed=2, label="B")
    w, md, _ = compare(tmp_path, a, b, capsys)
    assert not sig(w, "B").any()
    judged = w["ratio@B"] != ""
    assert (w.loc[judged, "why@B"] == "not judged (1 launch of A)").all()
    s = summary(md)
    assert "not judged (1 launch of A); nothing is called" in s and "outside the noise" not in s
    assert "↑" not in md and "↓" not in md


def test_a_launch_shift_is_not_a_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each launch 10 % off at random, its own rows tight (0.2 %): one launch's intervals would call most rows,
    the judge across launches calls none."""
    a = launch_set(CLUSTER, tmp_path / "A", 4, shift=0.10, jitter=0.002, seed=3, label="A")
    b = launch_set(CLUSTER, tmp_path / "B", 4, shift=0.10, jitter=0.002, seed=4, label="B")
    one = [(pd.read_csv(next(a.glob("*launch-1.csv"))), pd.read_csv(next(b.glob("*launch-1.csv"))))][0]
    x, y = one[0]["time_median_s"], one[1]["time_median_s"]
    apart = (one[1]["time_ci_lo_s"] > one[0]["time_ci_hi_s"]) | (one[1]["time_ci_hi_s"] < one[0]["time_ci_lo_s"])
    assert (x > 0).all() and (y > 0).all() and apart.mean() > 0.5  # the single launches' intervals "differ"
    w, _, _ = compare(tmp_path, a, b, capsys)
    assert not sig(w, "B").any()


def test_the_margins_edge_gets_one_verdict_everywhere() -> None:
    """[1.004, 1.009] lies inside 1 ± 1 %: within the noise for the rule, a paired ratio of rounds, a ratio
    across launches and the findings' verdict; [1.011, 1.02] is called by each."""
    assert not launches.outside(1.004, 1.009) and launches.outside(1.011, 1.02)
    inside, beyond = Paired(1.006, 1.004, 1.009, 40), Paired(1.015, 1.011, 1.02, 40)
    assert not inside.called and beyond.called
    assert judge.paired_verdict(inside) == "noise" and judge.paired_verdict(beyond) == "called"
    a = np.ones(5)
    assert not launches.ratio(a, a * 1.0065, True).called  # interval [1.0065, 1.0065]
    assert launches.ratio(a, a * 1.015, True).called
    row = pd.Series({"time_median_s": 1.0, "launch_times": tuple(a), "launch_ids": tuple("12345")})
    assert judge.verdict(row, pd.Series({**row, "launch_times": tuple(a * 1.0065)})) == "noise"
    assert judge.verdict(row, pd.Series({**row, "launch_times": tuple(a * 1.015)})) == "called"


def test_alternated_launches_are_paired(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Launches of one scripts/launches series (the i-th of A and B side by side), each drawing a 10 % shift
    that both sides share: paired per launch, a 5 % difference is called in every row; the same files without
    the series (unpaired) call none."""
    for series, want in (("s1", True), (None, False)):
        d = tmp_path / str(series)
        a = launch_set(CLUSTER, d / "A", 5, shift=0.10, seed=7, series=series, label="A")
        b = launch_set(CLUSTER, d / "B", 5, scale=1.05, shift=0.10, seed=7, series=series, label="B")
        w, _, _ = compare(d, a, b, capsys)
        called = sig(w, "B")[w["ratio@B"] != ""]
        assert len(called) > 100 and (called.all() if want else not called.any()), series


def test_findings_across_launches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A set of 5 launches: findings judge across them, paired per launch (two configurations of one launch),
    and say so; one launch says that its verdict holds for that launch."""
    s = launch_set(EQUAL, tmp_path / "set", 5, shift=0.03, jitter=0.01, seed=1)
    f = cli("findings", str(s), capsys=capsys)
    assert f.rc == 0, f.err
    assert "paired over 5 launches" in f.out and "in this launch" not in f.out
    one = cli("findings", str(EQUAL), capsys=capsys)
    assert "in this launch" in one.out and "launches" not in one.out.split("):", 1)[1].replace(
        "judge across launches", "")


def test_a_busy_run_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run whose JSON says "busy": true: every finding carries the mark; compare marks its ratios and
    summary."""
    s = launch_set(EQUAL, tmp_path / "busy", 1, seed=1, label="busy")
    for j in s.glob("*.json"):
        j.write_text(json.dumps({**json.loads(j.read_text()), "busy": True}))
    f = cli("findings", str(s), capsys=capsys)
    body = [ln for ln in f.out.splitlines()[1:] if ln.strip()]
    assert body and all(judge.BUSY in ln for ln in body)
    _, md, _ = compare(tmp_path, EQUAL, s, capsys)
    assert judge.BUSY.strip() in summary(md) and "¤" in md


def test_launches_of_different_builds_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two launches of one label whose JSON names different commits: one warning names both files."""
    s = launch_set(EQUAL, tmp_path / "set", 2, seed=1)
    j = sorted(s.glob("*.json"))[1]
    j.write_text(json.dumps({**json.loads(j.read_text()), "git_commit": "fedcba987654"}))
    f = cli("findings", str(s), capsys=capsys)
    assert f.rc == 0
    warn = [ln for ln in f.err.splitlines() if "different builds" in ln]
    assert len(warn) == 1 and "fedcba987654" in warn[0] and j.with_suffix(".csv").name in warn[0]


def family(row: Callable[[float], pd.Series], same: int, apart: int) -> tuple[int, list[judge.Judgement]]:
    """(how many of `same` identical pairs judgement calls one by one, judgements of those and of `apart` pairs
    25 % apart judged together)."""
    pairs = [(row(1.0), row(1.0)) for _ in range(same)] + [(row(1.0), row(1.25)) for _ in range(apart)]
    return sum(judge.judgement(a, b).verdict == "called" for a, b in pairs[:same]), judge.judgements(pairs)


def test_many_pairs_judged_together_call_no_identical_one() -> None:
    """400 pairs of identical configurations over 5 launches (a launch shift and row noise of 3 % each): judged
    one by one, a 95 % interval apiece calls some; judged together (judge.judgements: Benjamini-Hochberg, as a
    compare's rows) none, while 40 pairs 25 % apart among them are all still called."""
    rng = np.random.default_rng(11)
    ids = tuple(f"s#{i}" for i in range(1, 6))

    def row(scale: float) -> pd.Series:
        t = tuple(float(x) for x in scale * np.exp(rng.normal(0, 0.03, 5)))
        return pd.Series({"time_median_s": float(np.median(t)), "launch_times": t, "launch_ids": ids})

    alone, together = family(row, 400, 40)
    assert alone > 0
    assert sum(j.verdict == "called" for j in together[:400]) == 0
    assert all(j.verdict == "called" and j.factor < 1 for j in together[400:])
    assert "intervals over 440 comparisons" in together[0].words


def test_many_pairs_inside_one_launch_are_judged_as_a_family() -> None:
    """Pairs measured by rounds of one group inside one launch: 300 identical pairs (5 % noise per round, 40
    rounds) judged one by one call some; judged together (judge.judgements: the Bonferroni level for intervals of
    order statistics) none, while pairs 25 % apart are still called, and the words state the level."""
    rng = np.random.default_rng(5)

    def row(scale: float) -> pd.Series:
        r = tuple(float(x) for x in scale * np.exp(rng.normal(0, 0.05, 40)))
        return pd.Series({"time_median_s": float(np.median(r)), "round_group": 0.0, "file": "a.csv", "rounds": r,
                          "reps": 40, "launch_times": (float(np.median(r)),), "launch_ids": ("run",)})

    alone, together = family(row, 300, 20)
    assert alone > 0
    assert sum(j.verdict == "called" for j in together[:300]) == 0
    assert all(j.verdict == "called" for j in together[300:])
    assert "in this launch" in together[0].words and "intervals over 320 comparisons" in together[0].words


def slow_launch(d: Path, i: int, factor: float) -> None:
    """Launch i of set d as a busy machine leaves it: every time factor × longer, every rate factor × lower."""
    for p in d.glob(f"*-launch-{i}.csv"):
        df = pd.read_csv(p, keep_default_na=False, dtype=str)
        for c in [c for c in df if c.startswith(("time_", "rank_"))] + ["mbps"]:
            x = pd.to_numeric(df[c], errors="coerce")
            df[c] = df[c].where(x.isna(), ((x / factor) if c == "mbps" else (x * factor)).map("{:.9g}".format))
        df.to_csv(p, index=False, lineterminator="\n")


def test_busy_launches_move_no_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """30 alternated launches a side, three of them 300-1000× slow (a busy machine's): the trimmed judge still
    finds a 5 % delay in at least 80 % of the rows, every called row slower and its ratio inside its interval,
    and calls nothing where the sides are alike.  Plain Student's t on the same launches, what the judge did
    before launches were trimmed, finds almost nothing: the slow launches' spread swamps every interval."""
    src = tmp_path / "pingpong"  # one program's rows: 60 launches of the whole cluster set would take long
    src.mkdir()
    for f in CLUSTER.glob("pingpong-*"):
        shutil.copy(f, src)
    for scale, want in ((1.05, True), (1.0, False)):
        d = tmp_path / str(scale)
        a = launch_set(src, d / "A", 30, shift=0.05, jitter=0.005, seed=3, series="s1", label="A")
        b = launch_set(src, d / "B", 30, scale=scale, shift=0.05, jitter=0.005, seed=3, series="s1", label="B")
        slow_launch(b, 4, 1000.0)
        slow_launch(b, 17, 300.0)
        slow_launch(a, 9, 500.0)
        w, md, _ = compare(d, a, b, capsys)
        shown = w[w["ratio@B"] != ""]
        called = sig(w, "B")[shown.index]
        r, lo, hi = (shown[c].astype(float) for c in ("ratio@B", "rlo@B", "rhi@B"))
        assert ((lo <= r) & (r <= hi)).all()  # the factor shown is the one its interval is about
        if want:
            assert called.mean() >= 0.8 and (r[called] > 1).all()
        else:
            assert not called.any() and "faster in 0, slower in 0" in summary(md)
    # what plain Student's t made of the 5 % set
    d = tmp_path / "1.05"
    per = {s: pd.concat(pd.read_csv(f).assign(i=int(f.stem.rsplit("-", 1)[1])) for f in (d / s).glob("*.csv"))
           .set_index(["i", "test", "method", "comm", "bytes", "nprocs", "params"], drop=True)["time_median_s"]
           for s in ("A", "B")}
    logs = np.log(per["B"] / per["A"]).groupby(level=[1, 2, 3, 4, 5, 6], dropna=False)
    n, m, v = logs.count(), logs.mean(), logs.var()
    half = launches.t_quantile(0.975, n - 1) * np.sqrt(v / n)
    assert (np.exp(m - half) > 1 + launches.MARGIN).mean() < 0.2


def test_below_ten_launches_nothing_is_trimmed() -> None:
    """Up to 9 launches a side the judge is Student's t (paired) and Welch's t (unpaired) exactly; from 10 on,
    one launch at each end is left out of the mean, so one launch 1000× slow does not move the estimate."""
    rng = np.random.default_rng(2)
    a, b = np.exp(rng.normal(0, 0.05, 9)), np.exp(rng.normal(0.03, 0.05, 9))
    d = np.log(b / a)
    half = float(launches.t_quantile(0.975, 8)) * d.std(ddof=1) / 3
    r = launches.ratio(a, b, True)
    assert r.ratio == pytest.approx(np.exp(d.mean())) and r.lo == pytest.approx(np.exp(d.mean() - half))
    la, lb = np.log(a), np.log(b)
    u = launches.ratio(a, b, False)
    va, vb = la.var(ddof=1) / 9, lb.var(ddof=1) / 9
    df = (va + vb) ** 2 / (va ** 2 / 8 + vb ** 2 / 8)
    want = np.exp(lb.mean() - la.mean() - float(launches.t_quantile(0.975, df)) * np.sqrt(va + vb))
    assert u.lo == pytest.approx(want)
    a10, b10 = np.append(a, 1.0), np.append(b, 1000.0)
    t = launches.trimmed(np.zeros(10, np.int64), np.log(b10 / a10))
    assert int(t["h"].iloc[0]) == 8 and launches.ratio(a10, b10, True).ratio < 1.1
