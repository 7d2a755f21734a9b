"""The talk's cross-system table (Gropp & Lusk, "Programming in MPI for
Performance"): rows = machines, columns = the halo rate on MPI_COMM_WORLD,
the even/odd reordered communicator and MPI_Cart_create, for one method and
one stencil, then the rate of one process sending alone and its ratio to the
world halo rate.  Published reference sets (reference/) sit beside measured
and simulated ones, each marked as such."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import schema
from .judge import ORDERING_METHOD
from .keys import CART_MODEL, param_values, without_param
from .render import FAILED, Table, fmt, fmt_bytes

ORDERINGS = ["world", "evenodd", "cart"]


@dataclass
class Choice:
    """Which halo configuration the table shows (the talk's: irecv-isend, 4 neighbours, non-periodic)."""

    method: str = ORDERING_METHOD
    neighbors: int = 4
    periodic: int = 0


def _cell(rows: pd.DataFrame) -> tuple[str, float]:
    if rows.empty:
        return "—", math.nan
    r = rows.iloc[0]
    if bool(r["failed"]):
        return FAILED, math.nan
    if bool(r["na"]):
        return "n/a", math.nan
    v = float(r["rate"])
    return (fmt(v), v) if math.isfinite(v) else ("—", math.nan)


def table(a: pd.DataFrame, names: list[str], choice: Choice) -> Table | None:
    """a: one row per (machine, key) with columns machine, rate (MB/s), na, failed, source and the key
    columns.  None when no machine has a halo row for the chosen method and stencil."""
    h = a[(a["program"] == "halocompare") & (a["neighbors"] == choice.neighbors)]
    if (h["source"] == "published").any():
        h = at_talk_size(h, "machine")
    unstated = h["periodic"] < 0  # a published figure whose periodicity the source does not state
    h = h[(h["periodic"] == choice.periodic) | unstated]
    halo = h[(h["test"] == "halo") & (h["method"] == choice.method) & h["comm"].isin(ORDERINGS)]
    one = h[h["test"] == "one-sender"]
    if halo.empty:
        return None
    # a simulated cart row on its machine's row, the model beside the figure
    halo = halo.assign(model=param_values(halo["params"], CART_MODEL).to_numpy(),
                       params=without_param(halo["params"], CART_MODEL).to_numpy())
    rows: list[list[str]] = []
    marks: set[str] = set()
    models: set[str] = set()  # the cart models of simulated rows
    order = {n: i for i, n in enumerate(names)}
    layouts = halo.drop_duplicates(["machine", *schema.key_roles("layout", "size", "settings")])
    layouts = layouts.assign(o=layouts["machine"].astype(str).map(order).to_numpy()).sort_values(
        ["o", "nprocs", "bytes"], kind="stable")
    for _, lay in layouts.iterrows():
        same = (halo["machine"] == lay["machine"]) & (halo["nprocs"] == lay["nprocs"]) & \
            (halo["nnodes"] == lay["nnodes"]) & (halo["ppn"] == lay["ppn"]) & (halo["bytes"] == lay["bytes"]) & \
            (halo["params"] == lay["params"])
        s = halo[same]
        cells = [_cell(s[s["comm"] == c]) for c in ORDERINGS]
        model = s.loc[s["comm"] == "cart", "model"]
        if len(model) and model.iloc[0] and cells[2][0] not in ("—", FAILED):
            cells[2] = (f"{cells[2][0]} ({model.iloc[0]})", cells[2][1])
            models.add(str(model.iloc[0]))
        o = one[(one["machine"] == lay["machine"]) & (one["nprocs"] == lay["nprocs"])]
        ocell = _cell(o)
        world = cells[0][1]
        ratio = fmt(ocell[1] / world) if math.isfinite(ocell[1]) and math.isfinite(world) and world > 0 else ""
        name = str(lay["machine"])
        src = str(lay["source"])
        if src != "measured":
            name += f" [{src.upper()}]"
            marks.add(src)
        if lay["periodic"] < 0:
            name += " †"
            marks.add("†")
        nn, ppn = lay["nnodes"], lay["ppn"]
        layout = f"{int(lay['nprocs'])}" + (f" ({int(nn)}×{int(ppn)})" if nn > 0 and ppn > 0 else "")
        rows.append([name, layout, fmt_bytes(lay["bytes"]) if lay["bytes"] >= 0 else "", *[c[0] for c in cells],
                     ocell[0], ratio])
    stencil = f"{choice.neighbors} neighbours, {'periodic' if choice.periodic else 'non-periodic'}"
    notes = [("MB/s per process (10^6 bytes one process sends per exchange / time of the slowest rank); "
             "one-sender: one interior process sends alone (its ratio to world shows how much of the halo time "
             "is contention).")]
    if "†" in marks:
        notes.append("†: the source does not say whether the mesh was periodic.")
    if "published" in marks:
        notes.append("PUBLISHED: figures transcribed from the source named in the set's metadata, not measured.")
    if "simulated" in marks:
        notes.append("SIMULATED: SimGrid SMPI model of a platform, not real hardware.")
    if models:
        notes.append(f"cart {', '.join(f'({m})' for m in sorted(models))}: the platform's model of its MPI's "
                     "MPI_Cart_create mapping, which halocompare applies in simulation (SimGrid's own ignores "
                     "reorder; docs/simulate.md).")
    return Table(f"Cross-system: halo {choice.method}, {stencil} — MB/s per process by rank ordering",
                 ["machine", "ranks", "bytes/nbr", *ORDERINGS, "one-sender", "one-sender/world"], rows, notes=notes,
                 program="halocompare")


def at_talk_size(a: pd.DataFrame, machine: str = "set") -> pd.DataFrame:
    """The halocompare rows of each machine and process layout at its size nearest the talk's (the
    published sets' sizes: 16384 B on BG/L, 16000 B on the XTs), so that a machine measured at another
    size, or at several, is set beside the published figures at one size and never on a size axis.
    Empty when no set is published (there is no talk's size)."""
    h = a[(a["program"] == "halocompare") & (a["bytes"] > 0)]
    talk = np.unique(h.loc[h["source"] == "published", "bytes"].to_numpy(float))
    if not len(talk):
        return h.iloc[:0]
    lay = [machine, *schema.key_roles("layout")]
    dist = np.abs(np.log(h["bytes"].to_numpy(float))[:, None] - np.log(talk)[None, :]).min(axis=1)
    # per machine and layout the nearest size (the smaller of two as near)
    near = h[lay + ["bytes"]].assign(dist=dist).sort_values(["dist", "bytes"], kind="stable")
    pick = pd.MultiIndex.from_frame(near.drop_duplicates(lay)[lay + ["bytes"]].astype(str))
    return h[pd.MultiIndex.from_frame(h[lay + ["bytes"]].astype(str)).isin(pick)]


def talk_sizes(h: pd.DataFrame, machine: str = "set") -> str:
    """'16000 B: clusterA, Cray-XT3; 16384 B: BGL-co-processor': the machines of at_talk_size's rows
    by size."""
    s = h.drop_duplicates([machine, "bytes"])
    by: dict[float, list[str]] = {}
    for m, b in zip(s[machine].astype(str), s["bytes"].astype(float)):
        by.setdefault(b, []).append(m)
    return "; ".join(f"{int(b)} B: {', '.join(dict.fromkeys(ms))}" for b, ms in by.items())


def sources(df: pd.DataFrame) -> pd.Series:
    """'published', 'simulated' or 'measured' for every row (a str column by one take of the three words)."""
    kind = np.where(df["published"].to_numpy(bool), 0, np.where(df["simulated"].to_numpy(bool), 1, 2))
    return pd.Series(pd.array(["published", "simulated", "measured"], dtype="str").take(kind), index=df.index)
