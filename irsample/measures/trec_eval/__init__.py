r"""trec_eval's measures, number for number: precision, recall and their set forms, AP and its
relatives, the gain-based measures (nDCG, G, binG), interpolated precision, counts and
judged-document measures.

Unjudged documents (pooled but not judged, or not pooled) are non-relevant, as in trec_eval;
for estimates from sampled judgments see :mod:`irsample.measures.incomplete`,
:mod:`irsample.measures.ht` and :mod:`irsample.measures.ppi`. Each module holds one family of
measures (its docstrings give the formula and the source); ``gain_tables`` holds the gain tables
every gain-weighted measure shares.

Examples
--------
>>> from io import BytesIO
>>> import irsample
>>> from irsample.measures.trec_eval import AP, NDCG, P
>>> AP().name, P(k=10).trec_name, NDCG(k=10).name
('AP', 'P_10', 'nDCG@10')
>>> ev = irsample.evaluate(BytesIO(b"1 0 a 1\n1 0 b 0\n1 0 c 2\n"),
...                        [BytesIO(b"1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n1 Q0 c 3 1 r\n")],
...                        [AP(), P(k=2), NDCG()])
>>> ev.summary.round(4)  # AP (1/2 + 2/3)/2; P@2; nDCG (1/log2(3) + 2/2) / (2 + 1/log2(3))
array([[0.5833, 0.5   , 0.6199]])
"""

from ..._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "AP": "average_precision",
    "Bpref": "average_precision",
    "GMAP": "average_precision",
    "GMBpref": "average_precision",
    "NumNonrelJudgedRet": "counts",
    "NumQ": "counts",
    "NumRel": "counts",
    "NumRelRet": "counts",
    "NumRet": "counts",
    "RunId": "counts",
    "BinG": "gain",
    "G": "gain",
    "NDCG": "gain",
    "NDCGRel": "gain",
    "RNDCG": "gain",
    "ElevenPointAP": "interpolated",
    "IPrec": "interpolated",
    "RprecMult": "interpolated",
    "Judged": "judged",
    "RelString": "judged",
    "Unjudged": "judged",
    "P": "precision",
    "RR": "precision",
    "Recall": "precision",
    "RelativeP": "precision",
    "Rprec": "precision",
    "SetAP": "precision",
    "SetF": "precision",
    "SetP": "precision",
    "SetR": "precision",
    "SetRelativeP": "precision",
    "Success": "precision",
    "Utility": "precision",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
