"""Collection.build interning (per-topic hash tables, byte-wise sort) against a plain reference."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from irsample.errors import InputError
from irsample.io.trec import RunTable, read_run
from irsample.model import Collection


def _run(name, rows):
    """A RunTable from (qid, docno, score) triples (bytes, bytes, float)."""
    return RunTable(
        name,
        f"{name}.txt",
        pa.array([q for q, _, _ in rows], pa.binary()),
        pa.array([d for _, d, _ in rows], pa.binary()),
        np.array([s for _, _, s in rows], dtype=np.float64),
        np.arange(1, len(rows) + 1, dtype=np.int64),
    )


def _tricky_docnos(rng, n):
    """Docnos that share long prefixes, are prefixes of each other, hold NUL and non-UTF-8 bytes."""
    stems = [
        b"",
        b"a",
        b"LA010189-",
        b"clueweb09-en0000-00-",
        b"\x00",
        b"\xff\xfe",
        b"x" * 15,
        b"x" * 16,
    ]
    out = set()
    while len(out) < n:
        tail = bytes(rng.choice(b"\x00\x01az09-\xe9\xff") for _ in range(rng.randint(0, 20)))
        doc = rng.choice(stems) + tail
        if doc and not any(c in b" \t\n\r\v\f" for c in doc):
            out.add(doc)
    return sorted(out)


@pytest.mark.parametrize("seed", range(5))
def test_tdi_space_and_rankings_match_reference(seed):
    rng = random.Random(seed)
    docs = _tricky_docnos(rng, 300)
    topics = [b"1", b"10", b"2", b"b\xff", b"a"]
    runs, expected = [], {}
    for r in range(4):
        rows = []
        for q in rng.sample(topics, 4):
            picked = rng.sample(docs, rng.randint(1, 60))
            scores = [float(rng.choice([1, 2, 3, rng.random()])) for _ in picked]
            rows += [(q, d, s) for d, s in zip(picked, scores)]
            expected[(r, q)] = [d for s, d in sorted(zip(scores, picked), reverse=True)]
        rng.shuffle(rows)
        runs.append(_run(f"r{r}", rows))
    coll = Collection.build(runs)
    assert coll.topics == tuple(t.decode("utf-8", "surrogateescape") for t in sorted(set(topics)))
    per_topic = {}
    for run in runs:
        for q, d in zip(run.qid.to_pylist(), run.docno.to_pylist()):
            per_topic.setdefault(q, set()).add(d)
    tdi_docno = coll.tdi_docno.to_pylist()
    for t, q in enumerate(sorted(set(topics))):
        got = tdi_docno[coll.topic_doc_offsets[t] : coll.topic_doc_offsets[t + 1]]
        assert got == sorted(per_topic.get(q, ()))
    assert coll.docnos.to_pylist() == sorted(set(tdi_docno))
    assert [coll.docnos[int(i)].as_py() for i in coll.tdi_doc] == tdi_docno
    for (r, q), want in expected.items():
        t = sorted(set(topics)).index(q)
        s = r * coll.n_topics + t
        tdi = coll.rank_tdi[coll.rank_offsets[s] : coll.rank_offsets[s + 1]]
        assert [tdi_docno[i] for i in tdi] == want


def test_lookup_handles_absent_topics_and_documents():
    run = _run("r", [(b"1", b"d1", 2.0), (b"1", b"d10", 1.0), (b"2", b"d1", 1.0)])
    coll = Collection.build([run])
    qid = pa.array([b"1", b"1", b"1", b"2", b"3", b"2"])
    docno = pa.array([b"d10", b"d1", b"d2", b"d10", b"d1", b"d1"])
    topic, tdi = coll.lookup(qid, docno)
    assert topic.tolist() == [0, 0, 0, 1, -1, 1]
    names = coll.tdi_docno.to_pylist()
    assert [names[i] if i >= 0 else None for i in tdi] == [b"d10", b"d1", None, None, None, b"d1"]
    # a sliced string array works the same
    topic2, tdi2 = coll.lookup(
        pa.array(["0", "1", "1"]).slice(1), pa.array(["x", "d1", "d10"]).slice(1)
    )
    assert topic2.tolist() == [0, 0] and tdi2.tolist() == tdi[[1, 0]].tolist()


def test_duplicate_reports_the_first_run_and_later_line(tmp_path):
    ok = tmp_path / "a.run"
    ok.write_text("1 Q0 x 1 1 a\n1 Q0 y 2 1 a\n")
    bad = tmp_path / "b.run"
    bad.write_text("1 Q0 x 1 1 b\n2 Q0 z 1 1 b\n2 Q0 w 1 1 b\n2 Q0 z 1 0 b\n1 Q0 x 9 0 b\n")
    with pytest.raises(InputError) as err:
        Collection.build([read_run(ok), read_run(bad), read_run(bad)])
    assert (err.value.source, err.value.line) == (str(bad), 4) and "'z'" in err.value.message


def test_scores_with_trailing_zeros_parse_exactly(tmp_path):
    tokens = [
        "136.90608242222712000000000000000000",
        "1.50000000000000000000000e3",
        "100.5",
        "0.000",
        "-0",
        "9.58617e-269",
        "12345678901234567890.5",
    ]
    path = tmp_path / "run"
    path.write_text("".join(f"1 Q0 d{i} {i} {t} tag\n" for i, t in enumerate(tokens)))
    got = read_run(path).score
    assert [v.hex() for v in got.tolist()] == [float(t).hex() for t in tokens]


def test_hash_tables_grow_past_their_initial_size():
    rng = random.Random(7)
    docs = [f"D{i:05d}".encode() for i in range(3000)]
    rows = [
        (str(q).encode(), d, float(rng.randint(0, 5)))
        for q in range(40)
        for d in rng.sample(docs, 800)
    ]
    rng.shuffle(rows)
    coll = Collection.build([_run("r", rows), _run("s", rows[::-1])])
    assert coll.topics == tuple(sorted(str(q) for q in range(40)))
    qids = [q for q, _, _ in rows]
    topic, tdi = coll.lookup(pa.array(qids), pa.array([d for _, d, _ in rows]))
    names = coll.tdi_docno.to_pylist()
    assert all(t >= 0 for t in topic) and [names[i] for i in tdi] == [d for _, d, _ in rows]
    assert coll.n_tdi == len({(q, d) for q, d, _ in rows})
