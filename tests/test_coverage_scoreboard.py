"""scripts/coverage_scoreboard.py: issue 25's cells against [0.93, 0.98], from recipe results."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "coverage_scoreboard.py"
spec = importlib.util.spec_from_file_location("coverage_scoreboard", SCRIPT)
scoreboard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scoreboard)


def _ci(folder: Path) -> Path:
    folder.mkdir()
    pd.DataFrame({
        "strategy": ["2strata", "2strata", "planned", "planned"],
        "percent": [10, 10, 20, 20],
        "estimator": ["ht(AP)", "infAP", "ht(AP)", "ht(nDCG)"],
        "coverage_unflagged": [0.95, 0.5, 0.91, float("nan")],
        "coverage_unflagged_se": [0.01, 0.05, 0.02, float("nan")],
        "flagged": [0.02, 1.0, 0.15, 1.0],
        "flagged_se": [0.001, 0.0, 0.012, 0.0],
        "coverage_flagged": [0.80, 0.5, 0.85, 0.96],
    }).to_csv(folder / "results.csv", index=False)
    return folder


def _ppi(folder: Path) -> Path:
    folder.mkdir()
    pd.DataFrame({
        "strategy": ["2strata", "2strata"], "percent": [10, 10],
        "labels": ["kappa0.5", "fusion"], "measure": ["AP", "AP"],
        "coverage_unflagged": [0.95, 0.99], "coverage_unflagged_se": [0.01, 0.004],
        "flagged": [0.0, 0.05], "ht_coverage_unflagged": [0.96, 0.96],
        "ht_coverage_unflagged_se": [0.01, 0.01], "ht_flagged": [0.2, 0.2],
    }).to_csv(folder / "results.csv", index=False)
    return folder


def test_scoreboard_stars_cells_outside_the_range_and_tests_the_blanket(tmp_path, capsys):
    ci, ppi = _ci(tmp_path / "ci"), _ppi(tmp_path / "ppi")
    assert scoreboard.main(["--ci", f"X={ci}", "--ppi", f"X={ppi}", "--blanket", "X"]) == 0
    out = capsys.readouterr().out
    ht_part, ppi_part = out.split("### X, model-assisted")
    assert ht_part.startswith("### X, ci-coverage")
    assert "| 2strata | 10 | 0.950 (2%) |" in ht_part  # only the ht rows of ci-coverage
    assert "infAP" not in out
    assert "*0.910 (15%)" in ht_part and "- (100%)" in ht_part
    assert "cells outside [0.93, 0.98]: 1 of 2 with unflagged means (1 all flagged)" in ht_part
    assert "planned 20% ht(AP): 0.910 +- 0.020 (15% flagged)" in ht_part
    assert "2 of 3 rows over" in ht_part  # the blanket test: planned 20% at 15% and 100%
    assert "planned 20% ht(AP): 15.0% +- 1.2% flagged (unflagged coverage 0.910)" in ht_part
    # every mean flagged: no unflagged coverage, a dash as in the table, not "nan"
    assert "planned 20% ht(nDCG): 100.0% +- 0.0% flagged (unflagged coverage -)" in ht_part
    assert "nan" not in out
    assert "flagged intervals cover less than the unflagged in 100% of the 2 rows" in ht_part
    # pooled: (0.80 x 0.02 + 0.85 x 0.15) / 0.17 and (0.95 x 0.98 + 0.91 x 0.85) / 1.83
    assert "pooled over them, flagged 0.844, unflagged 0.931" in ht_part
    assert "by estimator, flagged / unflagged (rows): ht(AP) 0.844 / 0.931 (2)" in ht_part
    assert "every row pooled: flagged intervals cover 0.943, unflagged 0.931" in ht_part
    # ppi: the range over label sources; ht on the same draws once per cell
    assert "| 2strata | 10 | *0.950-0.990 (0%-5%) | 0.960 (20%) |" in ppi_part
    assert "2strata 10% ppi(AP) fusion: 0.990 +- 0.004 (5% flagged)" in ppi_part
    assert "1 of 3 rows over" in ppi_part
    assert "the flagged intervals' coverage is not in these results" in ppi_part


def test_a_starred_value_is_printed_beside_the_edge_not_on_it():
    """0.9297 is outside [0.93, 0.98]: printed 0.930 with a star, the star would look wrong."""
    rows = pd.DataFrame({"coverage": [0.9297, 0.95], "flagged": [0.0, 0.1]})
    assert scoreboard.cell_text(rows) == "*0.9297-0.950 (0%-10%)"
    assert scoreboard.cell_text(rows.assign(coverage=[0.9804, 0.9303])) == "*0.930-0.9804 (0%-10%)"
    assert scoreboard.cell_text(rows.assign(coverage=[0.98, 0.93])) == "0.930-0.980 (0%-10%)"
    assert scoreboard.shown(0.9251) == "0.925"


def test_comparisons_type_one_errors_of_unflagged_pairs(tmp_path, capsys):
    """--cmp: the type-I part of comparisons' results, a row per design and a column per
    test; the unflagged pairs' error starred above 0.06, a dash (with all pairs' error) where
    every pair is flagged, all pairs for a test that gives no status."""
    folder = tmp_path / "cmp"
    folder.mkdir()
    nan = float("nan")
    pd.DataFrame({
        "part": ["type-I"] * 4 + ["accuracy"],
        "design": ["2strata 10%", "2strata 10%", "planned 10%", "planned 10%", nan],
        "test": ["t-test(xinfAP)", "ht(AP) design"] * 2 + ["ht(AP) design"],
        "type_one_error": [0.052, 0.051, 0.059, 0.07, nan], "se": [0.005, 0.006, 0.004, 0.007, nan],
        "flagged": [nan, 0.87, nan, 1.0, nan],
        "type_one_error_unflagged": [nan, 0.064, nan, nan, nan],
        "unflagged_se": [nan, 0.019, nan, nan, nan],
    }).to_csv(folder / "results.csv", index=False)
    assert scoreboard.main(["--cmp", f"TREC-8={folder}"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### TREC-8, comparisons")
    assert "| design | t-test(xinfAP) | ht(AP) design |" in out
    assert "| 2strata 10% | 0.052 +- 0.005 (all pairs) | *0.064 +- 0.019 (87%) |" in out
    assert "| planned 10% | 0.059 +- 0.004 (all pairs) | - (100%; all pairs 0.070) |" in out
    assert "nan" not in out
