"""Covariance-aware variances of infAP and xinfAP (irsample/measures/incomplete/ap_variance.py).

- By hand: V1, V2 with the covariance of the two estimated precisions, and V12 on the small
  ranking of test_variance.py's infAP example.
- Against independent implementations: the linearised variance against a direct O(L^2) one
  (explicit pairs of cut-offs and explicit influence values g_e), the jackknife against brute
  force (the estimate recomputed with each judged document made unjudged).
- Exact enumeration: every SRS of 4 of a pool of 8 (70 samples, one topic each), the variance of
  the 70 estimates against the mean of each method's estimated variance.
- Complete judgments: 0; one stratum: xinfAP's variances equal infAP's up to smoothing.
- The option: ``variance=`` in evaluate_collection and irsample.estimate, ``--variance``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import irsample
from irsample.cli import main
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.io.trec import QrelsTable
from irsample.measures import parse_all
from irsample.measures.base import DEFAULT_VARIANCE, VARIANCE_METHODS
from irsample.model import Collection, Judgments

from .test_estimator_invariants import collection
from .test_variance import run_frame, sampled_table

EPS = 1e-5


def topics_of_samples(ranking, rel, samples, strata=None):
    """One topic per sample: the same ranking and pool, judged = the sample (others -1)."""
    docs = list(rel)
    qid = np.repeat([f"t{i:05d}" for i in range(len(samples))], len(docs))
    values = [rel[d] if d in smp else -1 for smp in samples for d in docs]
    table = load_qrels(pd.DataFrame({"qid": qid, "docno": docs * len(samples), "rel": values}))
    if strata is not None:
        names = [d.decode() if isinstance(d, bytes) else d for d in table.docno.to_pylist()]
        labels = [strata[d] for d in names]
        table = QrelsTable(table.source, table.qid, table.docno, table.rel, table.lineno,
                           stratum=pa.array(labels))
    runs = load_runs(pd.concat([run_frame(ranking, qid=f"t{i:05d}") for i in range(len(samples))]))
    col = Collection.build(runs, [table])
    return col, Judgments.from_qrels(col, table)


def by_method(col, judgments, names):
    """{method: Evaluation} for every variance method."""
    return {m: evaluate_collection(col, judgments, parse_all(names), ci=0.95, variance=m)
            for m in VARIANCE_METHODS}


def test_covariance_terms_by_hand():
    """test_variance.py's ranking a(rel) x(-1) b(0) c(rel) y(-1) d(rel); e relevant judged, not
    retrieved; z pooled unjudged; f judged non-relevant. N = 9, n = 6, W = 3/2, R^ = 6."""
    qrels = pd.DataFrame({"qid": "1", "docno": list("axbcydezf"),
                          "rel": [1, -1, 0, 1, -1, 1, 1, -1, 0]})
    col = Collection.build(load_runs(run_frame(list("axbcyd"))), [load_qrels(qrels)])
    judgments = Judgments.from_qrels(col, load_qrels(qrels))
    ev = by_method(col, judgments, ["infAP"])
    pc4 = 1 / 4 + (3 / 4) * (1 + EPS) / (2 + 2 * EPS)  # above c: d = 3, m = 2, q = 1
    pc6 = 1 / 6 + (5 / 6) * (2 + EPS) / (3 + 2 * EPS)  # above d: d = 5, m = 3, q = 2
    theta = (1 + pc4 + pc6) / 4
    w, n, size, r_hat = 1.5, 6, 9, 6.0
    # V1: sample variance of a = rel (PC - theta) over the 6 judged documents (e: PC = 0)
    a = np.array([1 - theta, pc4 - theta, pc6 - theta, -theta, 0.0, 0.0])
    v1 = size**2 * (1 - n / size) * a.var(ddof=1) / n
    # V2: Cochran's unbiased var(p^) = (1 - m/d) p (1 - p)/(m - 1) at each cut-off, and
    # cov(p^_4, p^_6) = (m_4/m_6) var(p^_4): the 2 documents judged above c are among the 3 above d
    var4 = (1 - 2 / 3) * 0.5 * 0.5 / 1
    var6 = (1 - 3 / 5) * (2 / 3) * (1 / 3) / 2
    cov46 = (2 / 3) * var4
    v2 = w**2 * ((3 / 4) ** 2 * var4 + (5 / 6) ** 2 * var6 + 2 * (3 / 4) * (5 / 6) * cov46)
    # V12: sum over cut-offs k of (W/k)(d/m)(1 - p)(sum of PC of cut-offs above - theta q)
    x = (w / 4) * (3 / 2) * (1 - 1 / 2) * (1 - theta) + (w / 6) * (5 / 3) * (1 - 2 / 3) * (
        1 + pc4 - 2 * theta)
    v12 = w * (1 - n / size) * n / (n - 1) * x
    expected = (v1 + v2 + 2 * v12) / r_hat**2
    assert ev["covariance"].values[0, 0, 0] == pytest.approx(theta, rel=1e-12)
    assert ev["covariance"].variance[0, 0, 0] == pytest.approx(expected, rel=1e-10)
    # the covariance and the cross term are what the paper leaves out: both positive here
    assert cov46 > 0 and v12 > 0
    assert ev["covariance"].variance[0, 0, 0] > ev["paper"].variance[0, 0, 0]


def direct_linearised(ranking, rel, stratum, sampled, level=1, c=None):
    """The linearised variance with explicit pairs and explicit g_e (O(L^2)); c = infAP's
    smoothing (one stratum) or None (xinfAP's per-stratum smoothing)."""
    labels = sorted(set(stratum.values())) if c is None else ["all"]
    st = {doc: (labels.index(stratum[doc]) if c is None else 0) for doc in rel}
    S = len(labels)
    size, n, r = np.zeros(S), np.zeros(S), np.zeros(S)
    for doc in rel:
        size[st[doc]] += 1
        if doc in sampled:
            n[st[doc]] += 1
            r[st[doc]] += rel[doc] >= level
    w = np.where(n > 0, size / np.maximum(n, 1), 0.0)
    r_hat = (w * r).sum()
    d, m, q = np.zeros(S), np.zeros(S), np.zeros(S)
    cuts, pcs, rank = [], {}, {}
    for i, doc in enumerate(ranking):
        k = i + 1
        rank[doc] = k
        if doc in sampled and rel[doc] >= level:
            if d.sum() == 0:
                pc = 1 / k
            elif c is None:
                pc = 1 / k + (d * (q + 1e-5) / (m + 3e-5)).sum() / k
            else:
                pc = 1 / k + d.sum() * (q.sum() + EPS) / (m.sum() + c * EPS) / k
            cuts.append((k, st[doc], d.copy(), m.copy(), q.copy()))
            pcs[doc] = pc
        if doc in rel:
            d[st[doc]] += 1
            if doc in sampled:
                m[st[doc]] += 1
                q[st[doc]] += rel[doc] >= level
    theta = sum(w[st[doc]] * pc for doc, pc in pcs.items()) / r_hat
    var_p = [np.where(cm > 1, (1 - cm / np.maximum(cd, 1)) * (cq / np.maximum(cm, 1))
                      * (1 - cq / np.maximum(cm, 1)) / np.maximum(cm - 1, 1), 0.0)
             for _, _, cd, cm, cq in cuts]
    v2 = 0.0
    for x, (j, sj, dj, mj, _) in enumerate(cuts):
        for k, sk, dk, mk, _ in cuts:
            if j <= k:  # cov(PC_j, PC_k) = (1/(jk)) sum_u d_j d_k (m_j/m_k) var(p^_j)
                ratio = np.where(mk > 0, mj / np.maximum(mk, 1), 0.0)
                cov = (dj * dk * ratio * var_p[x]).sum() / (j * k)
                v2 += (1 if j == k else 2) * w[sj] * w[sk] * cov
    v1 = v12 = 0.0
    for u in range(S):
        judged = [doc for doc in rel if doc in sampled and st[doc] == u]
        a = np.array([(pcs.get(doc, 0.0) - theta) * (rel[doc] >= level) for doc in judged])
        g = np.zeros(len(judged))  # W_e g_e
        for i, doc in enumerate(judged):
            for k, _, dk, mk, qk in cuts:
                if doc in rank and rank[doc] < k:
                    sk = cuts[[cut[0] for cut in cuts].index(k)][1]
                    g[i] += w[sk] / k * dk[u] / mk[u] * ((rel[doc] >= level) - qk[u] / mk[u])
        if 2 <= n[u] < size[u]:
            assert abs(g.sum()) < 1e-9  # the g_e of a stratum sum to 0
            v1 += size[u] ** 2 * (1 - n[u] / size[u]) * a.var(ddof=1) / n[u]
            v12 += size[u] ** 2 * (1 - n[u] / size[u]) / n[u] * (a @ (g / w[u])) / (n[u] - 1)
    return theta, max(v1 + v2 + 2 * v12, 0.0) / r_hat**2


def brute_jackknife(col_of, rel, stratum, sampled, name):
    """Stratified delete-one jackknife by re-evaluating with each judged document unjudged."""
    theta = {}
    for doc in sorted(sampled):
        col, judgments = col_of(sampled - {doc})
        theta[doc] = evaluate_collection(col, judgments, parse_all([name])).values[0, 0, 0]
    total = 0.0
    for u in set(stratum.values()):
        size = sum(1 for doc in rel if stratum[doc] == u)
        vals = np.array([theta[doc] for doc in sampled if stratum[doc] == u])
        if 2 <= len(vals) < size:
            total += (1 - len(vals) / size) * (len(vals) - 1) / len(vals) * (
                (vals - vals.mean()) ** 2).sum()
    return total


@pytest.mark.parametrize("seed", range(4))
def test_kernels_against_direct_implementations(seed):
    rng = np.random.default_rng(seed)
    docs = [f"p{i}" for i in range(30)]
    rel = {doc: int(g) for doc, g in zip(docs, rng.choice([0, 0, 1, 2], len(docs)))}
    two = {doc: "a" if i < 8 else "b" for i, doc in enumerate(docs)}
    ranking = list(rng.permutation(docs[:24])) + [f"u{i}" for i in range(6)]
    rng.shuffle(ranking)
    sampled = set(docs[:8][: 3 + seed]) | set(rng.choice(docs[8:], 9, replace=False))

    def col_of(smp):
        return topics_of_samples(ranking, rel, [smp], strata=two)

    col, judgments = col_of(sampled)
    ev = by_method(col, judgments, ["infAP", "infAP(c=1.5)", "xinfAP"])
    for j, (name, c) in enumerate([("infAP", 2.0), ("infAP(c=1.5)", 1.5), ("xinfAP", None)]):
        level = 1
        theta, var = direct_linearised(ranking, rel, two, sampled, level, c)
        assert ev["covariance"].values[0, 0, j] == pytest.approx(theta, rel=1e-12)
        assert ev["covariance"].variance[0, 0, j] == pytest.approx(var, rel=1e-9, abs=1e-15)
        one = {doc: "all" for doc in rel} if c is not None else two
        jack = brute_jackknife(col_of, rel, one, sampled, name)
        assert ev["jackknife"].variance[0, 0, j] == pytest.approx(jack, rel=1e-9, abs=1e-15)


#: the exact-enumeration pool: 5 relevant and 3 non-relevant documents, so that every sample of
#: 4 holds a relevant one; unpooled documents interleaved
POOL = dict(zip("abcdefgh", [1, 1, 0, 1, 0, 1, 1, 0]))
RANKING = ["a", "u1", "b", "c", "u2", "d", "e", "u3", "f", "g", "h"]


def exact_ratios(names, ranking=RANKING, pool=POOL, strata=None, sizes=None):
    """Mean estimated variance / exact variance over every sample, per method and measure."""
    if strata is None:
        samples = [set(s) for s in itertools.combinations(pool, 4)]
    else:
        groups = [[d for d in pool if strata[d] == g] for g in sorted(sizes)]
        samples = [set(a) | set(b) for a, b in itertools.product(
            *(itertools.combinations(grp, sizes[g]) for grp, g in zip(groups, sorted(sizes))))]
    col, judgments = topics_of_samples(ranking, pool, samples, strata)
    ev = by_method(col, judgments, names)
    exact = ev["paper"].values[0].var(axis=0)  # over the equally likely samples
    ratios = {m: e.variance[0].mean(axis=0) / exact for m, e in ev.items()}
    return len(samples), exact, ratios


def test_exact_enumeration_infap():
    """SRS of 4 of 8: exact variance of infAP 0.0407 (c = 2) and 0.0392 (c = 1.5); mean estimated
    variance / exact: jackknife 1.19 / 1.26, covariance 0.37 / 0.40, paper 0.22 / 0.23.

    With 1 to 4 judged relevant documents the estimator is far from linear (the smoothed 1/c
    whenever nothing above a cut-off is judged, and the ratio 1/r), so the linearised forms miss
    most of the variance even with the covariances; the jackknife follows both and is within 30%
    (conservative). The covariance terms recover part of what the paper's formula misses."""
    count, exact, ratio = exact_ratios(["infAP", "infAP(c=1.5)"])
    assert count == 70
    np.testing.assert_allclose(exact, [0.04069, 0.03922], rtol=1e-3)
    assert ((ratio["jackknife"] > 1.0) & (ratio["jackknife"] < 1.3)).all()
    assert (ratio["covariance"] > 1.6 * ratio["paper"]).all()
    assert (ratio["covariance"] < 1.0).all()


def test_exact_enumeration_xinfap_two_strata():
    """xinfAP with the top 4 pool documents judged completely and an SRS of 4 of the other 8
    (70 samples): exact variance 0.0133; mean estimated / exact: jackknife 0.96, covariance 0.38,
    paper 0.23. The jackknife within 30%, the covariance between the paper and the exact."""
    pool = {**{f"t{i}": g for i, g in enumerate([1, 1, 0, 1])}, **POOL}
    strata = {d: ("1top" if d.startswith("t") else "2rest") for d in pool}
    ranking = ["t0", "a", "t1", "b", "u1", "c", "t2", "d", "e", "t3", "u2", "f", "g", "h"]
    count, exact, ratio = exact_ratios(["xinfAP"], ranking, pool, strata, {"1top": 4, "2rest": 4})
    assert count == 70
    assert exact[0] == pytest.approx(0.01333, rel=1e-3)
    assert 0.7 < ratio["jackknife"][0] < 1.3
    assert 1.5 * ratio["paper"][0] < ratio["covariance"][0] < 1.0


@pytest.mark.parametrize("seed", range(3))
def test_complete_judgments_zero(seed):
    q, runs = collection(seed)
    col = Collection.build(runs, [load_qrels(q)])
    judgments = Judgments.from_qrels(col, load_qrels(q))
    for method in ("covariance", "jackknife"):
        ev = evaluate_collection(col, judgments, parse_all(["infAP", "infAP(c=1.5)", "xinfAP"]),
                                 ci=0.95, variance=method)
        assert np.nanmax(np.abs(ev.variance)) == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_one_stratum_xinfap_equals_infap(seed):
    """One stratum: the same estimator up to the smoothing: with nothing judged above a cut-off
    the precision above is taken as 1/2 by infAP (c = 2) and 1/3 by xinfAP (3e-5 / 1e-5). The
    linearised variances agree to ~1e-6 except where that happens (within 4%); the jackknife's
    deletions reach it more often (median 1.5-2%, all within 5%)."""
    q, runs = collection(seed, n_docs=300, depth=200)
    table = sampled_table(load_qrels(q), np.random.default_rng(seed), 0.3)
    col = Collection.build(runs, [table])
    judgments = Judgments.from_qrels(col, table)
    for method in ("covariance", "jackknife"):
        ev = evaluate_collection(col, judgments, parse_all(["infAP", "xinfAP"]), ci=0.95,
                                 variance=method)
        infap, xinfap = ev.variance[..., 0], ev.variance[..., 1]
        np.testing.assert_allclose(xinfap, infap, rtol=0.05, atol=1e-12)
        if method == "covariance":
            assert np.median(np.abs(xinfap / infap - 1)) < 1e-5
        assert (infap > 0).all()


def test_methods_order_on_a_synthetic_collection():
    """On a larger sample the covariances make the linearised variance larger than the paper's."""
    q, runs = collection(5, n_docs=400, depth=200)
    table = sampled_table(load_qrels(q), np.random.default_rng(5), 0.3)
    col = Collection.build(runs, [table])
    ev = by_method(col, Judgments.from_qrels(col, table), ["infAP", "xinfAP"])
    assert (ev["covariance"].summary_variance > ev["paper"].summary_variance).all()
    assert ev["jackknife"].variance_method == "jackknife"


def test_option_in_api_and_cli(tmp_path, capsys):
    q, _ = collection(4, n_topics=3)
    rel = np.where(np.random.default_rng(2).random(len(q)) < 0.5, q.rel, -1)
    qrels = tmp_path / "sampled.qrels"
    qrels.write_text("".join(f"{t} 0 {d} {r}\n" for t, d, r in zip(q.qid, q.docno, rel)))
    run = tmp_path / "r.run"
    sub = q.groupby("qid").head(40)
    run.write_text("".join(f"{t} Q0 {d} {i} {40 - i % 40} r\n" for i, (t, d) in enumerate(
        zip(sub.qid, sub.docno))))
    est = {m: irsample.estimate(str(qrels), [str(run)], ["infAP"], variance=m)
           for m in VARIANCE_METHODS}
    assert est[DEFAULT_VARIANCE].variance_method == DEFAULT_VARIANCE == "jackknife"
    assert len({float(e.summary_variance[0, 0]) for e in est.values()}) == 3
    with pytest.raises(ValueError, match="variance must be one of"):
        irsample.estimate(str(qrels), [str(run)], ["infAP"], variance="bootstrap")
    limits = {}
    for m in VARIANCE_METHODS:
        assert main(["eval", str(qrels), str(run), "-m", "infAP", "--ci", "0.95",
                     "--variance", m, "--format", "tsv", "--places", "exact"]) == 0
        rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
        limits[m] = next(row for row in rows if row[1] == "all")[4:]
    assert limits["paper"] != limits["jackknife"]
    with pytest.raises(SystemExit):
        main(["eval", str(qrels), str(run), "-m", "infAP", "--ci", "0.95", "--variance", "x"])
