"""Adaptive judging: methods that pick the next document to judge from the judgments so far
(move-to-front pooling, Hedge, depth order), the assessors that grade them, and the loop that
runs a method against an assessor under a budget.

- :mod:`.methods`: the methods (algorithms and sources in its docstring);
- :mod:`._kernels`: their numba kernels;
- :mod:`.assessor`: qrels or file assessors;
- :mod:`.judging`: :func:`judge_adaptively`, budgets and batches.
"""

from .assessor import Assessor, FileAssessor, QrelsAssessor
from .judging import JudgingResult, judge_adaptively
from .methods import DepthOrder, Hedge, MoveToFront, parse_method

__all__ = [
    "Assessor", "DepthOrder", "FileAssessor", "Hedge", "JudgingResult", "MoveToFront",
    "QrelsAssessor", "judge_adaptively", "parse_method",
]
