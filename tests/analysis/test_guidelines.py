"""mpimb-report guidelines (mpimb.guidelines; docs/report.md, "Guidelines"): every guideline on a set built to
violate it and on one built to hold it, a composite right side across launches and in one launch, what cannot
be checked and why, bad input, the findings block's section, and one end-to-end run per MPI library."""

from __future__ import annotations

import csv
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from conftest import bindir, run_mpi
from helpers import ROOT, cli, launch_set
from make_fixtures import LIBS, Writer
from mpimb.findings import usable
from mpimb.guidelines import HELD, NAMES, UNJUDGED, VIOLATED, Result, check, composite
from mpimb.keys import prepared
from mpimb.load import load

T = 1e-5  # the right side's time, s
B = 1024  # bytes
P = 4  # ranks of the synthetic runs
ARRAY = "layout=array;packing="


def _halo(w: Writer, f: float, a: str, b: str, comm_a: str = "world", comm_b: str = "world",
          pa: str = "", pb: str = "") -> None:
    w.row("halo", f * T, a, comm_a, 4, 0, B, sent=4 * B, params=pa)
    w.row("halo", T, b, comm_b, 4, 0, B, sent=4 * B, params=pb)


def _coll(w: Writer, f: float, a: tuple[str, int], b1: tuple[str, int], b2: tuple[str, int]) -> None:
    """A at a's size takes f × (B1 + B2), each part T."""
    root = {"bcast", "reduce", "scatter", "gather"}
    for (test, n), t in ((a, 2 * f * T), (b1, T), (b2, T)):
        w.row(test, t, "library", "world", nbytes=n, sent=n, params="root=0;timing=osu" if test in root else
              "timing=osu")


BUILD: dict[str, tuple[str, Callable[[Writer, float], None]]] = {
    "halo-neighbor": ("halocompare", lambda w, f: _halo(w, f, "neighbor-alltoall", "irecv-isend")),
    "halo-persistent": ("halocompare", lambda w, f: _halo(w, f, "persistent", "irecv-isend")),
    "halo-isend": ("halocompare", lambda w, f: _halo(w, f, "irecv-isend", "irecv-send")),
    "halo-datatype": ("halocompare", lambda w, f: _halo(w, f, "irecv-isend", "irecv-isend", pa=ARRAY + "datatype",
                                                        pb=ARRAY + "pack")),
    "halo-dup": ("halocompare", lambda w, f: _halo(w, f, "irecv-isend", "irecv-isend", "dup")),
    "halo-cart": ("halocompare", lambda w, f: _halo(w, f, "irecv-isend", "irecv-isend", "cart")),
    "coll-allreduce": ("collectives", lambda w, f: _coll(w, f, ("allreduce", B), ("reduce", B), ("bcast", B))),
    "coll-bcast": ("collectives", lambda w, f: _coll(w, f, ("bcast", P * B), ("scatter", B), ("allgather", B))),
    "coll-allgather": ("collectives", lambda w, f: _coll(w, f, ("allgather", B), ("gather", B), ("bcast", P * B))),
    "coll-reduce-scatter": ("collectives", lambda w, f: _coll(w, f, ("reduce_scatter_block", B), ("reduce", P * B),
                                                              ("scatter", B))),
    "coll-user": ("collectives", lambda w, f: (w.row("bcast", f * T, "library", "world", nbytes=B, params="root=0"),
                                               w.row("bcast", T, "binomial", "world", nbytes=B, params="root=0"))),
    "coll-default": ("collectives", lambda w, f: (
        w.row("bcast", f * T, "library", "world", nbytes=B, params="algorithm=auto;root=0"),
        w.row("bcast", T, "library", "world", nbytes=B, params="algorithm=binomial;root=0"),
        w.row("bcast", 3 * T, "library", "world", nbytes=B, params="algorithm=smp;root=0"))),
    "monotony": ("pingpong", lambda w, f: (w.row("latency", f * T, "", "intra", nbytes=B, sent=B),
                                           w.row("latency", T, "", "intra", nbytes=2 * B, sent=2 * B))),
    "split": ("pingpong", lambda w, f: (w.row("latency", T, "", "intra", nbytes=B, sent=B),
                                        w.row("latency", 2 * f * T, "", "intra", nbytes=2 * B, sent=2 * B))),
    "rma-put": ("rma", lambda w, f: (w.row("put-latency", f * T, "fence", "create", nbytes=8, params="pairs=one"),
                                     w.row("put-latency", T, "sendrecv", "p2p", nbytes=8, params="pairs=one"))),
}
MOVED = {"non_periodic": "2 of 4 ranks", "periodic": "2 of 4 ranks"}
EXTRA = {"halocompare": {"halocompare": {"cart_reordered": MOVED}},
         "collectives": {"library_algorithms": {"library": "MPICH", "collectives": {
             "bcast": {"default": "auto", "algorithms": {"auto": 0, "binomial": 1, "smp": 2}}}}}}


