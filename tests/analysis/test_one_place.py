"""Each fact once (docs/architecture.md, "Analysis: the one place for each fact"): key columns and
their roles come from the schema, params are parsed by schema.parse_params alone, a halocompare
method's family and the thread levels are the schema's vocabularies, units come from mpimb.units."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
from helpers import ROOT

PACKAGE = ROOT / "analysis" / "mpimb"


def sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_key_subsets_are_named_by_role() -> None:
    """No hand-written list of key columns: a literal naming three or more of them at module level, or
    the whole layout (nprocs, nnodes, ppn) anywhere, is a subset that belongs to schema.key_roles."""
    from mpimb import schema

    keys = set(schema.key_columns())
    layout = set(schema.key_roles("layout"))
    found = []
    for p, src in sources().items():
        if p.parent.name == "schema":
            continue
        tree = ast.parse(src)
        top = {id(n) for st in tree.body if isinstance(st, (ast.Assign, ast.AnnAssign)) for n in ast.walk(st)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                names = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if layout <= names or (id(node) in top and len(names & keys) >= 3):
                    found.append(f"{p.relative_to(ROOT)}:{node.lineno}: {sorted(names & keys)}")
    assert found == []


def test_roles_give_the_subsets_the_package_uses() -> None:
    from mpimb import keys, render, schema

    assert schema.key_roles("test", "config") == ["test", "method", "comm", "neighbors", "periodic", "threads"]
    assert keys.PER_RUN == ["program", "nprocs", "nnodes", "ppn", "thread_level"]
    assert render.BLOCK == ["label", "library", "program", "nprocs", "nnodes", "ppn"]
    every = [r for c in schema.specs() if c.get("x-key") for r in [c.get("x-role")]]
    assert None not in every and set(every) == set(schema.roles())
    assert sorted(schema.key_roles(*schema.roles())) == sorted(schema.key_columns())


def test_params_are_parsed_in_one_place() -> None:
    """The regular expressions that used to pick pairs out of params ('(?:^|;)key=...') are gone."""
    bad = [f"{p.relative_to(ROOT)}" for p, src in sources().items()
           if re.search(r"\(\?:\^\|;\)|\(\^\|;\)", src)]
    assert bad == []
    from mpimb.keys import param_numbers, param_values, split_sync, without_param

    p = pd.Series(["a=1;sync=window;window=64", "", "sync=barrier", "a=x"])
    assert list(param_values(p, "sync")) == ["window", "", "barrier", ""]
    assert list(param_numbers(p, "a").fillna(-1)) == [1, -1, -1, -1]
    assert list(without_param(p, "sync")) == ["a=1;window=64", "", "", "a=x"]
    d = split_sync(pd.DataFrame({"params": p}))
    assert list(d["sync"]) == ["window", "", "barrier", ""] and d["params"].iloc[0] == "a=1;window=64"


def test_tests_and_scripts_parse_params_through_the_schema() -> None:
    """tests/, scripts/ and bench/ read a row's params with schema.parse_params too: no params string is split
    by hand (`r["params"].split(";")`), which would miss the parser's escaping and checks."""
    hand = re.compile(r"""params["']\]\s*\.split\(|\.split\(["'];["']\)\)|params["']\]\.split\(["']\w+=""")
    files = [p for d in ("tests", "scripts", "bench") for p in sorted((ROOT / d).rglob("*"))
             if p.is_file() and (p.suffix == ".py" or p.read_bytes()[:40].startswith(b"#!/usr/bin/env python"))]
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in files
           for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
           if hand.search(line) and p.name != "test_one_place.py"]
    assert files and bad == []


