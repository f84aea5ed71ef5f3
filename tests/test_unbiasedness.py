"""Monte-Carlo bias of the inferred estimators under the designs they were made for.

On a synthetic TREC-like collection (:func:`tests.synthetic.pooled_collection`: 10 topics, 8 runs
of 200 documents, complete judgments of the depth-100 pool, 601-676 pool documents and 22-63
relevant per topic) each case draws 2,000 seeded samples from one design over one
:class:`SamplingFrame` (the collection is built once; every draw is ``design.sample`` +
``evaluate_collection``) and compares the Monte-Carlo mean of every run's mean-over-topics
estimate with the truth under complete judgments: z = (MC mean - truth) / SE of the MC mean.

- (a) ``uniform(0.3)``, infAP(c=1.5) vs AP (Yilmaz & Aslam 2006/2008);
- (b) ``stratified("1-10:1,11-40:0.4,41-:0.15")``, xinfAP vs AP and infNDCG vs ndcg with
  linear gains (what infNDCG equals under complete judgments; Yilmaz, Kanoulas & Aslam 2008);
- R^ (inum_rel) under both designs, which is exactly unbiased (r N / n with n fixed).

These are ratio estimators and only approximately unbiased, and 2,000 draws resolve biases of a
few tenths of a percent. At the fixed seeds (z per run's mean over topics, worst to best run;
relative bias; share of the 80 run x topic cells beyond 3 SE):

  case                     z per run                relative bias     cells > 3 SE
  (a) infAP(c=1.5)         +9.5 ... -22.7           +10.1% ... -3.6%  62%
  (b) xinfAP               +11.3 ... +17.1          +1.0% ... +3.4%   62%
  (b) infNDCG              +3.4 ... +9.5            +0.37% ... +0.47% 42%
  (b) DCG^ (its numerator) -1.0 ... +0.5 (all)      <= 0.1%           0%
  R^, both designs         per topic |z| <= 2.9

so the three 3-SE tests of the estimators are strict xfails (an XPASS fails the suite), and the
tests that pass assert what the formulas do promise:

- infAP: when nothing above rank k is judged the precision above is taken as 1/c (0.67 for
  c = 1.5), low for good runs whose top precision is near 1, high for poor runs; and the mean of
  PC_k over the r judged relevant documents is a ratio with a random r. A diagnostic on this
  collection (not a test): with c = 1 and 1/E[r] in place of 1/r the good runs are unbiased
  (best run -0.3%, z -1.1) while poor runs gain +18% (precision above taken as 1); the random
  1/r costs -1.2% to -2.7% at 30% (-0.2% to -0.7% at 60%); c = 1.5 moves good runs by -2%.
- xinfAP: per stratum the precision above k is (q_s + 1e-5) / (m_s + 3e-5), i.e. 1/3 when no
  document of the stratum above k was sampled, high for the sparsely sampled deep stratum whose
  documents are mostly non-relevant; plus the ratios R^_s / R^ and SAP_s / r_s.
- infNDCG = DCG^ / IDCG^: DCG^ is unbiased (asserted per run and per cell), so the bias is the
  normaliser's (see test_infndcg_numerator_is_unbiased).
- Both ratio-estimator biases shrink as more is judged (asserted below: 30% -> 60% uniform,
  deep strata 40%/15% -> 70%/40%; largest |bias| 10.1% -> 4.2% and 3.4% -> 0.9%).

Run ``pytest tests/test_unbiasedness.py -s`` for the tables (z per run, relative bias, the share
of run x topic cells beyond 3 SE, per-draw time). Numba runs single-threaded here: the kernels
work on a few thousand positions, where a parallel region costs more than the work (and ~15 ms
each on an oversubscribed machine).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from statistics import NormalDist

import numba
import numpy as np
import pytest

from irsample.design import SamplingFrame, stratified, uniform
from irsample.evaluation import evaluate_collection
from irsample.measures import parse_all
from irsample.measures.context import EvalContext
from irsample.measures.incomplete import sample_eval as sampled

from .synthetic import pooled_collection

DRAWS = 2000
COLLECTION_SEED = 2008
STRATA = "1-10:1,11-40:0.4,41-:0.15"
STRATA_DENSER = "1-10:1,11-40:0.7,41-:0.4"


@dataclass
class MonteCarlo:
    """Per-draw values ``draws[measure]`` (draw, run, topic) and the truths (run, topic)."""

    name: str
    truth: dict
    draws: dict
    sample_ms: float
    evaluate_ms: float

    def compare(self, estimator: str, truth: str):
        est = self.draws[estimator]
        true = self.truth[truth]
        per_run = est.mean(axis=2)
        mean, se = per_run.mean(axis=0), per_run.std(axis=0, ddof=1) / np.sqrt(len(est))
        target = true.mean(axis=1)
        cell_se = est.std(axis=0, ddof=1) / np.sqrt(len(est))
        cell_z = _z(est.mean(axis=0) - true, cell_se)
        return Comparison(
            f"{self.name}: {estimator} vs {truth}", len(est), _z(mean - target, se),
            (mean - target) / target, float(np.mean(np.abs(cell_z) > 3)),
            float(np.max(np.abs(cell_z))), self.sample_ms, self.evaluate_ms,
        )


def _z(diff, se):
    """diff / se; 0 for differences at rounding level (1e-9: deterministic cells, e.g. a run
    whose relevant documents all lie in the fully judged stratum, have se ~ 1e-16)."""
    diff = np.where(np.abs(diff) <= 1e-9, 0.0, diff)
    return np.where(se > 0, diff / np.where(se > 0, se, 1), np.where(diff == 0, 0.0, np.inf))


@dataclass
class Comparison:
    case: str
    draws: int
    z: np.ndarray  #: per run
    relative_bias: np.ndarray  #: per run
    cells_beyond_3se: float
    max_cell_z: float
    sample_ms: float
    evaluate_ms: float

    def __str__(self):
        return (
            f"{self.case} ({self.draws} draws; sample {self.sample_ms:.2f} ms + evaluate "
            f"{self.evaluate_ms:.2f} ms per draw)\n"
            f"  z per run (worst to best run): {np.array2string(self.z, precision=1)}\n"
            f"  relative bias %: {np.array2string(100 * self.relative_bias, precision=2)}\n"
            f"  run x topic cells beyond 3 SE: {100 * self.cells_beyond_3se:.1f}% "
            f"(max |z| {self.max_cell_z:.1f})"
        )


@pytest.fixture(scope="module")
def frame():
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    collection, table = pooled_collection(COLLECTION_SEED)
    yield SamplingFrame.from_qrels(collection, table)
    numba.set_num_threads(threads)


def simulate(frame, design, estimators, truths, seed, *, ideal_dcg=False,
             draws=DRAWS) -> MonteCarlo:
    """``draws`` samples of ``design`` with one Generator seeded ``seed``; with ``ideal_dcg``
    also sample_eval's IDCG^ per topic (``draws["IDCG"]``, truth ``truth["IDCG"]``)."""
    measures = parse_all(estimators)
    truth_eval = evaluate_collection(frame.collection, frame.judgments(), parse_all(truths))
    truth = {m.trec_name: truth_eval.values[..., i] for i, m in enumerate(truth_eval.measures)}
    if ideal_dcg:
        truth["IDCG"] = sampled.ideal_dcg(EvalContext(frame.collection, frame.judgments()), ())
    rng = np.random.default_rng(seed)
    values, ideal, sampling, evaluating = [], [], 0.0, 0.0
    for _ in range(draws):
        t0 = time.perf_counter()
        judgments = design.sample(frame, rng=rng)
        t1 = time.perf_counter()
        values.append(evaluate_collection(frame.collection, judgments, measures).values)
        evaluating += time.perf_counter() - t1
        sampling += t1 - t0
        if ideal_dcg:
            ideal.append(sampled.ideal_dcg(EvalContext(frame.collection, judgments), ()))
    values = np.array(values)
    out = {m.trec_name: values[..., i] for i, m in enumerate(measures)}
    if ideal_dcg:
        out["IDCG"] = np.array(ideal)
    return MonteCarlo(design.name, truth, out, 1e3 * sampling / draws, 1e3 * evaluating / draws)


