"""statAP's reading of the prels' method column and of thin topics (reference-semantics §3.2).

statAP_MQ_eval (v3, default mixed evaluation) takes documents of method 0 (MTC's selection)
and 2 (selected by both methods) as judged with certainty, pi = 1, whatever probability the
file gives, and leaves out the topics judged by method 0 alone. The Million Query prels have
both (prels.mq.1-10000: 800 of 1,778 topics with method-2 rows below 1, 429 topics of method
0 alone); the expected values below are worked by hand from the script's formulas.
"""

from __future__ import annotations

import pytest

from irsample.cli import main
from irsample.errors import InputWarning
from irsample.io import read_prels

RUN = "1 Q0 x 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n2 Q0 a 1 2 r\n2 Q0 b 2 1 r\n"


def _eval(capsys, tmp_path, prels, *measures, run=RUN):
    (tmp_path / "p.prels").write_text(prels)
    (tmp_path / "r.run").write_text(run)
    args = ["eval", "-q", "--places", "exact", "--format", "tsv", "--qrels-format", "prels"]
    for m in measures:
        args += ["-m", m]
    rc = main(args + [str(tmp_path / "p.prels"), str(tmp_path / "r.run")])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rows = (ln.split("\t") for ln in out.splitlines()[1:])
    return {(m, q): float(v) for _, q, m, v in rows}, err


def test_methods_0_and_2_are_certain(capsys, tmp_path):
    """Topic 1: b (method 2, given 0.5) at rank 2 and a (method 1, 0.5) at rank 3, both
    relevant: R^ = 1/1 + 1/0.5 = 3; statAP = (1/2 / 1 + (1 + 1)/3 / 0.5) / 3 = 0.6111.
    Read at face value (pi_b = 0.5) it would be R^ = 4, statAP 0.75."""
    got, _ = _eval(capsys, tmp_path, "1 a 1 1 0.5\n1 b 1 2 0.5\n1 c 0 1 0.5\n",
                   "statAP", "statnum_rel")
    assert got["statnum_rel", "1"] == pytest.approx(3.0, abs=1e-12)
    assert got["statAP", "1"] == pytest.approx((0.5 + (2 / 3) / 0.5) / 3, abs=1e-12)


def test_topics_of_method_0_alone_are_left_out(capsys, tmp_path):
    """Topic 1 judged by method 0 alone is left out of the mean, with a warning naming it and
    its line; topic 2 (method 1) alone is averaged: a at rank 1 relevant (pi 0.5), R^ = 2,
    statAP = (1/1 / 0.5) / 2 = 1."""
    prels = "1 a 1 0 1\n1 b 0 0 1\n2 a 1 1 0.5\n2 b 0 1 0.5\n"
    got, err = _eval(capsys, tmp_path, prels, "statAP")
    assert ("statAP", "1") not in got
    assert got["statAP", "2"] == pytest.approx(1.0) and got["statAP", "all"] == pytest.approx(1.0)
    assert "p.prels:1: left out 1 topic(s) judged by method 0 alone" in err
    assert "the first: 1" in err


def test_a_method_0_record_with_probability_0_is_kept(tmp_path):
    """The script checks the range before it replaces a method-0 or method-2 probability by 1,
    and the range it checks lets 0 through; for the other methods 0 stays outside (0, 1]."""
    path = tmp_path / "p.prels"
    path.write_text("1 a 1 0 0\n1 b 1 1 0.5\n1 c 1 1 0\n")
    with pytest.warns(InputWarning, match=r"skipped 1 record\(s\).*the first: 0"):
        table = read_prels(str(path))
    assert [d.as_py() for d in table.docno] == [b"a", b"b"]
    assert list(table.prob) == [1.0, 0.5]


def test_a_non_integer_method_is_an_error(capsys, tmp_path):
    (tmp_path / "p.prels").write_text("1 a 1 1 0.5\n1 b 1 x 0.5\n")
    (tmp_path / "r.run").write_text(RUN)
    rc = main(["eval", "-m", "statAP", "--qrels-format", "prels",
               str(tmp_path / "p.prels"), str(tmp_path / "r.run")])
    out, err = capsys.readouterr()
    assert rc == 1 and out == "" and "p.prels:2:" in err and "method" in err


@pytest.mark.parametrize("prob", ["0.5", "1"])
def test_one_sampled_document(capsys, tmp_path, prob):
    """A topic with one sampled document: statAP is 1 for a relevant one at rank 1, and the
    variance's cross term (pairs of sampled documents, over n - 1) is 0: var = (1 - pi)/pi^2 /
    R^2, 0.5 at pi 0.5 (R^ = 2) and 0 at pi 1."""
    got, _ = _eval(capsys, tmp_path, f"1 x 1 1 {prob}\n", "statAP", "statAP_var")
    assert got["statAP", "1"] == 1.0
    assert got["statAP_var", "1"] == pytest.approx(0.5 if prob == "0.5" else 0.0)


@pytest.mark.parametrize("name, text, kind", [
    ("s.strata", "1 0 a 1-5 1\n1 0 b 1-5 -1\n", "stratified qrels"),
    ("t.qrels", "1 0 a 1\n1 0 b -1\n", "TREC qrels"),
])
def test_statap_without_prels_names_the_file_and_the_format(capsys, tmp_path, name, text, kind):
    """'statAP needs prels' named neither the file nor how to write prels."""
    (tmp_path / name).write_text(text)
    (tmp_path / "r.run").write_text(RUN)
    rc = main(["eval", "-m", "statAP", str(tmp_path / name), str(tmp_path / "r.run")])
    err = capsys.readouterr().err
    assert rc == 1 and f"{tmp_path / name}: statAP needs prels" in err, err
    assert f"these are {kind}" in err and "irsample merge design.json JUDGED --format prels" in err
