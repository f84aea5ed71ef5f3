"""Where the error of a run mean comes from when most of the pool is judged (issue 25).

For ``--draws`` samples of one design of ``irsample simulate ci-coverage`` (the depth-100 pool
of the collection's runs as the frame, its complete judgments as the truth;
``ht_coverage.design_for``) this adds up, over the (run, topic) cells each run answers, the
squared error of ht(M)'s topic estimate against the truth and the variance its interval gives
that cell, by the topic's state in the draw:

- ``census``: judged whole; ``imputed``: no judged relevant document (the value is imputed);
- ``blind``: the interval's variance is 0 for every run (no variation among the documents left
  to chance), ``single``: one simple random sample at a single rate (a uniform design),
  ``mixed``: the rest;

and by its judged relevant documents (0, 1, 2, 3, 4+). A mean's interval is right on average only
where the variance given a group of cells matches their squared error; the reliability rule's
``unsettled`` topics (``irsample/measures/reliability/limits.py``, rule 2) are the rows with 1-2
judged relevant documents and half or more of the pool judged, short of whole (once only the
``blind`` and ``single`` ones: the states this script tells apart). Also
printed: for the blind topics with 1 to 2 judged relevant documents, how often the documents
left unjudged held one more relevant document.

Measured on CACM (planned 70%, uniform 70% and 80%, 20 draws, seed 5): REPRODUCTION.md,
"Topics their judged share does not settle".

Usage: python benchmarks/unsettled_topics.py [--collection cacm] [--design planned]
       [--percent 70] [--measure nDCG] [--draws 20] [--seed 5] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import design_cell_arguments, design_for, load  # noqa: E402

STATES = ("census", "imputed", "blind", "single", "mixed")


#: a topic's variance at most this, for every run, shows no variation (``blind``)
NO_VARIATION = 1e-20


def unseen_topics(evaluated: np.ndarray, variance: np.ndarray,
                  share: np.ndarray) -> np.ndarray:
    """Per topic: not judged whole (``share`` < 1), answered by some run (``evaluated``, runs x
    topics), and the interval's ``variance`` at most :data:`NO_VARIATION` for every run that
    answers it: the part of its sample left to chance holds nothing that varies."""
    flat = np.where(evaluated, variance, 0.0) <= NO_VARIATION
    return (share < 1.0) & evaluated.any(axis=0) & flat.all(axis=0)


def single_rate_topics(ctx) -> np.ndarray:
    """Per topic: it has judged documents, and they are one simple random sample at a single
    rate below 1 (every one's inclusion probability the same: a uniform design), nothing
    judged more thoroughly than the rest."""
    from irsample.model.judgments import group_range

    tdi_topic = ctx.collection.tdi_topic
    pi = ctx.judgments.judged_inclusion(tdi_topic)
    judged = pi > 0
    hi, lo = group_range(tdi_topic[judged], pi[judged], ctx.n_topics)
    return (hi > 0.0) & (hi < 1.0) & (hi - lo <= 1e-12)


def cell_states(ctx, estimate, answered) -> tuple[np.ndarray, np.ndarray]:
    """Per topic: its state (an index into :data:`STATES`) and its judged relevant documents."""
    from irsample.measures.reliability import found_per_topic, judged_share

    shape = answered.shape
    found, share = found_per_topic(ctx), judged_share(ctx)
    blind = unseen_topics(answered, estimate.variance.reshape(shape), share)
    state = np.select(
        [share >= 1.0, found == 0, blind, single_rate_topics(ctx)],
        [0, 1, 2, 3], default=4)
    return state, found


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    design_cell_arguments(ap, ROOT, design="planned", percent=70.0)
    ap.add_argument("--measure", default="nDCG", help="AP or nDCG (estimated by ht)")
    a = ap.parse_args(argv)

    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse
    from irsample.measures.context import EvalContext
    from irsample.measures.ht.estimator import estimate
    from irsample.model import JUDGED

    collection, frame = load(a.collection, a.shared)
    design = design_for(a.design, a.percent / 100, frame)
    (measure,) = parse(a.measure)
    full = frame.judgments()
    shape = (collection.n_runs, collection.n_topics)
    truth = np.asarray(evaluate_collection(collection, full, [measure]).values).reshape(shape)
    relevant = (full.state == JUDGED) & (full.grade >= 1)
    error2 = np.zeros((len(STATES), 5))
    given = np.zeros((len(STATES), 5))
    cells = np.zeros((len(STATES), 5))
    blind_few = left = 0
    for child in np.random.SeedSequence(a.seed).spawn(a.draws):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        ctx = EvalContext(collection, judgments)
        e = estimate(ctx, measure)
        answered = ctx.answered
        state, found = cell_states(ctx, e, answered)
        group = np.minimum(found, 4)
        err2 = np.where(answered, (e.value.reshape(shape) - truth) ** 2, 0.0)
        var = np.where(answered, e.variance.reshape(shape), 0.0)
        np.add.at(error2, (state, group), err2.sum(axis=0))
        np.add.at(given, (state, group), var.sum(axis=0))
        np.add.at(cells, (state, group), answered.sum(axis=0))
        unjudged = relevant & (judgments.state != JUDGED)
        missed = np.bincount(collection.tdi_topic[unjudged], minlength=collection.n_topics)
        few = (state == 2) & (found >= 1) & (found <= 2)
        blind_few += int(few.sum())
        left += int((few & (missed > 0)).sum())
    total = error2.sum()
    print(f"{a.collection} {a.design} {a.percent:g}% ht({a.measure}), {a.draws} draws (seed "
          f"{a.seed}): per draw, over the cells the runs answer")
    print(f"{'state':8s} {'found':>5s} {'cells':>8s} {'sq. error':>10s} {'variance':>10s} "
          f"{'ratio':>6s} {'share of error':>14s}")
    for s, name in enumerate(STATES):
        for g in range(5):
            if cells[s, g] == 0:
                continue
            ratio = error2[s, g] / given[s, g] if given[s, g] > 0 else float("inf")
            print(f"{name:8s} {g if g < 4 else '4+':>5} {cells[s, g] / a.draws:8.1f} "
                  f"{error2[s, g] / a.draws:10.4f} {given[s, g] / a.draws:10.4f} {ratio:6.2f} "
                  f"{error2[s, g] / total:14.2f}")
    print(f"all: squared error {total / a.draws:.4f}, variance {given.sum() / a.draws:.4f}")
    if blind_few:
        print(f"blind topics with 1-2 judged relevant documents: {blind_few} (topic x draw), "
              f"{left / blind_few:.2f} of them with a relevant document left unjudged")


if __name__ == "__main__":
    main()
