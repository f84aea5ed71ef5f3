"""The design-based estimators ``ht(M)`` give the same numbers, to the bit, since their walks
read the sampled positions alone (``measures/ht/walks.py``, ``SampledPositions``).

``tests/data/ht_before_sampled.npz`` holds the outputs of irsample at commit 8946588 (f2c6244
with ht(nDCG)'s graded ideal-DCG correction), when every walk read every ranked position: on the
synthetic graded collections of ``tests/test_ht_estimators.py`` (seeds 0 and 1), one draw of
each of its four designs (``default_rng(k)``), every part of the
:class:`~irsample.measures.ht.estimator.Estimate` of each supported measure (values, variances,
ratio parts, the per-position influences ``x``, centres, donors) on the whole rankings and with
``-M 25`` (positions cut), and the pair estimates of ht(AP) and ht(nDCG) (which read ``x`` and
the jackknife replicates). The variance compared is the sample's (``Estimate.variance_from_sample``;
the anticipated variance, added later, is tested in ``test_ht_anticipated.py``); P@k's without
the term added after that commit (``imputation.unseen_variance``, tested in
``test_ht_estimators.py``); its ``var_num`` is the cell variance itself. Regenerate only from
a commit whose numbers are known good:
``python -m tests.test_ht_sampled_identical``. Regenerated once, when ht(nDCG) began to remove
its ratio bias on stratified simple random samples, on the topics whose sample holds more than
two relevant documents (``ht/estimator.py``, "nDCG's ratio bias"): before it, the only parts
that differed from 8946588's were nDCG's and nDCG@10's ``value``, ``variance`` and ``centre``
(the run's mean of the corrected values) and nDCG's pairs, on the three stratified designs
(72 arrays); the importance sample's were unchanged. Regenerated again when the differences of
runs took the model's variance on the identified topics whose sample shows none
(``ht/pairs.py``, ``BLIND``): only ht(AP)'s pair variances on two draws with ``-M 25`` changed
(6 of 24 numbers, by at most 0.0024). Regenerated again when the relevance model's topic
intercepts took a prior standard deviation of 3 (``ht/anticipated.TOPIC_SD``): only the pairs
changed (their model variance: ht(AP)'s on two draws with ``-M 25``, by at most 2.7%
relative); every other part to the bit. (With the model's nested intercept per stratum,
``ht/anticipated.fit_model(stratum_sd=1.0)``, an option, only ht(AP)'s pairs on the budget
design's draw with ``-M 25`` differ: 4 of 12 numbers, by at most 0.9% relative.) Regenerated
again when ht(AP)'s jackknife, where its interval takes it, took the replicates of the
corrected ratio (``ht/corrected_replicates.py``): only the importance sample's AP and AP@20
variances and its AP pairs changed (12 arrays; the variances by up to 50% a segment, 5-12% in
sum); every other part to the bit but two pairs within the 1e-6 allowed below. Regenerated
again when the ratios kept the sample's variance beside ranks judged whole
(``ht/anticipated.partly_certain``): only the ``stratified`` design's draws (ranks 1-5 judged
whole) changed, 40 arrays: AP's and AP@20's variances (the jackknife of the corrected ratio,
-1% to +3% in sum), nDCG's and nDCG@10's values, variances and centres (the plain ratio, as on
a top-up) and both measures' pairs; the uniform, budget and importance draws to the bit.
Regenerated again when ht(nDCG) took the Taylor correction on importance samples with the
jackknife of the corrected ratio as its variance (``ht/ndcg_replicates.py``), and the jackknife
weighted each deletion by its own 1 - pi (``ht/jackknife.py``): only the importance draws
changed, 40 arrays: nDCG's and nDCG@10's values, centres, variances (+22% to +57% in sum) and
pairs, AP's and AP@20's variances (-2% to +3% in sum) and pairs; the uniform, budget and
stratified draws to the bit but two pairs within the 1e-6 allowed below. Regenerated again
when ht(nDCG) took the same correction and jackknife wherever the anticipated variance does not
apply (a planner's top-ups, ranks judged whole beside sampled ones): only the ``stratified``
draws (ranks 1-5 judged whole) changed, 28 arrays: nDCG's and nDCG@10's values, centres,
variances (-9% to +11% in sum) and pairs; every other part to the bit. Written again when
ht(nDCG)'s replicates formed their cells' cross sums by matrix products (for its delete-two
replicates, ``ndcg_replicates.ndcg_second_order``): rounding only, 15 of 1,776 arrays (nDCG's
and nDCG@10's jackknife variances and nDCG's pairs on the stratified and importance draws)
moved, by at most 2.0e-15 relative, one of them beyond the 4 ulps :mod:`tests.bitwise` allows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.imputation import unseen_variance
from irsample.measures.ht.pairs import pair_estimates

from .bitwise import differing
from .test_ht_estimators import DESIGNS, MEASURES, synthetic

BEFORE = Path(__file__).parent / "data" / "ht_before_sampled.npz"
PARTS = ("value", "variance", "plain", "num", "den", "var_num", "cov", "var_den", "x", "centre",
         "known", "donors")


def outputs() -> dict:
    out = {}
    for seed in (0, 1):
        col, frame = synthetic(seed)
        for k, (name, design) in enumerate(DESIGNS.items()):
            judgments = design.sample(frame, rng=np.random.default_rng(k))
            for cut in (None, 25):
                ctx = EvalContext(col, judgments, max_docs=cut)
                for inner in MEASURES:
                    (m,) = parse(inner)
                    est = estimate(ctx, m)
                    for part in PARTS:
                        value = getattr(est, part)
                        if part == "variance":  # the sample's (the anticipated: its own test)
                            value = est.variance_from_sample
                            if inner.startswith("P@") and est.sample_variance is None:
                                # the cell variance
                                value = value - unseen_variance(ctx, est.value, est.var_num, m.k)
                        if value is not None:
                            out[f"{seed}/{name}/{cut}/{inner}/{part}"] = np.asarray(value)
                for inner in ("AP", "nDCG"):
                    (m,) = parse(inner)
                    pairs = pair_estimates(ctx, m)
                    out[f"{seed}/{name}/{cut}/{inner}/pairs"] = np.stack([pairs.diff,
                                                                          pairs.variance])
    return out


def test_ht_numbers_are_those_of_the_walks_over_every_position():
    now = outputs()
    changed = [k for k in differing(BEFORE, now) if not k.endswith("/pairs")]
    assert not changed, changed[:5]
    # the pairs' variance takes the relevance model's on some topics (``ht/pairs.py``), an
    # iterative fit (``stats/logistic.py``) whose iterates follow the machine's floating-point
    # kernels: under the L-BFGS fit it replaced, at an unchanged commit one fresh machine moved
    # them by 3e-10 relative, another by 3.4e-8 (0/budget/25/AP/pairs); to 1e-6. (Newton's
    # fit, which reaches the mode, moved them by 1.6e-5 and 8.3e-5 from L-BFGS's: the fixture
    # was written again then.)
    before = np.load(BEFORE)
    for key in (k for k in before.files if k.endswith("/pairs")):
        np.testing.assert_allclose(now[key], before[key], rtol=1e-6, atol=1e-15, err_msg=key)
    assert np.nanmax(np.load(BEFORE)["0/uniform/None/AP/x"]) > 0  # the fixture is not all zeros


if __name__ == "__main__":  # pragma: no cover - regenerates the fixture
    np.savez_compressed(BEFORE, **outputs())
