"""compare's plots pick each plot's first three series by one integer id per series (plots.first_series):
the same rows as drop_duplicates().head(3) over the series columns, also where the third appears late."""

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
    d = pd.DataFrame({"method": method, "nprocs": np.where(np.arange(rows) == rows - 1, 8.0, 4.0),
                      "bytes": np.arange(rows, dtype=float)})
    ids = d.groupby(["method", "nprocs"], sort=False).ngroup().to_numpy()
    for n in (1, 3, 5):
        want = d[["method", "nprocs"]].drop_duplicates().head(n)
        first, place = first_series(ids, n)
        pd.testing.assert_frame_equal(d.iloc[first][["method", "nprocs"]], want)
        # each row's place: the index of its series among the chosen, -1 for a series not chosen
        look = {k: i for i, k in enumerate(want.itertuples(index=False, name=None))}
        assert place.tolist() == [look.get(k, -1) for k in d[["method", "nprocs"]].itertuples(index=False, name=None)]
