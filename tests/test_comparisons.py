"""Tie-preserving twins and the type-I error experiment (irsample.experiments.comparisons) on
the small collection of tests/experiment_data.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irsample.design import SamplingFrame, uniform
from irsample.evaluation import evaluate_collection
from irsample.experiments import CollectionFiles, load
from irsample.experiments.comparisons import (
    add_twins,
    pooled_twin_frame,
    t_test,
    twin_order,
    type_one_error,
)
from irsample.measures import parse_all

from .experiment_data import write_collection


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    paths = write_collection(tmp_path_factory.mktemp("twins"))
    return CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"])


def test_twin_order_keeps_each_rank_grade():
    rng = np.random.default_rng(1)
    tdi = np.arange(50)
    grade = rng.integers(-1, 3, 50)
    twin = twin_order(tdi, grade, rng)
    assert sorted(twin) == list(tdi) and not np.array_equal(twin, tdi)
    assert np.array_equal(grade[twin], grade)  # document at rank i has the grade of rank i


def test_twins_have_the_frame_truth_of_their_runs_but_other_rankings(files):
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    runs = [0, 3, 7]
    twins = add_twins(data.collection, frame, runs, np.random.default_rng(2))
    assert twins.run_names[-3:] == ("r0~twin", "r3~twin", "r7~twin")
    same = SamplingFrame(twins, frame.topic, frame.tdi, frame.rel, frame.best_rank, frame.runs)
    measures = parse_all(["AP", "nDCG", "P@10", "nDCG@10", "Rprec", "recall@20"])
    values = evaluate_collection(twins, same.judgments(), measures).values
    n = data.collection.n_runs
    np.testing.assert_array_equal(values[runs], values[n:])
    for k, r in enumerate(runs):
        assert twins.ranking(n + k, 0) != twins.ranking(r, 0)
        assert sorted(twins.ranking(n + k, 0)) == sorted(twins.ranking(r, 0))
    # a sample sees them differently
    judged = uniform(0.3).sample(same, rng=3)
    est = evaluate_collection(twins, judged, parse_all(["xinfAP"])).values[:, :, 0]
    assert not np.allclose(est[runs], est[n:])


def test_twins_of_pooled_runs_are_pooled(files):
    """A twin moves a deep relevant document to a run's relevant rank; pooled like its run, the
    document's best rank (its stratum) follows."""
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    runs = [0, 3, 7]
    n = data.collection.n_runs
    twins = add_twins(data.collection, frame, runs, np.random.default_rng(2))
    second = n + np.arange(len(runs))
    pooled = pooled_twin_frame(frame, twins, np.array(runs), second)
    expect = [n + k for k, r in enumerate(runs) if r in frame.runs]
    assert pooled.runs == tuple(frame.runs) + tuple(expect)
    assert np.array_equal(pooled.tdi, frame.tdi) and np.array_equal(pooled.rel, frame.rel)
    rank = np.full(twins.n_tdi, np.inf)  # best rank over the pooled runs and twins, by hand
    for r in pooled.runs:
        for s in range(r * twins.n_topics, (r + 1) * twins.n_topics):
            ranked = twins.rank_tdi[twins.rank_offsets[s]:twins.rank_offsets[s + 1]]
            for i, d in enumerate(ranked):
                rank[d] = min(rank[d], i + 1)
    np.testing.assert_array_equal(pooled.best_rank, rank[pooled.tdi])
    assert np.all(pooled.best_rank <= frame.best_rank)
    assert np.any(pooled.best_rank < frame.best_rank)  # some documents moved up a stratum


