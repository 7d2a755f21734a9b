"""mpimb-report tune: the library's tuning file from `collectives --algorithms` results
(docs/collectives.md, "The library's own algorithms").

For every collective, communicator size and measured message size, the choice is the fastest of the
library's algorithms where its advantage over the library's own choice (algorithm = the JSON's
library_algorithms.<coll>.default: "ignore" in Open MPI, "auto" in MPICH) is outside the noise —
judge.verdict, the one rule (across launches where a set has several, else inside the one launch) —
and the library's own choice otherwise.  A message size between two measured ones takes the choice
of the next larger measured size; past the largest, the library decides.

- Open MPI: the classic coll_tuned rules file (the only format 4.1 reads: collectives, then per
  communicator size its rules `msg_size algorithm faninout segsize`, a rule at message size 0 for
  every communicator size; algorithm 0 = the library's own decision), and the mca-params.conf
  lines that make the library read it.  Message size as coll_tuned computes it: bytes of one rank's
  buffer for bcast, reduce, allreduce; times the communicator size for allgather and alltoall.
- MPICH: the selection JSON (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE).  MPICH takes the file
  instead of its own selection, and asserts on a collective the file lacks, so the file is the
  library's own selection (recorded by the run: library_algorithms.default_selection) with the
  measured collectives' intra-communicator branch replaced for the measured communicator sizes
  only; every other case keeps the library's own branch.  Message size as MPICH's selection
  computes it: avg_msg_size (one rank's bytes) for bcast, reduce, allreduce, alltoall;
  total_msg_size (bytes × ranks) for allgather.

The file says which results it came from (Open MPI: comment lines; MPICH's JSON holds no comment,
so a `.sources` file beside it)."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .judge import Finding, few_launches, plain, tail, verdict
from .keys import launch_parts, param_values, split_sync, without_param
from .launches import MIN_LAUNCHES, Ratio
from .launches import ratio as launch_ratio
from .load import Run, frame, groups
from .render import Table, fmt, fmt_bytes, write_file

# Open MPI's collective IDs in the rules file (coll_base_functions.h, COLLTYPE_T)
OMPI_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "barrier": 6, "bcast": 7, "reduce": 11}
# collectives whose message size (Open MPI's rules, MPICH's total_msg_size) is one rank's bytes × ranks
TIMES_RANKS = {"allgather", "alltoall"}
MPICH_TOTAL = {"allgather"}  # MPICH's selection knows only total_msg_size for these
NO_SIZE = {"barrier"}


class TuneError(Exception):
    """One line, and the exit code (1: the input cannot give a tuning file)."""


@dataclass
class Choice:
    test: str
    ranks: int
    bytes: float  # NaN: barrier
    default: pd.Series
    best: pd.Series | None  # the fastest other algorithm, when there is one
    called: bool  # best beats default outside the noise

    @property
    def algorithm(self) -> str:
        return str(self.best["algorithm"]) if self.called and self.best is not None else str(self.default["algorithm"])


def _algorithms(runs: list[Run]) -> tuple[str, dict[str, Any]]:
    """The library and its collectives' algorithms (name -> value, default) from the runs' metadata."""
    libs = {str(r.meta["library_algorithms"].get("library", "")) for r in runs if "library_algorithms" in r.meta}
    if not libs:
        raise TuneError("no results of `collectives --algorithms` here (their JSON has no library_algorithms): "
                        "nothing to tune from")
    if len(libs) > 1:
        raise TuneError(f"results of several MPI libraries ({', '.join(sorted(libs))}): tune one library at a time")
    lib = libs.pop()
    if lib not in ("Open MPI", "MPICH"):
        raise TuneError(f"no tuning file format known for the library '{lib}'")
    merged: dict[str, Any] = {}
    for r in runs:
        merged.update(r.meta.get("library_algorithms", {}).get("collectives", {}))
    return lib, merged


def choices(df: pd.DataFrame, colls: dict[str, Any]) -> list[Choice]:
    """One Choice per (collective, communicator size, message size) of the algorithm rows in df."""
    d = df[(df["program"] == "collectives") & (df["method"] == "library") & df["comm"].isin(["world", "dup"])]
    d = d.assign(algorithm=param_values(d["params"], "algorithm"))
    d = d[(d["algorithm"] != "") & d["test"].isin(list(colls))]
    if d.empty:
        raise TuneError("no rows with algorithm= (run `collectives --algorithms library`): nothing to tune from")
    ok = d[~d["na"] & ~d["failed"] & np.isfinite(d["time_median_s"].to_numpy(float))]
    out: list[Choice] = []
    keys = ["test", "nprocs", "bytes"]
    for (test, ranks, b), g in ok.groupby(keys, dropna=False, sort=True):
        dflt = g[g["algorithm"] == colls[str(test)]["default"]]
        if dflt.empty:
            continue
        a = dflt.iloc[0]
        others = g[g["algorithm"] != a["algorithm"]].sort_values("time_median_s", kind="stable")
        best = others.iloc[0] if len(others) else None
        called = best is not None and best["time_median_s"] < a["time_median_s"] and verdict(best, a) == "called"
        out.append(Choice(str(test), int(ranks), float(b), a, best, bool(called)))
    if not out:
        raise TuneError("no size has a measured row of the library's own choice (algorithm=auto / ignore) to "
                        "compare with")
    return out


def _msg(c: Choice) -> int:
    if c.test in NO_SIZE or math.isnan(c.bytes):
        return 0
    return int(c.bytes) * (c.ranks if c.test in TIMES_RANKS else 1)


def _by_comm(cs: list[Choice]) -> dict[str, dict[int, list[Choice]]]:
    out: dict[str, dict[int, list[Choice]]] = {}
    for c in cs:
        out.setdefault(c.test, {}).setdefault(c.ranks, []).append(c)
    for per in out.values():
        for lst in per.values():
            lst.sort(key=_msg)
    return out


def ompi_rules(cs: list[Choice], colls: dict[str, Any], sources: list[str]) -> str:
    """The classic coll_tuned rules file: per collective and communicator size, a rule at 0 and one
    where the choice changes; a size takes the choice of the next larger measured size (rule at the
    previous measured size + 1), past the largest measured size the library's own decision (0)."""
    lines = ["# Open MPI coll_tuned dynamic rules (classic format), written by mpimb-report tune from:"]
    lines += [f"#   {s}" for s in sources]
    lines.append("# per collective: its ID, the communicator sizes; per size: the rules `msg_size algorithm "
                 "faninout segsize` (0: the library's own choice)")
    per = _by_comm(cs)
    lines.append(f"{len(per)}  # collectives")
    for test in sorted(per, key=lambda t: OMPI_IDS[t]):
        values = colls[test]["algorithms"]
        lines.append(f"{OMPI_IDS[test]}  # {test}")
        lines.append(f"{len(per[test])}  # communicator sizes")
        for ranks in sorted(per[test]):
            rules: list[tuple[int, int]] = []
            start = 0
            for c in per[test][ranks]:
                v = int(values[c.algorithm])
                if not rules or rules[-1][1] != v:
                    rules.append((start, v))
                start = _msg(c) + 1
            if test not in NO_SIZE and rules[-1][1] != 0:
                rules.append((start, 0))
            lines.append(f"{ranks}  # communicator size")
            lines.append(f"{len(rules)}  # rules")
            lines += [f"{m} {v} 0 0" for m, v in rules]
    return "\n".join(lines) + "\n"


