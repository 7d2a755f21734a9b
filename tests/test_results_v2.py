"""Results schema 2 from the programs' side, under both MPI libraries: settings
that change a measurement are key columns (two --root runs with one label stay
two rows per size), and a failed verification is a result: with MPIMB_FAULT
on in one test of each program the run completes every other test, exits 1
with one FAILED line, and mpimb-report's validate, table, report (checked in
headless Chromium) and compare show that row as FAILED."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import ONCE, ROOT, check_schema, run_mpi

sys.path.insert(0, str(ROOT / "tests" / "analysis"))
from helpers import browser_check, cli, rendered

# program -> (ranks, options, MPIMB_FAULT, the failing rows' (test, method), rows the run writes)
FAULTS = {
    "halocompare": (2, ["--methods", "irecv-isend,sendrecv", "--comms", "world", "--neighbors", "4",
                        "--periodic", "no"], "halo/irecv-isend", {("halo", "irecv-isend")}, 3),
    "pingpong": (2, ["--tests", "latency,bw", "-m", "8:16"], "latency", {("latency", "")}, 4),
    "collectives": (2, ["--tests", "bcast,allreduce", "-m", "8:16"], "bcast/library", {("bcast", "library")}, 12),
    "rma": (2, ["--ops", "put", "--syncs", "fence,pscw", "--windows", "create", "--tests", "latency", "-m", "8:16"],
            "put-latency/fence", {("put-latency", "fence")}, 6),
    "threads": (2, ["--tests", "overhead-latency,latency-mt", "--pairing", "tags"], "latency-mt/threads-tags",
                {("latency-mt", "threads-tags")}, 3),
}


@pytest.fixture(scope="module", params=("openmpi", "mpich"))
def faulty(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, dict]:
    """Every program run once with its fault, under one library: (lib, directory, {program: Run})."""
    import shutil

    lib = str(request.param)
    if not shutil.which(f"mpiexec.{lib}"):
        pytest.skip(f"mpiexec.{lib} not installed")
    d = tmp_path_factory.mktemp(f"fault-{lib}")
    runs = {}
    for prog, (n, args, fault, _, _) in FAULTS.items():
        runs[prog] = run_mpi(lib, n, prog, "--quick", "--verify", "--label", f"fault-{lib}", *args,
                             out=d / f"{prog}.csv", env={"MPIMB_FAULT": fault}, timeout=600)
    return lib, d, runs


@pytest.mark.parametrize("program", list(FAULTS))
def test_a_failed_check_is_a_result(faulty: tuple[str, Path, dict], program: str) -> None:
    runs = faulty[2]
    r = runs[program]
    n, _, _, failing, nrows = FAULTS[program]
    assert r.returncode == 1, r.stderr
    closing = [ln for ln in r.stderr.splitlines() if "FAILED:" in ln]
    assert len(closing) == 1 and re.search(rf"{program}: FAILED: \d+ of {nrows} tests failed verification", closing[0])
    rows = check_schema(r, program, n)  # complete: every other test ran, the JSON counts every row
    assert len(rows) == nrows
    bad = [x for x in rows if x["verified"] == "no"]
    assert bad and {(x["test"], x["method"]) for x in bad} == failing
    assert all(x["time_median_s"] and x["stop_reason"] in ("ci", "max-reps", "budget") for x in bad), \
        "a failed row keeps its times"
    assert all(x["verified"] == "yes" for x in rows if x not in bad and not x["stop_reason"].startswith("n/a"))
    assert r.meta()["verification_failures"] == len(bad)


def test_reports_show_failed(faulty: tuple[str, Path, dict], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    lib, d, runs = faulty
    # the pages as headless Chromium shows them under one library; under the other their HTML (the pages
    # are built the same way, the failed rows differ)
    in_browser = lib == "openmpi"
    nbad = sum(1 for r in runs.values() for x in r.rows() if x["verified"] == "no")
    v = cli("validate", str(d), capsys=capsys)
    assert v.rc == 0 and v.out.startswith("ok: 5 run(s)") and f"FAILED verification: {nbad} result(s)" in v.out
    t = cli("table", str(d), capsys=capsys)
    assert t.rc == 0 and t.out.startswith(f"FAILED verification: {nbad} result(s)")
    assert t.out.count("FAILED") >= nbad + 1
    rep = tmp_path / "report.html"
    assert cli("report", str(d), "-o", str(rep), capsys=capsys).rc == 0
    page = rep.read_text()
    assert f"FAILED VERIFICATION: {nbad} result(s)" in page
    assert page.index('class="banner failed"') < page.index("<section"), "the banner opens the report"
    assert page.count('<td class="failed"') >= nbad
    for prog in FAULTS:
        assert f"<li>{prog} " in page  # each program's failed row is named in the banner
    if in_browser:
        ok, broken, std, _ = browser_check(rep, tmp_path, height=2000)
        assert broken == 0 and ok == page.count("<img ") and std > 0.05
    # compare against the published reference: FAILED cells, a banner, and the ordering table
    cmp = tmp_path / "cmp.html"
    c = cli("compare", str(d), str(ROOT / "reference" / "gropp-lusk"), "-o", str(cmp), capsys=capsys)
    assert c.rc == 0, c.err
    assert c.out.startswith(f"FAILED verification: {nbad} result(s)")
    html = rendered(cmp, tmp_path) if in_browser else cmp.read_text()
    assert f"FAILED VERIFICATION: {nbad} result(s)" in html and '<td class="failed"' in html
    assert "Cross-system: halo irecv-isend" in html and "Cray-XT4 [PUBLISHED]" in html
    assert json.loads((d / "halocompare.json").read_text())["verification_failures"] == 1


def test_root_same_and_rotate_stay_two_rows(lib: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: two runs with one label, --root same and --root rotate: two rows per size.  On 2
    ranks (rotate moves the root there too; MPICH busy-polls past 2), one repetition each."""
    for root in ("same", "rotate"):
        r = run_mpi(lib, 2, "collectives", "--quick", "--tests", "bcast", "--root", root, "--label", "one", "-m",
                    "8:64", *ONCE, out=tmp_path / f"bcast-{root}.csv",
                    timeout=600)
        assert r.returncode == 0, r.stderr
        params = {re.sub(r"(^|;)sync=[^;]*", "", x["params"]).lstrip(";") for x in r.rows()}
        assert params == {f"root={'0' if root == 'same' else 'rotate'};timing=osu"}
    t = cli("table", str(tmp_path), capsys=capsys)
    assert t.rc == 0 and "measured again" not in t.err
    body = t.out[t.out.index("collectives: time per call"):].split("\n\n")[0].splitlines()  # that table alone
    rows = [ln for ln in body if ln.startswith("bcast") and " library " in ln]
    settings = sorted(ln.split(" · ")[3].split()[0] for ln in rows)  # test · method · comm · settings
    assert [ln.split(" · ")[:3] for ln in rows] == [["bcast", "library", "world"]] * 2
    assert settings == ["root=0", "root=rotate"], rows
    header = body[1].split()
    assert header[-4:] == ["8", "16", "32", "64"]
    for ln in rows:  # a value for every size in both rows
        assert all(re.fullmatch(r"[\d.]+", c) for c in ln.split()[-4:]), ln
    assert re.search(r"settings \(params\): (sync=[a-z|]+, )?timing=osu", t.out)
