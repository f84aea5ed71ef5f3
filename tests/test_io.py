"""Readers of runs and qrels (reference-semantics §1) and the data model built from them.

Everything here uses tiny inputs written to ``tmp_path`` or the bundled Vaswani example data; no
``../shared``.
"""

from __future__ import annotations

import gzip
import io
import random
import re
import shutil
import struct
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irsample
from irsample.errors import InputError
from irsample.io import load_qrels, load_runs, read_qrels, read_run
from irsample.model import JUDGED, POOLED, UNPOOLED, Collection, Judgments

VASWANI = Path(irsample.__file__).resolve().parent / "data" / "vaswani"


# ---- helpers -------------------------------------------------------------------------------------
def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def strings(array: pa.Array) -> list[str]:
    return [b.decode() for b in array.to_pylist()]


def bits(values) -> list[int]:
    """Exact bit patterns of float64 values (distinguishes -0.0 from 0.0)."""
    return [struct.unpack("<q", struct.pack("<d", float(v)))[0] for v in values]


def stdin_with(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))


COLLECTION_ARRAYS = (
    "docnos",
    "topic_doc_offsets",
    "tdi_doc",
    "rank_offsets",
    "rank_tdi",
    "rank_score",
)


def assert_same_collection(a: Collection, b: Collection) -> None:
    assert a.topics == b.topics
    assert a.run_names == b.run_names
    for name in COLLECTION_ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, pa.Array):
            assert x.equals(y), name
        else:
            assert np.array_equal(x, y), name
            assert x.dtype == y.dtype, name


RUN_TEXT = "1 Q0 d1 1 3.5 tagA\n1 Q0 d2 2 2.25 tagA\n2 Q0 d1 1 -1 tagA\n"
QRELS_TEXT = "1 0 d1 1\n1 0 d3 0\n2 0 d9 2\n"


def check_run(run, source: str) -> None:
    assert run.name == "tagA"
    assert run.source == source
    assert strings(run.qid) == ["1", "1", "2"]
    assert strings(run.docno) == ["d1", "d2", "d1"]
    assert run.score.tolist() == [3.5, 2.25, -1.0]
    assert run.lineno.tolist() == [1, 2, 3]
    assert len(run) == 3


def check_qrels(qrels, source: str) -> None:
    assert qrels.source == source
    assert strings(qrels.qid) == ["1", "1", "2"]
    assert strings(qrels.docno) == ["d1", "d3", "d9"]
    assert qrels.rel.tolist() == [1, 0, 2]
    assert qrels.rel.dtype == np.int64
    assert qrels.lineno.tolist() == [1, 2, 3]


# ---- sources: plain, gzip, streams, stdin --------------------------------------------------------
def test_plain_text(tmp_path):
    run_path = write(tmp_path / "run.txt", RUN_TEXT)
    qrels_path = write(tmp_path / "qrels.txt", QRELS_TEXT)
    check_run(read_run(run_path), str(run_path))
    check_run(read_run(str(run_path)), str(run_path))
    check_qrels(read_qrels(qrels_path), str(qrels_path))


@pytest.mark.parametrize("name", ["run.gz", "run.txt", "run"])
def test_gzip_detected_by_magic_bytes_whatever_the_name(tmp_path, name):
    run_path = write(tmp_path / name, gzip.compress(RUN_TEXT.encode()))
    check_run(read_run(run_path), str(run_path))
    qrels_path = write(tmp_path / ("q" + name), gzip.compress(QRELS_TEXT.encode()))
    check_qrels(read_qrels(qrels_path), str(qrels_path))


def test_plain_text_named_gz_is_read_as_text(tmp_path):
    run_path = write(tmp_path / "run.gz", RUN_TEXT)
    check_run(read_run(run_path), str(run_path))


def test_bundled_gzip_copied_without_extension(tmp_path):
    src = VASWANI / "runs" / "coord.run.gz"
    plain = tmp_path / "coord"
    shutil.copyfile(src, plain)
    a, b = read_run(src), read_run(plain)
    assert a.name == b.name == "coord"
    assert len(a) == len(b) == 46500
    assert a.qid.equals(b.qid) and a.docno.equals(b.docno)
    assert np.array_equal(a.score, b.score)
    with gzip.open(src, "rt") as fh:
        first = fh.readline().split()
    assert (strings(a.qid[:1])[0], strings(a.docno[:1])[0], a.score[0]) == (
        first[0],
        first[2],
        float(first[4]),
    )


@pytest.mark.parametrize("compress", [False, True])
def test_binary_stream(compress):
    data = RUN_TEXT.encode()
    stream = io.BytesIO(gzip.compress(data) if compress else data)
    check_run(read_run(stream), "<stream>")
    data = QRELS_TEXT.encode()
    stream = io.BytesIO(gzip.compress(data) if compress else data)
    check_qrels(read_qrels(stream), "<stream>")


