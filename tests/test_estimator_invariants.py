"""Estimators for sampled judgments against their measures, on synthetic collections.

- Complete judgments (every retrieved document judged, one stratum; every document sampled with
  probability 1): xinfAP equals AP and infAP equals AP within their smoothing bound (each
  estimated precision is off by at most 2e-5 / k for the 1e-5 / 3e-5 terms, so the mean is
  within 2e-5); infNDCG equals ndcg (all relevant documents fit in the top 1000); statAP,
  stat P@k, stat R-prec and R^ equal AP, P@k, Rprec and R exactly.
- Unbiasedness (Monte Carlo): xinfAP's estimated R^ and statAP's R^ average to the true R over
  many random samples of a stratified / Poisson design, within 3 standard errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.io.trec import QrelsTable
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

from .synthetic import random_judgments


def collection(seed, n_topics=5, n_docs=120, n_runs=4, depth=60, grades=(0, 0, 0, 1, 1, 2)):
    return random_judgments(seed, n_topics=n_topics, n_docs=n_docs, n_runs=n_runs, depth=depth,
                            grades=grades)


def evaluate(table, runs, names):
    col = Collection.build(runs, [table])
    ev = evaluate_collection(col, Judgments.from_qrels(col, table), parse_all(names))
    return {m.trec_name: ev.values[..., j] for j, m in enumerate(ev.measures)}


def with_prob(table: QrelsTable, prob) -> QrelsTable:
    return QrelsTable(table.source, table.qid, table.docno, table.rel, table.lineno, prob=prob)


@pytest.mark.parametrize("seed", range(3))
def test_complete_judgments(seed):
    q, runs = collection(seed)
    table = load_qrels(q)
    v = evaluate(
        table, runs,
        ["map", "infAP", "infAP(c=1.5)", "xinfAP", "ndcg", "infNDCG", "num_rel", "inum_rel"],
    )
    assert np.nanmax(np.abs(v["xinfAP"] - v["map"])) <= 2e-5
    assert np.nanmax(np.abs(v["infAP"] - v["map"])) <= 2e-5
    assert np.nanmax(np.abs(v["infAP(c=1.5)"] - v["map"])) <= 2e-5
    np.testing.assert_allclose(v["infNDCG"], v["ndcg"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(v["inum_rel"], v["num_rel"], rtol=1e-12)
    s = evaluate(
        with_prob(table, np.ones(len(table))), runs,
        ["map", "statAP", "P.10,30", "statP.10,30", "Rprec", "statRprec", "num_rel", "statnum_rel"],
    )
    np.testing.assert_allclose(s["statAP"], s["map"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s["statP_10"], s["P_10"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s["statP_30"], s["P_30"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s["statRprec"], s["Rprec"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s["statnum_rel"], s["num_rel"], rtol=1e-12)


def test_infap_smoothing_sets_the_precision_above_an_unsampled_prefix():
    """Nothing judged above the relevant document at rank 2: its precision above is 1/c."""
    qrels = pd.DataFrame({"qid": "1", "docno": ["x", "a"], "rel": [-1, 1]})
    run = load_runs(pd.DataFrame(
        {"qid": "1", "docno": ["x", "a"], "score": [2.0, 1.0], "tag": "r"}
    ))
    table = load_qrels(qrels)
    for c, name in ((1.0, "infAP(c=1)"), (1.5, "infAP(c=1.5)"), (2.0, "infAP")):
        got = evaluate(table, run, [name])[name][0, 0]
        # 1/2 + (1/2) * (1 pooled / 1) * (0 + eps) / (0 + 0 + c eps)
        assert got == pytest.approx(0.5 + 0.5 / c, rel=1e-12)


def test_estimated_relevant_is_unbiased():
    """irsample's R^ for a two-strata design (all of stratum 1, 30% of stratum 2; xinfAP's
    R^) and for a Poisson sample with unequal inclusion probabilities (statAP's R^) average to
    the true R over 2,000 draws, within 3 standard errors."""
    import pyarrow as pa

    from irsample.measures.context import EvalContext
    from irsample.measures.incomplete import sample_eval as sampled
    from irsample.measures.incomplete import statap as stat

    q, runs = collection(11, n_topics=2)
    full = load_qrels(q)
    col = Collection.build(runs, [full])
    R = EvalContext(col, Judgments.from_qrels(col, full)).num_rel_topic().astype(float)
    rng = np.random.default_rng(5)
    n = len(full)
    stratum = pa.array(np.where(np.arange(n) % 120 < 40, "1", "2"))
    top = np.arange(n) % 120 < 40
    prob = np.where(np.arange(n) % 3 == 0, 0.8, 0.15)
    strata_estimates, poisson_estimates = [], []
    for _ in range(2000):
        rel = np.where(top | (rng.random(n) < 0.3), full.rel, -1)
        design = QrelsTable("s", full.qid, full.docno, rel, full.lineno, stratum=stratum)
        strata_estimates.append(
            sampled.estimated_relevant(EvalContext(col, Judgments.from_qrels(col, design)))[0]
        )
        keep = np.flatnonzero(rng.random(n) < prob)
        sample = QrelsTable(
            "p", full.qid.take(keep), full.docno.take(keep), full.rel[keep], full.lineno[keep],
            prob=prob[keep],
        )
        poisson_estimates.append(
            stat.estimated_relevant(EvalContext(col, Judgments.from_qrels(col, sample)))
        )
    for est in (np.array(strata_estimates), np.array(poisson_estimates)):
        mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(len(est))
        assert np.all(np.abs(mean - R) <= 3 * se), (mean, R, se)
        assert np.all(se > 0)  # the designs really sample
