"""Writes the schema-2 fixture result sets in fixtures/ (two labels, every
program, a simulated run, and 'equal': a halo set whose methods are forced
equal), following the CSV + JSON schema the programs write (the columns come
from analysis/mpimb/schema).  fixtures/v1/ holds a frozen schema-1 set for the
tests that read version 1; it is not written here.  Re-run after a schema
change:  .venv/bin/python tests/analysis/make_fixtures.py"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "fixtures"
SCHEMA = Path(__file__).resolve().parents[2] / "analysis" / "mpimb" / "schema" / "results.schema.json"
COLUMNS = [c["title"] for c in json.loads(SCHEMA.read_text())["prefixItems"]]
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
            nbytes: int = -1, threads: int = 1, sent: float = 0, na: str = "", params: str = "",
            samples: np.ndarray | None = None) -> None:
        def i(v: int) -> str:
            return "" if v < 0 else str(v)

        r = {c: "" for c in COLUMNS}
        r.update(run_id=self.run_id, program=self.program, test=test, method=method, comm=comm,
                 neighbors=i(neighbors), periodic=i(periodic), bytes=i(nbytes), nprocs=str(self.nprocs),
                 nnodes=str(self.nnodes), ppn=str(self.nprocs // self.nnodes), threads=i(threads),
                 thread_level=self.thread_level, label=self.label, params=params)
        if na:
            r.update(iters="", reps="", stop_reason=f"n/a: {na}")
        else:
            s = np.sort(self.rng.normal(t, t * 0.03, 15).clip(t * 0.9) if samples is None else samples)
            med = float(np.median(s))
            p90, p99 = np.percentile(s, [90, 99])
            r.update(iters=str(max(1, int(1e-3 / t))), reps="15", stop_reason="ci",
                     time_min_s=f"{s[0]:.9g}", time_median_s=f"{med:.9g}", time_mean_s=f"{s.mean():.9g}",
                     time_max_s=f"{s[-1]:.9g}", time_stddev_s=f"{s.std(ddof=1):.9g}",
                     time_ci_lo_s=f"{s[3]:.9g}", time_ci_hi_s=f"{s[11]:.9g}", time_p90_s=f"{p90:.9g}",
                     time_p99_s=f"{p99:.9g}", rank_min_s=f"{0.8 * med:.9g}", rank_mean_s=f"{0.9 * med:.9g}")
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
            "schema_version": 2, "run_id": self.run_id, "program": self.program, "label": self.label,
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


RMA_PARAMS = "assert=none;win=allocate"


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
                    params = ";".join(sorted(x for x in (*(RMA_PARAMS.split(";") if m.startswith("rma-") else []),
                                                         "seed=1" if comm == "random" else "") if x))
                    if m == "neighbor-alltoall" and comm not in ("cart",):
                        w.row("halo", 0, m, comm, n, per, b, na="needs a cart communicator", params=params)
                        continue
                    mf = 1 + 0.15 * ((mi + slow) % 3)
                    t = n * (alpha + beta * b) * cf * mf * (1.1 if per else 1.0)
                    w.row("halo", t, m, comm, n, per, b, sent=n * b, params=params)
        for n in (4, 8):
            w.row("one-sender", n * (alpha + beta * b) * 0.5, "isend", "world", n, per, b, sent=n * b)
    w.extra = {"halocompare": {"dims": [4, 4], "count": 2000, "seed": 1, "win": "allocate", "assert": "none"}}
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
            w.row("bw", t * 0.6, "", comm, nbytes=s, sent=s, params="window=64")
            w.row("bibw", t * 0.7, "", comm, nbytes=s, sent=2 * s, params="window=64")
            w.row("msgrate", t * 0.4, "", comm, nbytes=s, sent=s, params="window=64")
    for a in range(4):
        for c in range(a + 1, 4):
            comm = "intra" if a // 2 == c // 2 else "inter"
            f = 0.5 if comm == "intra" else 1.0
            for s in (8, 1 << 20):
                w.row("allpairs-latency", f * (alpha + beta * s), f"{a}-{c}", comm, nbytes=s, sent=s)
                w.row("allpairs-bw", f * 0.6 * (alpha + beta * s), f"{a}-{c}", comm, nbytes=s, sent=s,
                      params="window=64")
    w.write(d, lib, env)
    # collectives: 16 ranks
    w = Writer(label, "collectives", 16, 2, seed + 2)
    lg = 4
    rooted = {"bcast", "reduce", "gather", "scatter", "ibcast"}
    for s in SIZES[::2]:
        for coll, k in (("barrier", lg), ("bcast", lg), ("reduce", lg), ("allreduce", 2 * lg), ("gather", lg),
                        ("scatter", lg), ("allgather", 15), ("alltoall", 15), ("reduce_scatter_block", 2 * lg),
                        ("scan", lg), ("ibcast", lg)):
            nb = -1 if coll == "barrier" else s
            if coll == "barrier" and s != SIZES[0]:
                continue
            w.row(coll, k * (alpha + beta * max(nb, 0)), "library", "world", nbytes=nb,
                  params="root=0;timing=osu" if coll in rooted else "timing=osu")
        for m, k in (("binomial", lg * 1.1), ("chain", 15 * 0.3), ("scatter-allgather", lg + 2)):
            w.row("bcast", k * (alpha + beta * s), m, "world", nbytes=s,
                  params="root=0;segment=8192;timing=osu" if m == "chain" else "root=0;timing=osu")
        w.row("series", 8 * lg * (alpha + beta * s), "bcast-loop", "world", nbytes=s, params="messages=8;timing=osu")
        w.row("series", (8 + 15) * (alpha + beta * s / 2), "chain", "world", nbytes=s,
              params="messages=8;segment=8192;timing=osu")
    w.extra = {"collectives": {"root": "same", "timing": "osu", "segment": 8192}}
    w.write(d, lib, env)
    # rma: 2 ranks
    w = Writer(label, "rma", 2, 1, seed + 3)
    for op in ("put", "get", "accumulate"):
        for kind in ("latency", "bw"):
            params = "pairs=one" if kind == "latency" else "epoch-ops=64;pairs=one"
            for s in SIZES[::2]:
                base = alpha + beta * s
                for sync, sf in (("fence", 2.0), ("pscw", 1.6), ("lock-exclusive", 1.4), ("lockall-flush", 1.2)):
                    for flav in ("create", "allocate"):
                        if sync == "pscw" and label == "clusterB" and flav == "allocate":
                            w.row(f"{op}-{kind}", 0, sync, flav, nbytes=s, na="PSCW unsupported on this window",
                                  params=params)
                            continue
                        t = base * sf * (0.6 if kind == "bw" else 1.0) * (1.8 if slow and sync == "fence" else 1)
                        w.row(f"{op}-{kind}", t, sync, flav, nbytes=s, sent=s if kind == "bw" else 0, params=params)
                w.row(f"{op}-{kind}", base * (0.6 if kind == "bw" else 1.0), "sendrecv", "p2p", nbytes=s,
                      sent=s if kind == "bw" else 0, params=params)
    w.write(d, lib, env)
    # threads: one run per level for overhead, plus multiple for the rest
    for lvl, f in (("single", 1.0), ("multiple", 1.3 if slow else 1.15)):
        w = Writer(label, "threads", 2, 1, seed + 4 + (lvl == "multiple"), thread_level=lvl)
        for s in (8, 1024, 65536):
            w.row("overhead-latency", f * (alpha + beta * s), lvl, "world", nbytes=s, sent=s, params="bind=0")
            w.row("overhead-bw", f * 0.6 * (alpha + beta * s), lvl, "world", nbytes=s, sent=s,
                  params="bind=0;window=64")
        if lvl == "multiple":
            for t in (1, 2, 4):
                for m, mf in (("threads-tags", 1.3), ("threads-comms", 1.15), ("processes", 1.0)):
                    w.row("latency-mt", mf * (alpha + beta * 8) * (1 + 0.1 * t), m, "world", nbytes=8, threads=t,
                          params="bind=0")
                    w.row("bw-mt", mf * 0.6 * (alpha + beta * 65536) * t, m, "world", nbytes=65536, threads=t,
                          sent=t * 65536, params="bind=0;window=64")
            for m, v in (("plain", 3e-3), ("comm-thread", 2.2e-3), ("compute-only", 2e-3)):
                w.row("overlap", v, m, "world", nbytes=1 << 20, threads=2, params="bind=0;compute-us=0")
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


def make_equal() -> None:
    """A halo result whose two methods have identical figures (the same samples): every finding
    about them must say 'within the noise'; the communicators differ clearly."""
    lib, env, *_ = LIBS["clusterA"]
    w = Writer("equal", "halocompare", 4, 1, 77)
    same = np.sort(w.rng.normal(40e-6, 1.2e-6, 15))
    for comm, cf in (("world", 1.0), ("evenodd", 1.9)):
        for m in ("irecv-isend", "persistent"):
            w.row("halo", 40e-6 * cf, m, comm, 4, 0, 16000, sent=4 * 16000, samples=same * cf)
    w.write(HERE / "equal", lib, env)


def make_oversub() -> None:
    """A halo run whose JSON says it was oversubscribed (more ranks × threads than cores): every finding and
    every verdict from it must say so."""
    lib, env, *_ = LIBS["clusterA"]
    w = Writer("oversub", "halocompare", 4, 1, 78)
    for comm, cf in (("world", 1.0), ("evenodd", 1.9)):
        for m, mf in (("irecv-isend", 1.0), ("persistent", 1.3)):
            w.row("halo", 40e-6 * cf * mf, m, comm, 4, 0, 16000, sent=4 * 16000)
    w.extra = {"oversubscribed": True}
    w.write(HERE / "oversub", lib, env)


if __name__ == "__main__":
    make("clusterA", 10)
    make("clusterB", 20)
    make_sim()
    make_equal()
    make_oversub()
    print("fixtures written to", HERE)
