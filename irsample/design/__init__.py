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

from . import adaptive, planner, sampling
from .adaptive import *  # noqa: F403  (names listed once, in adaptive.__all__)
from .frame import DESIGNS, NOT_RETRIEVED, Design, Sample, SamplingFrame, generator
from .merge import MERGE_FORMATS, Merged, merge
from .planner import *  # noqa: F403  (names listed once, in planner.__all__)
from .pools import Pool, PoolStats, select_runs
from .record import DesignRecord
from .sampling import *  # noqa: F403  (names listed once, in sampling.__all__)

#: this package's own names, then those of the sub-rooms: probability designs (sampling),
#: move-to-front and Hedge against an assessor (adaptive), the Neyman-allocation planner
__all__ = [
    "DESIGNS", "MERGE_FORMATS", "NOT_RETRIEVED", "Design", "DesignRecord", "Merged", "Pool",
    "PoolStats", "Sample", "SamplingFrame", "generator", "merge", "select_runs",
    *sampling.__all__, *adaptive.__all__, *planner.__all__,
]
