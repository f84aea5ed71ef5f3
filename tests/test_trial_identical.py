"""A simulation trial's numbers are bit-identical to those of the per-position kernels.

``tests/data/trial_2strata_before.npz`` holds the outputs of irsample at commit 2170afa (before
the estimators walked the pooled positions only, ``measures/incomplete/strata_walk.py``): on the
synthetic pooled collection of ``tests/synthetic.py`` (seed 3: 10 topics, 8 runs, depth-100 pool),
three 2-strata samples (ranks 1-10 judged, 20% of 11-100; ``default_rng(k)``, k = 0, 1, 2), then
xinfAP, infNDCG, infAP and bpref with their variances (jackknife, covariance, paper) and 95%
limits, and sample_eval's whole set (iP, inum_rel_ret, iprec: E after every rank). Every array
must be equal to the bit (NaN where not evaluated).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irsample.design import stratified
from irsample.design.frame import SamplingFrame
from irsample.evaluation import evaluate_collection
from irsample.measures import parse_all

from .bitwise import differing
from .synthetic import pooled_collection

BEFORE = Path(__file__).parent / "data" / "trial_2strata_before.npz"


def trial_outputs() -> dict:
    col, table = pooled_collection(3)
    frame = SamplingFrame.from_qrels(col, table)
    design = stratified("1-10:1,11-100:0.2")
    out = {}
    for k in range(3):
        judgments = design.sample(frame, rng=np.random.default_rng(k))
        for variance in ("jackknife", "covariance", "paper"):
            ev = evaluate_collection(col, judgments, parse_all(["xinfAP", "infNDCG", "infAP",
                                                                "bpref"]),
                                     ci=0.95, variance=variance)
            low, high = ev.interval()
            for name, a in (("values", ev.values), ("variance", ev.variance), ("low", low),
                            ("high", high)):
                out[f"{k}/{variance}/{name}"] = a
        ev = evaluate_collection(col, judgments, parse_all(["sample_eval"]))
        out[f"{k}/sample_eval/values"] = ev.values
    return out


def test_trial_numbers_are_those_of_the_per_position_kernels():
    now = trial_outputs()
    assert not differing(BEFORE, now)
    assert np.isfinite(now["0/jackknife/variance"]).any()  # the fixture is not all NaN


@pytest.mark.parametrize("key", ["0/jackknife/values", "2/sample_eval/values"])
def test_fixture_has_real_estimates(key):
    values = np.load(BEFORE)[key]
    assert np.nanmax(values) > 0 and np.nanstd(values) > 0
