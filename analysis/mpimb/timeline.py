"""`mpimb-report timeline TRACE`: the talk's timeline of an exchange from a trace of libmpimb-prof.so
(docs/results-format.md, "Traces"): ranks as swimlanes against time, each MPI call a coloured bar,
each message an arrow from its send to the completion of its receive; and the distribution of send
completion times ("Distribution of Sends").  Above MAX_RANKS ranks a window of ranks is drawn, and
the figure says so."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .load import InputError
from .plotting import COLORS, Plot, pyplot, save
from .render import fmt, write_file

MAX_RANKS = 64  # readable swimlanes; above, a window of this many
MAX_WORLD = (1 << 31) - 1  # ranks of a trace at most (an MPI rank is an int)
MAX_US = 1e12  # a timestamp or duration of a trace at most (11 days, in µs since its first event)
FORMAT = "mpimb-trace"
FIELDS = ("ph", "pid", "tid", "ts", "dur", "name", "cat", "id")  # of an event, the ones read


@dataclass
class Trace:
    """One trace: its calls (X slices), its messages (flow start and end joined), its metadata."""

    path: Path
    meta: dict[str, Any]
    calls: pd.DataFrame  # rank, tid, name, cat, ts, dur (µs)
    messages: pd.DataFrame  # id, src, src_ts, dst, dst_ts (µs)
    sends_done: pd.Series  # µs from the start of its stretch to each send's completion

    @property
    def ranks(self) -> int:
        return int(self.meta["ranks"])


def _bad(path: Path, why: str) -> InputError:
    return InputError(f"{path}: not a readable mpimb trace: {why}")


def _check_meta(path: Path, meta: Any) -> dict[str, Any]:
    """otherData, with every field the figures read of the type they read it as (one line when not)."""
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not _integer(meta.get("ranks")):
        raise _bad(path, f"otherData.format is not '{FORMAT}' with a rank count")
    if not 1 <= meta["ranks"] <= MAX_WORLD:
        raise _bad(path, f"otherData.ranks is {meta['ranks']}, not a number of ranks (1 .. {MAX_WORLD})")
    clock = meta.get("clock", {})
    if not isinstance(clock, dict) or not _number(clock.get("residual_error_s", 0)):
        raise _bad(path, "otherData.clock is not an object with a number residual_error_s")
    if not _integer(meta.get("dropped_events", 0)) or meta.get("dropped_events", 0) < 0:
        raise _bad(path, "otherData.dropped_events is not a count")
    stretches = meta.get("stretches") or []
    if not isinstance(stretches, list):
        raise _bad(path, "otherData.stretches is not a list")
    for i, st in enumerate(stretches):
        test = st.get("test", {}) if isinstance(st, dict) else None
        if not isinstance(test, dict) or not _number(st.get("begin_us", 0)) or \
                not all(_integer(test.get(k, 1)) for k in ("iters", "bytes")) or not isinstance(test.get("key", ""), str):
            raise _bad(path, f"otherData.stretches[{i}] is not an object with begin_us and a test (key, bytes, iters)")
    return meta


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _numeric(path: Path, ev: pd.DataFrame, rows: pd.Series, col: str, lo: float, hi: float,
             integer: bool = False) -> pd.Series:
    """ev[col] of the events rows as numbers in [lo, hi] (integers where asked): one line for the first that
    is not (nested, a string that is no number, out of range)."""
    raw = ev.loc[rows, col]
    try:
        v = pd.to_numeric(raw.astype(object), errors="coerce").astype(float)
    except OverflowError:  # an integer past a float's range (JSON has no limit): out of range, as infinity is
        v = raw.map(lambda x: math.inf if isinstance(x, int) and abs(x) > 1 << 1023 else x)
        v = pd.to_numeric(v.astype(object), errors="coerce").astype(float)
    bad = ~(v >= lo) | ~(v <= hi)
    if integer:
        bad |= v % 1 != 0
    if bad.any():
        i = bad.to_numpy().nonzero()[0][0]
        x = raw.iloc[i]
        x = x.item() if isinstance(x, np.generic) else x  # (the JSON's value, not numpy's spelling of it)
        shown = "nothing (or NaN)" if x is None or (isinstance(x, float) and math.isnan(x)) else repr(x)
        span = f"{lo:.0f} .. {hi:.0f}" if integer else f"[{lo:g}, {hi:g}]"
        raise _bad(path, f"event {int(raw.index[i])}: '{col}' must be {'an integer' if integer else 'a number'} "
                         f"in {span}, got {shown[:40]}{'...' if len(shown) > 40 else ''}"
                         + (f" ({int(bad.sum())} events like that)" if bad.sum() > 1 else ""))
    return v.reindex(ev.index)


def _text(path: Path, ev: pd.DataFrame, rows: pd.Series, col: str) -> pd.Series:
    """ev[col] of the events rows as text: one line for the first that is not a string."""
    raw = ev.loc[rows, col]
    bad = ~_strings(raw)
    if bad.any():
        raise _bad(path, f"event {int(raw.index[bad.to_numpy()][0])}: '{col}' must be a string, got "
                         f"{repr(raw[bad].iloc[0])[:40]}")
    return raw.astype(str)


def _strings(v: pd.Series) -> pd.Series:
    """Which cells are strings (a nested object or a number is not)."""
    return v.map(lambda x: isinstance(x, str)).astype(bool)


def read(path: Path) -> Trace:
    """The trace at path; one line (InputError) when it is not one: corrupt, truncated, another file, a field
    of another type (nested, a string for a number), a timestamp or rank out of range."""
    try:
        doc = json.loads(path.read_bytes())
    except json.JSONDecodeError as e:
        raise _bad(path, f"corrupt or truncated JSON ({e.msg}, line {e.lineno})") from None
    except UnicodeDecodeError:
        raise _bad(path, "not text") from None
    except RecursionError:
        raise _bad(path, "JSON nested too deep") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise _bad(path, "no traceEvents list")
    meta = _check_meta(path, doc.get("otherData"))
    events = [e for e in doc.pop("traceEvents") if isinstance(e, dict)]
    # the fields drawn, a column each (the events' other fields, args ..., are not kept: a large trace's memory)
    ev = pd.DataFrame({c: pd.Series([e.get(c) for e in events], dtype=object).fillna(np.nan) for c in FIELDS})
    del events
    lack = [c for c in ("ph", "pid", "ts") if len(ev) and ev[c].isna().all()]
    if lack:
        raise _bad(path, f"events lack {', '.join(lack)}")
    ph = ev["ph"].where(_strings(ev["ph"]), "")  # (a ph that is no string: an event of no kind drawn)
    drawn = ph.isin(["X", "s", "f", "e"])
    pid = _numeric(path, ev, drawn, "pid", 0, meta["ranks"] - 1, integer=True)
    tid = _numeric(path, ev.fillna({"tid": 0}), drawn, "tid", 0, 1 << 30, integer=True)
    ts = _numeric(path, ev, drawn, "ts", -MAX_US, MAX_US)
    x = ph == "X"
    dur = _numeric(path, ev, x, "dur", 0, MAX_US)
    calls = pd.DataFrame({"rank": pid[x].astype(int), "tid": tid[x].astype(int), "name": _text(path, ev, x, "name"),
                          "cat": ev.loc[x, "cat"].where(_strings(ev.loc[x, "cat"]), "").astype(str),
                          "ts": ts[x], "dur": dur[x]})
    flows = ph.isin(["s", "f"])
    ids = ev.loc[flows, "id"]
    if (~_strings(ids) & pd.to_numeric(ids.astype(object), errors="coerce").isna()).any():
        raise _bad(path, "a message event's 'id' is neither a number nor a string")
    s = pd.DataFrame({"pid": pid[ph == "s"], "ts": ts[ph == "s"]}).set_index(ids[ph[flows] == "s"])
    f = pd.DataFrame({"pid": pid[ph == "f"], "ts": ts[ph == "f"]}).set_index(ids[ph[flows] == "f"])
    both = s[~s.index.duplicated()].merge(f[~f.index.duplicated()], left_index=True, right_index=True,
                                          suffixes=("_s", "_f"))
    messages = pd.DataFrame({"id": both.index, "src": both["pid_s"].astype(int), "src_ts": both["ts_s"],
                             "dst": both["pid_f"].astype(int), "dst_ts": both["ts_f"]}).reset_index(drop=True)
    # a send completes where its call ends (blocking) or where its request's life ends (nonblocking)
    req_end = ts[(ph == "e") & (ev["name"] == "send request")]
    blocking = calls[(calls["cat"] == "p2p") & calls["name"].isin(["MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"])]
    done = pd.concat([req_end, blocking["ts"] + blocking["dur"]], ignore_index=True)
    begins = np.sort(np.array([float(st["begin_us"]) for st in meta.get("stretches") or []
                               if isinstance(st, dict) and "begin_us" in st] or [0.0]))
    start = begins[np.clip(np.searchsorted(begins, done.to_numpy(), side="right") - 1, 0, None)]
    return Trace(path, meta, calls, messages, pd.Series(done.to_numpy() - start, dtype=float))


def check_ranks(t: Trace, ranks: tuple[int, int] | None) -> None:
    """--ranks against the trace: ValueError (a usage error) where the window holds none of its ranks."""
    if ranks is not None and ranks[0] >= t.ranks:
        raise ValueError(f"--ranks {ranks[0]}:{ranks[1]}: the trace has {t.ranks} rank(s), 0-{t.ranks - 1}")


def _window(n: int, ranks: tuple[int, int] | None) -> tuple[int, int]:
    if ranks is not None:
        return max(0, ranks[0]), min(n, ranks[1] + 1)
    return 0, min(n, MAX_RANKS)


WIDTH_IN, DPI = 11, 100  # the timeline's width: what it can show is WIDTH_IN * DPI pixels across (plotting.save)


def palette(n: int) -> list[str]:
    """n colours, every one its own where n allows: the suite's, then matplotlib's tab20b (a trace of an
    application calls more kinds of MPI call than the suite's plots draw lines)."""
    from matplotlib.colors import to_hex

    more = COLORS + [to_hex(c) for c in pyplot().get_cmap("tab20b").colors]
    return [more[i % len(more)] for i in range(n)]


def thin_calls(c: pd.DataFrame, px: float) -> pd.DataFrame:
    """The calls of one lane (rank, thread) and kind (name) that lie less than px apart merged into one bar from
    the first's start to the last's end: a figure shows no more than a bar per pixel, so a trace of millions
    of calls draws as few bars as it has pixels of calls.  px <= 0: c as it is."""
    if px <= 0 or len(c) < 2:
        return c
    c = c.sort_values(["rank", "tid", "name", "ts"], kind="stable")
    key = c[["rank", "tid", "name"]]
    end = c["ts"] + c["dur"]
    reach = end.groupby([c["rank"], c["tid"], c["name"]], sort=False).cummax()  # the lane's bar so far ends here
    other = (key != key.shift()).any(axis=1)
    block = (other | (c["ts"] > reach.shift() + px)).cumsum()
    out = c.assign(end=end).groupby(block, sort=False).agg(rank=("rank", "first"), tid=("tid", "first"),
                                                           name=("name", "first"), cat=("cat", "first"),
                                                           ts=("ts", "min"), end=("end", "max"))
    return out.assign(dur=out["end"] - out["ts"]).drop(columns="end").reset_index(drop=True)


def thin_messages(m: pd.DataFrame, px: float, t0: float) -> pd.DataFrame:
    """One arrow per (source, destination) and pixel of its send and of its receive: the figure shows no more."""
    if px <= 0 or len(m) < 2:
        return m
    cell = m.assign(a=((m["src_ts"] - t0) // px), b=((m["dst_ts"] - t0) // px))
    return m[~cell.duplicated(["src", "dst", "a", "b"])]


def timeline_plot(t: Trace, ranks: tuple[int, int] | None = None, span: tuple[float, float] | None = None) -> Plot:
    """Swimlanes: rank r at height r (rank 0 on top), a bar per call coloured by call, arrows per message;
    span: the time window drawn (µs since the trace's first call; default all).  Calls and messages closer
    than a pixel are merged (thin_calls, thin_messages); the legend names every call kind drawn, the figure
    as tall as it needs."""
    plt = pyplot()
    lo, hi = _window(t.ranks, ranks)
    t0 = float(t.calls["ts"].min()) if len(t.calls) else 0.0
    a, b = (t0 + span[0], t0 + span[1]) if span else (-np.inf, np.inf)
    c = t.calls[(t.calls["rank"] >= lo) & (t.calls["rank"] < hi) & (t.calls["ts"] + t.calls["dur"] >= a)
                & (t.calls["ts"] <= b)]
    m = t.messages[(t.messages["src"] >= lo) & (t.messages["src"] < hi) & (t.messages["dst"] >= lo)
                   & (t.messages["dst"] < hi) & (t.messages["src_ts"] >= a) & (t.messages["dst_ts"] <= b)]
    names = sorted(c["name"].unique())
    if span:
        extent = span[1] - span[0]
    else:
        extent = float((c["ts"] + c["dur"]).max() - c["ts"].min()) if len(c) else 0.0
    px = extent / (WIDTH_IN * DPI)
    drawn, arrows = thin_calls(c, px), thin_messages(m, px, t0)
    # the lanes' height, or the legend's (a line of 8-point text per call kind) where it is taller
    fig, ax = plt.subplots(figsize=(WIDTH_IN, max(1.2 + 0.32 * (hi - lo), 1.3 + 0.155 * len(names))))
    colour = dict(zip(names, palette(len(names))))
    if len(drawn):  # threads share their rank's lane, one above the other; one collection of rectangles (fast)
        from matplotlib.collections import PolyCollection

        h = (0.7 / (drawn.groupby("rank")["tid"].transform("max") + 1)).to_numpy()
        y0 = drawn["rank"].to_numpy() - 0.35 + drawn["tid"].to_numpy() * h + 0.05 * h
        y1 = y0 + 0.9 * h
        x0 = drawn["ts"].to_numpy() - t0
        x1 = x0 + drawn["dur"].clip(lower=1e-3).to_numpy()
        verts = np.stack([np.stack([x0, y0], 1), np.stack([x0, y1], 1), np.stack([x1, y1], 1),
                          np.stack([x1, y0], 1)], 1)
        # (a white edge only where bars are wider than it: on merged pixels it would hide them)
        ax.add_collection(PolyCollection(list(verts), facecolors=drawn["name"].map(colour).tolist(),
                                         edgecolors="white", linewidths=0.3 if len(drawn) == len(c) else 0))
        pad = 0.01 * float(x1.max() - x0.min())
        ax.set_xlim(float(x0.min()) - pad, float(x1.max()) + pad)
    if len(arrows):
        ax.quiver(arrows["src_ts"] - t0, arrows["src"], arrows["dst_ts"] - arrows["src_ts"],
                  arrows["dst"] - arrows["src"], angles="xy", scale_units="xy", scale=1, width=0.0015, headwidth=5,
                  headlength=6, color="#333333", alpha=0.7)
    for n in names:
        ax.bar(0, 0, color=colour[n], label=n)
    if names:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False, borderaxespad=0.2)
    if span:
        ax.set_xlim(span[0], span[1])
    ax.set_ylim(hi - 0.5, lo - 0.5)
    ax.set_yticks(range(lo, hi))
    ax.set_yticklabels([f"rank {r}" for r in range(lo, hi)], fontsize=7 if hi - lo > 16 else 9)
    ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax.set_xlabel("simulated time [µs] since the first call" if t.meta.get("simulated") is True
                  else "time [µs] since the first call (clocks aligned to rank 0's)")
    keys = [str(st["test"]["key"]) for st in t.meta.get("stretches") or []
            if isinstance(st, dict) and isinstance(st.get("test"), dict) and "key" in st["test"]]
    tests = ", ".join(keys[:3]) + (f" ... ({len(keys)} stretches)" if len(keys) > 3 else "")
    window = f" — ranks {lo}–{hi - 1} of {t.ranks} shown" if hi - lo < t.ranks else ""
    window += f" — {fmt(span[0])} to {fmt(span[1])} µs" if span else ""
    if t.meta.get("simulated") is True:
        window += f" — simulated (SMPI, platform {t.meta.get('platform') or '?'})"
    merged = (f"\n{len(c)} calls drawn as {len(drawn)} bars, {len(m)} messages as {len(arrows)} arrows (those "
              f"under a pixel apart merged)"
              if len(drawn) < len(c) or len(arrows) < len(m) else "")
    ax.set_title(f"Timeline{': ' + tests if tests else ''}{window}\n{len(m)} messages (arrows: send → receive "
                 f"completion), clock error {fmt(float(t.meta.get('clock', {}).get('residual_error_s', 0)) * 1e6)} µs, "
                 f"{int(t.meta.get('dropped_events', 0))} events dropped{merged}")
    ax.grid(axis="y", alpha=0)
    return save(fig, f"{t.path.stem}-timeline", "timeline")


def sends_plot(t: Trace) -> Plot:
    """The distribution of send completion times, from the start of their traced stretch."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    v = t.sends_done
    if len(v):
        ax.hist(v, bins=min(50, max(5, len(v) // 4)), color=COLORS[0])
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of sends: whole numbers
    ax.set_xlabel("send completion [µs] since the start of its traced stretch")
    ax.set_ylabel("sends")
    ax.set_title(f"Distribution of sends ({len(v)} sends)")
    return save(fig, f"{t.path.stem}-sends", "sends")


def parse_span(text: str | None) -> tuple[float, float] | None:
    """--time FROM:TO in µs since the trace's first call, or None; ValueError with the reason."""
    if text is None:
        return None
    a, sep, b = text.partition(":")
    try:
        lo, hi = float(a), float(b)
    except ValueError:
        lo = hi = float("nan")
    if not sep or not (0 <= lo < hi < float("inf")):
        raise ValueError(f"--time must be FROM:TO in µs with 0 <= FROM < TO, got '{text}'")
    return lo, hi


def parse_ranks(text: str | None) -> tuple[int, int] | None:
    """--ranks FIRST:LAST (inclusive), or None; ValueError with the reason."""
    if text is None:
        return None
    a, sep, b = text.partition(":")
    if not sep or not a.isdigit() or not b.isdigit() or int(a) > int(b):
        raise ValueError(f"--ranks must be FIRST:LAST with FIRST <= LAST, got '{text}'")
    if int(b) - int(a) + 1 > MAX_RANKS:
        raise ValueError(f"--ranks {text}: at most {MAX_RANKS} ranks are drawn")
    return int(a), int(b)


def write(t: Trace, out: Path, ranks: tuple[int, int] | None = None,
          span: tuple[float, float] | None = None) -> list[Path]:
    """The two figures, PNG and SVG, into out; the paths written.  Each file is written aside (a name of its
    own beside it) and renamed into place: a figure is there whole or not at all."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in (timeline_plot(t, ranks, span), sends_plot(t)):
        for ext, data in (("png", p.png), ("svg", p.svg)):
            path = out / f"{p.name}.{ext}"
            write_file(path, data)
            paths.append(path)
    return paths


def notes(t: Trace, ranks: tuple[int, int] | None = None) -> list[str]:
    """What the figures leave out, said once."""
    lo, hi = _window(t.ranks, ranks)
    out = []
    if hi - lo < t.ranks:
        out.append(f"{t.ranks} ranks: ranks {lo}-{hi - 1} drawn (--ranks FIRST:LAST for another window)")
    if int(t.meta.get("dropped_events", 0)):
        out.append(f"{t.meta['dropped_events']} events did not fit in the trace buffers (MPIMB_PROF_TRACE_EVENTS)")
    return out
