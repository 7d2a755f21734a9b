#!/usr/bin/env python3
"""Writes the published Gropp & Lusk halo figures as mpimb result files (schema 2):
one CSV + JSON per machine and mode, beside this script.

    python3 reference/gropp-lusk/convert.py reference/sources/gropp-lusk-halo-tables.csv [--out DIR]

The transcription (reference/sources/, kept outside this folder so that the
folder holds result files only) has the columns machine, mode, nprocs, count_doubles, periodic
(no / yes / unknown), neighbors, comm, method, mbps: one line per figure of the
source's tables; method one-sender marks the "single process sending to its
neighbours" figures (README.md says how each is filed).  Every row keeps the
published MB/s; its time is derived as bytes one process sends / rate, and it
says stop_reason 'published': nothing here was measured."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS = json.loads((HERE.parents[1] / "analysis" / "mpimb" / "schema" / "results.schema.json").read_text())
COLUMNS = [c["title"] for c in COLUMNS["prefixItems"]]
CITATION = ('W. Gropp and R. Lusk, "Programming in MPI for Performance" (Argonne National Laboratory): '
            "the halocompare tables")
# (machine, mode) -> label, processes per node where the mode defines it (BG/L co-processor: one,
# virtual-node: two; XT4 SN: one), None where the source does not say.
RUNS = {("BG/L", "co-processor"): ("BGL-co-processor", 1), ("BG/L", "virtual-node"): ("BGL-virtual-node", 2),
        ("Cray XT3", ""): ("Cray-XT3", None), ("Cray XT4", ""): ("Cray-XT4", None),
        ("Cray XT4", "SN"): ("Cray-XT4-SN", 1)}
# One-sender figures the source lists without a mode belong to the machine's default mode.
DEFAULT_MODE = {"BG/L": "co-processor"}
PERIODIC = {"no": "0", "yes": "1", "unknown": ""}


def convert(src: Path, out: Path) -> list[Path]:
    with open(src, newline="") as f:
        lines = list(csv.DictReader(f))
    halo = [x for x in lines if x["method"] != "one-sender"]
    written = []
    for (machine, mode), (label, ppn) in RUNS.items():
        mine = [x for x in halo if (x["machine"], x["mode"]) == (machine, mode)]
        if not mine:
            continue
        nprocs, count = int(mine[0]["nprocs"]), int(mine[0]["count_doubles"])
        ones = [x for x in lines if x["method"] == "one-sender" and x["machine"] == machine and
                (x["mode"] or DEFAULT_MODE.get(machine, "")) == mode]
        run_id = f"gropp-lusk-{label}"
        stem = f"halocompare-{label}-np{nprocs}"
        rows = []
        for x in mine + ones:
            one = x["method"] == "one-sender"
            nbr, nbytes = int(x["neighbors"]), 8 * count
            mbps = float(x["mbps"])
            r = dict.fromkeys(COLUMNS, "")
            r.update(run_id=run_id, program="halocompare", test="one-sender" if one else "halo",
                     method="isend" if one else x["method"], comm=x["comm"], neighbors=str(nbr),
                     periodic=PERIODIC[x["periodic"]], bytes=str(nbytes), nprocs=str(nprocs),
                     nnodes=str(nprocs // ppn) if ppn else "", ppn=str(ppn) if ppn else "", threads="1",
                     thread_level="single", stop_reason="published",
                     time_median_s=f"{nbr * nbytes / (mbps * 1e6):.9g}", mbps=f"{mbps:g}", label=label)
            rows.append(r)
        with open(out / f"{stem}.csv", "w", newline="") as f:
            w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        meta = {
            "schema_version": 2, "run_id": run_id, "program": "halocompare", "label": label,
            "suite_version": "published", "git_commit": "", "command_line": [], "start_utc": "", "end_utc": None,
            "complete": True, "simulated": False, "source": "published",
            "reference": {
                "citation": CITATION, "machine": machine, "mode": mode or None,
                "notes": ("MB/s per process as published; time_median_s is derived as neighbours x bytes / rate. "
                          "No repetitions, no confidence interval, nothing measured by mpimb. One-sender rows: "
                          "the source gives no process count (nprocs is this run's)"
                          + ("; listed without a mode, filed with the machine's default mode" if machine in
                             DEFAULT_MODE else "") + "."
                          + (" The source does not say whether the mesh was periodic (periodic empty)."
                             if any(x["periodic"] == "unknown" for x in mine) else "")
                          + ("" if ppn else " Processes per node not stated (nnodes, ppn empty; 0 here).")),
            },
            "csv": f"{stem}.csv", "rows": len(rows),
            "mpi": {"library_version": "not stated (published figures)", "standard_version": "",
                    "thread_level_requested": "single", "thread_level_provided": "single"},
            "nprocs": nprocs, "nnodes": nprocs // ppn if ppn else 0, "ppn": ppn or 0, "hosts": [], "ranks": [],
            "topology": {}, "compiler": {}, "options": {}, "environment": {},
            "halocompare": {"count": count},
        }
        (out / f"{stem}.json").write_text(json.dumps(meta, indent=2) + "\n")
        written.append(out / f"{stem}.csv")
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("transcription", type=Path)
    ap.add_argument("--out", type=Path, default=HERE)
    a = ap.parse_args()
    for p in convert(a.transcription, a.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
