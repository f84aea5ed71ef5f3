"""The Examples sections of the public API's docstrings run, and print what they say.

The modules are listed here rather than collected with ``--doctest-modules`` over the whole
package: importing every module would import the optional assessment app (``irsample[assess]``)
and the Dask executor, which the default test run must not need. Every module listed must hold
at least one example.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = (
    "irsample.api",
    "irsample.comparing",
    "irsample.errors",
    "irsample.evaluation",
    "irsample.measures.trec_eval",
    "irsample.measures.incomplete",
    "irsample.measures.ht",
    "irsample.measures.ppi",
    "irsample.design.frame",
    "irsample.design.pools",
    "irsample.design.sampling.stratified",
    "irsample.design.sampling.importance",
    "irsample.design.sampling.allocated",
    "irsample.design.sampling.named",
    "irsample.experiments.runner",
    "irsample.experiments.trial",
    "irsample.stats.multiple",
)

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


@pytest.mark.parametrize("name", MODULES)
def test_examples_run(name, capsys):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, report=True)
    report = capsys.readouterr().out
    assert result.attempted > 0, f"{name} has no example"
    assert result.failed == 0, report