def test_type_one_error_counts_rejections(files):
    out = type_one_error(files, {"uniform": uniform(0.4)}, {"t": t_test("xinfAP")}, trials=4,
                         seed=5, runs=[1, 2, 5, 6])
    s = out["summary"].iloc[0]
    assert s.pairs == 16 and 0 <= s.rejections <= 16
    assert s.type_one_error == pytest.approx(s.rejections / 16)
    assert out["max_truth_difference"] == 0.0
    again = type_one_error(files, {"uniform": uniform(0.4)}, {"t": t_test("xinfAP")}, trials=4,
                           seed=5, runs=[1, 2, 5, 6])
    assert again["trials"].equals(out["trials"])


def test_type_one_error_of_unflagged_pairs(files):
    """The ht comparison gives each pair's status: the share flagged and the type-I error of
    the others are counted from the trials' rows; the t-test gives none (NaN)."""
    from irsample.experiments.comparisons import ht_test

    out = type_one_error(files, {"uniform": uniform(0.4)},
                         {"t": t_test("xinfAP"), "ht": ht_test()}, trials=3, seed=5,
                         runs=[1, 2, 5, 6])
    s = out["summary"].set_index("test")
    t = out["trials"][out["trials"].test == "ht"]
    assert s.loc["ht", "flagged"] == pytest.approx(t.flagged.sum() / t.pairs.sum())
    unflagged = t.pairs.sum() - t.flagged.sum()
    if unflagged:
        assert s.loc["ht", "type_one_error_unflagged"] == pytest.approx(
            t.unflagged_rejections.sum() / unflagged)
    assert np.isnan(s.loc["t", "flagged"]) and np.isnan(s.loc["t", "type_one_error_unflagged"])
    assert np.isnan(s.loc["t", "unflagged_se"])
    # the standard errors count the trials (the pairs of a trial share its draw)
    rate = s.loc["ht", "type_one_error"]
    spread = t.rejections - rate * t.pairs
    assert s.loc["ht", "se"] == pytest.approx(np.sqrt(3 / 2 * np.sum(spread**2)) / t.pairs.sum())


def test_pair_accuracy_classifies_every_pair(files):
    from irsample.design import stratified
    from irsample.experiments.comparisons import pair_accuracy

    out = pair_accuracy(files, {"2strata": stratified("1-5:1,6-100:0.3"),
                                "all": stratified("1-100:1")},
                        {"t": t_test("xinfAP")}, trials=2, seed=3)
    s = out["summary"].set_index("strategy")
    n = 8 * 7 / 2
    classes = ["true_positive", "true_negative", "miss", "false_alarm", "inversion"]
    assert np.allclose(s[classes].sum(axis=1), n)
    # judging the whole frame decides exactly as the frame truth does
    assert s.loc["all", "accuracy"] == pytest.approx(1.0)
    assert 0 <= s.loc["2strata", "accuracy"] <= 1
    assert 0 <= s.loc["all", "accuracy_qrels"] <= 1


def test_ht_test_matches_compare_collection(files):
    from irsample.comparison import compare_collection
    from irsample.experiments.comparisons import ht_test

    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    judged = uniform(0.4).sample(frame, rng=4)
    first, second = np.array([0, 5, 3]), np.array([2, 1, 3 + 1])
    p, diff, flagged = ht_test("ht(AP)", "design")(data.collection, judged, first, second)
    table = compare_collection(data.collection, judged, "ht(AP)", correction="none")
    row = table[(table.run_a == "r1") & (table.run_b == "r5")].iloc[0]
    assert p[1] == pytest.approx(row.p) and diff[1] == pytest.approx(-row["diff"])
    assert flagged[1] == (row.status != "ok")
    assert np.all((p >= 0) & (p <= 1))


@pytest.mark.parametrize("param", [{"strategies": "2strata,nope"}, {"designs": "planned,bogus"},
                                   {"measures": "ht(nDCG),xinfAP"}])
