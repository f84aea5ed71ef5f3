"""``irsample simulate`` and its recipes on a small collection written to files
(tests/experiment_data.py): each recipe, 2 trials, writes report.md with its sections and
numbers, PNG figures and a results table; plus a TREC-8 smoke test (marker ``shared``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irsample.cli import main
from irsample.experiments import CollectionFiles
from irsample.experiments.coverage import interval_checks, monte_carlo_errors
from irsample.experiments.recipes import RECIPES, Context, run_recipe
from irsample.experiments.registry import pool_size
from irsample.experiments.report import markdown_table, write_report
from irsample.stats.intervals import covers

from .experiment_data import write_collection

EXPECTED = {
    "infap-random": (["## Agreement with true MAP", "## infAP(c=1.5) RMS error at 1%, 5%, 10%"],
                     ["infap_random.png"]),
    "depth-pools": (["## Agreement with true MAP", "## Paper vs ours", "0.9002", "0.8992"],
                    ["depth_pools.png"]),
    "xinfap-terabyte": (["## Agreement with true MAP", "xinfAP tau", "infAP rms", "3.5%"],
                        ["xinfap_terabyte.png"]),
    "ci-coverage": (["## Coverage, half-width, bias, RMS, tau", "halfwidth", "planned",
                     "coverage_unflagged_se", "flagged_se",
                     "## Estimates vs truth", "## Pool bias"], ["estimate_vs_truth.png"]),
    "voorhees14": (["## Judgments per topic", "## Accuracy of significant pairs", "2strata",
                    "## R^ vs true R"], ["r_hat.png"]),
    "four-strata": (["## Designs", "## Agreement with the truth"], []),
    "comparisons": (["## Type-I error on pairs with equal frame truth", "t-test(xinfAP)",
                     "## Accuracy of significant pairs"], []),
    "residuals": (["## Separability", "## Recanted decisions", "XM"], ["separability.png"]),
    "planner": (["## Planned vs 2strata", "plan-xinfAP", "## Predicted vs observed half-widths"],
                []),
    "designs": (["## Coverage, half-width, bias, RMS, tau", "systematic(1-10:1,11-100:0.2)",
                 "sd_ratio", "coverage_unflagged", "coverage_flagged", "flagged_se",
                 "## Pool bias"], []),
    "rounds": (["## Rounds, their cost and their coverage", "coverage_unflagged", "fixed",
                "round 1", "coverage_unflagged_se"], []),
}
SMALL = {
    "infap-random": {"percents": "10,50,100", "estimator": "infAP(c=1.5)"},
    "depth-pools": {"depths": "1,4,20"},
    "xinfap-terabyte": {"depths": "1,2,30"},
    "ci-coverage": {"percents": "20,40"},
    "voorhees14": {},
    "four-strata": {"depths": "1,5"},
    "residuals": {"sizes": "50,200"},
    "planner": {"budgets": "60,120"},
    "comparisons": {"percents": "30"},
    "designs": {"designs": "2strata;systematic(1-10:1,11-100:0.2);depth(5);plan(xinfAP)@60"},
    "rounds": {"percent": "20", "max_rounds": "3"},
}


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return write_collection(tmp_path_factory.mktemp("collection"), n_topics=4, n_docs=200)


@pytest.fixture(scope="module")
def files(paths):
    return CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"])


def test_registry_has_the_recipes():
    assert set(EXPECTED) <= set(RECIPES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recipe_writes_report(name, files, tmp_path):
    report = run_recipe(name, Context(files, trials=2, seed=7), SMALL[name])
    written = write_report(report, tmp_path)
    text = (tmp_path / "report.md").read_text()
    sections, figures = EXPECTED[name]
    for needle in sections:
        assert needle in text
    for figure in figures:
        assert (tmp_path / figure).read_bytes()[:4] == b"\x89PNG"
        assert f"]({figure})" in text
    results = pd.read_parquet(tmp_path / "results.parquet")
    assert len(results) and (results["recipe"] == name).all()
    assert tmp_path / "report.md" in written
    assert report.params["trials"] == 2 and report.params["seed"] == 7
    # the table's numbers are in the report
    first = results.select_dtypes("number").iloc[0]
    assert any(f"{v:.4f}" in text for v in first.to_numpy() if np.isfinite(v))


def test_full_judgments_are_exact(files):
    table = run_recipe("infap-random", Context(files, trials=2, seed=1),
                       {"percents": "100"}).results
    assert table["judged_pct"].iloc[0] == pytest.approx(100.0)
    assert table["rms"].iloc[0] == pytest.approx(0.0, abs=1e-5)  # infAP's 1e-5 smoothing
    assert table["tau"].iloc[0] == pytest.approx(1.0)


def test_depth_pool_judges_exactly_the_top_k(files):
    table = run_recipe("depth-pools", Context(files, trials=1, seed=1),
                       {"depths": "1,100"}).results
    deep = table[table["depth"] == 100]
    assert np.allclose(deep["judged_pct"], 100.0) and np.allclose(deep["rms"], 0.0, atol=1e-5)
    shallow = table[table["depth"] == 1]
    assert (shallow["judged_pct"] < 100).all()


def test_unknown_parameter_is_an_error(files):
    with pytest.raises(ValueError, match="no parameter"):
        run_recipe("infap-random", Context(files, trials=1), {"depths": "1"})


def test_residuals_sizes_can_name_all():
    """The default sizes end with every judgment (None), which --param could not name: the
    message offered "None", which was read as an integer and refused."""
    from irsample.experiments.registry import load_recipes

    residuals = load_recipes()["residuals"]
    assert residuals.params({"sizes": "500,all"})["sizes"] == (500, None)
    with pytest.raises(ValueError, match=r"default 1000,.*,50000,all\)"):
        residuals.params({"sizes": "500,al"})


def test_infap_random_takes_ap_estimators_alone(files):
    """Each run's estimate is set against its true MAP: P@10 ran and reported its RMS error
    against MAP under the heading of infAP's; an AP estimator names its own heading."""
    with pytest.raises(ValueError, match="estimator P@10 does not estimate AP"):
        run_recipe("infap-random", Context(files, trials=1), {"estimator": "P@10"})
    report = run_recipe("infap-random", Context(files, trials=1),
                        {"estimator": "ht(AP)", "percents": "50"})
    assert any(s.title == "ht(AP) RMS error at 1%, 5%, 10%" for s in report.sections)