def test_named_binary_stream_uses_its_name(tmp_path):
    path = write(tmp_path / "r.txt", RUN_TEXT)
    with open(path, "rb") as fh:
        check_run(read_run(fh), str(path))


@pytest.mark.parametrize("compress", [False, True])
def test_stdin_dash(monkeypatch, compress):
    data = RUN_TEXT.encode()
    stdin_with(monkeypatch, gzip.compress(data) if compress else data)
    check_run(read_run("-"), "<stdin>")
    data = QRELS_TEXT.encode()
    stdin_with(monkeypatch, gzip.compress(data) if compress else data)
    check_qrels(read_qrels("-"), "<stdin>")


def test_stdin_error_names_stdin(monkeypatch):
    stdin_with(monkeypatch, b"1 Q0 d1 1 1 t\n1 Q0 d2 1 t\n")
    with pytest.raises(InputError) as info:
        read_run("-")
    assert info.value.source == "<stdin>"
    assert info.value.line == 2
    assert str(info.value).startswith("<stdin>:2: ")


def test_stdin_only_once(monkeypatch, tmp_path):
    stdin_with(monkeypatch, RUN_TEXT.encode())
    with pytest.raises(InputError, match="only once"):
        load_runs(["-", "-"])


# ---- whitespace, line endings, comments, fields --------------------------------------------------
def test_tabs_and_multiple_spaces(tmp_path):
    run_path = write(
        tmp_path / "run",
        "1\tQ0\td1\t1\t3.5\ttagA\n  1   Q0  d2 \t 2   2.25\t\ttagA  \n2 \t Q0 d1 1 -1 tagA",
    )
    check_run(read_run(run_path), str(run_path))
    qrels_path = write(tmp_path / "qrels", "1\t0\td1\t1\n1  0   d3\t 0 \n\t2 0 d9 2")
    check_qrels(read_qrels(qrels_path), str(qrels_path))


def test_crlf_line_endings(tmp_path):
    run_path = write(tmp_path / "run", RUN_TEXT.replace("\n", "\r\n"))
    run = read_run(run_path)
    check_run(run, str(run_path))
    assert run.name == "tagA"  # no trailing \r in the tag
    qrels_path = write(tmp_path / "qrels", QRELS_TEXT.replace("\n", "\r\n"))
    check_qrels(read_qrels(qrels_path), str(qrels_path))


def test_crlf_error_line_number(tmp_path):
    path = write(tmp_path / "run", "1 Q0 d1 1 1 t\r\n\r\n# c\r\n1 Q0 d2 2 abc t\r\n")
    with pytest.raises(InputError) as info:
        read_run(path)
    assert (info.value.source, info.value.line) == (str(path), 4)
    assert str(info.value).startswith(f"{path}:4: ")


def test_blank_and_comment_lines_skipped_but_counted(tmp_path):
    text = (
        "# a comment\n"
        "\n"
        "1 Q0 d1 1 3.5 tagA\n"
        "   \n"
        "   # indented comment\n"
        "1 Q0 d2 2 2.25 tagA\n"
        "\t\n"
        "2 Q0 d1 1 -1 tagA\n"
        "# trailing comment 1 Q0 d7 1 9 other\n"
    )
    run = read_run(write(tmp_path / "run", text))
    assert strings(run.docno) == ["d1", "d2", "d1"]
    assert run.lineno.tolist() == [3, 6, 8]
    assert run.name == "tagA"

    qrels = read_qrels(write(tmp_path / "qrels", "#h\n\n1 0 d1 1\n\n# x\n1 0 d3 0\n"))
    assert strings(qrels.docno) == ["d1", "d3"]
    assert qrels.lineno.tolist() == [3, 6]

    bad = write(tmp_path / "bad", "# header\n\n1 Q0 d1 1 1 t\n\n# c\n1 Q0 d2 2 t\n")
    with pytest.raises(InputError) as info:
        read_run(bad)
    assert str(info.value).startswith(f"{bad}:6: ")


def test_more_than_six_run_fields_accepted(tmp_path):
    path = write(
        tmp_path / "run",
        "1 Q0 d1 1 3.5 tagA extra\n1 Q0 d2 2 2.25 tagA x y z\n2 Q0 d1 1 -1 tagA 7\n",
    )
    check_run(read_run(path), str(path))


def test_run_tag_is_tag_of_last_line(tmp_path):
    path = write(
        tmp_path / "run", "1 Q0 d1 1 3 first\n1 Q0 d2 2 2 middle\n2 Q0 d1 1 1 last\n# z\n\n"
    )
    assert read_run(path).name == "last"


def test_rank_and_iter_columns_ignored(tmp_path):
    a = read_run(write(tmp_path / "a", "1 Q0 x 1 2 t\n1 Q0 y 2 1 t\n"))
    b = read_run(write(tmp_path / "b", "1 zz x 99 2 t\n1 7 y -3 1 t\n"))
    assert_same_collection(Collection.build([a]), Collection.build([b]))


