"""The halo recommendation (mpimb.recommend; docs/report.md, "Recommendation"): synthetic result sets whose
answer is known — one method clearly fastest, two tied within the noise, one launch against several, each
packing best with another method, 2 ranks where no strided face crosses ranks — through recommend, its JSON
(validated against schema/recommendation.schema.json), report, compare and the hand packing finding; and one
real halocompare --quick --layout array run at -n 2 per MPI library."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import bindir, run_mpi
from helpers import FIXTURES, ROOT, cli, launch_set

SCHEMA = json.loads((ROOT / "analysis" / "mpimb" / "schema" / "recommendation.schema.json").read_text())
TEMPLATE = FIXTURES / "equal" / "halocompare-equal-np4.csv"


def halo_set(d: Path, rows: list[dict[str, Any]], nprocs: int = 4, label: str = "syn", ci: float = 0.005) -> Path:
    """A one-launch halocompare set in d: per row (method, time in µs; optional comm, neighbors, periodic, bytes,
    params), its median, a 95 % CI of ± ci around it and the MB/s it implies."""
    with open(TEMPLATE, newline="") as f:
        base = next(csv.DictReader(f))
    meta = json.loads(TEMPLATE.with_suffix(".json").read_text())
    out = []
    for r in rows:
        t = r["us"] * 1e-6
        nb, b = r.get("neighbors", 4), r.get("bytes", 16000)
        x = dict(base, run_id=f"{label}-run", method=r["method"], comm=r.get("comm", "world"), neighbors=str(nb),
                 periodic=str(r.get("periodic", 0)), bytes=str(b), nprocs=str(nprocs), ppn=str(nprocs),
                 params=r.get("params", ""), label=label, reps="15")
        for c, f in (("time_min_s", 1 - 2 * ci), ("time_ci_lo_s", 1 - ci), ("time_median_s", 1), ("time_mean_s", 1),
                     ("time_ci_hi_s", 1 + ci), ("time_p90_s", 1 + ci), ("time_p99_s", 1 + 2 * ci),
                     ("time_max_s", 1 + 2 * ci), ("rank_min_s", 0.9), ("rank_mean_s", 0.95)):
            x[c] = f"{t * f:.9g}"
        x["mbps"] = f"{nb * b / t / 1e6:.9g}"
        out.append(x)
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"halocompare-{label}-np{nprocs}.csv"
    with open(p, "w", newline="") as f:
        w = csv.DictWriter(f, list(out[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    meta.update(run_id=f"{label}-run", label=label, csv=p.name, rows=len(out), nprocs=nprocs, ppn=nprocs,
                ranks=[{"rank": i, "host": "n0", "cpus": str(i)} for i in range(nprocs)])
    p.with_suffix(".json").write_text(json.dumps(meta))
    return d


def recommend(path: Path, capsys: pytest.CaptureFixture[str], tmp: Path) -> tuple[str, dict[str, Any]]:
    """mpimb-report recommend path -o JSON: (its table, the JSON, checked against the schema)."""
    out = tmp / f"rec-{path.name}.json"
    r = cli("recommend", str(path), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    return r.out, doc


def ranges(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [x for m in doc["machines"] for x in m["recommendations"]]


def methods(pick: dict[str, Any]) -> list[str]:
    return [u["method"] for u in pick["use"]]


THREE = [{"method": "irecv-isend", "us": 10.0}, {"method": "persistent", "us": 15.0},
         {"method": "sendrecv", "us": 20.0}]


def test_one_method_clearly_wins_across_launches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [dict(r, bytes=b) for b in (8000, 16000) for r in THREE]
    s = launch_set(halo_set(tmp_path / "one", rows), tmp_path / "five", 5, shift=0.05, jitter=0.01, seed=1)
    text, doc = recommend(s, capsys, tmp_path)
    (r,) = ranges(doc)  # both sizes recommend the same: one range
    assert (r["bytes_min"], r["bytes_max"], len(r["sizes"])) == (8000, 16000, 2)
    assert methods(r["method"]) == ["irecv-isend"] and r["status"] == "judged"
    m = r["method"]["margin"]
    assert m["next"]["method"] == "persistent" and 1.4 < m["factor"] < 1.6 and m["lo"] > 1.01
    assert r["rests_on"]["launches"] == 5 and r["rests_on"]["basis"] == "across launches"
    assert "across 5 launches" in m["words"] or "paired over 5 launches" in m["words"]
    assert r["packing"] is None and r["strided_faces_crossed"] is None  # separate buffers: no faces to pack
    assert "irecv-isend" in text and "5 launches, across launches" in text


def test_two_tie_within_the_noise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"method": "irecv-isend", "us": 10.0}, {"method": "persistent", "us": 10.0},
            {"method": "sendrecv", "us": 20.0}]
    s = launch_set(halo_set(tmp_path / "one", rows), tmp_path / "five", 5, shift=0.05, jitter=0.02, seed=2)
    text, doc = recommend(s, capsys, tmp_path)
    (r,) = ranges(doc)
    assert sorted(methods(r["method"])) == ["irecv-isend", "persistent"]
    tied = r["method"]["use"][1]
    assert "within the noise" in tied["words"] and tied["lo"] < 1.01  # the judge's interval reaches the margin
    assert r["method"]["margin"]["next"]["method"] == "sendrecv" and r["method"]["margin"]["factor"] > 1.5
    assert " ≈ " in text


def test_a_size_range_keeps_what_every_size_recommends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Adjacent sizes are one range while some option is tied with the best at every one of them: 8K ties
    irecv-isend with persistent, 16K irecv-isend with sendrecv, so 8K-16K recommends irecv-isend alone; at 32K
    persistent wins clearly, a range of its own.  The range's margin is its weakest size's."""
    us = {8000: (10.0, 10.0, 20.0), 16000: (10.0, 25.0, 10.0), 32000: (20.0, 10.0, 20.0)}
    rows = [{"method": m, "us": t[i], "bytes": b} for b, t in us.items()
            for i, m in enumerate(("irecv-isend", "persistent", "sendrecv"))]
    s = launch_set(halo_set(tmp_path / "one", rows), tmp_path / "five", 5, shift=0.05, jitter=0.01, seed=6)
    text, doc = recommend(s, capsys, tmp_path)
    r1, r2 = ranges(doc)
    assert (r1["bytes_min"], r1["bytes_max"], r2["bytes_min"], r2["bytes_max"]) == (8000, 16000, 32000, 32000)
    assert [u["method"] for u in r1["use"]] == ["irecv-isend"]
    assert sorted(methods(r1["sizes"][0]["method"])) == ["irecv-isend", "persistent"]
    assert sorted(methods(r1["sizes"][1]["method"])) == ["irecv-isend", "sendrecv"]
    # the margins: 2× at 8K (sendrecv), 2.5× at 16K (persistent): the range states 8K's
    assert r1["weakest_bytes"] == 8000 and r1["method"]["margin"]["next"]["method"] == "sendrecv"
    assert [u["method"] for u in r2["use"]] == ["persistent"] and r2["method"]["margin"]["factor"] > 1.8
    assert "8000–16000" in text