def test_planner_takes_one_batch_or_more(files):
    """batches=0 dropped the batched strategy and ran as batches=1, without a word."""
    with pytest.raises(ValueError, match="batches must be an integer >= 1, got 0"):
        run_recipe("planner", Context(files, trials=1), {"batches": "0"})


def test_planner_refuses_budgets_past_the_halves_pools_before_any_trial(files, monkeypatch):
    """The default budgets (TREC-8's) on a smaller collection: refused at once, with the pool's
    size and budgets that fit (CACM ran its trials at 5,000 before 10,000 failed)."""
    from irsample.experiments import paper_recipes

    def no_trial(*args, **kwargs):
        raise AssertionError("a trial ran before the budgets were checked")

    monkeypatch.setattr(paper_recipes, "run_planner_vs_fixed", no_trial)
    with pytest.raises(ValueError, match=r"budget 5000 is larger than the smallest half's "
                       r"depth-100 pool \(\d+ documents\): give smaller ones, e.g. "
                       r"--param budgets="):
        run_recipe("planner", Context(files, trials=1), {})


def test_trials_given_twice_are_refused(files):
    """``--trials 2 --param trials=4`` ran 2 trials without a word; the same number twice is
    no conflict."""
    with pytest.raises(ValueError, match=r"trials given twice \(1 and --param trials=4\)"):
        run_recipe("planner", Context(files, trials=1), {"trials": "4"})


def test_interval_checks():
    rng = np.random.default_rng(0)
    truth = np.tile(rng.random(20), (400, 1))
    est = truth + rng.normal(0, 0.1, truth.shape)
    out = interval_checks(est, truth, np.full(truth.shape, 0.1))
    assert out["coverage"] == pytest.approx(0.95, abs=0.01)
    assert out["ks_pass"] >= 0.8
    assert out["observed_sd"] == pytest.approx(0.1, abs=0.01)