def test_qrels_rel_whole_numbers(tmp_path):
    # like C atol on whole numbers; a nonzero fraction (atol would truncate "1.7") is refused
    path = write(tmp_path / "qrels", "1 0 b 2.0\n1 0 c -1\n1 0 d 0\n1 0 e +3\n1 0 f 1.\n")
    assert read_qrels(path).rel.tolist() == [2, -1, 0, 3, 1]
    bad = write(tmp_path / "bad", "1 0 a 1\n1 0 b 1.7\n")
    with pytest.raises(InputError, match=r"bad:2: relevance must be a whole number, not '1.7'"):
        read_qrels(bad)


def test_negative_rel_is_pooled_unjudged(tmp_path):
    run = read_run(write(tmp_path / "run", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n"))
    qrels = read_qrels(write(tmp_path / "qrels", "1 0 a -1\n1 0 b -2\n1 0 c 1\n"))
    assert qrels.rel.tolist() == [-1, -2, 1]  # kept, not dropped
    coll = Collection.build([run], [qrels])
    j = Judgments.from_qrels(coll, qrels)
    state, grade = doc_facts(coll, j, "1", ["a", "b", "c"])
    assert state == [POOLED, POOLED, JUDGED]
    assert grade == [-1, -2, 1]
    assert grades_of(coll, j, "1") == [1]


# ---- round trip (property) -----------------------------------------------------------------------
_TOKEN_CHARS = st.characters(min_codepoint=33, max_codepoint=126)
QIDS = st.text(_TOKEN_CHARS, min_size=1, max_size=3).filter(lambda s: not s.startswith("#"))
DOCNOS = st.text(_TOKEN_CHARS, min_size=1, max_size=4)
TAGS = st.text(_TOKEN_CHARS, min_size=1, max_size=5)
SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 2.0]),  # plenty of ties
    st.floats(allow_nan=False, allow_infinity=False),
)
SEPARATORS = st.sampled_from([" ", "\t", "  ", " \t "])
RUN_ROWS = st.lists(
    st.tuples(QIDS, DOCNOS, SCORES), min_size=1, max_size=40, unique_by=lambda r: (r[0], r[1])
)
QREL_ROWS = st.lists(
    st.tuples(QIDS, DOCNOS, st.integers(-2, 4)),
    min_size=1,
    max_size=40,
    unique_by=lambda r: (r[0], r[1]),
)
PROPERTY = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def run_lines(rows, tag, sep):
    return [sep.join([q, "Q0", d, str(i + 1), repr(s), tag]) for i, (q, d, s) in enumerate(rows)]


def expected_ranking(rows, qid):
    """trec_eval order by a plain Python sort: score descending, docno descending byte-wise."""
    mine = [(s, d.encode()) for q, d, s in rows if q == qid]
    return [d.decode() for s, d in sorted(mine, reverse=True)]


@PROPERTY
@given(rows=RUN_ROWS, tag=TAGS, sep=SEPARATORS, data=st.data())
def test_run_round_trip_and_ranking(tmp_path, rows, tag, sep, data):
    lines = run_lines(rows, tag, sep)
    path = write(tmp_path / "run", "\n".join(lines) + "\n")
    run = read_run(path)
    assert run.name == tag
    assert strings(run.qid) == [q for q, _, _ in rows]
    assert strings(run.docno) == [d for _, d, _ in rows]
    assert bits(run.score) == bits(s for _, _, s in rows)
    assert run.lineno.tolist() == list(range(1, len(rows) + 1))

    coll = Collection.build([run])
    topics = sorted({q for q, _, _ in rows}, key=str.encode)
    assert list(coll.topics) == topics
    for qid in topics:
        want = expected_ranking(rows, qid)
        assert coll.ranking(0, qid) == want
        assert coll.ranking(tag, qid) == want

    # the order of lines in the file never matters
    perm = data.draw(st.permutations(range(len(lines))))
    shuffled = read_run(write(tmp_path / "shuffled", "\n".join(lines[i] for i in perm)))
    assert_same_collection(coll, Collection.build([shuffled]))


@PROPERTY
@given(rows=QREL_ROWS, sep=SEPARATORS, crlf=st.booleans())
def test_qrels_round_trip(tmp_path, rows, sep, crlf):
    end = "\r\n" if crlf else "\n"
    text = end.join(sep.join([q, "0", d, str(r)]) for q, d, r in rows) + end
    qrels = read_qrels(write(tmp_path / "qrels", text))
    assert strings(qrels.qid) == [q for q, _, _ in rows]
    assert strings(qrels.docno) == [d for _, d, _ in rows]
    assert qrels.rel.tolist() == [r for _, _, r in rows]


