"""ht(nDCG)'s jackknife replicates of the corrected ratio (``ht/ndcg_replicates.py``).

- The closed form is the estimator recomputed on the reduced sample: for every unit of a topic
  (a sampled document of positive grade, one sampled outside the collection, and a cell's
  document of grade 0) the design is rebuilt with the unit deleted and its cell's other
  probabilities divided by n/(n - 1), and ht(nDCG)'s own steps (DCG^, the ideal DCG of the
  counts less its concavity bias, the cell variances and covariance, the Taylor correction)
  give the replicate; on an importance sample, a stratified sample with judged documents no
  run retrieved and a planner's top-up (certain documents, never deleted), for nDCG and
  nDCG@10, corrected and plain; and (hypothesis) on importance samples of random worlds,
  binary or graded up to 3, at random rates and cut-offs.
- On an importance sample and a planner's top-up (where the anticipated variance does not
  apply) the estimate takes the correction on the topics whose sample holds more than ``FEW``
  documents of positive grade, its identified topics' variance is the jackknife of those
  replicates, and it carries them (``compare`` reads them); a stratified simple random sample
  takes the anticipated variance and carries no replicates.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.design import stratified
from irsample.design.sampling.importance import importance
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.estimator import _ratio, estimate, ndcg_totals
from irsample.measures.ht.inclusion import SampledPositions, ht_design
from irsample.measures.ht.jackknife import jackknife_variance
from irsample.measures.ht.ndcg_replicates import (
    GRADE_0,
    NOTHING,
    _each_topic,
    _units,
    ndcg_replicates,
    ndcg_second_order,
)
from irsample.measures.ht.walks import NO_CUTOFF, sampled_positions
from irsample.measures.reliability import FEW

from .test_corrected_replicates import CASES
from .test_ht_estimators import synthetic


def _reduced(ctx, d, t, h, key, pi_d):
    """``d`` with unit ``key`` of topic t deleted from cell h (a tdi, -1 - k for the k-th one
    outside the collection, None for a document of grade 0 of mean probability ``pi_d``) and
    the cell's other probabilities below 1 divided by s = n/(n - 1)."""
    n = float(d.cell_n[t, h])
    s = n / (n - 1.0)
    col = ctx.collection
    tdi_pi = d.tdi_pi.copy()
    mine = (col.tdi_topic == t) & (d.tdi_cell == h) & (tdi_pi > 0) & (tdi_pi < 1)
    tdi_pi[mine] /= s
    outside, outside_pi = d.outside.copy(), d.outside_pi.copy()
    if key is not None and key >= 0:
        tdi_pi[key] = 0.0
    elif key is not None:  # the k-th outside: the cells' copies in (cell, grade) order
        k = -1 - key
        cells = [(c, g) for c in range(d.n_cells) for g in range(1, outside.shape[2])
                 for _ in range(int(round(outside[t, c, g])))]
        outside[t][cells[k]] -= 1.0
    if outside_pi[t, h] < 1.0:
        outside_pi[t, h] /= s
    cell_n, cell_w = d.cell_n.astype(np.float64).copy(), d.cell_w.copy()
    cell_w[t, h] = n - 1.0 - (n - cell_w[t, h] - pi_d) / s
    cell_n[t, h] = n - 1.0
    docs = np.flatnonzero(tdi_pi > 0)
    local = np.full(col.n_tdi, -1, dtype=np.int32)
    local[docs] = np.arange(len(docs), dtype=np.int32)
    offsets, index, rank, doc = sampled_positions(ctx.offsets, ctx.pos_tdi, local)
    at = SampledPositions(offsets, index, rank, doc, docs, tdi_pi[docs], d.tdi_cell[docs],
                          d.tdi_g[docs], len(ctx.pos_tdi))
    return replace(d, tdi_pi=tdi_pi, cell_n=cell_n, cell_w=cell_w, outside=outside,
                   outside_pi=outside_pi, sampled=at)


