"""Differences of two runs' ht(M) means estimated on one shared sample, with their variance.

Two runs evaluated on the same judged sample share its sampling error: the variance of the
difference is not the sum of the two variances (reference-semantics §3.6). Per topic, with the
linearised numerator variables x_a, x_b of ``ht/estimator.py`` over the same sampled documents
(x = u/pi), a shared denominator Y (R or the ideal DCG: a property of the topic, not of the run)
and delta = theta~_a - theta~_b (the runs' cross-topic means),

    v(theta^_a - theta^_b) = [v(X_a) + v(X_b) - 2 c(X_a, X_b) - 2 delta (c(X_a, Y) - c(X_b, Y))
                              + delta^2 v(Y)] / Y^2,

every v and c by the cell formula of ``ht/inclusion.py``; for totals (P@k, RBP) Y = 1 and
delta = 0. For AP the variance is the stratified jackknife of the replicate differences
(``ht/jackknife.py``: both runs' ratios recomputed without each sampled document; where the
interval takes the jackknife, the Taylor-corrected ratios compared, ``ht/corrected_replicates.py``).
Topics with no sampled relevant document take the mean difference of the identified ones, with the
variances of ``imputation.impute``. P@k adds, on a topic whose difference's cell variance is
0, the unjudged documents of one run's top k that are not in the other's
(``imputation.unseen_pair_variance``, as ``unseen_variance`` does for a run). Over the Q topics
both runs answer:
diff = mean_q d_q, var = sum_q v_q / Q^2 (``variance="design"``: the topics are fixed, the
question is what judging the whole frame would show), or s_d^2 / Q (``"topics"``: topics as a
sample from a population of topics; the spread of the estimated d_q already holds the design
variance, as the between-unit variance of a two-stage sample does; Cochran §10.2), with the
design's part as its floor: var = max(s_d^2 / Q, sum_q v_q / Q^2), on the degrees of freedom of
the part taken.

Why the floor. The variance of the mean of the estimated d_q over a sample of topics is the
topics' own spread over Q plus sum_q v_q / Q^2, so the design's part alone is a lower bound for
it, and s_d^2 / Q estimates the whole only on average. The per-topic errors of a difference can
be far from symmetric: a run's twin (the same documents in another order, ``simulate
comparisons``) puts documents that only a deep, sampled rank of any run finds among its best
ranks, so its estimate jumps when one of them is drawn. On TREC-8's ``top10`` 20% samples (ranks
1-10 judged whole, the rest at 0.2) the differences' skewness over topics had median -1.4, and
a draw that missed those tails had a small spread and a mean off 0: the t over topics rejected
0.073-0.084 of the twins at 0.05 (0.31 of those whose sample skewness was above 1), with the
floor 0.016, the design comparison's own figure (REPRODUCTION.md, "The topics' variance floored
at the design's").

Blind topics (AP, nDCG on a stratified simple random sample, given the documents judged with
certainty where there are any: ``ht/anticipated.py``). On an identified topic whose open cells
hold no sampled relevant document the sample's variance of a difference is 0 (every replicate
equals the estimate), though the two runs rank unjudged documents differently there: such a
topic (a variance at most :data:`BLIND` of the model's) takes the relevance model's
anticipated variance of the difference (``ht/anticipated_terms.py``), scaled by the runs'
floor rho, and counts as known in the degrees of freedom. Where the runs' variances are the
anticipated ones the model is theirs; where they keep the sample's (a planner's top-up, or a
stratum judged whole beside sampled ones: ``anticipated.partly_certain``) it is the one their
per-topic intervals take (``ht/topic_own.py``), on a planner's top-up multiplied by the topic's
frailty (k + O_t) / (k + E_t), what its draw found against the model's expectation
(``ht/blind_topics.topic_frailty``), as the run means' blind topics are: without it the
differences' standard errors ran 6-9% above the spread of D on TREC-8's planned 20-30% samples
and the twins were rejected 0.037 and 0.034 of the time, with it 0.044 and 0.044 (sd_ratio
1.013, 0.996; ht(nDCG) 0.036 and 0.028 -> 0.045 and 0.041), and power against the complete
judgments' signs rose from 0.902 and 0.934 to 0.904 and 0.938 (REPRODUCTION.md, "compare's
blind topics: what the draw saw"). Without the model's variance there, CACM's run/twin pairs
on ``1-10:1,11-100:0.3`` samples were rejected 0.032 (AP) and 0.070 (nDCG) of the time, some
twins' standard errors near 0 (REPRODUCTION.md, "The judged-whole top: the sample's variance
instead, and the blind topics"). Where the sample sees variation its variance is kept (the
model's alone rejected 0.084-0.095 of TREC-8's twins on 2strata 10-20% samples, its standard
error 0.82-0.88 of the spread of D). Measured: REPRODUCTION.md, "compare at high judged
shares".

With ``"topics"``, topics imputed (no sampled relevant document) are copies of the mean of the
identified ones, not observations: s_d^2 is their spread over the k topics estimated or judged
whole, and the variance s_d^2 sum_q w_q^2 with the imputation's weights
(:func:`topic_sample_variance`).

Degrees of freedom ``df`` of each pair's variance: k - 1 with ``"topics"`` (the design's where
its floor is taken); with ``"design"``,
for AP, Satterthwaite's nu = 2 V^2 / var(V) from the jackknife's own spread
(``ht/jackknife.py``, "Degrees of freedom"; an identified topic whose variance the imputation
scales by a is counted with a^2 var(v_q), the imputed topics' between-topic terms as known), and
infinite for the other measures (their cell variances are used as known: a normal interval).
Why, for AP: on TREC-8's planned 10% samples the twins' z = D / se had variance 1.145 with the
mean se matching the spread of D (ratio 0.993): se moves with the draw, as it does where few
relevant documents are sampled (REPRODUCTION.md, "The jackknife's degrees of freedom"). With
the replicates of the corrected ratios the same twins reject 0.049 (0.059 before), and 0.050
on the depth-20 pool's planned 10% samples (0.069; "The jackknife of ht(AP) as corrected").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...stats.intervals import satterthwaite
from ..context import safe_divide
from ..trec_eval.precision import P
from .anticipated_terms import anticipated_pair_variance, anticipated_terms
from .blind_topics import topic_frailty
from .estimator import estimate
from .imputation import census_topics, imputation_weights, impute, unseen_pair_variance
from .inclusion import ht_design
from .jackknife import jackknife_pair_variance, scaled_spread
from .topic_own import topic_model

#: a topic's variance of a difference at most this share of the model's is blind: no variation
#: in the sample, up to rounding (module docstring)
BLIND = 1e-9


@dataclass(frozen=True)
class PairEstimates:
    """All pairs (first[k] < second[k]) of runs: mean difference, its variance, topics used."""

    first: np.ndarray
    second: np.ndarray
    diff: np.ndarray
    variance: np.ndarray
    topics: np.ndarray
    #: degrees of freedom of each variance (module docstring; inf where it is taken as known)
    df: np.ndarray


def _run_covariances(ctx, est, d, t: int) -> np.ndarray:
    """(R, R) design covariances c(X_a, X_b) of the runs' numerators in topic ``t``."""
    n_runs, n_topics = ctx.n_runs, ctx.n_topics
    lo, hi = ctx.collection.topic_doc_offsets[t], ctx.collection.topic_doc_offsets[t + 1]
    pi = d.tdi_pi[lo:hi]
    sampled = np.flatnonzero((pi > 0) & (pi < 1))
    if len(sampled) == 0:
        return np.zeros((n_runs, n_runs))
    local = np.full(hi - lo, -1, dtype=np.int64)
    local[sampled] = np.arange(len(sampled))
    x = np.zeros((n_runs, len(sampled)))
    for r in range(n_runs):
        s = r * n_topics + t
        a, b = ctx.offsets[s], ctx.offsets[s + 1]
        tdi = ctx.pos_tdi[a:b] - lo
        idx = local[tdi]
        ok = idx >= 0
        np.add.at(x[r], idx[ok], est.x[a:b][ok] / pi[tdi[ok]])
    cell = d.tdi_cell[lo:hi][sampled]
    w = 1.0 - pi[sampled]
    out = np.zeros((n_runs, n_runs))
    for h in np.unique(cell):
        n = float(d.cell_n[t, h])
        if n < 2:
            continue
        cols = cell == h
        xh, wh = x[:, cols], w[cols]
        mean = xh.sum(axis=1) / n
        xw = xh @ wh
        out += n / (n - 1.0) * ((xh * wh) @ xh.T - np.outer(mean, xw) - np.outer(xw, mean)
                                + d.cell_w[t, h] * np.outer(mean, mean))
    return out


