"""The faster inference of judgments (issue 11, item 7: infer-qrels on TREC-8 in seconds) gives
the same results as before, bit for bit: the objective over the live positions equals the
objective over every position, and :func:`infer_relevance` (threads over topics, one BLAS
thread, live positions) returns what the previous implementation, kept below as the
reference, returned on synthetic pools."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from irsample.design import SamplingFrame, uniform
from irsample.design.nojudge.infer import (
    _LBFGSB,
    _live_positions,
    _objective_live,
    estimates_from_sample,
    infer_relevance,
)
from irsample.model import JUDGED, POOLED

from .synthetic import pooled_collection


@njit(nogil=True)
def _objective(p_free, slot, offsets, target, inv_r):
    """The objective before the speed-up, over every position: sum_s (E[AP_s] - target_s)^2 and
    its gradient in the free p; ``slot`` maps a position to
    a free variable (< n) or to the fixed values n (p = 0) and n + 1 (p = 1)."""
    n = p_free.shape[0]
    p = np.empty(n + 2)
    p[:n] = p_free
    p[n] = 0.0
    p[n + 1] = 1.0
    f = 0.0
    grad = np.zeros(n)
    for s in range(offsets.shape[0] - 1):
        a, b = offsets[s], offsets[s + 1]
        above = 0.0
        e = 0.0
        for i in range(b - a):
            pi = p[slot[a + i]]
            e += pi * (1.0 + above) / (i + 1.0)
            above += pi
        diff = e * inv_r - target[s]
        f += diff * diff
        scale = 2.0 * diff * inv_r
        below = 0.0  # sum over i > k of p_i / i
        for i in range(b - a - 1, -1, -1):
            pi = p[slot[a + i]]
            above -= pi  # now the sum over j < i
            v = slot[a + i]
            if v < n:
                grad[v] += scale * ((1.0 + above) / (i + 1.0) + below)
            below += pi / (i + 1.0)
    return f, grad


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_live_objective_is_the_objective_bit_for_bit(data):
    n = data.draw(st.integers(0, 6))
    lengths = np.array(data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=6)))
    slot = np.array(data.draw(st.lists(st.integers(0, n + 1), min_size=int(lengths.sum()),
                                       max_size=int(lengths.sum()))), dtype=np.int64)
    p = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 0.25, 1e-300, 0.7, 1 / 3]),
                                    min_size=n, max_size=n)), dtype=np.float64)
    target = np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(lengths),
                                         max_size=len(lengths))))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    f, g = _objective(p, slot, offsets, target, 0.37)
    live, denominator, live_offsets = _live_positions(slot, lengths, n)
    f2, g2 = _objective_live(p, live, denominator, live_offsets, target, 0.37)
    assert (f, g.tobytes()) == (f2, g2.tobytes())
    assert not (live == n).any()


def _reference_fit_topic(collection, judgments, t, free, runs, estimates, r_hat, target,
                         rel_level):
    """The implementation before the speed-up: every ranked position, default BLAS threads."""
    n = len(free)
    local = np.full(collection.n_tdi, -1, dtype=np.int64)
    local[free] = np.arange(n)
    segs = runs * collection.n_topics + t
    starts, stops = collection.rank_offsets[segs], collection.rank_offsets[segs + 1]
    lengths = stops - starts
    before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = np.repeat(starts - before, lengths) + np.arange(lengths.sum())
    docs = collection.rank_tdi[pos]
    fixed_rel = (judgments.state[docs] == JUDGED) & (judgments.grade[docs] >= rel_level)
    slot = np.where(local[docs] >= 0, local[docs], np.where(fixed_rel, n + 1, n))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    inv_r = 1.0 / r_hat
    target_ap = np.ascontiguousarray(estimates)
    scale = max(target, 1.0)
    lam, mu = 0.0, 10.0 * len(runs)
    p = np.full(n, target / n)

    def fun(x):
        f, g = _objective(x, slot, offsets, target_ap, inv_r)
        c = (x.sum() - target) / scale
        return f + lam * c + 0.5 * mu * c * c, g + (lam + mu * c) / scale

    for _ in range(20):
        res = scipy.optimize.minimize(
            fun, p, jac=True, method="L-BFGS-B", bounds=scipy.optimize.Bounds(0.0, 1.0),
            options=_LBFGSB,
        )
        p = np.clip(res.x, 0.0, 1.0)
        c = (p.sum() - target) / scale
        if abs(c) <= 1e-3:
            break
        lam += mu * c
    f, _ = _objective(p, slot, offsets, target_ap, inv_r)
    return p, math.sqrt(f / len(runs))


def _reference_probabilities(collection, judgments, ap, r_hat, rel_level=1):
    n_topics = collection.n_topics
    counts = np.diff(judgments.grade_offsets)
    topic_of = np.repeat(np.arange(len(counts)), counts)
    judged_rel = np.bincount(topic_of[judgments.judged_grades >= rel_level],
                             minlength=n_topics)
    free_all = np.flatnonzero(judgments.state == POOLED)
    bounds = np.searchsorted(collection.tdi_topic[free_all], np.arange(n_topics + 1))
    fitted = np.zeros(collection.n_tdi)
    rms = np.full(n_topics, np.nan)
    for t in range(n_topics):
        free = free_all[bounds[t]: bounds[t + 1]]
        target = min(max(r_hat[t] - judged_rel[t], 0.0), float(len(free)))
        runs = np.flatnonzero(np.isfinite(ap[:, t]))
        if not judgments.has_topic[t] or len(free) == 0 or r_hat[t] <= 0 or len(runs) == 0:
            continue
        fitted[free], rms[t] = _reference_fit_topic(
            collection, judgments, t, free, runs, ap[runs, t], r_hat[t], target, rel_level)
    return fitted, rms


@pytest.mark.parametrize("seed", [3, 8])
def test_infer_relevance_equals_the_previous_implementation(seed):
    """Synthetic pools (6 topics, 8 runs 200 deep, depth-100 pool), a 10% uniform sample,
    infAP estimates: identical probabilities, RMS errors and rounded qrels."""
    collection, table = pooled_collection(seed, n_topics=6, n_runs=8)
    sample = uniform(0.1).sample(SamplingFrame.from_qrels(collection, table), rng=seed)
    ap, r_hat = estimates_from_sample(collection, sample)
    inferred = infer_relevance(collection, sample, ap, r_hat, rounding="top")
    fitted, rms = _reference_probabilities(collection, sample, ap, r_hat)
    free = ~inferred.judged
    assert np.array_equal(inferred.probability[free], fitted[inferred.tdi][free])
    assert np.array_equal(inferred.rms, rms, equal_nan=True)
    assert inferred.probability[free].max() > 0  # something was fitted


def test_progress_counts_every_topic():
    collection, table = pooled_collection(5, n_topics=4, n_runs=4)
    sample = uniform(0.1).sample(SamplingFrame.from_qrels(collection, table), rng=1)
    ap, r_hat = estimates_from_sample(collection, sample)
    ap[:, 1] = np.nan  # a topic without estimates is counted too
    ticks = []
    infer_relevance(collection, sample, ap, r_hat, progress=ticks.append)
    assert sum(ticks) == collection.n_topics