def build(tmp: Path, name: str, f: float, extra: dict | None = None) -> Path:
    """A set of one run built so that A takes f × B for guideline name (its rows only)."""
    program, rows = BUILD[name]
    w = Writer("synth", program, P, 1, seed=len(name) + int(f * 100))
    rows(w, f)
    w.extra = extra if extra is not None else EXTRA.get(program, {})
    d = tmp / f"{name}-{f}"
    lib, env, *_ = LIBS["clusterB"]
    w.write(d, lib, env)
    return d


def results(path: Path, only: list[str] | None = None) -> list[Result]:
    runs, _, _ = load([str(path)])
    df, _ = prepared(runs)
    return check(usable(df), runs, only)


def outcomes(path: Path, name: str) -> dict[str, int]:
    (r,) = results(path, [name])
    assert name not in r.unchecked, r.unchecked
    return {o: r.count(o) for o in (HELD, VIOLATED, UNJUDGED)}


def test_the_table_covers_every_guideline() -> None:
    assert set(BUILD) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_violated_where_built_to_violate(name: str, tmp_path: Path) -> None:
    got = outcomes(build(tmp_path, name, 1.5), name)
    assert got[VIOLATED] >= 1 and got[HELD] == 0 and got[UNJUDGED] == 0, got


@pytest.mark.parametrize("name", NAMES)
def test_held_where_built_to_hold(name: str, tmp_path: Path) -> None:
    f = 1.0 if name == "halo-dup" else 0.7  # dup ≈ world: equal times hold, a faster dup does not
    got = outcomes(build(tmp_path, name, f), name)
    assert got[HELD] >= 1 and got[VIOLATED] == 0 and got[UNJUDGED] == 0, got


def test_approximately_equal_is_violated_both_ways(tmp_path: Path) -> None:
    assert outcomes(build(tmp_path, "halo-dup", 0.6), "halo-dup")[VIOLATED] == 1


def test_the_violation_names_guideline_sizes_ratio_and_interval(tmp_path: Path) -> None:
    (r,) = results(build(tmp_path, "coll-bcast", 1.5), ["coll-bcast"])
    (c,) = [c for c in r.checks if c.outcome == VIOLATED]
    assert re.match(r"MPI_Bcast is 1\.[45]\d× slower than", c.text)
    assert "slower than MPI_Scatter (1K B) + MPI_Allgather (1K B) at 4K B" in c.text
    assert "guideline coll-bcast (≤) violated" in c.text
    assert re.search(r"\[\d\.\d+, \d\.\d+\]", c.text), c.text


def test_composite_across_launches_sums_each_launch(tmp_path: Path) -> None:
    """Several launches: the right side is per launch the sum of the parts, judged paired over launches."""
    one = build(tmp_path, "coll-allreduce", 1.5)
    many = launch_set(one, tmp_path / "many", 4, shift=0.05, jitter=0.01, seed=3, series="s45")
    (r,) = results(many, ["coll-allreduce"])
    (c,) = r.checks
    assert c.outcome == VIOLATED and "paired over 4 launches" in c.text, c.text
    runs, _, _ = load([str(many)])
    df, _ = prepared(runs)
    red, bc = (df[df["test"] == t].iloc[0] for t in ("reduce", "bcast"))
    s = composite([red, bc])
    assert s["launch_ids"] == red["launch_ids"]
    assert s["launch_times"] == pytest.approx([x + y for x, y in zip(red["launch_times"], bc["launch_times"])])


def test_composite_in_one_launch_adds_the_interval_ends(tmp_path: Path) -> None:
    runs, _, _ = load([str(build(tmp_path, "coll-allreduce", 1.0))])
    df, _ = prepared(runs)
    red, bc = (df[df["test"] == t].iloc[0] for t in ("reduce", "bcast"))
    s = composite([red, bc], 2.0)
    for col in ("time_median_s", "time_ci_lo_s", "time_ci_hi_s"):
        assert s[col] == pytest.approx(2 * (red[col] + bc[col]))
    assert len(s["launch_times"]) == 1 and math.isnan(s["round_group"])