def test_t_intervals_are_read_back_on_their_degrees_of_freedom():
    """ci-coverage's run rows carry each interval's ``df``: the standard error behind a
    half-width is half / t on it (half / z where df is infinite), and coverage is of the
    intervals as printed (est -/+ half), not est -/+ z se."""
    from scipy import stats

    from irsample.experiments.coverage import predicted_sd

    df = np.array([[4.0, np.inf], [30.0, np.inf]])
    half = np.full(df.shape, 0.3)
    sd = predicted_sd(pd.DataFrame({"df": df.ravel()}), half, 0.95)
    np.testing.assert_allclose(sd[:, 0], 0.3 / stats.t.ppf(0.975, df[:, 0]))
    np.testing.assert_allclose(sd[:, 1], 0.3 / stats.norm.ppf(0.975))
    np.testing.assert_allclose(predicted_sd(pd.DataFrame({"x": [0.0] * 4}), half, 0.95),
                               0.3 / stats.norm.ppf(0.975))
    est, truth = np.zeros(df.shape), np.full(df.shape, 0.29)  # inside est -/+ half, beyond z se
    assert interval_checks(est, truth, sd, limits=(est - half, est + half))["coverage"] == 1.0
    assert interval_checks(est, truth, sd)["coverage"] == 0.5


def test_monte_carlo_errors_count_trials_not_runs():
    """Runs that miss together (a trial covers all its runs or none) make a coverage whose
    Monte Carlo SE is that of the trials, sqrt(p (1 - p) / (T - 1)) with ddof 1, not of T x runs
    independent intervals; the flagged share's and the unflagged coverage's likewise."""
    rng = np.random.default_rng(3)
    trials, runs = 400, 50
    hit = rng.random(trials) < 0.9
    covered = np.repeat(hit[:, None], runs, axis=1)
    flagged = np.zeros_like(covered)
    flagged[::4] = True  # every fourth trial flags all its runs
    out = monte_carlo_errors(covered, flagged)
    assert out["coverage_se"] == pytest.approx(hit.std(ddof=1) / np.sqrt(trials))
    assert out["coverage_se"] > 5 * np.sqrt(0.09 / (trials * runs))
    kept = hit[np.arange(trials) % 4 != 0]  # a domain: the flagged trials count with n_t = 0
    domain = np.sqrt(trials / (trials - 1) * np.sum((kept - kept.mean()) ** 2)) / kept.size
    assert out["coverage_unflagged_se"] == pytest.approx(domain, rel=1e-12)
    share = np.arange(trials) % 4 == 0
    assert out["flagged_se"] == pytest.approx(share.std(ddof=1) / np.sqrt(trials))
    independent = monte_carlo_errors(rng.random((trials, runs)) < 0.9, np.zeros_like(covered))
    assert independent["coverage_se"] == pytest.approx(np.sqrt(0.09 / (trials * runs)), rel=0.15)
    assert np.isnan(monte_carlo_errors(covered[:1], flagged[:1])["coverage_se"])


def test_flag_columns_split_coverage_by_the_rule():
    """The designs and ci-coverage tables count the flagged share and the coverage on each
    side of the rule from the run rows' ``flagged`` column; rows without it are unflagged."""
    from irsample.experiments.coverage import flag_columns

    covered = np.array([[True, False, True], [True, True, False]])
    g = pd.DataFrame({"flagged": [False, True, False, False, False, True]})
    out = flag_columns(g, covered)
    assert out["flagged"] == pytest.approx(2 / 6)
    assert out["coverage_unflagged"] == 1.0 and out["coverage_flagged"] == 0.0
    assert {"coverage_se", "coverage_unflagged_se", "flagged_se"} <= set(out)
    none = flag_columns(pd.DataFrame({"x": range(6)}), covered)
    assert none["flagged"] == 0.0 and none["coverage_unflagged"] == pytest.approx(4 / 6)
    assert np.isnan(none["coverage_flagged"])


def test_trial_shares_pool_the_trials_counts():
    """One table of per-trial counts gives every share of the recipes (coverage, flagged,
    type-I error) pooled over trials, sum h / sum n, with its Monte Carlo error; NaN where
    nothing is counted."""
    import pandas as pd

    from irsample.stats.intervals import share_standard_error, trial_shares

    table = pd.DataFrame({"hit": [3, 5, 0, 4], "n": [4, 6, 2, 5], "none": [0, 0, 0, 0]})
    out = trial_shares(table, {"rate": ("hit", "n"), "empty": ("hit", "none")})
    assert out["rate"] == pytest.approx(12 / 17)
    assert out["rate_se"] == share_standard_error(table.hit, table.n)
    assert np.isnan(out["empty"]) and np.isnan(out["empty_se"])
    assert trial_shares({"hit": [1, 2], "n": [2, 2]}, {"r": ("hit", "n")})["r"] == 0.75
    # a share counted in one trial only has no spread over trials to read its error from
    assert np.isnan(share_standard_error([0, 3, 0], [0, 6, 0]))
    assert share_standard_error([0, 1, 2], [0, 2, 2]) > 0


