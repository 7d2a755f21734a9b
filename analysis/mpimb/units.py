"""Units: which figure a row is shown as, in which unit — the one place for it.

- MB/s (10^6 bytes one process sends per operation / time) for bandwidth-like tests
  (RATE_TESTS, and every halocompare test);
- Mmsg/s (10^6 messages per second, all pairs together) for the message-rate tests of
  MESSAGE_RATE_TESTS — threads' msgrate-mt, as the program's own stdout table shows it
  (src/threads/report.c: window × pairs / time);
- µs (time per operation) for everything else.

Tables, plots, comparisons and findings all take their value and unit from here."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from .load import rate, stat_time

MBPS = "MB/s"
MMSGS = "Mmsg/s"
US = "µs"
RATE_TESTS = ("bw", "bibw", "msgrate", "halo", "one-sender")
# (program, test) shown as a message rate: messages of the row = sent_bytes / bytes
MESSAGE_RATE_TESTS = {("threads", "msgrate-mt")}


def is_rate(program: str, test: str) -> bool:
    """Bandwidth-like tests (MB/s or Mmsg/s): higher is better; everything else is a time in µs."""
    return program == "halocompare" or any(test == t or test.endswith("-" + t) or test.startswith(t + "-")
                                           for t in RATE_TESTS)


def unit_of(program: str, test: str) -> str:
    if (program, test) in MESSAGE_RATE_TESTS:
        return MMSGS
    return MBPS if is_rate(program, test) else US


def _pair_units(d: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """(the unit of each distinct (program, test) pair, in ngroup order; each row's pair)."""
    pairs = d.groupby(["program", "test"], sort=False, dropna=False, observed=True)
    return [unit_of(str(p), str(t)) for p, t in pairs.size().index], pairs.ngroup().to_numpy()


def units(d: pd.DataFrame) -> np.ndarray:
    """unit_of for every row, vectorised over the distinct (program, test) pairs."""
    if d.empty:
        return np.asarray([], dtype=object)
    names, pair = _pair_units(d)
    return np.asarray(names, dtype=object)[pair]


def unit_column(d: pd.DataFrame) -> pd.Categorical:
    """units() as a categorical: for compare's 10^6 rows, codes instead of a string per row."""
    if d.empty:
        return cast(pd.Categorical, pd.Categorical([], categories=pd.Index([MBPS, MMSGS, US])))
    names, pair = _pair_units(d)
    cats = list(dict.fromkeys(names))
    return cast(pd.Categorical, pd.Categorical.from_codes(np.asarray([cats.index(n) for n in names])[pair],
                                                          categories=pd.Index(cats)))


def rate_mask(d: pd.DataFrame) -> np.ndarray:
    """Rows shown as a rate (MB/s or Mmsg/s)."""
    return np.asarray(units(d) != US, dtype=bool)


def value(unit: np.ndarray | pd.Categorical, t: pd.Series, sent: pd.Series, nbytes: pd.Series) -> np.ndarray:
    """The shown figure of rows from a time per operation t [s] and the bytes one process sends per
    operation: MB/s, Mmsg/s (sent / bytes messages) or µs."""
    tt, s, b = (np.asarray(x, dtype=float) for x in (t, sent, nbytes))
    with np.errstate(divide="ignore", invalid="ignore"):
        mbps = s / tt / 1e6
        msgs = np.where(b > 0, mbps / b, np.nan)
    return np.where(np.asarray(unit == MBPS), mbps, np.where(np.asarray(unit == MMSGS), msgs, tt * 1e6))


def with_values(df: pd.DataFrame, stat: str) -> pd.DataFrame:
    """Adds value (in the row's unit, for the statistic stat) and unit columns."""
    d = df.copy()
    u = units(d)
    r = rate(d, stat).to_numpy(float)
    b = d["bytes"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d["value"] = np.where(u == MBPS, r, np.where(u == MMSGS, np.where(b > 0, r / b, np.nan),
                                                      stat_time(d, stat).to_numpy(float) * 1e6))
    d["unit"] = u
    return d


def axis_label(unit: str, stat: str, per_process: bool = True) -> str:
    """A plot's y label for the unit."""
    if unit == MBPS:
        return "bandwidth [MB/s per process]" if per_process else "bandwidth [MB/s]"
    if unit == MMSGS:
        return "message rate [Mmsg/s, all pairs]"
    return f"time [µs] ({stat})" if stat else "time [µs]"
