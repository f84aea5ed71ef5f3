"""The ``model-assisted`` recipe on the bundled Vaswani data: one small trial, the results table's
columns, and the report with its figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
    assert np.all(table["halfwidth_ratio"] <= 1.0 + 1e-9)  # the guard: never wider than ht
    errors = ["coverage_unflagged_se", "flagged_se", "ht_coverage_unflagged_se", "ht_flagged_se"]
    assert table[errors].isna().all().all()  # one trial: no Monte Carlo error to estimate
    written = write_report(report, tmp_path)
    assert (tmp_path / "halfwidth.png").exists() and (tmp_path / "report.md") in written


def test_true_labels_are_exact_in_the_simulation():
    files = CollectionFiles.of(VASWANI / "runs", VASWANI / "qrels.gz")
    trials, facts = run_model_assisted(files, trials=1, seed=1, percents=(10,),
                                       strategies=("uniform",), kappas=(0.999,))
    row = trials[(trials["labels"] == "kappa0.999")]
    assert facts["frame_size"] > 1000
    assert np.all(row["kappa"] > 0.99)
    assert np.all(row["halfwidth"] < row["ht_halfwidth"])
    assert summarise(trials)["trials"].eq(1).all()


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
