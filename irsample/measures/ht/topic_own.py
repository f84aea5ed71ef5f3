r"""The variance of one topic's own ht(M) estimate, the per-topic interval's (``eval -q --ci``).

Where the run means take the anticipated variance (a stratified simple random sample,
``ht/anticipated.py``), so do the topics: ``Estimate.topic_variance``, an identified topic's
variance before the imputation's growth. On the planner's designs (a pilot, then top-ups)
and wherever some documents are judged with certainty beside others drawn
(:func:`~.anticipated.partly_certain`), the ratios' run means keep the sample's
variance (for AP the stratified jackknife, ``ht/jackknife.py``), which over 50 topics or more
covers (REPRODUCTION.md, "Planned designs"); one topic's, from its three to ten sampled
relevant documents, does not. It is small exactly where the sample missed the run's top
relevant documents, so it rises and falls with the error: on planned 20% samples the per-topic
intervals marked ok covered 0.813 (CACM), 0.819 (Vaswani), 0.869 (TREC-8) and 0.889 (TREC-COVID
round 5) of the topics' truths for ht(AP), 0.765-0.930 for ht(nDCG) (100 draws each); on CACM
the errors were 3.2 times their standard errors in spread, most misses 0.15-0.30 below the
truth at a standard error near 0.06.

So a ratio's identified topic on such a design takes the anticipated variance the relevance
model gives the same linearised variables (:func:`~.anticipated.ratio_moments` with
:func:`~.anticipated.grade_probabilities`, the model P@k uses on these designs): the cells'
documents left to draw are a stratified simple random sample given the earlier judgments, the
certain ones constants; floored as the run means' anticipated variance is, by rho = max(1, sum of
the sample's linearised variances / sum of the anticipated ones over the evaluation's identified
topics, at the model's centre) (``estimator.floor_factor``). Its interval is centred on the
estimate as printed (for nDCG the corrected ratio on these designs since 2026-12-06, the
plain one when this was measured). With it the ok intervals covered 0.960-0.976
(AP) and 0.973-0.993 (nDCG) on those samples, 0.987-0.999 on CACM's and Vaswani's planned 10%
(``benchmarks/topic_intervals.py``; REPRODUCTION.md, "Per-topic intervals on the planner's
designs"). The run means and their status keep the sample's variance; a difference of two
runs takes this model's on its blind topics (``ht/pairs.py``).

Importance samples (statAP's design, unequal probabilities within a stratum) have no model
variance: the relevance model is fitted where each cell is a simple random sample. There a
topic's variance stays the sample's, and it falls as short: on importance 20% samples the ok
per-topic intervals of ht(AP), ht(nDCG), ht(num_rel) and ht(P@10) covered 0.892, 0.858, 0.932
and 0.971 of the truths on CACM, 0.900, 0.874, 0.897 and 0.960 on Vaswani, 0.890, 0.885, 0.880
and 0.924 on TREC-COVID round 5, 0.905, 0.859, 0.877 and 0.971 on TREC-8, and ppi's (kappa 0.7
labels) of AP, nDCG and P@10 0.796-0.838 on CACM and Vaswani (``benchmarks/topic_intervals.py
--design importance``, 100 draws). :func:`from_sample` tells the per-topic status, which flags
every per-topic interval of ht and ppi there (``topic_status.SAMPLE_ONLY``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..trec_eval.average_precision import AP
from ..trec_eval.gain import NDCG
from .anticipated import partly_certain, stratified_srs
from .blind_topics import ratio_model
from .estimator import estimate, floor_factor
from .imputation import linearised_variance
from .inclusion import ht_design


def topic_variance(ctx, inner) -> np.ndarray:
    """Per segment: the variance of the topic's own ht(``inner``) estimate (module docstring):
    ``Estimate.topic_variance`` (``estimate.variance`` for totals), but for AP and nDCG on a
    design with certain documents beside drawn ones the model's anticipated variance on
    identified topics (NaN on imputed topics, 0 on topics judged whole, as there). Cached per
    context."""
    return ctx.shared(("ht_topic_own", inner, ctx.rel_level), lambda: _topic_variance(ctx, inner))


def sample_topic_variance(ctx, inner) -> np.ndarray:
    """Per segment: ``Estimate.topic_variance`` (``variance`` for totals), the topic's own
    variance as the estimate gives it, before :func:`topic_variance` takes the model's."""
    e = estimate(ctx, inner)
    return e.variance if e.topic_variance is None else e.topic_variance


