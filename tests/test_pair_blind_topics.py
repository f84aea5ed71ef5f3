"""The anticipated variance of a difference of two runs, and the blind topics that take it
(``ht/anticipated_terms.py``, ``ht/pairs.py``'s ``BLIND``).

- ``anticipated_pair_variance`` is the cell formula of the anticipated variance for the
  difference's linearised variable, checked against a sum over every frame document of each
  cell (ht(AP) and ht(nDCG), stratified samples);
- on a stratified sample whose open cells hold no sampled relevant document of a topic, the
  sample's variance of a difference there is 0 though the runs rank unjudged documents
  differently: ``pair_estimates`` gives that topic the model's variance (floored by the runs'
  rho), and leaves every other topic's variance as the sample gives it; with ranks 1-10
  judged whole the runs' means keep the sample's variance and the model is the one their
  per-topic intervals take (``ht/topic_own.topic_model``);
- designs without the anticipated variance (importance samples) are left as they were.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import Stratified, importance, parse_strata
from irsample.measures import EvalContext, parse
from irsample.measures.ht.anticipated import (
    certain_docs,
    frame_positions,
    grade_probabilities,
    ratio_moments,
)
from irsample.measures.ht.anticipated_terms import anticipated_pair_variance, anticipated_terms
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.inclusion import ht_design, open_cells
from irsample.measures.ht.jackknife import jackknife_pair_variance
from irsample.measures.ht.pairs import pair_estimates
from irsample.measures.ht.topic_own import topic_model

from .test_ht_estimators import synthetic

STRATA = Stratified(parse_strata("1-5:1,6-30:0.3,31-:0.1"))


def _brute(ctx, d, terms, r, s, t):
    """The anticipated variance of run r's minus run s's ratio on topic t, document by
    document: per open cell N^2 (1/n - 1/N) S^2 with E[(N - 1) S^2] = sum E z^2 - [(sum E z)^2
    + sum Var z] / N, z = ((a_r - a_s) g(x) - delta b(x)) / Y over the cell's frame documents."""
    probs, weight, gain, slope, theta, y = terms
    fp = frame_positions(ctx)
    n_topics = ctx.n_topics
    a = {}
    for run in (r, s):
        w = np.zeros(len(fp.docs))
        at = np.flatnonzero(fp.seg == run * n_topics + t)
        w[fp.doc[at]] = weight[at]
        a[run] = w
    delta = theta[r * n_topics + t] - theta[s * n_topics + t]
    size, drawn = open_cells(ctx.judgments, d)
    open_ = ~certain_docs(ctx, d)
    total = 0.0
    for c in range(d.n_cells):
        big, n = size[t, c], drawn[t, c]
        if not 0 < n < big:
            continue
        docs = np.flatnonzero((fp.topic == t) & (fp.stratum == c) & open_)
        coef = (a[r][docs, None] - a[s][docs, None]) * gain[t][None, :] - delta * slope[t][None, :]
        p = probs[docs]
        ez, ez2 = (p * coef).sum(axis=1), (p * coef * coef).sum(axis=1)
        ss = ez2.sum() - (ez.sum() ** 2 + (ez2 - ez * ez).sum()) / big
        total += big * big * (1.0 / n - 1.0 / big) * ss / (big - 1.0)
    yy = y[r * n_topics + t]
    return total / (yy * yy) if yy > 0 else 0.0


@pytest.mark.parametrize("name", ["AP", "nDCG", "nDCG@10"])
def test_pair_variance_is_the_cell_formula_over_every_document(name):
    col, frame = synthetic(1)
    ctx = EvalContext(col, STRATA.sample(frame, rng=np.random.default_rng(3)))
    d, (m,) = ht_design(ctx), parse(name)
    # ranks 1-5 judged whole: the run means keep the sample's variance, the pairs' blind topics
    # read the model under grade_probabilities (``topic_own.topic_model``)
    assert anticipated_terms(ctx, d, m) is None
    terms = anticipated_terms(ctx, d, m, grade_probabilities(ctx, d))
    assert terms is not None
    first, second = np.triu_indices(ctx.n_runs, k=1)
    got = anticipated_pair_variance(ctx, d, terms, first, second)
    want = np.array([[_brute(ctx, d, terms, r, s, t) for t in range(ctx.n_topics)]
                     for r, s in zip(first, second)])
    assert (want > 0).any()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    some = np.random.default_rng(0).random(got.shape) < 0.3  # only where asked
    np.testing.assert_array_equal(
        anticipated_pair_variance(ctx, d, terms, first, second, where=some),
        np.where(some, got, 0.0))
    # a run against itself: the runs' own terms cancel (sum a^2 ... - 2 sum a a ...)
    probs, weight, gain, slope, theta, y = terms
    own = ratio_moments(ctx, d, probs, weight, gain, slope, y).variance(theta)
    same = anticipated_pair_variance(ctx, d, terms, np.arange(ctx.n_runs), np.arange(ctx.n_runs))
    np.testing.assert_allclose(same, 0.0, atol=1e-12 * own.max())


