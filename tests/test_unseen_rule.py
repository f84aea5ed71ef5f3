"""Rule 7 of the reliability rule (irsample/measures/reliability/limits.py): beside a stratum judged
whole, ht's ratios keep the sample's variance, which is 0 on a blind topic (no relevant document
drawn below the certain ones) while the documents left may hold relevant ones. A run mean whose
blind topics' anticipated variance (c times the relevance model's, ``blind_topics``) exceeds
``MAX_UNSEEN`` times its interval's variance is flagged, naming those topics.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import Stratified, parse_strata, uniform
from irsample.evaluation import evaluate_collection
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.blind_topics import NO_VARIATION, ratio_model
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.reliability import MAX_UNSEEN, unseen_share

from .test_ht_estimators import _topped_up, synthetic

TOP_WHOLE = Stratified(parse_strata("1-10:1,11-:0.1"))


def _judged_top(seed=1, rng=1):
    """A draw (found by search) where run 1's blind topics carry 6.2 times its variance."""
    col, frame = synthetic(seed, n_topics=6, n_docs=300, depth=100, grades=(0,) * 12 + (1, 2))
    return col, TOP_WHOLE.sample(frame, rng=rng)


def _everywhere(ctx):
    return np.ones((ctx.n_runs, ctx.n_topics), dtype=bool)


@pytest.mark.parametrize("name", ["AP", "nDCG"])
def test_left_out_variance_is_the_models_on_blind_topics_scaled(name):
    col, judgments = _judged_top()
    ctx = EvalContext(col, judgments)
    (m,) = parse(f"ht({name})")
    left, base = m.unseen_variance(ctx)
    e = estimate(ctx, m.inner)
    np.testing.assert_array_equal(base, e.variance)
    expected = ratio_model(ctx, ht_design(ctx), m.inner)[2]
    known = ctx.answered.ravel() & e.known
    own = e.topic_variance
    blind = known & (expected > 0) & (own <= NO_VARIATION * expected)
    assert blind.any() and not blind.all()
    c = min(1.0, own[known].sum() / expected[known].sum())
    np.testing.assert_allclose(left[blind], c * expected[blind])
    assert np.all(left[~blind] == 0.0)


def test_the_rule_flags_a_run_whose_blind_topics_outweigh_its_variance():
    col, judgments = _judged_top()
    (m,) = parse("ht(AP)")
    ev = evaluate_collection(col, judgments, [m], ci=0.95, per_topic=False)
    ctx = EvalContext(col, judgments)
    left, share = unseen_share(ctx, m, ev.evaluated)
    e = estimate(ctx, m.inner)
    shape = ev.evaluated.shape
    by_hand = (np.where(ev.evaluated, left, 0).sum(axis=1)
               / np.where(ev.evaluated, e.variance.reshape(shape), 0).sum(axis=1))
    np.testing.assert_allclose(share, by_hand)
    assert share[1] > MAX_UNSEEN and (share[[0, 2, 3]] <= MAX_UNSEEN).all()
    status = ev.statuses
    assert status.status[1, 0] == "unreliable"
    reason = status.reason[1, 0]
    assert "show no variation in their sample" in reason
    assert f"{share[1]:.2f} times the interval's" in reason
    blind_topics = [str(col.topics[t]) for t in np.flatnonzero(left[1] > 0)]
    assert all(t in reason for t in blind_topics)
    for r in (0, 2, 3):  # the others may be flagged by other rules, not by this one
        assert "show no variation" not in status.reason[r, 0]


def test_a_variance_of_zero_with_something_left_out_is_flagged_as_such():
    class Blind:
        def unseen_variance(self, ctx):
            left = np.zeros(ctx.n_seg)
            left[0] = 1e-4  # run 0, topic 0
            return left, np.zeros(ctx.n_seg)

    col, judgments = _judged_top()
    ctx = EvalContext(col, judgments)
    left, share = unseen_share(ctx, Blind(), _everywhere(ctx))
    assert share[0] == np.inf and np.all(share[1:] == 0.0)


def test_ppi_reads_hts_blind_topics_against_hts_variance():
    col, judgments = _judged_top()
    ctx = EvalContext(col, judgments)
    ht_left, ht_base = parse("ht(AP)")[0].unseen_variance(ctx)
    ppi_left, ppi_base = parse("ppi(AP)")[0].unseen_variance(ctx)
    np.testing.assert_array_equal(ppi_left, ht_left)
    np.testing.assert_array_equal(ppi_base, ht_base)


@pytest.mark.parametrize("name", ["ht(P@10)", "ht(num_rel)", "P@10"])
def test_totals_and_plain_measures_are_not_assessed(name):
    col, judgments = _judged_top()
    ctx = EvalContext(col, judgments)
    (m,) = parse(name)
    assert m.unseen_variance(ctx) is None
    assert np.all(unseen_share(ctx, m, _everywhere(ctx))[1] == 0.0)


def test_anticipated_variance_and_top_ups_leave_nothing_out():
    """A stratified simple random sample takes the model's anticipated variance (nothing is
    left out); a planner's top-up gives its blind topics the model's variance already."""
    col, frame = synthetic(0, n_topics=6, n_docs=300, depth=100, grades=(0,) * 12 + (1, 2))
    ctx = EvalContext(col, uniform(0.2).sample(frame, rng=2))
    assert parse("ht(AP)")[0].unseen_variance(ctx) is None
    ctx = EvalContext(col, _topped_up(col, frame, 0.2, 3).sample(frame, rng=1))
    for name in ("ht(AP)", "ht(nDCG)"):
        (m,) = parse(name)
        assert np.all(unseen_share(ctx, m, _everywhere(ctx))[1] == 0.0)


def test_the_outcome_names_rule_7_apart():
    col, judgments = _judged_top()
    (m,) = parse("ht(AP)")
    ev = evaluate_collection(col, judgments, [m], ci=0.95, per_topic=False)
    outcome = ev.statuses.outcomes[0]
    np.testing.assert_array_equal(outcome.left_out, outcome.unseen > MAX_UNSEEN)
    assert outcome.left_out[1] and not outcome.left_out[[0, 2, 3]].any()
