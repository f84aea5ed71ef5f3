"""Every registered measure through shared invariants, on synthetic collections.

- Names: each measure parses back from its irsample name and its trec_eval name.
- Documentation: each family has a docstring with its formula and a citation.
- No NaN (or inf) where trec_eval prints a number, on rankings with ties, -1 judgments,
  unpooled documents, topics without relevant documents, topics missing from a run.
- Ties: the values do not depend on the order of lines in the run file.
- -c: a topic missing from a run is evaluated as an empty ranking (0, but num_rel counts).
- Complete judgments: infAP equals AP within its smoothing bound (eps = 1e-5).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irsample.errors import MeasureError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.measures import REGISTRY, parse, parse_all
from irsample.model import Collection, Judgments

#: design-based estimators (tests/test_ht_estimators.py has their own checks); ht(num_rel), a
#: topic property like inum_rel, is left out of the topic-set checks
HT_NAMES = [
    "ht(AP)",
    "ht(AP@10)",
    "ht(nDCG)",
    "ht(nDCG@10)",
    "ht(P@5)",
    "ht(Rprec)",
    "ht(RBP(p=0.9))",
    "ht(R@10)",
]
ALL = parse_all(
    ["all_trec", "Judged@10", "Judged@5", "nDCG(gains={1:3,2:9,3:0.5})", "relstring", "yaap"]
    + ["dcg", "ideal_dcg", "dcg.1=3,2=-1", "ideal_dcg.1=3,2=9"]  # trec_eval 10, not all_trec
    + [
        "xinfAP",
        "infNDCG",
        "infNDCG(gains={1:1,2:5})",
        "iP",
        "inum_rel",
        "inum_rel_ret",
        "iprec_rec",
    ]
    + ["RBP(point=XM)", "RBP(p=0.5,gains={1:-1,3:7},point=XI)", "rbp.p=0.95,2=0.5"]
    + ["RBP(point=T)"]
    + ["SDCG@10", "SDCG(point=XI)@5", "SDCG(point=T)@30", "PInterval(point=XM)@10"]
    + ["PInterval(point=resid,E=0.2)@5", "PInterval(point=XB)@30"]
    + ["condensed(AP)", "condensed(nDCG@10)", "induced(AP)", "induced(P@10)", "induced(num_ret)"]
    + ["subAP", "subAP(p=0.3)"]
    + HT_NAMES
)
NUMERIC = [m for m in ALL if m.value_type != "str"]
UNBOUNDED = {
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "num_nonrel_judged_ret",
    "utility",
    "runid",
}
UNBOUNDED |= {"induced(NumRet)", "yaap"}  # yaap: a log-odds of AP
UNBOUNDED |= {"dcg", "ideal_dcg"}  # sums of gains, not normalised
# estimates that may leave [0, 1] by design (sampling error), and estimated counts
UNBOUNDED |= {"infNDCG", "inum_rel", "inum_rel_ret"} | set(HT_NAMES)


def make_collection(seed: int, n_topics=6, n_runs=4, n_docs=60, depth=25):
    """Random runs and graded qrels with ties, -1 entries, unpooled docs, odd topics."""
    rng = np.random.default_rng(seed)
    topics = [f"{100 + t}" for t in range(n_topics)]
    docs = [f"D{rng.integers(0, 10**6)}-{i}" for i in range(n_docs)]
    qrels = []
    for t, qid in enumerate(topics[:-1]):  # the last topic has no judgments at all
        judged = rng.choice(n_docs, size=n_docs // 2, replace=False)
        for d in judged:
            grade = int(rng.choice([-1, 0, 0, 0, 1, 2, 3])) if t != 1 else 0  # topic 1: no rel
            qrels.append((qid, docs[d], grade))
    runs = []
    for r in range(n_runs):
        for t, qid in enumerate(topics):
            if r == 0 and t == 2:
                continue  # run 0 misses topic 2
            chosen = rng.choice(n_docs, size=depth, replace=False)
            scores = rng.integers(0, 6, size=depth).astype(float)  # many ties
            for d, s in zip(chosen, scores):
                runs.append((qid, docs[d], s, f"run{r}"))
    q = pd.DataFrame(qrels, columns=["qid", "docno", "rel"])
    run = pd.DataFrame(runs, columns=["qid", "docno", "score", "tag"])
    return q, run


def evaluate_frames(qrels, run, measures, **options):
    qt = load_qrels(qrels)
    runs = load_runs(run)
    collection = Collection.build(runs, [qt])
    # the -1 entries carry no design: the ht/ppi estimators among ALL read them as uniform
    judgments = Judgments.from_qrels(collection, qt).assuming("uniform")
    return evaluate_collection(collection, judgments, measures, **options)


@pytest.fixture(scope="module")
def synthetic():
    return make_collection(7)


#: estimators that need prels (inclusion probabilities); see tests/test_estimator_invariants.py
NEEDS_PRELS = parse_all(["statAP", "statAP_var", "statRprec", "statP", "statnum_rel"])
#: estimators that need automatic labels; see tests/test_ppi_estimators.py
NEEDS_LABELS = parse_all(["ppi(AP)", "auto(nDCG@10)"])
#: design-based estimators of a sample (tests/test_ht_estimators.py)
NEEDS_LABELS += parse_all(["ht(AP)"])


def test_every_family_documented_and_round_trips():
    families = {type(m) for m in ALL + NEEDS_PRELS + NEEDS_LABELS}
    missing = set(REGISTRY.values()) - families
    assert not missing, f"families not covered by the invariant tests: {missing}"
    for cls in REGISTRY.values():
        assert cls.__doc__ and len(cls.__doc__.strip()) > 40, cls
        assert cls.citation, cls
    for m in ALL + NEEDS_PRELS + NEEDS_LABELS:
        assert parse(m.name) == [m], m.name
        assert parse(m.trec_name) == [m], m.trec_name


@pytest.mark.parametrize("typed, printed", [
    # trec_eval keeps the -m parameters as typed for these families (meas_init.c,
    # printable_params: te_init_meas_s_double_p_double and _p_pair)
    ("set_F.1", "set_F_1"), ("set_F.1.0", "set_F_1.0"), ("set_F.0.5", "set_F_0.5"),
    ("utility.2.0,-1,0,0", "utility_2.0,-1,0,0"), ("11pt_avg.0.25,0.5", "11pt_avg_0.25,0.5"),
    ("ndcg.1=3.0", "ndcg_1=3.0"), ("rbp.p=.8", "rbp_p=.8"), ("relstring.10", "relstring_10"),
    ("dcg.1=2", "dcg_1=2"),
    # cut-offs are printed one value each, formatted (append_long, append_double)
    ("P.05,10", "P_5"), ("Rprec_mult.0.2", "Rprec_mult_0.20"), ("ndcg_cut.010", "ndcg_cut_10"),
    # no parameters typed: the default name
    ("set_F", "set_F"), ("utility", "utility"), ("ndcg", "ndcg"),
])
def test_parameters_print_as_typed_where_trec_eval_does(typed, printed):
    m = parse(typed)[0]
    assert m.trec_name == printed
    assert parse(m.trec_name)[0].trec_name == printed  # the printed name reads back as itself
    assert parse(m.name) == [m]  # the spelling is not a parameter: equal measures stay equal
    # a family named with parameters replaces its default expansion, as in trec_eval
    assert [x.trec_name for x in parse_all([typed.split(".")[0], typed])
            if x.trec_family == m.trec_family] == [x.trec_name for x in parse(typed)]


@pytest.mark.parametrize(
    "options", [{}, {"complete": True}, {"judged_only": True}, {"rel_level": 2}, {"max_docs": 7}]
)
def test_no_nan_and_bounded(synthetic, options):
    qrels, run = synthetic
    measures = ALL
    if options.get("judged_only"):  # -J: the design-based estimators and the sample
        # estimators refuse it (test_assume.py)
        measures = [m for m in ALL if not (m.needs_inclusion or m.reads_unjudged_ranks)]
        with pytest.raises(MeasureError, match="-J"):
            evaluate_frames(qrels, run, ALL, **options)
    ev = evaluate_frames(qrels, run, measures, **options)
    vals = ev.values[ev.evaluated]
    for j, m in enumerate(ev.measures):
        if m.value_type == "str":
            continue
        col = vals[:, j]
        assert np.isfinite(col).all(), m.name
        assert np.isfinite(ev.summary[:, j]).all(), m.name
        if m.trec_family not in UNBOUNDED and m.trec_name not in UNBOUNDED:
            assert (col >= 0).all() and (col <= 1 + 1e-12).all(), (m.name, col.min(), col.max())


def test_topic_sets(synthetic):
    qrels, run = synthetic
    ev = evaluate_frames(qrels, run, ALL)
    topics = list(ev.topics)
    # no judgments -> never evaluated; run0 lacks topic 102 -> not evaluated without -c
    assert not ev.evaluated[:, topics.index("105")].any()
    assert not ev.evaluated[0, topics.index("102")] and ev.evaluated[1:, topics.index("102")].all()
    evc = evaluate_frames(qrels, run, ALL, complete=True)
    assert evc.evaluated[0, topics.index("102")]
    for j, m in enumerate(evc.measures):
        if m.value_type == "str":
            continue
        value = evc.values[0, topics.index("102"), j]
        if m.trec_name == "num_rel":
            assert value == (qrels[(qrels.qid == "102")].rel >= 1).sum()
        elif m.trec_name == "inum_rel":  # a topic property, like num_rel: R^ = r N / n
            rel = qrels[qrels.qid == "102"].rel
            assert value == pytest.approx((rel > 0).sum() * len(rel) / (rel >= 0).sum())
        elif m.trec_name == "num_q":
            assert value == 1
        elif m.trec_name == "utility":
            assert value == 0  # default coefficients: nothing retrieved
        elif m.trec_family == "ideal_dcg":  # a topic property too: trec_eval 10 evaluates
            # the missing topic as an empty ranking, whose ideal is the topic's
            assert value == evc.values[1, topics.index("102"), j] > 0
        elif m.trec_name == "yaap":  # log((1 + 0) / (1 + R - 0)) on the empty ranking
            assert value == pytest.approx(-np.log1p((qrels[qrels.qid == "102"].rel >= 1).sum()))
        else:
            assert value == 0, m.name
    # num_q and num_rel summaries count the empty topic with -c
    nq = [m.trec_name for m in evc.measures].index("num_q")
    assert evc.summary[0, nq] == ev.summary[0, nq] + 1


def test_line_order_and_ties_do_not_matter(synthetic):
    qrels, run = synthetic
    ev1 = evaluate_frames(qrels, run, NUMERIC)
    shuffled = run.sample(frac=1.0, random_state=3)
    ev2 = evaluate_frames(qrels.sample(frac=1.0, random_state=4), shuffled, NUMERIC)
    order = [ev2.run_names.index(name) for name in ev1.run_names]  # runs come in tag order
    np.testing.assert_array_equal(ev1.values, ev2.values[order])
    np.testing.assert_array_equal(ev1.summary, ev2.summary[order])


def test_dcg_and_ideal_dcg_are_ndcgs_parts(synthetic):
    """trec_eval 10's dcg and ideal_dcg are ndcg's numerator and denominator (one loop in
    m_ndcg.c), with the same gains; by hand on one ranking: grades 2, 0, 1 at ranks 1-3 and a
    judged grade-3 document unretrieved give DCG 2 + 1/2 and IDCG 3 + 2/log2(3) + 1/2."""
    qrels, run = synthetic
    for gains in ("", ".1=3,2=9,3=0.5"):
        ev = evaluate_frames(qrels, run, parse_all([f"dcg{gains}", f"ideal_dcg{gains}",
                                                    f"ndcg{gains}"]), complete=True)
        dcg, ideal, ndcg = (ev.values[:, :, j] for j in range(3))
        has = ev.evaluated & (ideal > 0)
        np.testing.assert_allclose(ndcg[has], dcg[has] / ideal[has], rtol=1e-12)
        assert (ndcg[ev.evaluated & (ideal == 0)] == 0).all()
    q = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c", "d"], "rel": [2, 0, 1, 3]})
    r = pd.DataFrame({"qid": "1", "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0], "tag": "t"})
    ev = evaluate_frames(q, r, parse_all(["dcg", "ideal_dcg"]))
    assert [m.trec_name for m in ev.measures] == ["dcg", "ideal_dcg"]
    assert ev.values[0, 0, 0] == pytest.approx(2 + 1 / 2)
    assert ev.values[0, 0, 1] == pytest.approx(3 + 2 / np.log2(3) + 1 / 2)


def test_ties_broken_by_docno_descending():
    qrels = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "rel": [1, 0, 0]})
    run = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "score": [1.0] * 3, "tag": "t"})
    ev = evaluate_frames(qrels, run, parse_all(["recip_rank", "P.1"]))
    # trec_eval order: c, b, a -> the relevant "a" is at rank 3
    assert ev.values[0, 0, 0] == pytest.approx(1 / 3)
    assert ev.values[0, 0, 1] == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_complete_judgments_infap_equals_ap(seed):
    rng = np.random.default_rng(seed)
    n_docs = 80
    rows, qrels = [], []
    for t in range(4):
        for d in range(n_docs):
            qrels.append((str(t), f"d{d}", int(rng.random() < 0.3)))
        for r in range(3):
            for d in rng.choice(n_docs, 40, replace=False):
                rows.append((str(t), f"d{d}", float(rng.random()), f"r{r}"))
    ev = evaluate_frames(
        pd.DataFrame(qrels, columns=["qid", "docno", "rel"]),
        pd.DataFrame(rows, columns=["qid", "docno", "score", "tag"]),
        parse_all(["map", "infAP"]),
    )
    ap, infap = ev.values[..., 0], ev.values[..., 1]
    # each term differs from the exact precision by at most eps / k, so |infAP - AP| <= eps
    assert np.nanmax(np.abs(ap - infap)) <= 1e-5
    assert np.nanmax(np.abs(ap - infap)) > 0  # the smoothing is really there


def test_bpref_defined_without_judged_nonrelevant():
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 1]})
    run = pd.DataFrame(
        {"qid": ["1"] * 3, "docno": ["x", "a", "y"], "score": [3.0, 2.0, 1.0], "tag": "t"}
    )
    ev = evaluate_frames(qrels, run, parse_all(["bpref"]))
    assert ev.values[0, 0, 0] == 0.5  # one of two relevant retrieved, no judged non-relevant
