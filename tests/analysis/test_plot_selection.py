"""compare's plots pick each plot's first three series by comparing the series columns (plots.first_series):
the same rows as drop_duplicates().head(3) over those columns, also where the third appears late, with
NaN equal to NaN."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from mpimb.plots import first_series


@pytest.mark.parametrize("late", [0, 63, 64, 500, 4095, 5000])
def test_first_series_is_drop_duplicates_head(late: int) -> None:
    rows = 6000
    method = np.array(["a"] * rows, dtype=object)
    method[late::7] = "b"
    method[min(late + 1, rows - 1)] = "c"
    nprocs = np.where(np.arange(rows) == rows - 1, 8.0, 4.0)
    nprocs[late // 2::11] = np.nan
    d = pd.DataFrame({"method": method, "nprocs": nprocs, "bytes": np.arange(rows, dtype=float)})
    cols = [pd.factorize(d["method"])[0], d["nprocs"].to_numpy(float)]
    for n in (1, 3, 5):
        want = d[["method", "nprocs"]].drop_duplicates().head(n)
        first, place = first_series(cols, n)
        pd.testing.assert_frame_equal(d.iloc[first][["method", "nprocs"]], want)
        # each row's place: the index of its series among the chosen, -1 for a series not chosen
        look = {k: i for i, k in enumerate(want.fillna(-1).itertuples(index=False, name=None))}
        assert place.tolist() == [look.get(k, -1) for k in d[["method", "nprocs"]].fillna(-1).itertuples(
            index=False, name=None)]
