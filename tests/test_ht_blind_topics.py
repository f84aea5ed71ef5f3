"""Blind topics where ht's ratios keep the sample's variance (irsample/measures/ht/blind_topics.py).

On a planner's top-up (documents judged before, certain, then a simple random sample of the
rest of each cell) a topic whose drawn documents hold no relevant one has a jackknife of 0
though its ratio is uncertain: it takes c times the relevance model's anticipated variance,
c = min(1, the sample's variances over the model's, summed over the identified cells), times
the posterior mean (k + O_t) / (k + E_t) of the topic's rate over the model's given the O_t
relevant documents its draw found where the model expected E_t; the other topics keep their
own. A stratum judged whole beside sampled ones, and designs without
certain documents, are left as they were.
"""

from __future__ import annotations

import numpy as np
import pytest

import irsample.measures.ht.estimator as estimator
from irsample.design import Stratified, parse_strata, uniform
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.anticipated import fitted_relevance, frame_positions
from irsample.measures.ht.blind_topics import (
    FRAILTY_SHAPE,
    NO_VARIATION,
    ratio_model,
    topic_frailty,
    with_blind_topics,
)
from irsample.measures.ht.inclusion import ht_design
from irsample.model import JUDGED

from .test_ht_estimators import _topped_up, synthetic


def _collection():
    return synthetic(0, n_topics=6, n_docs=300, depth=100, grades=(0,) * 12 + (1, 2))


@pytest.mark.parametrize("name", ["AP", "nDCG"])
def test_a_blind_topic_takes_the_models_variance_at_the_samples_level(name, monkeypatch):
    col, frame = _collection()
    judgments = _topped_up(col, frame, 0.2, 3).sample(frame, rng=1)
    (m,) = parse(name)
    shipped = estimator.estimate(EvalContext(col, judgments), m)
    monkeypatch.setattr(estimator, "with_blind_topics", lambda ctx, d, inner, own, known: own)
    ctx = EvalContext(col, judgments)
    before = estimator.estimate(ctx, m)
    expected = ratio_model(ctx, ht_design(ctx), m)[2]
    known = np.asarray(before.known, bool)
    own = before.topic_variance
    blind = known & (expected > 0) & (own <= NO_VARIATION * expected)
    assert set(np.flatnonzero(blind) % ctx.n_topics) == {1}  # topic 1, on the runs it reaches
    c = min(1.0, own[known].sum() / expected[known].sum())
    assert 0 < c < 1
    frailty = topic_frailty(ctx, ht_design(ctx))[ctx.seg_topic]
    assert np.all(frailty[blind] != 1)  # the run is blind; its topic's draw found some
    np.testing.assert_allclose(shipped.topic_variance[blind], c * expected[blind] * frailty[blind])
    np.testing.assert_array_equal(shipped.topic_variance[known & ~blind], own[known & ~blind])
    np.testing.assert_array_equal(shipped.value, before.value)  # the estimate is unchanged
    assert np.all(shipped.variance[blind] > before.variance[blind])
    assert np.all(shipped.variance[known & ~blind] == before.variance[known & ~blind])


@pytest.mark.parametrize("design", [Stratified(parse_strata("1-10:1,11-:0.2")), uniform(0.2)])
def test_a_stratum_judged_whole_or_no_certain_document_leaves_the_sample_alone(design):
    """Ranks 1-10 judged whole beside sampled ones: the sample's variance covered there, and the
    model's on the blind topics over-covered (REPRODUCTION.md, "Blind topics on the planner's
    top-ups"); a uniform sample has no certain document."""
    col, frame = _collection()
    ctx = EvalContext(col, design.sample(frame, rng=2))
    own = np.zeros(ctx.n_seg)
    known = np.ones((ctx.n_runs, ctx.n_topics), bool)
    assert with_blind_topics(ctx, ht_design(ctx), parse("AP")[0], own, known) is own


def test_a_topics_frailty_is_its_rates_posterior_mean_given_what_its_draw_found():
    """(k + O_t) / (k + E_t) from the documents drawn below certainty, counted one by one."""
    col, frame = _collection()
    ctx = EvalContext(col, _topped_up(col, frame, 0.2, 3).sample(frame, rng=1))
    d = ht_design(ctx)
    fitted = fitted_relevance(ctx, d, for_rule=False)
    fp = frame_positions(ctx)
    j = ctx.judgments
    want = []
    for t in range(ctx.n_topics):
        seen = expected = 0.0
        for doc, p in zip(fp.docs[fp.topic == t], fitted[fp.topic == t]):
            if j.state[doc] == JUDGED and 0 < d.tdi_pi[doc] < 1:
                seen += j.grade[doc] >= 1
                expected += p
        want.append((FRAILTY_SHAPE + seen) / (FRAILTY_SHAPE + expected))
    np.testing.assert_allclose(topic_frailty(ctx, d), want)
