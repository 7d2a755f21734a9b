"""Multi-node paths on real MPI (issue 26): pingpong's intra- and inter-node pairs, halocompare's `node`
ordering and collectives' two-level algorithms at 2 nodes x 2 ranks on the session's Slurm test cluster
(tests/slurm_cluster.py, partition "wide"), every program --verify'd, and the suite's node map (src/common/run.c,
mb_nodes_init: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) checked against where Slurm put each rank.

One job (one salloc allocation) per MPI library runs every step; a wrapper writes each rank's Slurm node (SLURM_PROCID,
SLURMD_NODENAME, SLURM_TOPOLOGY_ADDR) beside the results before it becomes the program.  pingpong runs twice:
with Slurm's block distribution (ranks 0,1 | 2,3) and its cyclic one (0,2 | 1,3), where a node map that
assumed consecutive ranks per node would pick the wrong pairs.

MPICH runs under `srun --mpi=pmi2`, Open MPI under `srun --mpi=pmix`; both take their node map from Slurm.
Open MPI needs one thing on this single-host cluster (docs/slurm.md, "Testing against a real Slurm"): its
shared-memory transport names its files by host name, job and local rank, so two emulated nodes of one host
collide in /dev/shm and crash MPI_Init; the wrapper gives each emulated node a directory of its own."""

from __future__ import annotations

import csv
import json
import subprocess
import warnings
from collections import Counter
from pathlib import Path

import pytest
from conftest import bindir
from slurm_cluster import SlurmCluster

NODES, PPN = 2, 2
# (step, distribution, program, options): tiny counts (MPICH busy-polls 4 ranks on 2 cores); what is checked
# is which ranks meet where and that every byte arrives, not the times
STEPS = [
    ("pingpong", "block", "pingpong", "--tests latency,bw -m 1K:1K"),
    ("pingpong-cyclic", "cyclic", "pingpong", "--tests latency -m 1K:1K"),
    ("halocompare", "block", "halocompare",
     "--methods irecv-isend --comms world,node --neighbors 4 --periodic no --tests halo"),
    # root 3: not its node's leader, and on the other node than rank 0: every step of the two-level forms
    ("collectives", "block", "collectives",
     ("-t bcast-2level,bcast-2level-shm,reduce-2level,reduce-2level-shm,allreduce-2level,allreduce-2level-shm"
      " --root 3 -m 1K:1K --sync barrier --warmup 0")),
]
MPI_TYPE = {"mpich": "pmi2", "openmpi": "pmix"}
# Open MPI only: each emulated node its own directory for the shared-memory transport's files (module docstring)
OWN_SHM = {"openmpi": 'mkdir -p "shm/$SLURMD_NODENAME"\n'
                      'export OMPI_MCA_btl_vader_backing_directory="$PWD/shm/$SLURMD_NODENAME"\n'}


def job_script(lib: str) -> str:
    """The job's steps, run inside one allocation (salloc returns when they end; sbatch --wait polls)."""
    # A step that died before it wrote its CSV (once Open MPI's rank 0 segfaulted at address 0 in start-up
    # under srun --mpi=pmix on this loaded single-host cluster) runs once more;
    # the first attempt's output is kept beside it, and the test says a retry happened.
    steps = "".join(
        f"step() {{ srun --mpi={MPI_TYPE[lib]} --distribution={dist} ./rank.sh {name} {bindir(lib) / prog} "
        f"-o {name}.csv --quick --verify {opts} > {name}.txt 2>&1; }}\n"
        f"step || {{ [ ! -e {name}.csv ] && mv {name}.txt {name}.first-attempt.txt && step; }} || rc=1\n"
        for name, dist, prog, opts in STEPS)
    return '#!/bin/bash\nscontrol show hostnames "$SLURM_JOB_NODELIST" > hostnames.txt\nrc=0\n' + steps + "exit $rc\n"


def rank_wrapper(lib: str) -> str:
    return ("#!/bin/sh\n# srun runs this for every rank: where Slurm put the rank, then the program\n"
            'step=$1; shift\necho "$SLURM_PROCID $SLURMD_NODENAME $SLURM_TOPOLOGY_ADDR" > "$step.where.$SLURM_PROCID"\n'
            + OWN_SHM.get(lib, "") + 'exec "$@"\n')


def slurm_nodes(out: Path, step: str) -> list[str]:
    """Each rank's Slurm node, by rank, as the ranks' own environment gave it."""
    where = {}
    for f in out.glob(f"{step}.where.*"):
        rank, node, topo = f.read_text().split()
        assert topo == node, f"SLURM_TOPOLOGY_ADDR {topo} is not SLURMD_NODENAME {node}"
        where[int(rank)] = node
    assert sorted(where) == list(range(NODES * PPN)), (step, where)
    return [where[r] for r in sorted(where)]


