"""The jackknife cross-moments behind ppi(AP)'s variance (``ht/jackknife.py``,
``jackknife_cross_moments``; ``ppi/ap_ratio.py``, "Variance"): two relevances of one sample
(the human grades and the labels), each sampled document deleted from both at once."""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import stratified, uniform
from irsample.measures import EvalContext, parse
from irsample.measures.ht.estimator import estimate as ht_estimate
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.ht.jackknife import jackknife_cross_moments, jackknife_variance
from irsample.measures.ppi.estimate import label_contexts

from .synthetic import moved_grade_labels
from .test_ppi_estimators import _world

DESIGNS = [uniform(0.2), stratified("1-5:1,6-:0.15"), stratified("1-10:0.5,11-:0.1")]


@pytest.fixture(scope="module")
def world():
    return _world((1, 1, 2))


def _sides(world, design, seed, share=0.3):
    collection, frame, _ = world
    ctx = EvalContext(collection, design.sample(frame, rng=seed))
    ctx_f = label_contexts(ctx, moved_grade_labels(collection, frame, seed, share))[0]
    m = parse("AP")[0]
    return ctx, ctx_f, ht_estimate(ctx, m), ht_estimate(ctx_f, m)


def _deletions(ctx, design, rep_a, rep_b):
    """Per segment and cell sampled at least twice, deletion by deletion: every sampled relevant
    document of either side is a deleted unit (its replicate on a side where it is not relevant:
    the cell's non-relevant deletion), the cell's other sampled documents share the
    non-relevant one. Yields (segment, cell, the two sides' replicates, c_h)."""
    n = design.cell_n.astype(float)
    fpc = 1.0 - np.where(n > 0, (n - design.cell_w) / np.maximum(n, 1), 0.0)
    for s in range(ctx.n_seg):
        t = ctx.seg_topic[s]
        reps = []
        for ro, rep, base, (off, cell, pi, key) in (rep_a, rep_b):
            units = {int(k): (int(c), rep[ro[s] + i])
                     for i, (k, c, p) in enumerate(zip(key[off[t]:off[t + 1]],
                                                       cell[off[t]:off[t + 1]],
                                                       pi[off[t]:off[t + 1]])) if p < 1.0}
            reps.append((units, base[s]))
        for h in range(design.n_cells):
            if n[t, h] < 2:
                continue
            keys = {k for units, _ in reps for k, (c, _) in units.items() if c == h}
            pairs = [tuple(units[k][1] if k in units else base[h] for units, base in reps)
                     for k in keys]
            pairs += [(reps[0][1][h], reps[1][1][h])] * int(n[t, h] - len(keys))
            a, b = np.array(pairs).T
            yield s, h, a, b, fpc[t, h] * (n[t, h] - 1) / n[t, h]


def _by_loop(ctx, design, rep_a, rep_b):
    """The same moments, deletion by deletion (:func:`_deletions`)."""
    out = np.zeros((3, ctx.n_seg, design.n_cells))
    for s, h, a, b, scale in _deletions(ctx, design, rep_a, rep_b):
        out[:, s, h] = scale * np.array([((a - a.mean()) * (b - b.mean())).sum(),
                                         ((b - b.mean()) ** 2).sum(),
                                         ((a - a.mean()) ** 2).sum()])
    return out


@pytest.mark.parametrize("design", DESIGNS[1:], ids=["2strata", "2strata-sampled-top"])
def test_combined_spread_matches_a_loop_over_deletions(world, design):
    """``CombinedSpread`` at weights u, w per segment and cell: with e_d = ((u a_d - w b_d) -
    mean)^2 over the cell's n deletions, var(v_h) = c_h^2 n/(n - 1) sum (e_d - ebar)^2, summed
    over cells; at u = 1, w = 0 it is ht(AP)'s own estimated variance of its jackknife
    variance."""
    ctx, _, hy, hf = _sides(world, design, 7)
    d = ht_design(ctx)
    spread = jackknife_cross_moments(ctx, d, hy.replicates, hf.replicates)[3]
    u, w = np.random.default_rng(7).uniform(0.0, 2.0, (2, ctx.n_seg, d.n_cells))
    want = np.zeros(ctx.n_seg)
    for s, h, a, b, scale in _deletions(ctx, d, hy.replicates, hf.replicates):
        c = u[s, h] * a - w[s, h] * b
        e = (c - c.mean()) ** 2
        want[s] += scale * scale * len(e) / (len(e) - 1) * ((e - e.mean()) ** 2).sum()
    assert (want > 0).sum() >= 5
    np.testing.assert_allclose(spread(u, w), want, rtol=1e-8, atol=1e-20)
    own = jackknife_variance(ctx, d, hy.replicates, spread=True)[1]
    np.testing.assert_allclose(spread(1.0, 0.0), own, rtol=1e-8, atol=1e-20)


