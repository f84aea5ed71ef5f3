"""The ``rounds`` and ``model-assisted`` reports count the topics their frame, truth and
estimates rest on: CACM's runs answer 64 topics, its qrels judge 52, and only those 52 are
evaluated (the other 12 never are), so the reports must say 52."""

from __future__ import annotations

from pathlib import Path

import irsample
from irsample.experiments import CollectionFiles
from irsample.experiments.model_assisted import run_model_assisted
from irsample.experiments.rounds import run_rounds

CACM = Path(irsample.__file__).resolve().parent / "data" / "cacm"


def _files():
    return CollectionFiles.of(CACM / "runs", CACM / "qrels.gz")


def test_rounds_counts_the_evaluated_topics():
    rows, facts = run_rounds(_files(), trials=1, seed=1, percent=20.0, designs=("2strata",),
                             estimators=("ht(P@10)",), max_rounds=1)
    assert facts["topics"] == 52
    assert len(rows) == 3  # round 1, final, fixed


def test_model_assisted_counts_the_evaluated_topics():
    trials, facts = run_model_assisted(_files(), trials=1, seed=1, percents=(20,),
                                       strategies=("uniform",), kappas=(0.7,))
    assert facts["topics"] == 52
    assert facts["frame_size"] == 12520
    assert not trials.empty


def test_rounds_rows_describe_their_own_draw():
    """A ``fixed`` row is one draw (1 round), and each row's ``nothing_flagged`` is its own
    draw's: the fixed design's, not the rounds procedure's."""
    from irsample.experiments.rounds import summarise

    rows, _ = run_rounds(_files(), trials=1, seed=1, percent=10.0, designs=("uniform",),
                         estimators=("ht(P@10)", "ht(AP)"), max_rounds=3)
    by = rows.groupby("when")
    assert (rows.loc[rows["when"] != "final", "rounds"] == 1).all()
    assert rows.loc[rows["when"] == "final", "rounds"].iloc[0] > 1  # CACM at 10%: flagged
    for when, g in by:
        assert g["clean"].nunique() == 1
        assert g["clean"].iloc[0] == (g["flagged"].sum() == 0), when
    table = summarise(rows).set_index(["when", "estimator"])
    assert table.loc[("fixed", "ht(AP)"), "rounds"] == 1
    assert "stopped_clean" not in table