def test_unknown_names_fail_before_the_first_trial(files, param, monkeypatch):
    """A typo in the recipe's parameters is reported before any draw (the type-I part of a
    TREC-8 run takes half an hour), naming the recipe and the known names."""
    from irsample.experiments import comparisons as recipe_module
    from irsample.experiments.recipes import Context, run_recipe

    def never(*args, **kwargs):
        raise AssertionError("a trial ran before the parameters were checked")

    monkeypatch.setattr(recipe_module, "type_one_error", never)
    with pytest.raises(ValueError, match="comparisons: .*(unknown strategies nope|not bogus|"
                                         "ht.M. names .* got xinfAP)"):
        run_recipe("comparisons", Context(files, trials=1, seed=1), param)


def test_comparisons_twins_on_a_shallow_pool(files, monkeypatch):
    """``depth``: the twins' designs are ci-coverage's on the depth-D pool (2strata: ranks 1 to
    D / 5 against the rest), and the type-I experiment builds the twins on that pool."""
    from irsample.experiments import comparisons as recipe_module
    from irsample.experiments.recipes import Context, run_recipe

    class Seen(Exception):
        pass

    seen = {}

    def record(files_, cells, tests, **kwargs):
        seen.update(kwargs, cells=cells)
        raise Seen

    monkeypatch.setattr(recipe_module, "type_one_error", record)
    with pytest.raises(Seen):
        run_recipe("comparisons", Context(files, trials=1, seed=1),
                   {"depth": "20", "designs": "2strata", "percents": "10"})
    assert seen["depth"] == 20
    (design,) = seen["cells"].values()
    assert [(s.first, s.last) for s in design.strata] == [(1, 4), (5, 20)]


def test_describe_says_above_the_level_beyond_two_monte_carlo_errors():
    """0.061 from 2 rejections in 33 pairs (se 0.030) was called "above the level" at 0.05;
    the largest error per test is shown with its Monte Carlo error, and called above the level
    only beyond two of them."""
    import pandas as pd

    from irsample.experiments.comparisons import describe

    summary = pd.DataFrame({"design": ["u", "s", "u", "s", "u"],
                            "test": ["ht(AP) topics", "ht(AP) topics", "t", "t", "z"],
                            "type_one_error": [0.061, 0.02, 0.09, 0.03, float("nan")],
                            "se": [0.030, 0.01, 0.01, 0.01, float("nan")]})
    assert describe(summary, 0.05) == ("ht(AP) topics: at most 0.061 +- 0.030; "
                                       "t: at most 0.090 +- 0.010 (above the level)")


def test_pair_records_recompute_the_type_one_errors(files):
    """``records``: one row per (design, trial, test, pair), from which the summary's type-I
    error, share flagged and unflagged type-I error are recomputed; the recipe writes them."""
    from irsample.experiments.comparisons import ht_test
    from irsample.experiments.recipes import Context, run_recipe

    records = []
    out = type_one_error(files, {"uniform": uniform(0.4)},
                         {"t": t_test("xinfAP"), "ht": ht_test()}, trials=3, seed=5,
                         runs=[1, 2, 5, 6], records=records)
    table = pd.concat(records, ignore_index=True)
    assert len(table) == 2 * 3 * 4
    assert set(table.run) == {"r1", "r2", "r5", "r6"}
    assert (table.twin == table.run + "~twin").all()
    assert table.loc[table.test == "t", "flagged"].isna().all()
    summary = out["summary"].set_index("test")
    for test, rows in table.groupby("test"):
        assert summary.loc[test, "type_one_error"] == pytest.approx(rows.rejected.mean(),
                                                                   rel=1e-12)
        assert rows.rejected.equals(rows.p < 0.05)
    ht = table[table.test == "ht"]
    assert summary.loc["ht", "flagged"] == pytest.approx(ht.flagged.astype(bool).mean())
    kept = ht[~ht.flagged.astype(bool)]
    if len(kept):
        assert summary.loc["ht", "type_one_error_unflagged"] == pytest.approx(
            kept.rejected.mean(), rel=1e-12)
    data = load(files)
    truth = evaluate_collection(data.collection, data.frame(data.info.pooled_runs, 100)
                                .judgments(), parse_all(["AP"])).summary[:, 0]
    index = {name: i for i, name in enumerate(data.collection.run_names)}
    np.testing.assert_allclose(table.truth, truth[table.run.map(index)], rtol=1e-12)
    report = run_recipe("comparisons", Context(files, trials=1, seed=1),
                        {"percents": "30", "designs": "uniform", "strategies": "2strata"})
    assert set(report.records.test) == {"t-test(xinfAP)", "ht(AP) design", "ht(AP) topics"}
    assert len(report.records) == 3 * load(files).collection.n_runs