# ---- DataFrame and parquet -----------------------------------------------------------------------
TWO_RUNS = {
    "A": "1 Q0 d3 1 2.5 A\n1 Q0 d1 2 2.5 A\n1 Q0 d2 3 0.5 A\n2 Q0 d1 1 7 A\n10 Q0 z 1 1 A\n",
    "B": "2 Q0 d4 1 1 B\n2 Q0 d1 2 3 B\n1 Q0 d2 1 -4 B\n",
}
QRELS_SMALL = "1 0 d1 1\n1 0 d2 0\n2 0 d4 2\n2 0 d8 -1\n3 0 q 1\n"


def text_collection(tmp_path):
    run_paths = [write(tmp_path / f"run{k}", v) for k, v in TWO_RUNS.items()]
    qrels_path = write(tmp_path / "qrels", QRELS_SMALL)
    runs = load_runs(run_paths)
    qrels = load_qrels(qrels_path)
    return runs, qrels, Collection.build(runs, [qrels])


def frame_of(text: str, names=("qid", "docno", "score", "tag")) -> pd.DataFrame:
    rows = [line.split() for line in text.splitlines()]
    return pd.DataFrame(
        {
            names[0]: [r[0] for r in rows],
            names[1]: [r[2] for r in rows],
            names[2]: [float(r[4]) for r in rows],
            **({names[3]: [r[5] for r in rows]} if len(names) > 3 else {}),
        }
    )


def qrels_frame(names=("qid", "docno", "rel")) -> pd.DataFrame:
    rows = [line.split() for line in QRELS_SMALL.splitlines()]
    return pd.DataFrame(
        {
            names[0]: [r[0] for r in rows],
            names[1]: [r[2] for r in rows],
            names[2]: [int(r[3]) for r in rows],
        }
    )


def test_dataframe_with_two_tags_gives_two_runs(tmp_path):
    runs_txt, qrels_txt, coll_txt = text_collection(tmp_path)
    df = pd.concat([frame_of(TWO_RUNS["A"]), frame_of(TWO_RUNS["B"])], ignore_index=True)
    runs = load_runs(df)
    assert [r.name for r in runs] == ["A", "B"]
    for a, b in zip(runs, runs_txt):
        assert a.qid.equals(b.qid) and a.docno.equals(b.docno)
        assert np.array_equal(a.score, b.score)
    qrels = load_qrels(qrels_frame())
    assert qrels.rel.tolist() == qrels_txt.rel.tolist()
    coll = Collection.build(runs, [qrels])
    assert_same_collection(coll, coll_txt)
    ja, jb = Judgments.from_qrels(coll, qrels), Judgments.from_qrels(coll_txt, qrels_txt)
    for name in ("grade", "state", "has_topic", "grade_offsets", "judged_grades"):
        assert np.array_equal(getattr(ja, name), getattr(jb, name)), name


def test_dataframe_ir_datasets_column_names(tmp_path):
    _, _, coll_txt = text_collection(tmp_path)
    names = ("query_id", "doc_id", "score")
    runs = load_runs(frame_of(TWO_RUNS["A"], names)) + load_runs(frame_of(TWO_RUNS["B"], names))
    # no tag column: one run per DataFrame
    assert len(runs) == 2
    qrels = load_qrels(qrels_frame(("query_id", "doc_id", "relevance")))
    coll = Collection.build(runs, [qrels])
    for name in COLLECTION_ARRAYS:
        x, y = getattr(coll, name), getattr(coll_txt, name)
        assert (x.equals(y) if isinstance(x, pa.Array) else np.array_equal(x, y)), name
    assert coll.topics == coll_txt.topics
    # two frames without a tag share name and source: numbered, not refused as one file twice
    assert coll.run_names == (f"{runs[0].name} #1", f"{runs[0].name} #2")


def test_parquet_round_trip(tmp_path):
    runs_txt, qrels_txt, coll_txt = text_collection(tmp_path)
    df = pd.concat([frame_of(TWO_RUNS["A"]), frame_of(TWO_RUNS["B"])], ignore_index=True)
    run_pq, qrels_pq = tmp_path / "runs.parquet", tmp_path / "qrels.parquet"
    df.to_parquet(run_pq)
    qrels_frame().to_parquet(qrels_pq)
    runs = load_runs(run_pq)
    assert [r.name for r in runs] == ["A", "B"]
    assert all(r.source == str(run_pq) for r in runs)
    qrels = load_qrels(qrels_pq)
    assert qrels.source == str(qrels_pq)
    coll = Collection.build(runs, [qrels])
    assert_same_collection(coll, coll_txt)
    # and the evaluation agrees with the text files
    ev_pq = irsample.evaluate(qrels_pq, [run_pq], ["map", "P.5", "ndcg"])
    ev_txt = irsample.evaluate(
        tmp_path / "qrels", [tmp_path / "runA", tmp_path / "runB"], ["map", "P.5", "ndcg"]
    )
    assert np.array_equal(ev_pq.summary, ev_txt.summary)