def test_steadiness_of_the_variance_estimate():
    """An sd unrelated to the error: correlation near 0. An sd right on average that shrinks
    with the estimate (as a Horvitz-Thompson variance of a skewed population): a positive
    correlation, and intervals that miss though predicted and observed SDs agree."""
    rng = np.random.default_rng(1)
    truth = np.tile(rng.random(20), (2000, 1))
    noise = rng.normal(0, 0.1, truth.shape)
    est = truth + noise
    steady = interval_checks(est, truth, 0.1 * np.exp(rng.normal(0, 0.6, truth.shape) - 0.18))
    assert abs(steady["se_error_corr"]) < 0.02
    out = interval_checks(est, truth, 0.1 * np.exp(0.6 * noise / 0.1 - 0.18))  # mean sd 0.1
    assert out["se_error_corr"] > 0.8
    assert out["predicted_sd"] == pytest.approx(out["observed_sd"], rel=0.02)
    assert out["coverage"] < 0.9
    nan = interval_checks(est, truth, np.full(truth.shape, 0.1))["se_error_corr"]
    assert np.isnan(nan)


def test_coverage_table_leaves_runs_without_spread_out_of_sd_ratio():
    """A run every trial estimates alike up to rounding (its reach judged whole) has no
    observed SD: it is left out of sd_ratio's mean instead of dividing by ~1e-17."""
    from types import SimpleNamespace

    import pandas as pd

    from irsample.experiments.coverage import coverage_table
    from irsample.stats.intervals import z

    rng = np.random.default_rng(3)
    trials, rows = 50, []
    for trial in range(trials):
        for run, (truth, est, sd) in enumerate([
                (0.3, 0.3 + rng.normal(0, 0.02), 0.04),  # sd twice the spread
                (0.5, np.nextafter(0.5, 1.0) if trial % 2 else 0.5, 0.0)]):  # rounding
            rows.append({"strategy": "uniform", "setting": "0.1", "measure": "ht(AP)",
                         "target": "AP", "trial": trial, "run": run, "estimate": est,
                         "truth": truth, "low": est - z(0.95) * sd, "high": est + z(0.95) * sd})
    runs = pd.DataFrame(rows)
    meta = pd.DataFrame({"strategy": "uniform", "setting": "0.1", "measure": "ht(AP)",
                         "kendall_tau": 1.0, "judged": 10, "pool_size": 100,
                         "trial": range(trials)})
    table = coverage_table(SimpleNamespace(runs=runs, trials=meta))
    spread = runs[runs.run == 0].estimate.std(ddof=1)
    assert table.sd_ratio.iloc[0] == pytest.approx(0.04 / spread)


def test_markdown_table():
    text = markdown_table(pd.DataFrame({"a": [1.0, np.nan], "b": ["x", "y"]}), digits=2)
    assert text.splitlines() == ["| a | b |", "|---|---|", "| 1.00 | x |", "| - | y |"]
    # whole-number float columns (counts, percents) print as integers; shares keep decimals
    frame = pd.DataFrame({"n_runs": [8.0, 5.0], "percent": [2.5, 20.0], "coverage": [1.0, 0.0]})
    assert markdown_table(frame).splitlines()[2:] == ["| 8 | 2.5000 | 1.0000 |",
                                                      "| 5 | 20.0000 | 0.0000 |"]


def test_cli_simulate(paths, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["simulate", "depth-pools", "--qrels", str(paths["qrels"]), "--runs",
                 str(paths["runs"]), "--pooled", str(paths["pooled"]), "--trials", "1",
                 "--param", "depths=2,3", "--format", "csv", "-o", str(out)])
    assert code == 0
    assert "report.md" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["depth_pools.png", "records.csv",
                                                     "report.md", "results.csv"]
    assert set(pd.read_csv(out / "results.csv")["depth"]) == {2, 3}


def test_cli_simulate_bad_param(paths, tmp_path, capsys):
    code = main(["simulate", "infap-random", "--qrels", str(paths["qrels"]), "--runs",
                 str(paths["runs"]), "--param", "nope", "-o", str(tmp_path / "o")])
    assert code == 1 and "KEY=VALUE" in capsys.readouterr().err


