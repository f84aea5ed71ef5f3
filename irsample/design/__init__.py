"""Judgment-set design: pools of runs, sampling frames built from complete judgments, and designs
that draw samples of documents to judge (see :mod:`irsample.design.pools`,
:mod:`irsample.design.frame`, :mod:`irsample.design.sampling`).

    pool = Pool.from_runs(collection, pooled_runs, depth=100)        # real judging: no qrels
    frame = SamplingFrame.from_qrels(collection, qrels_table)        # simulation
    judgments = stratified("1-10:1,11-100:0.2,101-:0.05").sample(frame, rng=42)
"""

from .frame import NOT_RETRIEVED, Design, Sample, SamplingFrame, generator
from .pools import Pool, PoolStats, select_runs
from .sampling import RankStratum, Stratified, Uniform, parse_strata, stratified, uniform

__all__ = [
    "NOT_RETRIEVED",
    "Design",
    "Pool",
    "PoolStats",
    "RankStratum",
    "Sample",
    "SamplingFrame",
    "Stratified",
    "Uniform",
    "generator",
    "parse_strata",
    "select_runs",
    "stratified",
    "uniform",
]
