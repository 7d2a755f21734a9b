"""`mpimb-report timeline TRACE`: the talk's timeline of an exchange from a trace of libmpimb-prof.so
(docs/results-format.md, "Traces"): ranks as swimlanes against time, each MPI call a coloured bar,
each message an arrow from its send to the completion of its receive; and the distribution of send
completion times ("Distribution of Sends").  Above MAX_RANKS ranks a window of ranks is drawn, and
the figure says so."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .load import InputError
from .plotting import COLORS, Plot, pyplot, save
from .render import fmt

MAX_RANKS = 64  # readable swimlanes; above, a window of this many
FORMAT = "mpimb-trace"


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


def read(path: Path) -> Trace:
    """The trace at path; one line (InputError) when it is not one: corrupt, truncated, another file."""
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise _bad(path, f"corrupt or truncated JSON ({e.msg}, line {e.lineno})") from None
    except UnicodeDecodeError:
        raise _bad(path, "not text") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise _bad(path, "no traceEvents list")
    meta = doc.get("otherData")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("ranks"), int):
        raise _bad(path, f"otherData.format is not '{FORMAT}' with a rank count")
    ev = pd.DataFrame.from_records([e for e in doc["traceEvents"] if isinstance(e, dict)])
    need = {"ph", "pid", "ts"}
    if len(ev) and not need <= set(ev.columns):
        raise _bad(path, f"events lack {', '.join(sorted(need - set(ev.columns)))}")
    for c in ("ph", "pid", "tid", "ts", "dur", "name", "cat", "id"):
        if c not in ev.columns:
            ev[c] = np.nan
    x = ev[ev["ph"] == "X"]
    calls = pd.DataFrame({"rank": x["pid"].astype(int), "tid": x["tid"].fillna(0).astype(int),
                          "name": x["name"].astype(str), "cat": x["cat"].astype(str),
                          "ts": x["ts"].astype(float), "dur": x["dur"].astype(float)})
    s = ev[ev["ph"] == "s"].set_index("id")
    f = ev[ev["ph"] == "f"].set_index("id")
    both = s.merge(f, left_index=True, right_index=True, suffixes=("_s", "_f"))
    messages = pd.DataFrame({"id": both.index, "src": both["pid_s"].astype(int), "src_ts": both["ts_s"].astype(float),
                             "dst": both["pid_f"].astype(int), "dst_ts": both["ts_f"].astype(float)})
    messages = messages.reset_index(drop=True)
    # a send completes where its call ends (blocking) or where its request's life ends (nonblocking)
    req_end = ev[(ev["ph"] == "e") & (ev["name"] == "send request")]["ts"].astype(float)
    blocking = x[(x["cat"] == "p2p") & x["name"].isin(["MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend"])]
    done = pd.concat([req_end, blocking["ts"].astype(float) + blocking["dur"].astype(float)], ignore_index=True)
    begins = np.sort(np.array([float(st["begin_us"]) for st in meta.get("stretches") or []
                               if isinstance(st, dict) and "begin_us" in st] or [0.0]))
    start = begins[np.clip(np.searchsorted(begins, done.to_numpy(), side="right") - 1, 0, None)]
    return Trace(path, meta, calls, messages, pd.Series(done.to_numpy() - start, dtype=float))


def _window(n: int, ranks: tuple[int, int] | None) -> tuple[int, int]:
    if ranks is not None:
        return max(0, ranks[0]), min(n, ranks[1] + 1)
    return 0, min(n, MAX_RANKS)


def timeline_plot(t: Trace, ranks: tuple[int, int] | None = None, span: tuple[float, float] | None = None) -> Plot:
    """Swimlanes: rank r at height r (rank 0 on top), a bar per call coloured by call, arrows per message;
    span: the time window drawn (µs since the trace's first call; default all)."""
    plt = pyplot()
    lo, hi = _window(t.ranks, ranks)
    t0 = float(t.calls["ts"].min()) if len(t.calls) else 0.0
    a, b = (t0 + span[0], t0 + span[1]) if span else (-np.inf, np.inf)
    c = t.calls[(t.calls["rank"] >= lo) & (t.calls["rank"] < hi) & (t.calls["ts"] + t.calls["dur"] >= a)
                & (t.calls["ts"] <= b)]
    m = t.messages[(t.messages["src"] >= lo) & (t.messages["src"] < hi) & (t.messages["dst"] >= lo)
                   & (t.messages["dst"] < hi) & (t.messages["src_ts"] >= a) & (t.messages["dst_ts"] <= b)]
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.32 * (hi - lo)))
    names = sorted(c["name"].unique())
    colour = {n: COLORS[i % len(COLORS)] for i, n in enumerate(names)}
    if len(c):  # threads share their rank's lane, one above the other; one collection of rectangles (fast)
        from matplotlib.collections import PolyCollection

        h = (0.7 / (c.groupby("rank")["tid"].transform("max") + 1)).to_numpy()
        y0 = c["rank"].to_numpy() - 0.35 + c["tid"].to_numpy() * h + 0.05 * h
        y1 = y0 + 0.9 * h
        x0 = c["ts"].to_numpy() - t0
        x1 = x0 + c["dur"].clip(lower=1e-3).to_numpy()
        verts = np.stack([np.stack([x0, y0], 1), np.stack([x0, y1], 1), np.stack([x1, y1], 1),
                          np.stack([x1, y0], 1)], 1)
        ax.add_collection(PolyCollection(list(verts), facecolors=c["name"].map(colour).tolist(), edgecolors="white",
                                         linewidths=0.3))
        pad = 0.01 * float(x1.max() - x0.min())
        ax.set_xlim(float(x0.min()) - pad, float(x1.max()) + pad)
    if len(m):
        ax.quiver(m["src_ts"] - t0, m["src"], m["dst_ts"] - m["src_ts"], m["dst"] - m["src"], angles="xy",
                  scale_units="xy", scale=1, width=0.0015, headwidth=5, headlength=6, color="#333333", alpha=0.7)
    for n in names:
        ax.bar(0, 0, color=colour[n], label=n)
    if names:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if span:
        ax.set_xlim(span[0], span[1])
    ax.set_ylim(hi - 0.5, lo - 0.5)
    ax.set_yticks(range(lo, hi))
    ax.set_yticklabels([f"rank {r}" for r in range(lo, hi)], fontsize=7 if hi - lo > 16 else 9)
    ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax.set_xlabel("simulated time [µs] since the first call" if t.meta.get("simulated") is True
                  else "time [µs] since the first call (clocks aligned to rank 0's)")
    tests = ", ".join(str(st["test"]["key"]) for st in t.meta.get("stretches") or []
                      if isinstance(st, dict) and isinstance(st.get("test"), dict) and "key" in st["test"])
    window = f" — ranks {lo}–{hi - 1} of {t.ranks} shown" if hi - lo < t.ranks else ""
    window += f" — {fmt(span[0])} to {fmt(span[1])} µs" if span else ""
    if t.meta.get("simulated") is True:
        window += f" — simulated (SMPI, platform {t.meta.get('platform') or '?'})"
    ax.set_title(f"Timeline{': ' + tests if tests else ''}{window}\n{len(m)} messages (arrows: send → receive "
                 f"completion), clock error {fmt(float(t.meta.get('clock', {}).get('residual_error_s', 0)) * 1e6)} µs, "
                 f"{int(t.meta.get('dropped_events', 0))} events dropped")
    ax.grid(axis="y", alpha=0)
    return save(fig, f"{t.path.stem}-timeline", "timeline")


def sends_plot(t: Trace) -> Plot:
    """The distribution of send completion times, from the start of their traced stretch."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    v = t.sends_done
    if len(v):
        ax.hist(v, bins=min(50, max(5, len(v) // 4)), color=COLORS[0])
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
    """The two figures, PNG and SVG, into out; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in (timeline_plot(t, ranks, span), sends_plot(t)):
        for ext, data in (("png", p.png), ("svg", p.svg)):
            path = out / f"{p.name}.{ext}"
            path.write_bytes(data)
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
