"""ht(AP)'s jackknife replicates of the corrected ratio (``ht/corrected_replicates.py``).

- A pass that deletes nothing recomputes the estimate itself, plain and Taylor-corrected, on
  every identified topic (the passes run the estimator's own kernels).
- The passes' plain ratios are ``ht/jackknife.py``'s replicates, deletion by deletion: the
  weights of the deleted document's cell scaled by n/(n - 1), the pair factors kept, R^ less
  the document; on a planner's top-up (certain documents, which are never deleted), on a
  stratified sample with judged documents that no run retrieved and on an importance sample
  (unequal probabilities in a cell), for AP and AP@5.
- The estimate carries the corrected ratio's replicates where its interval is the jackknife
  (the planner's top-ups, a stratum judged whole beside sampled ones), and the plain ones where
  it takes the anticipated variance (a stratified simple random sample), whose numbers do not
  change.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import stratified
from irsample.design.sampling.importance import importance
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.corrected_replicates import (
    corrected_replicates,
    deletion_pass,
    passes,
)
from irsample.measures.ht.estimator import estimate, tdi_relevant
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.ht.jackknife import ap_replicates
from irsample.measures.ht.walks import NO_CUTOFF
from irsample.model import JUDGED, Judgments

from .test_ht_estimators import _topped_up, synthetic


def _top_up():
    col, frame = synthetic(6, n_topics=6, n_docs=200, depth=60)
    sample = _topped_up(col, frame, 0.2, 5).sample(frame, rng=np.random.default_rng(4))
    return EvalContext(col, sample)


def _with_unretrieved():
    """A stratified sample whose topic 0 also holds three judged documents no run retrieved
    (two relevant), in its deeper stratum."""
    col, frame = synthetic(7, n_topics=5, n_docs=200, depth=60)
    sample = stratified("1-5:0.8,6-:0.3").sample(frame, rng=2)
    judged = sample.state[frame.tdi] == JUDGED
    deep = int(np.max(sample.stratum[frame.tdi]))
    topic = np.concatenate([frame.topic, [0, 0, 0]])
    tdi = np.concatenate([frame.tdi, [-1, -1, -1]])
    rel = np.concatenate([np.where(judged, frame.rel, -1), [1, 2, 0]])
    stratum = np.concatenate([sample.stratum[frame.tdi], [deep] * 3])
    judgments = Judgments.from_arrays(col, topic, tdi, rel, stratum=stratum,
                                      labels=sample.stratum_labels)
    ctx = EvalContext(col, judgments)
    assert ht_design(ctx).outside.sum() == 2  # the relevant ones, by grade
    return ctx


def _importance():
    """statAP's design: unequal probabilities within a topic's one stratum."""
    col, frame = synthetic(8, n_topics=6, n_docs=200, depth=60)
    return EvalContext(col, importance(0.3).sample(frame, rng=np.random.default_rng(5)))


CASES = {"top-up": _top_up, "unretrieved": _with_unretrieved, "importance": _importance}
BOTH = pytest.mark.parametrize("case,name", [(c, n) for c in sorted(CASES) for n in ("AP", "AP@5")])


def _setup(case, name):
    """The case's context, the measure, its cut-off, the design and ap_replicates."""
    ctx = CASES[case]()
    (m,) = parse(name)
    cutoff = NO_CUTOFF if m.k is None else m.k
    d = ht_design(ctx)
    return ctx, m, cutoff, d, ap_replicates(ctx, d, cutoff)


@BOTH
def test_a_pass_deleting_nothing_is_the_estimate(case, name):
    ctx, m, cutoff, d, replicates = _setup(case, name)
    e = estimate(ctx, m)
    theta, corrected = deletion_pass(ctx, d, replicates, cutoff, tdi_relevant(ctx), [])
    known = np.asarray(e.known, dtype=bool)
    assert known.sum() >= 10
    np.testing.assert_allclose(theta[known], e.plain[known], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(corrected[known], e.value[known], rtol=1e-12, atol=1e-15)


@BOTH
def test_the_passes_plain_ratios_are_the_jackknifes_replicates(case, name):
    ctx, _, cutoff, d, replicates = _setup(case, name)
    rep_offsets, rep, base, _ = replicates
    rep_p, base_p = np.zeros_like(rep), np.zeros_like(base)
    deletions = 0
    for deleted, theta, _ in passes(ctx, d, replicates, cutoff, tdi_relevant(ctx)):
        for t, relevant, which, _, _ in deleted:
            segs = np.arange(ctx.n_runs) * ctx.n_topics + t
            deletions += 1
            if relevant:
                rep_p[rep_offsets[segs] + which] = theta[segs]
            else:
                base_p[segs, which] = theta[segs]
    assert deletions >= 20
    np.testing.assert_allclose(rep_p, rep, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(base_p, base, rtol=1e-10, atol=1e-13)


def test_the_estimate_carries_the_corrected_replicates_where_its_interval_is_the_jackknife():
    (m,) = parse("AP")
    col, frame = synthetic(7, n_topics=5, n_docs=200, depth=60)
    # ranks 1-5 judged whole beside sampled ones: the jackknife, as on a top-up
    whole = EvalContext(col, stratified("1-5:1,6-:0.3").sample(frame, rng=2))
    for ctx in (_top_up(), whole):
        d = ht_design(ctx)
        e = estimate(ctx, m)
        assert not e.anticipated
        expected = corrected_replicates(ctx, d, ap_replicates(ctx, d, NO_CUTOFF), NO_CUTOFF,
                                        tdi_relevant(ctx))
        np.testing.assert_array_equal(e.replicates[1], expected[1])
        np.testing.assert_array_equal(e.replicates[2], expected[2])
        assert not np.allclose(e.replicates[1], ap_replicates(ctx, d, NO_CUTOFF)[1])
    srs = _with_unretrieved()
    e = estimate(srs, m)
    assert e.anticipated  # its interval is the model's: the jackknife's replicates stay plain
    np.testing.assert_array_equal(e.replicates[1], ap_replicates(srs, ht_design(srs),
                                                                 NO_CUTOFF)[1])