def _model_variance(ctx, d, inner, est, first, second, near) -> np.ndarray | None:
    """(pairs, topics): the relevance model's anticipated variance of each difference on the
    topics ``near`` (0 elsewhere), scaled by the runs' floor rho (module docstring, "Blind
    topics"): the estimate's own model where its variances are the anticipated ones, the
    per-topic intervals' (``topic_own.topic_model``) where the run means keep the sample's,
    times the topic's frailty on a planner's top-up (``blind_topics.topic_frailty``); None
    where neither applies."""
    mb = est.model_bias
    if mb is not None:
        return mb.floor * anticipated_pair_variance(
            ctx, d, anticipated_terms(ctx, d, inner), first, second, where=near,
            moments=mb.moments)
    model = topic_model(ctx, inner)
    if model is None:
        return None
    return model.rho * anticipated_pair_variance(
        ctx, d, model.terms, first, second, where=near,
        moments=model.moments) * topic_frailty(ctx, d)[None, :]


def pair_estimates(ctx, inner, *, variance: str = "design") -> PairEstimates:
    """Every pair of the context's runs, for the ht estimate of ``inner`` (module docstring)."""
    if variance not in ("design", "topics"):
        raise ValueError(f"variance must be 'design' or 'topics', not {variance!r}")
    est = estimate(ctx, inner)
    d = ht_design(ctx)
    n_runs, n_topics = ctx.n_runs, ctx.n_topics
    first, second = np.triu_indices(n_runs, k=1)
    shape = (n_runs, n_topics)
    value = est.value.reshape(shape)
    present = ctx.answered
    known = est.known.reshape(shape) if est.known is not None else np.ones(shape, bool)
    centre = est.centre.reshape(shape)
    cov_y = est.cov.reshape(shape)
    var_y = est.var_den.reshape(shape)[0]
    den = est.den.reshape(shape)[0]
    both = present[first] & present[second]  # (pairs, T)
    diffs = value[first] - value[second]
    v = np.zeros(both.shape)
    ident = np.zeros(both.shape, dtype=bool)
    jack = jack_var = None
    if est.replicates is not None:  # jackknife of the differences (ht/jackknife.py)
        jack, jack_var = jackknife_pair_variance(ctx, d, est.replicates, first, second)
    for t in range(n_topics):
        if not both[:, t].any():
            continue
        ident[:, t] = known[first, t] & known[second, t]
        if jack is not None:
            v[:, t] = jack[:, t]
            continue
        c = _run_covariances(ctx, est, d, t)
        delta = centre[first, t] - centre[second, t]
        num = (c[first, first] + c[second, second] - 2.0 * c[first, second]
               - 2.0 * delta * (cov_y[first, t] - cov_y[second, t]) + delta * delta * var_y[t])
        ident[:, t] = known[first, t] & known[second, t]
        v[:, t] = safe_divide(np.maximum(num, 0.0), den[t] * den[t]) if den[t] > 0 else 0.0
    if isinstance(inner, P):  # differences P@k's cell variances cannot see (imputation.py)
        v = v + unseen_pair_variance(ctx, est.value, v, inner.k, first, second)
    q = both.sum(axis=1)
    kept = both & ident
    measured = kept
    # identified topics the sample shows no variation on take the model's variance, formed only
    # where it may be needed (a ratio's variance of a difference is below 1)
    near = kept & (v <= BLIND)
    model = None if not near.any() else _model_variance(
        ctx, d, inner, est, first, second, near)
    if model is not None:
        blind = near & (v <= BLIND * model)
        v = np.where(blind, model, v)
        measured = kept & ~blind
    unknown = both & ~ident & ~census_topics(ctx, d)[None, :]
    donors = None if est.donors is None else est.donors.reshape(shape)[first]
    own = v
    diffs, v = impute(diffs, v, kept, unknown, donors)
    mean = safe_divide(np.where(both, diffs, 0.0).sum(axis=1), q)
    var = safe_divide(np.where(both, v, 0.0).sum(axis=1), q * q)
    df = (np.full(len(first), np.inf) if jack_var is None
          else satterthwaite(np.where(both, v, 0.0), scaled_spread(
              v, own, np.where(measured, jack_var, 0.0))))
    if variance == "topics":
        spread, spread_df = topic_sample_variance(diffs, both & ~unknown, kept, unknown, donors)
        # the design's part is a floor under the topics' (module docstring): where the spread
        # falls below it, the draw missed the tails of the per-topic sampling errors
        above = ~(spread < var)  # NaN (fewer than two topics) stays NaN
        var, df = np.where(above, spread, var), np.where(above, spread_df, df)
    return PairEstimates(first, second, mean, var, q, df)


