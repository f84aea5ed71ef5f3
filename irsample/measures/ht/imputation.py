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
    present = (ctx.judgments.has_topic[ctx.seg_topic] & (ctx.seg_len > 0)).reshape(shape)
    known = present & (np.asarray(y) > 0).reshape(shape)
    missing = present & ~known & ~census_topics(ctx, d)[ctx.seg_topic].reshape(shape)
    return known, missing


def linearised_variance(var_x, cov, var_y, centre, y) -> np.ndarray:
    """An identified topic's ratio variance linearised at ``centre``:
    max(v(X^) - 2 c C + c^2 v(Y^), 0) / Y^2, 0 where Y^ <= 0."""
    y = np.asarray(y, dtype=np.float64)
    v = np.maximum(var_x - 2.0 * centre * cov + centre * centre * var_y, 0.0)
    return np.where(y > 0, v / np.where(y > 0, y * y, 1.0), 0.0)


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
    w = np.where(known, 1.0 if donors is None else donors, 0.0)
    share = safe_divide(w, w.sum(axis=1)[:, None])
    m = missing.sum(axis=1)[:, None]
    mean = (share * plain).sum(axis=1)
    concentration = (share * share).sum(axis=1)
    n_eff = safe_divide(1.0, concentration)
    spread = safe_divide((share * (plain - mean[:, None]) ** 2).sum(axis=1) * n_eff, n_eff - 1.0)
    vbar = (share * own).sum(axis=1)
    tau2 = np.maximum(spread - vbar, 0.0)[:, None]
    value = np.where(missing, mean[:, None], np.where(known, plain, 0.0))
    grow = 1.0 + m * share
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
    shape = (ctx.n_runs, ctx.n_topics)
    if len(ctx.pos_tdi) == 0:
        return np.zeros(ctx.n_seg)
    j = ctx.judgments
    start, length = ctx.offsets[:-1], np.minimum(ctx.seg_len, k)
    rows = np.arange(k)[None, :]
    inside = rows < length[:, None]
    at = np.where(inside, start[:, None] + rows, 0)
    open_positions = (inside & (j.state[ctx.pos_tdi[at]] == POOLED)).sum(axis=1)
    present = (j.has_topic[ctx.seg_topic] & (ctx.seg_len > 0)).reshape(shape)
    p = safe_divide(np.where(present, value.reshape(shape), 0.0).sum(axis=1), present.sum(axis=1))
    p = np.clip(p, 0.0, 1.0)
    spread = np.repeat(p * (1.0 - p), ctx.n_topics)
    blind = present.ravel() & (variance <= 0.0) & (open_positions > 0)
    return np.where(blind, open_positions * spread / (k * k), 0.0)
