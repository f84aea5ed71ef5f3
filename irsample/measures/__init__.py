"""Measures: value objects with canonical names, computed by kernels over runs x topics.

:func:`parse` turns names into measures, importing only the family modules a name can refer to
(:mod:`.families`); ``REGISTRY`` and ``TREC_REGISTRY`` (every family by irsample and trec_eval
name) import them all on first access.
"""

from .base import MEASURE_SETS, Measure, parse, parse_all
from .context import EvalContext

__all__ = [
    "EvalContext", "MEASURE_SETS", "Measure", "REGISTRY", "TREC_REGISTRY", "parse", "parse_all",
]


def __getattr__(name: str):
    """``REGISTRY`` and ``TREC_REGISTRY``, complete: every family module imported first."""
    if name in ("REGISTRY", "TREC_REGISTRY"):
        from . import base
        from .families import load_all

        load_all()
        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
