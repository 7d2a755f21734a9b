"""collectives' files call one way (docs/architecture.md, "Programs are drivers"): main.c (the tests) ->
algorithms_lib.c (--algorithms) -> test.c (one test around its measurement) -> kernels.c (the timed regions),
and no two files of src/collectives call each other's coll_ functions round in a circle.  Read from the
sources as tests/test_c_layers.py reads src/common."""

from __future__ import annotations

import re

from conftest import ROOT
from test_c_layers import _code

COLL = ROOT / "src" / "collectives"
DIRECTION = ["main.c", "algorithms_lib.c", "test.c", "kernels.c"]


def graph() -> dict[str, set[str]]:
    """file -> the files of src/collectives whose coll_ functions it calls."""
    code = {p.name: _code(p) for p in sorted(COLL.glob("*.c"))}
    head = re.compile(r"^(?:[\w*]+[ \t]+)+\**(coll_\w+)\s*\([^;{]*\)\s*\{", flags=re.MULTILINE)
    defs = {f: set(head.findall(c)) for f, c in code.items()}
    owner = {fn: f for f, d in defs.items() for fn in d}
    calls = {f: set(re.findall(r"\b(coll_\w+)\s*\(", c)) - defs[f] for f, c in code.items()}
    return {f: {owner[c] for c in cs if c in owner and owner[c] != f} for f, cs in calls.items()}


def test_the_direction() -> None:
    g = graph()
    up = [f"{a} calls {b}" for i, a in enumerate(DIRECTION) for b in DIRECTION[:i] if b in g[a]]
    assert up == []
    assert "algorithms_lib.c" in g["main.c"] and "test.c" in g["algorithms_lib.c"] and "kernels.c" in g["test.c"]


def test_no_cycle() -> None:
    g = graph()
    cycles = [f"{a} <-> {b}" for a in sorted(g) for b in sorted(g[a]) if a < b and a in g.get(b, set())]
    assert cycles == []
