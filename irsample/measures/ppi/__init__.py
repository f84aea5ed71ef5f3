r"""Prediction-powered estimators ``ppi(M)``: automatic (model or LLM) relevance labels on every
pooled document, corrected by a probability sample of human judgments so that the labels'
errors do not bias the estimate (reference-semantics §3.6, last bullet), and ``auto(M)``, the
labels alone, uncorrected.

``estimate`` is the entry point (:func:`ppi_estimate`: the setting, the choice of form and the
rule that keeps ht(M) where the labels would not help); ``ap_ratio`` is ppi(AP)'s ratio form,
``difference`` the difference form of P@k, num_rel and (on stratified simple random samples)
nDCG, ``control_variate`` nDCG's control variate (on the planner's designs, and an option for
the topics the difference form leaves to ht); ``label_judgments`` turns labels into judgments and
their census; ``influence`` is the kernel; ``measures`` the families ``ppi(M)`` and ``auto(M)``.

Examples
--------
>>> from irsample.measures.ppi import PPI, Auto
>>> PPI("AP").name, Auto("nDCG@10").name
('ppi(AP)', 'auto(nDCG@10)')

Half of a six-document pool judged by a uniform sample (a, c, e); labels on every document,
agreeing with the humans wherever both exist. ht(P@5) counts each judged relevant document
twice (pi = 1/2); ppi(P@5) is the labels' P@5 (a, b, e: 3/5) plus the sample's estimate of the
labels' error (0 here), so its variance is 0:

>>> import tempfile
>>> from io import BytesIO
>>> from pathlib import Path
>>> import irsample
>>> folder = tempfile.TemporaryDirectory()
>>> labels = Path(folder.name, "labels")
>>> _ = labels.write_text("1 Q0 a 1\n1 Q0 b 1\n1 Q0 c 0\n1 Q0 d 0\n1 Q0 e 1\n1 Q0 f 0\n")
>>> qrels = BytesIO(b"1 0 a s 1\n1 0 b s -1\n1 0 c s 0\n1 0 d s -1\n1 0 e s 1\n1 0 f s -1\n")
>>> run = BytesIO(b"1 Q0 a 1 6 r\n1 Q0 b 2 5 r\n1 Q0 c 3 4 r\n1 Q0 d 4 3 r\n1 Q0 e 5 2 r\n"
...               b"1 Q0 f 6 1 r\n")
>>> est = irsample.estimate(qrels, [run], ["ppi(P@5)", "ht(P@5)"], auto_labels=labels)
>>> est.summary, est.summary_variance
(array([[0.6, 0.8]]), array([[0.        , 0.06767772]]))
>>> folder.cleanup()
"""

from ..._lazy import lazy_exports

#: public name -> the module of this package that defines it
_EXPORTS = {
    "PPI": "measures",
    "Auto": "measures",
    "attach_labels": "measures",
    "PPIEstimate": "estimate",
    "label_contexts": "estimate",
    "ppi_estimate": "estimate",
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
