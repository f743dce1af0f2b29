"""The layers: core imports neither streamlit nor plotly, and its import graph is acyclic, imports inside functions
included (a cycle held together by a function-local import is still a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code; `from core import kernels` counts as core.kernels."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def core_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in CORE.rglob("*.py")}
    return {name: {m for m in imports(path) if m in modules and m != name} for name, path in modules.items()}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None (depth-first search with colours)."""
    colour, stack = dict.fromkeys(graph, 0), []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour[nxt] == 1:
                return stack[stack.index(nxt):] + [nxt]
            if colour[nxt] == 0 and (found := visit(nxt)):
                return found
        colour[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if colour[node] == 0 and (found := visit(node)):
            return found
    return None


def test_core_imports_no_user_interface():
    for path in CORE.rglob("*.py"):
        ui = {m.split(".")[0] for m in imports(path) if m.split(".")[0] in ("streamlit", "plotly", "ui", "pages")}
        assert not ui, (path.name, ui)


def test_core_import_graph_is_acyclic():
    assert cycle(core_graph()) is None, " -> ".join(cycle(core_graph()))


def test_the_cycle_finder_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
