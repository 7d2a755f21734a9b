"""The halo recommendation of a machine (docs/report.md, "Recommendation"): from halocompare results, per
machine (label, MPI library), process layout, stencil (dimensions, neighbours, periodicity), data layout
(separate buffers, or --layout array) and size range, the method(s), packing and communicator to use, the
margin to the next best and what it rests on — as a table (report, recommend, compare) and as JSON
(schema/recommendation.schema.json) that an application or a build system can read.

Every comparison is the one judge's (judge.judgement: across launches where a configuration has several,
inside the one launch otherwise, said so); nothing here decides what is outside the noise.  At one size:
- the options (method × packing × settings) on one communicator (world where measured, as the findings) are
  ranked by time; those not called slower than the fastest are **tied** with it and recommended together;
  the margin is the judgement of the fastest option called slower (the next best) against the best;
- the packing (--layout array): each packing at its best across methods (programs.halocompare.
  best_per_packing), the packings so ranked — so neither is judged on the other's method; where no strided
  face crossed ranks (a prime process count: programs.halocompare.strided_faces_crossed) it says so;
- the communicator: the communicators of the first recommended option that can be compared (not across
  communicators inside one launch where its objects keep a speed of their own: one-sided windows,
  persistent requests; not at all at 2 processes, where every communicator is the same map).
Adjacent sizes make one size range while some options, a packing and a communicator are recommended at every
one of them (those are the range's); its margin is its weakest size's (the least judged, then the smallest)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from . import __version__, schema
from .judge import RULE, Judgement, judgement, one_launch
from .keys import LAYOUT, MACHINE, mocked, param_numbers, param_values, split_overlap, without_param
from .load import groups
from .programs.halocompare import (
    PERSISTENT,
    PHASE_LABELS,
    PHASES,
    best_per_packing,
    families,
    no_strided_face,
    strided_faces_crossed,
)
from .render import Table, fmt_bytes, write_file

KIND = "mpimb-recommendation"
VERSION = 1
# params that are not a choice of the user's code: how repetitions started, the stencil's dimensions, the data
# layout and packing (columns of their own here), the random communicator's seed (matched across communicators)
NOT_SETTINGS = ("sync", "dims", "layout", "packing", "seed")
STENCIL = ["dims", "neighbors", "periodic", "data_layout"]
SHOWN = 4  # tied options named in a table cell (the JSON has them all)
STATUS = ("judged", "partly judged", "not judged", "alone")  # best first; a range takes its weakest size's


def halo_rows(df: pd.DataFrame) -> pd.DataFrame:
    """keys.prepared's halocompare halo rows a recommendation may use (measured, not n/a, not FAILED, not
    --overlap), with columns dims, data_layout (buffers | array), packing and settings (the other params)."""
    h = split_overlap(df)[0]
    h = h[(h["program"] == "halocompare") & (h["test"] == "halo") & ~h["na"].to_numpy(bool)
          & ~mocked(h["params"]).to_numpy()  # --mock rows exchange nothing
          & ~h["failed"].to_numpy(bool) & np.isfinite(h["time_median_s"].to_numpy(float))
          & (h["time_median_s"].to_numpy(float) > 0)]
    if h.empty:
        return h.assign(dims=[], data_layout=[], packing=[], settings=[])
    settings = h["params"].fillna("").astype(str)
    for k in NOT_SETTINGS:
        settings = without_param(settings, k)
    lay = param_values(h["params"], "layout")
    return h.assign(dims=param_numbers(h["params"], "dims").fillna(2).astype(int).to_numpy(),
                    data_layout=np.where(lay == "", "buffers", lay), packing=param_values(h["params"], "packing"),
                    settings=settings.to_numpy())


def option(r: dict[str, Any]) -> dict[str, Any]:
    """What the user's code chooses, from a row: method, packing ('' with separate buffers), communicator and
    any other settings ('' where none)."""
    return {"method": str(r["method"]), "packing": str(r["packing"]), "comm": str(r["comm"]),
            "settings": str(r["settings"])}


def name(r: dict[str, Any], comm: bool = False) -> str:
    """'irecv-isend [pack]', with the communicator where asked and the settings where there are any."""
    extra = [x for x in (r["packing"], r["settings"]) if x]
    return (f"{r['method']}" + (f" [{', '.join(extra)}]" if extra else "")
            + (f" on {r['comm']}" if comm else ""))


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass
class Pick:
    """The options of one comparison, judged against the fastest: tied (not called slower; best first, each with
    its judgement against the best), the next best (the fastest called slower) and the margin to it, and those
    the judge could not judge (with its words)."""

    use: list[tuple[dict[str, Any], Judgement | None]]
    next: dict[str, Any] | None = None
    margin: Judgement | None = None
    unjudged: list[tuple[dict[str, Any], Judgement]] = field(default_factory=list)

    @property
    def status(self) -> str:
        others = len(self.use) - 1 + (self.next is not None) + len(self.unjudged)
        if others == 0:
            return "alone"
        if not self.unjudged:
            return "judged"
        return "not judged" if len(self.unjudged) == others else "partly judged"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name(r) for r, _ in self.use)

    def margin_factor(self) -> float:
        """The margin's factor; 1 where no option was called slower (no margin at all)."""
        return self.margin.factor if self.margin is not None else 1.0

    def words(self, most: int = SHOWN) -> str:
        """The recommendation in words: 'a ≈ b' (tied; past `most`, how many more), with what was not judged."""
        s = " ≈ ".join(self.names[:most]) + (f" (+ {len(self.names) - most} more within the noise)"
                                             if len(self.names) > most else "")
        if self.status in ("not judged", "partly judged"):
            s += f" ({self.status}: {self.unjudged[0][1].words}" + (
                f"; {len(self.unjudged)} options" if len(self.unjudged) > 1 else "") + ")"
        return s

    def weakness(self) -> tuple[int, float]:
        """Larger is weaker: the less judged, then the smaller margin."""
        return STATUS.index(self.status), -self.margin_factor()

    def margin_words(self, label: Callable[[dict[str, Any]], str] = name) -> str:
        if self.margin is not None and self.next is not None:
            m = self.margin
            return f"{m.factor:.2f}× [{m.lo:.3g}, {m.hi:.3g}] over {label(self.next)}"
        if self.status == "alone":
            return "only one measured"
        if self.status == "not judged":
            return "not judged"
        return "none: the others are within the noise" + (" or not judged" if self.unjudged else "")

    def to_json(self) -> dict[str, Any]:
        def entry(r: dict[str, Any], j: Judgement | None) -> dict[str, Any]:
            return {**option(r), "mbps": _num(float(r["mbps"])), "time_s": _num(float(r["time_median_s"])),
                    "factor": _num(j.factor) if j else 1.0, "lo": _num(j.lo) if j else None,
                    "hi": _num(j.hi) if j else None, "words": j.words if j else "the fastest"}

        m = self.margin
        return {"status": self.status, "use": [entry(r, j) for r, j in self.use],
                "margin": None if m is None or self.next is None else
                {"next": option(self.next), "factor": _num(m.factor), "lo": _num(m.lo), "hi": _num(m.hi),
                 "words": m.words},
                "not_judged": [{**option(r), "words": j.words} for r, j in self.unjudged]}


