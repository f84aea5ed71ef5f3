"""Byte-level fuzzing of every file reader of irsample.io.

Each reader gets bytes that look like its format (the right number of fields, most of the time,
drawn from tokens that probe the edges: BOMs, non-UTF-8 bytes, inf/nan, huge and fractional
numbers, CRs, comments, NULs), then mutated at random byte positions, sometimes gzip-compressed
or truncated. Two properties:

- the reader either returns or raises :class:`~irsample.errors.InputError` (never another
  exception: that would be a traceback on the command line);
- an accepted file round-trips: written back in the format's canonical form (irsample's own
  writers where there is one) and read again, it gives the same arrays.

The number of examples per reader is ``IRSAMPLE_FUZZ_EXAMPLES`` (default 300, so the default
suite stays quick); CI sets 1500, i.e. 10,500 cases over the seven readers.
"""

from __future__ import annotations

import gzip
import io
import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irsample.errors import InputError, InputWarning
from irsample.io import load_qrels
from irsample.io.lists import read_group_map, read_run_list
from irsample.io.strata import read_prels, read_strata_qrels
from irsample.io.trec import read_qrels, read_run
from irsample.io.writers import (
    format_prels,
    format_qrels,
    format_run,
    format_strata_qrels,
)

EXAMPLES = int(os.environ.get("IRSAMPLE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)

EDGE = [
    b"1", b"0", b"-1", b"2", b"3", b"+3", b"-0", b"1.0", b"1.", b"1.5", b".5", b"5.", b"0.5",
    b"0.25", b"1e5", b"1e", b"e5", b"1E-3", b"inf", b"-inf", b"Infinity", b"nan", b"NaN",
    b"1e999", b"-1e999", b"4.9e-324", b"2147483647", b"2147483648", b"-2147483648",
    b"-2147483649", b"1000000000", b"99999999999999999999999", b"0.12345678901234567890123",
    b"0x10", b"1_0", b"-999", b"Q0", b"#", b"#x", b"\xef\xbb\xbf", b"\xff", b"\xc3\xa9",
    b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc3", b"\x00", b"a\x00b", b"judged", b"notjudged",
    b"a:b", b":", b"::", b"t", b"run", b"\xe2\x80\xa8", b"\xc2\x85",
]
ID = st.one_of(
    st.sampled_from([b"1", b"2", b"10", b"401", b"q1", b"d1", b"d2", b"FBIS3-1", b"doc", b"s1"]),
    st.binary(min_size=1, max_size=4).map(
        lambda b: bytes(c for c in b if c not in b" \t\n\r\v\f") or b"x"
    ),
)
TOKEN = st.one_of(st.sampled_from(EDGE), ID, st.integers(-5, 5).map(lambda i: str(i).encode()),
                  st.floats(allow_nan=True, allow_infinity=True).map(lambda f: repr(f).encode()))
SEP = st.sampled_from([b" ", b" ", b" ", b"\t", b"  ", b"\x0b", b"\x0c", b"\r"])
GOOD_ID = st.sampled_from(
    [b"1", b"2", b"10", b"q1", b"d1", b"d2", b"d3", b"FBIS3-1", b"s1", b"\xc3\xa9"]
)
INT = st.one_of(
    st.integers(-2, 4).map(lambda i: str(i).encode()), st.sampled_from([b"1.0", b"-999"])
)
NUM = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(lambda f: repr(f).encode()),
    st.integers(-1000, 1000).map(lambda i: str(i).encode()),
)
PROB = st.one_of(
    st.floats(0.0, 1.0).map(lambda f: repr(f).encode()), st.sampled_from([b"1", b"0.5"])
)
#: per format, the pool of each field when a line is drawn "typed" (mostly valid)
SHAPES = {
    "run": [GOOD_ID, st.just(b"Q0"), GOOD_ID, INT, NUM, st.sampled_from([b"t", b"run", b"u"])],
    "qrels": [GOOD_ID, st.just(b"0"), GOOD_ID, INT],
    "strata": [GOOD_ID, st.just(b"0"), GOOD_ID, st.sampled_from([b"1", b"2", b"s"]), INT],
    "prels": [GOOD_ID, GOOD_ID, INT, st.just(b"1"), PROB],
    "list": [GOOD_ID, st.sampled_from([b"judged", b"notjudged"])],
    "groups": [GOOD_ID, GOOD_ID],
}


@st.composite
def records(draw, shape: str) -> bytes:
    """A file of lines shaped like ``shape`` (typed fields or edge tokens, sometimes the wrong
    number of them), then random byte mutations, gzip or a truncated gzip."""
    pools = SHAPES[shape]
    n_fields = len(pools)
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 19))
        if kind == 0:
            lines.append(draw(st.sampled_from([b"", b"   ", b"# comment", b"\t#x y"])))
            continue
        count = n_fields if kind > 2 else draw(st.integers(0, n_fields + 2))
        typed = kind > 6
        tokens = [
            draw(pools[i] if typed and i < n_fields and draw(st.integers(0, 9)) else TOKEN)
            for i in range(count)
        ]
        if shape == "list" and typed:
            tokens = tokens[: draw(st.integers(1, 2))]
        line = b""
        for i, tok in enumerate(tokens):
            line += (draw(SEP) if i else draw(st.sampled_from([b"", b"", b" "]))) + tok
        lines.append(line + draw(st.sampled_from([b"", b"", b" ", b"\r"])))
    data = b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\n\n"]))
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    for _ in range(draw(st.integers(0, 3)) if draw(st.integers(0, 3)) == 0 else 0):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + draw(st.binary(min_size=0, max_size=3)) + data[at + 1 :]
    packing = draw(st.integers(0, 9))
    if packing == 0:
        data = gzip.compress(data, mtime=0)
    elif packing == 1:
        packed = gzip.compress(data, mtime=0)
        data = packed[: draw(st.integers(0, len(packed)))]
    return data


