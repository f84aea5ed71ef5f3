"""The pooled positions the estimators walk, with the pool's layout kept between evaluations.

``pool_layout.pooled_positions`` keeps, per collection, the layout of a pool evaluated more than
once (which ranked positions are pooled) and looks up only the grades and strata of each draw.
Here draws of three designs over one frame alternate (two share their pool but not their strata,
the third has a smaller pool), and every evaluation must give the positions of a plain numpy
reference and the numbers of an evaluation that keeps no layout.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import stratified, uniform
from irsample.design.frame import SamplingFrame
from irsample.evaluation import evaluate_collection
from irsample.measures import parse_all
from irsample.measures import pool_layout as walk
from irsample.measures.context import EvalContext

from .synthetic import pooled_collection

DESIGNS = (
    stratified("1-10:1,11-30:0.3"),
    uniform(0.4),  # the same pool, one stratum
    stratified("1-5:1,6-10:0.5"),  # a smaller pool: ranks beyond 10 are unpooled
)
MEASURES = ["xinfAP", "infNDCG", "infAP", "bpref", "sample_eval"]


def reference_positions(ctx):
    """(offsets, rank, grade, stratum) of the pooled positions, segment by segment in numpy."""
    j = ctx.judgments
    one = len(j.stratum_labels) == 1
    offsets, ranks, grades, strata = [0], [], [], []
    for s in range(ctx.n_seg):
        tdi = ctx.pos_tdi[ctx.offsets[s] : ctx.offsets[s + 1]]
        rank = np.flatnonzero(j.state[tdi] != 0)
        grade = j.grade[tdi[rank]]
        ranks.append(rank)
        grades.append(np.where(grade >= 0, grade, walk.UNJUDGED))
        strata.append(np.zeros(len(rank)) if one else j.stratum[tdi[rank]])
        offsets.append(offsets[-1] + len(rank))
    return (np.array(offsets), *(np.concatenate(a) for a in (ranks, grades, strata)))


@pytest.fixture(scope="module")
def draws():
    col, table = pooled_collection(4, n_topics=4, n_runs=5, n_docs=400, depth=60,
                                   pool_depth=30)
    frame = SamplingFrame.from_qrels(col, table)
    order = [0, 1, 0, 2, 0, 1, 2, 2, 0]
    return col, [DESIGNS[d].sample(frame, rng=k) for k, d in enumerate(order)]


def test_positions_equal_the_reference_as_pools_alternate(draws):
    col, judgments = draws
    for j in judgments:
        got = walk.pooled_positions(EvalContext(col, j))
        want = reference_positions(EvalContext(col, j))
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    kept = [layout for ref, _, layout in walk._LAYOUTS._entries if ref() is col]
    assert any(layout is not None for layout in kept)  # the repeated pools were kept


def test_numbers_equal_those_without_kept_layouts(draws, monkeypatch):
    col, judgments = draws
    measures = parse_all(MEASURES)
    kept = [evaluate_collection(col, j, measures, ci=0.95) for j in judgments]
    judged_only = [evaluate_collection(col, j, parse_all(["infAP", "bpref"]), judged_only=True)
                   for j in judgments]
    monkeypatch.setattr(walk, "_LAYOUTS", walk._LayoutCache(size=0))  # keeps nothing
    for j, a, b in zip(judgments, kept, judged_only, strict=True):
        fresh = evaluate_collection(col, j, measures, ci=0.95)
        np.testing.assert_array_equal(a.values, fresh.values)
        np.testing.assert_array_equal(a.variance, fresh.variance)
        again = evaluate_collection(col, j, parse_all(["infAP", "bpref"]), judged_only=True)
        np.testing.assert_array_equal(b.values, again.values)
    assert np.nanmax(kept[0].values) > 0 and np.nanstd(kept[0].values) > 0


class _Owner:
    """Stands for a collection: the cache holds it by weak reference only."""


def test_kept_layouts_are_bounded_and_released():
    cache = walk._LayoutCache(size=2)
    built = []

    def build(tdi):
        built.append(tdi)
        return object()

    a, b = _Owner(), _Owner()
    pool, other = np.array([0, 1, 2, 0, 1], np.int8), np.array([1, 0, 0, 0, 1], np.int8)
    tdi, first = cache.get(a, pool, build)  # seen once: built, not kept
    np.testing.assert_array_equal(tdi, [1, 2, 4])
    second = cache.get(a, pool, build)[1]  # seen again: built and kept
    assert cache.get(a, pool, build)[1] is second and first is not second and len(built) == 2
    assert cache.get(b, pool, build)[1] is not second  # another collection, its own pool
    cache.get(a, other, build)  # a third pool: the least recently used (a's first) goes
    assert len(cache._entries) == 2
    assert cache.get(a, pool, build)[1] is not second  # forgotten: built again
    del b
    cache.get(a, other, build)
    assert all(ref() is a for ref, _, _ in cache._entries)  # b's entries are gone with b
