"""``Judgments.from_arrays`` (the constructor simulations call per draw) against a row-by-row
reference, its equivalence with ``from_qrels``, and its errors.

The reference below walks the qrels rows in Python with dicts, the way the fields are defined in
the ``Judgments`` docstring: it shares no code with the vectorised constructor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irsample.errors import InputError
from irsample.io import load_runs
from irsample.io.trec import QrelsTable
from irsample.model import JUDGED, POOLED, UNPOOLED, Collection, Judgments


def reference(col: Collection, table: QrelsTable) -> dict:
    """Every field of Judgments computed row by row from strings."""
    topics = {t.encode(): i for i, t in enumerate(col.topics)}
    docnos = col.tdi_docno.to_pylist()
    tdi_of = {}
    for t in range(col.n_topics):
        for i in range(col.topic_doc_offsets[t], col.topic_doc_offsets[t + 1]):
            tdi_of[(t, docnos[i])] = i
    labels = sorted(set(table.stratum.to_pylist())) if table.stratum is not None else [b"all"]
    n_grades = max(int(table.rel.max(initial=0)), 0) + 1
    out = dict(
        grade=np.zeros(col.n_tdi, np.int32), state=np.zeros(col.n_tdi, np.int8),
        stratum=np.full(col.n_tdi, -1, np.int32), has_topic=np.zeros(col.n_topics, bool),
        size=np.zeros((col.n_topics, len(labels)), np.int64),
        sampled=np.zeros((col.n_topics, len(labels)), np.int64),
        grades=np.zeros((col.n_topics, len(labels), n_grades), np.int64),
        judged=[[] for _ in range(col.n_topics)], relevant=[[] for _ in range(col.n_topics)],
        inclusion=np.full(col.n_tdi, np.nan),
    )
    rows = zip(table.qid.to_pylist(), table.docno.to_pylist(), table.rel)
    for row, (q, d, rel) in enumerate(rows):
        if q not in topics:
            continue
        t = topics[q]
        s = labels.index(table.stratum[row].as_py()) if table.stratum is not None else 0
        out["has_topic"][t] = True
        out["size"][t, s] += 1
        i = tdi_of.get((t, d), -1)
        if i >= 0:
            out["grade"][i] = rel
            out["state"][i] = JUDGED if rel >= 0 else POOLED
            out["stratum"][i] = s
        if rel >= 0:
            out["sampled"][t, s] += 1
            out["judged"][t].append(rel)
            if table.prob is not None and i >= 0:
                out["inclusion"][i] = table.prob[row]
        if rel > 0:
            out["grades"][t, s, rel] += 1
            if table.prob is not None:
                out["relevant"][t].append((table.prob[row], i))
    return out


def check_against_reference(j: Judgments, ref: dict, with_prob: bool):
    np.testing.assert_array_equal(j.grade, ref["grade"])
    np.testing.assert_array_equal(j.state, ref["state"])
    np.testing.assert_array_equal(j.stratum, ref["stratum"])
    np.testing.assert_array_equal(j.has_topic, ref["has_topic"])
    np.testing.assert_array_equal(j.stratum_size, ref["size"])
    np.testing.assert_array_equal(j.stratum_sampled, ref["sampled"])
    np.testing.assert_array_equal(j.stratum_grades, ref["grades"])
    for t, grades in enumerate(ref["judged"]):
        got = j.judged_grades[j.grade_offsets[t] : j.grade_offsets[t + 1]]
        assert got.tolist() == sorted(grades, reverse=True)
    if not with_prob:
        assert j.inclusion is None
        return
    np.testing.assert_array_equal(j.inclusion, ref["inclusion"])
    np.testing.assert_array_equal(j.sampled_count, [len(g) for g in ref["judged"]])
    for t, pairs in enumerate(ref["relevant"]):
        a, b = j.relevant_sampled_offsets[t], j.relevant_sampled_offsets[t + 1]
        assert list(zip(j.relevant_sampled_prob[a:b], j.relevant_sampled_tdi[a:b])) == pairs


@st.composite
def cases(draw):
    n_topics = draw(st.integers(1, 4))
    docs = [f"d{i}" for i in range(draw(st.integers(1, 12)))]
    run_rows = []
    for t in range(n_topics):
        for r in range(draw(st.integers(0, 2))):
            for d in draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs))):
                run_rows.append((f"q{t}", d, draw(st.floats(0, 1)), f"r{r}"))
    if not run_rows:
        run_rows.append(("q0", "d0", 1.0, "r0"))
    qrels = draw(
        st.lists(
            st.tuples(
                st.sampled_from([f"q{t}" for t in range(n_topics + 1)]),  # q{n}: not in the runs
                st.sampled_from(docs + ["extra1", "extra2"]),  # extra: in no run
                st.integers(-1, 3),
                st.sampled_from(["s1", "s2", "s10"]),
                st.floats(0.01, 1.0),
            ),
            unique_by=lambda r: (r[0], r[1]),
            max_size=30,
        )
    )
    return run_rows, qrels, draw(st.booleans()), draw(st.booleans()), draw(st.booleans())


def table_of(qrels, strata: bool, prob: bool) -> QrelsTable:
    col = list(zip(*qrels)) if qrels else [[], [], [], [], []]
    return QrelsTable(
        "q", pa.array([s.encode() for s in col[0]], pa.binary()),
        pa.array([s.encode() for s in col[1]], pa.binary()),
        np.array(col[2], dtype=np.int64), np.arange(len(qrels), dtype=np.int64),
        stratum=pa.array([s.encode() for s in col[3]], pa.binary()) if strata else None,
        prob=np.array(col[4], dtype=np.float64) if prob else None,
    )


@settings(max_examples=150, deadline=None)
@given(cases())
def test_from_qrels_matches_row_by_row_reference(case):
    run_rows, qrels, strata, prob, qrels_in_collection = case
    runs = load_runs(pd.DataFrame(run_rows, columns=["qid", "docno", "score", "tag"]))
    table = table_of(qrels, strata, prob)
    # built from the runs alone, qrels documents no run retrieved have tdi = -1
    col = Collection.build(runs, [table] if qrels_in_collection else [])
    j = Judgments.from_qrels(col, table)
    check_against_reference(j, reference(col, table), prob)
    topic, tdi = col.lookup(table.qid, table.docno)
    labels = tuple(j.stratum_labels)
    stratum = None
    if strata:
        stratum = np.array([labels.index(s.decode()) for s in table.stratum.to_pylist()], np.int64)
    again = Judgments.from_arrays(
        col, topic, tdi, table.rel, stratum=stratum, labels=labels if strata else None,
        prob=table.prob, source="q",
    )
    check_against_reference(again, reference(col, table), prob)


def small():
    runs = load_runs(pd.DataFrame(
        {"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "score": [2.0, 1.0, 1.0], "tag": "r"}
    ))
    return Collection.build(runs)


def test_unretrieved_judged_documents_count_in_r_and_strata():
    col = small()  # tdi: topic 1 -> a, b; topic 2 -> a
    j = Judgments.from_arrays(col, [0, 0, 1], [0, -1, -1], [1, 2, 0])
    assert j.judged_grades.tolist() == [2, 1, 0]
    assert j.grade_offsets.tolist() == [0, 2, 3]
    assert j.stratum_size.tolist() == [[2], [1]]
    assert j.state.tolist() == [JUDGED, UNPOOLED, UNPOOLED]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(topic=[0, 0], tdi=[0], rel=[1]), "differ in length"),
        (dict(topic=[2], tdi=[-1], rel=[1]), "topic index out of range"),
        (dict(topic=[0], tdi=[3], rel=[1]), "out of range"),
        (dict(topic=[0], tdi=[2], rel=[1]), "another topic"),
        (dict(topic=[-1], tdi=[0], rel=[1]), "another topic"),
        (dict(topic=[0, 0], tdi=[1, 1], rel=[1, 0]), "twice"),
        (dict(topic=[0], tdi=[0], rel=[1], stratum=[0]), "labels"),
        (dict(topic=[0], tdi=[0], rel=[1], stratum=[1], labels=["x"]), "stratum index"),
        (dict(topic=[0], tdi=[0], rel=[1], prob=[0.0]), r"\(0, 1\]"),
        (dict(topic=[0], tdi=[0], rel=[1], prob=[np.nan]), r"\(0, 1\]"),
    ],
)
def test_inconsistent_arrays_are_rejected(kwargs, message):
    col = small()
    with pytest.raises(InputError, match=message):
        Judgments.from_arrays(col, **kwargs)


def test_probabilities_of_unjudged_rows_are_ignored():
    j = Judgments.from_arrays(small(), [0, 0], [0, 1], [1, -1], prob=[0.5, np.nan])
    assert j.inclusion[0] == 0.5 and np.isnan(j.inclusion[1])
    assert j.relevant_sampled_prob.tolist() == [0.5]
