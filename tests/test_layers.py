"""Imports point down the layers, and no irsample module imports itself back.

The layers, bottom to top, are declared once here (:data:`LAYERS`) and described in
docs/architecture.md. Every ``import`` / ``from ... import`` statement of every module under
``irsample/`` gives an edge, at module level or inside a function (a deferred import hides a cycle
as well as a top-level one); relative imports are resolved against the importing module, and
``from package import name`` points at ``package.name`` when that is a module. Imports under
``if TYPE_CHECKING:`` count too: they do not run, but a module that names a higher layer's type
knows that layer. Two rules:

* no upward import: a module may import modules of its own layer or of a lower one;
* no cycle: the graph of modules is acyclic.

The lazy name tables (``irsample._EXPORTS``, ``irsample.cli.COMMANDS``) import by string at run
time; the modules they name sit in higher layers than the table's owner by design (a package's
front door, the command line's dispatch), which the docs describe.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "irsample"

#: bottom to top; a module belongs to the first layer with a prefix naming it or a parent package
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("irsample", "irsample.errors", "irsample.stats")),
    ("io", ("irsample.io",)),
    ("model", ("irsample.model", "irsample._build", "irsample._rank")),
    # measures: the core (Measure, registry, EvalContext, kernels, pool layout), then its rooms
    ("measures", ("irsample.measures",)),
    ("trec_eval's measures", ("irsample.measures.trec_eval",)),
    ("estimators for incomplete judgments", ("irsample.measures.incomplete",)),
    ("design-based estimators", ("irsample.measures.ht",)),
    ("prediction-powered estimators", ("irsample.measures.ppi",)),
    ("results", ("irsample.evaluation", "irsample.tidy", "irsample.comparison",
                 "irsample.formats", "irsample.plots", "irsample.trec_inputs",
                 "irsample.comparison_table")),
    ("design", ("irsample.design",)),
    ("api", ("irsample.api", "irsample.comparing", "irsample.streaming",
             "irsample.judgment_notes")),
    ("experiments", ("irsample.experiments", "irsample.assess")),
    ("commands", ("irsample.commands", "irsample.cli", "irsample.__main__")),
)

def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, package)
    return out


def _imports(name: str, path: Path, package: bool, modules) -> list[tuple[str, int]]:
    """(imported irsample module, line) for every import statement of module ``name``."""
    tree = ast.parse(path.read_text(), str(path))
    here = name.split(".") if package else name.split(".")[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "irsample"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "irsample":
                continue
            for alias in node.names:
                inner = f"{target}.{alias.name}"
                out.append((inner if inner in modules else target, node.lineno))
    return out


def _graph():
    modules = _modules()
    return {name: [(t, line) for t, line in _imports(name, path, package, modules)
                   if t in modules and t != name]
            for name, (path, package) in modules.items()}


def layer_of(module: str) -> int:
    """Index in :data:`LAYERS` of the layer holding ``module`` (longest matching prefix)."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        while stack:
            node, successors = stack[-1]
            nxt = next(successors, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                path = [n for n, _ in stack]
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def test_every_module_has_a_layer():
    for name in _modules():
        layer_of(name)


def test_no_upward_import():
    upward = [f"{name}:{line} ({LAYERS[layer_of(name)][0]}) imports {target} "
              f"({LAYERS[layer_of(target)][0]})"
              for name, edges in _graph().items() for target, line in edges
              if layer_of(target) > layer_of(name)]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    graph = {name: {t for t, _ in edges} for name, edges in _graph().items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_checker_sees_cycles_and_upward_imports(tmp_path):
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    assert layer_of("irsample.commands.eval") > layer_of("irsample.design.frame")
    assert layer_of("irsample.stats.intervals") < layer_of("irsample.io.trec")
    # deferred, relative and TYPE_CHECKING imports are seen and resolved
    source = tmp_path / "frame.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import pools\n"
        "if TYPE_CHECKING:\n"
        "    from ..api import evaluate\n"
        "def f():\n"
        "    from ..measures.base import Measure\n"
        "    import irsample.io.trec\n")
    modules = {"irsample.design.pools": None, "irsample.measures.base": None}
    assert sorted(_imports("irsample.design.frame", source, False, modules)) == [
        ("irsample.api", 4), ("irsample.design.pools", 2), ("irsample.io.trec", 7),
        ("irsample.measures.base", 6)]
    assert layer_of("irsample.measures.ppi.estimate") > layer_of("irsample.measures.ht.pairs")
    assert layer_of("irsample.measures.incomplete.statap") > layer_of("irsample.measures.base")
