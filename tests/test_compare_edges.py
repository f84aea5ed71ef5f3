"""`irsample compare` at its edges: equal means up to rounding, one topic with the topics'
variance, json numbers to the digit the csv prints, and runs that answer different topics."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import irsample
from irsample.cli import main


def _files(tmp_path, rel_a, rel_b):
    """Complete qrels (10 relevant, 10 not per topic) and runs a and b whose top 10 hold
    rel_a[t] and rel_b[t] relevant documents on topic t."""
    qrels, runs = [], {"a": [], "b": []}
    for t, counts in enumerate(zip(rel_a, rel_b)):
        qrels += [f"{t} 0 r{i} 1" for i in range(10)] + [f"{t} 0 n{i} 0" for i in range(10)]
        for (name, lines), n in zip(runs.items(), counts):
            docs = [f"r{i}" for i in range(n)] + [f"n{i}" for i in range(10 - n)]
            lines += [f"{t} Q0 {d} {k + 1} {10 - k} {name}" for k, d in enumerate(docs)]
    out = {"qrels": tmp_path / "qrels"}
    out["qrels"].write_text("\n".join(qrels) + "\n")
    for name, lines in runs.items():
        out[name] = tmp_path / f"{name}.run"
        out[name].write_text("\n".join(lines) + "\n")
    return out


def test_equal_means_up_to_rounding_are_not_decided(tmp_path):
    # P@10 0.3 + 0.3 + 0 against 0 + 0 + 0.6: equal means, whose per-topic differences sum to
    # 3.7e-17; the judgments are complete (se 0), which made the pair "decided" at p = 0 and
    # gave b a superscript over a in the paper table
    f = _files(tmp_path, [3, 3, 0], [0, 0, 6])
    pairs = irsample.compare(f["qrels"], [f["a"], f["b"]], "ht(P@10)")
    assert pairs.se.iloc[0] == 0 and abs(pairs["diff"].iloc[0]) < 1e-15
    assert pairs.p.iloc[0] == 1.0 and not pairs.decided.iloc[0]
    table = irsample.compare_table(f["qrels"], [f["a"], f["b"]], ["ht(P@10)"])
    assert table.better_than("a", "ht(P@10)") == table.better_than("b", "ht(P@10)") == []
    # a real difference with nothing left to sample is still decided
    f = _files(tmp_path, [3, 3, 1], [0, 0, 6])
    pairs = irsample.compare(f["qrels"], [f["a"], f["b"]], "ht(P@10)")
    assert pairs["diff"].iloc[0] == pytest.approx(0.1 / 3) and pairs.p.iloc[0] == 0.0


def test_one_topic_has_no_topics_variance(tmp_path):
    # the spread over one topic is undefined (scipy.stats.ttest_rel gives NaN): it was 0,
    # and the pair was decided at p = 0 with an interval of width 0, status ok
    f = _files(tmp_path, [3], [1])
    pairs = irsample.compare(f["qrels"], [f["a"], f["b"]], "ht(P@10)", variance="topics")
    row = pairs.iloc[0]
    assert row["diff"] == pytest.approx(0.2)
    assert np.isnan([row.se, row.df, row.low, row.high, row.p, row.p_adjusted]).all()
    assert not row.decided and row.status == "unreliable" and "fewer than 2 topics" in row.reason
    # the topics' fixed (design) variance is defined: complete judgments, known difference
    design = irsample.compare(f["qrels"], [f["a"], f["b"]], "ht(P@10)").iloc[0]
    assert design.p == 0.0 and design.status == "ok"
    # two topics: a t-test on one degree of freedom, as scipy's
    f = _files(tmp_path, [3, 5], [1, 2])
    row = irsample.compare(f["qrels"], [f["a"], f["b"]], "ht(P@10)", variance="topics").iloc[0]
    from scipy import stats

    ref = stats.ttest_rel([0.3, 0.5], [0.1, 0.2])
    assert row.df == 1 and row.p == pytest.approx(ref.pvalue)


def test_json_carries_the_csv_numbers(tmp_path, capsys):
    f = _files(tmp_path, [9, 8, 9, 8, 9, 9, 8, 9, 9, 8], [1, 0, 1, 0, 2, 1, 0, 0, 1, 1])
    base = ["compare", str(f["qrels"]), str(f["a"]), str(f["b"]), "-m", "ht(P@10)",
            "--variance", "topics"]
    assert main([*base, "--format", "csv"]) in (0, None)
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert main([*base, "--format", "json"]) in (0, None)
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert 0 < csv.p.iloc[0] < 1e-9  # pandas' to_json printed it as 0.0
    for col in ("diff", "se", "low", "high", "p", "p_adjusted"):
        assert rows[0][col] == csv[col].iloc[0]
    assert rows[0]["status"] == csv.status.iloc[0] and rows[0]["decided"] is True
    assert rows[0]["causes"] == [] and rows[0]["df"] == 9


def test_runs_answering_different_topics_are_told(tmp_path, capsys):
    # a pair is compared on the topics both runs answer while each run's mean (eval, the paper
    # tables) is over its own: b lacks topic 0, where a does best; nothing said this
    f = _files(tmp_path, [9, 2, 2], [5, 3, 3])
    lines = f["b"].read_text().splitlines()
    f["b"].write_text("\n".join(ln for ln in lines if not ln.startswith("0 ")) + "\n")
    base = ["compare", str(f["qrels"]), str(f["a"]), str(f["b"]), "-m", "ht(P@10)"]
    assert main([*base, "--format", "csv"]) in (0, None)
    out, err = capsys.readouterr()
    assert pd.read_csv(io.StringIO(out))["diff"].iloc[0] == pytest.approx(-0.1)
    assert "do not answer the same judged topics (b: 2 of 3)" in err
    assert "compared on the topics both answer" in err
    # as many topics each, not the same ones: a lacks topic 2
    lines = f["a"].read_text().splitlines()
    f["a"].write_text("\n".join(ln for ln in lines if not ln.startswith("2 ")) + "\n")
    assert main([*base, "--format", "csv"]) in (0, None)
    assert "(a: 2 of 3, b: 2 of 3)" in capsys.readouterr().err
    f = _files(tmp_path, [9, 2, 2], [5, 3, 3])
    assert main([*base, "--format", "csv"]) in (0, None)
    assert "same judged topics" not in capsys.readouterr().err


def test_places_sets_the_text_decimals_and_is_refused_where_every_digit_is_kept(tmp_path,
                                                                                capsys):
    """``--places 2`` was ignored in text, csv and json output, exit 0."""
    f = _files(tmp_path, [9, 8, 9, 8], [1, 0, 1, 0])
    base = ["compare", str(f["qrels"]), str(f["a"]), str(f["b"]), "-m", "ht(P@10)"]
    assert main([*base, "--places", "2"]) in (0, None)
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:3] == ["a", "b", "ht(P@10)"] and row[3] == "0.80"
    for fmt in ("csv", "json"):
        assert main([*base, "--places", "2", "--format", fmt]) == 1
        out, err = capsys.readouterr()
        assert out == "" and f"--places does not apply to --format {fmt}" in err