def test_method_families_cover_halocompare() -> None:
    """Every method in halocompare's C method tables has a family in the schema's vocabulary; the
    neighbourhood collectives are neither point-to-point nor one-sided."""
    from mpimb import schema

    fam = schema.method_families("halocompare")
    c = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "halocompare").glob("*.c"))
    # {name, setup, run, teardown, no_phases}: no_phases NULL or why the phases cannot be told apart
    methods = set(re.findall(r'^\s*\{"([a-z0-9-]+)",\s*\w+,\s*\w+,\s*\w+,\s*(?:NULL|"[^"]*")\}', c,
                             re.MULTILINE))
    assert {"irecv-isend", "rma-fence-put", "neighbor-alltoall"} <= methods
    assert methods - set(fam) == set()
    assert fam["neighbor-alltoall"] == fam["neighbor-ineighbor"] == schema.NEIGHBOURHOOD
    assert {fam[m] for m in methods} == {schema.POINT_TO_POINT, schema.ONE_SIDED, schema.NEIGHBOURHOOD}
    assert not any(re.search(r'startswith\("rma-"\)|match\(r"\(rma\|neighbor\)', src) for src in sources().values())


def test_thread_levels_and_min_reps_come_from_the_schema() -> None:
    from mpimb import judge, schema

    assert schema.thread_levels() == ["single", "funneled", "serialized", "multiple"]
    assert schema.mpi_thread_level("funneled") == "MPI_THREAD_FUNNELED"
    assert schema.MIN_REPS_FOR_CI == judge.MIN_REPS == 6
    assert not any('"serialized"' in src for p, src in sources().items() if p.parent.name != "schema")


def test_msgrate_mt_is_in_the_programs_unit() -> None:
    """threads msgrate-mt in Mmsg/s (window × pairs / time, as src/threads/report.c prints it); bandwidth in
    MB/s; times in µs — for every statistic."""
    from mpimb.units import MBPS, MMSGS, US, unit_of, with_values

    assert unit_of("threads", "msgrate-mt") == MMSGS
    assert unit_of("threads", "bw-mt") == MBPS and unit_of("pingpong", "msgrate") == MBPS
    assert unit_of("threads", "latency-mt") == US
    window, threads, nbytes, t = 64, 4, 8, 20e-6
    sent = window * threads * nbytes  # the row's bytes per operation (sent_bytes), mbps = sent / t
    d = pd.DataFrame({"program": ["threads", "threads"], "test": ["msgrate-mt", "bw-mt"], "bytes": [nbytes, 65536.0],
                      "mbps": [sent / t / 1e6, 1000.0], "time_median_s": [t, 1.0], "time_min_s": [t / 2, 0.5]})
    v = with_values(d, "median")
    assert list(v["unit"]) == [MMSGS, MBPS]
    assert np.isclose(v["value"].iloc[0], window * threads / t / 1e6)  # 12.8 Mmsg/s
    assert np.isclose(with_values(d, "min")["value"].iloc[0], 2 * window * threads / t / 1e6)


def test_tests_call_mpimb_report_in_one_place() -> None:
    """The tests reach mpimb-report through tests/conftest.py alone (REPORT, cli, cli_proc, report): no test builds
    the console script's path or a subprocess of it by hand.  tests/test_install.py checks the installed copy
    under its own prefix, and is the one exception."""
    by_hand = re.compile(r"""\.venv/bin/mpimb-report|/\s*["']mpimb-report["']|["']-m["'],\s*["']mpimb["']""")
    files = sorted((ROOT / "tests").rglob("*.py"))
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in files
           if p.name not in ("conftest.py", "test_install.py", "test_one_place.py")
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if by_hand.search(line)]
    assert files and bad == []


def test_halo_stencils_are_one_list() -> None:
    """halocompare's stencils: the C table (src/halocompare/grid.c, halo_stencils) and the schema's list that
    mpimb-report checks rows against (results.schema.json, neighbors, x-stencils) are the same, and no analysis
    source writes the list out again."""
    from mpimb import schema

    grid = (ROOT / "src" / "halocompare" / "grid.c").read_text(encoding="utf-8")
    c = re.search(r"halo_stencils\[NSTENCIL\]\s*=\s*\{([\d,\s]+)\}", grid)
    assert c and [int(x) for x in c[1].split(",")] == schema.stencils() == [2, 4, 6, 8, 26]
    assert not any(re.search(r"\[2, 4, 6, 8, 26\]", src) for src in sources().values())

