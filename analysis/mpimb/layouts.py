"""The layout table of the threaded-MPI slides: reduce / bcast / allreduce
× layouts (nodes × ranks per node) × root same / rotate, one cell per set
(MPI library · method: the library's call and the two-level algorithms),
over every run given (docs/slurm.md, "The layout table").

A run's layout is its Slurm job's (the "slurm" section slurm/sweep's jobs
add to the metadata: nodes, ppn) when it has one, else what MPI saw (the
CSV's nnodes × ppn).  Where they differ (a launcher that does not give MPI
the job's nodes), a note says so: the two-level algorithms had MPI's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .load import Run
from .tables import Table, _agg, _cell, fmt_bytes

TESTS = ("reduce", "bcast", "allreduce")
METHODS = ("library", "2level", "2level-shm")


def annotate(runs: list[Run]) -> None:
    """Gives every run's rows a `layout` column ("4x1") from its Slurm record, where it has one."""
    for r in runs:
        slurm: Any = r.meta.get("slurm")
        if isinstance(slurm, dict) and isinstance(slurm.get("nodes"), int) and isinstance(slurm.get("ppn"), int):
            r.rows["layout"] = f"{slurm['nodes']}x{slurm['ppn']}"


def _mpi_layout(d: pd.DataFrame) -> pd.Series:
    return d["nnodes"].fillna(1).astype(int).astype(str) + "x" + d["ppn"].fillna(d["nprocs"]).astype(int).astype(str)


def _root(params: pd.Series) -> pd.Series:
    """"same" (root 0), "rotate", "root N" or "" (unrooted) from the rows' params."""
    r = params.fillna("").astype(str).str.extract(r"(?:^|;)root=([^;]*)", expand=False).fillna("")
    return r.map(lambda v: "same" if v == "0" else v if v in ("", "rotate") else f"root {v}")


def layout_tables(d: pd.DataFrame) -> list[Table]:
    """The table over every label and layout in d, when d has two-level collectives rows.

    d: the frame of tables.build (with value and unit)."""
    c = d[(d["program"] == "collectives") & d["test"].isin(TESTS) & d["method"].isin(METHODS)
          & (d["comm"] == "world")]
    if not c["method"].str.startswith("2level").any():
        return []
    mpi = _mpi_layout(c)
    labels = c["label"].astype(str)
    who = (labels + " · " if labels.nunique() > 1 else "") + c["library"]
    c = c.assign(layout=c["layout"].fillna(mpi) if "layout" in c else mpi, mpi_layout=mpi,
                 root=_root(c["params"]), set=who + " · " + c["method"])
    a = _agg(c, ["test", "root", "bytes", "layout", "set"])
    layouts = sorted(a["layout"].unique(), key=lambda s: (np.prod([int(x) for x in s.split("x")]),
                                                           -int(s.split("x")[0])))
    sets = sorted(a["set"].unique(), key=lambda s: (s.rsplit(" · ", 1)[0], METHODS.index(s.rsplit(" · ", 1)[1])))
    cells = {(t, r, b, lay, s): _cell(v, bool(na)) for t, r, b, lay, s, v, na in
             zip(a["test"], a["root"], a["bytes"], a["layout"], a["set"], a["value"], a["na"], strict=True)}
    order = {"same": 0, "rotate": 1}
    keys = sorted({(t, r, b) for t, r, b, *_ in cells}, key=lambda k: (TESTS.index(k[0]), order.get(k[1], 2), k[1], k[2]))
    rows = [[f"{t} · {r or '-'} · {fmt_bytes(b)}"] + [cells.get((t, r, b, lay, s), "") for lay in layouts for s in sets]
            for t, r, b in keys]
    header = ["collective · root · bytes"] + [s for _ in layouts for s in sets]
    groups = [("", 1)] + [(f"{lay} (nodes x ppn)", len(sets)) for lay in layouts]
    notes = [("Time per call in µs (the statistic of the tables), communicator world; root same = rank 0, "
              "rotate = call k on rank k mod P; a set = [label ·] MPI library · method.")]
    differ = c[c["layout"] != c["mpi_layout"]]
    if not differ.empty:
        seen = sorted(set(zip(differ["layout"], differ["mpi_layout"], strict=True)))
        notes.append("Slurm's layout is not what MPI saw (the launcher did not give MPI the job's nodes): "
                     + ", ".join(f"{s} ran as {m}" for s, m in seen)
                     + " shared-memory nodes, so the two-level algorithms had MPI's nodes.")
    t = Table(f"Layouts: reduce / bcast / allreduce × nodes × ranks per node × root — {', '.join(sorted(set(labels)))}",
              header, rows, groups, notes)
    t.program = "collectives"
    return [t]