def test_within_the_noise_holds(tmp_path: Path) -> None:
    assert outcomes(build(tmp_path, "halo-isend", 1.0), "halo-isend") == {HELD: 1, VIOLATED: 0, UNJUDGED: 0}


def test_too_few_repetitions_is_not_judged(tmp_path: Path) -> None:
    d = build(tmp_path, "halo-isend", 1.5)
    p = next(d.glob("*.csv"))
    rows = list(csv.DictReader(p.open()))
    for r in rows:
        r["reps"] = "3"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    (r,) = results(d, ["halo-isend"])
    assert [c.outcome for c in r.checks] == [UNJUDGED] and r.checks[0].why == "not judged (3 repetitions)"


def test_cart_where_the_library_did_not_reorder_is_not_checked(tmp_path: Path) -> None:
    d = build(tmp_path, "halo-cart", 1.5, {"halocompare": {"cart_reordered": {"non_periodic": "0 of 4 ranks",
                                                                              "periodic": "0 of 4 ranks"}}})
    (r,) = results(d, ["halo-cart"])
    assert not r.checks and "did not reorder (MPI_Cart_create moved 0 of 4 ranks)" in r.unchecked["halo-cart"]
    (r,) = results(build(tmp_path / "x", "halo-cart", 1.5, {}), ["halo-cart"])
    assert "do not say whether MPI_Cart_create reordered" in r.unchecked["halo-cart"]


def test_simulated_cart_is_checked_against_its_world_row() -> None:
    """A simulated cart row names the platform's model of the mapping in its params (cart_model=fold): it is
    still its world row's configuration, so halo-cart checks the committed bgl-cop-64 run."""
    sim = ROOT / "bench" / "simulated" / "halocompare-bgl-cop-64-np64.csv"
    (r,) = results(sim, ["halo-cart"])
    assert "halo-cart" not in r.unchecked and len(r.checks) == 4, r.unchecked
    assert all(c.outcome == UNJUDGED for c in r.checks)  # one repetition: the simulated time is one figure


def test_what_cannot_be_checked_says_why(tmp_path: Path) -> None:
    (r,) = results(build(tmp_path, "monotony", 1.5))
    assert r.unchecked["halo-neighbor"] == "no halocompare halo rows"
    assert r.unchecked["coll-allreduce"] == "no collectives rows of the library's calls on world or dup"
    assert r.unchecked["rma-put"] == "no rma put-latency or put-bw rows"
    (r,) = results(build(tmp_path, "halo-persistent", 0.7), ["halo-neighbor", "halo-datatype"])
    assert r.unchecked == {"halo-neighbor": "no neighbor-alltoall rows",
                           "halo-datatype": "no --layout array rows (packing=...)"}
    (r,) = results(build(tmp_path, "coll-user", 0.7), ["coll-allreduce"])
    assert r.unchecked == {"coll-allreduce": "no MPI_Allreduce or MPI_Reduce rows"}


def test_cli_counts_violations_and_unchecked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = build(tmp_path, "halo-neighbor", 1.5)
    res = cli("guidelines", str(d), capsys=capsys)
    assert res.rc == 0, res.err
    assert "1 checked: 0 held, 1 violated, 0 not judged" in res.out
    assert re.search(r"halo-neighbor +1 checked: 0 held, 1 violated", res.out)
    assert re.search(r"halo-cart +not checked: no cart rows", res.out)
    assert re.search(r"\* neighbor-alltoall is 1\.[45]\d× slower", res.out)
    assert "than irecv-isend at 1K B, 4 neighbours" in res.out
    res = cli("guidelines", "--only", "halo-isend", str(d), capsys=capsys)
    assert res.rc == 0 and "halo-neighbor" not in res.out and "halo-isend" in res.out


def test_unknown_guideline_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = build(tmp_path, "halo-neighbor", 1.5)
    res = cli("guidelines", "--only", "halo-isend,nope", str(d), capsys=capsys)
    assert res.rc == 2 and res.out == ""
    assert res.err.count("\n") == 1 and "--only nope: not a guideline (one of halo-neighbor" in res.err
    for empty in ("", "halo-isend,"):
        res = cli("guidelines", "--only", empty, str(d), capsys=capsys)
        assert res.rc == 2 and res.out == "" and "--only (an empty name): not a guideline" in res.err


