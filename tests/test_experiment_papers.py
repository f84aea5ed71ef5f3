"""Paper 002's and paper 004's experiments (irsample.experiments.voorhees14 / .residuals) on
the small collection of tests/experiment_data.py, and paper 002's pair classes by hand."""

from __future__ import annotations

import numpy as np
import pytest

from irsample.experiments import CollectionFiles
from irsample.experiments.residuals import COLUMNS, run_residuals
from irsample.experiments.voorhees14 import run_voorhees14
from irsample.stats.pairs import (
    FALSE_ALARM,
    INVERSION,
    MISS,
    TRUE_NEGATIVE,
    TRUE_POSITIVE,
    PairCounts,
    classify,
    pair_accuracy,
)

from .experiment_data import write_collection


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    paths = write_collection(tmp_path_factory.mktemp("papers"))
    return CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"],
                              groups=paths["groups"])


def test_voorhees14_tables(files, tmp_path):
    res = run_voorhees14(files, trials=2, seed=3, workers=1, executor="sequential",
                         strategies={"pool10": "1-10:1", "2strata": "1-5:1,6-20:0.5"},
                         out=tmp_path)
    acc = res["accuracy"]
    assert list(acc.index) == ["pool10", "2strata"]
    assert set(acc.columns.get_level_values(0)) == {"mean", "min", "max"}
    assert set(acc.columns.get_level_values(1)) == {"MAP", "nDCG", "P@10"}
    assert ((acc.values >= 0) & (acc.values <= 1)).all()
    assert list(res["classes"].columns) == [
        "true_positive", "true_negative", "miss", "false_alarm", "inversion"]
    # every pair of the 8 runs is classified once per trial and measure
    assert np.allclose(res["classes"].sum(axis=1), 8 * 7 / 2)
    assert list(res["r_correlation"].columns) == ["mean", "min", "max"]
    r_hat = res["r_hat"]
    assert list(r_hat.columns) == ["trial", "strategy", "topic", "r_hat", "r_true", "r_qrels"]
    assert len(r_hat) == 2 * 2 * 6
    # a pool judges everything it holds: R^ is the pool's relevant count, at most the half's
    # depth-100 pool's R (the frame's), itself at most the qrels' R
    pool = r_hat[r_hat.strategy == "pool10"]
    assert (pool.r_hat <= pool.r_true).all() and (r_hat.r_true <= r_hat.r_qrels).all()
    assert (r_hat.r_true < r_hat.r_qrels).any()  # a half's pool misses relevant documents
    qrels = res["accuracy_qrels"]
    assert list(qrels.index) == ["pool10", "2strata"]
    assert ((qrels.values >= 0) & (qrels.values <= 1)).all()
    assert (res["judged"].judged_per_topic <= res["judged"].pool_per_topic + 1e-9).all()
    assert all(p.exists() for p in res["figures"])


def test_residuals_tables_and_monotone_intervals(files, tmp_path):
    sizes = (10, 40, 100, None)
    res = run_residuals(files, trials=2, seed=1, sizes=sizes, runs="all", out=tmp_path)
    table = res["trials"]
    assert list(table.columns) == list(COLUMNS)
    assert set(table.point) == {"XS", "XB", "XI", "XM", "interval", "interval_mean"}
    assert res["runs"] == 8
    assert table.separability.between(0, 1).all()
    assert all(p.exists() for p in res["figures"])
    recant = res["recant"]
    assert list(recant.columns) == ["significant", "recanted", "fraction"]
    assert (recant.recanted <= recant.significant).all()
    # nested subsets: judging more documents only narrows [B, T], so the pessimistic
    # comparison decides at least the cells it decided before
    for (trial, measure), g in table[table.point == "interval"].groupby(["trial", "measure"]):
        sep = g.sort_values("judgments").separated.to_numpy()
        assert (np.diff(sep) >= 0).all(), (trial, measure, sep)
    assert table[table.point == "interval"].separated.max() > 0


def test_residuals_constructed_case_all_judged(files):
    # pooled runs with every judgment and P@10 within the pool depth (20): B = T, so the
    # interval comparison decides every (pair, topic) whose P@10 differ and XS = XI = XB
    res = run_residuals(files, trials=1, sizes=(0, None), runs="pooled")
    t = res["trials"]
    full = t[(t.judgments == t.judgments.max()) & (t.measure == "P@10")].set_index("point")
    assert full.separability["XS"] == full.separability["XB"] == full.separability["XI"]
    empty = t[(t.judgments == 0) & (t.measure == "P@10")].set_index("point")
    assert empty.separated["interval"] == 0  # nothing judged: every interval is [0, 1]
    assert full.separated["interval"] > 0


