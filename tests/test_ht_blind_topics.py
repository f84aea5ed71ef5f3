"""Blind topics where ht's ratios keep the sample's variance (irsample/measures/ht/blind_topics.py).

On a design that judges ranks 1-10 whole and samples the rest, a topic whose drawn documents
hold no relevant one has a jackknife of 0 though its ratio is uncertain: it takes c times the
relevance model's anticipated variance, c = min(1, the sample's variances over the model's,
summed over the identified cells); the other topics keep their own, and a design without
certain documents beside drawn ones is left as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

import irsample.measures.ht.estimator as estimator
from irsample.design import Stratified, parse_strata, uniform
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.blind_topics import NO_VARIATION, ratio_model, with_blind_topics
from irsample.measures.ht.inclusion import ht_design

from .test_ht_estimators import synthetic


def _draw():
    """A draw with one blind topic (topic 2: nothing relevant among its drawn documents)."""
    col, frame = synthetic(2, n_topics=6, n_docs=300, depth=100, grades=(0,) * 12 + (1, 2))
    return col, Stratified(parse_strata("1-10:1,11-:0.2")).sample(frame, rng=2)


@pytest.mark.parametrize("name", ["AP", "nDCG"])
def test_a_blind_topic_takes_the_models_variance_at_the_samples_level(name, monkeypatch):
    col, judgments = _draw()
    (m,) = parse(name)
    shipped = estimator.estimate(EvalContext(col, judgments), m)
    monkeypatch.setattr(estimator, "with_blind_topics", lambda ctx, d, inner, own, known: own)
    ctx = EvalContext(col, judgments)
    before = estimator.estimate(ctx, m)
    expected = ratio_model(ctx, ht_design(ctx), m)[2]
    known = np.asarray(before.known, bool)
    own = before.topic_variance
    blind = known & (expected > 0) & (own <= NO_VARIATION * expected)
    assert set(np.flatnonzero(blind) % ctx.n_topics) == {2}  # every run's topic 2
    c = min(1.0, own[known].sum() / expected[known].sum())
    assert 0 < c < 1
    np.testing.assert_allclose(shipped.topic_variance[blind], c * expected[blind])
    np.testing.assert_array_equal(shipped.topic_variance[known & ~blind], own[known & ~blind])
    np.testing.assert_array_equal(shipped.value, before.value)  # the estimate is unchanged
    assert np.all(shipped.variance[blind] > before.variance[blind])
    assert np.all(shipped.variance[known & ~blind] == before.variance[known & ~blind])


def test_designs_without_certain_documents_beside_drawn_ones_are_left_alone():
    col, frame = synthetic(2, n_topics=6, n_docs=300, depth=100, grades=(0,) * 12 + (1, 2))
    ctx = EvalContext(col, uniform(0.2).sample(frame, rng=2))
    own = np.zeros(ctx.n_seg)
    known = np.ones((ctx.n_runs, ctx.n_topics), bool)
    assert with_blind_topics(ctx, ht_design(ctx), parse("AP")[0], own, known) is own
