"""The harness reads top-down (docs/architecture.md, "The harness's layers"): no file of src/common calls a
function defined in a file above it in the documented order, none calls back into run.c (the driver's API),
and none includes a program's header.  Read from the sources: the functions each file defines and the mb_
functions it calls (comments and strings left out), so a new back-edge fails here, naming both ends."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

COMMON = ROOT / "src" / "common"
ARCH = ROOT / "docs" / "architecture.md"


def _code(path: Path) -> str:
    src = path.read_text(encoding="utf-8")
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.DOTALL)
    src = re.sub(r"//[^\n]*", " ", src)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', src)


def graph() -> dict[str, set[str]]:
    """file -> the files of src/common whose functions it calls."""
    code = {p.name: _code(p) for p in sorted(COMMON.glob("*.c"))}
    head = re.compile(r"^(?:[\w*]+[ \t]+)+\**(mb_\w+)\s*\([^;{]*\)\s*\{", flags=re.MULTILINE)  # a definition
    defs = {f: set(head.findall(c)) for f, c in code.items()}
    owner = {fn: f for f, d in defs.items() for fn in d}
    calls = {f: set(re.findall(r"\b(mb_\w+)\s*\(", c)) - defs[f] for f, c in code.items()}
    return {f: {owner[c] for c in cs if c in owner and owner[c] != f} for f, cs in calls.items()}


def documented() -> list[list[str]]:
    """The layers as docs/architecture.md lists them, top down: each a list of files."""
    text = ARCH.read_text(encoding="utf-8")
    block = text.split("<!-- layers of src/common, top down -->", 1)[1].split("<!-- end of layers -->", 1)[0]
    return [re.findall(r"`(\w+\.c)`", line) for line in block.splitlines() if re.search(r"`\w+\.c`", line)]


def test_every_file_has_a_documented_layer() -> None:
    layers = documented()
    listed = [f for layer in layers for f in layer]
    assert sorted(listed) == sorted(graph()), "docs/architecture.md's layers must list every src/common/*.c once"
    assert len(listed) == len(set(listed))


def test_no_call_goes_up() -> None:
    """Every call goes to a file of the same layer or one below; nothing calls into run.c (the driver's API: a
    program ends every row itself, mb_measure_group's too)."""
    level = {f: i for i, layer in enumerate(documented()) for f in layer}
    up = {f"{a} calls {b}" for a, bs in graph().items() for b in sorted(bs) if level[b] < level[a] or b == "run.c"}
    assert up == set()


def test_no_cycle_inside_a_layer() -> None:
    """Files of one layer may call each other, but never round in a circle (a cycle is a back-edge too)."""
    g = graph()
    seen: dict[str, int] = {}  # 1 on the path, 2 done
    cycles: list[str] = []

    def visit(f: str, path: list[str]) -> None:
        seen[f] = 1
        for b in sorted(g[f]):
            if seen.get(b) == 1:
                cycles.append(" -> ".join([*path[path.index(b):], b]))
            elif b not in seen:
                visit(b, [*path, b])
        seen[f] = 2

    for f in sorted(g):
        if f not in seen:
            visit(f, [f])
    assert cycles == []


def test_no_program_header_in_the_harness() -> None:
    programs = {p.name for p in (ROOT / "src").iterdir() if p.is_dir() and p.name != "common"}
    bad = [f"{p.name}: {inc}" for p in sorted(COMMON.glob("*.[ch]"))
           for inc in re.findall(r'#include\s+"([^"]+)"', p.read_text(encoding="utf-8"))
           if "/" in inc and inc.split("/")[0] in programs | {".."}]
    assert bad == []
