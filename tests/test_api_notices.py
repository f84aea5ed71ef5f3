"""The Python API says what the command line says: the notices on judgments and measures
(:mod:`irsample.judgment_notes`) come as :class:`~irsample.errors.JudgmentWarning` with the
command line's text; ``auto(M)`` and a design file reach ``evaluate`` and ``estimate``; and the
comparisons refuse what the command line refuses (one run; several measures in ``compare``)."""

from __future__ import annotations

import gzip
import warnings

import pytest

import irsample
from irsample.cli import main
from irsample.errors import InputError, JudgmentWarning, MeasureError

from .docs_fixtures import FOUR_RUNS, VASWANI

RUNS = FOUR_RUNS


def _grades() -> dict:
    with gzip.open(VASWANI / "qrels.gz", "rt") as fh:
        return {(q, d): int(r) for q, _, d, r in (line.split() for line in fh)}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """A 2strata design drawn on four Vaswani runs, its documents judged (grades 0-2: the
    relevant ones alternate 1 and 2), merged as stratified qrels."""
    out = tmp_path_factory.mktemp("api_notices")
    assert main(["sample", *map(str, RUNS), "--design", "2strata@600", "--depth", "50",
                 "--seed", "3", "-o", str(out / "s")]) == 0
    grades = _grades()
    rows = [r.split("\t")[:2] for r in (out / "s" / "to_judge.tsv").read_text().splitlines()[1:]]
    (out / "judged.qrels").write_text("".join(
        f"{q} 0 {d} {grades.get((q, d), 0) * (1 + k % 2)}\n" for k, (q, d) in enumerate(rows)))
    assert main(["merge", str(out / "s" / "design.json"), str(out / "judged.qrels"),
                 "--format", "strata", "-o", str(out / "s.strata")]) == 0
    return out


def _notes(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.message.kind, str(w.message)) for w in caught
                    if issubclass(w.category, JudgmentWarning)]


def test_the_api_warns_as_the_command_line_does(drawn, capsys):
    strata = drawn / "s.strata"
    _, notes = _notes(lambda: irsample.estimate(strata, RUNS, ["infAP"]))
    assert notes == [("warning", "infAP ignores the 2 strata of these stratified qrels (it "
                      "takes the sample as uniform); xinfAP estimates from stratified samples")]
    _, notes = _notes(lambda: irsample.estimate(strata, RUNS, ["xinfAP"], rel_level=2))
    assert len(notes) == 1 and notes[0][1].startswith(
        "xinfAP count every grade of 1 or more as relevant whatever -l")
    _, notes = _notes(lambda: irsample.evaluate(strata, RUNS, ["infAP", "map"]))
    assert [kind for kind, _ in notes] == ["warning"]
    _, notes = _notes(lambda: irsample.evaluate(strata, RUNS, ["map"]))
    assert notes == []  # trec_eval's measures read the judgments as given
    # the command line prints the same text on standard error
    assert main(["eval", str(strata), *map(str, RUNS), "-m", "infAP"]) == 0
    err = capsys.readouterr().err
    assert err == ("irsample: warning: infAP ignores the 2 strata of these stratified qrels (it "
                   "takes the sample as uniform); xinfAP estimates from stratified samples\n")


def test_compare_warns_of_runs_answering_different_topics(drawn, tmp_path, capsys):
    short = tmp_path / "short.run"
    with gzip.open(RUNS[1], "rt") as fh:
        lines = fh.readlines()
    dropped = lines[0].split()[0]
    short.write_text("".join(line for line in lines if line.split()[0] != dropped))
    runs = [RUNS[0], short]
    _, notes = _notes(lambda: irsample.compare(drawn / "s.strata", runs, "ht(P@10)"))
    assert any(kind == "note" and text.startswith("the runs do not answer the same judged "
                                                  "topics") for kind, text in notes)
    _, notes = _notes(lambda: irsample.compare_table(drawn / "s.strata", runs, ["ht(P@10)"]))
    assert any(text.startswith("the runs do not answer the same") for _, text in notes)
    assert main(["compare", str(drawn / "s.strata"), *map(str, runs), "-m", "ht(P@10)"]) == 0
    err = capsys.readouterr().err
    assert err.count("irsample: note: the runs do not answer the same judged topics") == 1


