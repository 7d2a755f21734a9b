"""rma: its tables (per test: size × synchronisation × window, and RMA / send-recv), its plots (a
sweep per test, the RMA / send-recv ratio) and its findings (the fastest one-sided variant against
send/recv per test)."""

from __future__ import annotations

import pandas as pd

from ..judge import pair, ratio, us
from ..keys import with_variant
from ..load import groups
from ..plotting import MAX_SERIES, Plot, bytes_axis, per_test, pyplot, save
from ..render import Table, agg, fmt_bytes, fmt_ratio, pivot


def tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    out: list[Table] = []
    for (test,), t in groups(d, ["test"], sort=False):
        out.append(pivot(t, ["bytes"], ["method", "comm"], f"rma {test} — {ctx}"))
        t, _ = with_variant(t)
        ref = t[t["method"] == "sendrecv"]
        if ref.empty:
            continue
        # each RMA row against the send/recv reference of the same size and settings
        match = ["bytes", *[k for k in ("variant", "threads") if t[k].nunique(dropna=False) > 1]]
        a = agg(t, ["method", "comm", *match])
        r = agg(ref, match)[[*match, "value", "failed"]].rename(columns={"value": "base", "failed": "base_failed"})
        a = a[a["method"] != "sendrecv"].merge(r, on=match, how="left")
        lat = a["unit"].iloc[0] == "µs" if len(a) else True
        a["value"] = a["value"] / a["base"] if lat else a["base"] / a["value"]
        a["failed"] = a["failed"] | a["base_failed"].fillna(False).astype(bool)
        a["na"] = a["na"] | a["value"].isna()
        a["stop_reason"] = ""
        a["params"] = ""
        tb = pivot(a, ["bytes", *match[1:]], ["method", "comm"], f"rma {test}: time ratio RMA / send-recv (< 1: RMA "
                   f"faster) — {ctx}", unit_in_header=False, value_fmt=fmt_ratio)
        out.append(tb)
    return out


def rma_ratio(g: pd.DataFrame, title: str, name: str) -> Plot | None:
    g = g[~g["na"] & ~g["failed"]]
    ref = g[g["method"] == "sendrecv"].set_index(["variant", "bytes"])["time_median_s"]
    r = g[g["method"] != "sendrecv"]
    if ref.empty or r.empty or r["bytes"].nunique() < 2:
        return None
    fig, ax = pyplot().subplots(figsize=(7.2, 4.0))
    for i, ((m, c, v), s) in enumerate(groups(r, ["method", "comm", "variant"], sort=False)):
        if i >= MAX_SERIES:
            break
        t = s.set_index("bytes")["time_median_s"].sort_index()
        base = ref.reindex(pd.MultiIndex.from_product([[v], t.index])).to_numpy()
        ax.plot(t.index, t.to_numpy() / base, marker="o", ms=3, label=f"{m} / {c}" + (f" [{v}]" if v else ""))
    ax.axhline(1.0, color="#333", lw=0.8, ls="--")
    bytes_axis(ax)
    ax.set_ylabel("time RMA / time send-recv  (< 1: RMA faster)")
    ax.set_title(title)
    ax.legend(fontsize=7, frameon=False, ncol=2)
    return save(fig, name, title)


def plots(g: pd.DataFrame, stat: str, ctx: str, base: str) -> list[Plot]:
    """A sweep per test, each followed by its RMA / send-recv ratio."""
    def ratio_plot(test: str, t: pd.DataFrame) -> list[Plot]:
        p = rma_ratio(t, f"{test}: RMA vs send-recv\n{ctx}", f"{base}-{test}-ratio")
        return [p] if p else []

    return per_test(g, stat, ctx, base, after=ratio_plot)


def findings(m: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    r = m[m["program"] == "rma"]
    for (test, var), s in groups(r, ["test", "variant"], sort=False):
        ref = s[s["method"] == "sendrecv"]
        if ref.empty or s["bytes"].isna().all():
            continue
        size = ref["bytes"].min() if "latency" in str(test) else ref["bytes"].max()
        at = s[s["bytes"] == size]
        one = at[at["method"] != "sendrecv"].sort_values("time_median_s")
        if one.empty:
            continue
        a, c = one.iloc[0], at[at["method"] == "sendrecv"].iloc[0]
        out.append(("one-sided vs send/recv", pair(
            f"RMA {test} at {fmt_bytes(size)} B{where}", a, c, f"the fastest one-sided variant ({a['method']}, "
            f"{a['comm']} window) takes", "send/recv", us, "time RMA / send-recv",
            ratio(a["time_median_s"], c["time_median_s"]))))
    return out