@pytest.fixture(scope="module")
def graded_frame():
    """The same collection with relevant grades 1-3 (infNDCG's gains then take three values)."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    collection, table = pooled_collection(COLLECTION_SEED, grades=(1, 2, 3))
    yield SamplingFrame.from_qrels(collection, table)
    numba.set_num_threads(threads)


@pytest.fixture(scope="module")
def uniform_mc(frame):
    return simulate(frame, uniform(0.3), ["infAP(c=1.5)", "inum_rel"], ["map", "num_rel"], seed=1)


@pytest.fixture(scope="module")
def stratified_mc(frame):
    return simulate(
        frame, stratified(STRATA), ["xinfAP", "infNDCG", "inum_rel"], ["map", "ndcg", "num_rel"],
        seed=2, ideal_dcg=True,
    )


def check_within_3se(comparison: Comparison):
    print(comparison)
    assert np.all(np.abs(comparison.z) <= 3), str(comparison)


@pytest.mark.xfail(strict=True, reason="infAP's 1/c smoothing and random 1/r: biased from "
                   "+10% (worst run) to -3.6% (best runs) at 30%, up to 23 SE")
def test_infap_under_uniform_sampling_within_3se(uniform_mc):
    check_within_3se(uniform_mc.compare("infAP(c=1.5)", "map"))


@pytest.mark.xfail(strict=True, reason="xinfAP's 1/3 smoothing in sparse strata and its ratio "
                   "estimates: biased upwards by 1-3.4% with a 15% deep stratum, 11-17 SE")
def test_xinfap_under_stratified_sampling_within_3se(stratified_mc):
    check_within_3se(stratified_mc.compare("xinfAP", "map"))


@pytest.mark.xfail(strict=True, reason="infNDCG divides by an estimated IDCG (rounded R^_g): "
                   "biased upwards by 0.4%, 3.4-9.5 SE; its DCG^ is unbiased (next test)")
def test_infndcg_under_stratified_sampling_within_3se(stratified_mc):
    check_within_3se(stratified_mc.compare("infNDCG", "ndcg"))


def test_infndcg_numerator_is_unbiased(stratified_mc):
    _numerator_is_unbiased(stratified_mc)


def test_infndcg_numerator_is_unbiased_with_three_grades(graded_frame):
    """The same with relevant grades 1-3 (600 draws)."""
    _numerator_is_unbiased(simulate(
        graded_frame, stratified(STRATA), ["infNDCG"], ["ndcg"], seed=3, ideal_dcg=True,
        draws=600))


def _numerator_is_unbiased(mc):
    """infNDCG = DCG^ / IDCG^. DCG^ = sum_s d_s gain_s / m_s is unbiased under per-stratum SRS
    (given m_s > 0 the sampled retrieved documents of s are an SRS of the d_s retrieved ones), so
    every run's mean DCG^ is within 3 SE of the true DCG; the bias of infNDCG comes from its
    normaliser (IDCG^ places int(R^_g + 0.5) documents per grade, a concave, rounded function of
    unbiased R^_g, and E[1/IDCG^] > 1/IDCG). Every run x topic cell too, at a Bonferroni bound
    over the cells (family-wise 1%)."""
    ideal = mc.draws["IDCG"][:, None, :]
    dcg = MonteCarlo(
        mc.name, {"DCG": mc.truth["ndcg"] * mc.truth["IDCG"][None, :]},
        {"DCG^": mc.draws["infNDCG"] * ideal}, mc.sample_ms, mc.evaluate_ms,
    ).compare("DCG^", "DCG")
    idcg = mc.draws["IDCG"]
    z_ideal = _z(idcg.mean(axis=0) - mc.truth["IDCG"],
                 idcg.std(axis=0, ddof=1) / np.sqrt(len(idcg)))
    print(dcg, f"  IDCG^ z per topic: {np.array2string(z_ideal, precision=1)}", sep="\n")
    assert np.all(np.abs(dcg.z) <= 3), str(dcg)
    cells = mc.draws["infNDCG"][0].size
    assert dcg.max_cell_z <= NormalDist().inv_cdf(1 - 0.01 / (2 * cells)), str(dcg)


@pytest.mark.parametrize("case", ["uniform_mc", "stratified_mc"])
def test_estimated_relevant_is_unbiased_per_topic(case, request):
    """R^ = sum_s r_s N_s / n_s is exactly unbiased under per-stratum SRS: every topic's MC mean
    within 3 SE of R (one run suffices: R^ does not depend on the run)."""
    mc = request.getfixturevalue(case)
    est, true = mc.draws["inum_rel"][:, 0, :], mc.truth["num_rel"][0]
    z = _z(est.mean(axis=0) - true, est.std(axis=0, ddof=1) / np.sqrt(len(est)))
    print(mc.name, "R^ z per topic:", np.array2string(z, precision=1))
    assert np.all(np.abs(z) <= 3), z
    assert np.all(est.std(axis=0) > 0)  # the design really samples


@pytest.mark.parametrize(
    "sparse, dense, estimator",
    [
        (uniform(0.3), uniform(0.6), "infAP(c=1.5)"),
        (stratified(STRATA), stratified(STRATA_DENSER), "xinfAP"),
    ],
    ids=["infAP", "xinfAP"],
)
def test_bias_shrinks_as_more_is_judged(frame, uniform_mc, stratified_mc, sparse, dense, estimator):
    """The biases above are those of consistent ratio estimators: judging more (30% -> 60%;
    deep strata 40%/15% -> 70%/40%) shrinks the largest and the root-mean-square relative bias
    over runs. (Not every run's: a run whose opposite smoothing and ratio biases cancel can
    move away from 0, as the middle run of infAP does, -0.1% -> -0.4%.)"""
    mc = uniform_mc if estimator == "infAP(c=1.5)" else stratified_mc
    before = mc.compare(estimator, "map")
    assert before.case.startswith(sparse.name)
    after = simulate(frame, dense, [estimator], ["map"], seed=3).compare(estimator, "map")
    print(before, after, sep="\n")
    b, a = np.abs(before.relative_bias), np.abs(after.relative_bias)
    assert a.max() < b.max(), (str(before), str(after))
    assert np.sqrt(np.mean(a**2)) < np.sqrt(np.mean(b**2)), (str(before), str(after))
