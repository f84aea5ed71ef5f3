"""Measures: value objects with canonical names, computed by kernels over runs x topics.

:func:`parse` turns names into measures, importing only the family modules a name can refer to
(:mod:`.families`); ``REGISTRY`` and ``TREC_REGISTRY`` (every family by irsample and trec_eval
name) import them all on first access.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Measure
    from .context import EvalContext
    from .names import MEASURE_SETS, parse, parse_all

#: imported from :mod:`.base` and :mod:`.names` on first use (they need NumPy; the command line
#: reads :mod:`.variance_methods` before it imports NumPy)
_FROM_BASE = ("Measure",)
_FROM_NAMES = ("MEASURE_SETS", "parse", "parse_all")

__all__ = [
    "EvalContext", "MEASURE_SETS", "Measure", "REGISTRY", "TREC_REGISTRY", "parse", "parse_all",
]


def __getattr__(name: str):
    """The names of :mod:`.base` and :mod:`.names`; ``EvalContext`` (imported on first use: it
    needs the model, which ``from irsample.measures.base import ...`` alone should not load);
    ``REGISTRY`` and ``TREC_REGISTRY``, complete: every family module imported first."""
    if name in _FROM_BASE:
        from . import base

        return getattr(base, name)
    if name in _FROM_NAMES:
        from . import names

        return getattr(names, name)
    if name == "EvalContext":
        from .context import EvalContext

        return EvalContext
    if name in ("REGISTRY", "TREC_REGISTRY"):
        from . import base
        from .families import load_all

        load_all()
        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
