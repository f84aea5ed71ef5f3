"""-J (judged documents only) and the estimators that cannot take it."""

from __future__ import annotations

from ..errors import MeasureError


def refuse_judged_only(measures, ci: bool = False) -> None:
    """Raise :class:`MeasureError` when -J (judged documents only) meets estimators that read
    where the unjudged documents sit in each ranking: the design-based ones
    (``needs_inclusion``: each judged document's inclusion weight at its place) and the
    reference estimators for samples (``reads_unjudged_ranks``: the judged share of each
    stratum above a rank, statAP's precision at a judged document's rank). -J moves the judged
    documents up past the unjudged ones, so every stratum looks judged whole (on TREC-8's
    random10 sample, input.INQ604's infNDCG read 0.1256 against 0.5982 without -J). With
    ``ci``, the other estimators for samples that give an interval (infAP) are refused too:
    over judged documents alone infAP is condensed AP, biased upward, and its sampling
    variance is not that estimator's (on a uniform 20% sample of TREC-8, 5 of 10 runs' -J
    intervals missed the true MAP, none without -J)."""
    if ci:
        widened = [m.name for m in measures if m.estimator and m.variance_method
                   and not (m.needs_inclusion or m.reads_unjudged_ranks)]
        if widened:
            raise MeasureError(
                f"{', '.join(widened)} with -J is computed over the judged documents alone "
                "(condensed), and the interval of --ci is that of the estimator over the "
                "whole ranking, which does not hold for it; leave out -J or --ci")
    weighing = [m.name for m in measures if m.needs_inclusion]
    ranking = [m.name for m in measures if m.reads_unjudged_ranks and not m.needs_inclusion]
    if not weighing and not ranking:
        return
    how = []
    if weighing:
        how.append(f"{', '.join(weighing)} weigh{'s' * (len(weighing) == 1)} each judged "
                   "document by its inclusion probability at its place in the whole ranking")
    if ranking:
        how.append(f"{', '.join(ranking)} estimate{'s' * (len(ranking) == 1)} from the "
                   "judged and unjudged documents above each rank")
    raise MeasureError(
        f"{', '.join(weighing + ranking)} cannot be computed over judged documents only (-J): "
        f"{'; '.join(how)}, and -J moves judged documents up past the unjudged ones; leave "
        "out -J")
