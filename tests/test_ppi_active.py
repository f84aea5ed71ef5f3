"""Active judging (irsample.design.sampling.active): inclusion probabilities from automatic
labels' uncertainty and the runs' AP prior, mixed with uniform, drawn at a fixed size per topic;
the estimators stay unbiased because the draw records its pi."""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame
from irsample.design.sampling.active import active
from irsample.errors import DesignError
from irsample.io.labels import AutoLabels
from irsample.measures import EvalContext
from irsample.measures.ppi import ppi_estimate

from .synthetic import pooled_collection


@pytest.fixture(scope="module")
def world():
    collection, qrels = pooled_collection(5, n_topics=4, n_runs=5, n_docs=600, depth=80,
                                          pool_depth=30, relevant=(10, 30))
    frame = SamplingFrame.from_qrels(collection, qrels)
    rng = np.random.default_rng(1)
    prob = np.full(collection.n_tdi, np.nan)
    prob[frame.tdi] = np.clip(0.7 * (frame.rel >= 1) + 0.3 * rng.random(len(frame)), 0, 1)
    return collection, frame, prob


def test_sizes_mixing_and_uncertainty(world):
    collection, frame, prob = world
    design = active(0.2, prob, mix=0.25)
    pi = design.inclusion(frame)
    size = frame.pool_size()
    want = np.floor(0.2 * size + 0.5)
    np.testing.assert_allclose(np.bincount(frame.topic, weights=pi), want, rtol=1e-9)
    floor = 0.25 * (want / size)[frame.topic]
    assert np.all(pi >= floor - 1e-12) and np.all(pi <= 1.0)
    sample = design.select(frame, rng=3)
    np.testing.assert_array_equal(np.bincount(frame.topic[sample.judged]), want.astype(int))
    # a label of 0 or 1 is certain: only the uniform share remains
    sure = np.isin(prob[frame.tdi], (0.0, 1.0))
    if sure.any():
        np.testing.assert_allclose(pi[sure], floor[sure])


def test_first_order_inclusion_is_exact(world):
    """The share of 4,000 draws that judge each document matches its recorded pi."""
    collection, frame, prob = world
    design = active(0.2, prob)
    pi = design.inclusion(frame)
    hits = np.zeros(len(frame))
    for i in range(4000):
        hits += design.select(frame, rng=i).judged
    se = np.sqrt(pi * (1 - pi) / 4000) + 1e-9
    assert np.mean(np.abs(hits / 4000 - pi) < 4 * se) > 0.99


def test_ppi_on_an_active_sample_is_unbiased_for_a_total(world):
    """ppi(num_rel) at fixed lambda over active draws: mean = the true count per topic."""
    collection, frame, prob = world
    labels = AutoLabels(prob, "probability")
    design = active(0.25, prob)
    values = np.array([ppi_estimate(EvalContext(collection, design.sample(frame, rng=i)), labels,
                                    "num_rel", tuning=0.5).value for i in range(800)])
    truth = np.tile(np.bincount(frame.topic[frame.rel >= 1], minlength=collection.n_topics),
                    collection.n_runs)
    se = values.std(axis=0) / np.sqrt(len(values))
    assert np.all(np.abs(values.mean(axis=0) - truth) < 4 * se + 1e-9)


def test_bad_arguments(world):
    collection, frame, prob = world
    with pytest.raises(DesignError):
        active(0.2, prob, mix=0.0)
    with pytest.raises(DesignError):
        active(0.2, prob[:10]).select(frame, rng=1)
