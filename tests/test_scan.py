"""The numba number parsers agree bit for bit with Python's correctly rounded parsing."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.io._scan import parse_float_fields, parse_int_fields
from irsample.io._scan_run import record_cap, scan_run

finite = st.floats(allow_nan=False, allow_infinity=False)
decimal_text = st.one_of(
    finite.map(repr),
    finite.map(lambda x: f"{x:.6f}"),
    st.tuples(st.integers(-(10**20), 10**20), st.integers(-40, 40)).map(lambda t: f"{t[0]}e{t[1]}"),
    st.from_regex(r"[+-]?[0-9]{0,20}\.?[0-9]{0,20}([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)


def _spans(tokens):
    data = " ".join(tokens).encode()
    starts, pos = [], 0
    for t in tokens:
        starts.append(pos)
        pos += len(t) + 1
    ends = [s + len(t) for s, t in zip(starts, tokens)]
    return np.frombuffer(data, np.uint8), np.array(starts, np.int64), np.array(ends, np.int64)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(decimal_text, min_size=1, max_size=30))
def test_fast_float_path_is_exact(tokens):
    buf, starts, ends = _spans(tokens)
    values, slow = parse_float_fields(buf, starts, ends)
    for token, value, is_slow in zip(tokens, values, slow):
        try:
            expected = float(token)
        except ValueError:
            assert is_slow, token  # not a number: left to the careful path, which reports it
            continue
        if not is_slow:
            assert struct.pack("<d", value) == struct.pack("<d", expected), token


short_decimal = st.from_regex(r"-?[0-9]{0,16}\.?[0-9]{0,16}", fullmatch=True).filter(bool)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.one_of(decimal_text, short_decimal).filter(bool), min_size=1, max_size=30))
def test_run_scanner_scores_are_exact(tokens):
    """scan_run's own score path (short ``[-]digits[.digits]`` first) is exact too."""
    text = "".join(f"1 Q0 d{i} {i} {t} tag\n" for i, t in enumerate(tokens)).encode()
    buf = np.frombuffer(text, np.uint8)
    count, *_, score, lineno, slow, short, _, _, _ = scan_run(buf, record_cap(buf))
    assert count == len(tokens) and short == -1
    left = set(slow[:, 0].tolist())
    for i, token in enumerate(tokens):
        try:
            expected = float(token)
        except ValueError:
            assert i in left, token  # not a number: left to the careful path, which reports it
            continue
        if i not in left:
            assert struct.pack("<d", score[i]) == struct.pack("<d", expected), token


def test_typical_scores_take_the_fast_path():
    tokens = ["2.129133", "-0.5", "12461.87", "1e-05", "17", "0.000123", "-0"]
    buf, starts, ends = _spans(tokens)
    values, slow = parse_float_fields(buf, starts, ends)
    assert not slow.any()
    assert values.tolist() == [float(t) for t in tokens]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=20))
def test_integers_parse_like_atol(numbers):
    tokens = [str(n) for n in numbers] + ["1.0", "-2.0", "+3", "4."]
    buf, starts, ends = _spans(tokens)
    values, bad, fractional = parse_int_fields(buf, starts, ends)
    assert bad == -1 and not fractional
    assert values.tolist() == numbers + [1, -2, 3, 4]


def test_integer_junk_is_flagged():
    buf, starts, ends = _spans(["1", "x", "2"])
    assert parse_int_fields(buf, starts, ends)[1:] == (1, False)


def test_integer_fraction_is_flagged():
    # atol would read "1.7" as 1; the parser reports it so the reader can refuse it
    buf, starts, ends = _spans(["1", "2.00", "1.7"])
    assert parse_int_fields(buf, starts, ends)[1:] == (2, True)
