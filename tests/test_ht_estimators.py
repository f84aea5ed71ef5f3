"""Design-based estimators ht(M) (irsample/measures/ht/estimator.py) on synthetic pools.

- Complete judgments (every frame document judged, pi = 1): ht(M) equals M exactly with variance
  0, for every M, whatever stratification the judgments carry.
- Monte Carlo (2,000 draws per design): every Horvitz-Thompson term (R^, AP's numerator N^,
  DCG^, P@k^, RBP^) averages to its frame value within 3 standard errors, for uniform,
  stratified (with an exhaustive stratum), budgeted, importance (PPS) and topped-up (planned,
  with documents judged before) designs; the ratio
  estimators' bias is printed and below 0.25 SE of the estimate at 10%.
- Parsing, pairs (the difference's variance vs the Monte-Carlo spread), Holm and BH.
"""

from __future__ import annotations

import numpy as np
import pytest

from irsample.design import Budget, SamplingFrame, Stratified, importance, parse_strata, uniform
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels
from irsample.measures import parse, parse_all
from irsample.measures.context import EvalContext
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.measure import HT
from irsample.measures.ht.pairs import pair_estimates
from irsample.model import Collection
from irsample.stats.multiple import benjamini_hochberg, holm

from .synthetic import random_judgments

MEASURES = [
    "AP",
    "AP@20",
    "nDCG",
    "nDCG@10",
    "P@10",
    "P@5",
    "Rprec",
    "RBP(p=0.8)",
    "R@50",
    "num_rel",
]


def synthetic(seed=0, n_topics=6, n_docs=150, n_runs=4, depth=60, grades=(0, 0, 0, 0, 1, 1, 2)):
    """A collection and its frame: the qrels documents some run retrieved (importance sampling
    leaves the others outside its design)."""
    qrels, runs = random_judgments(seed, n_topics=n_topics, n_docs=n_docs, n_runs=n_runs,
                                   depth=depth, grades=grades)
    table = load_qrels(qrels)
    col = Collection.build(runs, [table])
    full = SamplingFrame.from_qrels(col, table)
    keep = np.isfinite(full.best_rank)
    return col, SamplingFrame.from_arrays(col, full.topic[keep], full.tdi[keep], full.rel[keep])


DESIGNS = {
    "uniform": uniform(0.1),
    "stratified": Stratified(parse_strata("1-5:1,6-30:0.3,31-:0.05")),
    "budget": Stratified(parse_strata("1-10:0.5,11-:0.1"), Budget(90)),
    "importance": importance(0.1),
}


def test_names_parse_and_print():
    for text, name in [
        ("ht(AP)", "ht(AP)"),
        ("ht(nDCG@10)", "ht(nDCG@10)"),
        ("ht(P@10)", "ht(P@10)"),
        ("ht(RBP(p=0.9))", "ht(RBP(p=0.9))"),
        ("ht(map)", "ht(AP)"),
        ("ht(R@100)", "ht(R@100)"),
    ]:
        (m,) = parse(text)
        assert isinstance(m, HT) and m.name == name
        assert parse(m.name) == [m]
    for bad in ("ht(bpref)", "ht()", "ht(P)"):
        with pytest.raises(MeasureError):
            parse(bad)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("design", [None, "stratified"])
def test_complete_judgments_equal_the_measure(seed, design):
    col, frame = synthetic(seed)
    judgments = frame.judgments()
    if design is not None:  # every document judged, in strata of rate 1: still pi = 1
        spec = Stratified(parse_strata("1-5:1,6-30:1,31-:1"))
        judgments = spec.sample(frame, rng=seed)
    names = MEASURES + [f"ht({m})" for m in MEASURES]
    ev = evaluate_collection(col, judgments, parse_all(names), ci=0.95)
    index = {m.name: j for j, m in enumerate(ev.measures)}
    for m in ev.measures:
        if isinstance(m, HT):
            ref = index[m.inner.name]
            np.testing.assert_allclose(
                ev.values[..., index[m.name]], ev.values[..., ref], rtol=1e-12, atol=1e-14
            )
            np.testing.assert_allclose(ev.summary[:, index[m.name]], ev.summary[:, ref], rtol=1e-12)
            assert np.nanmax(np.abs(ev.variance[..., index[m.name]])) == 0.0