def _recomputed(ctx, d, cutoff):
    """Per segment, ht(nDCG)'s plain and corrected ratio on design ``d`` (0 where Y^ is 0),
    by the estimator's own steps, and the gain-discount terms."""
    num, term, den, tdi_slope = ndcg_totals(ctx, d, cutoff)
    est = _ratio(ctx, d, num, term, den, tdi_slope, correct=True)
    some = est.den > 1e-12
    return np.where(some, est.plain, 0.0), np.where(some, est.value, 0.0), term


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", ["nDCG", "nDCG@10"])
def test_the_closed_form_is_the_estimator_on_the_reduced_sample(case, name):
    ctx = CASES[case]()
    fixed = np.zeros(ctx.n_seg, dtype=bool)
    fixed[::2] = True  # half the segments corrected, half plain
    checked, key = _check_replicates(ctx, name, fixed)
    assert checked >= 20
    if case == "unretrieved":
        assert (key < 0).sum() == 2  # the two relevant documents no run retrieved are units
    assert len(_units(ctx, ht_design(ctx))[0]) == ctx.n_topics + 1


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10_000), rate=st.floats(0.05, 0.6),
       grades=st.sampled_from([(0, 0, 0, 1), (0, 0, 0, 0, 1, 1, 2), (0, 1, 2, 3)]),
       cut=st.sampled_from(["nDCG", "nDCG@5"]), corrected=st.booleans())
def test_the_closed_form_holds_on_any_importance_sample(seed, rate, grades, cut, corrected):
    """Random worlds (grades binary or up to 3), rates and cut-offs: every checked replicate
    is the estimator on its reduced sample."""
    col, frame = synthetic(seed, n_topics=3, n_docs=60, n_runs=3, depth=25, grades=grades)
    ctx = EvalContext(col, importance(rate).sample(frame, rng=np.random.default_rng(seed)))
    assert _check_replicates(ctx, cut, np.full(ctx.n_seg, corrected))[0] >= 3


def _check_replicates(ctx, name, fixed):
    """Compare up to six units and every grade-0 deletion of each topic with the estimator
    recomputed on the reduced sample; returns how many were checked and the units' keys."""
    (m,) = parse(name)
    cutoff = NO_CUTOFF if m.k is None else m.k
    d = ht_design(ctx)
    _, _, term = _recomputed(ctx, d, cutoff)
    rep_offsets, rep, base, (offsets, cell, pi, key) = ndcg_replicates(ctx, d, term, cutoff,
                                                                        fixed)
    checked = 0
    for t in range(ctx.n_topics):
        segs = np.arange(ctx.n_runs) * ctx.n_topics + t
        units = [(u, cell[u], pi[u], key[u]) for u in range(offsets[t], offsets[t + 1])
                 if pi[u] < 1.0 and d.cell_n[t, cell[u]] >= 2]
        for u, h, pi_d, k in units[:4] + units[-2:]:
            theta, corrected, _ = _recomputed(ctx, _reduced(ctx, d, t, h, k, pi_d), cutoff)
            expected = np.where(fixed, corrected, theta)[segs]
            got = rep[rep_offsets[segs] + u - offsets[t]]
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
            checked += 1
        for h in np.flatnonzero(d.cell_n[t] >= 2):
            mean_pi = 1.0 - d.cell_w[t, h] / d.cell_n[t, h]
            theta, corrected, _ = _recomputed(ctx, _reduced(ctx, d, t, h, None, mean_pi),
                                              cutoff)
            np.testing.assert_allclose(base[segs, h], np.where(fixed, corrected, theta)[segs],
                                       rtol=1e-9, atol=1e-12)
            checked += 1
    return checked, key


@pytest.mark.parametrize("case", ["importance", "top-up"])
def test_designs_without_anticipated_variance_take_the_correction_and_the_jackknife(case):
    (m,) = parse("nDCG")
    ctx = CASES[case]()
    d = ht_design(ctx)
    e = estimate(ctx, m)
    assert not e.anticipated and e.replicates is not None
    _, _, term = _recomputed(ctx, d, NO_CUTOFF)
    j = ctx.judgments
    positive = (j.state[d.sampled_tdi] == 2) & (j.grade[d.sampled_tdi] > 0)
    hits = np.bincount(ctx.collection.tdi_topic[d.sampled_tdi][positive],
                       minlength=ctx.n_topics)
    np.testing.assert_array_equal(e.corrected, e.known & (hits > FEW)[ctx.seg_topic])
    assert e.corrected.any()
    fixed = e.known & (hits > FEW)[ctx.seg_topic]
    expected = ndcg_replicates(ctx, d, term, NO_CUTOFF, fixed)
    np.testing.assert_array_equal(e.replicates[1], expected[1])
    own = jackknife_variance(ctx, d, expected)
    np.testing.assert_allclose(e.topic_variance[e.known], own[e.known])
    assert e.variance_spread is not None


def test_a_stratified_simple_random_sample_takes_the_anticipated_variance():
    (m,) = parse("nDCG")
    e = estimate(CASES["unretrieved"](), m)
    assert e.anticipated and e.replicates is None and e.variance_spread is None