def test_comparisons_refuse_one_run_and_a_list_in_compare(drawn):
    with pytest.raises(InputError, match="compare needs at least two runs; 1 given"):
        irsample.compare(drawn / "s.strata", RUNS[:1], "ht(AP)")
    with pytest.raises(MeasureError, match=r"compare takes one measure.*compare_table"):
        irsample.compare(drawn / "s.strata", RUNS, ["ht(AP)", "ht(P@10)"])


def test_auto_labels_and_a_design_file_reach_the_api(drawn):
    """``auto(M)`` (the labels alone, no interval) through ``evaluate``; ``estimate(...,
    design=)`` reads the judgments with the design file, as ``eval --design`` does."""
    ev = irsample.evaluate(drawn / "s.strata", RUNS, ["auto(AP)"], auto_labels="fusion")
    assert ev.summary.shape == (len(RUNS), 1) and ((ev.summary > 0) & (ev.summary < 1)).all()
    with pytest.raises(MeasureError, match=r"irsample.evaluate computes the others, auto\(M\)"):
        irsample.estimate(drawn / "s.strata", RUNS, ["auto(AP)"], auto_labels="fusion")
    from_design = irsample.estimate(drawn / "judged.qrels", RUNS, ["ht(AP)"],
                                    design=drawn / "s" / "design.json")
    from_strata = irsample.estimate(drawn / "s.strata", RUNS, ["ht(AP)"])
    assert from_design.summary == pytest.approx(from_strata.summary, abs=1e-12)


def test_small_api_mistakes_get_errors_that_say_what_to_do(drawn):
    import pandas as pd

    with pytest.raises(MeasureError, match="no measure given"):
        irsample.evaluate(drawn / "judged.qrels", RUNS, [])
    qrels = pd.DataFrame({"qid": [1.0, 2.0], "docno": ["a", "x"], "rel": [1, 1]})
    run = pd.DataFrame({"qid": [1, 2], "docno": ["a", "x"], "score": [2.0, 1.0]})
    with pytest.raises(InputError, match=r"compare as text: the run's 1, 2, the qrels' 1\.0, "):
        irsample.evaluate(qrels, run, ["AP"])
    est = irsample.estimate(drawn / "s.strata", RUNS, ["ht(AP)"])
    assert est.statuses.topic(0, 0, 0)[0] in ("ok", "unreliable")
    with pytest.raises(TypeError, match="takes positions"):
        est.statuses.topic(est.run_names[0], est.topics[0], "ht(AP)")


def test_the_api_warns_of_labels_naming_no_pooled_document(drawn, tmp_path):
    """``eval`` and ``judge-report`` warned that such labels leave ppi(M) equal to ht(M); the
    API returned the same numbers without a word."""
    stray = tmp_path / "stray.labels"
    stray.write_text("999 Q0 nodoc 1\n")
    strata = drawn / "s.strata"
    for call in (lambda: irsample.estimate(strata, RUNS, ["ppi(P@10)"], auto_labels=stray),
                 lambda: irsample.evaluate(strata, RUNS, ["auto(P@10)"], auto_labels=stray)):
        _, notes = _notes(call)
        assert ("warning", f"{stray}: no pooled document has a label (other topic or document "
                "ids?): every one counts as labelled 0, so ppi(M) is ht(M) and auto(M) 0") in notes
    _, notes = _notes(lambda: irsample.estimate(strata, RUNS, ["ht(P@10)"], auto_labels=stray))
    assert not any("no pooled document has a label" in text for _, text in notes)
