"""The ReFrame test library (integrations/reframe) on this machine through its
ready configuration (one partition per MPI library): every test passes with
both libraries, the performance variables in ReFrame's report are the values
of the CSV the same run wrote, a verification failure fails sanity, and
references set per system:partition in a site's subclass apply.  ReFrame
comes from the test environment (analysis/pyproject.toml, dev extras)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import LIBS, ONCE, ROOT, have
from mpimb.schema import parse_params

RFM_DIR = ROOT / "integrations" / "reframe"
CONFIG = RFM_DIR / "config" / "local.py"
CHECKS = RFM_DIR / "mpimb_checks.py"
# tiny runs: --quick, few sizes, one repetition, no warm-up, no clock synchronisation (the checks here are
# about ReFrame's view of a run, not its figures), and 2 tasks: halocompare and collectives default to 4, and
# MPICH's 4 busy-polling ranks on a 2-core machine cost 4x the CPU of 2 (every communicator of halocompare's
# "all" exists at 2 ranks)
QUICK = ["-S", "quick=y", "-S", "sizes=8:1K", "-S", "mpimb_threads.sizes=8:8", "-S", "num_tasks=2",
         "-S", "options=" + ",".join((*ONCE, "--sync", "barrier"))]
PROGRAMS = ("halocompare", "pingpong", "collectives", "rma", "threads")


def reframe() -> str:
    exe = ROOT / ".venv" / "bin" / "reframe"
    found = str(exe) if exe.exists() else shutil.which("reframe")
    if not found:
        pytest.skip("reframe is not installed (make venv installs it with the dev extras)")
    for lib in LIBS:
        if not shutil.which(f"mpiexec.{lib}") or not all(have(lib, p) for p in PROGRAMS):
            pytest.skip(f"build/{lib}/bin is not built or mpiexec.{lib} is missing")
    return found


def run_reframe(work: Path, *args: str, checks: Path = CHECKS, timeout: float = 1500) -> tuple[
        subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Runs ReFrame in work/ (its own prefix and report); returns the test cases."""
    work.mkdir(parents=True, exist_ok=True)
    report = work / "report.json"
    cmd = [reframe(), "-C", str(CONFIG), "-c", str(checks), "-r", "--prefix", str(work / "rfm"),
           "--report-file", str(report), "--exec-policy", "serial", "--nocolor", *QUICK, *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RFM_", "MPIMB_"))}
    env["HOME"] = str(work)  # ReFrame's results database under ~/.reframe: keep it here
    env["MPIMB_REPORT"] = "none"  # as for every launch of the tests (conftest.py): no findings step per job
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=work, env=env, check=False)
    assert report.exists(), p.stdout[-3000:] + p.stderr[-3000:]
    cases = [c for run in json.loads(report.read_text())["runs"] for c in run["testcases"]]
    return p, cases


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    return run_reframe(tmp_path_factory.mktemp("reframe"))


def test_every_test_passes_with_both_libraries(full_run: tuple[subprocess.CompletedProcess[str],
                                                               list[dict[str, Any]]]) -> None:
    p, cases = full_run
    assert p.returncode == 0, p.stdout[-5000:]
    assert {(c["partition"], c["environ"]) for c in cases} == {(lib, lib) for lib in LIBS}
    for lib in LIBS:
        names = sorted(c["display_name"] for c in cases if c["partition"] == lib)
        assert len(names) == 16 and {n.split()[0] for n in names} == {f"mpimb_{p}" for p in PROGRAMS}
    failed = [(c["display_name"], c["partition"], c["fail_reason"]) for c in cases if c["result"] != "pass"]
    assert not failed
    for c in cases:  # launched through the partition's launcher, with the environment's programs
        assert c["executable"] == str(ROOT / "build" / c["environ"] / "bin" / c["program"])
        assert c["perfvalues"], c["display_name"]


# ------------------------------------------------------------------ the CSV, read here on its own
def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["time_median_s"]]


def size(text: str) -> int:
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)):
        if text.endswith(unit):
            return int(text[: -len(unit)]) * mult
    raise ValueError(text)


def one(candidates: list[dict[str, str]], **key: str) -> dict[str, str]:
    found = [r for r in candidates if all(r[k] == v for k, v in key.items())]
    assert len(found) == 1, (key, found)
    return found[0]