@pytest.mark.shared
def test_trec8_smoke(shared, tmp_path):
    folder = shared / "data" / "trec8-adhoc"
    code = main(["simulate", "depth-pools", "--shared", str(folder), "--param", "depths=4",
                 "-o", str(tmp_path)])
    assert code == 0
    table = pd.read_parquet(tmp_path / "results.parquet").set_index("measure")
    # paper 001 §5.2: tau 0.9002 (infAP), 0.8992 (induced AP) on TREC-8's depth-4 pool
    assert table.loc["infAP", "tau"] > 0.8 and table.loc["induced(AP)", "tau"] > 0.8


def test_ci_coverage_runs_the_designs_asked_for(files):
    table = run_recipe("ci-coverage", Context(files, trials=1, seed=3),
                       {"percents": "30", "designs": "2strata", "estimators": "ht(nDCG)"}).results
    assert set(table["strategy"]) == {"2strata"}
    with pytest.raises(ValueError, match="designs must be among"):
        run_recipe("ci-coverage", Context(files, trials=1), {"designs": "uniform,depth"})


def test_ci_coverage_on_a_shallow_pool(files):
    """``depth``: the frame, its truth and every design take the depth-D pool (2strata: ranks
    1 to D / 5 against the rest), as a collection judged to a shallow depth has."""
    from irsample.experiments.coverage import designs

    made = {s.name: s for s in designs(1000, [10.0], depth=20)}
    assert {s.depth for s in made.values()} == {20}
    (_, two), = made["2strata"].designs
    assert [(a.first, a.last) for a in two.strata] == [(1, 4), (5, 20)]
    report = run_recipe("ci-coverage", Context(files, trials=1, seed=3),
                        {"percents": "30", "designs": "uniform", "estimators": "ht(P@10)",
                         "depth": "20"})
    shallow = pool_size(Context(files), 20)
    assert shallow < pool_size(Context(files), 100)
    assert f"Depth-20 pool of the pooled runs ({shallow:,} documents)" in report.sections[0].text
    table = report.results
    assert abs(table["judged_pct"].iloc[0] - 30) < 1  # of the shallow pool
    with pytest.raises(ValueError, match="pool depth must be 2 or more"):
        designs(1000, [10.0], depth=1)


def test_top10_judges_the_best_tenth_of_the_pool_whole_and_samples_the_rest(files):
    """``designs=top10`` (named only): best ranks 1 to D / 10 judged whole beside a sample of
    the rest, at the cell's budget; ci-coverage and comparisons draw it."""
    from irsample.experiments.coverage import STRATEGIES, designs
    from irsample.experiments.data import load
    from irsample.model import JUDGED

    assert "top10" not in STRATEGIES  # the defaults stay uniform, 2strata and planned
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    (top10,) = designs(len(frame), [30.0], which=("top10",))
    (_, design), = top10.designs
    assert [(a.first, a.last, a.rate) for a in design.strata][0] == (1, 10, 1.0)
    judgments = design.sample(frame, rng=np.random.default_rng(4))
    judged = judgments.state[frame.tdi] == JUDGED
    assert judged[frame.best_rank <= 10].all()
    assert not judged[frame.best_rank > 10].all()
    assert judged.sum() == round(0.3 * len(frame))
    (_, shallow), = designs(len(frame), [30.0], which=("top10",), depth=20)[0].designs
    assert [(a.first, a.last) for a in shallow.strata] == [(1, 2), (3, 20)]
    table = run_recipe("ci-coverage", Context(files, trials=1, seed=3),
                       {"percents": "30", "designs": "top10", "estimators": "ht(AP)"}).results
    assert set(table["strategy"]) == {"top10"}


def test_importance_draws_each_topics_share_by_the_ap_prior(files):
    """``designs=importance`` (named only): statAP's design at f of every topic's pool, its
    probabilities unequal within a topic (higher at the runs' top ranks); ci-coverage runs it
    and labels its cells by percent, as the stratified designs'."""
    from irsample.experiments.coverage import STRATEGIES, _percent, designs
    from irsample.experiments.data import load
    from irsample.model import JUDGED

    assert "importance" not in STRATEGIES
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    (made,) = designs(len(frame), [30.0], which=("importance",))
    ((label, design),) = made.designs
    assert label == "30" and _percent("importance", label) == 30.0
    judgments = design.sample(frame, rng=np.random.default_rng(4))
    judged = judgments.state[frame.tdi] == JUDGED
    per_topic = pd.Series(judged).groupby(frame.topic).agg(["sum", "size"])
    assert (per_topic["sum"] == np.maximum(1, np.round(0.3 * per_topic["size"]))).all()
    pi = judgments.inclusion[frame.tdi]  # a judged document's pi (NaN where not judged)
    top, deep = judged & (frame.best_rank <= 5), judged & (frame.best_rank > 50)
    assert pi[top].mean() > 2 * pi[deep].mean()  # the AP prior's weight on the top ranks
    table = run_recipe("ci-coverage", Context(files, trials=1, seed=3),
                       {"percents": "30", "designs": "importance",
                        "estimators": "ht(AP),ht(nDCG)"}).results
    assert set(table["strategy"]) == {"importance"} and set(table["percent"]) == {30.0}
    assert table["coverage"].between(0, 1).all()


