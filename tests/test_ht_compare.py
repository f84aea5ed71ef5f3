"""`irsample compare` and irsample.compare: all pairs of runs on one sample (ht measures)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import irsample
from irsample.cli import main


@pytest.fixture()
def files(tmp_path):
    """Three runs over a sampled pool (-1: pooled, not judged) of four topics."""
    rng = np.random.default_rng(2)
    qrels, runs = [], {f"r{r}": [] for r in range(3)}
    for t in range(4):
        docs = [f"d{t}-{i}" for i in range(80)]
        grade = rng.choice([0, 0, 0, 1, 2], size=80)
        judged = rng.random(80) < 0.4
        qrels += [f"{t} 0 {d} {g if j else -1}" for d, g, j in zip(docs, grade, judged)]
        for r, lines in runs.items():
            order = rng.permutation(80)[:50]
            lines += [f"{t} Q0 {docs[i]} {k + 1} {50 - k} {r}" for k, i in enumerate(order)]
    out = {"qrels": tmp_path / "sample.qrels"}
    out["qrels"].write_text("\n".join(qrels) + "\n")
    for r, lines in runs.items():
        out[r] = tmp_path / r
        out[r].write_text("\n".join(lines) + "\n")
    return out


def test_api_gives_one_row_per_pair(files):
    table = irsample.compare(
        files["qrels"], [files["r0"], files["r1"], files["r2"]], "ht(AP)", correction="bh",
        assume="uniform",  # a Bernoulli sample in TREC qrels: the design is stated
    )
    assert len(table) == 3
    assert list(table.columns) == [
        "run_a",
        "run_b",
        "measure",
        "diff",
        "se",
        "df",
        "low",
        "high",
        "p",
        "p_adjusted",
        "decided",
        "status",
        "reason",
        "causes",
        "assume",
    ]
    assert (table.assume == "uniform").all()
    assert (table.low <= table["diff"]).all() and (table["diff"] <= table.high).all()
    assert (table.p_adjusted >= table.p - 1e-15).all()
    assert (table.decided == (table.p_adjusted < 0.05)).all()
    means = irsample.estimate(files["qrels"], [files["r0"], files["r1"]], ["ht(AP)"],
                              assume="uniform").summary[:, 0]
    first = table[(table.run_a == "r0") & (table.run_b == "r1")]
    assert first["diff"].iloc[0] == pytest.approx(means[0] - means[1])


def test_cli_text_csv_and_errors(files, capsys):
    rc = main(
        [
            "compare",
            str(files["qrels"]),
            str(files["r0"]),
            str(files["r1"]),
            "-m",
            "ht(P@10)",
            "--format",
            "csv",
            "--correction",
            "holm",
            "--assume",
            "uniform",
        ]
    )
    out, _ = capsys.readouterr()
    assert rc in (0, None)
    table = pd.read_csv(io.StringIO(out))
    assert len(table) == 1 and table.measure.iloc[0] == "ht(P@10)"
    assert (
        main(["compare", str(files["qrels"]), str(files["r0"]), str(files["r1"]), "-m", "AP"]) == 1
    )
    assert "design-based" in capsys.readouterr().err
    assert main(["compare", str(files["qrels"]), str(files["r0"])]) == 1


def test_text_output_gives_degrees_of_freedom_to_a_tenth(files, capsys):
    args = ["compare", str(files["qrels"]), str(files["r0"]), str(files["r1"]), "-m", "ht(AP)",
            "--assume", "uniform"]
    assert main(args) in (0, None)
    text = capsys.readouterr().out
    assert main([*args, "--format", "csv"]) in (0, None)
    df = pd.read_csv(io.StringIO(capsys.readouterr().out)).df.iloc[0]
    header, row = text.splitlines()[1:3] if text.startswith("#") else text.splitlines()[:2]
    shown = row.split()[header.split().index("df")]
    assert shown == f"{df:.1f}"
    assert row.split()[header.split().index("diff")].count(".") == 1  # the others keep 4 places
    assert len(row.split()[header.split().index("diff")].split(".")[1]) == 4