def test_one_launch_against_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = halo_set(tmp_path / "one", THREE)
    _, d1 = recommend(one, capsys, tmp_path)
    (r1,) = ranges(d1)
    assert r1["rests_on"] == {**r1["rests_on"], "launches": 1, "basis": "this launch"}
    assert methods(r1["method"]) == ["irecv-isend"]
    assert "in this launch" in r1["method"]["margin"]["words"]
    t1 = cli("recommend", str(one), capsys=capsys).out
    assert "holds for this launch" in t1
    # two launches: fewer than the judge needs across launches — not judged, and said so
    two = launch_set(one, tmp_path / "two", 2, shift=0.05, jitter=0.01, seed=3)
    _, d2 = recommend(two, capsys, tmp_path)
    (r2,) = ranges(d2)
    assert r2["status"] == "not judged" and r2["method"]["margin"] is None
    assert all("not judged (2 launches" in x["words"] for x in r2["method"]["not_judged"])
    five = launch_set(one, tmp_path / "five", 5, shift=0.05, jitter=0.01, seed=3)
    _, d5 = recommend(five, capsys, tmp_path)
    (r5,) = ranges(d5)
    assert r5["rests_on"]["basis"] == "across launches" and r5["status"] == "judged"


def array_rows(pack_wins: bool) -> list[dict[str, Any]]:
    """--layout array rows where datatypes are fastest with alltoall, hand packing with irecv-isend (or the
    other way round): the method fastest with datatypes is not the one fastest with packing."""
    fast, slow = ("pack", "datatype") if pack_wins else ("datatype", "pack")
    rows = []
    for per in (0, 1):
        for m, us in (("irecv-isend", {fast: 8.0, slow: 20.0}), ("neighbor-alltoall", {fast: 30.0, slow: 10.0})):
            for pk, t in us.items():
                rows.append({"method": m, "us": t, "periodic": per, "params": f"dims=2;layout=array;packing={pk}"})
    return rows