def choose(rows: pd.DataFrame) -> Pick:
    """rows (one per option) judged against the fastest by the one judge: tied where not called slower (called
    faster, against the ranking by time, counts as tied: neither is shown better), the next best the fastest
    called slower, the rest not judged (too few launches or repetitions)."""
    rec = cast(list[dict[str, Any]], rows.sort_values("time_median_s", kind="stable").to_dict("records"))
    best = rec[0]
    pick = Pick([(best, None)])
    for r in rec[1:]:
        j = judgement(cast(pd.Series, r), cast(pd.Series, best))  # (it reads a row by key only)
        if j.verdict in ("few", "unjudged"):
            pick.unjudged.append((r, j))
        elif j.verdict == "called" and j.factor > 1:
            if pick.next is None:
                pick.next, pick.margin = r, j
        else:
            pick.use.append((r, j))
    return pick


@dataclass
class Size:
    """The recommendation at one size: the options on the reference communicator, the packing, the
    communicator (or why it is not chosen: comm_note)."""

    bytes: float
    method: Pick
    packing: Pick | None
    comm: Pick | None
    comm_note: str
    comm_on: dict[str, Any] | None

    def packing_names(self) -> list[str] | None:
        return [str(r["packing"]) for r, _ in self.packing.use] if self.packing else None

    def comm_names(self) -> list[str]:
        return [str(r["comm"]) for r, _ in self.comm.use] if self.comm else [self.comm_note]

    def weakness(self) -> tuple[int, float]:
        return self.method.weakness()


