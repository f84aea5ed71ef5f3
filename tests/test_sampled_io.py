"""Stratified qrels and prels: reading, format detection, errors, and the estimators on them."""

from __future__ import annotations

import io

import pytest

from irsample.errors import InputError
from irsample.evaluation import evaluate_collection
from irsample.io import load_qrels, load_runs
from irsample.io.strata import detect_qrels_format, read_prels, read_strata_qrels
from irsample.measures import parse_all
from irsample.model import Collection, Judgments

STRATA = b"1 0 a s1 1\n1 0 b s1 0\n1 0 c s2 -1\n1 0 d s2 1\n1 0 e s2 0\n"
PRELS = b"1 a 1 1 0.5\n1 b 0 1 0.25\n1 c 1 2 1\n1 x -999 1 0.5\n1 y 1 1 0\n"


def stream(data: bytes, name="f"):
    buf = io.BytesIO(data)
    buf.name = name
    return buf


def test_strata_reader_keeps_labels_and_states():
    table = read_strata_qrels(stream(STRATA))
    assert table.stratum.to_pylist() == [b"s1", b"s1", b"s2", b"s2", b"s2"]
    assert table.rel.tolist() == [1, 0, -1, 1, 0]


def test_prels_reader_skips_unsampled_records():
    table = read_prels(stream(PRELS))
    assert table.docno.to_pylist() == [b"a", b"b", b"c"]  # -999 and probability 0 skipped
    assert table.prob.tolist() == [0.5, 0.25, 1.0]


@pytest.mark.parametrize(
    "data, fmt",
    [
        (b"1 0 a 1\n", "trec"),
        (STRATA, "strata"),
        (PRELS, "prels"),
        (b"1 a 1 1 1\n1 b 0 1 0.5\n", "prels"),
    ],
)
def test_format_detection(data, fmt):
    assert detect_qrels_format(stream(data)) == fmt
    assert load_qrels(stream(data)) is not None


def test_format_override_and_unknown_format():
    assert load_qrels(stream(b"1 a 1 1 1\n"), "prels").prob.tolist() == [1.0]
    with pytest.raises(InputError, match="unknown qrels format"):
        load_qrels(stream(b"1 0 a 1\n"), "nope")


@pytest.mark.parametrize(
    "data, line, message",
    [
        (b"1 0 a s1 1\n1 0 b s1\n", 2, "exactly 5 fields"),  # sample_eval would misalign silently
        (b"1 0 a s1 1\n\n1 0 b s1 x\n", 3, "not an integer"),
        (b"1 0 a s1 1\n1 0 a s2 0\n", 2, "duplicate"),
    ],
)
def test_strata_errors_name_the_line(data, line, message):
    with pytest.raises(InputError, match=message) as err:
        read_strata_qrels(stream(data, "strata.txt"))
    assert f"strata.txt:{line}:" in str(err.value)


def test_prels_bad_probability_names_the_line():
    with pytest.raises(InputError, match="inclusion probability") as err:
        read_prels(stream(b"1 a 1 1 0.5\n1 b 0 1 half\n", "p"))
    assert "p:2:" in str(err.value)


def test_estimators_by_hand():
    """Two strata; every number below follows reference-semantics §3.1 by hand."""
    table = read_strata_qrels(stream(STRATA))
    run = stream(b"1 Q0 a 1 5 r\n1 Q0 c 2 4 r\n1 Q0 d 3 3 r\n1 Q0 z 4 2 r\n")
    runs = load_runs([run])
    collection = Collection.build(runs, [table])
    ev = evaluate_collection(
        collection,
        Judgments.from_qrels(collection, table),
        parse_all(["xinfAP", "inum_rel", "inum_rel_ret", "iP.1,4"]),
    )
    values = dict(zip([m.trec_name for m in ev.measures], ev.values[0, 0]))
    # R^: s1 1 rel of 2 sampled of 2; s2 1 rel of 2 sampled of 3 -> 1 + 1.5
    assert values["inum_rel"] == pytest.approx(2.5)
    # rank 1 (a, s1, rel): prec 1. Then d=(1,0), m=(1,0), q=(1,0).
    # rank 2 (c, s2, unsampled): d=(1,1), m=(1,0). rank 3 (d, s2, rel):
    # prec = 1/3 + (2/3) * [0.5 (1+1e-5)/(1+3e-5) + 0.5 (0+1e-5)/(0+3e-5)]
    p3 = 1 / 3 + (2 / 3) * (0.5 * (1 + 1e-5) / (1 + 3e-5) + 0.5 * (1e-5 / 3e-5))
    xinfap = (1 / 2.5) * (1.0 / 1) + (1.5 / 2.5) * (p3 / 1)
    assert values["xinfAP"] == pytest.approx(xinfap, rel=1e-12)
    # E after rank 4 (z is outside every stratum): d=(1,2), m=(1,1), q=(1,1)
    e4 = 1 * (1 + 1e-5) / (1 + 3e-5) + 2 * (1 + 1e-5) / (1 + 3e-5)
    assert values["inum_rel_ret"] == pytest.approx(e4, rel=1e-12)
    assert values["iP_4"] == pytest.approx(e4 / 4, rel=1e-12)
    assert values["iP_1"] == pytest.approx((1 + 1e-5) / (1 + 3e-5), rel=1e-12)


def test_prels_with_whole_probabilities_read_as_strata_say_how_to_read_them(tmp_path):
    """A 5-field file whose fifth fields are all whole numbers is detected as stratified
    qrels; prels of probability 1 then fail there, and the error names the format option."""
    from irsample.io import load_qrels

    path = tmp_path / "p1.prels"
    path.write_text("1 d1 0 1 1\n1 d2 0 1 1\n")  # as strata: document 0 twice
    with pytest.raises(InputError, match=r"p1.prels:2: duplicate judgment.*--qrels-format prels"):
        load_qrels(str(path))
    assert load_qrels(str(path), "prels").prob.tolist() == [1.0, 1.0]