def test_pair_classes_by_hand_feed_accuracy():
    # five pairs, one of each class
    truth_sig = [True, False, True, False, True]
    truth_sign = [1, 1, -1, 1, 1]
    est_sig = [True, False, False, True, True]
    est_sign = [1, -1, -1, 1, -1]
    codes = classify(truth_sig, truth_sign, est_sig, est_sign)
    assert list(codes) == [TRUE_POSITIVE, TRUE_NEGATIVE, MISS, FALSE_ALARM, INVERSION]
    counts = PairCounts.of(codes)
    assert counts.accuracy == pytest.approx(2 / (2 + 1 + 1 + 2))
    # values: run 0 is clearly better than 1 and 2 on every topic; 1 and 2 are alike
    rng = np.random.default_rng(0)
    base = rng.random(20)
    truth = np.stack([base + 0.5, base + rng.normal(0, 0.01, 20), base + rng.normal(0, 0.01, 20)])
    same = pair_accuracy(truth, truth)
    assert same.miss == same.false_alarm == same.inversion == 0 and same.accuracy == 1
    flipped = pair_accuracy(truth, -truth)  # every significant pair turns round
    assert flipped.inversion == same.true_positive >= 2
    assert flipped.accuracy == pytest.approx(
        same.true_negative / (same.true_negative + 2 * flipped.inversion))


def test_four_strata_design_shares_and_tables(files):
    from irsample.experiments.four_strata import four_strata_design, run_four_strata

    best = np.concatenate([np.arange(1, 101)] * 4).astype(float)  # 4 documents per rank
    four, flat, fraction = four_strata_design(best, 5)
    rates = [s.rate for s in four.strata]
    sizes = [4 * (s.last - s.first + 1) for s in four.strata]
    assert rates[0] == 1 and sizes[0] == 20
    expected = [sz * r for sz, r in zip(sizes[1:], rates[1:])]
    # the lower strata draw as many documents as the depth-5 pool holds, 3 : 1.5 : 1
    assert sum(expected) == pytest.approx(20, rel=1e-4)
    assert np.allclose(np.array(expected) / expected[-1], [3, 1.5, 1], rtol=1e-4)
    assert fraction == pytest.approx(40 / 400)
    res = run_four_strata(files, trials=2, workers=1, executor="sequential", depths=(2, 5))
    summary = res["summary"]
    assert list(summary.columns) == ["judged", "tau", "rms", "rho", "judged_fraction"]
    assert set(summary.index.get_level_values("measure")) == {
        "xinfAP", "infNDCG", "infAP", "nDCG"}
    assert list(res["designs"].index) == [2, 5]


def test_residuals_on_qrels_of_relevant_documents_judge_every_retrieved_one():
    """CACM's qrels list relevant documents alone and read as complete (unlisted = non-relevant):
    its frame over every qrels entry holds every retrieved document too, graded 0, so all the
    judgments leave no residual within P@10 and decide the pairs whose P@10 differ; the frame
    was the relevant documents alone, every other document unknown, and the intervals never
    separated a pair (0 in every cell)."""
    from irsample.commands.demo import bundled
    from irsample.experiments.data import load

    qrels, runs = bundled("cacm")
    cacm = CollectionFiles.of(runs, qrels)
    data = load(cacm)
    everyone = tuple(range(len(data.info.names)))
    frame = data.frame(everyone, float("inf"))
    retrieved = data.frame(everyone, 1000.0)
    assert (frame.rel == 0).sum() == (retrieved.rel == 0).sum() > 10 * (frame.rel > 0).sum()
    res = run_residuals(cacm, trials=1, sizes=(None,), runs="all")
    full = res["trials"][res["trials"].measure == "P@10"].set_index("point")
    assert full.separability["interval"] > 0.4  # the (pair, topic) cells whose P@10 differ
    assert full.separability["XS"] == full.separability["XI"] == full.separability["XB"]


def test_voorhees14_reads_the_topics_the_qrels_name(tmp_path):
    """Runs that answer a topic the qrels do not judge (CACM: 12 of 64): R^ has no value there,
    so the topic is left out of the R^ rows, and the correlation of R^ with R is a number
    (it was NaN for every strategy on CACM)."""
    paths = write_collection(tmp_path / "c")
    kept = [line for line in paths["qrels"].read_text().splitlines(True)
            if not line.startswith("q5 ")]
    paths["qrels"].write_text("".join(kept))
    files = CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"],
                               groups=paths["groups"])
    res = run_voorhees14(files, trials=1, seed=3, workers=1, executor="sequential",
                         strategies={"pool10": "1-10:1"})
    assert "q5" not in set(res["r_hat"].topic) and len(set(res["r_hat"].topic)) == 5
    assert np.isfinite(res["r_correlation"].values).all()
