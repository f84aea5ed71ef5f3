"""Inferred judgments: the E[AP] formula against exact enumeration, its gradient, R^, recovery
of the true relevance where it is identifiable, rounding, and precision/recall/F1."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from irsample.design.nojudge.infer import (
    _live_positions,
    _objective_live,
    agreement,
    estimated_relevant,
    estimates_from_sample,
    expected_ap,
    infer_relevance,
)
from irsample.errors import DesignError
from irsample.io import load_qrels, load_runs
from irsample.model import Collection, Judgments


def _ap_fixed_r(rel, r):
    """AP with R fixed: (1/R) sum_i rel_i * prec@i."""
    hits = np.cumsum(rel)
    return float(np.sum(rel * hits / np.arange(1, len(rel) + 1)) / r)


@pytest.mark.parametrize("seed", range(4))
def test_expected_ap_equals_exact_enumeration(seed):
    """Sum over all 2^n relevance vectors of P(x) * AP(x) with independent Bernoulli p."""
    rng = np.random.default_rng(seed)
    p = rng.random(7)
    r = 2.5
    exact = 0.0
    for x in itertools.product([0, 1], repeat=len(p)):
        x = np.array(x)
        exact += np.prod(np.where(x == 1, p, 1 - p)) * _ap_fixed_r(x, r)
    assert expected_ap(p, r) == pytest.approx(exact, rel=1e-12)


def test_expected_ap_hand_value():
    # p = (1/2, 1, 0, 1/2), R = 2: (1/2 * 1 + 1/2 * (1 + 1/2) + 0 + 1/8 * (1 + 3/2)) / 2
    assert expected_ap([0.5, 1.0, 0.0, 0.5], 2.0) == pytest.approx((0.5 + 0.75 + 0.3125) / 2)


def _objective(p, slot, offsets, target, inv_r):
    """The fitted objective over every position of the rankings ``offsets`` delimits."""
    live, denominator, live_offsets = _live_positions(slot, np.diff(offsets), len(p))
    return _objective_live(p, live, denominator, live_offsets, target, inv_r)


def test_objective_value_and_gradient():
    """The numba objective equals sum_s (E[AP_s] - a_s)^2 and its gradient finite differences;
    slots n and n + 1 hold the fixed p = 0 and p = 1."""
    rng = np.random.default_rng(3)
    n = 5
    slot = np.array([0, 5, 1, 2, 6, 3, 4, 2, 0, 6, 4, 1, 3], dtype=np.int64)
    offsets = np.array([0, 7, 13], dtype=np.int64)
    target = np.array([0.3, 0.6])
    p = rng.random(n)
    f, grad = _objective(p, slot, offsets, target, 1 / 3)
    full = np.concatenate([p, [0.0, 1.0]])
    want = sum(
        (expected_ap(full[slot[a:b]], 3.0) - t) ** 2
        for a, b, t in zip(offsets[:-1], offsets[1:], target)
    )
    assert f == pytest.approx(want)
    h = 1e-6
    numeric = [
        (_objective(p + h * np.eye(n)[k], slot, offsets, target, 1 / 3)[0]
         - _objective(p - h * np.eye(n)[k], slot, offsets, target, 1 / 3)[0]) / (2 * h)
        for k in range(n)
    ]
    assert grad == pytest.approx(numeric, rel=1e-6, abs=1e-9)


DOCS = ["a", "b", "c", "d", "e", "f"]
TRUTH = {"a": 1, "b": 0, "c": 1, "d": 0, "e": 0, "f": 1}


def permutation_collection(rel_values, n_runs=30, seed=0):
    """One topic, ``n_runs`` random orders of six documents; qrels with the given values."""
    perms = list(itertools.permutations(DOCS))
    chosen = np.random.default_rng(seed).choice(len(perms), n_runs, replace=False)
    rows = [
        ("1", d, 10.0 - i, f"r{k:02d}")
        for k, c in enumerate(chosen)
        for i, d in enumerate(perms[c])
    ]
    runs = load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    table = load_qrels(pd.DataFrame({"qid": "1", "docno": DOCS, "rel": rel_values}))
    col = Collection.build(runs, [table])
    return col, Judgments.from_qrels(col, table)


def true_ap(col):
    return np.array(
        [[expected_ap([TRUTH[d] for d in col.ranking(r, 0)], 3.0)] for r in range(col.n_runs)]
    )


def test_inference_recovers_identifiable_relevance():
    """Nothing judged, exact APs of 30 distinct orders of six documents and R = 3: the only p
    with E[AP] equal to all of them is the true 0/1 vector, and the fit finds it."""
    col, judgments = permutation_collection([-1] * 6)
    inferred = infer_relevance(col, judgments, true_ap(col), np.array([3.0]))
    docnos = col.tdi_docno.take(pa.array(inferred.tdi)).to_pylist()
    assert inferred.probability == pytest.approx([TRUTH[d.decode()] for d in docnos], abs=1e-3)
    assert inferred.rms[0] < 1e-4 and inferred.target[0] == 3.0
    assert inferred.qrels_text() == "".join(f"1 0 {d} {TRUTH[d]}\n" for d in DOCS)
    full = Judgments.from_qrels(
        col, load_qrels(pd.DataFrame({"qid": "1", "docno": DOCS, "rel": list(TRUTH.values())}))
    )
    assert agreement(inferred, full).mean == (1.0, 1.0, 1.0)


def test_judged_documents_are_fixed_and_count_in_the_target():
    """a judged relevant, b judged non-relevant: they keep their grades (p = 1, 0) and the
    unjudged four share R^ - 1 = 2."""
    rel = [1, 0, -1, -1, -1, -1]
    col, judgments = permutation_collection(rel)
    inferred = infer_relevance(col, judgments, true_ap(col), np.array([3.0]))
    assert inferred.judged.tolist() == [True, True, False, False, False, False]
    assert inferred.probability[:2].tolist() == [1.0, 0.0]
    assert inferred.target[0] == 2.0
    assert inferred.probability[2:].sum() == pytest.approx(2.0, abs=1e-2)
    assert inferred.relevant.tolist() == [True, False, True, False, False, True]


def test_rounding_rules():
    """threshold / top / random rounding, and the errors of bad arguments."""
    col, judgments = permutation_collection([1, 0, -1, -1, -1, -1])
    ap = np.full((col.n_runs, 1), np.nan)
    th = infer_relevance(col, judgments, ap, np.array([3.0]), rounding="threshold")
    assert th.probability[2:].tolist() == [0.0] * 4  # no estimates: nothing fitted, p = 0
    assert th.relevant.tolist() == [True] + [False] * 5
    # with estimates, top-R^ keeps exactly round(target) unjudged documents
    top = infer_relevance(col, judgments, true_ap(col), np.array([3.0]), rounding="top")
    assert top.relevant[2:].sum() == 2
    runs = [
        infer_relevance(col, judgments, true_ap(col), np.array([3.0]), rounding="random", rng=s)
        for s in (1, 1)
    ]
    assert np.array_equal(runs[0].relevant, runs[1].relevant)
    with pytest.raises(DesignError, match="rng"):
        infer_relevance(col, judgments, ap, np.array([3.0]), rounding="random")
    with pytest.raises(DesignError, match="rounding"):
        infer_relevance(col, judgments, ap, np.array([3.0]), rounding="median")
    with pytest.raises(DesignError, match="shape"):
        infer_relevance(col, judgments, ap[:3], np.array([3.0]))


def test_estimated_relevant_and_estimates_from_sample():
    """a b judged (a relevant), four unjudged: R^ = 1 * 6 / 2 = 3 (one stratum of 6 entries)."""
    col, judgments = permutation_collection([1, 0, -1, -1, -1, -1])
    assert estimated_relevant(judgments).tolist() == [3.0]
    ap, r_hat = estimates_from_sample(col, judgments)
    assert ap.shape == (col.n_runs, 1) and r_hat.tolist() == [3.0]
    # infAP of a run ranking a first: precision 1 at a, the only judged relevant document
    first_a = [r for r in range(col.n_runs) if col.ranking(r, 0)[0] == "a"]
    assert ap[first_a, 0] == pytest.approx(1.0, abs=1e-4)


def test_agreement_by_hand():
    """Truth relevant {a, c, f}; inferred {a, c, d}: P = R = F1 = 2/3. Over unjudged documents
    only (c..f, as a and b were judged): inferred {c, d}, truth {c, f} -> 1/2 each."""
    col, judgments = permutation_collection([1, 0, -1, -1, -1, -1])
    inferred = infer_relevance(col, judgments, np.full((col.n_runs, 1), np.nan), np.array([3.0]))
    inferred = type(inferred)(
        **{**inferred.__dict__, "relevant": np.array([1, 0, 1, 1, 0, 0], bool)}
    )
    truth = Judgments.from_qrels(
        col, load_qrels(pd.DataFrame({"qid": "1", "docno": DOCS, "rel": list(TRUTH.values())}))
    )
    assert agreement(inferred, truth).mean == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert agreement(inferred, truth, unjudged_only=True).mean == pytest.approx((0.5, 0.5, 0.5))


def test_rounded_reuses_the_fit():
    col, judgments = permutation_collection([1, 0, -1, -1, -1, -1])
    fit = infer_relevance(col, judgments, true_ap(col), np.array([3.0]), rounding="threshold")
    top = fit.rounded("top")
    assert np.array_equal(top.probability, fit.probability) and top.rounding == "top"
    assert np.array_equal(
        top.relevant,
        infer_relevance(col, judgments, true_ap(col), np.array([3.0]), rounding="top").relevant,
    )
    assert top.grade[:2].tolist() == [1, 0]
    with pytest.raises(DesignError, match="rng"):
        fit.rounded("random")