@pytest.mark.parametrize("design", DESIGNS, ids=["uniform", "2strata", "2strata-sampled-top"])
def test_cross_moments_match_a_loop_over_deletions(world, design):
    ctx, ctx_f, hy, hf = _sides(world, design, 5)
    d = ht_design(ctx)
    got = np.array(jackknife_cross_moments(ctx, d, hy.replicates, hf.replicates)[:3])
    want = _by_loop(ctx, d, hy.replicates, hf.replicates)
    assert np.abs(want[0]).max() > 0  # the labels move with the grades somewhere
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
    # each side's variance is its own jackknife's, cell by cell summed
    np.testing.assert_allclose(got[2].sum(axis=1), jackknife_variance(ctx, d, hy.replicates),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[1].sum(axis=1), jackknife_variance(ctx_f, d, hf.replicates),
                               rtol=1e-12, atol=1e-15)
    # a covariance is bounded by its variances
    assert np.all(got[0] ** 2 <= got[1] * got[2] * (1 + 1e-9) + 1e-24)


def test_one_relevance_against_itself_is_its_jackknife(world):
    ctx, _, hy, _ = _sides(world, DESIGNS[1], 6)
    d = ht_design(ctx)
    cov, var_b, var_a, _ = jackknife_cross_moments(ctx, d, hy.replicates, hy.replicates)
    np.testing.assert_array_equal(cov, var_a)
    np.testing.assert_array_equal(var_b, var_a)
    np.testing.assert_allclose(var_a.sum(axis=1), jackknife_variance(ctx, d, hy.replicates),
                               rtol=1e-12, atol=1e-15)


def test_weights_are_fitted_on_the_other_topics():
    """``choose``: a segment's weight is the run's (or every run's) C / V_f over the other
    topics; its own topic's moments do not move it."""
    from irsample.measures.ppi.ap_ratio import choose

    rng = np.random.default_rng(1)
    n_runs, n_topics = 3, 4
    v_f = rng.uniform(0.5, 2.0, (n_runs * n_topics, 1))
    cov = v_f * rng.uniform(0.2, 0.9, v_f.shape)
    by_run = choose(cov, v_f, "run", n_runs, n_topics).reshape(n_runs, n_topics)
    by_all = choose(cov, v_f, "global", n_runs, n_topics).reshape(n_runs, n_topics)
    c, f = cov.reshape(n_runs, n_topics), v_f.reshape(n_runs, n_topics)
    for r in range(n_runs):
        for t in range(n_topics):
            other = np.arange(n_topics) != t
            assert by_run[r, t] == pytest.approx(c[r, other].sum() / f[r, other].sum())
            assert by_all[r, t] == pytest.approx(c[:, other].sum() / f[:, other].sum())
    moved = cov.copy()
    moved[0] *= 0.1  # run 0's first topic: its own moments change
    again = choose(moved, v_f, "run", n_runs, n_topics).reshape(n_runs, n_topics)
    assert again[0, 0] == pytest.approx(by_run[0, 0], rel=1e-12)
    assert not np.allclose(again[0, 1:], by_run[0, 1:])
    # a run with a single topic whose labels move the estimate: its weight falls back to the
    # others' (global), not to its own
    lone = v_f.copy()
    lone[n_topics:2 * n_topics] = 0.0
    lone[n_topics] = 1.0
    fell = choose(cov, lone, "run", n_runs, n_topics).reshape(n_runs, n_topics)
    glob = choose(cov, lone, "global", n_runs, n_topics).reshape(n_runs, n_topics)
    assert fell[1, 0] == glob[1, 0]


def _moments_used(ctx, labels):
    """ppi(AP)'s C_h and V_f,h, and both candidates (jackknife, linearised), for ``ctx``."""
    from irsample.measures.ppi.ap_ratio import strata_moments

    ctx_f = label_contexts(ctx, labels)[0]
    m = parse("AP")[0]
    hy, hf = ht_estimate(ctx, m), ht_estimate(ctx_f, m)
    v_y, v_f = hy.variance_from_sample, hf.variance_from_sample
    jack = jackknife_cross_moments(ctx, ht_design(ctx), hy.replicates, hf.replicates)[:3]
    return (hy, strata_moments(ctx, ctx_f, hy, hf, v_y, v_f, moments=jack),
            strata_moments(ctx, ctx_f, hy, hf, v_y, v_f))


