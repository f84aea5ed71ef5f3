"""TREC-8 checks (shared): judgment-free rankings correlate with true MAP as published (Kendall
tau about 0.4-0.6), and inferred judgments recover most relevant documents from exact APs."""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import SamplingFrame, nojudge, uniform
from irsample.design.nojudge.infer import agreement, estimates_from_sample, infer_relevance
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.measures import parse_all
from irsample.model import Collection, Judgments
from irsample.stats import kendall_tau, tau_ap

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def trec8(shared):
    data = shared / "data/trec8-adhoc"
    qrels = load_qrels(str(data / "qrels.trec8.adhoc"))
    collection = Collection.build(load_runs(sorted((data / "runs").iterdir())), [qrels])
    truth = Judgments.from_qrels(collection, qrels)
    ap = evaluate_collection(collection, truth, parse_all(["AP"])).values[:, :, 0]
    return collection, qrels, truth, ap


@pytest.mark.parametrize("method", ["refcount", "condorcet", "soboroff"])
def test_rankings_correlate_with_true_map(trec8, method):
    """benchmarks/nojudge_trec8.py: refcount 0.522, condorcet 0.545, soboroff (50 trials)
    0.53; here soboroff with 5 trials."""
    collection, _, truth, ap = trec8
    true_map = np.nanmean(ap, axis=1)
    if method == "soboroff":
        mean, sd = nojudge.relevant_fraction(truth)
        assert (round(mean, 4), round(sd, 4)) == (0.055, 0.048)
        scores = nojudge.soboroff(collection, mean=mean, sd=sd, rng=0, trials=5)
    else:
        scores = getattr(nojudge, method)(collection)
    tau = kendall_tau(true_map, scores.score).statistic
    assert 0.45 < tau < 0.65
    assert 0.3 < tau_ap(true_map, scores.score).statistic < tau


def test_inference_from_exact_aps_and_a_sample(trec8):
    """Five topics, 5% uniform sample: with exact AP and R the fit finds most relevant
    documents (benchmark: F1 0.83 over 50 topics); with infAP estimates far fewer (0.39)."""
    collection, qrels, truth, ap = trec8
    sample = uniform(0.05).sample(SamplingFrame.from_qrels(collection, qrels), rng=0)
    topics = np.arange(5)
    only = np.full_like(ap, np.nan)
    only[:, topics] = ap[:, topics]
    counts = np.repeat(np.arange(collection.n_topics), np.diff(truth.grade_offsets))
    r = np.bincount(counts[truth.judged_grades > 0], minlength=collection.n_topics).astype(float)
    oracle = agreement(infer_relevance(collection, sample, only, r), truth)
    assert np.mean(oracle.f1[topics]) > 0.7
    est, r_hat = estimates_from_sample(collection, sample)
    only[:, topics] = est[:, topics]
    noisy = agreement(infer_relevance(collection, sample, only, r_hat), truth)
    assert 0.1 < np.mean(noisy.f1[topics]) < np.mean(oracle.f1[topics])