def _own_speed(method: str) -> bool:
    """A method whose objects keep a speed of their own for the launch (one-sided windows, persistent requests)."""
    return families(pd.Series([method])).iloc[0] == schema.ONE_SIDED or method in PERSISTENT


def _comm(s: pd.DataFrame, method: Pick, nprocs: float) -> tuple[Pick | None, str, dict[str, Any] | None]:
    """The communicator pick on the first recommended option that can be compared across communicators, or why
    there is none."""
    comms = list(dict.fromkeys(s["comm"].astype(str)))
    if len(comms) < 2:
        return None, f"{comms[0]} (the only communicator measured)", None
    if nprocs <= 2:
        return None, (f"any: at {int(nprocs)} processes every communicator ({', '.join(comms)}) is the same map of "
                      "the ranks onto the grid"), None
    for r, _ in method.use:
        if _own_speed(str(r["method"])) and one_launch(s):
            continue
        rows = s[(s["method"] == r["method"]) & (s["packing"] == r["packing"]) & (s["settings"] == r["settings"])]
        if rows["comm"].nunique() > 1:
            return choose(rows), "", r
    return None, ("not judged inside one launch: the recommended methods' objects (windows, persistent requests) "
                  "keep a speed of their own for the launch; judge across launches (scripts/launches)"), None


def at_size(s: pd.DataFrame, b: float, nprocs: float) -> Size:
    """The recommendation for the rows s of one stencil, data layout and size."""
    ref = "world" if (s["comm"] == "world").any() else str(s["comm"].iloc[0])
    w = s[s["comm"] == ref]
    method = choose(w)
    packing = None
    if (w["packing"] != "").any() and w.loc[w["packing"] != "", "packing"].nunique() > 1:
        packing = choose(best_per_packing(w, w["packing"]))
    comm, note, on = _comm(s, method, nprocs)
    return Size(b, method, packing, comm, note, on)


def _in_all(lists: list[list[str]]) -> list[str]:
    """The names in every list, in the first list's order."""
    return [x for x in lists[0] if all(x in other for other in lists[1:])]


def common(sizes: list[Size]) -> tuple[list[str], list[str] | None, list[str]] | None:
    """The options, packings (None without a packing pick) and communicators recommended at every one of sizes,
    or None where one of them is left empty: then the sizes are not one range."""
    m = _in_all([list(z.method.names) for z in sizes])
    pks = [z.packing_names() for z in sizes]
    pk = None if all(x is None for x in pks) else _in_all([x or [] for x in pks])
    c = _in_all([z.comm_names() for z in sizes])
    return (m, pk, c) if m and c and pk != [] else None


