"""Experiment (a record for issue 25): where the anticipated variance over-covers on designs that
judge the top ranks whole, and what the sample's own variance does there instead.

On ``1-10:1,11-100:0.2`` (``ht_coverage.py --designs top10``, the model-assisted recipe's 2strata
at 20-30%) ht(AP) and ht(nDCG) take the relevance model's anticipated variance, floored by the
sample's over the evaluation (``ht/estimator.py``, "Anticipated variance"), and their run means
cover 0.98-0.99 on TREC-8 and TREC-COVID round 5 (REPRODUCTION.md, "The judged-whole top's
over-coverage is not the model's counts"). The planner's designs, whose cells also hold
documents judged with certainty, keep the sample's variance for the ratios
(``anticipated.ratio_probabilities``). This script runs ``ht_coverage.py`` with the ratios'
variance on such designs chosen by ``--variance``:

- ``shipped``: as irsample computes it;
- ``sample``: as on the planner's designs: wherever some documents are judged with certainty
  beside others drawn, the ratios keep the sample's variance (AP the stratified jackknife of the
  corrected ratio with a t quantile, nDCG the plain ratio's linearised variance), and the
  reliability rule reads the sample's bias and counts;
- ``blind``: ``sample``, but an identified topic whose sample sees no variation (its variance
  at most 1e-9 of the model's: no relevant document drawn in its open cells) takes the model's
  anticipated variance, floored as the shipped one is, as a blind topic of a difference does in
  ``ht/pairs.py``.

The variants are monkeypatches of this process only; nothing shipped changes.

Usage: python benchmarks/whole_top_variance.py --variance sample --collection trec8
       --designs top10 --fractions 0.2,0.3 [--trials 100] [--seed 2525]
       [--measures 'ht(AP),ht(nDCG)'] [--shared ../shared]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def partly_certain(ctx, d) -> bool:
    """Whether some documents are judged with certainty (pi = 1) beside others drawn, in one
    cell (a planner's top-up) or in different ones (a stratum judged whole)."""
    from irsample.measures.ht.inclusion import open_cells

    size, _ = open_cells(ctx.judgments, d)
    certain = ctx.judgments.stratum_size - size
    return bool(np.any(certain > 0) and np.any(size > 0))


def use_sample_variance() -> None:
    """The ``sample`` variant (module docstring)."""
    import irsample.measures.ht.anticipated as anticipated
    import irsample.measures.ht.anticipated_terms as terms
    import irsample.measures.ht.measure as measure
    import irsample.measures.ht.topic_own as topic_own
    import irsample.measures.ppi.measures as ppi_measures
    from irsample.measures.ht.inclusion import ht_design

    def ratio_probabilities(ctx, d):
        return None if partly_certain(ctx, d) else anticipated.grade_probabilities(ctx, d)

    def on_top_up(ctx):
        return partly_certain(ctx, ht_design(ctx))

    terms.ratio_probabilities = ratio_probabilities
    topic_own.topped_up = partly_certain
    topic_own.on_top_up = measure.on_top_up = ppi_measures.on_top_up = on_top_up


def model_on_blind_topics() -> None:
    """The ``blind`` variant's addition (module docstring)."""
    import irsample.measures.ht.estimator as estimator
    from irsample.measures.ht.imputation import topic_states
    from irsample.measures.ht.topic_own import model_variance

    sparse_aware, estimate_one = estimator._sparse_aware, estimator._estimate
    measure = [None]

    def _estimate(ctx, m):
        measure[0] = m
        return estimate_one(ctx, m)

    def _sparse_aware(ctx, d, theta, num, y, var_x, cov, var_y, correct, own=None,
                      donors=None, anticipated=None):
        e = sparse_aware(ctx, d, theta, num, y, var_x, cov, var_y, correct, own, donors,
                         anticipated)
        if anticipated is not None or not partly_certain(ctx, d):
            return e
        known = topic_states(ctx, d, y)[0]
        model = model_variance(ctx, d, measure[0], e, known)
        if model is None:
            return e
        expected, rho = model
        seen = np.where(known.ravel(), e.topic_variance, 0.0)
        blind = known.ravel() & (seen <= 1e-9 * expected) & (expected > 0)
        return sparse_aware(ctx, d, theta, num, y, var_x, cov, var_y, correct,
                            np.where(blind, rho * expected, seen), donors, anticipated)

    estimator._estimate, estimator._sparse_aware = _estimate, _sparse_aware


def main() -> None:
    args = sys.argv[1:]
    variance = "shipped"
    if "--variance" in args:
        at = args.index("--variance")
        variance = args[at + 1]
        del args[at:at + 2]
    if variance not in ("shipped", "sample", "blind"):
        raise SystemExit(f"--variance must be shipped, sample or blind, not {variance}")
    if variance in ("sample", "blind"):
        use_sample_variance()
    if variance == "blind":
        model_on_blind_topics()
    import ht_coverage

    print(f"variance of the ratios where some documents are judged with certainty: {variance}")
    sys.argv = [sys.argv[0], *args]
    ht_coverage.main()


if __name__ == "__main__":
    main()
