"""The ``model-assisted`` recipe on the bundled Vaswani data: one small trial, the results table's
columns, and the report with its figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irsample
from irsample.experiments import CollectionFiles
from irsample.experiments.model_assisted import run_model_assisted, summarise
from irsample.experiments.recipes import RECIPES, Context, run_recipe
from irsample.experiments.report import write_report

VASWANI = Path(irsample.__file__).resolve().parent / "data" / "vaswani"
COLUMNS = ["strategy", "percent", "labels", "measure", "coverage", "halfwidth",
           "halfwidth_ratio", "bias", "rms"]


def test_model_assisted_recipe_writes_results_and_figure(tmp_path):
    assert "model-assisted" in RECIPES
    files = CollectionFiles.of(VASWANI / "runs", VASWANI / "qrels.gz")
    context = Context(files, trials=1, seed=3)
    report = run_recipe("model-assisted", context, {"percents": "20", "kappas": "0.7",
                                                    "strategies": "uniform,2strata,planned"})
    table = report.results
    assert list(table.columns[:len(COLUMNS)]) == COLUMNS
    assert set(table["labels"]) == {"kappa0.7", "adversarial", "fusion"}
    assert set(table["strategy"]) == {"uniform", "2strata", "planned"}
    assert set(table["measure"]) == {"AP", "nDCG"}
    assert np.all((table["coverage"] >= 0) & (table["coverage"] <= 1))
    # the guard: a run's variance never above ht's; the interval of a ratio in [0, 1] is on the
    # logit scale, so where the variances are equal (2strata, fusion labels) its width still
    # moves with the centre, by 1e-5 here
    assert np.all(table["halfwidth_ratio"] <= 1.0 + 1e-4)
    errors = ["coverage_unflagged_se", "flagged_se", "ht_coverage_unflagged_se", "ht_flagged_se"]
    assert table[errors].isna().all().all()  # one trial: no Monte Carlo error to estimate
    written = write_report(report, tmp_path)
    assert (tmp_path / "halfwidth.png").exists() and (tmp_path / "report.md") in written
    # the per-run records the table is computed from: one row per cell x source x measure x run
    records = pd.read_parquet(tmp_path / "records.parquet")
    assert len(records) == len(table) * 11 and set(records.run) == {
        p.name.split(".run")[0] for p in (VASWANI / "runs").iterdir()}
    keys = ["strategy", "percent", "labels", "measure"]
    again = records.groupby(keys, sort=False).agg(
        coverage=("covered", "mean"), flagged=("flagged", "mean"),
        ht_coverage=("ht_covered", "mean"), ht_flagged=("ht_flagged", "mean")).reset_index()
    merged = table.merge(again, on=keys, suffixes=("", "_again"))
    for name in ("coverage", "flagged", "ht_coverage", "ht_flagged"):
        np.testing.assert_allclose(merged[name], merged[f"{name}_again"], rtol=1e-12)
    assert (records.low <= records.high).all() and records.truth.between(0, 1).all()
    report_text = (tmp_path / "report.md").read_text()
    assert "## The reliability rule" in report_text and "ht_coverage_flagged" in report_text


def test_true_labels_are_exact_in_the_simulation():
    files = CollectionFiles.of(VASWANI / "runs", VASWANI / "qrels.gz")
    trials, facts = run_model_assisted(files, trials=1, seed=1, percents=(10,),
                                       strategies=("uniform",), kappas=(0.999,))
    row = trials[(trials["labels"] == "kappa0.999")]
    assert facts["frame_size"] > 1000
    assert np.all(row["kappa"] > 0.99)
    assert np.all(row["halfwidth"] < row["ht_halfwidth"])
    assert summarise(trials)["trials"].eq(1).all()



def test_importance_samples_in_the_model_assisted_recipe():
    """``strategies=importance`` (named only): statAP's AP-prior sample, and ``defensive``, the
    same with a floor on the prior; ht(M) and ppi(M) on them take the jackknife (unequal pi within
    a cell), and labels equal to the truth leave ppi exact with no width."""
    files = CollectionFiles.of(VASWANI / "runs", VASWANI / "qrels.gz")
    trials, _ = run_model_assisted(files, trials=1, seed=1, percents=(20,),
                                   strategies=("importance", "defensive"), kappas=(0.999,))
    assert set(trials["strategy"]) == {"importance", "defensive"}
    exact = trials[trials["labels"] == "kappa0.999"]
    assert np.all(exact["halfwidth"] < exact["ht_halfwidth"])
    with pytest.raises(ValueError, match="importance, defensive"):
        run_model_assisted(files, trials=1, seed=1, percents=(20,), strategies=("pps",))


def test_chosen_cells_and_sources_draw_what_the_whole_grid_draws():
    """``cells`` and ``labels`` keep part of the grid; each cell's draws stay those of the
    whole grid (seeded by its place in it), so the part's rows equal the whole run's."""
    files = CollectionFiles.of(VASWANI / "runs", VASWANI / "qrels.gz")
    grid = dict(trials=1, seed=3, percents=(10, 20), strategies=("uniform", "2strata"),
                kappas=(0.7,))
    whole, _ = run_model_assisted(files, **grid)
    part, _ = run_model_assisted(files, **grid, cells="2strata:20", labels="kappa0.7,fusion")
    same = whole[(whole["strategy"] == "2strata") & (whole["percent"] == 20)
                 & whole["labels"].isin(["kappa0.7", "fusion"])]
    assert len(part) == 4 and set(part["labels"]) == {"kappa0.7", "fusion"}
    pd.testing.assert_frame_equal(part.reset_index(drop=True), same.reset_index(drop=True))
    alone, _ = run_model_assisted(files, **grid, cells="uniform:20", labels="adversarial")
    assert set(alone["labels"]) == {"adversarial"} and set(alone["percent"]) == {20}
    with pytest.raises(ValueError, match="uniform:10, uniform:20, 2strata:10, 2strata:20"):
        run_model_assisted(files, **grid, cells="2strata:30")
    with pytest.raises(ValueError, match="no label source kappa0.5"):
        run_model_assisted(files, **grid, labels="kappa0.5")


def test_summary_splits_coverage_by_the_rule():
    """``flagged``, ``coverage_unflagged`` and ``coverage_flagged`` (and ht's) pool the trials'
    counts: covered among the unflagged / flagged means over all trials; trials recorded before
    the flagged means' coverage was counted summarise without it."""
    stats = ["coverage", "halfwidth", "ht_halfwidth", "bias", "sq_error", "ht_coverage",
             "ht_sq_error", "auto_bias", "auto_favoured_bias", "ppi_favoured_bias", "tau_ppi",
             "tau_ht", "tau_auto", "lam", "kappa", "judged"]
    rows = []
    for trial, (flagged, unflagged_hit, flagged_hit) in enumerate([(2, 7, 1), (4, 5, 3)]):
        row = dict(trial=trial, strategy="uniform", percent=10, labels="kappa0.7",
                   measure="AP", **dict.fromkeys(stats, 0.5))
        for prefix in ("", "ht_"):
            row |= {f"{prefix}flagged_n": flagged, f"{prefix}runs_n": 10,
                    f"{prefix}covered_unflagged_n": unflagged_hit,
                    f"{prefix}covered_flagged_n": flagged_hit}
        rows.append(row)
    out = summarise(pd.DataFrame(rows)).iloc[0]
    for prefix in ("", "ht_"):
        assert out[f"{prefix}flagged"] == pytest.approx(6 / 20)
        assert out[f"{prefix}coverage_unflagged"] == pytest.approx(12 / 14)
        assert out[f"{prefix}coverage_flagged"] == pytest.approx(4 / 6)
        assert np.isfinite(out[f"{prefix}coverage_flagged_se"])
    older = pd.DataFrame(rows).drop(columns=["covered_flagged_n", "ht_covered_flagged_n"])
    assert "coverage_flagged" not in summarise(older)

def test_frame_leaves_out_topics_the_qrels_do_not_judge():
    """CACM's qrels judge 52 of the 64 topics its runs answer: the other 12 are never
    evaluated (trec_eval, LoadedCollection.frame), so they are not in the recipe's frame (as
    all non-relevant, their truth was 0 while every estimator imputed them)."""
    from irsample.experiments.data import load
    from irsample.experiments.model_assisted import build_frame

    cacm = VASWANI.parent / "cacm"
    data = load(CollectionFiles.of(cacm / "runs", cacm / "qrels.gz"))
    frame = build_frame(data, 100.0)
    judged = data.judgments.has_topic
    assert judged.sum() == 52 and data.collection.n_topics == 64
    assert set(np.unique(frame.topic)) <= set(np.flatnonzero(judged))
    reference = data.frame(tuple(data.info.pooled_runs), 100.0)
    assert sorted(frame.tdi) == sorted(reference.tdi)
