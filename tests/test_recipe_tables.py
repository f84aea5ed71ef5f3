"""The reports of voorhees14 and residuals name their table columns in words, not as Python
tuples, and residuals' recant table is described as what it holds (every pair of sizes)."""

from __future__ import annotations

import pytest

from irsample.experiments import CollectionFiles
from irsample.experiments.recipes import Context, run_recipe
from irsample.experiments.report import write_report

from .experiment_data import write_collection


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    paths = write_collection(tmp_path_factory.mktemp("collection"), n_topics=3, n_docs=150)
    return CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"])


def test_voorhees14_accuracy_columns_are_words(files, tmp_path):
    write_report(run_recipe("voorhees14", Context(files, trials=1, seed=3)), tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "('" not in text
    assert text.count("| strategy | mean MAP | mean P@10 | mean nDCG | min MAP |") == 2


def test_residuals_recant_text_says_every_pair_of_sizes(files, tmp_path):
    report = run_recipe("residuals", Context(files, trials=1, seed=3),
                        {"sizes": "20,50,100", "runs": "all"})
    write_report(report, tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "with the smallest judgment set" not in text
    section = text.split("## Recanted decisions")[1]
    assert "`judgments`" in section and "`later`" in section
    rows = [line for line in section.splitlines() if line.startswith("| P@10 | XS |")]
    assert {tuple(r.split("|")[3:5]) for r in rows} == {
        (" 20 ", " 50 "), (" 20 ", " 100 "), (" 50 ", " 100 ")}


def test_a_reused_folder_keeps_only_this_reports_tables(files, tmp_path):
    """``simulate -o`` into a folder of an earlier parquet run, now with csv: results.parquet
    stayed beside the new results.csv, an older table a reader could take for this one."""
    report = run_recipe("voorhees14", Context(files, trials=1, seed=3))
    write_report(report, tmp_path)
    assert (tmp_path / "results.parquet").exists()
    (tmp_path / "records.parquet").write_bytes(b"an earlier recipe's records")
    (tmp_path / "notes.txt").write_text("the user's own file")
    written = write_report(report, tmp_path, format="csv")
    assert tmp_path / "results.csv" in written
    assert not (tmp_path / "results.parquet").exists()
    assert not (tmp_path / "records.parquet").exists()
    assert (tmp_path / "notes.txt").exists()
