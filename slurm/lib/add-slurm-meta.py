"""Adds a "slurm" section to every program JSON in a sweep job's directory (and its launches/):
the job's configuration (job.json), its `scontrol show job` record parsed into
key/value pairs, and the names of the raw files beside it.  Called by
job-record at the end of each job; python3 standard library only."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

# "Key=Value" tokens of `scontrol show job`; values may contain spaces
# (Command=, WorkDir=, Reason=), so a value runs up to the next " Key=".
TOKEN = re.compile(r"([A-Za-z][A-Za-z0-9_:/]*)=(.*?)(?=\s+[A-Za-z][A-Za-z0-9_:/]*=|\s*$)", re.DOTALL)


def parse_scontrol(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        for key, value in TOKEN.findall(line.strip()):
            out.setdefault(key, value.strip())
    return out


def main(argv: list[str]) -> int:
    d = Path(argv[1])
    job = json.loads((d / "job.json").read_text())
    record = d / "slurm-job.txt"
    section = {
        "job_id": job.get("job_id"),
        "config": job.get("config"),
        "nodes": job.get("nodes"),
        "ppn": job.get("ppn"),
        "threads": job.get("threads"),
        "job_file": "slurm-job.txt",
        "env_file": "slurm-env.txt",
        "job_record": "job.json",
        "scontrol_show_job": parse_scontrol(record.read_text(errors="replace")) if record.exists() else {},
    }
    # the job's own run, or the launches of sweep --launches N (launches/PROGRAM/launch-I.json)
    for f in sorted([*d.glob("*.json"), *d.glob("launches/*/*.json")]):
        if f.name == "job.json":
            continue
        try:
            meta = json.loads(f.read_text())
        except (OSError, ValueError):
            continue  # a run killed while writing: leave it as it is
        if not isinstance(meta, dict) or "schema_version" not in meta:
            continue
        meta["slurm"] = section
        tmp = f.with_name(f.name + ".tmp")
        tmp.write_text(json.dumps(meta, indent=2) + "\n")
        os.replace(tmp, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
