"""Judgment-set design: pools of runs, sampling frames built from complete judgments, designs
that draw samples of documents to judge, design files, and merging judgments back.

The rooms: :mod:`~irsample.design.frame` (the sampling frame and the Design/Sample base),
:mod:`~irsample.design.pools` (depth-k pools), :mod:`~irsample.design.record` (design files),
:mod:`~irsample.design.merge` (judgments back into a design), and five sub-rooms:
:mod:`~irsample.design.sampling` (probability designs), :mod:`~irsample.design.adaptive`
(move-to-front, Hedge), :mod:`~irsample.design.planner` (Neyman allocation from a pilot),
:mod:`~irsample.design.nojudge` (pseudo-qrels, inferred relevance) and
:mod:`~irsample.design.labels` (automatic labels).

    pool = Pool.from_runs(collection, pooled_runs, depth=100)        # real judging: no qrels
    sample = parse_design("2strata@2000").select(pool, rng=42)
    frame = SamplingFrame.from_qrels(collection, qrels_table)        # simulation
    judgments = stratified("1-10:1,11-100:0.2,101-:0.05").sample(frame, rng=42)

Every design class registers itself under its ``kind`` (:data:`DESIGNS`), which names and design
files are read through; adding a design is one module (docs/adding-a-design.md).
"""

from .frame import DESIGNS, NOT_RETRIEVED, Design, Sample, SamplingFrame, generator
from .merge import MERGE_FORMATS, Merged, merge
from .pools import Pool, PoolStats, select_runs
from .record import DesignRecord
from .sampling.allocated import Allocated, allocated
from .sampling.budget import Budget
from .sampling.importance import Importance, ap_prior, importance
from .sampling.named import PRESETS, parse_design, preset
from .sampling.stratified import (
    RankStratum,
    Stratified,
    Terabyte,
    Uniform,
    parse_strata,
    stratified,
    terabyte,
    uniform,
)

__all__ = [
    "DESIGNS",
    "MERGE_FORMATS",
    "NOT_RETRIEVED",
    "PRESETS",
    "Allocated",
    "Budget",
    "Design",
    "DesignRecord",
    "Importance",
    "Merged",
    "Pool",
    "PoolStats",
    "RankStratum",
    "Sample",
    "SamplingFrame",
    "Stratified",
    "Terabyte",
    "Uniform",
    "allocated",
    "ap_prior",
    "generator",
    "importance",
    "merge",
    "parse_design",
    "parse_strata",
    "preset",
    "select_runs",
    "stratified",
    "terabyte",
    "uniform",
]

# Adaptive judging: move-to-front pooling and Hedge against an assessor (irsample.design.adaptive).
from .adaptive.assessor import Assessor, FileAssessor, QrelsAssessor  # noqa: E402
from .adaptive.judging import JudgingResult, judge_adaptively  # noqa: E402
from .adaptive.methods import DepthOrder, Hedge, MoveToFront, parse_method  # noqa: E402

__all__ += [
    "Assessor", "DepthOrder", "FileAssessor", "Hedge", "JudgingResult", "MoveToFront",
    "QrelsAssessor", "judge_adaptively", "parse_method",
]

# The design planner: Neyman allocation over topics and rank strata (irsample.design.planner).
from .planner.plan import Plan, budget_for_halfwidth, pilot, plan  # noqa: E402
from .planner.relevance_model import RelevanceModel, fit_relevance  # noqa: E402
from .planner.sequential import PlannedDesign, judge_in_batches  # noqa: E402

__all__ += [
    "Plan", "PlannedDesign", "RelevanceModel", "budget_for_halfwidth", "fit_relevance",
    "judge_in_batches", "pilot", "plan",
]
