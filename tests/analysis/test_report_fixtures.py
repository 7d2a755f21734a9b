"""mpimb-report on the fixture result sets (two labels, every program, a simulated run)."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, browser_check, cli, cli_proc, copy_fixture, launch_set

A = str(FIXTURES / "clusterA")
V1 = str(FIXTURES / "v1" / "clusterA")
B = str(FIXTURES / "clusterB")
SIM = str(FIXTURES / "sim")


def test_fixtures_follow_the_programs_schema() -> None:
    """The fixtures are schema-2 files, valid against meta.schema.json; fixtures/v1 keeps a schema-1 set."""
    import jsonschema
    from mpimb.schema import columns, document, previous_columns

    for p in FIXTURES.rglob("*.csv"):
        v1 = FIXTURES / "v1" in p.parents
        with open(p, newline="") as f:
            assert next(csv.reader(f)) == (previous_columns(1) if v1 else columns()), p
        meta = json.loads(p.with_suffix(".json").read_text())
        assert meta["schema_version"] == (1 if v1 else 2)
        if not v1:
            jsonschema.validate(meta, document("meta"))
    labels = {json.loads(p.read_text())["label"] for p in FIXTURES.rglob("*.json")}
    assert {"clusterA", "clusterB", "equal"} <= labels


def test_validate_ok(capsys: pytest.CaptureFixture[str]) -> None:
    r = cli("validate", A, B, SIM, capsys=capsys)
    assert r.rc == 0, r.out + r.err
    assert re.match(r"ok: 14 run\(s\), \d+ row\(s\)\n$", r.out)


def test_schema_1_still_reads(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A schema-1 set validates, tables and compares against a schema-2 set; a schema-1 row with
    stop_reason 'verification failed' and no times is a FAILED result, not an error."""
    assert cli("validate", V1, capsys=capsys).out.startswith("ok: 7 run(s)")
    t = cli("table", V1, capsys=capsys)
    assert t.rc == 0 and "Non-periodic mesh, 16000 B per neighbour" in t.out
    # every row paired; one overlaid plot (the plots are not what this checks: test_compare_two_labels)
    c = cli("compare", V1, A, "-o", str(tmp_path / "c.html"), "--max-plots", "1", capsys=capsys)
    assert c.rc == 0, c.err
    m = re.search(r"over (\d+) common configurations", (tmp_path / "c.md").read_text())
    assert m and int(m.group(1)) > 100  # schema-1 rows pair with schema-2 rows where params are empty
    d = copy_fixture(tmp_path, "v1/clusterA") / "v1/clusterA"
    f = d / "pingpong-clusterA-np4.csv"
    lines = f.read_text().splitlines(keepends=True)
    head = lines[0].rstrip("\n").split(",")
    cells = lines[2].rstrip("\n").split(",")
    for col in head:
        if col.startswith("time_") or col in ("mbps", "iters", "reps"):
            cells[head.index(col)] = ""
    cells[head.index("stop_reason")] = "verification failed"
    cells[head.index("verified")] = "no"
    lines[2] = ",".join(cells) + "\n"
    f.write_text("".join(lines))
    v = cli("validate", str(f), capsys=capsys)
    assert v.rc == 0 and "FAILED verification: 1 result(s)" in v.out and "pingpong pingping intra 1 B" in v.out
    t = cli("table", str(f), capsys=capsys)
    assert t.rc == 0 and t.out.startswith("FAILED verification: 1 result(s)")
    one_byte = next(ln for ln in t.out.splitlines() if ln.startswith("1 "))
    assert one_byte.split()[2] == "FAILED"  # columns: latency intra, pingping intra, ...


