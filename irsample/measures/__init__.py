"""Measures: value objects with canonical names, computed by kernels over runs x topics.

Importing this package registers every family; :func:`parse` turns names into measures.
"""

from . import (  # noqa: F401  (importing registers the families)
    average_precision,
    condensed,
    counts,
    design_based,
    gain,
    inferred,
    interpolated,
    judged,
    ppi_measures,
    precision,
    residual,
    sampled,
    stat,
    subcollection,
)
from .base import MEASURE_SETS, REGISTRY, TREC_REGISTRY, Measure, parse, parse_all
from .context import EvalContext

__all__ = [
    "EvalContext", "MEASURE_SETS", "Measure", "REGISTRY", "TREC_REGISTRY", "parse", "parse_all",
]