def from_sample(ctx) -> bool:
    """Whether a topic's variance of ht(M) and ppi(M) is the sample's own with no model (module
    docstring, "Importance samples"): where the design is not a stratified simple random sample
    (:func:`~.anticipated.stratified_srs`, given the certain documents), whatever the measure:
    ht(P@10)'s per-topic intervals held on three collections (0.960-0.971) but not on
    TREC-COVID (0.924), and ppi(P@10)'s nowhere (0.817-0.827)."""
    return not stratified_srs(ctx, ht_design(ctx))


def ratios_from_sample(ctx) -> bool:
    """Whether the ratios' run means keep the sample's variance: some documents judged with
    certainty beside others drawn (:func:`~.anticipated.partly_certain`: a planner's top-up,
    or a stratum judged whole beside sampled ones)."""
    return partly_certain(ctx, ht_design(ctx))


def _topic_variance(ctx, inner) -> np.ndarray:
    own = sample_topic_variance(ctx, inner)
    model = topic_model(ctx, inner)
    if model is None:
        return own
    return np.where(model.known.ravel(), model.rho * model.expected, own)


class TopicModel(NamedTuple):
    """The relevance model's anticipated variance of a ratio where the run means keep the
    sample's (:func:`topic_model`)."""

    #: per segment, the anticipated variance of the ratio, at the model's centre
    expected: np.ndarray
    #: the floor over the ``known`` cells (``estimator.floor_factor``)
    rho: float
    #: (runs, topics): the identified topics with a finite sample variance
    known: np.ndarray
    #: ``anticipated_terms.anticipated_terms`` under ``grade_probabilities``, and their
    #: ``RatioMoments``: the differences of runs read them (``ht/pairs.py``)
    terms: tuple
    moments: object


def topic_model(ctx, inner) -> TopicModel | None:
    """For AP and nDCG where the ratios' run means keep the sample's variance
    (:func:`ratios_from_sample`): the model's anticipated variance of each identified topic's
    ratio (:func:`model_variance`) and its floor; None elsewhere or where the model is not
    fitted (cached per context)."""
    def build():
        d = ht_design(ctx)
        if not isinstance(inner, (AP, NDCG)) or not partly_certain(ctx, d):
            return None
        e = estimate(ctx, inner)
        own = sample_topic_variance(ctx, inner)
        known = (np.asarray(e.known, dtype=bool) & np.isfinite(own) & (own >= 0)).reshape(
            ctx.n_runs, ctx.n_topics)
        return model_variance(ctx, d, inner, e, known)

    return ctx.shared(("ht_topic_model", inner, ctx.rel_level), build)


def model_variance(ctx, d, inner, e, known: np.ndarray) -> TopicModel | None:
    """:class:`TopicModel`: per segment, the relevance model's anticipated variance of the
    ratio ``inner`` (AP, nDCG) of the estimate ``e``, under
    :func:`~.anticipated.grade_probabilities` (where the ratios' run means keep the sample's
    variance they have no other), and rho, its floor over the ``known`` (runs x topics) cells
    at the model's centre (``estimator.floor_factor``; module docstring), with the terms and
    moments it is formed from; None where the model does not apply."""
    model = ratio_model(ctx, d, inner)
    if model is None:
        return None
    terms, moments, expected = model
    centre = terms[4]
    sample = linearised_variance(e.var_num, e.cov, e.var_den, centre, e.den)
    rho = floor_factor(expected.reshape(known.shape), sample.reshape(known.shape), known)
    return TopicModel(expected, rho, known, terms, moments)
