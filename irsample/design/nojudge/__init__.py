"""Evaluating without (or with few) judgments: ranking runs from pseudo-qrels built from the
runs themselves, and inferring the relevance of unjudged documents from a sample.

- :mod:`.methods`: Soboroff's random pseudo-qrels, reference count, Aslam & Savell's bias,
  Nuray & Can's Condorcet pseudo-qrels;
- :mod:`.fusion`: Condorcet fusion of runs;
- :mod:`.infer`: Aslam & Yilmaz's inferred relevance from a sample (``infer-qrels``).

The methods are reached as ``nojudge.refcount(...)`` and so on.
"""

from . import methods
from .methods import *  # noqa: F403  (names listed once, in methods.__all__)

__all__ = methods.__all__
