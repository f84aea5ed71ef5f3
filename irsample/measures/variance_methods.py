"""The names of the variance estimators of infAP and xinfAP (``incomplete/ap_variance.py``), with
no import: the command line offers them as ``--variance`` choices before it imports NumPy.

``"jackknife"`` (stratified delete-one jackknife), ``"covariance"`` (linearisation with the
covariances of the precisions at different cut-offs) and ``"paper"`` (Yilmaz, Kanoulas & Aslam
2008 §3: precisions taken as independent). Estimators with a single variance formula (infNDCG,
statAP) ignore the choice.
"""

VARIANCE_METHODS = ("jackknife", "covariance", "paper")
#: the default: closest to nominal coverage of 95% intervals on TREC-8 (benchmarks/ci_coverage.py)
DEFAULT_VARIANCE = "jackknife"