def test_table_halocompare_has_the_talk_shape(capsys: pytest.CaptureFixture[str]) -> None:
    r = cli("table", str(FIXTURES / "clusterA" / "halocompare-clusterA-np16.csv"), capsys=capsys)
    assert r.rc == 0, r.err
    blocks = r.out.split("\n\n")
    assert blocks[0].startswith("Findings — clusterA · Open MPI 4.1.4")
    assert blocks[1].startswith("Non-periodic mesh, 16000 B per neighbour: MB/s per process — clusterA")
    assert blocks[2].startswith("Non-periodic mesh, one-sided and neighbourhood collectives")
    assert blocks[3].startswith("Periodic mesh")
    lines = blocks[1].splitlines()
    assert "4 neighbours" in lines[1] and "8 neighbours" in lines[1]
    assert lines[2].split()[:4] == ["comm", "irecv-send", "irecv-isend", "phased"]
    comms = [ln.split()[0] for ln in lines[4:10]]
    assert comms == ["world", "dup", "evenodd", "cart", "node", "random"]
    assert "n/a" in blocks[2] and "n/a: needs a cart communicator" in blocks[2]
    assert "settings (params): assert=none, seed=1, win=allocate" in blocks[2]
    assert "One sender" in r.out
    assert max(len(ln) for ln in r.out.splitlines()) <= 120


def test_table_every_program_and_format(capsys: pytest.CaptureFixture[str]) -> None:
    text = cli("table", A, capsys=capsys).out
    for title in ("collectives: time per call", "Non-periodic mesh", "pingpong: latency", "allpairs-latency, 8 B",
                  "rma put-latency", "RMA / send-recv", "threads overhead-latency", "threads bw-mt"):
        assert title in text, title
    md = cli("table", A, "--format", "markdown", capsys=capsys)
    assert md.rc == 0 and "| comm |" in md.out and "|:---|" in md.out
    tex = cli("table", A, "--format", "latex", capsys=capsys)
    assert tex.rc == 0 and "\\begin{tabular}" in tex.out and "\\multicolumn" in tex.out
    h = cli("table", A, "--format", "html", capsys=capsys)
    assert h.rc == 0 and h.out.startswith("<!DOCTYPE html>") and "<table" in h.out
    c = cli("table", A, "--format", "csv", capsys=capsys)
    rows = list(csv.reader(c.out.splitlines()))
    assert rows[0][0].startswith("# ") and len(rows) > 50


def test_table_stat_min_differs_from_median(capsys: pytest.CaptureFixture[str]) -> None:
    f = str(FIXTURES / "clusterA" / "pingpong-clusterA-np4.csv")
    med = cli("table", f, capsys=capsys).out
    mn = cli("table", f, "--stat", "min", capsys=capsys).out
    assert med != mn
    # min time <= median time: the 1-byte intra latency shrinks
    def first_latency(s: str) -> float:
        line = next(ln for ln in s.splitlines() if ln.startswith("1 "))
        return float(line.split()[1])

    assert first_latency(mn) < first_latency(med)