def _monte_carlo(col, frame, design, inner, draws, seed):
    parts = []
    for child in np.random.SeedSequence(seed).spawn(draws):
        e = estimate(
            EvalContext(col, design.sample(frame, rng=np.random.default_rng(child))), inner
        )
        parts.append((e.num, e.den, e.plain, e.value, e.variance))
    return [np.array(p) for p in zip(*parts)]


@pytest.mark.montecarlo
@pytest.mark.parametrize("name", list(DESIGNS))
def test_horvitz_thompson_terms_are_unbiased(name, without_relevance_model):
    col, frame = synthetic(3, n_topics=4)
    truth_ctx = EvalContext(col, frame.judgments())
    design = DESIGNS[name]
    for inner in ("AP", "nDCG@10", "P@10", "RBP(p=0.8)", "num_rel"):
        (m,) = parse(inner)
        true = estimate(truth_ctx, m)
        num, den, *_ = _monte_carlo(col, frame, design, m, 2000, 7)
        for got, want in ((num, true.num), (den, true.den)):
            se = got.std(axis=0) / np.sqrt(len(got))
            if inner == "nDCG@10" and got is den:
                continue  # the ideal DCG is a function of R^, not a linear total
            exact = se < 1e-9
            assert np.all(np.abs(got.mean(axis=0) - want)[exact] < 1e-9)
            z = np.abs(got.mean(axis=0) - want)[~exact] / se[~exact]
            assert z.max(initial=0.0) < 3.0, (inner, name, z.max(initial=0.0))


@pytest.mark.montecarlo
def test_ratio_bias_is_small_against_its_standard_error_at_ten_percent(without_relevance_model):
    """A pool where every topic has many relevant documents: the bias-corrected ratios' bias
    is below 0.25 SE (printed with -s)."""
    col, frame = synthetic(5, n_topics=4, n_docs=400, depth=150, grades=(0, 0, 1, 1, 2))
    truth_ctx = EvalContext(col, frame.judgments())
    for inner in ("AP", "R@50"):
        (m,) = parse(inner)
        true = estimate(truth_ctx, m).value
        *_, plain, value, variance = _monte_carlo(col, frame, uniform(0.1), m, 2000, 11)
        sd = value.std(axis=0)
        bias = value.mean(axis=0) - true
        print(
            inner,
            "bias/SE corrected",
            np.round(bias / sd, 3),
            "plain",
            np.round((plain.mean(0) - true) / plain.std(0), 3),
        )
        assert np.max(np.abs(bias) / sd) < 0.25


def test_ndcg_removes_its_ratio_bias_where_the_sample_is_informative():
    """ht(nDCG) removes the ratio's second-order bias, theta^ - (theta^ v(Y^) - c(X^, Y^)) / Y^^2,
    on every design (where the anticipated variance does not apply, importance samples and a
    design that judges ranks whole beside sampled ones, the interval takes the jackknife of the
    corrected ratio, ``ht/ndcg_replicates.py``), on the topics whose sample holds more than
    ``reliability.FEW`` documents of positive grade (``Estimate.corrected``); the other
    identified topics keep the plain ratio."""
    from irsample.measures.reliability import FEW
    from irsample.model import JUDGED

    col, frame = synthetic(0, n_topics=8, grades=(0,) * 6 + (1, 2))
    (m,) = parse("nDCG")
    kinds = set()
    for name, design in DESIGNS.items():
        ctx = EvalContext(col, design.sample(frame, rng=np.random.default_rng(3)))
        e = estimate(ctx, m)
        j = ctx.judgments
        hits = np.bincount(col.tdi_topic[(j.state == JUDGED) & (j.grade > 0)],
                           minlength=ctx.n_topics)[ctx.seg_topic]
        stratified = name not in ("importance", "stratified")  # ranks 1-5 judged whole
        assert e.anticipated == stratified
        expected = e.known & (hits > FEW)
        np.testing.assert_array_equal(e.corrected, expected)
        assert (e.replicates is None) == stratified
        kinds |= {bool(x) for x in expected[e.known]}
        y = np.where(e.den > 0, e.den, 1.0)
        fixed = e.plain - (e.plain * e.var_den - e.cov) / y**2
        np.testing.assert_allclose(e.value[e.known],
                                   np.where(expected, fixed, e.plain)[e.known], rtol=1e-12)
        np.testing.assert_array_equal(HT("nDCG").corrected(ctx), expected)
    assert kinds == {True, False}  # both kinds of identified topic were drawn


