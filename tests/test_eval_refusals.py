"""Inputs ``irsample eval`` refuses instead of crashing or giving a wrong answer: malformed
trec_eval parameters of set_F and relstring (a traceback before), a utility with a collection
size (printed under the name of the one without, so JSON kept one of the two), ``-o`` naming
an input (the output overwrote it), a negative relevance level (read as level 0),
infAP's interval over judged documents only (-J), and a string measure per topic in
sample_eval's format (left out without a word)."""

from __future__ import annotations

import json

import pytest

from irsample.cli import main
from irsample.errors import MeasureError
from irsample.measures import parse

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n2 0 e1 1\n"
RUN = "1 Q0 d2 1 3 r1\n1 Q0 d1 2 2 r1\n1 Q0 d3 3 1 r1\n2 Q0 e1 1 1 r1\n"


@pytest.fixture
def files(tmp_path):
    for name, text in {"qrels": QRELS, "run": RUN, "run2": RUN.replace("r1", "r2")}.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    return (rc, *capsys.readouterr())


@pytest.mark.parametrize("name", ["set_F.abc", "set_F.1,2", "set_F.", "relstring.x",
                                  "relstring.nan", "relstring.5,6"])
def test_bad_trec_parameters_are_measure_errors(name):
    with pytest.raises(MeasureError):
        parse(name)


@pytest.mark.parametrize("name", ["set_F.abc", "relstring.x"])
def test_bad_trec_parameters_on_the_command_line(files, capsys, name):
    rc, out, err = cli(capsys, "eval", "-m", name, files / "qrels", files / "run")
    assert rc == 1 and out == ""
    assert err.startswith("irsample: bad parameters") and "Traceback" not in err


def test_good_trec_parameters_still_parse():
    assert parse("set_F.0.5")[0].beta2 == 0.5
    assert parse("relstring.20")[0].k == 20
    assert parse("relstring_20")[0].k == 20


def test_utility_with_a_collection_size_has_its_own_name(files, capsys):
    sized = "utility(collection_size=1000,coefficients=(0,0,0,1))"
    assert parse(sized)[0].trec_name != parse("utility.0,0,0,1")[0].trec_name
    rc, out, err = cli(capsys, "eval", "--format", "json", "-m", sized, "-m", "utility.0,0,0,1",
                       files / "qrels", files / "run")
    assert rc == 0, err
    values = json.loads(out)["r1"]["all"]
    # d = N + a - n - R: topic 1: a = 2, n = 3, R = 2; topic 2: a = n = R = 1
    assert values["utility_0,0,0,1"] == pytest.approx(-2.0)
    assert values[parse(sized)[0].trec_name] == pytest.approx(998.0)


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_output_naming_an_input_is_refused(files, capsys, which):
    before = (files / which).read_text()
    rc, out, err = cli(capsys, "eval", "-o", files / which, files / "qrels", files / "run",
                       files / "run2")
    assert rc == 1 and "-o" in err and "overwrite" in err
    assert (files / which).read_text() == before


def test_output_to_another_file_is_written(files, capsys):
    rc, _, err = cli(capsys, "eval", "-m", "map", "-o", files / "out", files / "qrels",
                     files / "run")
    assert rc == 0, err
    assert (files / "out").read_text().startswith("map")


def test_negative_relevance_level_is_refused(files, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "-l", "-1", str(files / "qrels"), str(files / "run")])
    assert exc.value.code == 2
    assert "-l/--level" in capsys.readouterr().err


