"""Topics whose sample identifies no ratio: which they are, and the mean over topics with them
imputed, with a variance that stays honest (``estimator.py``, module docstring, "Sparse topics").

A topic of a run is *known* when its sample holds a relevant document (Y^ > 0), *missing* when
it does not and the topic was not judged whole (:func:`census_topics`); missing topics take the
weighted mean of the known ones (:func:`impute`). Used by ht(M) and by ppi(nDCG)'s control
variate (``ppi/control_variate.py``), which keeps the humans' imputation structure. A P@k
topic whose sample shows no variation in the run's top k gets the variance of its unjudged
positions (:func:`unseen_variance`).
"""

from __future__ import annotations

import numpy as np

from ...model import POOLED
from ..context import safe_divide
from .inclusion import HTDesign


def topic_states(ctx, d: HTDesign, y) -> tuple[np.ndarray, np.ndarray]:
    """Per run x topic, from the segments' estimated denominators ``y``: ``known`` (the topic
    is in the judgments, the run ranks documents for it and its ratio is identified, Y^ > 0)
    and ``missing`` (the same but not identified and not judged whole: imputed)."""
    shape = (ctx.n_runs, ctx.n_topics)
    present = ctx.answered
    known = present & (np.asarray(y) > 0).reshape(shape)
    missing = present & ~known & ~census_topics(ctx, d)[ctx.seg_topic].reshape(shape)
    return known, missing


def linearised_variance(var_x, cov, var_y, centre, y) -> np.ndarray:
    """An identified topic's ratio variance linearised at ``centre``:
    max(v(X^) - 2 c C + c^2 v(Y^), 0) / Y^2, 0 where Y^ <= 0."""
    y = np.asarray(y, dtype=np.float64)
    v = np.maximum(var_x - 2.0 * centre * cov + centre * centre * var_y, 0.0)
    return np.where(y > 0, v / np.where(y > 0, y * y, 1.0), 0.0)


def imputation_weights(known, missing, donors=None):
    """(runs x topics) twice, for :func:`impute`: each ``known`` topic's share a_q = w_q /
    sum_I w of the imputed value (``donors`` w, default 1 on every known topic) and its weight
    1 + m a_q in the sum over topics (itself and its part of the m ``missing`` ones)."""
    w = np.where(known, 1.0 if donors is None else donors, 0.0)
    share = safe_divide(w, w.sum(axis=1)[:, None])
    return share, 1.0 + missing.sum(axis=1)[:, None] * share


def impute(plain, own, known, missing, donors=None):
    """Values and variances (runs x topics) with the ``missing`` topics imputed (module
    docstring, "Sparse topics"). The imputed value is the weighted mean of the identified
    values, mean = sum_I a_q theta^_q with shares a_q = w_q / sum_I w (``donors`` w, default 1
    on every identified topic). With m missing topics of a run, s^2 the weighted spread of the
    identified values (n_eff = 1 / sum a_q^2 of them: s^2 = n_eff/(n_eff - 1) sum a_q
    (theta^_q - mean)^2), vbar = sum a_q v_q their mean variance and tau^2 = max(s^2 - vbar, 0)
    the topic-to-topic variance of the truths, the sum over topics has error
    sum_I (1 + m a_q) e_q + (m sum_I a_q theta_q - sum_M theta_q) (e_q: the identified topics'
    sampling errors), of variance sum_I (1 + m a_q)^2 v_q + m (1 + m sum a_q^2) tau^2, spread as
    v_q (1 + m a_q)^2 on each identified topic and tau^2 (1 + m sum a_q^2) on each imputed one.
    With equal weights (a_q = 1/k) these are (1 + m/k)^2 v_q and tau^2 (1 + m/k)."""
    share, grow = imputation_weights(known, missing, donors)
    m = missing.sum(axis=1)[:, None]
    mean = (share * plain).sum(axis=1)
    concentration = (share * share).sum(axis=1)
    n_eff = safe_divide(1.0, concentration)
    spread = safe_divide((share * (plain - mean[:, None]) ** 2).sum(axis=1) * n_eff, n_eff - 1.0)
    vbar = (share * own).sum(axis=1)
    tau2 = np.maximum(spread - vbar, 0.0)[:, None]
    value = np.where(missing, mean[:, None], np.where(known, plain, 0.0))
    var = np.where(known, own * grow * grow,
                   np.where(missing, tau2 * (1.0 + m * concentration[:, None]), 0.0))
    return value, var