def test_pair_variance_matches_the_spread_of_differences():
    col, frame = synthetic(4, n_topics=5, n_docs=300, depth=120, grades=(0, 0, 1, 1, 2))
    (m,) = parse("P@10")
    diffs, variances = [], []
    for child in np.random.SeedSequence(3).spawn(400):
        ctx = EvalContext(col, uniform(0.3).sample(frame, rng=np.random.default_rng(child)))
        pe = pair_estimates(ctx, m)
        diffs.append(pe.diff)
        variances.append(pe.variance)
    ratio = np.sqrt(np.mean(variances, axis=0)) / np.std(diffs, axis=0)
    assert np.all((ratio > 0.8) & (ratio < 1.25)), ratio


def test_holm_and_benjamini_hochberg():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(benjamini_hochberg(p), [0.02, 0.04, 0.04, 0.02])


@pytest.mark.montecarlo
def test_topped_up_design_terms_are_unbiased_given_the_documents_judged_before(
        without_relevance_model):
    """A planned top-up (design/sampling/allocated.py) records pi given the documents judged
    before: 1 for them, j/(N - m) for the rest of a cell. The HT terms, AP's pair terms across
    a cell that mixes certain and sampled documents included, average to the frame values."""
    from irsample.design.planner.sequential import judged_keys
    from irsample.design.sampling.allocated import allocated

    col, frame = synthetic(3, n_topics=4)
    edges = (1, 6, 21)
    stratum = np.searchsorted(np.array(edges), frame.best_rank, side="right") - 1
    before = np.arange(len(frame.topic)) % 5 == 0
    m = np.zeros((col.n_topics, len(edges)), dtype=np.int64)
    np.add.at(m, (frame.topic[before], stratum[before]), 1)
    take = {col.topics[t]: [int(k) for k in m[t] + 3] for t in range(col.n_topics)}
    design = allocated(edges, None, take, before=judged_keys(frame, before))
    truth_ctx = EvalContext(col, frame.judgments())
    for inner in ("AP", "nDCG@10", "P@10", "num_rel"):
        (meas,) = parse(inner)
        true = estimate(truth_ctx, meas)
        num, den, *_ = _monte_carlo(col, frame, design, meas, 2000, 5)
        for got, want in ((num, true.num), (den, true.den)):
            if inner == "nDCG@10" and got is den:
                continue  # the ideal DCG is a function of R^, not a linear total
            se = got.std(axis=0) / np.sqrt(len(got))
            exact = se < 1e-9
            assert np.all(np.abs(got.mean(axis=0) - want)[exact] < 1e-9)
            z = np.abs(got.mean(axis=0) - want)[~exact] / se[~exact]
            assert z.max(initial=0.0) < 3.0, (inner, z.max(initial=0.0))