def test_the_defensive_design_floors_the_ap_priors_probabilities(files):
    """``designs=defensive`` (named only): statAP's design with the prior's weights floored at
    ``DEFENSIVE_FLOOR`` times the topic's uniform weight, so every document's pi at least about
    that share of the topic's rate with the same sample sizes; ci-coverage runs it."""
    from irsample.design.sampling.importance import DEFENSIVE_FLOOR
    from irsample.experiments.coverage import _percent, designs
    from irsample.experiments.data import load

    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100)
    plain, defensive = (made.designs[0][1] for made in designs(
        len(frame), [5.0], which=("importance", "defensive")))
    assert defensive.name == f"importance(0.05,floor={DEFENSIVE_FLOOR:g})"
    assert _percent("defensive", "30") == 30.0
    pi, pi_star = (d.select(frame, rng=4).inclusion for d in (defensive, plain))
    for t in np.unique(frame.topic):
        rows = frame.topic == t
        rate = pi_star[rows].sum() / rows.sum()
        assert pi[rows].sum() == pytest.approx(pi_star[rows].sum())
        assert pi[rows].min() >= DEFENSIVE_FLOOR * rate / (1 + DEFENSIVE_FLOOR) - 1e-12
        assert pi[rows].min() >= pi_star[rows].min()  # the floor lifts the deep ones
    table = run_recipe("ci-coverage", Context(files, trials=1, seed=3),
                       {"percents": "30", "designs": "importance,defensive",
                        "estimators": "ht(AP)"}).results
    assert set(table["strategy"]) == {"importance", "defensive"}
    assert table["coverage"].between(0, 1).all()


@pytest.mark.parametrize("name", ["ci-coverage", "rounds"])
def test_per_run_records_recompute_the_table(name, files, tmp_path):
    """records.parquet holds every (trial, cell, estimator, run) the table summarises: its
    coverage, the flagged share and the unflagged coverage are the records' means."""
    write_report(run_recipe(name, Context(files, trials=2, seed=7), SMALL[name]), tmp_path)
    results = pd.read_parquet(tmp_path / "results.parquet")
    records = pd.read_parquet(tmp_path / "records.parquet")
    if name == "ci-coverage":
        from irsample.experiments.coverage import _percent

        records = records.assign(
            covered=covers(records.estimate, records.low, records.high, records.truth),
            percent=[_percent(a, b) for a, b in zip(records.strategy, records.setting)],
            estimator=records.measure)
        keys = ["strategy", "percent", "estimator"]
    else:
        keys = ["design", "estimator", "when"]
    again = records.groupby(keys, sort=False).agg(
        coverage=("covered", "mean"), flagged=("flagged", "mean")).reset_index()
    unflagged = records[~records.flagged].groupby(keys, sort=False).covered.mean()
    merged = results.merge(again, on=keys, suffixes=("", "_again"))
    assert len(merged) == len(results) > 0
    np.testing.assert_allclose(merged.coverage, merged.coverage_again, rtol=1e-12)
    np.testing.assert_allclose(merged.flagged, merged.flagged_again, rtol=1e-12)
    shown = merged.set_index(keys).coverage_unflagged.dropna()
    np.testing.assert_allclose(shown, unflagged.loc[shown.index], rtol=1e-12)


