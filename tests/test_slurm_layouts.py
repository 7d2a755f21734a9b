"""slurm/sweep --layouts: the threaded-MPI slides' layout table (nodes x ranks
per node) for the two-level collectives in one sweep command, on the 4-node
single-host Slurm test cluster (tests/slurm_cluster.py), and the table
mpimb-report prints from it: reduce / bcast / allreduce x layouts x root
same / rotate, one cell per set (MPI library · method).  Input checking and
--dry-run need no cluster."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from conftest import ROOT, bindir, report, run_mpi, sh
from slurm_cluster import SlurmCluster

SWEEP = ROOT / "slurm" / "sweep"
LAYOUTS = ["4x1", "1x4", "2x2"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--layouts", "4x1,4y1"], "--layouts needs NODESxPPN pairs of positive integers, e.g. 4x1,1x4, got '4y1'"),
        (["--layouts", "0x4"], "got '0x4'"),
        (["--layouts", "4x1,"], "--layouts needs a comma-separated list"),
        (["--layouts", "2x2,02x2"], "--layouts lists '2x2' twice"),
        (["--layouts", "4x1", "-N", "1"], "--layouts replaces --nodes and --ppn"),
        (["--ppn", "2", "--layouts", "4x1"], "--layouts replaces --nodes and --ppn"),
    ],
)
def test_layouts_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    p = sh([SWEEP, "--results", tmp_path / "r", "--bindir", bindir("openmpi"), "-p", "collectives", *args],
            timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sweep: ") and message in lines[0], p.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("array", [False, True])
def test_layouts_dry_run(tmp_path: Path, array: bool) -> None:
    """One job (or one array) per layout, in the order given, each with its nodes and ranks per node."""
    p = sh([SWEEP, "--dry-run", "--results", tmp_path / "r", "--bindir", bindir("openmpi"), "--label", "lab",
             "-p", "collectives", "--layouts", ",".join(LAYOUTS), *(["--array"] if array else [])], timeout=60)
    assert p.returncode == 0, p.stderr
    scripts = p.stdout.split("# ===== sbatch script ")[1:]
    assert len(scripts) == 3
    for lay, s in zip(LAYOUTS, scripts, strict=True):
        n, r = lay.split("x")
        assert f"#SBATCH --nodes={n}\n#SBATCH --ntasks-per-node={r}\n" in s
        assert f"collectives-N{n}-ppn{r}" in s
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------- the real cluster


@pytest.fixture(scope="module")
def cluster(slurm_cluster: SlurmCluster) -> SlurmCluster:
    """The session's cluster (conftest.slurm_cluster); these sweeps use its partition "wide", 4 CPUs per
    node: 1x4 fits on a node."""
    if not (bindir("mpich") / "collectives").exists():
        pytest.skip(f"{bindir('mpich')}/collectives not built (make test-builds)")
    return slurm_cluster


def test_layout_table_from_one_sweep(cluster: SlurmCluster, tmp_path: Path) -> None:
    """MPICH under srun --mpi=pmi2: MPI's node map is Slurm's (each emulated node a shared-memory
    node), so the two-level algorithms run on 4, 1 and 2 nodes.  (Open MPI's mpiexec with two
    daemons on one host crashed in MPI_Init's shared-memory transport here, before any mpimb code.)"""
    results, label = tmp_path / "results", "layouts"
    env = dict(cluster.env, MPIMB_SWEEP_POLL="1")
    # one repetition on a barrier, one size: MPICH busy-polls, up to 4 ranks on a node of 2 cores; the
    # table's cells need a time each, not a precise one, and its columns are the layouts, not the sizes
    args = ("collectives=-t bcast,reduce,allreduce --root same,rotate -m 8:8 --reps 1 --max-reps 1 --warmup 0"
            " --sync barrier")
    p = sh([SWEEP, "--results", results, "--partition", "wide", "--time", "10", "--label", label,
             "--bindir", bindir("mpich"), "--mpi", "pmi2", "-p", "collectives", "--layouts", ",".join(LAYOUTS),
             "--args", args, "--wait", "--", "--quick", "--verify"], env=env, timeout=1200)
    assert p.returncode == 0, p.stdout + p.stderr + cluster.logs()
    assert "3 of 3 job(s) completed, 0 failed" in p.stdout
    # collect gathers (its report and plots are test_slurm.py's); the report of the gathered results here
    c = sh([ROOT / "slurm" / "collect", "--results", results, label, "--no-report"], env=cluster.env, timeout=600)
    assert c.returncode == 0, c.stdout + c.stderr
    collected = results / label / "collected"
    want_dirs = {"collectives-N{}-ppn{}".format(*x.split("x")) for x in LAYOUTS}
    assert {d.name for d in collected.iterdir()} == want_dirs
    report("report", collected, "-o", tmp_path / "report.html")
    assert "Layouts: reduce / bcast / allreduce" in (tmp_path / "report.html").read_text()
    # the table as CSV (the text form wraps this 10-column table into blocks of 120 columns)
    block = report("table", collected, "--format", "csv").split("# Layouts: reduce / bcast / allreduce × nodes × ranks per node × root — layouts\n", 1)[1]
    table = list(csv.reader(io.StringIO(block.split("\n#", 1)[0])))
    sets = ["MPICH 4.0.2 · library", "MPICH 4.0.2 · 2level", "MPICH 4.0.2 · 2level-shm"]
    # the layout groups, smallest first among equal rank counts: 4x1, 2x2, 1x4
    assert table[0] == ["collective · root · bytes"] + [f"{lay} (nodes x ppn) {s}" for lay in ("4x1", "2x2", "1x4") for s in sets]
    rows = {r[0]: r[1:] for r in table[1:] if r}
    want = [f"{t} · {r} · {b}" for t, roots in (("reduce", ("same", "rotate")), ("bcast", ("same", "rotate")),
                                                ("allreduce", ("-",))) for r in roots for b in (8,)]
    assert list(rows) == want
    for name, cells in rows.items():
        assert len(cells) == 9 and all(re.fullmatch(r"[\d.]+~?", x) for x in cells), (name, cells)
    text = report("table", collected)
    assert "Layouts: reduce / bcast / allreduce" in text and "4x1 (nodes x ppn)" in text
    block = text
    assert "ran as" not in block  # MPI's layout is Slurm's
    for d in collected.iterdir():
        (meta,) = (json.loads(f.read_text()) for f in d.glob("collectives-*.json"))
        assert f"{meta['nnodes']}x{meta['ppn']}" == "{nodes}x{ppn}".format(**meta["slurm"])


def test_layout_differs_from_mpis(tmp_path: Path) -> None:
    """A run whose Slurm record says 2x1 while MPI saw one node of 2: the layout column is Slurm's
    and the table says what MPI saw (as on a cluster whose launcher does not tell MPI the nodes)."""
    run = run_mpi("openmpi", 2, "collectives", "--quick", "-m", "8:8", "-t", "allreduce", out=tmp_path / "c.csv")
    assert run.returncode == 0, run.stderr
    meta = run.meta()
    assert (meta["nnodes"], meta["ppn"]) == (1, 2)
    meta["slurm"] = {"job_id": "7", "config": "collectives-N2-ppn1", "nodes": 2, "ppn": 1}
    run.json_path.write_text(json.dumps(meta))
    t = report("table", tmp_path)
    assert "2x1 (nodes x ppn)" in t and "1x2 (nodes x ppn)" not in t, t
    assert "2x1 ran as 1x2 shared-memory nodes" in t
    # a cell is a number, "~"-marked where a busy machine ran the time budget out before 6 repetitions
    assert re.search(r"allreduce · - · 8 +[\d.]+~? +[\d.]+~? +[\d.]+~?\n", t), t