@dataclass
class Range:
    """Adjacent sizes of one stencil where some options (and a packing and a communicator) are recommended at every
    size: those are the range's; its weakest size states the margin."""

    machine: dict[str, Any]
    stencil: dict[str, Any]
    sizes: list[Size]
    rests_on: dict[str, Any]

    @property
    def weakest(self) -> Size:
        return max(self.sizes, key=lambda z: z.weakness())

    @property
    def shared(self) -> tuple[list[str], list[str] | None, list[str]]:
        got = common(self.sizes)
        assert got is not None  # (ranges() builds a range only while it has some)
        return got

    def use(self) -> list[dict[str, Any]]:
        """The rows of the options recommended at every size (the first size's rows)."""
        rows = {name(r): r for r, _ in self.sizes[0].method.use}
        return [rows[n] for n in self.shared[0]]

    def use_words(self) -> str:
        names = self.shared[0]
        s = " ≈ ".join(names[:SHOWN]) + (f" (+ {len(names) - SHOWN} more within the noise)"
                                         if len(names) > SHOWN else "")
        m = self.weakest.method
        if m.status in ("not judged", "partly judged"):
            s += f" ({m.status}: {m.unjudged[0][1].words})"
        return s

    def bytes_text(self) -> str:
        lo, hi = self.sizes[0].bytes, self.sizes[-1].bytes
        return fmt_bytes(lo) if lo == hi else f"{fmt_bytes(lo)}–{fmt_bytes(hi)}"

    def strided(self) -> bool | None:
        """Whether a strided face crossed ranks (None with separate buffers: there are no faces)."""
        if self.stencil["layout"] != "array":
            return None
        return strided_faces_crossed(float(self.machine["nprocs"]), float(self.stencil["dims"]))

    def weakest_of(self, which: str) -> tuple[float, Pick] | None:
        """The weakest size's pick of 'packing' or 'comm' (the less judged, then the smaller margin), or None."""
        picks = [(z.bytes, p) for z in self.sizes if (p := getattr(z, which)) is not None]
        return max(picks, key=lambda bp: bp[1].weakness()) if picks else None

    def _at(self, b: float) -> str:
        return f" at {fmt_bytes(b)} B" if len(self.sizes) > 1 else ""

    def packing_words(self) -> str:
        w, names = self.weakest_of("packing"), self.shared[1]
        if w is None or names is None:
            return "—" if self.stencil["layout"] != "array" else "one packing measured"
        b, p = w
        s = (f"{' ≈ '.join(names)} ({p.margin_words(lambda r: str(r['packing']))}{self._at(b)}; each packing at its "
             "best across methods)")
        if self.strided() is False:
            s += f"; {no_strided_face(float(self.machine['nprocs']), float(self.stencil['periodic']))}"
        return s

    def comm_words(self) -> str:
        w = self.weakest_of("comm")
        if w is None:
            return self.weakest.comm_note
        b, p = w
        on = next(z.comm_on for z in self.sizes if z.bytes == b)
        return (f"{' ≈ '.join(self.shared[2])} ({p.margin_words(lambda r: str(r['comm']))}{self._at(b)}"
                + (f", with {name(on)}" if on else "") + ")")

    def why(self) -> dict[str, Any] | None:
        """Where the time goes (--phases): the phases of the first option to use at the weakest size, seconds
        per exchange and their shares in words; None where that row has no phases."""
        r = self.weakest.method.use[0][0]
        secs = {p: float(r.get(f"phase_{p}_s", math.nan)) for p in PHASES}
        if not any(math.isfinite(v) for v in secs.values()):
            return None
        total = sum(v for v in secs.values() if math.isfinite(v))
        shares = sorted(((v / total if total > 0 else 0.0, p) for p, v in secs.items() if math.isfinite(v)),
                        reverse=True)
        words = ", ".join(f"{PHASE_LABELS.get(p, p)} {100 * f:.0f} %" for f, p in shares)
        return {**{f"{p}_s": _num(v) for p, v in secs.items()}, "words": f"{name(r)}: {words}"}

    def to_json(self) -> dict[str, Any]:
        z = self.weakest

        def size(x: Size) -> dict[str, Any]:
            return {"bytes": int(x.bytes), "method": x.method.to_json(),
                    "packing": x.packing.to_json() if x.packing else None,
                    "communicator": x.comm.to_json() if x.comm else None, "communicator_note": x.comm_note}

        return {**self.stencil, "bytes_min": int(self.sizes[0].bytes), "bytes_max": int(self.sizes[-1].bytes),
                "weakest_bytes": int(z.bytes), "status": z.method.status,
                "use": [option(r) for r in self.use()], "method": z.method.to_json(),
                "packing_use": self.shared[1], "packing": pk[1].to_json() if (pk := self.weakest_of("packing")) else None,
                "strided_faces_crossed": self.strided(),
                "communicator_use": self.shared[2] if z.comm else None,
                "communicator": cm[1].to_json() if (cm := self.weakest_of("comm")) else None,
                "communicator_note": z.comm_note or None, "rests_on": self.rests_on, "why": self.why(),
                "sizes": [size(x) for x in self.sizes]}


