"""The one registry of the programs: name -> its tables, plots and findings.  A program not
listed gets the generic table (rows = test and the config key columns, columns = bytes) and a
size sweep per test, and no findings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from .plotting import Plot, per_test
from .programs import collectives, halocompare, pingpong, rma, threads
from .render import KEY, Table, pivot

TableFn = Callable[[pd.DataFrame, str], list[Table]]
PlotFn = Callable[[pd.DataFrame, str, str, str], list[Plot]]
FindFn = Callable[[pd.DataFrame, str], list[tuple[str, str]]]


def generic_tables(d: pd.DataFrame, ctx: str) -> list[Table]:
    return [pivot(d, KEY, ["bytes"], f"{d['program'].iloc[0]} — {ctx}")]


def no_findings(d: pd.DataFrame, where: str) -> list[tuple[str, str]]:
    return []


@dataclass(frozen=True)
class Program:
    name: str
    # one block's tables (the rows of one machine, program and layout; ctx names them)
    tables: TableFn = generic_tables
    # one block's plots (g, stat, ctx, base of the file names)
    plots: PlotFn = per_test
    # (topic, sentence) pairs from the usable rows of one machine and layout (where: ", np16 (2×8)" or "")
    findings: FindFn = no_findings
    # "layout": findings per process layout; "machine": over every layout of a machine (runs that differ
    # in what the rows cannot show, e.g. the per-thread-level runs of threads)
    findings_over: str = "layout"
    # tables and plots over every block of the set (None: none)
    set_tables: Callable[[pd.DataFrame], list[Table]] | None = None
    set_plots: Callable[[pd.DataFrame, str], list[Plot]] | None = None


PROGRAMS: dict[str, Program] = {p.name: p for p in (
    Program("halocompare", halocompare.tables, halocompare.plots, halocompare.findings),
    Program("pingpong", pingpong.tables, pingpong.plots, pingpong.findings),
    Program("collectives", collectives.tables, collectives.plots, collectives.findings,
            set_tables=collectives.layout_tables),
    Program("rma", rma.tables, rma.plots, rma.findings),
    Program("threads", threads.tables, threads.plots, threads.findings, findings_over="machine",
            set_plots=threads.set_plots),
)}


def program(name: str) -> Program:
    """The registered program, or the generic one."""
    return PROGRAMS.get(name) or Program(name)