def _twice(ctx, d, t, h, first, second):
    """``d`` less two documents of cell h of topic t (each a unit's key, or None for one of
    grade 0), the second at its probability on the once-reduced design."""
    def mean_pi(design):
        return 1.0 - design.cell_w[t, h] / design.cell_n[t, h]

    once = _reduced(ctx, d, t, h, first[0], first[1] if first[0] is not None else mean_pi(d))
    s = d.cell_n[t, h] / once.cell_n[t, h]
    pi_second = second[1] / s if second[0] is not None else mean_pi(once)
    key = second[0]
    if key is not None and key < 0 and first[0] is not None and key < first[0] < 0:
        key += 1  # the k-th outside copy is the (k-1)-th once an earlier one is gone
    return _reduced(ctx, once, t, h, key, pi_second)


@pytest.mark.parametrize("name", ["nDCG", "nDCG@10"])
def test_the_delete_two_replicates_and_their_sum_are_the_estimator_on_the_reduced_sample(name):
    """Every pair of a stratified sample's cell (two units, a unit and a document of grade 0,
    two of grade 0) is the estimator on the sample less both; the full row is the estimate; and
    the second-order sum is sum (1 - pi_i)(1 - pi_j) D_ij^2 over the cell's sampled documents,
    those of grade 0 counted one by one."""
    ctx = CASES["unretrieved"]()
    (m,) = parse(name)
    cutoff = NO_CUTOFF if m.k is None else m.k
    d = ht_design(ctx)
    fixed = np.zeros(ctx.n_seg, dtype=bool)
    fixed[::2] = True
    plain, corrected, term = _recomputed(ctx, d, cutoff)
    units = _units(ctx, d)
    offsets, cell, pi, key, _ = units
    expected = np.zeros(ctx.n_seg)
    checked = 0
    for t, topic in _each_topic(ctx, d, units, term, cutoff):
        lo, hi = offsets[t], offsets[t + 1]
        segs = np.arange(ctx.n_runs) * ctx.n_topics + t
        for h in np.flatnonzero(d.cell_n[t] >= 3):
            mine = np.flatnonzero((cell[lo:hi] == h) & (pi[lo:hi] < 1.0))
            docs = [(key[lo + u], pi[lo + u], u) for u in mine]
            zeros = int(d.cell_n[t, h]) - len(mine)
            docs += [(None, 1.0 - d.cell_w[t, h] / d.cell_n[t, h], GRADE_0)] * zeros
            full = topic.without(h, np.array([[NOTHING, NOTHING]]), fixed[segs])[:, 0]
            np.testing.assert_allclose(full, np.where(fixed, corrected, plain)[segs],
                                       rtol=1e-9, atol=1e-12)
            value = {}
            for a in range(len(docs)):
                for b in range(a, len(docs)):
                    pair = (docs[a][2], docs[b][2]) if a != b else (docs[a][2], NOTHING)
                    if pair in value:
                        continue
                    design = (_twice(ctx, d, t, h, docs[a][:2], docs[b][:2]) if a != b
                              else _reduced(ctx, d, t, h, docs[a][0], docs[a][1]))
                    p, c, _ = _recomputed(ctx, design, cutoff)
                    value[pair] = np.where(fixed, c, p)[segs]
                    got = topic.without(h, np.array([pair]), fixed[segs])[:, 0]
                    np.testing.assert_allclose(got, value[pair], rtol=1e-9, atol=1e-12)
                    checked += 1
            for a in range(len(docs)):
                for b in range(a + 1, len(docs)):
                    ua, ub = docs[a][2], docs[b][2]
                    diff = (full - value[(ua, NOTHING)] - value[(ub, NOTHING)]
                            + value[(ua, ub)])
                    expected[segs] += (1 - docs[a][1]) * (1 - docs[b][1]) * diff * diff
    assert checked >= 30
    got = ndcg_second_order(ctx, d, term, cutoff, fixed)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-15)
    assert (got > 0).sum() >= ctx.n_runs


def test_complete_judgments_leave_no_second_order_excess():
    col, frame = synthetic(7, n_topics=4, n_docs=120, depth=40)
    ctx = EvalContext(col, stratified("1-:1").sample(frame, rng=1))
    d = ht_design(ctx)
    _, _, term = _recomputed(ctx, d, NO_CUTOFF)
    got = ndcg_second_order(ctx, d, term, NO_CUTOFF, np.ones(ctx.n_seg, dtype=bool))
    assert got.shape == (ctx.n_seg,) and not got.any()
