"""The steps of one halo exchange under the rules of Gropp and Lusk's "Why six steps?" (docs/halo-timelines.md),
and the same count measured from a trace of it.

The rules: every process sends to its neighbours in one fixed order (halocompare's, src/halocompare/grid.c:
faces -1, +1 of dimension 0, then of dimension 1, then the corners in the same odometer order); a message takes
one step; a receiver takes one message at a time (its network interface); a blocking send (irecv-send)
completes when its receiver takes it, and the process's next send starts only then (a receiver offered several
takes the one waiting longest, then the lowest sender's); nonblocking sends and receives (irecv-isend) are all
posted at once, so the exchange takes as many steps as the busiest interface has messages, in or out (König's
edge colouring: that many always suffice)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .load import InputError
from .timeline import Trace

METHODS = ("irecv-send", "irecv-isend")
BLOCKING_SENDS = ("MPI_Send", "MPI_Ssend", "MPI_Rsend")


def directions(neighbors: int) -> list[tuple[int, int]]:
    """(row, column) offsets in halocompare's order: faces, then corners; each offset -1, +1."""
    if neighbors not in (4, 8):
        raise ValueError(f"a 2-D stencil has 4 or 8 neighbours, not {neighbors}")
    faces = [(-1, 0), (1, 0), (0, -1), (0, 1)]
    corners = [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    return faces + (corners if neighbors == 8 else [])


def sends(rows: int, cols: int, neighbors: int, periodic: bool) -> list[list[int]]:
    """Each rank's destinations in its send order (row-major ranks; an edge has no neighbour unless periodic)."""
    out: list[list[int]] = []
    for r in range(rows * cols):
        i, j = divmod(r, cols)
        dst = []
        for di, dj in directions(neighbors):
            a, b = i + di, j + dj
            if periodic:
                a, b = a % rows, b % cols
            elif not (0 <= a < rows and 0 <= b < cols):
                continue
            dst.append(a * cols + b)
        out.append(dst)
    return out


def steps(rows: int, cols: int, neighbors: int, periodic: bool, method: str) -> int:
    """The number of steps the exchange takes under the rules above."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method}")
    todo = [list(d) for d in sends(rows, cols, neighbors, periodic)]  # each rank's messages not yet taken
    if method == "irecv-isend":  # all posted: the busiest interface's messages, in or out (König: enough)
        into = np.bincount([d for dst in todo for d in dst], minlength=len(todo))
        return int(max(into.max(initial=0), max(map(len, todo))))
    since = [0] * len(todo)  # the step each rank's current send was offered from
    step = 0
    while any(todo):
        offers: dict[int, list[tuple[int, int]]] = {}  # receiver -> (offered since, sender)
        for r, dst in enumerate(todo):
            if dst:
                offers.setdefault(dst[0], []).append((since[r], r))
        step += 1
        for receiver in offers:  # each takes the send waiting longest (then the lowest sender)
            r = min(offers[receiver])[1]
            todo[r].pop(0)
            since[r] = step
    return step


def predicted(rows: int, cols: int) -> pd.DataFrame:
    """Steps per stencil, periodicity and method on a rows x cols grid."""
    return pd.DataFrame([{"neighbors": n, "periodic": p, "method": m, "steps": steps(rows, cols, n, p, m)}
                         for n in (4, 8) for p in (False, True) for m in METHODS])


@dataclass
class Measured:
    """One traced stretch: its test, its makespan over the transfer time of one message."""

    key: str
    method: str
    neighbors: int
    periodic: bool
    bytes: int
    makespan_us: float
    transfer_us: float

    @property
    def steps(self) -> float:
        return self.makespan_us / self.transfer_us


def transfer_us(t: Trace) -> float:
    """One message's transfer time: the shortest blocking send of the trace (a send that completes when its
    receiver took it, alone); nan when the trace has none."""
    d = t.calls[t.calls["name"].isin(BLOCKING_SENDS) & (t.calls["dur"] > 0)]["dur"]
    return float(d.min()) if len(d) else float("nan")


def measured(t: Trace, one_us: float | None = None) -> list[Measured]:
    """Per stretch of the trace: the makespan of one exchange (its calls, first start to last end, over the
    ranks; divided by the stretch's iterations: with several, the ranks' waits between them count too) and the transfer time (transfer_us, or one_us when given)."""
    one = one_us if one_us is not None and math.isfinite(one_us) else transfer_us(t)
    out = []
    stretches = [st for st in t.meta.get("stretches") or [] if isinstance(st, dict) and "begin_us" in st]
    # a stretch's end is rank 0's: its calls are those from its begin to the next stretch's
    ends = [float(st["begin_us"]) for st in stretches[1:]] + [float("inf")]
    for st, until in zip(stretches, ends):
        test = st.get("test")
        if not isinstance(test, dict) or test.get("program") != "halocompare":
            continue
        key = str(test.get("key", ""))
        words = key.split("/")
        nbr = next((w for w in words if w.endswith("-nbr")), "")
        c = t.calls[(t.calls["ts"] >= float(st["begin_us"])) & (t.calls["ts"] < until)]
        if c.empty or not nbr:
            continue
        span = float((c["ts"] + c["dur"]).max() - c["ts"].min()) / max(int(test.get("iters", 1)), 1)
        out.append(Measured(key, str(test.get("method", "")), int(nbr.split("-")[0]), "periodic" in words,
                            int(test.get("bytes", -1)), span, one))
    if not out:
        raise InputError(f"{t.path}: no traced halocompare exchange in the trace (halocompare --trace ...)")
    if not np.isfinite(one) or one <= 0:
        raise InputError(f"{t.path}: no blocking send in the trace to take one transfer time from (trace an "
                         "irecv-send exchange too, or give pingpong results or --alpha and --bandwidth)")
    return out
