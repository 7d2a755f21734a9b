"""mpimb-report on real output: every program that is built runs with --quick
(Open MPI; halocompare also under MPICH) and its results go through every subcommand.
halocompare runs whole (its findings are checked against its CSV); the other programs
run a few of their tests (SELECT), enough for each subcommand's output about them:
every kind of plot and table is checked on the fixture sets (test_report_fixtures.py),
and each more plot here would only cost time, once in plot and again in report."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import bindir, run_mpi
from helpers import browser_check, cli

PROGRAMS = ("halocompare", "pingpong", "collectives", "rma", "threads")
# the tests each other program runs: pingpong latency feeds the model; one plot or two each
SELECT = {"pingpong": ["--tests", "latency,bw"], "collectives": ["--tests", "bcast,allreduce"],
          "rma": ["--ops", "put", "--tests", "latency"], "threads": ["--tests", "overhead-latency,latency-mt"]}


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Runs what is built; returns {'ompi': dir, 'mpich': dir} (a set may hold only halocompare)."""
    if not (bindir("openmpi") / "halocompare").exists() or not shutil.which("mpiexec.openmpi"):
        pytest.skip("build/openmpi/bin/halocompare not built")
    base = tmp_path_factory.mktemp("real")
    sets = {"ompi": base / "ompi", "mpich": base / "mpich"}
    for d in sets.values():
        d.mkdir()
    # 6 repetitions: the fewest that judge anything (below, findings say "not judged")
    r = run_mpi("openmpi", 4, "halocompare", "--quick", "--reps", "6", "--max-reps", "6", "--label", "ompi",
                out=sets["ompi"] / "halocompare-np4.csv")
    assert r.returncode == 0, r.stderr
    r = run_mpi("openmpi", 2, "halocompare", "--quick", "--label", "ompi", out=sets["ompi"] / "halocompare-np2.csv")
    assert r.returncode == 0, r.stderr
    for prog in PROGRAMS[1:]:
        if (bindir("openmpi") / prog).exists():
            out = sets["ompi"] / f"{prog}.csv"
            r = run_mpi("openmpi", 2, prog, "--quick", "--label", "ompi", *SELECT[prog], out=out)
            if r.returncode != 0:  # another program's own failure is its tests' business
                out.unlink(missing_ok=True)
                out.with_suffix(".json").unlink(missing_ok=True)
    if (bindir("mpich") / "halocompare").exists() and shutil.which("mpiexec.mpich"):
        r = run_mpi("mpich", 2, "halocompare", "--quick", "--label", "mpich", out=sets["mpich"] / "halocompare.csv")
        assert r.returncode == 0, r.stderr
    else:
        shutil.rmtree(sets["mpich"])
    return sets


def programs(d: Path) -> set[str]:
    return {p.stem.split("-")[0] for p in d.glob("*.csv")}


