"""mpimb analysis: turns mpimb CSV + JSON results into tables, plots and reports."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mpimb")  # the suite's VERSION, set when the package was installed
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "unknown"