def test_bundled_run_as_dataframe_and_parquet(tmp_path):
    from irsample.io import run_to_frame

    run = read_run(VASWANI / "runs" / "bm25_rm3.run.gz")
    qrels = read_qrels(VASWANI / "qrels.gz")
    df = run_to_frame(run)
    df.to_parquet(tmp_path / "r.parquet")
    (from_df,) = load_runs(df)
    (from_pq,) = load_runs(tmp_path / "r.parquet")
    ref = Collection.build([run], [qrels])
    assert_same_collection(ref, Collection.build([from_df], [qrels]))
    assert_same_collection(ref, Collection.build([from_pq], [qrels]))


@pytest.mark.parametrize("column, value, message", [
    ("rel", 1.5, "relevance must be a whole number, not 1.5"),
    ("rel", 0.7, "relevance must be a whole number, not 0.7"),
    ("rel", 2**40, f"relevance {2**40} does not fit in 32 bits"),
    ("rel", None, "relevance is missing"),
    ("rel", "high", "relevance is not an integer: 'high'"),
    ("qid", None, "topic is missing"),
    ("docno", None, "document is missing"),
])
def test_bad_qrels_frames_are_refused_as_text_files_are(tmp_path, column, value, message):
    """A DataFrame or parquet file holds the values the text readers refuse (a grade of 1.5
    or 0.7, which truncating would make 1 or 0, grades past 32 bits, missing ids): the same
    errors, naming the row's line in the table written as CSV with its header."""
    df = qrels_frame().astype({"rel": object})
    df.loc[1, column] = value
    with pytest.raises(InputError, match=re.escape(message)) as err:
        load_qrels(df)
    assert err.value.line == 3 and err.value.source == "<DataFrame>"
    if isinstance(value, (int, float)):  # parquet keeps a typed column: a number in it
        df.astype({"rel": type(value)}).to_parquet(tmp_path / "q.parquet")
        with pytest.raises(InputError, match=re.escape(message)):
            load_qrels(tmp_path / "q.parquet")


@pytest.mark.parametrize("value, message", [
    (float("inf"), "score is not a finite number: inf"),
    (float("nan"), "score is missing"),
])
def test_bad_run_frames_are_refused(tmp_path, value, message):
    df = frame_of(TWO_RUNS["A"])
    df.loc[2, "score"] = value
    df.to_parquet(tmp_path / "r.parquet")
    for source in (df, tmp_path / "r.parquet"):
        with pytest.raises(InputError, match=re.escape(message)) as err:
            load_runs(source)
        assert err.value.line == 4
    df = frame_of(TWO_RUNS["A"])
    df.loc[0, "qid"] = None
    with pytest.raises(InputError, match="topic is missing"):
        load_runs(df)


def test_run_frame_with_a_missing_tag_is_refused():
    """pandas 3 keeps a missing tag missing through astype(str): the run of its rows came out
    empty and building the collection raised IndexError."""
    df = frame_of(TWO_RUNS["A"])
    df.loc[1, "tag"] = None
    with pytest.raises(InputError, match="tag is missing") as err:
        load_runs(df)
    assert err.value.line == 3


@pytest.mark.parametrize("column, value", [("qid", "1 "), ("docno", "a b"), ("docno", "")])
def test_frame_ids_that_no_trec_line_could_hold_are_refused(column, value):
    """A topic '1 ' was silently another topic than the qrels' '1' (its documents lost)."""
    df = frame_of(TWO_RUNS["A"])
    df.loc[1, column] = value
    with pytest.raises(InputError, match="empty or holds white space") as err:
        load_runs(df)
    assert err.value.line == 3


def test_stratified_qrels_from_parquet_keep_their_strata(tmp_path):
    """A parquet file or DataFrame with a stratum column (or --qrels-format strata) is read as
    stratified qrels, as its text copy is: xinfAP was the plain infAP (0.7042 here against
    0.6611), the strata and the format dropped without a word."""
    rows = [("1", f"d{i}", "s1" if i < 4 else "s2", r)
            for i, r in enumerate([1, 0, 1, 0, 1, -1, -1, 0, -1, 1])]
    df = pd.DataFrame(rows, columns=["qid", "docno", "stratum", "rel"])
    df.to_parquet(tmp_path / "s.parquet")
    text = io.BytesIO("".join(f"{q} 0 {d} {s} {r}\n" for q, d, s, r in rows).encode())
    run = "".join(f"1 Q0 d{i} {i + 1} {10 - i} r\n" for i in range(10))
    want = irsample.evaluate(text, [io.BytesIO(run.encode())], ["xinfAP"]).summary[0, 0]
    assert want == pytest.approx(0.6611, abs=1e-4)
    for source in (df, tmp_path / "s.parquet"):
        assert strings(load_qrels(source).stratum) == [s for _, _, s, _ in rows]
        got = irsample.evaluate(source, [io.BytesIO(run.encode())], ["xinfAP"]).summary[0, 0]
        assert got == want
    with pytest.raises(InputError, match="no stratum column"):
        load_qrels(df.drop(columns="stratum"), "strata")
    with pytest.raises(InputError, match="prels are read from text files only"):
        load_qrels(tmp_path / "s.parquet", "prels")