def results(out: Path, step: str) -> tuple[list[dict[str, str]], dict]:
    rows = list(csv.DictReader((out / f"{step}.csv").open()))
    meta = json.loads((out / f"{step}.json").read_text())
    assert rows and meta["complete"] is True, (out / f"{step}.txt").read_text()
    for r in rows:  # measured, on every rank of both nodes, every byte checked
        assert not r["stop_reason"].startswith("n/a") and float(r["time_median_s"]) > 0, r
        assert r["verified"] == "yes", r
        assert (r["nprocs"], r["nnodes"], r["ppn"]) == (str(NODES * PPN), str(NODES), str(PPN)), r
    assert (meta["nnodes"], meta["ppn"]) == (NODES, PPN)
    env = meta["environment"]  # rank 0's Slurm variables, as the program recorded them
    assert env["SLURM_STEP_NUM_NODES"] == str(meta["nnodes"]) and env["SLURM_STEP_NUM_TASKS"] == str(meta["nprocs"])
    return rows, meta


def expected_pairs(node: list[str]) -> tuple[list[int], list[int]]:
    """docs/pingpong.md's rule on Slurm's layout: intra = the first two ranks sharing a node, inter = rank 0
    and the first rank on another node."""
    intra = next([a, b] for a in range(len(node)) for b in range(a + 1, len(node)) if node[a] == node[b])
    return intra, [0, next(b for b in range(len(node)) if node[b] != node[0])]


@pytest.mark.parametrize("lib", ["mpich", "openmpi"])
def test_two_nodes_two_ranks(slurm_cluster: SlurmCluster, tmp_path: Path, lib: str) -> None:
    missing = [p for p in ("pingpong", "halocompare", "collectives") if not (bindir(lib) / p).exists()]
    if missing:
        pytest.skip(f"{bindir(lib)}: {', '.join(missing)} not built (make test-builds)")
    plugins = slurm_cluster.run("srun", "--mpi=list", check=False)  # Slurm 22 lists them on stderr
    if MPI_TYPE[lib] not in plugins.stdout + plugins.stderr:
        pytest.skip(f"this Slurm has no srun --mpi={MPI_TYPE[lib]}, which {lib} needs for its node map")
    out = tmp_path / lib
    out.mkdir()
    for script, text in (("job.sh", job_script(lib)), ("rank.sh", rank_wrapper(lib))):
        (out / script).write_text(text)
        (out / script).chmod(0o755)
    p = subprocess.run(["salloc", "--partition=wide", f"--nodes={NODES}", f"--ntasks-per-node={PPN}", "--time=5",
                        f"--job-name=mpimb-multinode-{lib}", "./job.sh"], cwd=out, env=slurm_cluster.env,
                       capture_output=True, text=True, timeout=600, check=False)
    logs = "\n".join(f"--- {f.name}\n{f.read_text()[-3000:]}" for f in sorted(out.glob("*.txt")))
    assert p.returncode == 0, p.stdout + p.stderr + logs + slurm_cluster.logs()
    for first in sorted(out.glob("*.first-attempt.txt")):  # said, never silent (pytest's warnings summary)
        warnings.warn(f"{lib}: {first.name.split('.')[0]} died before its results and ran again:\n"
                      f"{first.read_text()[-1500:]}", stacklevel=1)

    # Slurm's layout: 2 nodes of the job, 2 ranks on each, the same two in every step
    hostnames = (out / "hostnames.txt").read_text().split()
    assert len(hostnames) == NODES
    for name, dist, *_ in STEPS:
        node = slurm_nodes(out, name)
        assert Counter(node) == {h: PPN for h in hostnames}, (name, node)
        assert (node[0] == node[1]) == (dist == "block"), (name, node)

    # pingpong: both pairs measured; the suite's pairs are Slurm's, in either distribution
    for name in ("pingpong", "pingpong-cyclic"):
        rows, meta = results(out, name)
        node = slurm_nodes(out, name)
        intra, inter = meta["pingpong"]["intra_pair"], meta["pingpong"]["inter_pair"]
        assert (intra, inter) == expected_pairs(node), (name, node, intra, inter)
        assert node[intra[0]] == node[intra[1]] and node[inter[0]] != node[inter[1]]
        # the harness's node map, rank by rank (JSON ranks[].node), is Slurm's up to naming
        mine = [r["node"] for r in meta["ranks"]]
        assert len(set(zip(mine, node, strict=True))) == NODES == len(set(mine)), (name, mine, node)
        tests = {r["test"] for r in rows}
        assert {(r["test"], r["comm"]) for r in rows} == {(t, c) for t in tests for c in ("intra", "inter")}, rows
    assert expected_pairs(slurm_nodes(out, "pingpong-cyclic")) == ([0, 2], [0, 1])

    # halocompare: the node ordering saw the two nodes (one 2x1 block of the 2x2 grid each, not the whole grid)
    rows, meta = results(out, "halocompare")
    assert {r["comm"] for r in rows} == {"world", "node"}
    assert meta["halocompare"]["node_ordering"] == "node: 2x1 block of the grid per node"

    # collectives: every two-level form, rooted on a rank that leads no node
    rows, meta = results(out, "collectives")
    assert sorted((r["test"], r["method"]) for r in rows) == sorted(
        (t, m) for t in ("bcast", "reduce", "allreduce") for m in ("2level", "2level-shm"))
    assert all(r["params"].startswith("root=3;") for r in rows if r["test"] != "allreduce"), rows
