"""Writes the fixture result sets in fixtures/ (two labels, every program, plus a
simulated run), following the CSV + JSON schema the programs write.  Re-run
after a schema change:  .venv/bin/python tests/analysis/make_fixtures.py"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "fixtures"
COLUMNS = ["run_id", "program", "test", "method", "comm", "neighbors", "periodic", "bytes", "nprocs", "nnodes", "ppn", "threads", "thread_level", "iters", "reps", "stop_reason", "time_min_s", "time_median_s", "time_mean_s", "time_max_s", "time_stddev_s", "time_ci_lo_s", "time_ci_hi_s", "mbps", "verified", "label"]
SIZES = [2**k for k in range(0, 21, 2)]

LIBS = {
    "clusterA": ("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022",
                 {"OMPI_MCA_btl": "self,vader,tcp"}, 1.2e-6, 1 / 9e9, 0),
    "clusterB": (("MPICH Version:      4.0.2\nMPICH Release date: Thu May 26 15:51:55 CDT 2022\nMPICH ABI:"
                 "          14:2:2\nMPICH Device:       ch4:ucx"), {"UCX_TLS": "sm,self"}, 0.9e-6, 1 / 12e9, 1),
}


class Writer:
    def __init__(self, label: str, program: str, nprocs: int, nnodes: int, seed: int, simulated: bool = False,
                 thread_level: str = "single") -> None:
        self.label, self.program, self.nprocs, self.nnodes = label, program, nprocs, nnodes
        self.rng = np.random.default_rng(seed)
        self.rows: list[dict[str, str]] = []
        self.run_id = f"{label}-20261120T1200{seed % 60:02d}Z-{seed:04x}"
        self.simulated = simulated
        self.thread_level = thread_level
        self.extra: dict[str, object] = {}

    def row(self, test: str, t: float, method: str = "", comm: str = "", neighbors: int = -1, periodic: int = -1,
            nbytes: int = -1, threads: int = 1, sent: float = 0, na: str = "") -> None:
        def i(v: int) -> str:
            return "" if v < 0 else str(v)

        r = {c: "" for c in COLUMNS}
        r.update(run_id=self.run_id, program=self.program, test=test, method=method, comm=comm,
                 neighbors=i(neighbors), periodic=i(periodic), bytes=i(nbytes), nprocs=str(self.nprocs),
                 nnodes=str(self.nnodes), ppn=str(self.nprocs // self.nnodes), threads=i(threads),
                 thread_level=self.thread_level, label=self.label)
        if na:
            r.update(iters="", reps="", stop_reason=f"n/a: {na}")
        else:
            s = self.rng.normal(t, t * 0.03, 15).clip(t * 0.9)
            s.sort()
            med = float(np.median(s))
            r.update(iters=str(max(1, int(1e-3 / t))), reps="15", stop_reason="ci",
                     time_min_s=f"{s[0]:.9g}", time_median_s=f"{med:.9g}", time_mean_s=f"{s.mean():.9g}",
                     time_max_s=f"{s[-1]:.9g}", time_stddev_s=f"{s.std(ddof=1):.9g}",
                     time_ci_lo_s=f"{s[3]:.9g}", time_ci_hi_s=f"{s[11]:.9g}")
            if sent > 0:
                r["mbps"] = f"{sent / med / 1e6:.9g}"
        self.rows.append(r)

    def write(self, d: Path, lib: str, env: dict[str, str], complete: bool = True) -> None:
        d.mkdir(parents=True, exist_ok=True)
        stem = f"{self.program}-{self.label}-np{self.nprocs}"
        with open(d / f"{stem}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(self.rows)
        hosts = [f"{self.label.lower()}n{k}" for k in range(self.nnodes)]
        ppn = self.nprocs // self.nnodes
        meta: dict[str, object] = {
            "schema_version": 1, "run_id": self.run_id, "program": self.program, "label": self.label,
            "suite_version": "0.1.0", "git_commit": "0123456789ab",
            "command_line": [f"./{self.program}", "-o", f"{stem}.csv"],
            "start_utc": "2026-11-20T12:00:00Z", "end_utc": "2026-11-20T12:05:00Z" if complete else None,
            "complete": complete, "simulated": self.simulated, "csv": f"{stem}.csv", "rows": len(self.rows),
            "mpi": {"library_version": lib, "standard_version": "3.1" if "Open" in lib else "4.0",
                    "thread_level_requested": self.thread_level, "thread_level_provided": self.thread_level},
            "nprocs": self.nprocs, "nnodes": self.nnodes, "ppn": ppn, "hosts": hosts,
            "ranks": [{"rank": r, "host": hosts[r // ppn], "cpus": str(r % ppn)} for r in range(min(self.nprocs, 64))],
            "topology": {"source": "hwloc 2.9.0", "packages": 2, "numa_nodes": 2, "cores": 64, "pus": 128},
            "compiler": {"mpicc": "mpicc", "version": "12.2.0", "flags": "-O2 -g -std=c11"},
            "options": {"quick": False, "verify": False, "timeout": 300, "reps": 10, "max_reps": 1000,
                        "rel_ci": 0.02, "time_budget": 10, "min_rep_time": 0.001, "warmup": 2, "stat": "median"},
            "environment": env, "setup_seconds": 0.01,
        }
        meta.update(self.extra)
        (d / f"{stem}.json").write_text(json.dumps(meta, indent=2) + "\n")


def make(label: str, seed: int) -> None:
    lib, env, alpha, beta, slow = LIBS[label]
    d = HERE / label
    # halocompare: 16 ranks, 2 nodes
    w = Writer(label, "halocompare", 16, 2, seed)
    methods = ["irecv-send", "irecv-isend", "phased", "persistent", "sendrecv", "neighbor-alltoall", "rma-fence-put"]
    comms = {"world": 1.0, "dup": 1.0, "evenodd": 1.6, "cart": 0.95, "node": 0.9, "random": 1.3}
    b = 16000
    for per in (0, 1):
        for comm, cf in comms.items():
            for n in (4, 8):
                for mi, m in enumerate(methods):
                    if m == "neighbor-alltoall" and comm not in ("cart",):
                        w.row("halo", 0, m, comm, n, per, b, na="needs a cart communicator")
                        continue
                    mf = 1 + 0.15 * ((mi + slow) % 3)
                    t = n * (alpha + beta * b) * cf * mf * (1.1 if per else 1.0)
                    w.row("halo", t, m, comm, n, per, b, sent=n * b)
        for n in (4, 8):
            w.row("one-sender", n * (alpha + beta * b) * 0.5, "isend", "world", n, per, b, sent=n * b)
    w.extra = {"halocompare": {"dims": [4, 4], "count": 2000, "seed": 1}}
    w.write(d, lib, env)
    if label == "clusterA":  # a second size for the scaling plot
        w = Writer(label, "halocompare", 64, 8, seed + 7)
        for per in (0, 1):
            for n in (4, 8):
                for m in methods[:5]:
                    w.row("halo", n * (alpha + beta * b) * 1.25, m, "world", n, per, b, sent=n * b)
        w.write(d / "np64", lib, env)
    # pingpong: 2 ranks on 2 nodes + allpairs on 4 ranks
    w = Writer(label, "pingpong", 4, 2, seed + 1)
    for comm, f in (("intra", 0.5), ("inter", 1.0)):
        for s in SIZES:
            t = f * (alpha + beta * s)
            w.row("latency", t, "", comm, nbytes=s, sent=s)
            w.row("pingping", t * 1.1, "", comm, nbytes=s, sent=s)
            w.row("bw", t * 0.6, "", comm, nbytes=s, sent=s)
            w.row("bibw", t * 0.7, "", comm, nbytes=s, sent=2 * s)
            w.row("msgrate", t * 0.4, "", comm, nbytes=s, sent=s)
    for a in range(4):
        for c in range(a + 1, 4):
            comm = "intra" if a // 2 == c // 2 else "inter"
            f = 0.5 if comm == "intra" else 1.0
            for s in (8, 1 << 20):
                w.row("allpairs-latency", f * (alpha + beta * s), f"{a}-{c}", comm, nbytes=s, sent=s)
                w.row("allpairs-bw", f * 0.6 * (alpha + beta * s), f"{a}-{c}", comm, nbytes=s, sent=s)
    w.write(d, lib, env)
    # collectives: 16 ranks
    w = Writer(label, "collectives", 16, 2, seed + 2)
    lg = 4
    for s in SIZES[::2]:
        for coll, k in (("barrier", lg), ("bcast", lg), ("reduce", lg), ("allreduce", 2 * lg), ("gather", lg),
                        ("scatter", lg), ("allgather", 15), ("alltoall", 15), ("reduce_scatter_block", 2 * lg),
                        ("scan", lg), ("ibcast", lg)):
            nb = -1 if coll == "barrier" else s
            if coll == "barrier" and s != SIZES[0]:
                continue
            w.row(coll, k * (alpha + beta * max(nb, 0)), "library", "world", nbytes=nb)
        for m, k in (("binomial", lg * 1.1), ("chain", 15 * 0.3), ("scatter-allgather", lg + 2)):
            w.row("bcast", k * (alpha + beta * s), m, "world", nbytes=s)
        w.row("series", 8 * lg * (alpha + beta * s), "bcast-loop", "world", nbytes=s)
        w.row("series", (8 + 15) * (alpha + beta * s / 2), "chain", "world", nbytes=s)
    w.extra = {"collectives": {"root": "same", "timing": "osu", "segment": 8192}}
    w.write(d, lib, env)
    # rma: 2 ranks
    w = Writer(label, "rma", 2, 1, seed + 3)
    for op in ("put", "get", "accumulate"):
        for kind in ("latency", "bw"):
            for s in SIZES[::2]:
                base = alpha + beta * s
                for sync, sf in (("fence", 2.0), ("pscw", 1.6), ("lock-exclusive", 1.4), ("lockall-flush", 1.2)):
                    for flav in ("create", "allocate"):
                        if sync == "pscw" and label == "clusterB" and flav == "allocate":
                            w.row(f"{op}-{kind}", 0, sync, flav, nbytes=s, na="PSCW unsupported on this window")
                            continue
                        t = base * sf * (0.6 if kind == "bw" else 1.0) * (1.8 if slow and sync == "fence" else 1)
                        w.row(f"{op}-{kind}", t, sync, flav, nbytes=s, sent=s if kind == "bw" else 0)
                w.row(f"{op}-{kind}", base * (0.6 if kind == "bw" else 1.0), "sendrecv", "p2p", nbytes=s,
                      sent=s if kind == "bw" else 0)
    w.write(d, lib, env)
    # threads: one run per level for overhead, plus multiple for the rest
    for lvl, f in (("single", 1.0), ("multiple", 1.3 if slow else 1.15)):
        w = Writer(label, "threads", 2, 1, seed + 4 + (lvl == "multiple"), thread_level=lvl)
        for s in (8, 1024, 65536):
            w.row("overhead-latency", f * (alpha + beta * s), lvl, "world", nbytes=s, sent=s)
            w.row("overhead-bw", f * 0.6 * (alpha + beta * s), lvl, "world", nbytes=s, sent=s)
        if lvl == "multiple":
            for t in (1, 2, 4):
                for m, mf in (("threads-tags", 1.3), ("threads-comms", 1.15), ("processes", 1.0)):
                    w.row("latency-mt", mf * (alpha + beta * 8) * (1 + 0.1 * t), m, "world", nbytes=8, threads=t)
                    w.row("bw-mt", mf * 0.6 * (alpha + beta * 65536) * t, m, "world", nbytes=65536, threads=t,
                          sent=t * 65536)
            for m, v in (("plain", 3e-3), ("comm-thread", 2.2e-3), ("compute-only", 2e-3)):
                w.row("overlap", v, m, "world", nbytes=1 << 20, threads=2)
        w.write(d / lvl, lib, env)


def make_sim() -> None:
    lib = "SMPI Version 3.32"
    w = Writer("bgl-sim", "halocompare", 1024, 512, 99, simulated=True)
    for per in (0, 1):
        for comm in ("world", "cart"):
            for n in (4, 8):
                for m in ("irecv-send", "irecv-isend", "sendrecv"):
                    w.row("halo", n * (3e-6 + 16000 / 150e6), m, comm, n, per, 16000, sent=n * 16000)
    w.write(HERE / "sim", lib, {})


if __name__ == "__main__":
    make("clusterA", 10)
    make("clusterB", 20)
    make_sim()
    print("fixtures written to", HERE)
