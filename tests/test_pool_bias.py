"""The pool-bias summary (irsample.experiments.pool_bias) on a hand-made runs table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irsample.experiments import pool_bias


def table():
    rows = []
    for trial in (0, 1):
        for run, pooled, frame, qrels in (("a", True, 0.30, 0.25), ("b", True, 0.20, 0.20),
                                          ("c", False, 0.40, 0.10)):
            for measure in ("xinfAP", "ht(AP)"):  # estimators of one frame share its truths
                rows.append({"split": "halves", "trial": trial, "target": "AP", "run": run,
                             "pooled": pooled, "measure": measure, "truth": frame + trial / 100,
                             "truth_qrels": qrels})
    return pd.DataFrame(rows)


def test_per_run_and_summary():
    runs = table()
    per = pool_bias.per_run(runs)
    assert list(per.run) == ["c", "a", "b"]  # largest |frame - qrels| first
    assert per.set_index("run").pool_bias.to_dict() == pytest.approx(
        {"a": 0.055, "b": 0.005, "c": 0.305})
    s = pool_bias.summary(runs).set_index("runs")
    assert list(s.index) == ["all", "pooled", "unpooled"]
    # trial 0: differences .05, 0, .30; trial 1: .06, .01, .31
    assert s.loc["all", "bias"] == pytest.approx(np.mean([0.35 / 3, 0.38 / 3]))
    rms = np.mean([np.sqrt((0.05**2 + 0.3**2) / 3), np.sqrt((0.06**2 + 0.01**2 + 0.31**2) / 3)])
    assert s.loc["all", "rms"] == pytest.approx(rms)
    assert (
        s.loc["unpooled", "n_runs"] == 1.0
        and s.loc["all", "n_runs"] == 3.0
        and np.isnan(s.loc["unpooled", "kendall_tau"])
    )
    assert s.loc["pooled", "kendall_tau"] == pytest.approx(1.0)


def test_section_names_the_largest_differences_or_says_none():
    section = pool_bias.section(table())
    assert "c (AP, halves) +0.3050" in section.text
    same = table().assign(truth_qrels=lambda t: t.truth)
    assert "Every run's frame truth equals its qrels truth" in pool_bias.section(same).text


def test_missing_columns_are_an_error():
    with pytest.raises(ValueError, match="truth_qrels"):
        pool_bias.summary(table().drop(columns="truth_qrels"))
