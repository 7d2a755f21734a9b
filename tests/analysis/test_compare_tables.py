"""compare's frame, its long tables and its overlays: the runs' own rows are released once they are in
compare's frame (their memory reused); a table longer than --max-rows shows FAILED, then significant, then
the largest differences first, in the order of the frame among equals; the overlays drawn one after
another in one figure are the PNGs of new figures, byte for byte."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import FIXTURES
from mpimb import compare, plots
from mpimb.keys import split_sync
from mpimb.load import Run

SETS = [str(FIXTURES / "clusterA"), str(FIXTURES / "clusterB")]
Built = tuple[list[tuple[str, list[Run]]], list[str], pd.DataFrame, pd.DataFrame]


@pytest.fixture(scope="module")
def built() -> Built:
    loaded = compare.load_sets(SETS, parallel=False)
    sets = [(p, runs) for p, (runs, _) in zip(SETS, loaded)]
    machines = compare.machine_names(sets)
    names = list(machines.values())
    agg, launches = compare.aggregate(split_sync(compare.machines_frame(sets, machines)), "median")
    pf = compare.plot_frame(agg)
    return sets, names, compare.ratios(pf, names, launches), pf


def test_runs_are_released_once_in_the_frame(built: Built) -> None:
    sets = built[0]
    runs = [r for _, rs in sets for r in rs]
    assert runs and all(r.shared is None and not r.cut for r in runs)
    assert all(r.nrows > 0 and r.program for r in runs)  # what compare still asks of a run
    with pytest.raises(AssertionError, match="released"):
        _ = runs[0].rows


def test_a_long_table_shows_failed_then_significant_then_largest_first(
        built: Built) -> None:
    _, names, w, _ = built
    limit = 3
    tables = compare.ratio_tables(w, names, limit)
    long = [t for t in tables if any(f"{limit} of " in n for n in t.notes)]
    assert long, "the fixtures should have a (program, test) with more than 3 configurations"
    for t in long:
        prog, test = t.title.split(":")[0].split(" ", 1)
        g = w[(w["program"] == prog) & (w["test"] == test)]
        score = np.zeros(len(g))
        for n in names[1:]:
            lr = np.abs(np.log(g[f"ratio@{n}"].to_numpy(float)))
            score = np.fmax(score, np.where(g[f"sig@{n}"].to_numpy(bool), lr + 100, np.nan_to_num(lr)))
        failed = np.logical_or.reduce([g[f"failed@{n}"].to_numpy(object) == True for n in names])
        want = g.iloc[np.argsort(-np.where(failed, np.inf, score), kind="stable")[:limit]]
        shown = [(r[0], r[1]) for r in t.rows]
        assert shown == [(compare.variant_name(r) or "—", compare.fmt_bytes(r["bytes"]) if r["bytes"] >= 0 else "")
                         for _, r in want.iterrows()]


def test_overlays_in_one_figure_are_those_of_new_figures(built: Built) -> None:
    _, names, _, pf = built
    specs = [s for s in plots.compare_specs(pf, "median", names, 12) if s[0] is plots.overlay]
    assert len(specs) >= 3, "the fixtures should give several overlays"
    again = plots.draw(specs)
    new = []
    for spec in specs:
        for fig, _ in plots._OVERLAY:
            plots.pyplot().close(fig)
        plots._OVERLAY.clear()
        new += plots.draw([spec])
    assert len({p.png for p in new}) == len(specs)  # different figures
    assert [p.png for p in again] == [p.png for p in new]