def test_imputation_with_donor_weights():
    """``impute`` with equal donor weights is the plain mean with variances (1 + m/k)^2 v_q and
    tau^2 (1 + m/k); with 0/1 weights the imputed value is the donors' mean and only donors
    carry the extra weight (1 + m/p)^2 (p donors)."""
    from irsample.measures.ht.imputation import impute

    plain = np.array([[0.2, 0.4, 0.9, 0.0, 0.0]])
    own = np.array([[0.01, 0.02, 0.03, 0.0, 0.0]])
    known = np.array([[True, True, True, False, False]])
    missing = ~known
    value, var = impute(plain, own, known, missing)
    value1, var1 = impute(plain, own, known, missing, np.ones_like(plain))
    assert np.allclose(value, value1) and np.allclose(var, var1)
    mean, k, m = 0.5, 3, 2
    tau2 = max(np.var([0.2, 0.4, 0.9], ddof=1) - 0.02, 0.0)
    assert np.allclose(value[0, 3:], mean)
    assert np.allclose(var[0, :3], own[0, :3] * (1 + m / k) ** 2)
    assert np.allclose(var[0, 3:], tau2 * (1 + m / k))
    donors = np.array([[1.0, 1.0, 0.0, 0.0, 0.0]])
    value2, var2 = impute(plain, own, known, missing, donors)
    assert np.allclose(value2[0, 3:], 0.3)
    assert np.allclose(var2[0, :2], own[0, :2] * (1 + m / 2) ** 2)
    assert var2[0, 2] == own[0, 2]
    tau2 = max(np.var([0.2, 0.4], ddof=1) - 0.015, 0.0)
    assert np.allclose(var2[0, 3:], tau2 * (1 + m / 2))


def _topped_up(col, frame, share_before, extra, seed=3):
    """A planned top-up: ``share_before`` of the frame judged before (certain), then ``extra``
    more documents per cell (ranks 1-10, 11-30, 31-) drawn from the rest."""
    from irsample.design.planner.sequential import judged_keys
    from irsample.design.sampling.allocated import allocated

    edges = (1, 11, 31)
    stratum = np.searchsorted(np.array(edges), frame.best_rank, side="right") - 1
    before = np.random.default_rng(seed).random(len(frame.topic)) < share_before
    m = np.zeros((col.n_topics, len(edges)), dtype=np.int64)
    np.add.at(m, (frame.topic[before], stratum[before]), 1)
    take = {col.topics[t]: [int(k) for k in m[t] + extra] for t in range(col.n_topics)}
    return allocated(edges, None, take, before=judged_keys(frame, before))


def test_p_at_k_unseen_variance_by_hand(monkeypatch):
    """ht(P@k)'s variance = the cell formula's + u p (1 - p) / k^2 on every topic whose cell
    variance is 0 while u > 0 of the run's top k are pooled but unjudged (p: the run's mean
    estimate over its topics), recomputed here from the rankings and the judgments."""
    import irsample.measures.ht.estimator as ht_estimator
    from irsample.model import POOLED

    col, frame = synthetic(5, n_topics=20, n_docs=200, n_runs=4, depth=60)
    ctx = EvalContext(col, _topped_up(col, frame, 0.5, 4).sample(frame, rng=1))
    (m,) = parse("P@10")
    # the sample's own cell variance, the one that can be 0 (the anticipated one, which a
    # top-up also takes, reads the model's probabilities of the unjudged documents)
    monkeypatch.setattr(ht_estimator, "grade_probabilities", lambda ctx, d: None)
    full = ht_estimator._estimate(ctx, m)
    monkeypatch.setattr(ht_estimator, "unseen_variance", lambda ctx, v, var, k: 0.0 * var)
    cell = ht_estimator._estimate(ctx, m)
    np.testing.assert_array_equal(full.value, cell.value)
    value = cell.value.reshape(col.n_runs, col.n_topics)
    state = ctx.judgments.state
    expected = np.zeros(ctx.n_seg)
    for r in range(col.n_runs):
        p = value[r].mean()  # every run answers every topic here
        for t in range(col.n_topics):
            s = r * col.n_topics + t
            top = ctx.pos_tdi[ctx.offsets[s]:ctx.offsets[s + 1]][:10]
            u = int((state[top] == POOLED).sum())
            if cell.variance[s] == 0 and u > 0:
                expected[s] = u * p * (1 - p) / 100
    assert (expected > 0).sum() >= 10  # the case arises
    np.testing.assert_allclose(full.variance - cell.variance, expected, rtol=1e-12, atol=0)


