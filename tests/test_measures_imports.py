"""The measures package imports without cycles, deferred imports included.

Every ``import`` / ``from ... import`` statement of a module of ``irsample/measures`` (at module
level or inside a function, where a deferred import hides a cycle) gives an edge to the module it
names inside the package; the graph must be acyclic. Each module also imports on its own in a
fresh interpreter (no import order makes it work).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "irsample" / "measures"


def _edges(path: Path) -> set[str]:
    """Modules of the measures package that ``path`` imports (any nesting)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from .x import y / from . import x
                if node.module:
                    out.add(node.module.split(".")[0])
                else:
                    out.update(alias.name for alias in node.names)
            elif node.level == 0 and node.module and node.module.startswith("irsample.measures."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("irsample.measures."):
                    out.add(alias.name.split(".")[2])
    return out


def _graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    return {name: _edges(path) & modules.keys() - {name} for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_among_measures_modules():
    graph = _graph()
    assert graph["stratified"] == set()  # the lowest room of the estimators
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_estimators_share_the_stratified_walk():
    """The estimator modules take their constants and counters from stratified.py alone."""
    graph = _graph()
    for name in ("inferred", "sampled", "sampled_variance", "ap_variance"):
        assert "stratified" in graph[name]
    assert graph["ap_variance"].isdisjoint({"inferred", "sampled", "sampled_variance"})
    assert graph["sampled_variance"].isdisjoint({"inferred", "sampled", "ap_variance"})


@pytest.mark.parametrize("name", sorted(p.stem for p in PACKAGE.glob("*.py")))
def test_each_module_imports_fresh(name):
    root = str(PACKAGE.parents[1])
    code = f"import sys; sys.path.insert(0, {root!r}); import irsample.measures.{name}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