@pytest.mark.parametrize("pack_wins", [True, False])
def test_packing_judged_across_methods(pack_wins: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each packing at its best across methods: the winner is found either way round (no side favoured by
    construction), with the method each packing is best with; neither hand packing nor datatypes is judged
    on the other's method."""
    s = halo_set(tmp_path / "arr", array_rows(pack_wins))
    _, doc = recommend(s, capsys, tmp_path)
    win, lose = ("pack", "datatype") if pack_wins else ("datatype", "pack")
    for r in ranges(doc):
        assert r["layout"] == "array" and r["strided_faces_crossed"] is True
        p = r["packing"]
        assert [u["packing"] for u in p["use"]] == [win] and p["margin"]["next"]["packing"] == lose
        assert p["use"][0]["method"] == "irecv-isend" and p["margin"]["next"]["method"] == "neighbor-alltoall"
        assert 1.2 < p["margin"]["factor"] < 1.3  # 10 µs against 8 µs: the two bests, not one method's pair
    f = cli("findings", str(s), capsys=capsys).out
    sent = [x for x in f.splitlines() if "Hand packing vs datatypes" in x]
    assert len(sent) == 2 and all("each packing at its best across methods" in x for x in sent)
    want = ("copy loops (pack) with irecv-isend" if pack_wins else "copy loops (pack) with neighbor-alltoall")
    assert all(want in x for x in sent)
    # method by method: pack wins with one method, datatypes with the other
    assert all("pack faster outside the noise with 1, datatypes with 1" in x for x in sent)
    assert not any("no strided face" in x for x in sent)  # 4 processes: a 2×2 grid, the columns cross ranks


def test_no_strided_face_crossed_at_two_ranks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mpimb.programs.halocompare import strided_faces_crossed

    s = halo_set(tmp_path / "arr2", array_rows(True), nprocs=2)
    text, doc = recommend(s, capsys, tmp_path)
    rs = ranges(doc)
    assert len(rs) == 2 and all(r["strided_faces_crossed"] is False for r in rs)
    assert "no strided face crossed ranks" in text
    f = cli("findings", str(s), capsys=capsys).out
    per = {("non-periodic" if "non-periodic" in x else "periodic"): x for x in f.splitlines()
           if "Hand packing vs datatypes" in x}
    assert "no strided face crossed ranks (a 2×1 grid: each strided face has no neighbour)" in per["non-periodic"]
    assert "each strided face wraps onto the process itself" in per["periodic"]
    # MPI_Dims_create's grids: a prime count is n × 1 (× 1); any other count has a second extent of 2 or more
    assert [n for n in range(1, 13) if strided_faces_crossed(n, 2)] == [4, 6, 8, 9, 10, 12]
    assert strided_faces_crossed(6, 3) and not strided_faces_crossed(7, 3)


def test_schema_rejects_what_it_should(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = recommend(halo_set(tmp_path / "one", THREE), capsys, tmp_path)
    r = ranges(doc)[0]
    for bad in ({**r, "use": []}, {**r, "layout": "tiles"}, {k: v for k, v in r.items() if k != "rests_on"},
                {**r, "method": {**r["method"], "margin": {**r["method"]["margin"], "factor": 0.5}}}):
        broken = {**doc, "machines": [{**doc["machines"][0], "recommendations": [bad]}]}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, SCHEMA)


def test_report_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = launch_set(halo_set(tmp_path / "a1", THREE, label="alpha"), tmp_path / "a", 3, jitter=0.01, seed=4)
    b_rows = [{"method": "irecv-isend", "us": 15.0}, {"method": "persistent", "us": 10.0},
              {"method": "sendrecv", "us": 20.0}]
    b = launch_set(halo_set(tmp_path / "b1", b_rows, label="beta"), tmp_path / "b", 3, jitter=0.01, seed=5)
    page = tmp_path / "r.html"
    assert cli("report", str(a), "-o", str(page), capsys=capsys).rc == 0
    html = page.read_text()
    assert '<section id="recommendation">' in html and 'href="#recommendation"' in html
    out = tmp_path / "c.html"
    r = cli("compare", str(a), str(b), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    md = out.with_suffix(".md").read_text()
    part = md[md.index("Recommendations side by side"):]
    row = next(x for x in part.splitlines() if x.startswith("| np4 "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["np4", "2-D 4-nbr non-periodic, buffers", "16000"]
    assert cells[3].startswith("irecv-isend · 1.5") and cells[4].startswith("persistent · 1.5")
    assert "Recommendations side by side" in out.read_text()


def test_nothing_to_recommend(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "pp"
    d.mkdir()
    for p in (FIXTURES / "clusterA").glob("pingpong-*"):
        shutil.copy(p, d)
    r = cli("recommend", str(d), "-o", str(tmp_path / "x.json"), capsys=capsys)
    assert r.rc == 1 and len(r.err.splitlines()) == 1 and "nothing to recommend" in r.err
    assert not (tmp_path / "x.json").exists()
    r = cli("recommend", str(d), "-o", str(tmp_path) + "/", capsys=capsys)  # a usage error: before any file is read
    assert r.rc == 2 and len(r.err.splitlines()) == 1 and "is a directory" in r.err


# ------------------------------------------------------------------ a real run per library

LIBS = ("mpich", "openmpi")
REAL = ("--quick", "--reps", "6", "--max-reps", "6", "--layout", "array", "--count", "64", "--comms", "world,dup",
        "--methods", "irecv-isend,persistent,neighbor-alltoall,sendrecv", "--neighbors", "4")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny halocompare --layout array at -n 2 per library that is built, shared by the module's tests."""
    base = tmp_path_factory.mktemp("recommend-real")
    out = {}
    for lib in LIBS:
        if not (bindir(lib) / "halocompare").exists() or not shutil.which(f"mpiexec.{lib}"):
            continue
        d = base / lib
        d.mkdir()
        r = run_mpi(lib, 2, "halocompare", *REAL, "--label", lib, out=d / "halocompare.csv")
        assert r.returncode == 0, r.stderr
        out[lib] = d
    return out


@pytest.mark.parametrize("lib", LIBS)
def test_real_run(lib: str, real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if lib not in real:
        pytest.skip(f"build/{lib}/bin/halocompare not built")
    text, doc = recommend(real[lib], capsys, tmp_path)
    rs = ranges(doc)
    assert {(r["neighbors"], r["periodic"]) for r in rs} == {(4, False), (4, True)}
    for r in rs:
        assert r["layout"] == "array" and r["rests_on"]["basis"] == "this launch"
        assert r["rests_on"]["nprocs"] == 2 and r["strided_faces_crossed"] is False
        assert r["packing"] is not None and {u["packing"] for u in r["packing"]["use"]} <= {"datatype", "pack",
                                                                                          "mpi-pack"}
        assert r["communicator"] is None and r["communicator_note"].startswith("any: at 2 processes")
        assert {u["method"] for u in r["method"]["use"]} <= {"irecv-isend", "persistent", "neighbor-alltoall",
                                                             "sendrecv"}
    assert "holds for this launch" in text and "no strided face crossed ranks" in text
    f = cli("findings", str(real[lib]), capsys=capsys).out
    assert f.count("no strided face crossed ranks") == 2


def test_the_communicator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Across launches, the communicators of the recommended method are ranked (world 1.3× faster than dup);
    inside one launch a persistent method's communicators are not (each has requests of its own speed)."""
    rows = [{"method": "irecv-isend", "us": 10.0}, {"method": "persistent", "us": 15.0},
            {"method": "irecv-isend", "us": 13.0, "comm": "dup"}, {"method": "persistent", "us": 15.0, "comm": "dup"}]
    s = launch_set(halo_set(tmp_path / "one", rows), tmp_path / "five", 5, shift=0.05, jitter=0.01, seed=7)
    text, doc = recommend(s, capsys, tmp_path)
    (r,) = ranges(doc)
    assert r["communicator_use"] == ["world"] and r["communicator_note"] is None
    c = r["communicator"]
    assert c["use"][0]["method"] == "irecv-isend" and c["margin"]["next"]["comm"] == "dup"
    assert 1.2 < c["margin"]["factor"] < 1.4
    assert "world (1.29× [" in text and "over dup, with irecv-isend)" in text
    own = [{"method": "persistent", "us": 10.0}, {"method": "irecv-isend", "us": 15.0},
           {"method": "persistent", "us": 12.0, "comm": "dup"}, {"method": "irecv-isend", "us": 15.0, "comm": "dup"}]
    _, d1 = recommend(halo_set(tmp_path / "own", own), capsys, tmp_path)
    (r1,) = ranges(d1)
    assert methods(r1["method"]) == ["persistent"] and r1["communicator"] is None
    assert r1["communicator_note"].startswith("not judged inside one launch")
