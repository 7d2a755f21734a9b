"""pingpong: its tables (latency and bandwidth per size and pair placement, the all-pairs
matrices), its plots (a sweep per test, all-pairs heat maps) and its findings (latency at the
smallest size, peak bandwidth, inter- against intra-node latency)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..judge import mbps, pair, ratio, us
from ..load import groups
from ..plotting import Plot, per_test, pyplot, save
from ..render import Table, fmt_bytes, pivot


def tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    pairs = d[d["test"].str.startswith("allpairs")]
    main = d[~d["test"].str.startswith("allpairs")]
    if not main.empty:
        out.append(pivot(main, ["bytes"], ["test", "comm", "method"],
                         f"pingpong: latency in µs, bandwidth in MB/s — {ctx}"))
    for (test, b), p in groups(pairs, ["test", "bytes"]):
        ab = p["method"].str.split("-", n=1, expand=True)
        if ab.shape[1] != 2:
            continue
        q = p.assign(a=ab[0], b=ab[1])
        t = pivot(q, ["a"], ["b"], f"{test}, {fmt_bytes(b)} B, rank × rank ({p['unit'].iloc[0]}) — {ctx}",
                  unit_in_header=False)
        t.header[0] = "rank" + t.header[0][1:]
        out.append(t)
    return out


def heatmap(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    g = g[~g["failed"]]
    ab = g["method"].str.split("-", n=1, expand=True)
    if ab.shape[1] != 2:
        return None
    a = pd.to_numeric(ab[0], errors="coerce")
    b = pd.to_numeric(ab[1], errors="coerce")
    ok = a.notna() & b.notna()
    if not ok.any():
        return None
    n = int(max(a[ok].max(), b[ok].max())) + 1
    m = np.full((n, n), np.nan)
    for i, j, v in zip(a[ok].astype(int), b[ok].astype(int), g["value"][ok]):
        m[i, j] = m[j, i] = v
    unit = str(g["unit"].iloc[0])
    fig, ax = pyplot().subplots(figsize=(5.6, 4.6))
    im = ax.imshow(m, cmap="viridis_r" if unit == "µs" else "viridis", origin="upper")
    fig.colorbar(im, ax=ax, label="time [µs]" if unit == "µs" else "bandwidth [MB/s]")
    ax.set_xlabel("rank")
    ax.set_ylabel("rank")
    ax.grid(False)
    ax.set_title(title)
    return save(fig, name, title)


def plots(g: pd.DataFrame, stat: str, ctx: str, base: str) -> list[Plot]:
    """A sweep per test; the all-pairs tests as a rank × rank heat map per size."""
    def allpairs(test: str, t: pd.DataFrame) -> list[Plot] | None:
        if not test.startswith("allpairs"):
            return None
        out = []
        for (b,), h in groups(t, ["bytes"]):
            p = heatmap(h, f"{test}, {fmt_bytes(b)} B\n{ctx}", f"{base}-{test}-{int(b)}-heatmap")
            if p:
                out.append(p)
        return out

    return per_test(g, stat, ctx, base, instead=allpairs)


def findings(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pp = m[m["program"] == "pingpong"]
    for (comm, meth, var), s in groups(pp, ["comm", "method", "variant"]):
        lat = s[(s["test"] == "latency") & s["bytes"].notna()].sort_values("bytes")
        bw = s[(s["test"] == "bw") & s["mbps"].notna()]
        parts = []
        if len(lat):
            r = lat.iloc[0]
            parts.append(f"latency {us(r)} at {fmt_bytes(r['bytes'])} B")
        if len(bw):
            r = bw.sort_values("mbps", ascending=False).iloc[0]
            parts.append(f"peak bandwidth {mbps(r)} at {fmt_bytes(r['bytes'])} B")
        if parts:
            name = " ".join(x for x in (str(comm), str(meth), f"[{var}]" if var else "") if x)
            out.append(("pingpong", f"Pingpong {name}{where}: " + ", ".join(parts) + "."))
    lat = pp[(pp["test"] == "latency") & pp["time_median_s"].notna()]
    for (meth, var), s in groups(lat, ["method", "variant"]):
        if not {"intra", "inter"} <= set(s["comm"]):
            continue
        at = s[s["bytes"] == s["bytes"].min()]
        a, b = at[at["comm"] == "inter"], at[at["comm"] == "intra"]
        if a.empty or b.empty:
            continue
        x, y = a.iloc[0], b.iloc[0]
        label = " ".join(v for v in (str(meth), f"[{var}]" if var else "") if v)
        out.append(("pingpong", pair(f"Inter- against intra-node latency, {label} at {fmt_bytes(x['bytes'])} B{where}",
                                     x, y, "inter-node", "intra-node", us, "inter / intra",
                                     ratio(x["time_median_s"], y["time_median_s"]))))
    return out
