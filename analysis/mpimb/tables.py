"""Tables of a result set: one block per (label, MPI library, program, processes, nodes, processes
per node), each built by its program (mpimb.registry), then the programs' tables over the whole set.
Takes the frame keys.prepared made (repeated runs resolved once)."""

from __future__ import annotations

import pandas as pd

from .registry import PROGRAMS, program
from .render import BLOCK, Table, context
from .units import with_values


def blocks(df: pd.DataFrame) -> int:
    """How many blocks (BLOCK: one machine's run of one program at one size) df holds."""
    return int(df.groupby(BLOCK, sort=False, dropna=False).ngroups)


def build(df: pd.DataFrame, stat: str = "median", limit: int | None = None) -> list[Table]:
    """Every table for the rows in df (keys.prepared's frame: repeated runs resolved; callers warn);
    limit: the tables of the first `limit` blocks only (the set's own tables always)."""
    d = with_values(df, stat)
    out: list[Table] = []
    for i, (_, g) in enumerate(d.groupby(BLOCK, sort=True, dropna=False)):
        if limit is not None and i >= limit:
            break
        prog = str(g["program"].iloc[0])
        made = program(prog).tables(g, context(g))
        for t in made:
            t.program = prog
        out += made
    for p in PROGRAMS.values():
        if p.set_tables is not None:
            out += p.set_tables(d)
    return out