def expected(program: str, outdir: Path) -> dict[str, tuple[float, str]]:
    """Every performance variable the run must report, from its CSV: name ->
    (value, unit)."""
    us = 1e6
    if program == "threads":
        single, multiple = rows(outdir / "single.csv"), rows(outdir / "multiple.csv")
        out = {}
        for s in single:
            m = one(multiple, test=s["test"], bytes=s["bytes"])
            window = float(parse_params(s["params"]).get("window", 1))
            name = f"{int(s['bytes'])}B" if int(s["bytes"]) < 1024 else f"{int(s['bytes']) // 1024}KiB"
            ts, tm = float(s["time_median_s"]) * us / window, float(m["time_median_s"]) * us / window
            out |= {f"single_{name}": (ts, "us"), f"multiple_{name}": (tm, "us"), f"overhead_{name}": (tm - ts, "us")}
        return out
    data = rows(outdir / "mpimb.csv")
    ends = {"8", "1024"}
    if program == "halocompare":
        return {f"{r['method']}_{r['comm']}": (float(r["mbps"]), "MB/s") for r in data}
    if program == "pingpong":
        return {f"{r['test']}_{'8B' if r['bytes'] == '8' else '1KiB'}_{r['comm']}":
                (float(r["time_median_s"]) * us, "us") if r["test"] in ("latency", "pingping")
                else (float(r["mbps"]), "MB/s") for r in data if r["bytes"] in ends}
    if program == "collectives":
        return {r["test"] + ("" if not r["bytes"] else "_8B" if r["bytes"] == "8" else "_1KiB"):
                (float(r["time_median_s"]) * us, "us") for r in data
                if r["bytes"] in ends | {""} and r["method"] == "library"}  # not the two-level forms
    assert program == "rma"
    return {f"{r['test']}_{r['comm']}_{'8B' if r['bytes'] == '8' else '1KiB'}":
            (float(r["time_median_s"]) * us, "us") if r["test"].endswith("-latency") else (float(r["mbps"]), "MB/s")
            for r in data if r["bytes"] in ends}


def test_performance_variables_are_the_csv_values(full_run: tuple[subprocess.CompletedProcess[str],
                                                                  list[dict[str, Any]]]) -> None:
    _, cases = full_run
    for c in cases:
        prefix = f"mpimb-local:{c['partition']}:"
        got = {k.removeprefix(prefix): v for k, v in c["perfvalues"].items()}
        want = expected(c["program"], Path(c["outputdir"]))
        assert set(got) == set(want), c["display_name"]
        for name, (value, unit) in want.items():
            assert got[name][0] == pytest.approx(value, rel=1e-9, abs=1e-12), (c["display_name"], name)
            assert got[name][4] == unit
        # halocompare: one variable per communicator of the run
        if c["program"] == "halocompare":
            assert {n.split("_")[1] for n in got} == {"world", "dup", "evenodd", "cart", "node", "random"}


def test_verification_failure_fails_sanity(tmp_path: Path) -> None:
    """MPIMB_FAULT makes the program's own check fail: verified=no in the CSV,
    exit 1, and ReFrame's sanity says so, under both libraries."""
    p, cases = run_reframe(tmp_path, "-n", "mpimb_halocompare%neighbors=4", "-S", "env_vars=MPIMB_FAULT:halo")
    assert p.returncode != 0
    assert len(cases) == 2
    for c in cases:
        assert c["result"] == "fail" and c["fail_phase"] == "sanity", c
        assert "failed verification" in c["fail_reason"], c["fail_reason"]
        verified = {r["verified"] for r in rows(Path(c["stagedir"]) / "mpimb.csv")}
        assert verified == {"no"}


SITE = '''
import os, sys
import reframe as rfm
sys.path.insert(0, {libdir!r})
from mpimb_reframe import pingpong_base


@rfm.simple_test
class site_pingpong(pingpong_base):
    kind = parameter(['latency'])
    # no latency is below a femtosecond: latency_8B_intra must fail its
    # reference on the openmpi partition; 1 KiB has no upper bound and passes
    reference = {{
        'mpimb-local:openmpi': {{
            'latency_8B_intra': (1e-9, None, 0.1, 'us'),
            'latency_1KiB_intra': (1e-9, None, None, 'us'),
        }},
    }}
'''


def test_references_per_partition_apply(tmp_path: Path) -> None:
    site = tmp_path / "site_checks.py"
    site.write_text(SITE.format(libdir=str(RFM_DIR)))
    _, cases = run_reframe(tmp_path / "run", checks=site)
    by_part = {c["partition"]: c for c in cases}
    assert set(by_part) == set(LIBS)
    assert by_part["mpich"]["result"] == "pass"  # no reference there
    ompi = by_part["openmpi"]
    assert ompi["result"] == "fail" and ompi["fail_phase"] == "performance", ompi
    perf = ompi["perfvalues"]
    assert perf["mpimb-local:openmpi:latency_8B_intra"][1:4] == [1e-9, None, 0.1]
    assert perf["mpimb-local:openmpi:latency_8B_intra"][5] == "fail"
    assert perf["mpimb-local:openmpi:latency_1KiB_intra"][5] == "pass"
