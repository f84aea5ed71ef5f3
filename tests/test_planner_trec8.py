"""The design planner on TREC-8 (shared): a 10,000-judgment plan over the official depth-100
pool of the 71 pooled runs, after a pilot judged with the official qrels.

- the plan spends the budget exactly and keeps the pilot's documents and boundary;
- (not asserted: the allocation over topics follows the variance of the *normalised* measure,
  so topics with many relevant documents do not get more; Spearman's rho of a topic's planned
  judgments with its true R is 0.09-0.18 for xinfAP and -0.61 for infNDCG, seeds 11-12);
- the predicted 95% half-width of a run's mean xinfAP is of the order of the spread of its
  estimate over redrawn samples of the same plan (a factor 2 either way, 12 draws).
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design.planner.sequential import BatchLog, judge_in_batches
from irsample.evaluation import evaluate_collection
from irsample.experiments import CollectionFiles, load
from irsample.experiments.data import parse_one

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def trec8(shared):
    d = shared / "data" / "trec8-adhoc"
    files = CollectionFiles.of(d / "runs", d / "qrels.trec8.adhoc",
                               pooled=d / "run-pooled-flag.txt")
    data = load(files)
    frame = data.frame(tuple(data.info.pooled_runs), 100)
    return data, frame


def test_plan_spends_the_budget_and_keeps_the_pilot(trec8):
    data, frame = trec8
    log = BatchLog()
    sample = judge_in_batches(frame, lambda rows: frame.rel[rows], 10000, estimator="xinfAP",
                              rng=11, log=log)
    planned = log.plans[-1]
    assert int(sample.judged.sum()) == 10000 == planned.budget
    assert 11 in planned.edges
    assert int(planned.judged.sum()) == 500 and log.judged == [10000]  # pilot: 5%
    assert np.all(planned.take <= planned.size)
    # every cell with unjudged documents is topped up by two, or all it has left
    assert np.all(planned.take - planned.judged >= np.minimum(2, planned.size - planned.judged))


def test_predicted_halfwidth_is_of_the_order_of_the_observed_spread(trec8):
    data, frame = trec8
    log = BatchLog()
    judge_in_batches(frame, lambda rows: frame.rel[rows], 10000, estimator="xinfAP", rng=3,
                     log=log)
    planned = log.plans[-1]
    design = planned.design()  # the same plan redrawn (no pilot kept: a fixed design)
    pooled = data.subcollection(tuple(data.info.pooled_runs))
    means = []
    for k in range(12):
        judgments = design.sample(frame, rng=np.random.default_rng(k))
        ev = evaluate_collection(pooled, judgments, [parse_one("xinfAP")])
        means.append(ev.values[:, :, 0].mean(axis=1))
    observed = 1.96 * np.sqrt(np.var(np.array(means), axis=0, ddof=1).mean())
    assert 0.5 < planned.halfwidth / observed < 2.0, (planned.halfwidth, observed)