def census_topics(ctx, d: HTDesign) -> np.ndarray:
    """Per topic: whether every frame document was judged with certainty (no sampling error);
    cached per context and design (every ratio measure asks)."""
    def build():
        j = ctx.judgments
        uncertain = (j.state == POOLED) | ((d.tdi_pi > 0) & (d.tdi_pi < 1.0))
        return np.bincount(ctx.collection.tdi_topic[uncertain], minlength=ctx.n_topics) == 0

    return ctx.shared(("ht_census_topics", d), build)


def unseen_variance(ctx, value, variance, k: int) -> np.ndarray:
    """Per segment, the variance a P@k estimate's design variance cannot see: where a topic's
    estimated variance is 0 while u of the run's top k positions hold pooled documents not
    judged, u p (1 - p) / k^2 (each such position relevant with the run's estimated precision p,
    its mean ``value`` over the topics it answers); 0 elsewhere.

    The cell variance of a domain total (the run's top k within a stratum) is estimated from the
    sampled members of the domain; when they agree (all non-relevant, typically) it is 0 though
    the unjudged ones are unknown, and the variance estimator, unbiased on average, is 0 in most
    draws and large in a few. On TREC-8 under the planned design at 30% of the pool
    (``benchmarks/ht_blind_topics.py``, 40 draws) 17% of the (run, topic) estimates were blind and
    2% blind and wrong, with 30% of the squared error, and the 95% intervals of the run means
    covered 0.882 of the truths; with this term 0.985 (``simulate ci-coverage``, 100 trials:
    0.881 -> 0.982), while on uniform and two-strata samples of TREC-8 and TREC-COVID round 5
    (10-30%) the intervals widened 1-4%."""
    if len(ctx.pos_tdi) == 0:
        return np.zeros(ctx.n_seg)
    open_docs, present, spread = _unjudged_top_k(ctx, value, k)
    open_positions = (open_docs >= 0).sum(axis=1)
    blind = present.ravel() & (variance <= 0.0) & (open_positions > 0)
    return np.where(blind, open_positions * np.repeat(spread, ctx.n_topics) / (k * k), 0.0)


def unseen_pair_variance(ctx, value, variance, k: int, first, second) -> np.ndarray:
    """(pairs, topics): :func:`unseen_variance` for the differences of the runs ``first[i]`` and
    ``second[i]``, where a topic's cell variance of the difference (``variance``) is 0. An
    unjudged document in both runs' top k adds the same to both and cancels; each one in only
    run a's adds p_a (1 - p_a) / k^2, in only run b's p_b (1 - p_b) / k^2."""
    first, second = np.asarray(first), np.asarray(second)
    out = np.zeros((len(first), ctx.n_topics))
    if len(ctx.pos_tdi) == 0 or len(first) == 0:
        return out
    open_docs, present, spread = _unjudged_top_k(ctx, value, k)
    open_docs = open_docs.reshape(ctx.n_runs, ctx.n_topics, k)
    for t in range(ctx.n_topics):
        docs = open_docs[:, t, :]
        ids, at = np.unique(docs[docs >= 0], return_inverse=True)
        if len(ids) == 0:
            continue
        has = np.zeros((ctx.n_runs, len(ids)))
        rows = np.nonzero(docs >= 0)[0]
        has[rows, at] = 1.0
        shared = has @ has.T
        count = has.sum(axis=1)
        only_a = count[first] - shared[first, second]
        only_b = count[second] - shared[first, second]
        term = (only_a * spread[first] + only_b * spread[second]) / (k * k)
        blind = present[first, t] & present[second, t] & (variance[:, t] <= 0.0)
        out[:, t] = np.where(blind, term, 0.0)
    return out


def _unjudged_top_k(ctx, value, k: int):
    """Per segment, the tdi of the pooled documents not judged among the run's top k (-1 for
    the other positions), (runs, topics) where the run answers the topic, and per run p (1 - p)
    with p its mean ``value`` over those topics."""
    start, length = ctx.offsets[:-1], np.minimum(ctx.seg_len, k)
    rows = np.arange(k)[None, :]
    inside = rows < length[:, None]
    tdi = ctx.pos_tdi[np.where(inside, start[:, None] + rows, 0)]
    open_docs = np.where(inside & (ctx.judgments.state[tdi] == POOLED), tdi, -1)
    present = ctx.answered
    p = safe_divide(np.where(present, value.reshape(present.shape), 0.0).sum(axis=1),
                    present.sum(axis=1))
    p = np.clip(p, 0.0, 1.0)
    return open_docs, present, p * (1.0 - p)
