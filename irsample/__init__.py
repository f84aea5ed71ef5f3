"""irsample: evaluation of retrieval runs with complete or sampled relevance judgments.

The Python API (see :mod:`irsample.api`)::

    import irsample
    ev = irsample.evaluate("qrels.txt", ["run.gz"], ["AP", "P@10", "nDCG@10"])
    ev.frame()   # tidy table: run, topic, measure, value
    est = irsample.estimate("sampled.qrels", ["run.gz"], ["infAP", "xinfAP"], ci=0.95)
    est.frame()  # ... plus variance, low, high
"""

from .api import compare, estimate, evaluate, load, measures_from
from .errors import InputError, IrsampleError, MeasureError
from .evaluation import Evaluation
from .measures import Measure, parse
from .model import Collection, Judgments

__version__ = "0.1.0"

__all__ = [
    "Collection",
    "Evaluation",
    "InputError",
    "IrsampleError",
    "Judgments",
    "Measure",
    "MeasureError",
    "compare",
    "estimate",
    "evaluate",
    "load",
    "measures_from",
    "parse",
]
