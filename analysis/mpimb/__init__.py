"""mpimb analysis: turns mpimb CSV + JSON results into tables, plots and reports."""

__version__ = "0.1.0"