def stream(data: bytes) -> io.BytesIO:
    out = io.BytesIO(data)
    out.name = "fuzz"
    return out


def accepted(reader, data: bytes):
    """The reader's result, or None when it refused the file with an InputError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InputWarning)
        try:
            return reader(stream(data))
        except InputError as exc:
            assert exc.source == "fuzz"
            return None


def strings(values) -> list[bytes]:
    return values.to_pylist()


def text(values) -> list[str]:
    return [v.decode("utf-8", "surrogateescape") for v in values.to_pylist()]


def same_float(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and np.array_equal(a, b) and np.all(np.isfinite(a))


@FUZZ
@given(records("run"))
def test_run_reader(data):
    run = accepted(read_run, data)
    if run is None:
        return
    again = read_run(stream(format_run(run)))
    assert again.name == run.name
    key = sorted(zip(strings(run.qid), strings(run.docno), run.score.tolist()))
    assert sorted(zip(strings(again.qid), strings(again.docno), again.score.tolist())) == key
    assert np.all(np.isfinite(run.score))


def written_back(table):
    """A qrels-like table written in its own format (prels, stratified qrels or qrels) and read
    back by that format's reader."""
    if table.prob is not None:
        return read_prels(
            stream(format_prels(text(table.qid), text(table.docno), table.rel, table.prob))
        )
    if table.stratum is not None:
        return read_strata_qrels(stream(format_strata_qrels(
            text(table.qid), text(table.docno), text(table.stratum), table.rel)))
    return read_qrels(stream(format_qrels(table)))


def assert_same_judgments(again, table):
    """Every field of ``table`` (and its strata or probabilities, if any) survived."""
    assert strings(again.qid) == strings(table.qid)
    assert strings(again.docno) == strings(table.docno)
    assert again.rel.tolist() == table.rel.tolist()
    if table.stratum is not None:
        assert strings(again.stratum) == strings(table.stratum)
    if table.prob is not None:
        assert same_float(again.prob, table.prob)


@FUZZ
@given(records("qrels"))
def test_qrels_reader(data):
    qrels = accepted(read_qrels, data)
    if qrels is None:
        return
    assert_same_judgments(written_back(qrels), qrels)


@FUZZ
@given(records("strata"))
def test_strata_reader(data):
    qrels = accepted(read_strata_qrels, data)
    if qrels is None:
        return
    assert_same_judgments(written_back(qrels), qrels)


@FUZZ
@given(records("prels"))
def test_prels_reader(data):
    prels = accepted(read_prels, data)
    if prels is None:
        return
    judged = prels.rel >= 0  # rows below 0 list pooled documents, whatever their pi
    assert np.all((prels.prob[judged] > 0) & (prels.prob[judged] <= 1))
    if len(prels) == 0:  # every record skipped (not sampled): nothing to write back
        return
    assert_same_judgments(written_back(prels), prels)


@FUZZ
@given(st.one_of(records("qrels"), records("strata"), records("prels")))
def test_detected_qrels_reader(data):
    """``load_qrels`` picks the format from the file, then reads it like the chosen reader."""
    qrels = accepted(load_qrels, data)
    if qrels is None or len(qrels) == 0:
        return
    assert_same_judgments(written_back(qrels), qrels)


@FUZZ
@given(records("list"))
def test_run_list_reader(data):
    names = accepted(read_run_list, data)
    if names is None:
        return
    kept = [n for n, _ in names]
    if not kept:  # every run flagged notjudged: nothing to write back
        return
    again = read_run_list(stream("".join(f"{n}\n" for n in kept).encode()))
    assert [n for n, _ in again] == kept


@FUZZ
@given(st.one_of(records("groups"), records("groups").map(lambda d: d.replace(b" ", b":"))))
def test_group_map_reader(data):
    groups = accepted(read_group_map, data)
    if groups is None:
        return
    canonical = "".join(f"{run}:{group}\n" for run, (group, _) in groups.items()).encode()
    again = read_group_map(stream(canonical))
    assert {r: g for r, (g, _) in again.items()} == {r: g for r, (g, _) in groups.items()}
