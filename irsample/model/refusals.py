"""The refusals of the design-based estimators on judgments that cannot serve them
(:meth:`irsample.model.Judgments.require_probabilities`): what is missing, and the formats and
options that carry it."""

from __future__ import annotations


def missing_probabilities(what: str) -> str:
    """The refusal of design-based estimators (``what``: their names, comma-separated) on
    judgments that carry no inclusion probabilities and assume no design."""
    verb = "need" if "," in what else "needs"
    return (
        f"{what} {verb} each judged document's inclusion probability, which TREC qrels with -1 "
        "rows (any value below 0: pooled, not judged) do not carry (they mark a sample, not "
        "its design: a stratified sample written as TREC qrels loses its probabilities). Use "
        "judgments that carry them, stratified qrels or prels ('irsample merge design.json "
        "JUDGED --format strata' or '--format prels'), "
        "or state the design: '--assume uniform' (Python: assume=\"uniform\") takes each "
        "topic's judged documents as a uniform random sample of its pool"
    )


def unlisted_pool(what: str) -> str:
    """The refusal of design-based estimators (``what``: their names, comma-separated) on
    prels that list the sampled documents alone (:attr:`Judgments.pool_listed`)."""
    verb = "need" if "," in what else "needs"
    return (
        f"{what} {verb} each topic's whole pool, and these prels list only the sampled "
        "documents (statAP's convention: no row below 0, inclusion probabilities below 1), so "
        "the share of each topic judged, the anticipated variance and the automatic labels' "
        "totals over the pool are unknown. Use prels that list the pool, the documents not "
        "judged with rel -1 ('irsample merge design.json JUDGED --format prels' writes them), "
        "or stratified qrels ('--format strata'); statAP and statP@k read these prels as "
        "they are"
    )