def test_rounds_on_a_shallow_pool(files):
    """``depth``: the rounds and the fixed design of the same total judge the depth-D pool, and
    2strata's first round puts ranks 1 to D / 5 against the rest."""
    from irsample.experiments.rounds import first_design

    design = first_design("2strata", 50, 0.1, depth=20)
    assert [(s.first, s.last) for s in design.strata] == [(1, 4), (5, 20)]
    report = run_recipe("rounds", Context(files, trials=1, seed=3),
                        {"depth": "20", "designs": "2strata", "max_rounds": "2",
                         "estimators": "ht(P@10)"})
    shallow = pool_size(Context(files), 20)
    assert f"the depth-20 pool of the pooled runs ({shallow:,} documents" in \
        report.sections[0].text
    first = report.results.set_index("when").loc["round 1"]
    assert abs(first["judged_pct"] - 10) < 1  # of the shallow pool


def _binary_copy(qrels, tmp_path):
    """The qrels with every grade above 1 made 1 (--graded draws grades for binary qrels)."""
    out = tmp_path / "binary.qrels"
    out.write_text("".join(f"{q} {i} {d} {min(int(r), 1)}\n" for q, i, d, r in
                           (line.split() for line in Path(qrels).read_text().splitlines())))
    return out


def test_graded_collection_keeps_the_relevant_set(paths, tmp_path):
    """--graded K: the relevant judgments get grades 1..K (all used, seeded: the same again,
    another with another seed); non-relevant ones and every binary measure stay as they are."""
    from irsample.experiments.data import LoadedCollection

    qrels = _binary_copy(paths["qrels"], tmp_path)
    plain = LoadedCollection(CollectionFiles.of(paths["runs"], qrels))
    graded = [LoadedCollection(CollectionFiles.of(paths["runs"], qrels, graded=3,
                                                  graded_seed=s)) for s in (0, 0, 1)]
    rel = np.asarray(plain.qrels.rel)
    for loaded in graded:
        g = np.asarray(loaded.qrels.rel)
        assert np.array_equal(g > 0, rel > 0) and np.array_equal(g[rel <= 0], rel[rel <= 0])
        assert set(np.unique(g[g > 0])) == {1, 2, 3}
    assert np.array_equal(graded[0].qrels.rel, graded[1].qrels.rel)
    assert not np.array_equal(graded[0].qrels.rel, graded[2].qrels.rel)
    np.testing.assert_array_equal(plain.truth(["map", "P.10"]).values,
                                  graded[0].truth(["map", "P.10"]).values)
    assert not np.array_equal(plain.truth(["ndcg"]).values, graded[0].truth(["ndcg"]).values)


def test_graded_option_refuses_graded_qrels(tmp_path):
    """--graded draws grades for binary qrels; over graded ones it would replace them."""
    from irsample.errors import InputError
    from irsample.experiments.data import regraded
    from irsample.io import load_qrels

    path = tmp_path / "graded.qrels"
    path.write_text("1 0 a 2\n1 0 b 0\n1 0 c 1\n")
    with pytest.raises(InputError, match=r"graded.qrels: --graded 3 .* graded already "
                                         r"\(grades up to 2\)"):
        regraded(load_qrels(str(path)), 3, 0)


def test_simulate_graded_option(paths, tmp_path):
    out = tmp_path / "out"
    main(["simulate", "ci-coverage", "--qrels", str(_binary_copy(paths["qrels"], tmp_path)),
          "--runs", str(paths["runs"]), "--graded", "3", "--trials", "1", "--param", "percents=30",
          "--param", "designs=uniform", "--param", "estimators=ht(nDCG)", "--format", "csv",
          "-o", str(out)])
    assert "graded" in (out / "report.md").read_text()


@pytest.mark.parametrize("name, params", [
    ("rounds", SMALL["rounds"]),
    ("model-assisted", {"percents": "30", "kappas": "0.7", "strategies": "uniform"})])
def test_recipes_looping_over_trials_give_the_same_tables_on_workers(name, params, files):
    """``rounds`` and ``model-assisted`` seed every trial by its number: split over two spawned
    workers (three trials: chunks of one and two) they give the one process's tables and
    records, in trial order; a Dask scheduler is refused rather than ignored."""
    one = run_recipe(name, Context(files, trials=3, seed=5), params)
    two = run_recipe(name, Context(files, trials=3, seed=5, executor="processes", workers=2),
                     params)
    pd.testing.assert_frame_equal(one.results, two.results)
    pd.testing.assert_frame_equal(one.records, two.records)
    assert (one.execution["workers"], two.execution["workers"]) == (1, 2)
    with pytest.raises(ValueError, match="leave out --scheduler"):
        run_recipe(name, Context(files, trials=1, scheduler="tcp://127.0.0.1:1"), params)
