"""ppi(nDCG) on the topics the difference form leaves to ht (irsample.measures.ppi_control):
ht(nDCG) on the humans with ht on the labels as control variate, imputed topics included.

A synthetic collection with few relevant documents per topic, so that at a 15% uniform sample
many topics hold 0 or 1 sampled relevant documents (imputed by ht, or single-hit donors).
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame, uniform
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io.labels import AutoLabels
from irsample.measures import EvalContext, parse
from irsample.measures.ppi import ppi_estimate

from .synthetic import pooled_collection

NDCG = parse("nDCG")[0]


@pytest.fixture(scope="module")
def world():
    collection, qrels = pooled_collection(5, n_topics=12, n_runs=4, n_docs=500, depth=60,
                                          pool_depth=30, relevant=(2, 9))
    frame = SamplingFrame.from_qrels(collection, qrels)
    truth = evaluate_collection(collection, frame.judgments(), [NDCG]).values[:, :, 0].ravel()
    return collection, frame, truth


def _labels(collection, frame, values):
    v = np.full(collection.n_tdi, np.nan)
    v[frame.tdi] = values
    return AutoLabels(v, "grade")


def _noisy(collection, frame, seed, share):
    rng = np.random.default_rng(seed)
    moved = rng.integers(-1, 2, len(frame)) * (rng.random(len(frame)) < share)
    return _labels(collection, frame, np.clip(frame.rel + moved, 0, 2))


def _kept(e):
    """Segments ppi took by the control variate (ht_f known there)."""
    return np.isfinite(e.ht_f)


def test_true_labels_exact_on_imputed_and_single_hit_topics(world):
    collection, frame, truth = world
    labels = _labels(collection, frame, frame.rel)
    seen_imputed = 0
    for draw in range(4):
        sample = uniform(0.15).sample(frame, rng=draw)
        ctx = EvalContext(collection, sample)
        e = ppi_estimate(ctx, labels, NDCG)
        have = np.isfinite(truth)
        np.testing.assert_allclose(e.value[have], truth[have], atol=1e-9)
        np.testing.assert_allclose(e.variance, 0.0, atol=1e-12)
        from irsample.measures.design_based import estimate
        seen_imputed += int(np.sum(_kept(e) & (estimate(ctx, NDCG).den == 0)))
    assert seen_imputed > 0  # the draws do exercise imputed topics


def test_constant_labels_and_kept_ht_give_ht_bit_for_bit(world):
    collection, frame, _ = world
    sample = uniform(0.15).sample(frame, rng=1)
    ctx = EvalContext(collection, sample)
    for labels, kept in ((_labels(collection, frame, np.ones(len(frame))), "control"),
                         (_noisy(collection, frame, 3, 0.2), "ht")):
        e = ppi_estimate(ctx, labels, NDCG, kept=kept)
        off = (e.lam == 0) if kept == "control" else ~np.isfinite(e.ht_f)
        assert off.all() if kept == "control" else off.any()
        np.testing.assert_array_equal(e.value[off], e.ht[off])
        np.testing.assert_array_equal(e.variance[off], e.ht_variance[off])
    with pytest.raises(MeasureError):
        ppi_estimate(ctx, labels, NDCG, kept="labels")


def test_correction_has_mean_near_zero_at_fixed_lambda(world):
    """At a fixed lambda the control variate's correction (ppi - ht on the segments it takes)
    averages near 0 over 300 draws: its mean over draws of a run's mean correction is within
    0.01 of 0 for every run (ht(nDCG)'s ratio and imputation make it approximately, not
    exactly, unbiased), and ppi's bias over the draws is no larger than ht's plus 0.01."""
    collection, frame, truth = world
    labels = _noisy(collection, frame, 11, 0.3)
    have = np.isfinite(truth)
    n_runs = collection.n_runs
    corr, err_ppi, err_ht = [], [], []
    for draw in range(300):
        sample = uniform(0.15).sample(frame, rng=100 + draw)
        e = ppi_estimate(EvalContext(collection, sample), labels, NDCG, tuning=0.6)
        kept = _kept(e)
        corr.append(np.where(kept & have, e.value - e.ht, 0.0).reshape(n_runs, -1).mean(axis=1))
        err_ppi.append(np.where(have, e.value - truth, 0.0).reshape(n_runs, -1).mean(axis=1))
        err_ht.append(np.where(have, e.ht - truth, 0.0).reshape(n_runs, -1).mean(axis=1))
    corr, err_ppi, err_ht = map(np.array, (corr, err_ppi, err_ht))
    assert np.mean(corr != 0) > 0.5  # the correction is active
    assert np.all(np.abs(corr.mean(axis=0)) < 0.01)
    assert np.all(np.abs(err_ppi.mean(axis=0)) < np.abs(err_ht.mean(axis=0)) + 0.01)
    # and it narrows: the spread of ppi's run means is below ht's
    assert np.all(err_ppi.std(axis=0) < err_ht.std(axis=0))