def rests_on(g: pd.DataFrame) -> dict[str, Any]:
    """What a recommendation rests on: launches (the fewest of its rows), how it was judged, the machine."""
    n = int(g["launches"].min()) if "launches" in g else 1
    r = g.iloc[0]
    return {"launches": n, "basis": "across launches" if not one_launch(g) else "this launch",
            "library": str(r["library"]), "nprocs": int(r["nprocs"]),
            "nnodes": int(r["nnodes"]) if pd.notna(r["nnodes"]) else None,
            "ppn": int(r["ppn"]) if pd.notna(r["ppn"]) else None,
            "oversubscribed": bool(g["oversubscribed"].any()), "busy": bool(g.get("busy", pd.Series([False])).any()),
            "simulated": bool(g["simulated"].any()) if "simulated" in g else False}


def ranges(df: pd.DataFrame) -> list[Range]:
    """Every recommendation of keys.prepared's frame df: per machine, layout, stencil and size range."""
    h = halo_rows(df)
    out: list[Range] = []
    for (label, lib, nprocs, nn, ppn, dims, nbrs, per, lay), g in groups(h, [*MACHINE, *LAYOUT, *STENCIL],
                                                                        dropna=False):
        machine = {"label": str(label), "library": str(lib), "nprocs": int(nprocs),
                   "nnodes": int(nn) if pd.notna(nn) else None, "ppn": int(ppn) if pd.notna(ppn) else None}
        stencil = {"dims": int(dims), "neighbors": int(nbrs), "periodic": bool(per == 1), "layout": str(lay)}
        base = rests_on(g)
        cur: list[Size] = []
        for (b,), s in groups(g, ["bytes"]):
            z = at_size(s, float(b), float(nprocs))
            if cur and common([*cur, z]) is None:
                out.append(Range(machine, stencil, cur, base))
                cur = []
            cur.append(z)
        if cur:
            out.append(Range(machine, stencil, cur, base))
    return out


def stencil_text(st: dict[str, Any]) -> str:
    return (f"{st['dims']}-D {st['neighbors']}-nbr {'periodic' if st['periodic'] else 'non-periodic'}, "
            f"{'array' if st['layout'] == 'array' else 'buffers'}")


def machine_text(m: dict[str, Any]) -> str:
    nodes = f" ({m['nnodes']}×{m['ppn']})" if m["nnodes"] is not None and m["ppn"] is not None else ""
    return f"{m['label']} · {m['library']}, np{m['nprocs']}{nodes}"


def rests_text(r: dict[str, Any]) -> str:
    n = r["launches"]
    s = f"{n} launch{'es' if n != 1 else ''}, " + ("across launches" if r["basis"] == "across launches"
                                                   else "holds for this launch")
    marks = [w for w, on in (("oversubscribed", r["oversubscribed"]), ("busy machine", r["busy"]),
                             ("SIMULATED", r["simulated"])) if on]
    return s + (f" [{', '.join(marks)}]" if marks else "")


HEADER = ["machine", "stencil", "bytes", "use", "margin to the next best", "packing", "communicator", "rests on"]