def _blind_world():
    """A stratified sample of sparse topics (one document in 16 relevant) in which some
    identified topic's open cell holds no sampled relevant document: ranks 1-10 judged whole,
    the rest at 0.2."""
    col, frame = synthetic(0, n_topics=8, grades=(0,) * 15 + (1,))
    design = Stratified(parse_strata("1-10:1,11-:0.2"))
    (ap,) = parse("AP")
    for seed in range(40):
        ctx = EvalContext(col, design.sample(frame, rng=np.random.default_rng(seed)))
        d = ht_design(ctx)
        e = estimate(ctx, ap)
        first, second = np.triu_indices(ctx.n_runs, k=1)
        jack, _ = jackknife_pair_variance(ctx, d, e.replicates, first, second)
        known = e.known.reshape(ctx.n_runs, -1)
        kept = known[first] & known[second]
        assert e.model_bias is None and not e.anticipated  # a stratum judged whole
        own = topic_model(ctx, ap)
        model = own.rho * anticipated_pair_variance(ctx, d, own.terms, first, second)
        blind = kept & (jack <= 1e-9 * model) & (model > 0)
        if blind.any() and (kept & ~blind & (jack > 0)).any():
            return ctx, first, second, jack, kept, model, blind
    raise AssertionError("no draw with a blind topic")  # pragma: no cover


def test_blind_topics_take_the_models_variance_and_the_others_keep_the_samples():
    ctx, first, second, jack, kept, model, blind = _blind_world()
    (ap,) = parse("AP")
    pe = pair_estimates(ctx, ap)
    # the mean's variance rebuilt from the topics': the sample's jackknife where it sees
    # variation, the model's on the blind topics (pairs with a topic to impute left out: its
    # variance follows imputation.impute)
    both = ctx.answered[first] & ctx.answered[second]
    whole = ~(both & ~kept).any(axis=1)
    assert (whole & blind.any(axis=1)).any()
    per_topic = np.where(kept & (jack <= 1e-9 * model), model, jack)
    q = both.sum(axis=1)
    rebuilt = np.where(both, per_topic, 0).sum(axis=1) / q**2
    np.testing.assert_allclose(pe.variance[whole], rebuilt[whole], rtol=1e-12)
    without = np.where(both, jack, 0).sum(axis=1) / q**2
    assert (pe.variance > without)[whole & blind.any(axis=1)].all()


def test_designs_without_the_anticipated_variance_keep_the_samples():
    col, frame = synthetic(0)
    ctx = EvalContext(col, importance(0.1).sample(frame, rng=np.random.default_rng(1)))
    d, (ap,) = ht_design(ctx), parse("AP")
    assert anticipated_terms(ctx, d, ap) is None and estimate(ctx, ap).model_bias is None
    first, second = np.triu_indices(ctx.n_runs, k=1)
    jack, _ = jackknife_pair_variance(ctx, d, estimate(ctx, ap).replicates, first, second)
    pe = pair_estimates(ctx, ap)
    both = ctx.answered[first] & ctx.answered[second]
    known = estimate(ctx, ap).known.reshape(ctx.n_runs, -1)
    if (both & ~(known[first] & known[second])).any():
        pytest.skip("a topic to impute: its variance follows imputation.impute")
    np.testing.assert_allclose(pe.variance, np.where(both, jack, 0).sum(axis=1)
                               / both.sum(axis=1) ** 2, rtol=1e-12)


def test_a_planners_top_up_scales_the_blind_topics_by_what_their_draw_saw():
    """On a planner's top-up (certain documents beside drawn ones in one cell) a blind topic's
    model variance of a difference is also multiplied by its frailty (k + O_t) / (k + E_t)
    (``ht/blind_topics.topic_frailty``), as the run means' blind topics are."""
    from irsample.measures.ht.blind_topics import topic_frailty

    from .test_ht_blind_topics import _collection
    from .test_ht_estimators import _topped_up

    col, frame = _collection()
    ctx = EvalContext(col, _topped_up(col, frame, 0.2, 3).sample(frame, rng=2))
    d, (ap,) = ht_design(ctx), parse("AP")
    e = estimate(ctx, ap)
    first, second = np.triu_indices(ctx.n_runs, k=1)
    jack, _ = jackknife_pair_variance(ctx, d, e.replicates, first, second)
    known = e.known.reshape(ctx.n_runs, -1)
    kept = known[first] & known[second]
    own = topic_model(ctx, ap)
    frailty = topic_frailty(ctx, d)
    model = own.rho * anticipated_pair_variance(ctx, d, own.terms, first, second) * frailty
    blind = kept & (jack <= 1e-9) & (jack <= 1e-9 * model) & (model > 0)
    assert blind.any() and np.all(frailty[np.flatnonzero(blind.any(axis=0))] != 1)
    both = ctx.answered[first] & ctx.answered[second]
    whole = ~(both & ~kept).any(axis=1)
    assert (whole & blind.any(axis=1)).any()
    q = both.sum(axis=1)
    rebuilt = np.where(both, np.where(blind, model, jack), 0).sum(axis=1) / q**2
    np.testing.assert_allclose(pair_estimates(ctx, ap).variance[whole], rebuilt[whole],
                               rtol=1e-12)