# ---- Judgments -----------------------------------------------------------------------------------
def doc_facts(coll, judgments, qid, docnos):
    _, tdi = coll.lookup(
        pa.array([qid.encode()] * len(docnos)), pa.array([d.encode() for d in docnos])
    )
    assert (tdi >= 0).all()
    return judgments.state[tdi].tolist(), judgments.grade[tdi].tolist()


def grades_of(coll, judgments, qid):
    t = coll.topics.index(qid)
    o = judgments.grade_offsets
    return judgments.judged_grades[o[t] : o[t + 1]].tolist()


JUDGE_RUN = (
    "1 Q0 d4 1 5 r\n1 Q0 d1 2 4 r\n1 Q0 d5 3 3 r\n1 Q0 d3 4 2 r\n1 Q0 d2 5 1 r\n"
    "2 Q0 e1 1 2 r\n4 Q0 g1 1 1 r\n"
)
JUDGE_QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n1 0 d4 -1\n1 0 d6 1\n2 0 e1 1\n3 0 f1 3\n"


def test_judgment_states_and_grades(tmp_path):
    run = read_run(write(tmp_path / "run", JUDGE_RUN))
    qrels = read_qrels(write(tmp_path / "qrels", JUDGE_QRELS))
    coll = Collection.build([run], [qrels])
    j = Judgments.from_qrels(coll, qrels)
    assert coll.topics == ("1", "2", "3", "4")
    assert j.has_topic.tolist() == [True, True, True, False]
    state, grade = doc_facts(coll, j, "1", ["d1", "d2", "d3", "d4", "d5", "d6"])
    assert state == [JUDGED, JUDGED, JUDGED, POOLED, UNPOOLED, JUDGED]
    assert grade == [1, 0, 2, -1, 0, 1]
    assert doc_facts(coll, j, "4", ["g1"]) == ([UNPOOLED], [0])
    # judged grades per topic, descending, include d6 (retrieved by no run) and 0 grades
    assert grades_of(coll, j, "1") == [2, 1, 1, 0]
    assert grades_of(coll, j, "2") == [1]
    assert grades_of(coll, j, "3") == [3]
    assert grades_of(coll, j, "4") == []
    assert j.grade_offsets.tolist() == [0, 4, 5, 6, 6]
    assert j.source == str(tmp_path / "qrels")
    assert coll.ranking(0, "1") == ["d4", "d1", "d5", "d3", "d2"]


def test_judged_documents_count_without_qrels_in_collection(tmp_path):
    """A collection built from runs only: unretrieved judged documents still count."""
    run = read_run(write(tmp_path / "run", JUDGE_RUN))
    qrels = read_qrels(write(tmp_path / "qrels", JUDGE_QRELS))
    coll = Collection.build([run])
    j = Judgments.from_qrels(coll, qrels)
    assert coll.topics == ("1", "2", "4")
    assert j.has_topic.tolist() == [True, True, False]
    assert grades_of(coll, j, "1") == [2, 1, 1, 0]
    assert grades_of(coll, j, "2") == [1]
    assert grades_of(coll, j, "4") == []
    state, grade = doc_facts(coll, j, "1", ["d1", "d2", "d3", "d4", "d5"])
    assert state == [JUDGED, JUDGED, JUDGED, POOLED, UNPOOLED]
    assert grade == [1, 0, 2, -1, 0]
    # the unretrieved relevant d6 counts in R: AP of topic 1 = (1/2 + 2/4) / 3
    from irsample.api import measures_from
    from irsample.evaluation import evaluate_collection

    ev = evaluate_collection(coll, j, measures_from(["map", "num_rel"]))
    names = [m.trec_name for m in ev.measures]
    t = ev.topics.index("1")
    assert ev.values[0, t, names.index("map")] == pytest.approx(1 / 3, abs=1e-15)
    assert ev.values[0, t, names.index("num_rel")] == 3


# ---- bad input -----------------------------------------------------------------------------------
def raises_at(path, line, fn, *args):
    with pytest.raises(InputError) as info:
        fn(*args)
    exc = info.value
    assert exc.source == str(path)
    assert exc.line == line
    assert str(exc).startswith(f"{path}:{line}: ")
    return exc


