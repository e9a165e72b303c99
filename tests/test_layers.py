"""The layer table of docs/design.md holds: no module of sfclab imports a module of a layer
above its own (but the listed exceptions), and no modules import one another in a circle."""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sfclab"
DESIGN = ROOT / "docs" / "design.md"


def _table(text: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header row starts with *header*."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def layers() -> list[tuple[str, list[str]]]:
    """(layer, paths) from top to bottom, as docs/design.md states them."""
    rows = _table(DESIGN.read_text(), "| layer | packages |")
    return [(r[0], re.findall(r"`(sfclab/[^`]*)`", r[1])) for r in rows]


def exceptions() -> set[tuple[str, str]]:
    """The upward imports docs/design.md allows (a table headed ``| from | to |``; none
    when the page has no such table)."""
    text = DESIGN.read_text()
    if "\n| from | to |" not in text:
        return set()
    return {tuple(re.findall(r"`([^`]+)`", f"{r[0]} {r[1]}"))
            for r in _table(text, "| from | to |")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


@lru_cache(maxsize=None)
def imports(path: Path, typing: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every sfclab module *path* imports when it runs: at the top and
    inside functions, not under ``if TYPE_CHECKING:`` (with *typing*, those too)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def walk(nodes):
        for node in nodes:
            if (not typing and isinstance(node, ast.If)
                    and "TYPE_CHECKING" in ast.unparse(node.test)):
                walk(node.orelse)
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.append((node.lineno, sub if sub in MODULES else target))
            elif isinstance(node, ast.Import):
                found.extend((node.lineno, a.name) for a in node.names)
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, (ast.expr_context, ast.operator)):
                    walk([child])

    walk(ast.parse(path.read_text()).body)
    return [(line, m) for line, m in found if m in MODULES]


def layer_of(module: str, table) -> int:
    path = MODULES[module].relative_to(ROOT).as_posix()
    best = None
    for i, (_, paths) in enumerate(table):
        for p in paths:
            if (path == p or (p.endswith("/") and path.startswith(p))) and (
                    best is None or len(p) > len(best[1])):
                best = (i, p)
    assert best is not None, f"{path} is in no layer of docs/design.md: add it to the table"
    return best[0]


def test_the_design_page_states_the_layers():
    table = layers()
    assert [name for name, _ in table][:2] == ["root", "notebook"] and table[-1][0] == "errors"
    for _, paths in table:
        for p in paths:
            assert (ROOT / p).exists(), f"docs/design.md names {p}, which does not exist"


def test_nothing_imports_upwards():
    table, allowed = layers(), exceptions()
    upward, used = [], set()
    for module, path in sorted(MODULES.items()):
        mine = layer_of(module, table)
        for line, target in imports(path):
            theirs = layer_of(target, table)
            if theirs < mine:                   # a smaller index is a higher layer
                if (module, target) in allowed:
                    used.add((module, target))
                    continue
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target} "
                              f"(layer {table[theirs][0]}, above {table[mine][0]})")
    assert not upward, "imports running upwards:\n" + "\n".join(upward)
    assert used == allowed, f"docs/design.md allows imports no module makes: {allowed - used}"


def _circles(typing: bool = False) -> list[list[str]]:
    graph = nx.DiGraph()
    for module, path in MODULES.items():
        graph.add_node(module)
        for line, target in imports(path, typing):
            if target != module:
                graph.add_edge(module, target, line=line)
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_no_import_circles():
    circles = _circles()
    assert not circles, "modules importing one another in a circle:\n" + "\n".join(
        " <-> ".join(c) for c in circles)


#: Circles closed only by an import under ``if TYPE_CHECKING:`` (for a type hint), left
#: to their packages' owners; this list may only shrink.  codegen's (detour <-> generated
#: <-> network) went with issue 31: its data classes are in codegen/journeys.py.
TYPE_ONLY_CIRCLES = [["sfclab.api.lab", "sfclab.api.traffic"],
                     ["sfclab.ir.model", "sfclab.ir.paths"]]


def test_no_new_import_circles_through_type_hints():
    circles = sorted(_circles(typing=True))
    assert circles == TYPE_ONLY_CIRCLES, (
        "modules importing one another in a circle (an import under TYPE_CHECKING "
        f"included): {circles}; known: {TYPE_ONLY_CIRCLES}")