def mca_params(rules_path: Path) -> str:
    return ("# mca-params.conf lines (or OMPI_MCA_<name>=<value>, or mpiexec --mca <name> <value>)\n"
            "coll_tuned_use_dynamic_rules = 1\n"
            f"coll_tuned_dynamic_rules_filename = {rules_path.resolve()}\n")


def _container(test: str, name: str, base_text: str) -> str:
    """MPICH's container for the algorithm a control variable calls name ("binomial" ->
    algorithm=MPIR_Bcast_intra_binomial), as the library's own selection spells it where it does."""
    coll = test.capitalize()
    for form in (f"MPIR_{coll}_intra_{name}", f"MPIR_{coll}_allcomm_{name}"):
        if f"algorithm={form}" in base_text:
            return f"algorithm={form}"
    return f"algorithm=MPIR_{coll}_{'allcomm' if name == 'nb' else 'intra'}_{name}"


def mpich_selection(cs: list[Choice], colls: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """MPICH's own selection with, for each measured collective and communicator size P, the branch
    `comm_size<P` (the library's) / `comm_size<=P` (the measured choice per message size) /
    `comm_size=any` (the library's) in place of its intra-communicator branch."""
    out = copy.deepcopy(base)
    text = json.dumps(base)
    for test, per in _by_comm(cs).items():
        key = f"collective={test}"
        if key not in out or not isinstance(out[key], dict) or "comm_type=intra" not in out[key]:
            raise TuneError(f"MPICH's own selection has no intra-communicator branch for {test}")
        orig = out[key]["comm_type=intra"]
        if not any(c.called for lst in per.values() for c in lst):
            continue  # nothing gained: the library's own branch stays as it is
        branch: dict[str, Any] = {}
        for ranks in sorted(per):
            lst = per[ranks]
            if test in NO_SIZE:
                chosen: dict[str, Any] = ({_container(test, lst[0].algorithm, text): {}} if lst[0].called
                                          else copy.deepcopy(orig))
            else:
                size_key = "total_msg_size" if test in MPICH_TOTAL else "avg_msg_size"
                chosen = {}
                for i, c in enumerate(lst):
                    nxt = lst[i + 1] if i + 1 < len(lst) else None
                    if nxt is not None and nxt.algorithm == c.algorithm:
                        continue  # the next range has the same choice: one key covers both
                    chosen[f"{size_key}<={_msg(c)}"] = ({_container(test, c.algorithm, text): {}} if c.called
                                                        else copy.deepcopy(orig))
                chosen[f"{size_key}=any"] = copy.deepcopy(orig)
            branch[f"comm_size<{ranks}"] = copy.deepcopy(orig)
            branch[f"comm_size<={ranks}"] = chosen
        branch["comm_size=any"] = copy.deepcopy(orig)
        out[key]["comm_type=intra"] = branch
    return out


def summary(cs: list[Choice], lib: str) -> Table:
    rows = []
    for c in cs:
        b = c.best
        rows.append([c.test, str(c.ranks), "-" if math.isnan(c.bytes) else fmt_bytes(c.bytes),
                     f"{fmt(float(c.default['time_median_s']) * 1e6)}",
                     "-" if b is None else f"{b['algorithm']} {fmt(float(b['time_median_s']) * 1e6)}",
                     "-" if b is None else f"{float(b['time_median_s']) / float(c.default['time_median_s']):.2f}",
                     "-" if b is None else tail(b, c.default), c.algorithm])
    note = "chosen: the fastest where its advantage is outside the noise, else the library's own choice"
    # (the collective, ranks and bytes open every block where the text wraps: a block names its rows)
    return Table(f"tune ({lib}): the library's own choice against its fastest algorithm, time per call in µs",
                 ["collective", "ranks", "bytes", "own choice", "fastest other", "fastest / own", "verdict", "chosen"],
                 rows, [], [note], keys=3)


def unchanged(cs: list[Choice], out: Path) -> str:
    """The line that says the file changes nothing, where every choice is the library's own ('' otherwise)."""
    if any(c.called for c in cs):
        return ""
    return (f"every choice is the library's own (no algorithm beat it outside the noise): {out} changes nothing the "
            f"library would not do without it\n")


def _write(path: Path, text: str) -> None:
    """All or nothing (render.write_file), its directory made first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, text)


def tune(runs: list[Run], df: pd.DataFrame, out: Path) -> tuple[str, list[Path]]:
    """Writes the tuning file(s) for the runs' library to out; returns the summary text and the files.
    Everything is computed before the first file is written."""
    lib, colls = _algorithms(runs)
    cs = choices(df, colls)
    sources = [f"{r.csv_path} (run {r.meta.get('run_id', '?')}, {r.meta.get('start_utc', '?')})" for r in runs
               if "library_algorithms" in r.meta]
    files: list[tuple[Path, str]] = []
    if lib == "Open MPI":
        files.append((out, ompi_rules(cs, colls, sources)))
        files.append((out.with_name(out.name + ".mca-params.conf"), mca_params(out)))
    else:
        bases = [r.meta["library_algorithms"].get("default_selection") for r in runs if "library_algorithms" in r.meta]
        base = next((b for b in bases if isinstance(b, dict)), None)
        if base is None:
            raise TuneError("the MPICH results hold no default_selection (the library's own selection, recorded "
                            "by collectives --algorithms): cannot write a complete selection file")
        files.append((out, json.dumps(mpich_selection(cs, colls, base), indent=1) + "\n"))
        files.append((out.with_name(out.name + ".sources"),
                      "MPICH selection file written by mpimb-report tune from:\n" +
                      "".join(f"  {s}\n" for s in sources) +
                      f"Use: MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE={out.resolve()}\n"))
    for p, text in files:
        _write(p, text)
    return summary(cs, lib).render("text") + unchanged(cs, out), [p for p, _ in files]


# ---------------------------------------------------------------- the loop closed: default against tuned

@dataclass
class Tuned:
    """One (collective, size, communicator): the library's own choice without and with the tuning file."""

    test: str
    size: str  # "1K", "-" (barrier)
    comm: str
    file: str
    default_s: float
    tuned_s: float
    user: str  # the fastest user-level method without the file ("" where none)
    user_s: float
    paired: Ratio  # tuned / default across the launch pairs (mpimb.launches, paired)
    verdict: str  # 'called', 'noise' or 'few'

    def said(self) -> str:
        return f"{self.test}{'' if self.size == '-' else ' ' + self.size} {self.paired.ratio:.2f}× {self.paired.interval()}"


def tuned_against_default(d: pd.DataFrame) -> list[Tuned]:
    """Per (collective, size, communicator, settings): the library's own choice without a tuning file
    against with one (rows with params tuning=FILE, collectives --tuning), from launches alternated by
    scripts/coll-tune-check: the k-th launch without the file paired with the k-th with it (by start
    time), so the ratio is the median of per-launch ratios with its 95 % interval (mpimb.paired); and
    the best user-level algorithm (any other method) of the launches without the file.  Empty where d
    has no tuned rows."""
    keep = d["program"] == "collectives"
    for col in ("na", "failed"):  # the findings' frame has neither left
        if col in d:
            keep &= ~d[col].astype(bool)
    c = split_sync(d[keep])  # launches that started their repetitions differently still pair
    tuning = param_values(c["params"], "tuning")
    if not (tuning != "").any():
        return []
    c = c.assign(tuning=tuning, base=without_param(c["params"], "tuning"))
    out = []
    for (test, b, comm, _, _), g in groups(c, ["test", "bytes", "comm", "nprocs", "base"], dropna=False):
        lib = g[g["method"] == "library"]
        lib = lib.assign(i=launch_index(lib)).sort_values(["i", "start_utc"], kind="stable")
        dflt, tuned = lib[lib["tuning"] == ""], lib[lib["tuning"] != ""]
        if dflt.empty or tuned.empty:
            continue
        k = min(len(dflt), len(tuned))
        p = launch_ratio(dflt["time_median_s"].to_numpy(float)[:k], tuned["time_median_s"].to_numpy(float)[:k], True)
        own = g["method"].isin(["library", "persistent"])  # the library's own forms are not user-level algorithms
        users = g[~own & (g["tuning"] == "")].groupby("method")["time_median_s"].median()
        size = "-" if pd.isna(b) else fmt_bytes(float(b))
        out.append(Tuned(str(test), size, str(comm), str(tuned["tuning"].iloc[0]),
                         float(dflt["time_median_s"].median()), float(tuned["time_median_s"].median()),
                         str(users.idxmin()) if len(users) else "", float(users.min()) if len(users) else np.nan,
                         p, "few" if not p.judged else "called" if p.called else "noise"))
    return out


def launch_index(d: pd.DataFrame) -> np.ndarray:
    """Each row's launch index in its scripts/launches series (the JSON's "launch"), NaN where none: the k-th
    launch without the file is paired with the k-th with it (else by start time)."""
    if "launch" not in d:
        return np.full(len(d), np.nan)
    return pd.to_numeric(launch_parts(d["launch"])[1], errors="coerce").to_numpy()


def tuned_tables(t: list[Tuned], ctx: str) -> list[Table]:
    if not t:
        return []
    rows = [[f"{r.test} · {r.size} · {r.comm}", fmt(r.default_s * 1e6), fmt(r.tuned_s * 1e6),
             f"{r.user} {fmt(r.user_s * 1e6)}" if r.user else "-", f"{r.paired.ratio:.3f} {r.paired.interval()}",
             few_launches(r.paired.n) if r.verdict == "few" else
             "outside the noise" if r.verdict == "called" else "within the noise"] for r in t]
    note = ("tuned / default: the ratio of geometric means over the launch pairs (launches alternated by "
            "scripts/coll-tune-check) and its 95 % interval, paired per launch (mpimb.launches: the one judge); "
            "best user-level: the fastest other method, without the file.")
    return [Table(f"collectives: the library's own choice without and with the tuning file {t[0].file}, time per "
                  f"call in µs — {ctx}", ["collective · bytes · comm", "default", "tuned", "best user-level",
                                           "tuned / default [95 %]", "verdict"], rows, [], [note])]


def tuned_findings(t: list[Tuned], where: str) -> list[str]:
    """Where tuning gained, and whether it lost anywhere beyond the noise (the one judge, across launch pairs)."""
    if not t:
        return []
    gained = [r.said() for r in t if r.verdict == "called" and r.paired.ratio < 1]
    lost = [r.said() for r in t if r.verdict == "called" and r.paired.ratio > 1]
    judged = sum(r.verdict != "few" for r in t)
    n = min(r.paired.n for r in t)
    head = f"Tuning file {t[0].file}{where} (tuned / default, paired over {n} launch pairs)"
    if not judged:
        return [f"{head}: not judged ({n} launch pairs; {MIN_LAUNCHES} are needed)."]
    g = f"gained outside the noise at {', '.join(gained)}" if gained else "gained nowhere outside the noise"
    lo = f"lost outside the noise at {', '.join(lost)}" if lost else "lost nowhere beyond the noise"
    return [f"{head}: {g}; {lo} ({judged} of {len(t)} sizes judged)."]


def check(runs: list[Run]) -> str:
    """`mpimb-report tune --check DIR`: scripts/coll-tune-check's launches, per machine (label · library),
    the table and the findings.  Every launch is kept (the repeated-runs rule of the other commands keeps
    the newest run only, which would leave one launch pair)."""
    df = frame(runs)
    out = []
    found: list[Finding] = []
    for (label, lib), m in groups(df, ["label", "library"]):
        t = tuned_against_default(m)
        machine = f"{label} · {lib}"
        out += [x.render("text") for x in tuned_tables(t, machine)]
        found += [Finding(machine, "collectives", s, bool(m["oversubscribed"].any())) for s in tuned_findings(t, "")]
    if not found:
        raise TuneError("no pair of launches without and with --tuning here (scripts/coll-tune-check writes them)")
    return "\n".join(out) + "\n" + plain(found)