@pytest.mark.parametrize(
    "text, line",
    [
        ("1 Q0 d1 1 1 t\n1 Q0 d2 2 1\n", 2),  # 5 fields
        ("# c\n\n1 Q0 d1 1 1 t\n1 Q0 d2 2 1\n", 4),
        ("1 Q0 d1 1 1 t\n1 Q0 d2\n1 Q0 d3 3 1 t\n", 2),
        ("1 Q0 d1\n", 1),
    ],
)
def test_run_with_too_few_fields(tmp_path, text, line):
    path = write(tmp_path / "bad.run", text)
    exc = raises_at(path, line, read_run, path)
    assert "field" in exc.message


@pytest.mark.parametrize(
    "text, line",
    [
        ("1 0 d1 1\n1 0 d2 1 extra\n", 2),  # 5 fields
        ("1 0 d1 1\n\n# c\n1 0 d2\n", 4),  # 3 fields
        ("1 0 d1\n1 0 d2 1\n", 1),
    ],
)
def test_qrels_with_wrong_field_count(tmp_path, text, line):
    path = write(tmp_path / "bad.qrels", text)
    exc = raises_at(path, line, read_qrels, path)
    assert "field" in exc.message


@pytest.mark.parametrize("token", ["abc", "nan", "NaN", "-nan", "1.5x", "1_0"])
def test_run_score_not_a_number(tmp_path, token):
    path = write(tmp_path / "bad.run", f"1 Q0 d1 1 1 t\n\n1 Q0 d2 2 {token} t\n1 Q0 d3 3 0 t\n")
    exc = raises_at(path, 3, read_run, path)
    assert token in exc.message


@pytest.mark.parametrize("token", ["x", "1e3", "one", "--1"])
def test_qrels_rel_not_an_integer(tmp_path, token):
    path = write(tmp_path / "bad.qrels", f"1 0 d1 1\n# c\n1 0 d2 {token}\n")
    exc = raises_at(path, 3, read_qrels, path)
    assert token in exc.message


def test_duplicate_document_in_a_run_topic(tmp_path):
    path = write(
        tmp_path / "dup.run",
        "# header\n1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n2 Q0 a 1 1 t\n\n1 Q0 a 3 1 t\n1 Q0 a 4 0 t\n",
    )
    run = read_run(path)  # detected when ranked
    exc = raises_at(path, 6, Collection.build, [run])
    assert "'a'" in exc.message and "'1'" in exc.message


