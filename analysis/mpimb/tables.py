"""Tables of a result set: one block per (label, MPI library, program, processes, nodes, processes
per node), each built by its program (mpimb.registry), then the programs' tables over the whole set.
Takes the frame keys.prepared made (repeated runs resolved once)."""

from __future__ import annotations

import pandas as pd

from .registry import PROGRAMS, program
from .render import BLOCK, Table, context
from .units import with_values


def build(df: pd.DataFrame, stat: str = "median") -> list[Table]:
    """Every table for the rows in df (keys.prepared's frame: repeated runs resolved; callers warn)."""
    d = with_values(df, stat)
    out: list[Table] = []
    for _, g in d.groupby(BLOCK, sort=True, dropna=False):
        prog = str(g["program"].iloc[0])
        made = program(prog).tables(g, context(g))
        for t in made:
            t.program = prog
        out += made
    for p in PROGRAMS.values():
        if p.set_tables is not None:
            out += p.set_tables(d)
    return out
