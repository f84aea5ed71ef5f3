"""Score intervals of paper 004 (irsample/measures/incomplete/score_intervals.py): RBP, SDCG@k,
PInterval@k.

- Hand-computed rankings for every point (B, T, resid, XS, XB, XI, XM), including resid = 1
  (XI = E), fully judged rankings (T = B for P and SDCG; T - B = p^n for RBP), trec_eval's
  gain normalisation for rbp and the -c / -J corner cases.
- Properties (hypothesis) on random judgments against a plain-Python statement of the formulas:
  B <= every point <= T, resid in [0, 1], B is the trec_eval-style value (unjudged as
  non-relevant; PInterval's B is P@k exactly), and judging more documents never widens the
  interval.
- Names, parameters and the pessimistic comparison.
pytrec_eval is no oracle here (trec_eval 9.0.8 has no rbp); trec_eval 10's own outputs are
checked in test_trec_eval_parity.py and test_trec8_golden.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irsample.comparison import interval_outcomes
from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.measures import parse
from irsample.measures.incomplete.score_intervals import (
    POINTS,
    RBP,
    SDCG,
    PInterval,
    compare_intervals,
)
from irsample.measures.trec_eval.precision import P
from irsample.model import Collection, Judgments

UNPOOLED = None  # a retrieved document absent from the qrels; -1 = pooled but unjudged


def evaluate(rankings: dict, judgments: dict, measures, **options):
    """``rankings[run][topic]`` = docnos best first; ``judgments[topic][docno]`` = grade."""
    rows = [
        (topic, doc, float(len(docs) - i), run)
        for run, by_topic in rankings.items()
        for topic, docs in by_topic.items()
        for i, doc in enumerate(docs)
    ]
    qrels = [
        (t, d, g) for t, grades in judgments.items() for d, g in grades.items() if g is not None
    ]
    table = load_qrels(pd.DataFrame(qrels, columns=["qid", "docno", "rel"]))
    runs = load_runs(pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]))
    collection = Collection.build(runs, [table])
    judged = Judgments.from_qrels(collection, table)
    return evaluate_collection(collection, judged, list(measures), **options)


def points_of(family, grades, **params):
    """Every point of ``family(**params)`` for one ranking whose documents have ``grades``."""
    docs = [f"d{i}" for i in range(len(grades))]
    judgments = {"1": dict(zip(docs, grades)) | {"anchor": 1}}
    measures = [family(point=name, **params) for name in POINTS]
    ev = evaluate({"r": {"1": docs}}, judgments, measures)
    return dict(zip(POINTS, ev.values[0, 0]))


# ---- hand-computed examples --------------------------------------------------------------------
def test_precision_interval_by_hand():
    # top 5: relevant, pooled-unjudged, non-relevant, unpooled, relevant
    v = points_of(PInterval, [1, -1, 0, UNPOOLED, 1, 0, 0], k=5)
    b, t, r = 0.4, 0.8, 0.4
    xi = b + r * b / (b + 1 - t)  # 0.4 + 0.16 / 0.6
    xb = b + 0.01 * r
    assert v["B"] == v["XS"] == b and v["T"] == t
    assert v["resid"] == pytest.approx(r, abs=1e-15)
    assert v["XB"] == pytest.approx(0.404, abs=1e-15)
    assert v["XI"] == pytest.approx(2 / 3, abs=1e-15) == xi
    assert v["XM"] == pytest.approx((1 - r) * xi + r * xb, abs=1e-15)
    assert v["XM"] == pytest.approx(0.5616, abs=1e-15)


def test_sdcg_interval_by_hand():
    v = points_of(SDCG, [1, -1, 0, 1], k=3)  # rank 4 is past the cut-off
    norm = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    b, r = 1 / norm, (1 / math.log2(3)) / norm
    assert v["B"] == pytest.approx(b, abs=1e-15)
    assert v["resid"] == pytest.approx(r, abs=1e-15)
    assert v["T"] == pytest.approx(b + r, abs=1e-15)
    assert v["XI"] == pytest.approx(b + r * b / (1 - r), abs=1e-15)


def test_rbp_interval_by_hand():
    v = points_of(RBP, [1, -1, 0], p=0.5)
    # B = (1 - p) * 1; resid = p^3 (tail) + (1 - p) * p (the unjudged rank 2)
    assert v["B"] == 0.5 and v["resid"] == 0.375 and v["T"] == 0.875
    assert v["XB"] == pytest.approx(0.50375, abs=1e-15)
    assert v["XI"] == pytest.approx(0.8, abs=1e-15)  # 0.5 + 0.375 * 0.5 / 0.625
    assert v["XM"] == pytest.approx(0.625 * 0.8 + 0.375 * 0.50375, abs=1e-15)


@pytest.mark.parametrize(
    "family, params, grades",
    [
        (PInterval, {"k": 3}, [-1, UNPOOLED, -1, 1]),
        (SDCG, {"k": 3}, [-1, UNPOOLED, -1, 1]),
        (RBP, {"p": 0.8}, [-1, UNPOOLED, -1]),
        (RBP, {"p": 0.0}, [-1, 1, 1]),  # p = 0: only rank 1 has weight
    ],
)
def test_residual_one_gives_e(family, params, grades):
    """Nothing judged where the weight is: B = 0, T = 1 and XI = XB = XM = E."""
    v = points_of(family, grades, E=0.2, **params)
    assert (v["B"], v["T"], v["resid"]) == (0.0, 1.0, 1.0)
    assert v["XI"] == v["XB"] == v["XM"] == 0.2


@pytest.mark.parametrize("grades", [[1, 0, 0, 1, 0, 1], [0, 1], [1]])
@pytest.mark.parametrize("family", [PInterval, SDCG])
def test_fully_judged_cutoff_measures_have_no_residual(family, grades):
    """Also for rankings shorter than k: ranks past the end count as non-relevant (as in P@k)."""
    v = points_of(family, grades, k=4)
    assert v["resid"] == 0 and v["B"] == v["T"] == v["XI"] == v["XM"]


@pytest.mark.parametrize("n", [1, 3, 10])
def test_fully_judged_rbp_keeps_the_tail(n):
    """T - B = p^n: the ranking stops, the user model does not (trec_eval 10 prints 0 here)."""
    v = points_of(RBP, [1, 0] * n, p=0.9)
    assert v["resid"] == pytest.approx(0.9 ** (2 * n), rel=1e-13)
    rbp_resid = parse("rbp_resid")[0]
    assert rbp_resid == RBP(p=0.9, point="resid")


def test_rbp_gains_are_normalised_as_trec_eval():
    docs = ["a", "b", "c"]
    judgments = {"1": {"a": 4, "b": 2, "c": 1, "x": 0}}
    ev = evaluate({"r": {"1": docs}}, judgments, parse("rbp.p=0.5") + parse("rbp.p=0.5,1=8"))
    # levels 0..4: max gain 4 > 1, so gain = level / 4 (out.test.aql topic 301: 0.0465)
    assert ev.values[0, 0, 0] == pytest.approx(0.5 * (1 + 0.5 * 0.5 + 0.25 * 0.25), abs=1e-15)
    # 1=8: max gain 8, levels 4, 2, 1 gain 4/8, 2/8, 8/8
    assert ev.values[0, 0, 1] == pytest.approx(0.5 * (0.5 + 0.5 * 0.25 + 0.25), abs=1e-15)
    binary = points_of(RBP, [1, 0, 1], p=0.5)  # binary gains stay 0/1
    assert binary["B"] == 0.5 * (1 + 0.25)


def test_rbp_missing_topic_and_emptied_ranking():
    """-c: a topic the run did not answer scores 0 throughout (as trec_eval prints); a ranking
    emptied by -J keeps its whole tail unknown (resid 1)."""
    judgments = {"1": {"a": 1}, "2": {"b": 1, "u": -1}}
    rankings = {"r": {"1": ["a"]}, "s": {"1": ["a"], "2": ["u"]}}
    measures = [RBP(point="T"), RBP(point="resid"), RBP(point="XM")]
    ev = evaluate(rankings, judgments, measures, complete=True, judged_only=True)
    assert (ev.values[0, 1] == 0).all()  # run r lacks topic 2
    assert ev.values[1, 1].tolist() == [1.0, 1.0, 0.01]


# ---- properties --------------------------------------------------------------------------------
STATES = st.sampled_from([UNPOOLED, -1, 0, 0, 1, 2])


def reference(family, grades, k=None, p=None):
    """B and resid from the formulas (gain = grade / 2 for RBP: levels 0..2 are present)."""
    if family is RBP:
        judged = [g is not None and g >= 0 for g in grades]
        b = (1 - p) * sum(g / 2 * p**i for i, g in enumerate(grades) if g is not None and g >= 0)
        unknown = sum(p**i for i, ok in enumerate(judged) if not ok)
        return b, 1.0 if not any(judged) else p ** len(grades) + (1 - p) * unknown
    weight = (lambda i: 1 / math.log2(i + 2)) if family is SDCG else (lambda i: 1.0)
    norm = sum(weight(i) for i in range(k))
    top = grades[:k]
    b = sum(weight(i) for i, g in enumerate(top) if g is not None and g >= 1) / norm
    return b, sum(weight(i) for i, g in enumerate(top) if g is None or g < 0) / norm


def paper_points(b, r, e):
    t = b + r
    xb = b + e * r
    xi = e if r == 1 else b + r * b / (b + 1 - t)
    return {"B": b, "XS": b, "T": t, "resid": r, "XB": xb, "XI": xi, "XM": (1 - r) * xi + r * xb}


@st.composite
def cases(draw):
    grades = draw(st.lists(STATES, min_size=1, max_size=14))
    family = draw(st.sampled_from([PInterval, SDCG, RBP]))
    params = {"E": draw(st.sampled_from([0.0, 0.01, 0.3, 1.0]))}
    if family is RBP:
        params["p"] = draw(st.sampled_from([0.0, 0.5, 0.8, 0.95]))
    else:
        params["k"] = draw(st.integers(1, 16))
    return family, grades, params


def interval_for(family, grades, params, judge=()):
    docs = [f"d{i}" for i in range(len(grades))]
    qrels = dict(zip(docs, grades)) | {"top": 2}  # levels 0..2 always in the gain table
    qrels |= dict(judge)
    names = [family(point=name, **params) for name in POINTS]
    ev = evaluate({"r": {"1": docs}}, {"1": qrels}, names + [P(k=params.get("k", 1))])
    return dict(zip(POINTS, ev.values[0, 0, :-1])), ev.values[0, 0, -1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_points_lie_in_the_interval_and_follow_the_formulas(case):
    family, grades, params = case
    v, p_at_k = interval_for(family, grades, params)
    b, r = reference(family, grades, params.get("k"), params.get("p"))
    assert v["B"] == pytest.approx(b, abs=1e-12)
    assert v["resid"] == pytest.approx(r, abs=1e-12)
    assert 0 <= v["resid"] <= 1 and v["T"] <= 1
    assert v["T"] == pytest.approx(v["B"] + v["resid"], abs=1e-12)
    for name, expected in paper_points(b, r, params["E"]).items():
        assert v[name] == pytest.approx(expected, abs=1e-12), name
        if name != "resid":
            assert v["B"] <= v[name] <= v["T"], name
    if family is PInterval:
        assert v["B"] == p_at_k


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_judging_more_never_widens_the_interval(case, data):
    family, grades, params = case
    before, _ = interval_for(family, grades, params)
    unknown = [i for i, g in enumerate(grades) if g is None or g < 0]
    chosen = data.draw(st.lists(st.sampled_from(unknown), unique=True) if unknown else st.just([]))
    judge = {f"d{i}": data.draw(st.sampled_from([0, 1, 2])) for i in chosen}
    after, _ = interval_for(family, grades, params, judge)
    assert before["B"] - 1e-12 <= after["B"] and after["T"] <= before["T"] + 1e-12
    assert after["resid"] <= before["resid"] + 1e-12


# ---- names and parameters ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, name, trec_name",
    [
        ("RBP", "RBP", "rbp_p=0.8"),
        ("rbp", "RBP(p=0.9)", "rbp"),
        ("rbp.p=0.8,1=3,2=9", "RBP(gains={1:3,2:9})", "rbp_p=0.8,1=3,2=9"),
        ("rbp_resid.p=0.95", "RBP(p=0.95,point=resid)", "rbp_resid_p=0.95"),
        ("RBP(p=0.9,point=xi)", "RBP(p=0.9,point=XI)", "RBP(p=0.9,point=XI)"),
        ("SDCG(point=T)@100", "SDCG(point=T)@100", "SDCG(point=T)@100"),
        ("PInterval(E=0.05,point=XM)@10", "PInterval(point=XM,E=0.05)@10",
         "PInterval(point=XM,E=0.05)@10"),
    ],
)
def test_names(text, name, trec_name):
    (m,) = parse(text)
    assert (m.name, m.trec_name) == (name, trec_name)
    assert parse(m.name) == [m] and parse(m.trec_name) == [m]


@pytest.mark.parametrize(
    "text",
    ["SDCG", "PInterval(point=X)@10", "RBP(E=1.5)", "RBP(p=1)", "RBP(gains={-1:2})",
     "rbp_resid.1=3", "rbp.q=0.5", "rbp.p"],
)
def test_bad_parameters(text):
    with pytest.raises(MeasureError):
        parse(text)


# ---- pessimistic comparison --------------------------------------------------------------------
def test_compare_intervals():
    low1 = np.array([0.5, 0.1, 0.2, 0.3, np.nan])
    high1 = np.array([0.6, 0.2, 0.4, 0.3, np.nan])
    low2 = np.array([0.1, 0.3, 0.3, 0.3, 0.0])
    high2 = np.array([0.4, 0.5, 0.5, 0.3, 1.0])
    assert compare_intervals(low1, high1, low2, high2).tolist() == [1, -1, 0, 0, 0]
    assert compare_intervals(low1, high1, low2, high2).dtype == np.int8
    with pytest.raises(ValueError):
        compare_intervals([0.5], [0.4], [0.0], [1.0])


def test_interval_outcomes_of_an_evaluation():
    judgments = {"1": {"a": 1, "b": 1, "x": 0, "y": 0, "u": -1}, "2": {"a": 1, "x": 0}}
    rankings = {
        "good": {"1": ["a", "b"], "2": ["a", "x"]},
        "bad": {"1": ["x", "y"], "2": ["x", "a"]},
        "open": {"1": ["u", "z"]},  # nothing judged on topic 1, no ranking for topic 2
    }
    ev = evaluate(rankings, judgments, parse("PInterval@2") + parse("PInterval(point=T)@2"))
    out = interval_outcomes(ev, "PInterval@2", "PInterval(point=T)@2")
    good, bad, open_ = (ev.run_names.index(n) for n in ("good", "bad", "open"))
    t1 = ev.topics.index("1")
    assert out[good, bad].tolist() == [1, 0]  # topic 2: both [0.5, 0.5], a tie
    assert out[bad, good, t1] == -1
    assert out[good, open_, t1] == out[open_, bad, t1] == 0  # [0, 1] overlaps everything
    assert (out == -np.swapaxes(out, 0, 1)).all()
    with pytest.raises(MeasureError):
        interval_outcomes(ev, "SDCG@2", "PInterval(point=T)@2")