def test_validate(real: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for d in real.values():
        if d.exists():
            r = cli("validate", str(d), capsys=capsys)
            assert r.rc == 0 and r.out.startswith("ok: "), r.out + r.err


def test_table(real: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    d = real["ompi"]
    r = cli("table", str(d), capsys=capsys)
    assert r.rc == 0, r.err
    assert "Non-periodic mesh, 16000 B per neighbour: MB/s per process — ompi · Open MPI" in r.out
    assert "· 4 ranks" in r.out and "· 2 ranks" in r.out
    found = programs(d)
    for prog, title in (("pingpong", "pingpong: latency"), ("collectives", "collectives: time per call"),
                        ("rma", "rma put-latency"), ("threads", "threads ")):
        if prog in found:
            assert title in r.out, prog
    for fmt in ("markdown", "latex", "html", "csv"):
        assert cli("table", str(d), "--format", fmt, "--stat", "min", capsys=capsys).rc == 0


def test_plot(real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plots"
    r = cli("plot", str(real["ompi"]), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    names = {p.name for p in out.iterdir()}
    assert "ompi-halocompare-np4-halo-periodic-16000.png" in names
    assert "ompi-halocompare-np4-halo-periodic-16000.svg" in names
    assert "ompi-halocompare-halo-scaling.png" in names  # np2 and np4
    scaling = (out / "ompi-halocompare-halo-scaling.svg").read_text()
    assert "irecv-isend" in scaling and "sendrecv" in scaling, "a line per configuration at both sizes"
    if "pingpong" in programs(real["ompi"]):
        assert "ompi-pingpong-np2-latency.png" in names


def test_report_in_browser(real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    r = cli("report", str(real["ompi"]), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    page = out.read_text()
    n_img = page.count("<img ")
    assert n_img >= 4
    for prog in programs(real["ompi"]):
        assert f'<section id="{prog}">' in page
    ok, bad, std, inked = browser_check(out, tmp_path, height=3000)
    assert (ok, bad) == (n_img, 0), "every embedded image decodes in the browser"
    assert std > 0.05 and inked > 0.05, f"screenshot is blank (std {std:.3f}, inked {inked:.3f})"


def test_compare_openmpi_mpich(real: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not real["mpich"].exists():
        pytest.skip("MPICH halocompare not built")
    out = tmp_path / "cmp.html"
    r = cli("compare", str(real["ompi"]), str(real["mpich"]), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    md = out.with_suffix(".md").read_text()
    assert "# mpimb comparison: ompi vs mpich" in md
    assert re.search(r"mpich vs ompi: over \d+ common configurations", md)  # the np2 halo rows
    assert "| MPI library **(differs)** | Open MPI" in md
    page = out.read_text()
    assert "halocompare halo: values side by side, and time ratio to ompi" in page
    ok, bad, std, _ = browser_check(out, tmp_path)
    assert bad == 0 and ok == page.count("<img ") and std > 0.05


def test_model(real: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    d = real["ompi"]
    if "pingpong" in programs(d):
        r = cli("model", str(d), capsys=capsys)
        assert r.rc == 0, r.err
        assert re.search(r"ompi · Open MPI \S+ · intra +\d", r.out)
    else:
        r = cli("model", str(d), "--alpha", "0.5", "--bandwidth", "10000", capsys=capsys)
        assert r.rc == 0, r.err
    assert "Halo exchange, ompi, 4 ranks, comm world: measured / predicted" in r.out


VERDICT = (r"([\d.]+)× faster than the (worst, |runner-up )(\S+) at ([\d.]+) MB/s — outside the noise in this launch "
           r"\((paired, \d+ rounds|95 % CIs of the medians): time ([\d.]+)× \[([\d.]+), ([\d.]+)\]\)")
HALO = re.compile(r"^Halo (\d)-nbr (non-periodic|periodic), 16000 B, (\w+): (\S+) is the best method at ([\d.]+) MB/s, "
                  + VERDICT)
ORDER = re.compile(r"^Rank ordering, halo (\d)-nbr (non-periodic|periodic), 16000 B with (\S+): (\w+) is the best "
                   r"communicator at ([\d.]+) MB/s, " + VERDICT)


def test_report_opens_with_findings_that_match_the_csv(real: dict[str, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A default-shaped halocompare run (every method, communicator and stencil; --quick): the report's
    first section is the findings, and the numbers in them are the CSV's."""
    import html as html_mod

    import pandas as pd
    from mpimb.judge import OVERSUBSCRIBED
    from mpimb.launches import MARGIN
    from mpimb.render import fmt

    csv_path = real["ompi"] / "halocompare-np4.csv"
    out = tmp_path / "r.html"
    assert cli("report", str(csv_path), "-o", str(out), capsys=capsys).rc == 0
    page = out.read_text()
    assert page.index('<section id="findings">') < page.index("<section>"), "findings come first"
    items = [html_mod.unescape(x) for x in re.findall(r"<li>(.*?)</li>", page[page.index('id="findings"'):
                                                                               page.index("<section>")])]
    assert len(items) >= 3
    rows = pd.read_csv(csv_path, keep_default_na=False)
    # measured rows only (an n/a row's empty mbps made the column text when read)
    halo = rows[(rows["test"] == "halo") & (rows["stop_reason"].isin(["ci", "max-reps", "budget"]))]
    halo = halo.astype({"mbps": float})

    def row(n: str, per: str, comm: str, method: str) -> pd.Series:
        r = halo[(halo["neighbors"] == int(n)) & (halo["periodic"] == (per == "periodic")) &
                 (halo["comm"] == comm) & (halo["method"] == method)]
        assert len(r) == 1, (n, per, comm, method)
        return r.iloc[0]

    checked = 0
    for s in items:
        s = s.removeprefix(OVERSUBSCRIBED)  # 4 ranks on this 2-core machine: every finding is marked
        m, o = HALO.match(s), ORDER.match(s)
        if m:
            n, per, comm, best, vb, factor, which, other, vo, _, t, lo, hi = m.groups()
            g = halo[(halo["neighbors"] == int(n)) & (halo["periodic"] == (per == "periodic")) & (halo["comm"] == comm)]
            col = "method"
        elif o:
            n, per, method, best, vb, factor, which, other, vo, _, t, lo, hi = o.groups()
            g = halo[(halo["neighbors"] == int(n)) & (halo["periodic"] == (per == "periodic")) &
                     (halo["method"] == method)]
            col = "comm"
        else:
            continue
        ranked = g.sort_values("mbps", ascending=False, kind="stable")
        a = ranked.iloc[0]
        b = ranked.iloc[-1] if which == "worst, " else ranked.iloc[1]  # best against the runner-up where named
        assert (a[col], b[col]) == (best, other), s
        assert (vb, vo) == (fmt(a["mbps"]), fmt(b["mbps"]))
        # the factor stated is the estimate the interval is about (time ratio other / best), and the interval
        # lies outside 1 +- MARGIN: the one rule
        assert factor == f"{float(t):.2f}", s
        assert float(lo) > 1 + MARGIN or float(hi) < 1 - MARGIN, s
        checked += 1
    noise = [s for s in items if "within the noise" in s]
    assert checked + len(noise) >= 3, items
    t = cli("table", str(csv_path), capsys=capsys)
    assert t.out.startswith("Findings — ompi · Open MPI")