@pytest.mark.montecarlo
def test_p_at_k_intervals_see_the_unjudged_top_k():
    """A top-up of 4 documents per cell after half the frame was judged: without the unseen
    term 46% of the (run, topic) estimates had variance 0 and an error (a relevant document
    missed or over-weighted); with it none, and the run means' 95% intervals cover the frame
    truth (400 draws)."""
    col, frame = synthetic(5, n_topics=20, n_docs=200, n_runs=4, depth=60)
    design = _topped_up(col, frame, 0.5, 4)
    (m,) = parse("P@10")
    truth = estimate(EvalContext(col, frame.judgments()), m).value.reshape(col.n_runs, -1)
    covered, blind = [], []
    for child in np.random.SeedSequence(11).spawn(400):
        e = estimate(EvalContext(col, design.sample(frame, rng=np.random.default_rng(child))), m)
        value = e.value.reshape(truth.shape)
        variance = e.variance.reshape(truth.shape)
        error = (value - truth).mean(axis=1)
        se = np.sqrt(variance.sum(axis=1)) / truth.shape[1]
        covered.append(np.abs(error) <= 1.96 * se + 1e-12)
        blind.append((variance == 0) & (np.abs(value - truth) > 1e-12))
    assert not np.any(blind)
    assert np.mean(covered) >= 0.94, np.mean(covered)


@pytest.mark.montecarlo
def test_p_at_k_pairs_see_what_only_one_run_leaves_unjudged(monkeypatch):
    """The pairs' P@k variance adds, where a topic's cell variance of the difference is 0, p_a
    (1 - p_a) / k^2 for each unjudged document in run a's top k and not in run b's (and the
    same for b): recomputed here with sets; and the differences' 95% intervals cover the frame's
    differences over 400 draws of the topped-up design (0.956; 0.949 without the term)."""
    import irsample.measures.ht.pairs as ht_pairs
    from irsample.model import POOLED

    col, frame = synthetic(5, n_topics=20, n_docs=200, n_runs=4, depth=60)
    ctx = EvalContext(col, _topped_up(col, frame, 0.5, 4).sample(frame, rng=1))
    (m,) = parse("P@10")
    full = pair_estimates(ctx, m)
    seen = {}
    monkeypatch.setattr(ht_pairs, "unseen_pair_variance",
                        lambda ctx, value, v, k, a, b: seen.setdefault("v", v.copy()) * 0.0)
    cell = pair_estimates(ctx, m)
    monkeypatch.undo()
    value = estimate(ctx, m).value.reshape(col.n_runs, col.n_topics)
    state = ctx.judgments.state
    unjudged = {}
    for r in range(col.n_runs):
        for t in range(col.n_topics):
            s = r * col.n_topics + t
            top = ctx.pos_tdi[ctx.offsets[s]:ctx.offsets[s + 1]][:10]
            unjudged[r, t] = {int(d) for d in top if state[d] == POOLED}
    expected = np.zeros(seen["v"].shape)
    for i, (a, b) in enumerate(zip(full.first, full.second)):
        pa, pb = value[a].mean(), value[b].mean()
        for t in range(col.n_topics):
            if seen["v"][i, t] == 0:
                expected[i, t] = (len(unjudged[a, t] - unjudged[b, t]) * pa * (1 - pa)
                                  + len(unjudged[b, t] - unjudged[a, t]) * pb * (1 - pb)) / 100
    assert (expected > 0).sum() >= 10
    q = col.n_topics
    np.testing.assert_allclose(full.variance - cell.variance, expected.sum(axis=1) / q ** 2,
                               rtol=1e-10, atol=1e-15)
    truth = estimate(EvalContext(col, frame.judgments()), m).value.reshape(col.n_runs, -1)
    first, second = full.first, full.second
    true_diff = (truth[first] - truth[second]).mean(axis=1)
    covered = []
    design = _topped_up(col, frame, 0.5, 4)
    for child in np.random.SeedSequence(12).spawn(400):
        pairs = pair_estimates(EvalContext(
            col, design.sample(frame, rng=np.random.default_rng(child))), m)
        covered.append(np.abs(pairs.diff - true_diff) <= 1.96 * np.sqrt(pairs.variance) + 1e-12)
    assert np.mean(covered) >= 0.94, np.mean(covered)
