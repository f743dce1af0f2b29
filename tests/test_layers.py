"""The layers: core imports neither streamlit nor plotly, and its import graph is acyclic, imports inside functions
included (a cycle held together by a function-local import is still a cycle)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code; `from core.estimator import kernels` counts as
    core.estimator.kernels."""
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


# core's layers, from the bottom up: a module imports only from its own layer or the ones below.
LAYERS = (("core.errors", "core.claims"), "core.privacy", "core.data", "core.estimator", "core.mechanisms",
          "core.settings", "core.methods", "core.teaching", "core.report", "core.plan", "core.reproduce",
          ("core.cli", "core.__main__"))


def layer(module: str) -> int:
    for rank, names in enumerate(LAYERS):
        if any(module == name or module.startswith(name + ".") for name in (names if isinstance(names, tuple) else
                                                                            (names,))):
            return rank
    raise AssertionError(f"{module} is in no layer of LAYERS")


def test_every_core_import_points_to_its_own_layer_or_below():
    upward = sorted(f"{a} -> {b}" for a, found in core_graph().items() if a != "core" for b in found
                    if layer(b) > layer(a))
    assert not upward, upward


def test_core_is_in_packages_and_imports_none_of_its_old_flat_modules():
    from core import MOVED

    top = {p.stem for p in CORE.glob("*.py")}
    assert top == {"__init__", "__main__", "claims", "cli", "errors", "plan", "report", "reproduce", "settings"}, top
    for root in (CORE, ROOT / "ui", ROOT / "pages", ROOT / "tests", ROOT / "benchmarks"):
        for path in root.rglob("*.py"):
            old = {m for m in imports(path) if m in MOVED}
            assert not old, (path, old)


def test_a_script_written_against_the_flat_layout_still_runs(tmp_path):
    """A reproduce script downloaded before the packages: its imports name the flat modules."""
    import subprocess
    import sys

    script = tmp_path / "reproduce_x0.py"
    script.write_text(
        "from core.accounting import make_budget\nfrom core.model import ModelSpec\n"
        "from core.pipeline import make_rng, prepare_spec, run_private\nfrom core.spec import SyntheticSpec\n"
        "spec = SyntheticSpec('robust', 2000, 3, 1.0, 1.0, 0)\n"
        "problem = prepare_spec(spec.load(), ModelSpec('robust'), spec)\n"
        "run = run_private(problem, 0, make_budget(4.0, 1e-6, (1, 1, 18)), make_rng(7))\n"
        "print(run.release.status, run.release.value)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    status, value = out.stdout.split()
    import core.mechanisms.pipeline as pipeline
    from core.data.spec import SyntheticSpec
    from core.estimator.model import ModelSpec
    from core.privacy.accounting import make_budget

    spec = SyntheticSpec("robust", 2000, 3, 1.0, 1.0, 0)
    run = pipeline.run_private(pipeline.prepare_spec(spec.load(), ModelSpec("robust"), spec), 0,
                               make_budget(4.0, 1e-6, (1, 1, 18)), pipeline.make_rng(7))
    assert (status, float(value) if value != "None" else None) == (run.release.status, run.release.value)


def test_the_readme_layout_names_every_module():
    """A maintainer finds every module of core, ui and pages in the README's Layout, by its name in backticks."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = text[text.index("## Layout"):]
    named = set(re.findall(r"`([\w.]+)`", layout)) | set(re.findall(r"`[\w.]+/` \(`(\w+)`", layout))
    named |= {n for group in re.findall(r"\(([^()]*)\)", layout) for n in re.findall(r"`(\w+)`", group)}
    missing = sorted(str(path.relative_to(ROOT)) for root in (CORE, ROOT / "ui", ROOT / "pages")
                     for path in root.rglob("*.py") if path.stem not in ("__init__", "__main__")
                     and path.stem not in named)
    assert not missing, missing
