r"""The ratios' blind topics where the run means keep the sample's variance.

On designs that judge some documents with certainty beside others drawn (a planner's top-up, a
stratum judged whole beside sampled ones: :func:`~.anticipated.partly_certain`) ht(AP) and
ht(nDCG) take the sample's variance (the stratified jackknife), which covers over 50 topics
where the relevance model's anticipated variance overstated the design's (``ht/anticipated.py``).
But a topic whose open cells gave no relevant document to the draw is *blind*: identified (its
certain documents found some), its jackknife 0, while the documents left undrawn may hold
relevant ones that would lower its AP or nDCG. Such a draw reads a low denominator and no
variance together, so the run means' errors and their standard errors move apart from draw to
draw: on TREC-8's ``1-10:1,11-100:0.2`` samples at 30% (the model-assisted recipe's 2strata, 400
draws) the mean error and the mean half-width of the run means correlated -0.56 over the draws,
the intervals missed high 5.2% and low 2.2% of the time, and covered 0.941 while their average
variance matched the error's (RMS error 1.08 standard errors); on the planner's 20-30% designs
of collections we do not have the unflagged run means covered 0.923-0.925 (Core 2018 ht(AP),
DL 2020 passages ht(nDCG), synthetic runs).

So a blind topic takes the relevance model's anticipated variance of its ratio
(:func:`~.anticipated.ratio_moments` under :func:`~.anticipated.grade_probabilities`, the
variance the per-topic intervals take on these designs, ``ht/topic_own.py``) scaled by

    c = min(1, sum of the sample's variances / sum of the anticipated ones)

over the evaluation's identified (run, topic) cells: the model's share of what the sample
cannot see, at the level the sample itself reads (the model's variance of a ratio runs above
the design's on the dense collections, where most blind topics have nothing relevant left:
c was 0.56-0.95 in the draws measured). A topic with variation in its sample keeps its own.
REPRODUCTION.md, "Blind topics on the judged-top and planned designs".
"""

from __future__ import annotations

import numpy as np

from ..context import safe_divide
from .anticipated import grade_probabilities, partly_certain, ratio_moments
from .anticipated_terms import anticipated_terms
from .inclusion import HTDesign

#: a topic's sample variance at most this share of the model's is no variation at all
NO_VARIATION = 1e-9


def ratio_model(ctx, d: HTDesign, inner):
    """``(terms, moments, expected)`` of the relevance model's anticipated variance of the ratio
    ``inner`` (AP, nDCG) under :func:`~.anticipated.grade_probabilities`: the
    :func:`~.anticipated_terms.anticipated_terms`, their ``RatioMoments`` and, per segment, the
    variance at the model's centre; None where the model is not fitted. Cached per context."""
    def build():
        probs = grade_probabilities(ctx, d)
        terms = None if probs is None else anticipated_terms(ctx, d, inner, probs)
        if terms is None:
            return None
        probs, weight, gain, slope, centre, y = terms
        moments = ratio_moments(ctx, d, probs, weight, gain, slope, y)
        return terms, moments, moments.variance(centre)

    return ctx.shared(("ht_ratio_model", inner, ctx.rel_level, d), build)


def with_blind_topics(ctx, d: HTDesign, inner, own: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``own`` (per segment, the identified topics' sample variances) with each blind topic's
    replaced by c times the model's anticipated variance (module docstring), where the design
    judges some documents with certainty beside others drawn and the model is fitted; ``own``
    itself elsewhere. ``known``: (runs, topics), the identified topics."""
    if not partly_certain(ctx, d):
        return own
    model = ratio_model(ctx, d, inner)
    if model is None:
        return own
    expected = model[2]
    cells = known.ravel() & np.isfinite(own)
    blind = cells & (expected > 0) & (own <= NO_VARIATION * expected)
    if not blind.any():
        return own
    c = min(1.0, float(safe_divide(own[cells].sum(), expected[cells].sum())))
    return np.where(blind, c * expected, own)