def test_plot_every_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plots"
    # a second label beside clusterA's: fixtures/equal, one figure (clusterB's pingpong drew nine)
    r = cli("plot", A, str(FIXTURES / "equal" / "halocompare-equal-np4.csv"), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    names = {p.name for p in out.iterdir()}
    for want in ("clusterA-pingpong-np4-latency", "clusterA-halocompare-np16-halo-periodic-16000",
                 "clusterA-pingpong-np4-allpairs-latency-8-heatmap", "clusterA-rma-np2-put-latency-ratio",
                 "clusterA-threads-overhead-latency-levels", "clusterA-collectives-np16-library",
                 "clusterA-collectives-np16-bcast", "clusterA-halocompare-halo-scaling",
                 "equal-halocompare-np4-halo-non-periodic-16000"):
        assert f"{want}.png" in names and f"{want}.svg" in names, want
    png = (out / "clusterA-pingpong-np4-latency.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    scaling = (out / "clusterA-halocompare-halo-scaling.svg").read_text()
    assert "irecv-isend" in scaling  # np16 (2×8) and np64 (8×8): a line per configuration
    svg = (out / "clusterA-pingpong-np4-latency.svg").read_text()
    assert "message size [bytes]" in svg and "clusterA · Open MPI 4.1.4 · 4 ranks" in svg


def test_simulated_is_labelled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A simulated set is labelled in tables, plots and reports; a report mixing it with a measured run has
    the banner, a measured run's alone has none (the measured run: fixtures/equal, the cheapest to plot)."""
    real = str(FIXTURES / "equal" / "halocompare-equal-np4.csv")
    t = cli("table", SIM, capsys=capsys)
    assert "[SIMULATED]" in t.out
    cli("plot", SIM, "-o", str(tmp_path / "p"), capsys=capsys)
    svg = next((tmp_path / "p").glob("*.svg")).read_text()
    assert "SIMULATED" in svg
    r = cli("report", SIM, real, "-o", str(tmp_path / "r.html"), capsys=capsys)
    assert r.rc == 0
    page = (tmp_path / "r.html").read_text()
    assert 'class="banner sim"' in page and "SIMULATED RESULTS (bgl-sim)" in page
    # the banner names the platform model a simulated run rests on (its JSON's platform.name)
    d = tmp_path / "named"
    shutil.copytree(SIM, d)
    for j in d.glob("*.json"):
        j.write_text(json.dumps({**json.loads(j.read_text()), "platform": {"name": "torus-bgl-64"}}))
    assert cli("report", str(d), "-o", str(tmp_path / "n.html"), capsys=capsys).rc == 0
    assert "SIMULATED RESULTS (bgl-sim): times come from a SimGrid SMPI model of a platform (torus-bgl-64: " in \
        html.unescape((tmp_path / "n.html").read_text())
    assert cli("report", real, "-o", str(tmp_path / "a.html"), capsys=capsys).rc == 0
    assert "banner sim" not in (tmp_path / "a.html").read_text()


def test_report_is_self_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    r = cli("report", A, "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    page = out.read_text()
    assert page.count('src="data:image/png;base64,') >= 20
    assert not re.search(r'(src|href)="(https?:)?//', page), "no network references"
    for section in ("collectives", "halocompare", "pingpong", "rma", "threads", "Run metadata"):
        assert f">{section}<" in page
    assert "Open MPI 4.1.4" in page and "OMPI_MCA_btl" in page


def test_compare_two_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """compare A B: metadata side by side, the summary, ratio tables, overlaid plots, the ratios CSV; and the
    page in headless Chromium: every image decodes, the screenshot is not blank."""
    out = tmp_path / "cmp" / "report.html"
    ratios = out.parent / "ratios.csv"
    # three launches a side (a verdict rests on launches); 4 overlaid plots (of the default 12): the page must
    # embed at least 4
    a = launch_set(Path(A), tmp_path / "clusterA", 3, shift=0.01, seed=1)
    b = launch_set(Path(B), tmp_path / "clusterB", 3, shift=0.01, seed=2)
    r = cli("compare", str(a), str(b), "-o", str(out), "--csv", str(ratios), "--max-plots", "4", capsys=capsys)
    assert r.rc == 0, r.err
    page = out.read_text()
    md = out.with_suffix(".md").read_text()
    assert ratios.exists()
    # metadata side by side, differences marked
    assert "Open MPI 4.1.4" in page and "MPICH 4.0.2" in page and 'class="diff"' in page
    assert "| MPI library **(differs)** | Open MPI 4.1.4 | MPICH 4.0.2 |" in md
    # summary written automatically, with wins and losses (B is faster, except RMA fence)
    assert "clusterB vs clusterA: over" in md and "Win:" in md and "Loss:" in md
    assert re.search(r"Loss: rma \S+ fence", md)
    # ratio tables with CI and significance marks
    assert "% CI" in md and "↓" in md and "↑" in md and 'class="win"' in page and 'class="loss"' in page
    # overlaid plots embedded, and the Markdown's plots next to it
    assert page.count("data:image/png;base64,") >= 4
    assert (out.parent / "report-plots").is_dir() and "](report-plots/" in md
    import pandas as pd

    w = pd.read_csv(ratios)
    row = w[(w["program"] == "pingpong") & (w["test"] == "latency") & (w["comm"] == "inter") & (w["bytes"] == 1)]
    assert len(row) == 1
    # clusterB's alpha is 0.9 µs against 1.2 µs
    assert 0.70 < float(row["ratio@clusterB"].iloc[0]) < 0.80
    assert bool(row["sig@clusterB"].iloc[0])
    lo, hi = float(row["rlo@clusterB"].iloc[0]), float(row["rhi@clusterB"].iloc[0])
    assert lo <= float(row["ratio@clusterB"].iloc[0]) <= hi
    # in the browser
    n_img = page.count("<img ")
    ok, bad, std, inked = browser_check(out, tmp_path)
    assert (ok, bad) == (n_img, 0)
    assert std > 0.05 and inked > 0.05, f"screenshot is blank (std {std:.3f}, inked {inked:.3f})"


def test_compare_three_sets_and_same_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three sets, the first and third with one label: told apart by their library and position (one
    program's runs each: the labels are the sets', whatever they hold)."""
    out = tmp_path / "c.html"
    pa, pb = f"{A}/pingpong-clusterA-np4.csv", f"{B}/pingpong-clusterB-np4.csv"
    r = cli("compare", pa, pb, pa, "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    md = out.with_suffix(".md").read_text()
    assert "comparison: clusterA (Open MPI 4.1.4) #1 vs clusterB vs clusterA (Open MPI 4.1.4) #3" in md


def test_compare_needs_two_sets(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r = cli("compare", A, "-o", str(tmp_path / "x.html"), capsys=capsys)
    assert r.rc == 2 and len(r.err.strip().splitlines()) == 1 and "at least two" in r.err
    assert not list(tmp_path.iterdir())


def test_model_recovers_hockney_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    r = cli("model", A, capsys=capsys)
    assert r.rc == 0, r.err
    inter = next(ln for ln in r.out.splitlines() if ln.startswith("clusterA · Open MPI 4.1.4 · inter"))
    alpha, beta = float(inter.split()[7]), float(inter.split()[8])
    assert abs(alpha - 1.2) < 0.06  # µs, as generated
    assert abs(beta - 1e9 / 9e9) < 0.006  # ns/B
    assert "Halo exchange, clusterA, 16 ranks" in r.out and "Collectives, clusterA, 16 ranks" in r.out
    assert "bcast scatter-allgather" in r.out


def test_model_needs_pingpong_or_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    halo = str(FIXTURES / "clusterA" / "halocompare-clusterA-np16.csv")
    r = cli("model", halo, capsys=capsys)
    assert r.rc == 1 and len(r.err.strip().splitlines()) == 1 and "pingpong" in r.err
    r = cli("model", halo, "--alpha", "1.2", "--bandwidth", "9000", capsys=capsys)
    assert r.rc == 0 and "measured/predicted" in r.out
    r = cli("model", halo, "--alpha", "1.2", capsys=capsys)
    assert r.rc == 2 and len(r.err.strip().splitlines()) == 1


def test_incomplete_run_warns_and_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = copy_fixture(tmp_path, "clusterA") / "clusterA"
    j = d / "rma-clusterA-np2.json"
    meta = json.loads(j.read_text())
    meta["complete"] = False
    j.write_text(json.dumps(meta))
    lines = (d / "rma-clusterA-np2.csv").read_text().splitlines(keepends=True)
    (d / "rma-clusterA-np2.csv").write_text("".join(lines[:20]))  # killed after 19 rows
    r = cli("table", str(d / "rma-clusterA-np2.csv"), capsys=capsys)
    assert r.rc == 0
    assert "warning" in r.err and "incomplete" in r.err and "19 finished row(s)" in r.err
    assert "rma put-latency" in r.out
    v = cli("validate", str(d), capsys=capsys)
    assert v.rc == 0 and "incomplete" in v.err
    # the report of the incomplete run alone (the rest of the set would only add plots)
    rep = cli("report", str(d / "rma-clusterA-np2.csv"), "-o", str(tmp_path / "r.html"), capsys=capsys)
    assert rep.rc == 0 and "incomplete" in (tmp_path / "r.html").read_text()


def test_console_script_and_python_m(tmp_path: Path) -> None:
    r = cli_proc("validate", A)
    assert r.rc == 0 and r.out.startswith("ok:"), r.err
    p = cli_proc("--version", module=True)
    assert p.rc == 0 and p.out.startswith("mpimb-report ")
    bad = cli_proc("table", str(tmp_path / "nope"))
    assert bad.rc == 1 and bad.err.count("\n") == 1 and "no such file or directory" in bad.err
    assert "Traceback" not in bad.err


def test_fixture_generator_is_in_sync(tmp_path: Path) -> None:
    """The committed fixtures are what make_fixtures.py writes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES.parent / "make_fixtures.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.HERE = tmp_path
    mod.make("clusterA", 10)
    a = (tmp_path / "clusterA" / "pingpong-clusterA-np4.csv").read_text()
    assert a == (FIXTURES / "clusterA" / "pingpong-clusterA-np4.csv").read_text()
    shutil.rmtree(tmp_path / "clusterA")


def test_repeated_runs_are_launches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A set holding the same configuration twice (two runs) holds two launches of it: both are used (the
    geometric mean of their times), one row per configuration, no warning; two launches judge nothing."""
    d = tmp_path / "rep"
    d.mkdir()
    src = FIXTURES / "clusterA" / "pingpong-clusterA-np4"
    for k, start, scale in (("1", "2026-11-20T12:00:00Z", 1.0), ("2", "2026-11-21T08:00:00Z", 2.0)):
        lines = src.with_suffix(".csv").read_text().splitlines()
        head = lines[0].split(",")
        out = [lines[0]]
        for ln in lines[1:]:
            c = ln.split(",")
            for col in head:
                if col.startswith(("time_", "rank_")) and c[head.index(col)]:
                    c[head.index(col)] = f"{float(c[head.index(col)]) * scale:.9g}"
            c[head.index("run_id")] = f"rep-{k}"
            out.append(",".join(c))
        (d / f"run{k}.csv").write_text("\n".join(out) + "\n")
        meta = json.loads(src.with_suffix(".json").read_text())
        meta.update(run_id=f"rep-{k}", start_utc=start)
        (d / f"run{k}.json").write_text(json.dumps(meta))
    ratios = tmp_path / "r.csv"
    # against clusterB's pingpong run: the set d holds nothing else
    r = cli("compare", str(d), f"{B}/pingpong-clusterB-np4.csv", "-o", str(tmp_path / "c.html"), "--csv",
            str(ratios), capsys=capsys)
    assert r.rc == 0, r.err
    assert r.err == ""
    import pandas as pd

    w = pd.read_csv(ratios)
    pp = w[w["program"] == "pingpong"]
    assert not pp.duplicated(["test", "method", "comm", "bytes"]).any()
    assert len(pp) == 2 * 5 * 11 + 2 * 12
    # the geometric mean of the two launches' times (the second twice the first's)
    lat = pp[(pp["test"] == "latency") & (pp["comm"] == "inter") & (pp["bytes"] == 1)]
    first = pd.read_csv(src.with_suffix(".csv"))
    t1 = first[(first["test"] == "latency") & (first["comm"] == "inter") & (first["bytes"] == 1)]["time_median_s"]
    assert float(lat["t@clusterA"].iloc[0]) == pytest.approx(2 ** 0.5 * float(t1.iloc[0]), rel=1e-6)
    assert not pp["sig@clusterB"].any() and (pp["why@clusterB"].dropna().str.startswith("not judged")).all()
    t = cli("table", str(d), capsys=capsys)
    assert t.err == "" and t.out.count("pingpong: latency") == 1


def test_findings_call_an_equal_pair_noise(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Two methods with identical figures: the finding says 'within the noise'; the orderings, which differ
    well outside their CIs, are called."""
    r = cli("table", str(FIXTURES / "equal"), capsys=capsys)
    text = r.out.split("\n\n")[0].replace("\n  ", " ")
    assert ("Halo 4-nbr non-periodic, 16000 B, world: the methods are within the noise in this launch (95 % CIs of "
            "the medians: time 1.000× [0.945, 1.06]); irecv-isend 1605 MB/s to persistent 1605 MB/s.") in text
    assert re.search(r"Rank ordering, .* world is the best communicator at 1605 MB/s, 1\.90× faster than the worst, "
                     r"evenodd at 845\.0 MB/s — outside the noise in this launch", text)
    out = tmp_path / "r.html"
    assert cli("report", str(FIXTURES / "equal"), "-o", str(out), capsys=capsys).rc == 0
    assert "the methods are within the noise" in out.read_text()


def test_compare_with_the_published_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """compare SET reference/gropp-lusk prints the machines × orderings table (stdout, HTML, Markdown)."""
    from helpers import ROOT

    ref = ROOT / "reference" / "gropp-lusk"
    out = tmp_path / "c.html"
    # set A: clusterA's halocompare runs (np16, np64), as the machines x orderings table uses halo rows only
    a = tmp_path / "clusterA"
    a.mkdir()
    for run in ("halocompare-clusterA-np16", "np64/halocompare-clusterA-np64"):
        for ext in (".csv", ".json"):
            shutil.copy(f"{A}/{run}{ext}", a)
    halo = (str(a),)
    r = cli("compare", *halo, str(ref), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "Cross-system: halo irecv-isend, 4 neighbours, non-periodic — MB/s per process by rank ordering"
    assert lines[1].split() == ["machine", "ranks", "bytes/nbr", "world", "evenodd", "cart", "one-sender",
                                "one-sender/world"]
    end = next(i for i, ln in enumerate(lines) if ln.startswith("MB/s per process"))
    assert [ln.split()[0] for ln in lines[3:end]] == ["clusterA", "clusterA", "BGL-co-processor", "BGL-virtual-node",
                                                      "Cray-XT3", "Cray-XT4", "Cray-XT4-SN"]  # np16 and np64
    body = {ln.split()[0]: ln for ln in lines[3:5][:1] + lines[5:end]}
    # the published figures, as in the talk: XT4 world/evenodd/cart 153/126/137, one sender 1634
    assert body["Cray-XT4"].split()[-6:] == ["16000", "153.0", "126.0", "137.0", "1634", "10.68"]
    assert "[PUBLISHED]" in body["Cray-XT4"] and "†" in body["BGL-co-processor"]
    assert body["clusterA"].split()[1:3] == ["16", "(2×8)"]
    page, md = out.read_text(), out.with_suffix(".md").read_text()
    assert 'class="banner published"' in page and "PUBLISHED FIGURES" in page and "Machines × rank orderings" in md
    r = cli("compare", *halo, str(ref), "-o", str(out), "--neighbors", "8", "--periodic", "yes", "--method", "irecv-send",
            capsys=capsys)
    assert r.out.startswith("Cross-system: halo irecv-send, 8 neighbours, periodic")
    assert next(ln for ln in r.out.splitlines() if ln.startswith("Cray-XT3")).split()[-6:-2] == \
        ["16000", "97.00", "91.00", "111.0"]


def test_reference_set_is_published_and_consistent(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """reference/gropp-lusk validates as schema 2, says it is published, its times are bytes sent / rate,
    and convert.py rebuilds exactly the committed files from the figures they carry."""
    import importlib.util

    import pandas as pd
    from helpers import ROOT

    ref = ROOT / "reference" / "gropp-lusk"
    v = cli("validate", str(ref), capsys=capsys)
    assert v.rc == 0 and v.out.startswith("ok: 5 run(s), 134 row(s)")
    trans = []
    for p in sorted(ref.glob("*.csv")):
        meta = json.loads(p.with_suffix(".json").read_text())
        assert meta["source"] == "published" and "Gropp" in meta["reference"]["citation"]
        d = pd.read_csv(p, keep_default_na=False)
        assert set(d["stop_reason"]) == {"published"} and (d["time_ci_lo_s"] == "").all()
        sent = d["neighbors"] * d["bytes"]
        assert ((sent / d["time_median_s"] / 1e6 - d["mbps"]).abs() < 1e-6 * d["mbps"]).all()
        for r in d.itertuples():
            one = r.test == "one-sender"
            trans.append({"machine": meta["reference"]["machine"], "mode": meta["reference"]["mode"] or "",
                          "nprocs": "" if one else r.nprocs, "count_doubles": "" if one else r.bytes // 8,
                          "periodic": {"0": "no", "1": "yes", "": "unknown"}[str(r.periodic)],
                          "neighbors": r.neighbors, "comm": r.comm, "method": "one-sender" if one else r.method,
                          "mbps": r.mbps})
    # the committed transcription carries the same figures, and convert.py turns it into exactly these files
    src = ROOT / "reference" / "sources" / "gropp-lusk-halo-tables.csv"
    kept = pd.read_csv(src, keep_default_na=False, dtype=str)
    assert len(kept) == len(trans)
    assert sorted(kept["mbps"].astype(float)) == sorted(float(t["mbps"]) for t in trans)
    spec = importlib.util.spec_from_file_location("convert", ref / "convert.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "out").mkdir()
    mod.convert(src, tmp_path / "out")
    for p in ref.glob("halocompare-*"):
        assert (tmp_path / "out" / p.name).read_text() == p.read_text(), p.name
