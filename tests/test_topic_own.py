"""One topic's own variance on the planner's designs (irsample/measures/ht/topic_own.py).

- On a top-up an identified topic of ht(AP) and ht(nDCG) takes the relevance model's
  anticipated variance; with the truth as the model it is the design variance of the topic's
  estimate given the certain documents, to first order (Monte Carlo over 100 draws), where the
  sample's own falls short.
- The run means keep the sample's variance; imputed topics stay without one, topics judged
  whole at 0.
- ppi(M)'s per-topic variance on a top-up is ht(M)'s own times the label-informed model's
  reduction at the run's weight, capped at 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.evaluation import evaluate_collection
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht import anticipated
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.ht.topic_own import sample_topic_variance, topic_variance

from .test_ht_anticipated import _as_model, _true_grades
from .test_ht_estimators import _topped_up, synthetic


@pytest.mark.parametrize("name", ["AP", "nDCG"])
def test_with_the_truth_for_a_model_a_top_up_topic_takes_its_design_variance(name,
                                                                            monkeypatch):
    col, frame = synthetic(4, n_topics=4, n_docs=300, depth=120, grades=(0, 0, 1, 1, 2))
    monkeypatch.setattr("irsample.measures.ht.blind_topics.grade_probabilities",
                        _as_model(_true_grades(col, frame)))
    design = _topped_up(col, frame, 0.5, 4)
    (m,) = parse(name)
    values, own, sample, identified = [], [], [], []
    for child in np.random.SeedSequence(11).spawn(100):
        ctx = EvalContext(col, design.sample(frame, rng=np.random.default_rng(child)))
        assert anticipated.partly_certain(ctx, ht_design(ctx), within_cell=True)
        e = estimate(ctx, m)
        assert e.sample_variance is None  # the run means keep the sample's variance
        values.append(e.plain)  # the estimate as printed on a top-up
        own.append(topic_variance(ctx, m))
        sample.append(sample_topic_variance(ctx, m))
        identified.append(np.asarray(e.known, dtype=bool))
    keep = np.all(identified, axis=0)  # cells every draw identifies
    assert keep.sum() >= 12
    observed = np.var(np.array(values)[:, keep], axis=0).sum()
    anticipated_own = np.mean(np.array(own)[:, keep], axis=0).sum()
    print(name, "anticipated / observed", round(anticipated_own / observed, 3),
          "sample's / observed", round(np.mean(np.array(sample)[:, keep], axis=0).sum()
                                      / observed, 3))
    assert abs(anticipated_own / observed - 1.0) < 0.15, name


@pytest.fixture(scope="module")
def top_up():
    # sparse topics (one document in 20 relevant), 3% judged before and one more per cell
    col, frame = synthetic(8, n_topics=8, n_docs=300, depth=60, grades=(0,) * 19 + (1,))
    return col, _topped_up(col, frame, 0.03, 1).sample(frame, rng=np.random.default_rng(2))


@pytest.mark.parametrize("name", ["AP", "nDCG"])
def test_the_run_means_keep_the_samples_variance_and_imputed_topics_stay_without(top_up, name):
    col, judgments = top_up
    ev = evaluate_collection(col, judgments, parse(f"ht({name})"), ci=0.95)
    ctx = EvalContext(col, judgments)
    (m,) = parse(name)
    e = estimate(ctx, m)
    shape = (col.n_runs, col.n_topics)
    np.testing.assert_allclose(ev.variance[:, :, 0][ev.evaluated],
                               e.variance.reshape(shape)[ev.evaluated])
    own, sample = ev.topic_variance[:, :, 0], sample_topic_variance(ctx, m).reshape(shape)
    cells = ev.evaluated
    assert (np.isnan(own) == np.isnan(sample))[cells].all()
    assert np.isnan(own[cells]).any()  # a topic with no relevant document sampled: imputed
    known = cells & np.isfinite(sample)
    # one relevant document sampled in a topic: the jackknife's variance is 0, the model's not
    assert (sample[known] == 0).any() and (own[known] > 0).all()
    low, high = ev.interval(summary=False)
    np.testing.assert_allclose(((high - low) / 2)[:, :, 0][known],
                               1.959963984540054 * np.sqrt(own[known]), rtol=1e-9)


def test_ppi_on_a_top_up_takes_the_label_informed_models_variance_per_topic():
    """On a top-up one topic's ppi(M) variance is ht(M)'s own times the label-informed model's
    reduction at the run's weight, capped at 1 (``ppi/anticipated.segment_reduction``): with
    labels that err on 15% of the documents it tracks the Monte Carlo variance of the topic's
    ppi estimate (40 draws; ht's own is about three times it), where ppi's own sample variance
    falls short and ht's own gave up the labels' gain."""
    from irsample.io.labels import AutoLabels

    col, frame = synthetic(4, n_topics=6, n_docs=300, depth=120, grades=(0, 0, 0, 1, 1, 2))
    design = _topped_up(col, frame, 0.3, 5)
    truth = np.minimum(frame.judgments().grade, 1).astype(np.float64)
    flip = np.random.default_rng(9).random(len(truth)) < 0.15
    labels = AutoLabels(np.where(flip, 1.0 - truth, truth), "grade", "test")
    names = ("AP", "nDCG", "P@10")
    measures = [m for n in names for m in parse(f"ppi({n})") + parse(f"ht({n})")]
    values, own = [], []
    for child in np.random.SeedSequence(11).spawn(40):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        ev = evaluate_collection(col, judgments, measures, ci=0.95, auto_labels=labels)
        values.append(ev.values)
        own.append(ev.topic_variance)
    values, own = np.array(values), np.array(own)
    for i, name in enumerate(names):
        ppi, ht, x = own[..., 2 * i], own[..., 2 * i + 1], values[..., 2 * i]
        keep = np.all(np.isfinite(ppi), axis=0) & np.all(np.isfinite(x), axis=0)
        assert keep.sum() >= 12
        observed = np.var(x[:, keep], axis=0).sum()
        ratio = ppi.mean(axis=0)[keep].sum() / observed
        print(name, "ppi's own / observed", round(ratio, 3),
              "ht's own / observed", round(ht.mean(axis=0)[keep].sum() / observed, 3))
        assert 0.75 < ratio < 1.4, name
        assert ppi.mean(axis=0)[keep].sum() < 0.6 * ht.mean(axis=0)[keep].sum(), name


def test_the_reduction_is_the_models_variance_at_the_weight_over_its_variance_at_zero(top_up):
    """``segment_reduction`` reads A(lambda) off a quadratic through 0, 1/2 and 1: at any other
    weight it is the residual's anticipated variance computed there, over A(0)."""
    from irsample.measures.ppi.anticipated import label_model, residual_variance, segment_reduction

    col, judgments = top_up
    ctx = EvalContext(col, judgments)
    grades = np.where(judgments.grade > 0, 1, 0)
    d = ht_design(ctx)
    label, probs = label_model(ctx, d, grades)
    for name in ("AP", "nDCG", "P@10"):
        (m,) = parse(name)
        direct = [residual_variance(ctx, d, m, probs, label, np.full((ctx.n_topics, d.n_cells), x))
                  for x in (0.0, 0.3)]
        got = segment_reduction(ctx, m, grades, np.full(ctx.n_seg, 0.3))
        cells = direct[0] > 0
        assert cells.any()
        np.testing.assert_allclose(got[cells], direct[1][cells] / direct[0][cells], rtol=1e-9)
        np.testing.assert_array_equal(
            segment_reduction(ctx, m, grades, np.zeros(ctx.n_seg))[cells], 1.0)


@pytest.mark.parametrize("name", ["AP", "nDCG", "num_rel"])
def test_importance_samples_flag_the_topics_sample_variance(name):
    """No model variance on an importance sample (unequal probabilities within a stratum): the
    identified topics' intervals keep the sample's variance and say so (``SAMPLE_ONLY``); a
    uniform sample's do not carry the bit. P@10's too (ht(P@10)'s covered 0.924 on
    TREC-COVID's importance samples)."""
    from irsample.design import importance, uniform
    from irsample.measures.topic_status import SAMPLE_ONLY, topic_reason

    col, frame = synthetic(3, n_topics=6, n_docs=300, depth=100, grades=(0, 0, 0, 1, 2))
    measures = parse(f"ht({name})") + parse("ht(P@10)")
    for design, expected in ((importance(0.2), True), (uniform(0.2), False)):
        judgments = design.sample(frame, rng=np.random.default_rng(4))
        ev = evaluate_collection(col, judgments, measures, ci=0.95)
        flags = ev.statuses.topic_flags
        own = ev.topic_variance[:, :, 0]
        cells = ev.evaluated & np.isfinite(own)
        assert cells.any()
        marked = (flags[:, :, 0] & SAMPLE_ONLY) > 0
        assert marked[cells].all() if expected else not marked.any(), design.name
        p_at_10 = (flags[:, :, 1] & SAMPLE_ONLY) > 0
        assert p_at_10[ev.evaluated].all() if expected else not p_at_10.any(), design.name
    assert "no model to steady it" in topic_reason(SAMPLE_ONLY, 3)


def test_ppi_flags_its_sample_variance_on_importance_samples_for_totals_too():
    from irsample.design import importance
    from irsample.io.labels import AutoLabels
    from irsample.measures.topic_status import SAMPLE_ONLY

    col, frame = synthetic(3, n_topics=6, n_docs=300, depth=100, grades=(0, 0, 0, 1, 2))
    judgments = importance(0.2).sample(frame, rng=np.random.default_rng(4))
    labels = AutoLabels(np.where(judgments.grade > 0, 1.0, 0.0), "grade", "test")
    ev = evaluate_collection(col, judgments, parse("ppi(P@10)"), ci=0.95, auto_labels=labels)
    assert ((ev.statuses.topic_flags[:, :, 0] & SAMPLE_ONLY) > 0)[ev.evaluated].all()


def test_without_the_topics_the_run_means_and_their_statuses_are_the_same(top_up):
    """``per_topic=False`` (the recipes, which read run means only) skips the topics' own
    variance and flags: the run means, their intervals and statuses are unchanged, and the
    evaluation refuses per-topic intervals rather than give them without their variance."""
    col, judgments = top_up
    measures = parse("ht(AP)") + parse("ht(nDCG)") + parse("ht(P@10)") + parse("xinfAP")
    full = evaluate_collection(col, judgments, measures, ci=0.95)
    means = evaluate_collection(col, judgments, measures, ci=0.95, per_topic=False)
    np.testing.assert_array_equal(means.summary, full.summary)
    np.testing.assert_array_equal(means.summary_variance, full.summary_variance)
    for a, b in zip(means.interval(), full.interval()):
        np.testing.assert_array_equal(a, b)
    for field in ("status", "reason", "causes"):
        assert (getattr(means.statuses, field) == getattr(full.statuses, field)).all()
    assert (full.statuses.status == "unreliable").any()  # the rule has something to say here
    assert means.topic_variance is None and full.topic_variance is not None  # none carried
    with pytest.raises(ValueError, match="per_topic=False"):
        means.interval(summary=False)
    with pytest.raises(ValueError, match="per_topic=False"):
        means.frame()
    assert len(means.frame(per_topic=False)) == len(full.frame(per_topic=False))
