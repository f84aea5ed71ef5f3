"""Degrees of freedom of a difference's variance (``ht/pairs.py``, ``ht/jackknife.py``) and the t
interval ``compare`` builds on them.

- Satterthwaite's nu = 2 (sum v)^2 / sum var(v) by hand, with the imputation's scaling of a
  topic's variance (a^2 var(v) for v scaled by a) and infinity where nothing is estimated.
- The jackknife's estimated variance of each topic's variance, recomputed here from the
  replicates with loops over the deleted units.
- On samples: finite for ht(AP)'s design variance, infinite for the measures whose cell
  variances are taken as known, Q - 1 for the topics' variance; complete judgments give none.
- ``compare_collection``'s interval and p-value are the t's on those degrees of freedom.
- The topics' variance with imputed topics: by hand, and equal to s^2 / Q without them.
- The design's variance is a floor under the topics' variance, with its degrees of freedom.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from irsample.comparison import compare_collection
from irsample.design import uniform
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.ht.jackknife import jackknife_pair_variance, scaled_spread
from irsample.measures.ht.pairs import pair_estimates, topic_sample_variance
from irsample.stats.intervals import satterthwaite

from .test_ht_estimators import synthetic


def test_satterthwaite_by_hand():
    v = np.array([[1.0, 1.0], [2.0, 1.0]])
    own = np.array([[1.0, 1.0], [1.0, 1.0]])  # the second row's first topic scaled by 2
    w = np.array([[0.2, 0.2], [0.2, 0.2]])
    nu = satterthwaite(v, scaled_spread(v, own, w))
    assert nu[0] == pytest.approx(2 * 4 / 0.4)
    assert nu[1] == pytest.approx(2 * 9 / (0.2 * 4 + 0.2))
    assert np.isinf(satterthwaite(v, np.zeros_like(w))).all()


def _sampled_context(seed=3, rate=0.2):
    col, frame = synthetic(seed, n_topics=6, n_docs=300, depth=100, grades=(0, 0, 0, 1, 1, 2))
    return col, frame, EvalContext(col, uniform(rate).sample(frame, rng=seed))


def test_jackknife_spread_variance_by_hand():
    """Per topic and cell, with e_d = (theta_(-d) - mean)^2 over the cell's n deletions (its
    sampled relevant documents, and n - u copies of the non-relevant deletion), c = (1 - f)(n -
    1)/n: v = c sum e_d and var(v) = c^2 n/(n - 1) sum (e_d - ebar)^2."""
    col, _, ctx = _sampled_context()
    (m,) = parse("AP")
    est = estimate(ctx, m)
    d = ht_design(ctx)
    first, second = np.array([0, 1]), np.array([2, 3])
    v, w = jackknife_pair_variance(ctx, d, est.replicates, first, second)
    rep_offsets, rep, base, (offsets, cell, pi, _) = est.replicates
    n = d.cell_n.astype(float)
    fpc = 1.0 - np.where(n > 0, (n - d.cell_w) / np.where(n > 0, n, 1.0), 0.0)
    nt = col.n_topics
    checked = 0
    for k, (a, b) in enumerate(zip(first, second)):
        for t in range(nt):
            sa, sb = a * nt + t, b * nt + t
            units_a = rep[rep_offsets[sa]:rep_offsets[sa + 1]]
            units_b = rep[rep_offsets[sb]:rep_offsets[sb + 1]]
            cells = cell[offsets[t]:offsets[t + 1]]
            certain = pi[offsets[t]:offsets[t + 1]] >= 1.0
            v_t = w_t = 0.0
            for h in range(d.n_cells):
                nh = n[t, h]
                if nh < 2:
                    continue
                rel = [units_a[i] - units_b[i] for i in range(len(cells))
                       if cells[i] == h and not certain[i]]
                deletions = rel + [base[sa, h] - base[sb, h]] * int(nh - len(rel))
                e = (np.array(deletions) - np.mean(deletions)) ** 2
                c = fpc[t, h] * (nh - 1) / nh
                v_t += c * e.sum()
                w_t += c * c * nh / (nh - 1) * ((e - e.mean()) ** 2).sum()
            assert v[k, t] == pytest.approx(v_t, rel=1e-9, abs=1e-18)
            assert w[k, t] == pytest.approx(w_t, rel=1e-9, abs=1e-24)
            checked += w_t > 0
    assert checked >= 4


def test_degrees_of_freedom_by_measure_and_variance():
    col, frame, ctx = _sampled_context()
    ap, ndcg, p10 = (parse(x)[0] for x in ("AP", "nDCG", "P@10"))
    design = pair_estimates(ctx, ap)
    assert np.all(design.df >= 1.0) and np.isfinite(design.df).any()
    for inner in (ndcg, p10):
        assert np.isinf(pair_estimates(ctx, inner).df).all()
    topics = pair_estimates(ctx, ap, variance="topics")
    spread = topics.variance > design.variance  # the others take the design's floor
    assert np.all((topics.df[spread] >= 1) & (topics.df[spread] <= topics.topics[spread] - 1))
    np.testing.assert_array_equal(topics.df[~spread], design.df[~spread])
    complete = pair_estimates(EvalContext(col, frame.judgments()), ap)
    assert np.all(complete.variance == 0) and np.isinf(complete.df).all()


def test_compare_intervals_are_t_intervals_on_those_degrees_of_freedom():
    col, frame = synthetic(3, n_topics=6, n_docs=300, depth=100, grades=(0, 0, 0, 1, 1, 2))
    judged = uniform(0.2).sample(frame, rng=3)
    table = compare_collection(col, judged, "ht(AP)", correction="none")
    ok = table.se > 0
    assert ok.any() and np.isfinite(table.df[ok]).all()
    quantile = stats.t.ppf(0.975, table.df[ok])
    np.testing.assert_allclose((table.high - table["diff"])[ok], quantile * table.se[ok])
    np.testing.assert_allclose(table.p[ok],
                               2 * stats.t.sf(np.abs(table["diff"] / table.se)[ok],
                                              table.df[ok]))
    # wider than the normal interval the variance alone would give
    assert np.all(quantile > stats.norm.ppf(0.975))
    nd = compare_collection(col, judged, "ht(nDCG)", correction="none")
    assert np.isinf(nd.df).all()
    np.testing.assert_allclose((nd.high - nd["diff"]), stats.norm.ppf(0.975) * nd.se)


def test_topics_variance_counts_imputed_topics_as_copies_of_the_mean():
    diffs = np.array([[0.1, 0.3, -0.2, 0.4, 0.0, 0.0],
                      [0.1, 0.3, -0.2, 0.4, 0.05, 0.2]])
    observed = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)
    unknown = ~observed
    kept = observed.copy()
    var, df = topic_sample_variance(diffs, observed, kept, unknown)
    d = diffs[0, :4]
    # the mean over 6 topics, two imputed by the mean of 4: each observed topic weighs 1/4
    assert var[0] == pytest.approx(d.var(ddof=1) / 4) and df[0] == 3
    assert var[1] == pytest.approx(diffs[1].var(ddof=1) / 6) and df[1] == 5
    # donors' weights (nDCG's imputation): w_q = (1 + m a_q) / Q
    donors = np.array([[1.0, 1.0, 2.0, 0.0, 0.0, 0.0]] * 2)
    kept2 = observed & (donors > 0)
    var2, _ = topic_sample_variance(diffs, observed, kept2, unknown, donors)
    a = np.array([0.25, 0.25, 0.5, 0.0])
    w = np.where(kept2[0, :4], 1 + 2 * a, 1.0) / 6
    assert var2[0] == pytest.approx(d.var(ddof=1) * (w * w).sum())


@pytest.mark.parametrize("seed", [3, 5])
@pytest.mark.parametrize("name", ["AP", "nDCG", "P@10"])
def test_topics_variance_never_falls_below_the_designs(seed, name):
    """The spread over topics holds the design's variance and the topics' own; a draw whose
    spread falls below the design's part alone (the per-topic errors' tails missed) takes that
    part, with its degrees of freedom (``ht/pairs.py``); the difference is the same."""
    _, _, ctx = _sampled_context(seed)
    (inner,) = parse(name)
    design = pair_estimates(ctx, inner)
    topics = pair_estimates(ctx, inner, variance="topics")
    np.testing.assert_array_equal(topics.diff, design.diff)
    assert np.all(topics.variance >= design.variance)
    floored = topics.variance == design.variance
    # the fixture has both kinds (seed 3: 1, 2 and 5 of 6 pairs floored; seed 5: 3 of 6)
    assert floored.any() and (~floored).any()
    np.testing.assert_array_equal(topics.df[floored], design.df[floored])
    assert np.all(topics.df[~floored] == topics.topics[~floored] - 1)
