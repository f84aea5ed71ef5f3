"""Judgment-set design: sampling frames built from complete judgments, and designs that draw
samples of documents to judge (see :mod:`irsample.design.frame`, :mod:`irsample.design.sampling`).

    frame = SamplingFrame.from_qrels(collection, qrels_table)
    judgments = stratified("1-10:1,11-100:0.2,101-:0.05").sample(frame, rng=42)
"""

from .frame import NOT_RETRIEVED, Design, Sample, SamplingFrame, generator
from .sampling import RankStratum, Stratified, Uniform, parse_strata, stratified, uniform

__all__ = [
    "NOT_RETRIEVED",
    "Design",
    "RankStratum",
    "Sample",
    "SamplingFrame",
    "Stratified",
    "Uniform",
    "generator",
    "parse_strata",
    "stratified",
    "uniform",
]

# Adaptive judging: move-to-front pooling and Hedge against an assessor (irsample.design.judging).
from .adaptive import DepthOrder, Hedge, MoveToFront, parse_method  # noqa: E402
from .assessor import Assessor, FileAssessor, QrelsAssessor  # noqa: E402
from .judging import JudgingResult, judge_adaptively  # noqa: E402

__all__ += [
    "Assessor", "DepthOrder", "FileAssessor", "Hedge", "JudgingResult", "MoveToFront",
    "QrelsAssessor", "judge_adaptively", "parse_method",
]
