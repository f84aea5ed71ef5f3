"""The measures' rooms: every module imports on its own in a fresh interpreter (no import order
makes it work), and the estimators of incomplete judgments share one stratum walk.

Cycles and imports pointing up (the rooms inside ``irsample/measures`` are layers of their own:
core, ``trec_eval``, ``incomplete``, ``ht``, ``ppi``) are checked for the whole package by
``tests/test_layers.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .test_layers import _graph

PACKAGE = Path(__file__).resolve().parents[1] / "irsample" / "measures"
INCOMPLETE = "irsample.measures.incomplete."


def _modules() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parents[1]).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def test_estimators_share_the_strata_walk():
    """infAP, sample_eval's estimators and both variance modules take their constants and
    counters from ``incomplete/strata_walk.py``, which imports nothing of ours; the variance
    modules import no estimator."""
    graph = {name: {t for t, _ in edges} for name, edges in _graph().items()}
    walk = INCOMPLETE + "strata_walk"
    assert graph[walk] == set()
    for name in ("inferred_ap", "sample_eval", "sample_eval_variance", "ap_variance"):
        assert walk in graph[INCOMPLETE + name]
    estimators = {INCOMPLETE + n for n in ("inferred_ap", "sample_eval")}
    assert graph[INCOMPLETE + "ap_variance"].isdisjoint(estimators)
    assert graph[INCOMPLETE + "sample_eval_variance"].isdisjoint(estimators)


@pytest.mark.parametrize("name", _modules())
def test_each_module_imports_fresh(name):
    root = str(PACKAGE.parents[1])
    code = f"import sys; sys.path.insert(0, {root!r}); import {name}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
