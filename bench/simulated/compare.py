"""Sets the simulated 1024-rank halocompare tables beside the talk's BG/L and
Cray XT tables (the published reference set, reference/gropp-lusk/) and
prints Markdown: MB/s per process, then each ordering relative to world.
The simulated runs are the CSVs halocompare-<platform>-np<N>.csv beside this file.

    python bench/simulated/compare.py > bench/simulated/tables.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parents[1] / "reference" / "gropp-lusk"
COMMS = ["world", "evenodd", "cart"]

# simulated platform -> published machines it is set beside
PAIRS = {
    "torus-bgl-64": ["BG/L"],
    "torus-bgl": ["BG/L"],
    "xt-torus": ["Cray XT3", "Cray XT4"],
}


def published() -> pd.DataFrame:
    """The published halo rows of every run in reference/gropp-lusk (mbps verbatim)."""
    parts = []
    for path in sorted(REFERENCE.glob("halocompare-*.csv")):
        ref = json.loads(path.with_suffix(".json").read_text())["reference"]
        d = pd.read_csv(path, dtype={"periodic": str}, keep_default_na=False)
        d = d[d["test"] == "halo"]
        mode = f" {ref['mode']}" if ref["mode"] else ""
        parts.append(d.assign(machine=ref["machine"], periodic=d["periodic"].map({"0": "no", "1": "yes", "": "unknown"}),
                              source=f"{ref['machine']}{mode} (published, np {int(d['nprocs'].iloc[0])})"))
    ref = pd.concat(parts, ignore_index=True)
    return ref[["source", "machine", "periodic", "neighbors", "comm", "method", "mbps"]]


def simulated(platform: str) -> pd.DataFrame | None:
    paths = sorted(HERE.glob(f"halocompare-{platform}-np[0-9]*.csv"))
    if not paths:
        return None
    df = pd.read_csv(paths[0])
    df = df[(df["test"] == "halo") & df["mbps"].notna()].copy()
    df["periodic"] = df["periodic"].map({0: "no", 1: "yes"})
    df["source"] = f"{platform} (simulated, np " + df["nprocs"].astype(str) + ")"
    df["machine"] = platform
    return df[["source", "machine", "periodic", "neighbors", "comm", "method", "mbps"]]


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Rows: source x periodic x comm; columns: neighbours x method."""
    wide = df.pivot_table(
        index=["source", "periodic", "comm"],
        columns=["neighbors", "method"],
        values="mbps",
        aggfunc="first",
    )
    wide = wide.reindex(sorted(wide.columns, key=lambda c: (c[0], c[1])), axis=1)
    order = {c: i for i, c in enumerate(COMMS)}
    wide = wide.sort_index(
        key=lambda idx: idx.map(order) if idx.name == "comm" else idx
    )
    wide.columns = [f"{n}-nbr {m}" for n, m in wide.columns]
    return wide


def relative(wide: pd.DataFrame) -> pd.DataFrame:
    """Each communicator's rate divided by world's, same source/periodic/column."""
    world = wide.xs("world", level="comm")
    rel = wide.div(world.reindex(wide.index.droplevel("comm")).to_numpy())
    return rel.drop(index="world", level="comm")


def markdown(df: pd.DataFrame, digits: int) -> str:
    """A pipe table (without the optional tabulate package)."""
    out = df.reset_index()
    cols = list(out.columns)
    num = out.select_dtypes("number").columns
    text = out.astype(str)
    text[num] = out[num].apply(
        lambda c: c.map(lambda v: "" if pd.isna(v) else f"{v:.{digits}f}")
    )
    lines = [
        "| " + " | ".join(map(str, cols)) + " |",
        "|" + "|".join("---" for _ in cols) + "|",
    ]
    lines += ("| " + text.agg(" | ".join, axis=1) + " |").tolist()
    return "\n".join(lines)


def main() -> int:
    ref = published()
    blocks = []
    for platform, machines in PAIRS.items():
        sim = simulated(platform)
        if sim is None:
            print(
                f"(no simulated results for {platform}: run bench/simulated/run.sh {platform})\n"
            )
            continue
        methods = sorted(set(ref.loc[ref["machine"].isin(machines), "method"]))
        both = pd.concat(
            [ref[ref["machine"].isin(machines)], sim[sim["method"].isin(methods)]]
        )
        both = both[both["comm"].isin(COMMS)]
        wide = table(both)
        blocks.append(
            f"## {platform} beside {', '.join(machines)}: MB/s per process\n\n{markdown(wide, 0)}\n"
        )
        blocks.append(
            f"## {platform} beside {', '.join(machines)}: rate relative to world (< 1: slower than world)\n\n"
            f"{markdown(relative(wide), 2)}\n"
        )
    print("\n".join(blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