def table(rs: list[Range], ctx: str = "") -> Table | None:
    """The recommendation table: one row per size range (None without one)."""
    if not rs:
        return None
    rows = [[machine_text(r.machine), stencil_text(r.stencil), r.bytes_text(), r.use_words(),
             r.weakest.method.margin_words() + (f" (at {fmt_bytes(r.weakest.bytes)} B, the weakest)"
                                                if len(r.sizes) > 1 else ""),
             r.packing_words(), r.comm_words(), rests_text(r.rests_on)] for r in rs]
    whys = [r.why() for r in rs]
    head = HEADER
    if any(whys):  # --phases: why the time is what it is (the phases of the option to use)
        head = [*HEADER, "why: where the time goes"]
        rows = [[*row, w["words"] if w else "—"] for row, w in zip(rows, whys)]
    notes = [(f"Judged by the one judge ({RULE}). 'a ≈ b': at no size of the range called slower than the fastest "
              "— use either. The margin: the fastest option against the fastest called slower, time ratio and its "
              "interval, at the range's weakest size. Options are judged on world (else the first communicator measured); "
              "the communicator on the first recommended option comparable across communicators."),
             "Machine-readable: mpimb-report recommend SET -o FILE.json (docs/report.md, \"Recommendation\")."]
    return Table("Recommendation: the halo exchange to use" + (f" — {ctx}" if ctx else ""), head, rows,
                 notes=notes, program="halocompare", keys=3)


def document(rs: list[Range], sources: list[str]) -> dict[str, Any]:
    """The JSON document (schema/recommendation.schema.json)."""
    machines: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rs:
        key = tuple(r.machine.values())
        machines.setdefault(key, {**r.machine, "recommendations": []})["recommendations"].append(r.to_json())
    return {"kind": KIND, "version": VERSION, "generator": f"mpimb-report {__version__}", "rule": RULE,
            "sources": sources, "machines": list(machines.values())}


def write(rs: list[Range], sources: list[str], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    write_file(out, json.dumps(document(rs, sources), indent=1, allow_nan=False) + "\n")


def side_by_side(frames: list[tuple[str, pd.DataFrame]]) -> Table | None:
    """Two or more machines' recommendations (name, keys.prepared frame) side by side: a row per process count,
    stencil and size, merged over adjacent sizes where every machine's cell is the same; a cell is the options
    to use and the margin to the next best."""
    cells: dict[tuple[Any, ...], dict[str, str]] = {}
    for mname, df in frames:
        for r in ranges(df):
            for z in r.sizes:
                key = (r.machine["nprocs"], *r.stencil.values(), z.bytes)
                m = z.method
                cells.setdefault(key, {})[mname] = m.words() + (
                    f" · {m.margin.factor:.2f}× [{m.margin.lo:.3g}, {m.margin.hi:.3g}]"
                    if m.margin is not None else "")
    if not cells:
        return None
    names = [n for n, _ in frames]
    rows: list[list[str]] = []
    last: tuple[Any, ...] | None = None
    for key in sorted(cells):
        vals = [cells[key].get(n, "—") for n in names]
        head = key[:-1]
        here = (head, tuple(vals))
        if rows and last == here:  # the same recommendation as the size before: widen that row's range
            rows[-1][2] = rows[-1][2].split("–")[0] + f"–{fmt_bytes(key[-1])}"
            continue
        last = here
        st = {"dims": key[1], "neighbors": key[2], "periodic": key[3], "layout": key[4]}
        rows.append([f"np{key[0]}", stencil_text(st), fmt_bytes(key[-1]), *vals])
    return Table("Recommendations side by side: the halo exchange to use on each machine", ["ranks", "stencil",
                 "bytes", *names], rows, notes=[(f"Each machine judged on its own by the one judge ({RULE}); "
                                                 "a ≈ b: tied; then the margin to the next best (time ratio and "
                                                 "interval). mpimb-report recommend SET -o FILE.json: the JSON.")],
                 program="halocompare", keys=3)