def test_findings_end_with_the_guidelines_per_program(capsys: pytest.CaptureFixture[str]) -> None:
    """findings: per machine and program one finding with the counts, then one per violation; the findings of
    files taken together are those of each file (the guidelines of one program read that program's rows)."""
    from helpers import FIXTURES

    res = cli("findings", str(FIXTURES / "clusterA"), capsys=capsys)
    assert res.rc == 0
    lines = res.out.splitlines()
    summary = [x for x in lines if ": Guidelines on " in x]
    assert [x.split(": Guidelines on ")[1].split(" ")[0] for x in summary] == [
        "collectives", "halocompare", "pingpong", "rma", "threads"]
    assert all(x.startswith("  * clusterA · Open MPI 4.1.4: ") for x in summary)
    counts = [re.search(r"(\d+) checked — (\d+) held, (\d+) violated, (\d+) not judged", x) for x in summary]
    assert all(m is not None and int(m[1]) == int(m[2]) + int(m[3]) + int(m[4]) for m in counts), summary
    violations = [x for x in lines if "violated, outside the noise" in x]
    assert sum(int(m[3]) for m in counts if m) == len(violations) > 0
    apart = []
    for f in ("halocompare-clusterA-np16.csv", "collectives-clusterA-np16.csv"):
        apart += [x for x in cli("findings", str(FIXTURES / "clusterA" / f), capsys=capsys).out.splitlines()
                  if "Guidelines on " in x or "guideline " in x]
    both = cli("findings", *(str(FIXTURES / "clusterA" / f) for f in ("halocompare-clusterA-np16.csv",
                                                                       "collectives-clusterA-np16.csv")),
               capsys=capsys).out.splitlines()
    assert sorted(apart) == sorted(x for x in both if "Guidelines on " in x or "guideline " in x) and apart


# --- end to end: one small real run of halocompare and collectives per library ------------------------------------

COLL_TESTS = "allreduce,reduce,bcast,scatter,allgather,gather,reduce_scatter_block,bcast-binomial"


@pytest.fixture(scope="module", params=["mpich", "openmpi"])
def real(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    lib = str(request.param)
    if not (bindir(lib) / "collectives").exists() or not shutil.which(f"mpiexec.{lib}"):
        pytest.skip(f"build/{lib}/bin not built")
    d = tmp_path_factory.mktemp(f"guidelines-{lib}")
    once = ("--quick", "--reps", "6", "--max-reps", "6")  # 6: the fewest repetitions that judge anything
    r = run_mpi(lib, 2, "halocompare", *once, "--methods", "irecv-send,irecv-isend,persistent,neighbor-alltoall",
                out=d / "halocompare.csv")
    assert r.returncode == 0, r.stderr
    r = run_mpi(lib, 2, "collectives", *once, "--tests", COLL_TESTS, out=d / "collectives.csv")
    assert r.returncode == 0, r.stderr
    return lib, d


def test_end_to_end(real: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    lib, d = real
    res = cli("guidelines", "-v", str(d), capsys=capsys)
    assert res.rc == 0, res.err
    name = {"mpich": "MPICH 4.0.2", "openmpi": "Open MPI 4.1.4"}[lib]
    assert f" · {name}: guidelines" in res.out.splitlines()[0]
    halo = pd.read_csv(d / "halocompare.csv")
    halo = halo[(halo["test"] == "halo") & halo["time_median_s"].notna()]
    pairs = halo[halo["method"] == "irecv-isend"].merge(halo[halo["method"] == "irecv-send"],
                                                       on=["comm", "neighbors", "periodic", "bytes"])
    assert len(pairs) > 0
    assert re.search(rf"halo-isend +{len(pairs)} checked", res.out), res.out
    coll = pd.read_csv(d / "collectives.csv")
    coll = coll[(coll["comm"] == "world") & (coll["method"] == "library") & coll["time_median_s"].notna()]
    sizes = [set(coll.loc[coll["test"] == t, "bytes"]) for t in ("allreduce", "reduce", "bcast")]
    assert re.search(rf"coll-allreduce +{len(sizes[0] & sizes[1] & sizes[2])} checked", res.out), res.out
    assert "halo-datatype        not checked: no --layout array rows" in res.out
    assert "rma-put              not checked: no rma put-latency or put-bw rows" in res.out
    head = re.search(r"(\d+) checked: (\d+) held, (\d+) violated, (\d+) not judged", res.out)
    assert head is not None
    total, held, violated, unjudged = (int(x) for x in head.groups())
    assert total == held + violated + unjudged and total > 0
    assert res.out.count("\n  * ") == total  # -v: every check on its own line