def test_twins_under_importance_samples(files):
    """``designs=importance``: the type-I part on statAP's AP-prior samples, labelled by
    percent of each topic's pool."""
    from irsample.experiments.recipes import Context, run_recipe

    report = run_recipe("comparisons", Context(files, trials=1, seed=1),
                        {"percents": "30", "designs": "importance", "strategies": ""})
    assert set(report.results["design"]) == {"importance 30%"}
    assert report.results["type_one_error"].between(0, 1).all()


def test_no_strategies_runs_the_type_one_part_alone(files, tmp_path):
    """``strategies=`` (none): the type-I part alone, paper 002's accuracy protocol left out;
    it ran the type-I part and then failed on the empty accuracy table, losing both."""
    from irsample.experiments.recipes import Context, run_recipe
    from irsample.experiments.report import write_report

    report = run_recipe("comparisons", Context(files, trials=1, seed=1),
                        {"percents": "30", "designs": "uniform", "strategies": ""})
    assert [s.title for s in report.sections] == ["Type-I error on pairs with equal frame truth"]
    assert set(report.results.part) == {"type-I"}
    assert len(report.records) > 0
    write_report(report, tmp_path, format="csv")
    assert (tmp_path / "results.csv").exists() and (tmp_path / "records.csv").exists()


def test_measures_choose_the_compared_estimates(files):
    """``measures``: the type-I part compares twins by each ht(M) named (``design`` and
    ``topics``), beside the t-test, and a record's p-value is ``compare``'s for that measure
    on the trial's draw."""
    from irsample.comparison import compare_collection
    from irsample.experiments.comparisons import default_tests
    from irsample.experiments.recipes import Context, run_recipe
    from irsample.experiments.splits import derived_seed

    report = run_recipe("comparisons", Context(files, trials=1, seed=1),
                        {"percents": "40", "designs": "uniform", "strategies": "",
                         "measures": "ht(nDCG),ht(P@10)"})
    assert set(report.results.test) == {"t-test(xinfAP)", "ht(nDCG) design", "ht(nDCG) topics",
                                        "ht(P@10) design", "ht(P@10) topics"}

    records = []
    type_one_error(files, {"u": uniform(0.4)}, default_tests(("ht(nDCG)",)), trials=1, seed=5,
                   runs=[1, 2], records=records)
    found = pd.concat(records)
    found = found[found.test == "ht(nDCG) design"].set_index("run")
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    twins = add_twins(data.collection, frame, [1, 2],
                      np.random.default_rng(derived_seed(5, "twins")))
    first = np.array([1, 2])
    second = data.collection.n_runs + np.arange(2)
    judged = uniform(0.4).sample(pooled_twin_frame(frame, twins, first, second),
                                 rng=np.random.default_rng(derived_seed(5, "type1", "u", 0)))
    table = compare_collection(twins, judged, "ht(nDCG)", correction="none", variance="design")
    for a, b in zip(first, second):
        run, twin = twins.run_names[a], twins.run_names[b]
        row = table[((table.run_a == run) & (table.run_b == twin))
                    | ((table.run_a == twin) & (table.run_b == run))].iloc[0]
        assert found.loc[run, "p"] == pytest.approx(row.p)
        assert found.loc[run, "twin"] == twin
