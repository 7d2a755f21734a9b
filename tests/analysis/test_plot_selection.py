"""compare's plots pick each plot's first three series from a prefix of its rows (plots._first_distinct):
the same rows as drop_duplicates().head(3) over all of them, also where the third appears late."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from mpimb.plots import _first_distinct


@pytest.mark.parametrize("late", [0, 63, 64, 500, 4095, 5000])
def test_first_distinct_is_drop_duplicates_head(late: int) -> None:
    rows = 6000
    method = np.array(["a"] * rows, dtype=object)
    method[late::7] = "b"
    method[min(late + 1, rows - 1)] = "c"
    d = pd.DataFrame({"method": method, "nprocs": np.where(np.arange(rows) == rows - 1, 8.0, 4.0),
                      "bytes": np.arange(rows, dtype=float)})
    for n in (1, 3, 5):
        want = d[["method", "nprocs"]].drop_duplicates().head(n)
        got = _first_distinct(d, ["method", "nprocs"], n)
        pd.testing.assert_frame_equal(got, want)
