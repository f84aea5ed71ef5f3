r"""The seed papers' estimators for incomplete and sampled judgments, exact to their reference
tools: infAP (trec_eval), xinfAP, infNDCG and iP@k (NIST's sample_eval.pl) with their
variances, statAP (the Million Query track's script), induced and condensed lists, subcollection
AP, and the score intervals [B, T] of RBP, P@k and SDCG@k with their residuals.

``strata_walk`` is the stratum counter walk the sampled estimators share (over the pooled
positions of :mod:`irsample.measures.pool_layout`); ``ap_variance`` and ``sample_eval_variance``
hold the variance estimators. The design-based estimators of the same measures, with intervals
whose coverage is measured, are :mod:`irsample.measures.ht`.

Examples
--------
Two strata: the first (a, b) sampled at 1 in 2 (a judged relevant, b not judged), the second
judged whole. R^ = 2 + 1; xinfAP = (1/R^) (1/(1/2) + PC_4) with PC_4 = 1/4 + (3/4)(2/3) = 3/4:

>>> from io import BytesIO
>>> import irsample
>>> from irsample.measures.incomplete import InfAP, XInfAP
>>> InfAP().name, XInfAP().name
('infAP', 'xinfAP')
>>> est = irsample.estimate(
...     BytesIO(b"1 0 a 1 1\n1 0 b 1 -1\n1 0 c 2 0\n1 0 d 2 1\n"),
...     [BytesIO(b"1 Q0 a 1 4 r\n1 Q0 b 2 3 r\n1 Q0 c 3 2 r\n1 Q0 d 4 1 r\n")],
...     [XInfAP()], ci=0.95)
>>> est.summary.round(4)
array([[0.9167]])
"""

from ..._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "InfAP": "inferred_ap",
    "InfIPrec": "sample_eval",
    "InfNDCG": "sample_eval",
    "InfP": "sample_eval",
    "InumRel": "sample_eval",
    "InumRelRet": "sample_eval",
    "XInfAP": "sample_eval",
    "StatAP": "statap",
    "StatAPVariance": "statap",
    "StatNumRel": "statap",
    "StatP": "statap",
    "StatRprec": "statap",
    "Condensed": "condensed",
    "Induced": "condensed",
    "SubAP": "subcollection",
    "RBP": "score_intervals",
    "SDCG": "score_intervals",
    "PInterval": "score_intervals",
    "compare_intervals": "score_intervals",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