def test_ppi_takes_the_moments_of_hts_own_variance(world):
    """ppi(AP)'s variance at a fixed weight is V_y - 2 lam sum C_h + lam^2 sum V_f,h with the
    jackknife's moments where ht(AP)'s interval is its sample's jackknife (an importance
    sample, or ranks judged whole beside sampled ones: no anticipated variance) and the
    linearised ones where it is the anticipated variance (a stratified simple random sample,
    whose reduction ``_steadier`` rescales)."""
    from irsample.design.sampling.active import active
    from irsample.measures.ppi.estimate import ppi_estimate

    collection, frame, _ = world
    prob = np.full(collection.n_tdi, np.nan)
    prob[frame.tdi] = np.clip(0.6 * (frame.rel >= 1) + 0.3, 0, 1)
    labels = moved_grade_labels(collection, frame, 9, 0.2)
    lam = 0.6
    for design, jackknifed in ((active(0.25, prob), True), (DESIGNS[2], False),
                               (DESIGNS[1], True)):
        ctx = EvalContext(collection, design.sample(frame, rng=9))
        hy, jack, linear = _moments_used(ctx, labels)
        assert hy.anticipated != jackknifed
        cov, vf_h = jack if jackknifed else linear
        other = (linear if jackknifed else jack)[0]
        e = ppi_estimate(ctx, labels, "AP", tuning=lam)
        used = e.lam > 0
        want = np.maximum(hy.variance_from_sample - 2 * lam * cov.sum(axis=1)
                          + lam * lam * vf_h.sum(axis=1), 0.0)
        if not jackknifed:  # on ht's anticipated scale, segment by segment: the reduction
            sample = hy.sample_variance  # scaled, an excess over ht's sample variance added,
            above = want > sample * (1 + 1e-9) + 1e-15  # the run's reduction where both are 0
            blind = ~above & (sample == 0)
            assert above[used].any() and (~above[used] & ~blind[used]).any()
            seen = (used & (sample > 0)).reshape(collection.n_runs, -1)
            run = (np.where(seen, want.reshape(seen.shape), 0).sum(axis=1)
                   / np.where(seen, sample.reshape(seen.shape), 0).sum(axis=1))
            ratio = np.where(blind, np.repeat(run, seen.shape[1]),
                             want / np.where(sample > 0, sample, 1))
            want = np.where(above, hy.variance + want - sample, hy.variance * ratio)
        np.testing.assert_allclose(e.variance[used], want[used], rtol=1e-9, atol=1e-15)
        assert not np.allclose(cov, other)  # the two sources differ on this sample


def test_labels_that_move_nothing_keep_hts_variance(world):
    """Labels relevant only in the census stratum (ranks 1-5, pi = 1) make ht on the labels
    their census value in every draw: at lambda 1 ppi(AP) is ht(AP), and its variance must be
    ht's on every segment, those whose sample sees no spread included (a topic with nothing
    relevant sampled below the census). Once, with ht's anticipated variance on this design,
    such segments took ppi's sample variance, 0: on CACM 2strata 20% with the recipe's fusion
    labels, intervals 0.42 of ht's, covering 0.20 of the run means. Ranks judged whole beside
    sampled ones now keep the sample's variance for ht(AP) too (``ht/anticipated.py``)."""
    from irsample.measures.ppi.estimate import ppi_estimate

    from .synthetic import frame_labels

    collection, frame, _ = world
    labels = frame_labels(collection, frame, np.where(frame.best_rank <= 5, frame.rel, 0))
    ctx = EvalContext(collection, DESIGNS[1].sample(frame, rng=4))
    hy = ht_estimate(ctx, parse("AP")[0])
    assert not hy.anticipated
    e = ppi_estimate(ctx, labels, "AP", tuning=1.0)
    assert (e.lam == 1).all()
    np.testing.assert_allclose(e.value, hy.value, rtol=0, atol=1e-12)
    assert (hy.variance <= 1e-30).sum() >= 3 and hy.variance.max() > 1e-3
    np.testing.assert_allclose(e.variance, hy.variance, rtol=1e-9, atol=1e-15)