def test_infap_interval_is_refused_over_judged_documents_only(tmp_path, capsys):
    """-J makes infAP condensed AP (biased upward), and --ci gave it infAP's interval anyway
    (on a uniform 20% sample of TREC-8, 5 of 10 runs' intervals missed the true MAP); -J alone
    and --ci alone still run."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 4 r\n1 Q0 b 2 3 r\n1 Q0 c 3 2 r\n1 Q0 d 4 1 r\n")
    q, r = tmp_path / "q", tmp_path / "r"
    rc, out, err = cli(capsys, "eval", "-J", "--ci", "0.95", "-m", "infAP", q, r)
    assert rc == 1 and out == ""
    assert err.startswith("irsample: infAP with -J is computed over the judged documents alone")
    rc, out, _ = cli(capsys, "eval", "-J", "-m", "infAP", q, r)
    assert rc == 0 and out.split() == ["infAP", "all", "0.8333"]
    rc, out, _ = cli(capsys, "eval", "--ci", "0.95", "-m", "infAP", q, r)
    assert rc == 0 and "infAP_low" in out


def test_a_topic_named_all_is_refused_per_topic(tmp_path, capsys):
    """A topic named ``all`` printed per topic (-q) reads as the summary (JSON kept one of its
    two values); refused before any output, and evaluated without -q as before."""
    (tmp_path / "q").write_text("all 0 a 1\n1 0 a 1\n")
    (tmp_path / "r").write_text("all Q0 a 1 1 r\n1 Q0 b 1 1 r\n")
    out_file = tmp_path / "out.json"
    rc, out, err = cli(capsys, "eval", "-q", "--format", "json", "-m", "map",
                       tmp_path / "q", tmp_path / "r", "-o", out_file)
    assert rc == 1 and out == "" and not out_file.exists()
    assert "a topic is named 'all', as the summary lines are" in err
    rc, out, _ = cli(capsys, "eval", "-m", "map", tmp_path / "q", tmp_path / "r")
    assert rc == 0 and out.split() == ["map", "all", "0.5000"]


def test_two_measures_printing_under_one_name_are_refused(files, capsys):
    """iprec_at_recall at 0.12 and 0.125 both print as iprec_at_recall_0.12 (two decimals, as
    trec_eval names them), and JSON kept one of the two values; the same measure asked twice
    is printed once, as before."""
    rc, out, err = cli(capsys, "eval", "-m", "iprec_at_recall.0.12,0.125", "--format", "json",
                       files / "qrels", files / "run")
    assert rc == 1 and out == ""
    assert "both print as iprec_at_recall_0.12" in err
    rc, out, _ = cli(capsys, "eval", "-m", "P.5", "-m", "P@5", files / "qrels", files / "run")
    assert rc == 0 and out.split() == ["P_5", "all", "0.3000"]


def test_a_string_measure_in_sample_eval_format_is_refused(files, capsys):
    """sample_eval's format prints numbers alone: relstring per topic went missing from it
    without a word. Refused before any output; trec's format keeps printing it."""
    rc, out, err = cli(capsys, "eval", "-q", "--format", "sample_eval", "-m", "relstring",
                       "-m", "P_5", files / "qrels", files / "run")
    assert rc == 1 and out == ""
    assert "relstring@10 has no line in sample_eval's format" in err
    rc, out, _ = cli(capsys, "eval", "-q", "-m", "relstring", files / "qrels", files / "run")
    assert rc == 0 and "relstring" in out


def test_two_measures_under_one_sample_eval_name_are_refused(files, capsys):
    """sample_eval's layout names xinfAP 'infAP': with trec_eval's infAP beside it, two lines
    named infAP came out, one of each, which no reader could tell apart."""
    rc, out, err = cli(capsys, "eval", "--format", "sample_eval", "-m", "xinfAP", "-m", "infAP",
                       files / "qrels", files / "run")
    assert rc == 1 and out == ""
    assert "--format sample_eval prints infAP and xinfAP both as 'infAP'" in err
    rc, out, _ = cli(capsys, "eval", "--format", "sample_eval", "-m", "xinfAP", files / "qrels",
                     files / "run")
    assert rc == 0 and out.startswith("infAP\t\tall")


def test_relstring_is_quoted_in_trec_format_only(files, capsys):
    """trec_eval prints relstring in single quotes; the data formats give the string bare."""
    import json

    rc, out, _ = cli(capsys, "eval", "-q", "-m", "relstring", files / "qrels", files / "run")
    trec = [line.split("\t")[2] for line in out.splitlines()]
    assert rc == 0 and trec and all(v.startswith("'") and v.endswith("'") for v in trec)
    rc, out, _ = cli(capsys, "eval", "-q", "-m", "relstring", "--format", "json",
                     files / "qrels", files / "run")
    values = [m["relstring"] for run in json.loads(out).values() for m in run.values()
              if "relstring" in m]
    assert rc == 0 and values == [v.strip("'") for v in trec]
    rc, out, _ = cli(capsys, "eval", "-q", "-m", "relstring", "--format", "tsv",
                     files / "qrels", files / "run")
    assert [line.split("\t")[3] for line in out.splitlines()[1:]] == values
