"""The comparison table for papers (``irsample compare --format markdown|latex|html``,
:func:`irsample.compare_table`): superscripts follow the adjusted pairwise decisions, the status
is read from the estimates, and each format is well formed (LaTeX by structure: no TeX here)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import irsample
from irsample.cli import main
from irsample.comparison_table import ComparisonTable, interval_status

from .docs_fixtures import make_sample_qrels

VASWANI = Path(irsample.__file__).resolve().parent / "data" / "vaswani"
RUNS = [VASWANI / "runs" / f"{n}.run.gz"
        for n in ("bm25_k1.2_b0.75", "dfr_inexpb2_c1", "ql_dir_mu2000", "tf_raw")]
MEASURES = ["ht(AP)", "ht(P@10)"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return make_sample_qrels(tmp_path_factory.mktemp("cmp") / "sample.qrels", RUNS)


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_superscripts_are_the_decided_pairs(sample, correction):
    table = irsample.compare_table(sample, RUNS, MEASURES, correction=correction, assume="uniform")
    names = table.runs
    for m in MEASURES:
        pairs = irsample.compare(sample, RUNS, m, correction=correction, assume="uniform")
        for x in names:
            expected = set()
            for _, p in pairs[pairs.decided].iterrows():
                if (p.run_a, p["diff"] > 0) == (x, True):
                    expected.add(table.letter(p.run_b))
                if (p.run_b, p["diff"] < 0) == (x, True):
                    expected.add(table.letter(p.run_a))
            assert set(table.better_than(x, m)) == expected
    assert any(table.better_than(x, m) for x in names for m in MEASURES)  # not vacuous


def test_holm_never_decides_more_than_bh(sample):
    holm = irsample.compare_table(sample, RUNS, MEASURES, correction="holm", assume="uniform")
    bh = irsample.compare_table(sample, RUNS, MEASURES, correction="bh", assume="uniform")
    for x in holm.runs:
        for m in MEASURES:
            assert set(holm.better_than(x, m)) <= set(bh.better_than(x, m))


def _table_with_status(status):
    estimates = pd.DataFrame({"run": ["r_1", "r2"], "measure": ["ht(AP)"] * 2,
                              "value": [0.3, 0.2], "low": [0.2, 0.1], "high": [0.4, 0.3]})
    if status is not None:
        estimates["status"] = status
        estimates["reason"] = ["", "2 topics with no sampled relevant document"]
    pairs = pd.DataFrame({"run_a": ["r_1"], "run_b": ["r2"], "measure": ["ht(AP)"],
                          "diff": [0.1], "decided": [True]})
    return ComparisonTable(("r_1", "r2"), ("ht(AP)",), estimates, pairs, 0.95, "holm")


def test_status_is_read_from_the_estimates():
    assert interval_status(pd.Series({"value": 1.0})) == ("ok", "")
    plain = _table_with_status(None).render("markdown")
    assert "†" not in plain and plain.count("| ok |") == 2
    marked = _table_with_status(["ok", "unreliable"]).render("markdown")
    row = [ln for ln in marked.splitlines() if ln.startswith("| (b)")][0]
    assert "0.2000 [0.1000, 0.3000]†" in row
    assert "ht(AP): unreliable (2 topics with no sampled relevant document)" in row
    assert r"$^\dagger$" in _table_with_status(["ok", "unreliable"]).render("latex")


def test_latex_structure(sample):
    text = irsample.compare_table(sample, RUNS, MEASURES, assume="uniform").render("latex")
    lines = text.splitlines()
    assert lines[0] == r"\begin{table}" and lines[-1] == r"\end{table}"
    for env in ("table", "tabular"):
        assert text.count(rf"\begin{{{env}}}") == text.count(rf"\end{{{env}}}") == 1
    spec = next(ln for ln in lines if ln.startswith(r"\begin{tabular}"))
    columns = len(spec.split("{")[2].rstrip("}"))
    assert columns == len(MEASURES) + 2
    rows = [ln for ln in lines if ln.endswith(r"\\")]
    assert len(rows) == 1 + len(RUNS)
    for row in rows:  # every row has one cell per column; no unescaped specials
        assert row.count(" & ") == columns - 1
        assert "_" not in row.replace(r"\_", "")
    assert text.count("{") == text.count("}")
    assert text.count("$") % 2 == 0
    assert r"\textbf{" in text and "$^{" in text
    assert r"95\%" in text


def test_html_is_well_formed(sample):
    text = irsample.compare_table(sample, RUNS, MEASURES, assume="uniform").render("html")
    stack, rows = [], 0

    class Checker(HTMLParser):
        def handle_starttag(self, tag, attrs):
            stack.append(tag)

        def handle_endtag(self, tag):
            assert stack.pop() == tag

    Checker().feed(text)
    assert stack == []
    rows = text.count("<tr>")
    assert rows == 1 + len(RUNS) and text.count("<td>") == len(RUNS) * (len(MEASURES) + 2)


def test_markdown_rows_have_every_column(sample):
    text = irsample.compare_table(sample, RUNS, MEASURES, assume="uniform").render("markdown")
    rows = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert len(rows) == 2 + len(RUNS)
    assert {ln.replace("\\|", "").count("|") for ln in rows} == {len(MEASURES) + 3}


def test_cli_writes_the_table_to_a_file(sample, tmp_path, capsys):
    out = tmp_path / "table.md"
    argv = ["compare", str(sample), *map(str, RUNS), "-m", "ht(AP)", "-m", "ht(P@10)",
            "--format", "markdown", "--correction", "bh", "--assume", "uniform", "-o", str(out)]
    assert main(argv) == 0
    assert capsys.readouterr().out == ""
    text = out.read_text()
    assert "Benjamini-Hochberg" in text and "assumed uniform" in text
    assert text == irsample.compare_table(sample, RUNS, MEASURES, correction="bh",
                                          assume="uniform").render("markdown")
    assert main(["compare", str(sample), *map(str, RUNS[:2]), "-m", "AP"]) == 1


def test_superscripts_past_z_separate_their_letters():
    """With more than 26 runs the letters run on to aa, ab, ...: run together, "zaaab" would
    read as z, aa, ab or z, a, a, a, b, so the superscripts separate them by commas; with 26 or
    fewer they stay run together."""
    runs = tuple(f"r{i}" for i in range(28))
    estimates = pd.DataFrame({"run": runs, "measure": "ht(AP)",
                              "value": [0.5 - 0.01 * i for i in range(28)],
                              "low": 0.0, "high": 1.0})
    pairs = pd.DataFrame({"run_a": ["r0"] * 3, "run_b": ["r1", "r26", "r27"],
                          "measure": "ht(AP)", "diff": [0.01, 0.26, 0.27],
                          "decided": True})
    table = ComparisonTable(runs, ("ht(AP)",), estimates, pairs, 0.95, "holm")
    assert table.letter("r26") == "aa" and table.letter("r27") == "ab"
    assert "<sup>b,aa,ab</sup>" in table.render("markdown")
    assert "$^{b,aa,ab}$" in table.render("latex")
    few = ComparisonTable(runs[:3], ("ht(AP)",), estimates[:3], pairs[:1].assign(run_b="r2"),
                          0.95, "holm")
    assert "<sup>c</sup>" in few.render("markdown")
    assert few.superscript(["b", "c"]) == "bc"
