"""condensed(M), induced(M) and subcollection AP (subAP).

- condensed(M) equals M under trec_eval -J for every numeric trec_eval family (default
  parameters), with and without -M, -l, -c; estimators and string measures are rejected.
- induced(AP) and subAP by hand; against plain-Python references on random rankings
  (hypothesis); their identities: induced(AP) = AP without -1 entries, = condensed(AP) without
  unpooled documents; subAP = AP with p = 1 and no -1 entries.
- subAP's expected precision: exact rational reference, Monte Carlo over random subcollections,
  nd = 1000; the default p is the judged fraction of each topic's pool.
- Names: round trips, bad names, nesting rejected.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.measures import REGISTRY, TREC_REGISTRY, EvalContext, parse
from irsample.measures.incomplete.condensed import Condensed, Induced, reduced_context
from irsample.measures.incomplete.subcollection import expected_precision, pool_fraction
from irsample.model import Collection, Judgments

from .test_measure_invariants import make_collection


def evaluate(qrels, run, names, **options):
    table = load_qrels(qrels)
    col = Collection.build(load_runs(run), [table])
    measures = [m for n in names for m in parse(n)] if isinstance(names[0], str) else names
    return evaluate_collection(col, Judgments.from_qrels(col, table), measures, **options)


def frames(ranking, qrels):
    """A one-topic, one-run collection: ``ranking`` docnos top first, ``qrels`` {docno: rel}."""
    q = pd.DataFrame({"qid": "1", "docno": list(qrels), "rel": list(qrels.values())})
    n = len(ranking)
    run = pd.DataFrame(
        {"qid": "1", "docno": ranking, "score": np.arange(n, 0, -1.0), "tag": "r"}
    )
    return q, run


def trec_defaults():
    """Every numeric trec_eval family with its default parameters."""
    out = []
    for name, cls in TREC_REGISTRY.items():
        if name == cls.trec or (cls.trec is None and name == cls.trec_extra[0]):
            out += [m for m in cls.from_trec(None, name) if m.value_type != "str"]
    return out


ESTIMATORS = {cls.family for cls in REGISTRY.values() if cls.estimator}


# ---- condensed(M) = M with -J ------------------------------------------------------------
@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize(
    "options", [{}, {"max_docs": 7}, {"rel_level": 2}, {"complete": True}], ids=str
)
def test_condensed_is_judged_only(seed, options):
    measures = trec_defaults()
    wrapped, rejected = [], set()
    for m in measures:
        try:
            wrapped.append(Condensed(m))
        except MeasureError:
            rejected.add(m.family)
    assert rejected == {m.family for m in measures} & ESTIMATORS
    assert {"infAP", "xinfAP", "statAP"} <= rejected
    plain = [w.inner for w in wrapped]
    assert len(plain) > 60  # every cut-off of every family
    qrels, run = make_collection(seed)
    ev = evaluate(qrels, run, wrapped, **options)
    ref = evaluate(qrels, run, plain, judged_only=True, **options)
    np.testing.assert_array_equal(ev.values, ref.values)
    np.testing.assert_array_equal(ev.summary, ref.summary)
    plain_ev = evaluate(qrels, run, plain, **options)  # the reduction really changes values
    assert not np.array_equal(plain_ev.values, ref.values, equal_nan=True)


def test_wrapped_measures_follow_the_inner_summary_and_type():
    gm = parse("condensed(gm_map)")[0]
    assert (gm.summary, gm.per_topic, gm.value_type) == ("gmean", False, "float")
    nr = parse("induced(num_ret)")[0]
    assert (nr.summary, nr.value_type) == ("sum", "int")
    qrels, run = make_collection(5)
    ev = evaluate(qrels, run, ["condensed(num_ret)", "induced(num_ret)", "num_ret"])
    s = ev.summary
    assert s[:, 0].sum() < s[:, 1].sum() < s[:, 2].sum()  # -1 and unpooled documents exist


def test_reduced_context_cached_and_keeps_options():
    qrels, run = make_collection(2)
    table = load_qrels(qrels)
    col = Collection.build(load_runs(run), [table])
    ctx = EvalContext(col, Judgments.from_qrels(col, table), rel_level=2, max_docs=9)
    red = reduced_context(ctx, judged_only=False, drop_pooled_unjudged=True)
    assert red is reduced_context(ctx, judged_only=False, drop_pooled_unjudged=True)
    assert (red.rel_level, red.max_docs, red.drop_pooled_unjudged) == (2, 9, True)
    assert (red.pos_state != 1).all() and (red.pos_state == 0).any()  # only -1 documents gone
    assert red.seg_len.max() <= 9
    judged = EvalContext(col, ctx.judgments, judged_only=True)
    assert reduced_context(judged, judged_only=False, drop_pooled_unjudged=True) is judged


def test_max_docs_applies_before_removal():
    # ranks: x(-1) u(unpooled) a(rel) b(nonrel) c(rel)
    q, run = frames(list("xuabc"), {"x": -1, "a": 1, "b": 0, "c": 1})
    ev = evaluate(q, run, ["condensed(num_ret)", "induced(num_ret)", "condensed(P@2)"], max_docs=4)
    assert ev.values[0, 0].tolist() == [2, 3, 0.5]  # c (rank 5) is cut before removal


# ---- induced(AP) ---------------------------------------------------------------------------
HAND_RANKING = list("axubcyd")
# u is unpooled, e relevant and not retrieved
HAND_QRELS = {"a": 1, "x": -1, "b": 0, "c": 1, "y": -1, "d": 1, "e": 1}


def test_induced_and_condensed_ap_by_hand():
    q, run = frames(HAND_RANKING, HAND_QRELS)
    ev = evaluate(q, run, ["AP", "induced(AP)", "condensed(AP)"])
    ap, induced, condensed = ev.values[0, 0]
    assert ap == pytest.approx((1 + 2 / 5 + 3 / 7) / 4)  # a@1 c@5 d@7, R = 4
    assert induced == pytest.approx((1 + 2 / 4 + 3 / 5) / 4)  # a u b c d
    assert condensed == pytest.approx((1 + 2 / 3 + 3 / 4) / 4)  # a b c d


@pytest.mark.parametrize("seed", range(3))
def test_induced_ap_identities(seed):
    qrels, run = make_collection(seed)
    no_minus = qrels[qrels.rel >= 0]
    ev = evaluate(no_minus, run, ["AP", "induced(AP)"])
    np.testing.assert_array_equal(ev.values[..., 0], ev.values[..., 1])
    everything_pooled = pd.concat(
        [qrels, run[["qid", "docno"]].drop_duplicates().assign(rel=-1)]
    ).drop_duplicates(["qid", "docno"])
    ev = evaluate(everything_pooled, run, ["induced(AP)", "condensed(AP)", "AP"])
    np.testing.assert_array_equal(ev.values[..., 0], ev.values[..., 1])
    assert not np.array_equal(ev.values[..., 0], ev.values[..., 2], equal_nan=True)


# ---- references on random rankings ---------------------------------------------------------
def reference(states, extra_rel, p):
    """AP, induced AP, condensed AP and subAP(p) of one ranking of states R/N/U(npooled)/X(-1)."""
    R = states.count("R") + extra_rel
    if R == 0:
        return 0.0, 0.0, 0.0, 0.0

    def ap(kept):
        found, total = 0, 0.0
        for rank, s in enumerate(kept, 1):
            if s == "R":
                found += 1
                total += found / rank
        return total / R

    sub, r, n, nd = 0.0, 0, 0, 0
    for s in states:
        nd += s == "U"
        n += s == "N"
        if s == "R":
            r += 1
            sub += sum(
                math.comb(nd, i) * p**i * (1 - p) ** (nd - i) * r / (r + n + i)
                for i in range(nd + 1)
            )
    return (
        ap(states),
        ap([s for s in states if s != "X"]),
        ap([s for s in states if s in "RN"]),
        sub / R,
    )


@settings(max_examples=60, deadline=None)
@given(
    states=st.lists(st.sampled_from("RNUX"), min_size=1, max_size=30),
    extra_rel=st.integers(0, 3),
    p=st.floats(0, 1),
)
def test_against_reference(states, extra_rel, p):
    docs = [f"d{i}" for i in range(len(states))]
    qrels = {d: {"R": 1, "N": 0, "X": -1}[s] for d, s in zip(docs, states) if s != "U"}
    qrels.update({f"e{i}": 1 for i in range(extra_rel)})
    qrels.setdefault("z", 0)  # the topic is in the qrels even when nothing retrieved is
    q, run = frames(docs, qrels)
    names = ["AP", "induced(AP)", "condensed(AP)", f"subAP(p={p!r})"]
    ev = evaluate(q, run, [m for n in names for m in parse(n)])
    expected = reference(states, extra_rel, p)
    np.testing.assert_allclose(ev.values[0, 0], expected, rtol=1e-12, atol=1e-15)


# ---- subAP ---------------------------------------------------------------------------------
def test_subap_by_hand():
    q, run = frames(HAND_RANKING, HAND_QRELS)
    ev = evaluate(q, run, ["subAP(p=0.5)", "subAP", "subAP(p=1)", "subAP(p=0)"])
    half, default, one, zero = ev.values[0, 0]
    # a: 1; c: r=2 n=1 nd=1; d: r=3 n=1 nd=1 (x, y left out)
    def by_hand(p):
        return (1 + ((1 - p) * 2 / 3 + p * 2 / 4) + ((1 - p) * 3 / 4 + p * 3 / 5)) / 4

    assert half == pytest.approx(by_hand(0.5))
    assert default == pytest.approx(by_hand(5 / 7))  # judged: a b c d e of 7 pooled entries
    assert one == pytest.approx(evaluate(q, run, ["induced(AP)"]).values[0, 0, 0])
    assert zero == pytest.approx(evaluate(q, run, ["condensed(AP)"]).values[0, 0, 0])


@pytest.mark.parametrize("seed", range(3))
def test_subap_is_ap_without_unjudged_pool_entries(seed):
    qrels, run = make_collection(seed)
    no_minus = qrels[qrels.rel >= 0]  # unpooled documents remain; the default p is 1
    ev = evaluate(no_minus, run, ["AP", "subAP", "subAP(p=1)"])
    np.testing.assert_allclose(ev.values[..., 1], ev.values[..., 0], rtol=1e-14, atol=0)
    np.testing.assert_allclose(ev.values[..., 2], ev.values[..., 0], rtol=1e-14, atol=0)


def test_default_p_is_the_judged_fraction_of_each_pool():
    qrels, run = make_collection(4)
    table = load_qrels(qrels)
    col = Collection.build(load_runs(run), [table])
    judgments = Judgments.from_qrels(col, table)
    frac = pool_fraction(judgments, col.n_topics)
    for t, qid in enumerate(col.topics):
        rel = qrels[qrels.qid == qid].rel
        assert frac[t] == (pytest.approx((rel >= 0).sum() / len(rel)) if len(rel) else 1.0)
    assert len(set(frac.round(12))) > 2
    ev = evaluate(qrels, run, ["subAP"])
    for t in range(col.n_topics):
        fixed = evaluate(qrels, run, [f"subAP(p={float(frac[t])!r})"])
        np.testing.assert_array_equal(ev.values[:, t, 0], fixed.values[:, t, 0])


def exact_expected_precision(r, n, nd, p: Fraction) -> Fraction:
    return sum(
        math.comb(nd, i) * p**i * (1 - p) ** (nd - i) * Fraction(r, r + n + i)
        for i in range(nd + 1)
    )


@pytest.mark.parametrize("p", [Fraction(1, 1000), Fraction(3, 10), Fraction(1, 2),
                               Fraction(997, 1000)])
@pytest.mark.parametrize("r,n,nd", [(1, 0, 1), (2, 5, 40), (7, 0, 150)])
def test_expected_precision_exact(r, n, nd, p):
    assert expected_precision(r, n, nd, float(p)) == pytest.approx(
        float(exact_expected_precision(r, n, nd, p)), rel=1e-14
    )


@pytest.mark.parametrize("p", [1e-12, 1e-3, 0.3, 0.5, 0.999, 1 - 1e-12])
@pytest.mark.parametrize("r,n", [(1, 0), (40, 200)])
def test_expected_precision_large_nd(r, n, p):
    nd = 1000
    got = expected_precision(r, n, nd, p)
    assert np.isfinite(got) and r / (r + n + nd) <= got <= r / (r + n)
    # reference: the pmf in log space with lgamma over all terms
    logs = [
        math.lgamma(nd + 1) - math.lgamma(i + 1) - math.lgamma(nd - i + 1)
        + i * math.log(p) + (nd - i) * math.log1p(-p)
        for i in range(nd + 1)
    ]
    ref = math.fsum(math.exp(v) * r / (r + n + i) for i, v in enumerate(logs))
    assert got == pytest.approx(ref, rel=1e-10)


def test_subap_with_1000_unpooled_documents():
    docs = [f"u{i:04d}" for i in range(1000)] + ["a"]
    q, run = frames(docs, {"a": 1, "x": -1})  # default p = 1/2
    value = evaluate(q, run, ["subAP"]).values[0, 0, 0]
    assert 0 <= value <= 1
    # E[1 / (1 + X)], X ~ Bin(1000, 1/2) = (1 - 2^-1001) / (1001 / 2)
    assert value == pytest.approx((1 - 2.0**-1001) / 500.5, rel=1e-13)


@pytest.mark.parametrize("seed", [0, 1])
def test_subap_is_the_mean_ap_over_random_subcollections(seed):
    """Keep each unpooled document with probability p, drop -1 documents, compute AP."""
    rng = np.random.default_rng(seed)
    states = rng.choice(list("RNUUUX"), size=40)
    p, trials = 0.35, 20000
    docs = [f"d{i}" for i in range(len(states))]
    qrels = {d: {"R": 1, "N": 0, "X": -1}[s] for d, s in zip(docs, states) if s != "U"}
    qrels["e"] = 1
    q, run = frames(docs, qrels)
    sub = evaluate(q, run, [f"subAP(p={p})"]).values[0, 0, 0]
    R = (states == "R").sum() + 1
    kept = rng.random((trials, len(states))) < p
    kept |= np.isin(states, ["R", "N"])  # judged documents always stay
    kept &= states != "X"
    rel = (states == "R") & kept
    rank = np.cumsum(kept, axis=1)
    found = np.cumsum(rel, axis=1)
    ap = np.where(rel, found / np.maximum(rank, 1), 0.0).sum(axis=1) / R
    se = ap.std(ddof=1) / np.sqrt(trials)
    assert se > 0 and abs(ap.mean() - sub) < 3 * se


# ---- names -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name",
    ["condensed(AP)", "induced(nDCG@10)", "induced(P@10)", "condensed(nDCG(gains={1:3,2:9}))",
     "induced(IPrec@0.1)", "condensed(GMAP)", "subAP", "subAP(p=0.3)", "subAP(p=1)"],
)
def test_names_round_trip(name):
    (m,) = parse(name)
    assert m.name == name and m.trec_name == name
    assert parse(m.name) == [m] and hash(parse(m.name)[0]) == hash(m)


def test_trec_syntax_inside_the_wrapper():
    assert parse("induced(map)") == parse("induced(AP)")
    assert parse("condensed(ndcg_cut.10)") == [Condensed(parse("nDCG@10")[0])]
    assert parse("induced(P_10)") == [Induced(parse("P@10")[0])]
    assert parse("induced(AP)") != parse("condensed(AP)")


@pytest.mark.parametrize(
    "name, message",
    [
        ("induced(nope)", "unknown measure 'nope'"),
        ("induced()", "needs a measure"),
        ("condensed", "needs a measure"),
        ("induced(P)", "names 9 measures"),
        ("induced(P@5,P@10)", "unknown measure"),
        ("condensed(AP)@10", "no @ parameter"),
        ("condensed(induced(AP))", "this is condensed(AP)"),
        ("induced(induced(P@5))", "this is induced(P@5)"),
        ("induced(relstring)", "string measures"),
        ("condensed(runid)", "string measures"),
        ("subAP(p=1.5)", "p must be"),
        ("subAP(q=1)", "no parameter"),
    ],
)
def test_bad_names(name, message):
    with pytest.raises(MeasureError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(name)


def test_estimator_families():
    assert ESTIMATORS == {
        "infAP", "xinfAP", "infNDCG", "iP", "inum_rel", "inum_rel_ret", "iIPrec", "statAP",
        "statAP_var", "statRprec", "statP", "statnum_rel", "subAP", "ht", "ppi", "auto",
    }


#: families whose names need an inner measure
EXAMPLE = {"ht": "ht(AP)", "ppi": "ppi(AP)", "auto": "auto(AP)"}


@pytest.mark.parametrize("family", sorted(ESTIMATORS))
def test_estimators_cannot_be_wrapped(family):
    inner = parse(EXAMPLE.get(family, family))[0]
    for wrapper in (Induced, Condensed):
        with pytest.raises(MeasureError, match="estimator"):
            wrapper(inner)
    with pytest.raises(MeasureError, match="estimator"):
        parse(f"induced({inner.name})")
