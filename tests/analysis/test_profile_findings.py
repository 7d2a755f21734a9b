"""mpimb-report profile opens with findings (judge.Finding, judge's rules): where the application's time
goes, the calls and sizes that lose most against the micro-benchmarks, and a warning where the
application and the benchmarks ran under different conditions (ranks per node, oversubscription, MPI
library).  The profile is a fixture written here in the profiler's format (docs/profile.md; the CSV and
metadata of make_fixtures.py), beside the committed clusterA / clusterB pingpong and collectives
fixtures: no MPI is launched."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import FIXTURES, browser_check, cli
from make_fixtures import COLUMNS, LIBS
from mpimb import judge

# call -> (family, {size bin: (calls over ranks, mean bytes)}, seconds per rank in the call); bin None: no size
CALLS: dict[str, tuple[str, dict[int | None, tuple[int, float]], float]] = {
    "MPI_Send": ("p2p", {8192: (16000, 10000.0), 16: (1600, 24.0)}, 2.0),
    "MPI_Wait": ("completion", {None: (17600, 0.0)}, 0.5),
    "MPI_Allreduce": ("collective", {8: (3200, 8.0)}, 0.3),
    "MPI_Barrier": ("collective", {None: (160, 0.0)}, 0.05),
    "MPI_Irecv": ("p2p-nonblocking", {8192: (16000, 10000.0), 16: (1600, 24.0)}, 0.02),
}
WALL = 4.0


def write_profile(d: Path, label: str = "clusterA", nprocs: int = 16, nnodes: int = 2, lib: str = "clusterA",
                  oversubscribed: bool | None = None) -> Path:
    """A profile of an application on nprocs ranks (nprocs // nnodes per node) as libmpimb-prof.so writes it."""
    d.mkdir(parents=True, exist_ok=True)
    stem = f"profile-{label}-np{nprocs}-20261120T120000Z"
    run_id = f"{label}-prof-1"
    rng = np.random.default_rng(3)
    rows = []

    def row(call: str, nbytes: int | None, calls: int, mean_bytes: float, seconds: float) -> dict[str, str]:
        per_rank = np.sort(seconds * rng.uniform(0.9, 1.1, nprocs))
        per_rank *= seconds / per_rank.mean()
        r = {c: "" for c in COLUMNS}
        r.update(run_id=run_id, program="profile", test=call, nprocs=str(nprocs), nnodes=str(nnodes),
                 ppn=str(nprocs // nnodes), threads="1", thread_level="single", label=label, stop_reason="finalize",
                 bytes="" if nbytes is None else str(nbytes), calls=str(calls),
                 total_bytes=f"{calls * mean_bytes:.0f}" if mean_bytes else "",
                 slowest_rank=str(int(np.argmax(per_rank))))
        p90, p99 = np.percentile(per_rank, [90, 99])
        r.update(time_min_s=f"{per_rank[0]:.9g}", time_median_s=f"{np.median(per_rank):.9g}",
                 time_mean_s=f"{per_rank.mean():.9g}", time_max_s=f"{per_rank[-1]:.9g}",
                 time_stddev_s=f"{per_rank.std(ddof=1):.9g}", time_ci_lo_s=f"{per_rank[0]:.9g}",
                 time_ci_hi_s=f"{per_rank[-1]:.9g}", time_p90_s=f"{p90:.9g}", time_p99_s=f"{p99:.9g}")
        return r

    for call, (_, bins, seconds) in CALLS.items():
        n = sum(c for c, _ in bins.values())
        nb = sum(c * b for c, b in bins.values())
        rows.append(row(call, None, n, nb / n, seconds))
        for b, (c, mb) in bins.items():
            if b is not None:
                rows.append(row(call, b, c, mb, seconds * c * mb / nb))
    with open(d / f"{stem}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    # every rank sends to its two ring neighbours
    with open(d / f"{stem}-matrix.csv", "w", newline="") as f:
        f.write("run_id,rank,peer,kind,messages,bytes\n")
        f.writelines(f"{run_id},{r},{peer},p2p,{17600 // nprocs // 2},{int(17600 * 9093.6) // nprocs // 2}\n"
                     for r in range(nprocs) for peer in ((r + 1) % nprocs, (r - 1) % nprocs))
    version, env, *_ = LIBS[lib]
    ppn = nprocs // nnodes
    hosts = [f"{label.lower()}n{k}" for k in range(nnodes)]
    meta: dict[str, object] = {
        "schema_version": 2, "run_id": run_id, "program": "profile", "label": label, "suite_version": "0.1.0",
        "git_commit": "0123456789ab", "command_line": ["/usr/bin/app", "-in", "input"],
        "start_utc": "2026-11-20T12:00:00Z", "end_utc": "2026-11-20T12:05:00Z", "complete": True,
        "simulated": False, "csv": f"{stem}.csv", "rows": len(rows),
        "mpi": {"library_version": version, "standard_version": "3.1", "thread_level_requested": "single",
                "thread_level_provided": "single"},
        "nprocs": nprocs, "nnodes": nnodes, "ppn": ppn, "hosts": hosts,
        "ranks": [{"rank": r, "host": hosts[r // ppn], "cpus": str(r % ppn)} for r in range(nprocs)],
        "topology": {"source": "hwloc 2.9.0", "packages": 2, "numa_nodes": 2, "cores": 64, "pus": 128},
        "compiler": {}, "options": {}, "environment": env,
        "profile": {"clock": "tsc", "seconds_per_tick": 3.3e-10, "sync": False, "check": False,
                    "matrix_csv": f"{stem}-matrix.csv", "families": {c: v[0] for c, v in CALLS.items()},
                    "wall_seconds": [WALL] * nprocs, "mpi_seconds": [sum(v[2] for v in CALLS.values())] * nprocs,
                    "sync_seconds": [0.0] * nprocs, "persistent_untracked": 0, "finalize_seconds": 0.01},
    }
    if oversubscribed is not None:
        meta["oversubscribed"] = oversubscribed
    (d / f"{stem}.json").write_text(json.dumps(meta, indent=2) + "\n")
    return d


def bench(tmp: Path, label: str = "clusterA") -> Path:
    """The committed pingpong (4 ranks, 2 per node) and collectives (16 ranks, 8 per node) fixtures."""
    d = tmp / f"bench-{label}"
    d.mkdir()
    for prog, n in (("pingpong", 4), ("collectives", 16)):
        for ext in (".csv", ".json"):
            shutil.copy(FIXTURES / label / f"{prog}-{label}-np{n}{ext}", d)
    return d


def findings_block(out: str) -> list[str]:
    """The findings the text report opens with, one sentence per item (wrapping undone)."""
    m = re.search(r"\nFindings — .*?\):\n((?:[-\s] [^\n]*\n)+)", out, re.DOTALL)  # the header may wrap
    assert m, out[:2000]
    return [" ".join(x.split()) for x in re.split(r"\n- ", "\n" + m.group(1)) if x.strip()]


def test_profile_opens_with_where_the_time_goes_and_achieved(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    prof = write_profile(tmp_path / "prof")
    r = cli("profile", str(prof), str(bench(tmp_path)), capsys=capsys)
    assert r.rc == 0, r.err
    head, _, rest = r.out.partition("Time in MPI by call")
    assert head.startswith("profile of `app -in input` — clusterA · Open MPI 4.1.4 · 16 ranks")
    fs = findings_block(head)
    # where the time goes: 2.87 of 4 s in MPI; MPI_Send 69.7 %, MPI_Wait 17.4 %, MPI_Allreduce 10.5 %
    assert fs[0] == ("Where the time goes: MPI takes 71.75 % of the wall time (2.87 of 4 s per rank, mean over "
                     "ranks); by call, the share of the MPI time is MPI_Send 69.69 %, MPI_Wait 17.42 %, MPI_Allreduce "
                     "10.45 % (these 3 together 97.56 %).")
    # achieved / achievable: the bins that lose most, largest first, with the benchmark they are held against
    ach = [f for f in fs if f.startswith("Achieved / achievable, MPI_")]
    assert ach[0].startswith("Achieved / achievable, MPI_Send, size bin 8K: 2000 µs per call at a mean 10000 B "
                             "(16000 calls) against ")
    assert "for pingpong latency [inter] at that size" in ach[0] and "s per rank lost" in ach[0]
    assert any(f.startswith("Achieved / achievable, MPI_Allreduce, size bin 8:") and
               "collectives allreduce at 16 ranks" in f for f in ach)
    assert any(f.startswith("Achieved / achievable, all point-to-point:") for f in fs)
    # the benchmark is the same library at pingpong's 2 ranks per node: one warning, about pingpong only
    cond = [f for f in fs if "different conditions" in f]
    assert cond == [("The application (clusterA, 16 ranks) and the pingpong benchmark (clusterA, 4 ranks) ran under "
                     "different conditions (ranks per node 8 against 2): a ratio of their times compares unlike "
                     "runs.")]
    assert "Achieved / achievable — clusterA" in rest  # the tables follow


def test_profile_warns_of_other_conditions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An oversubscribed application against another library's benchmarks: every difference is named and
    every finding carries the oversubscription mark; Markdown and HTML open with the same sentences."""
    prof = write_profile(tmp_path / "prof", label="clusterB", lib="clusterA", oversubscribed=True)
    out = tmp_path / "p.html"
    r = cli("profile", str(prof), str(bench(tmp_path, "clusterB")), "-o", str(out), capsys=capsys)
    assert r.rc == 0, r.err
    fs = findings_block(r.out)
    assert fs and all(f.startswith(judge.OVERSUBSCRIBED.strip()) for f in fs)
    cond = [f for f in fs if "different conditions" in f]
    assert len(cond) == 2
    assert not any("oversubscribed" in c.split("conditions")[1] for c in cond)  # the benchmarks do not say
    assert all("MPI library Open MPI 4.1.4 against MPICH 4.0.2" in c for c in cond)
    pp = next(c for c in cond if "the pingpong benchmark (clusterB, 4 ranks)" in c)
    co = next(c for c in cond if "the collectives benchmark (clusterB, 16 ranks)" in c)
    assert "ranks per node 8 against 2" in pp and "ranks per node" not in co  # 8 per node on both sides
    page = out.read_text()
    assert page.index('<section id="findings">') < page.index("Time in MPI by call")
    assert "MPI library Open MPI 4.1.4 against MPICH 4.0.2" in page
    md = cli("profile", str(prof), "--format", "markdown", capsys=capsys)
    assert md.rc == 0 and "**Findings**" in md.out and "Achieved / achievable: no micro-benchmark results" in md.out
    ok, bad, std, inked = browser_check(out, tmp_path)
    assert bad == 0 and ok == page.count("<img ") and std > 0.05 and inked > 0.05


def test_oversubscription_is_a_condition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON's 'oversubscribed' on both sides: a difference in it alone is named."""
    prof = write_profile(tmp_path / "prof", nprocs=4, nnodes=2, oversubscribed=True)
    b = bench(tmp_path)
    for p in b.glob("pingpong-*.json"):
        m = json.loads(p.read_text())
        m["oversubscribed"] = False
        p.write_text(json.dumps(m))
    r = cli("profile", str(prof), str(b), capsys=capsys)
    assert r.rc == 0, r.err
    cond = [f for f in findings_block(r.out) if "different conditions" in f]
    assert any("(oversubscribed yes against no)" in c and "pingpong" in c for c in cond), cond
    assert not any("pingpong" in c and "ranks per node" in c for c in cond)  # 2 per node on both sides
