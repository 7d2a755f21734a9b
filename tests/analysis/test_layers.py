"""The analysis package's layers point down only (docs/architecture.md, "Analysis"):

    schema  <-  data  <-  render  <-  programs  <-  registry  <-  reports  <-  cli

Built from the source with ast, so a function-level import cannot hide a cycle: (a) the import
graph of analysis/mpimb has no cycle, (b) no function imports one of the package's own modules
(cli.py alone imports its subcommands lazily), (c) no module imports one of a higher layer.
LAYERS below is the one declaration of every module's layer; a new module must be added here."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

PACKAGE = ROOT / "analysis" / "mpimb"
ORDER = ["schema", "data", "render", "programs", "registry", "reports", "cli"]
LAYERS: dict[str, str] = {
    "__init__": "schema",  # the package itself: its version, nothing else
    "schema": "schema",  # the JSON Schema files, column roles, vocabularies, params parser, MIN_REPS_FOR_CI
    "load": "data",  # reading and checking files, the frame
    "keys": "data",  # key columns, repeated runs, params as columns
    "units": "data",  # which value and unit a row is shown in
    "paired": "data",  # the paired verdict: per-round ratios and their interval
    "launches": "data",  # the one rule: ratios across launches, their interval, the margin, Benjamini-Hochberg
    "render": "render",  # numbers and Tables (text, Markdown, LaTeX, HTML, CSV), the generic pivot
    "plotting": "render",  # plot helpers (matplotlib on first use)
    "judge": "render",  # the findings rules
    "page": "render",  # HTML page pieces and banners
    "programs": "programs",
    "programs.halocompare": "programs",
    "programs.pingpong": "programs",
    "programs.collectives": "programs",
    "programs.rma": "programs",
    "programs.threads": "programs",
    "registry": "registry",  # the programs, registered once
    "tables": "reports",
    "plots": "reports",
    "findings": "reports",
    "report": "reports",
    "compare": "reports",
    "crosssystem": "reports",
    "hockney": "reports",
    "bcast_model": "reports",
    "model": "reports",
    "profile": "reports",
    "timeline": "reports",  # a trace's timeline and send distribution (libmpimb-prof.so's trace mode)
    "halo_steps": "reports",  # the steps of one halo exchange (docs/halo-timelines.md)
    "tune": "reports",  # the library's tuning file from collectives --algorithms results
    "guidelines": "reports",  # the self-consistent performance guidelines checked (mpimb-report guidelines)
    "recommend": "reports",  # the halo recommendation: options to use per stencil and size range, table and JSON
    "cli": "cli",
    "__main__": "cli",
}
LAZY_OK = {"cli"}  # may import its subcommand modules inside functions


def modules(pkg: Path) -> dict[str, Path]:
    """Module name (relative to the package: 'programs.rma', 'schema', '__init__') -> file."""
    out = {}
    for p in sorted(pkg.rglob("*.py")):
        parts = list(p.relative_to(pkg).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _package_of(name: str, path: Path) -> list[str]:
    """The package a module's relative imports start from, as name parts ([] = the root)."""
    if name == "__init__":
        return []
    parts = name.split(".")
    return parts if path.name == "__init__.py" else parts[:-1]


def imports(name: str, path: Path, known: set[str], root: str) -> list[tuple[str, int, bool]]:
    """(imported module of the package, line, inside a function or class) for every import of its own
    modules in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    nested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            nested.update(id(n) for n in ast.walk(node) if n is not node)

    def resolve(parts: list[str]) -> str | None:
        while parts:
            cand = ".".join(parts)
            if cand in known:
                return cand
            parts = parts[:-1]
        return "__init__"

    out: list[tuple[str, int, bool]] = []
    for node in ast.walk(tree):
        targets: list[str | None] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                own = _package_of(name, path)
                up = node.level - 1
                if up > len(own):
                    continue
                base = own[: len(own) - up]
            elif node.module and (node.module == root or node.module.startswith(root + ".")):
                base = []
                mod = node.module[len(root) + 1:] if node.module != root else ""
                node = ast.ImportFrom(module=mod or None, names=node.names, level=1, lineno=node.lineno)
            else:
                continue
            head = base + (node.module.split(".") if node.module else [])
            for alias in node.names:
                sub = ".".join([*head, alias.name])
                targets.append(sub if sub in known else resolve(list(head)))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == root or alias.name.startswith(root + "."):
                    targets.append(resolve(alias.name.split(".")[1:]))
        for t in targets:
            if t is not None and t != name:
                out.append((t, node.lineno, id(node) in nested))
    return out


def graph(pkg: Path) -> tuple[dict[str, set[str]], list[str]]:
    """(module -> the modules it imports, at module level or not; 'file:line: ...' per function-level import)."""
    mods = modules(pkg)
    known = set(mods)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    lazy: list[str] = []
    for name, path in mods.items():
        for target, line, inner in imports(name, path, known, pkg.name):
            edges[name].add(target)
            if inner and name not in LAZY_OK:
                lazy.append(f"{path.relative_to(pkg.parent)}:{line}: imports {target} inside a function")
    return edges, lazy


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first search (each once, as the path that closes it)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == 1:
                found.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def upward(edges: dict[str, set[str]]) -> list[str]:
    rank = {n: i for i, n in enumerate(ORDER)}
    return [f"{a} ({LAYERS[a]}) imports {b} ({LAYERS[b]})" for a, ts in sorted(edges.items()) for b in sorted(ts)
            if a in LAYERS and b in LAYERS and rank[LAYERS[b]] > rank[LAYERS[a]]]


def test_every_module_has_a_layer() -> None:
    mods = set(modules(PACKAGE))
    assert mods - set(LAYERS) == set(), "declare the layer of every new module in LAYERS"
    assert set(LAYERS) - mods == set(), "LAYERS names modules that no longer exist"
    assert set(LAYERS.values()) <= set(ORDER)


def test_no_import_cycle() -> None:
    edges, _ = graph(PACKAGE)
    assert cycles(edges) == []


def test_no_function_level_import_of_the_package() -> None:
    _, lazy = graph(PACKAGE)
    assert lazy == []


def test_layers_point_down() -> None:
    edges, _ = graph(PACKAGE)
    assert upward(edges) == []


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """A package with a cycle held together by a function-level import, and an upward import: found."""
    pkg = tmp_path / "mpimb"
    (pkg / "programs").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "programs" / "__init__.py").write_text("")
    (pkg / "render.py").write_text("def f():\n    from .tables import build\n    return build\n")
    (pkg / "tables.py").write_text("from .render import f\nfrom mpimb.programs import rma\n")
    (pkg / "programs" / "rma.py").write_text("from .. import tables\nimport mpimb.render\n")
    edges, lazy = graph(pkg)
    assert edges["render"] == {"tables"} and edges["tables"] == {"render", "programs.rma"}
    assert edges["programs.rma"] == {"tables", "render"}
    assert lazy == ["mpimb/render.py:2: imports tables inside a function"]
    assert ["render", "tables", "render"] in cycles(edges)
    assert "programs.rma (programs) imports tables (reports)" in upward(edges)
    assert "render (render) imports tables (reports)" in upward(edges)


def test_findings_path_loads_no_plotting_library() -> None:
    """mpimb-report findings is called by the C programs at the end of every run: it must stay light."""
    code = ("import sys; from mpimb import cli, findings, judge; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'cycler', 'PIL')))")
    p = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "[]"


@pytest.mark.parametrize("layer", ORDER)
def test_layers_are_documented(layer: str) -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"`{layer}`" in text, f"docs/architecture.md's Analysis section names the {layer} layer"