def topic_sample_variance(diffs, observed, kept, unknown, donors=None):
    """Per row, ``"topics"``' variance of the mean difference and its degrees of freedom
    (module docstring): the ``observed`` topics (estimated or judged whole) are the sample of
    topics, with spread s^2 over them (k - 1 degrees of freedom); an imputed topic is not a
    further observation but the weighted mean of the ``kept`` (identified) ones
    (``imputation.impute``: shares a_q), so the mean over the Q topics is sum w_q d_q with
    w_q = (1 + m a_q)/Q on an identified topic, 1/Q on a topic judged whole, m the imputed
    topics, and its variance s^2 sum w_q^2 (s^2 / Q without imputed topics). Counting the
    imputed copies as observations shrank s^2 and divided it by Q instead of about k: on
    Vaswani's uniform 10% samples the twins' test rejected 0.17 (REPRODUCTION.md, "The
    jackknife's degrees of freedom"). Fewer than two such topics: NaN (no spread to measure)."""
    k = observed.sum(axis=1)
    q = (observed | unknown).sum(axis=1)
    mean = safe_divide(np.where(observed, diffs, 0.0).sum(axis=1), k)
    s2 = safe_divide(np.where(observed, (diffs - mean[:, None]) ** 2, 0.0).sum(axis=1), k - 1.0)
    grow = imputation_weights(kept, unknown, donors)[1]  # 1 on a topic judged whole (share 0)
    weight = safe_divide(np.where(observed, grow, 0.0), q[:, None])
    # one topic (or none) has no spread over topics: the variance is undefined, not 0 (a
    # difference on one topic came out "decided" at p = 0; scipy.stats.ttest_rel gives NaN)
    spread = k >= 2
    return (np.where(spread, s2 * (weight * weight).sum(axis=1), np.nan),
            np.where(spread, k - 1.0, np.nan))