def test_duplicate_document_in_second_run(tmp_path):
    ok = read_run(write(tmp_path / "ok.run", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n"))
    path = write(tmp_path / "dup.run", "1 Q0 x 1 3 u\n2 Q0 b 1 1 u\n2 Q0 b 2 0 u\n")
    raises_at(path, 3, Collection.build, [ok, read_run(path)])


def test_same_document_in_two_topics_is_fine(tmp_path):
    run = read_run(write(tmp_path / "run", "1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n"))
    coll = Collection.build([run])
    assert coll.ranking(0, "1") == coll.ranking(0, "2") == ["a"]


def test_duplicate_qrels_pair(tmp_path):
    path = write(tmp_path / "dup.qrels", "1 0 a 1\n2 0 a 1\n1 0 b 0\n# c\n1 0 a 0\n")
    exc = raises_at(path, 5, read_qrels, path)
    assert "line 1" in exc.message


@pytest.mark.parametrize("reader", [read_run, read_qrels])
@pytest.mark.parametrize("text", ["", "\n\n  \n", "# only\n\n# comments\n"])
def test_file_without_records(tmp_path, reader, text):
    path = write(tmp_path / "empty", text)
    with pytest.raises(InputError) as info:
        reader(path)
    assert info.value.source == str(path)
    assert str(info.value).startswith(f"{path}:")
    assert "empty" in info.value.message


@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_missing_file(tmp_path, reader):
    path = tmp_path / "nope.txt"
    with pytest.raises(InputError) as info:
        reader(path)
    assert info.value.source == str(path)
    assert info.value.line is None
    assert str(info.value) == f"{path}: {info.value.message}"
    assert "no such file" in info.value.message


@pytest.mark.parametrize("reader", [read_run, read_qrels])
def test_directory(tmp_path, reader):
    with pytest.raises(InputError) as info:
        reader(tmp_path)
    assert info.value.source == str(tmp_path)
    assert info.value.line is None
    assert str(info.value).startswith(f"{tmp_path}: ")
    assert "directory" in info.value.message


def _corrupt(kind: str) -> bytes:
    good = gzip.compress(b"1 Q0 d1 1 1.5 t\n" * 2000)
    if kind == "truncated":
        return good[: len(good) // 2]
    if kind == "bad header":
        return b"\x1f\x8b" + b"junk" * 10
    if kind == "bad crc":
        return good[:-8] + bytes([good[-8] ^ 1]) + good[-7:]
    if kind == "bad deflate data":  # zlib raises zlib.error here, not OSError
        return good[:10] + b"\xff" * 40 + good[50:]
    raise AssertionError(kind)


@pytest.mark.parametrize("reader", [read_run, read_qrels])
@pytest.mark.parametrize("kind", ["truncated", "bad header", "bad crc", "bad deflate data"])
def test_corrupt_gzip(tmp_path, reader, kind):
    path = write(tmp_path / "data.gz", _corrupt(kind))
    with pytest.raises(InputError) as info:
        reader(path)
    assert info.value.source == str(path)
    # the line before which the text reads whole (the fault is in it or after it), within
    # the 2,000 lines of the file before it was damaged
    assert 1 <= info.value.line <= 2001
    assert str(info.value).startswith(f"{path}:{info.value.line}: ")
    assert "gzip" in info.value.message and "reads whole up to the line before" in str(info.value)


def test_errors_through_load(tmp_path):
    good = write(tmp_path / "good.run", "1 Q0 a 1 1 t\n")
    bad = write(tmp_path / "bad.run", "1 Q0 a 1 1 t\n\n1 Q0 b 2 x t\n")
    qrels = write(tmp_path / "qrels", "1 0 a 1\n")
    with pytest.raises(InputError) as info:
        irsample.load(qrels, [good, bad])
    assert str(info.value).startswith(f"{bad}:3: ")


def test_shuffled_bundled_run_same_collection(tmp_path):
    src = VASWANI / "runs" / "ql_dir_mu300.run.gz"
    with gzip.open(src, "rt") as fh:
        lines = fh.read().splitlines()
    random.Random(7).shuffle(lines)
    shuffled = write(tmp_path / "shuffled.run", "\n".join(lines) + "\n")
    qrels = read_qrels(VASWANI / "qrels.gz")
    a = Collection.build([read_run(src)], [qrels])
    b = Collection.build([read_run(shuffled)], [qrels])
    assert a.run_names == ("ql_dir_mu300",)
    assert_same_collection(a, b)
    # the bundled file is already in trec_eval order (README), so ranking == file order
    by_topic: dict[str, list[str]] = {}
    with gzip.open(src, "rt") as fh:
        for line in fh:
            q, _, d, *_ = line.split()
            by_topic.setdefault(q, []).append(d)
    for q in ("1", "50", "93"):
        assert a.ranking(0, q) == by_topic[q]


@pytest.mark.parametrize("what", ["run", "qrels"])
def test_duplicate_with_non_utf8_docno_is_still_an_input_error(tmp_path, what):
    """Old TREC collections have Latin-1 docnos; the duplicate message must not crash."""
    if what == "run":
        path = write(tmp_path / "dup.run", b"1 Q0 \xe9t\xe9 1 2 t\n1 Q0 \xe9t\xe9 2 1 t\n")
        raises_at(path, 2, lambda: Collection.build([read_run(path)]))
    else:
        path = write(tmp_path / "dup.qrels", b"1 0 \xe9t\xe9 1\n1 0 \xe9t\xe9 0\n")
        raises_at(path, 2, read_qrels, path)


def test_non_utf8_docnos_are_read_byte_exact(tmp_path):
    run = read_run(write(tmp_path / "run", b"1 Q0 \xe9 1 2 t\n1 Q0 \xe8 2 2 t\n1 Q0 z 3 2 t\n"))
    assert run.docno.to_pylist() == [b"\xe9", b"\xe8", b"z"]
    coll = Collection.build([run])
    # ties by docno descending byte-wise: 0xe9 > 0xe8 > 'z'
    assert [d.encode("utf-8", "surrogateescape") for d in coll.ranking(0, "1")] == [
        b"\xe9",
        b"\xe8",
        b"z",
    ]


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["1", "2", "10"]),
            st.from_regex(r"[A-Za-z0-9\-]{1,8}", fullmatch=True),
            st.integers(-1000, 1000),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda r: (r[0], r[1]),
    )
)
def test_writers_round_trip(tmp_path_factory, rows):
    from irsample.io import write_qrels, write_run

    folder = tmp_path_factory.mktemp("w")
    text = "".join(f"{q} Q0 {d} 0 {s / 8} tag\n" for q, d, s in rows).encode()
    run = read_run(io.BytesIO(text))
    write_run(run, folder / "run.gz")
    again = read_run(folder / "run.gz")
    ranked = lambda r: Collection.build([r]).rank_tdi.tolist()  # noqa: E731
    assert ranked(again) == ranked(run) and sorted(again.score) == sorted(run.score)
    qtext = "".join(f"{q} 0 {d} {s % 5 - 1}\n" for q, d, s in rows).encode()
    qrels = read_qrels(io.BytesIO(qtext))
    write_qrels(qrels, folder / "qrels")
    back = read_qrels(folder / "qrels")
    assert back.qid.equals(qrels.qid) and back.docno.equals(qrels.docno)
    assert back.rel.tolist() == qrels.rel.tolist()
