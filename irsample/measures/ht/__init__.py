r"""Design-based estimators ``ht(M)``: Horvitz-Thompson estimates of M on the sampling frame from
any probability sample whose inclusion probabilities the judgments carry, with their design
variances (reference-semantics §3.6).

``estimator`` holds the estimates and their formulas (linear totals, ratios with their
second-order bias correction, nDCG's ideal DCG); ``measure`` the family ``ht(M)`` that names
parse to; ``inclusion`` reads the first- and second-order inclusion probabilities from the
judgments and gives the design variances; ``imputation`` the topics whose sample identifies no
ratio; ``ideal_dcg`` the ideal DCG of estimated grade counts; ``jackknife`` ht(AP)'s stratified
jackknife; ``walks`` the numba kernels; ``pairs`` the differences of two runs on one shared
sample (:func:`irsample.comparison.compare_collection`).

Examples
--------
A stratified sample: topic 1's first stratum judged whole, its second at 1 in 2 (document b
judged, e not); the estimate of R counts b twice.

>>> from io import BytesIO
>>> import irsample
>>> from irsample.measures.ht import HT
>>> HT("AP").name, HT("P@10").name
('ht(AP)', 'ht(P@10)')
>>> qrels = BytesIO(b"1 0 a top 1\n1 0 b rest 1\n1 0 e rest -1\n")
>>> run = BytesIO(b"1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 e 3 1 r\n")
>>> est = irsample.estimate(qrels, [run], ["ht(num_rel)"], qrels_format="strata")
>>> est.summary
array([[3.]])
"""

from ..._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "HT": "measure",
    "Estimate": "estimator",
    "estimate": "estimator",
    "supported_text": "estimator",
    "PairEstimates": "pairs",
    "pair_estimates": "pairs",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
