"""The assessment app's parts without a server: documents and topics readers, highlighting,
the design order and overlap, the store (idempotent saves, undo, skip, leases), and the
adaptive orders handing out exactly what the adaptive methods choose one judgment at a time."""

from __future__ import annotations

import gzip
import json
import time

import numpy as np
import pytest

pytest.importorskip("jinja2")

from irsample.assess.documents import read_documents
from irsample.assess.order import overlap_flags, static_order
from irsample.assess.pages import highlight
from irsample.assess.session import Session, parse_grades
from irsample.assess.store import Store
from irsample.assess.topics import query_terms, read_topics
from irsample.errors import InputError

from .test_assess_helpers import ROOT, sample, tiny_data

SGML = """<DOC>
<DOCNO> FT1-1 </DOCNO>
<HEADLINE>Oil &amp; gas</HEADLINE>
<TEXT>
Prices rose.
</TEXT>
</DOC>
<DOC><DOCNO>FT1-2</DOCNO><TEXT>Second.</TEXT></DOC>
"""


def test_documents_from_sgml_gzip_jsonl_and_folders(tmp_path):
    (tmp_path / "a.sgml").write_text(SGML)
    with gzip.open(tmp_path / "b.gz", "wt") as f:
        f.write(SGML.replace("FT1-", "FT2-"))
    (tmp_path / "c.jsonl").write_text(json.dumps({"docno": "J1", "text": "<i>x</i>"}) + "\n\n")
    docs = read_documents(tmp_path / "a.sgml")
    assert docs == {"FT1-1": "Oil & gas\n\nPrices rose.", "FT1-2": "Second."}
    assert read_documents(tmp_path / "b.gz", {"FT2-2"}) == {"FT2-2": "Second."}
    folder = tmp_path / "f"
    (folder / "sub").mkdir(parents=True)
    for name in ("a.sgml", "b.gz", "c.jsonl"):
        (folder / "sub" / name).write_bytes((tmp_path / name).read_bytes())
    (folder / "PLAIN-7.txt").write_text("plain text")
    docs = read_documents(folder)
    assert set(docs) == {"FT1-1", "FT1-2", "FT2-1", "FT2-2", "J1", "PLAIN-7"}
    assert docs["J1"] == "<i>x</i>" and docs["PLAIN-7"] == "plain text"


@pytest.mark.parametrize("content, message", [
    ("<DOC><TEXT>x</TEXT></DOC>", ":1: a <DOC> without <DOCNO>"),
    ("no documents here", "no <DOC> blocks"),
    ('{"docno": "a", "text": "b"}\n{"docno": 3}\n', ':2: expected {"docno"'),
    ('{"docno": "a", "text": "b"}\n{oops\n', ":2: not a JSON object"),
])
def test_document_errors_name_file_and_line(tmp_path, content, message):
    path = tmp_path / "docs"
    path.write_text(content)
    with pytest.raises(InputError, match=message.replace("{", r"\{").replace("(", r"\(")):
        read_documents(path)
    with pytest.raises(InputError, match="no such file"):
        read_documents(tmp_path / "missing")


def test_topics_trec_and_tsv(tmp_path):
    trec = tmp_path / "t.trec"
    trec.write_text("<top>\n<num> Number: 401\n<title> foreign minorities, Germany\n\n<desc> "
                    "Description:\nWhat language?\n\n<narr> Narrative:\nA relevant document "
                    "will focus on...\n</top>\n<top><num>2</num><title>\nBINARY MACHINES\n"
                    "</title>\n</top>\n")
    topics = read_topics(trec)
    assert topics["401"].title == "foreign minorities, Germany"
    assert topics["401"].description == "What language?"
    assert topics["401"].narrative == "A relevant document will focus on..."
    assert topics["2"].title == "BINARY MACHINES" and topics["2"].description == ""
    assert query_terms(topics["401"]) == ("foreign", "minorities", "germany")
    tsv = tmp_path / "t.tsv"
    tsv.write_text("qid\ttitle\n7\tthe tea\n8\tcoffee\tdesc\tnarr\n")
    assert read_topics(tsv)["8"].narrative == "narr" and query_terms(read_topics(tsv)["7"]) == (
        "tea",
    )
    tsv.write_text("7\ttea\n7\tagain\n")
    with pytest.raises(InputError, match=":2: topic '7' given twice"):
        read_topics(tsv)
    tsv.write_text("7\n")
    with pytest.raises(InputError, match=":1: expected qid<TAB>title"):
        read_topics(tsv)


def test_highlight_escapes_everything_and_marks_terms():
    html = str(highlight("Tea & <script>alert(1)</script> teas, TEA-time", ("tea", "script")))
    assert html == ("<mark>Tea</mark> &amp; &lt;<mark>script</mark>&gt;alert(1)&lt;/"
                    "<mark>script</mark>&gt; <mark>teas</mark>, <mark>TEA</mark>-time")


def test_design_order_is_stratum_by_stratum_and_seeded():
    rows = [(q, f"d{i}", "s", s) for i, (q, s) in enumerate(
        [("1", 1), ("2", 0), ("1", 0), ("2", 1), ("1", 0), ("2", 0)])]
    seq = static_order(rows, "design", 4)
    assert sorted(seq) == list(range(6)) and np.array_equal(seq, static_order(rows, "design", 4))
    first = [(rows[i][0], rows[i][3]) for i in np.argsort(seq)]
    assert len(set(first[:4])) == 4  # one document of each (topic, stratum) cell first ...
    assert [s for _, s in first[4:]] == [0, 0]  # ... then stratum by stratum
    by_topic = static_order(rows, "topic", 4)
    first = [(rows[i][0], rows[i][3]) for i in np.argsort(by_topic)]
    assert sorted(first[:2]) == [("1", 0), ("1", 1)] and first[2] == ("1", 0)
    assert sorted(first[3:5]) == [("2", 0), ("2", 1)] and first[5] == ("2", 0)
    assert any(not np.array_equal(static_order(rows, "design", s), seq) for s in range(5, 15))
    flags = overlap_flags(40, 0.25, 9)
    assert flags.sum() == 10 and np.array_equal(flags, overlap_flags(40, 0.25, 9))
    assert parse_grades("0-3") == (0, 1, 2, 3) and parse_grades("1,0") == (0, 1)
    for bad in ("3", "a-b", "0-12", "0"):
        with pytest.raises(InputError):
            parse_grades(bad)


def test_store_saves_once_revises_undoes_skips_and_leases(tmp_path):
    store = Store(tmp_path / "s.db", lease_seconds=0.2)
    store.setup([("1", f"d{i}", "s", i, 2 if i == 0 else 1) for i in range(3)], {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a, b = (store.assessor_by_token(store.add_assessor(n)).id for n in ("a", "b"))
    first = store.current(a)
    assert first.docno == "d0" and store.current(a) == first  # kept until judged
    assert store.current(b).docno == "d0"  # needs two assessors
    assert store.judge(a, first.id, 1) == "saved" and store.judge(a, first.id, 1) == "unchanged"
    assert store.judge(a, first.id, 2, "n") == "revised"  # a new row; the first one is kept
    assert store.item(first.id).judged == 1
    second = store.current(a)
    assert second.docno == "d1"
    c = store.assessor_by_token(store.add_assessor("c")).id
    assert store.current(c).docno == "d2"  # d1 is leased to a
    store.skip(c, store.current(c).id)
    time.sleep(0.25)  # b's lease on d0 and a's on d1 ran out
    assert store.current(c).docno == "d0"
    store.judge(c, store.current(c).id, 0)
    assert store.current(c).docno == "d1"
    withdrawn = store.undo(a)  # the revision: back to a's first grade
    assert (withdrawn.item, withdrawn.grade, withdrawn.note, withdrawn.restored) == (
        first.id, 2, "n", 1)
    assert store.item(first.id).judged == 2
    withdrawn = store.undo(a)  # a's first judgment: d0 is theirs to judge again
    assert (withdrawn.grade, withdrawn.note, withdrawn.restored) == (1, "", None)
    assert store.item(first.id).judged == 1 and store.current(a).docno == "d0"
    assert store.undo(a) is None
    rows = store.db.execute("SELECT assessor, grade, current, withdrawn IS NOT NULL, replaces "
                            "FROM judgments ORDER BY id").fetchall()
    assert rows == [(a, 1, 0, True, None), (a, 2, 0, True, 1), (c, 0, 1, False, None)]
    with pytest.raises(InputError, match="exists already.*reissue"):
        store.add_assessor("a")
    with pytest.raises(InputError, match="names are"):
        store.add_assessor("bad name")
    with pytest.raises(InputError, match="other settings"):
        store.setup([], {"x": 2})


def test_leases_bind_judgments(tmp_path):
    """A judgment needs the document's lease (or a planned overlap's room, or the assessor's
    own earlier judgment); an expired lease counts until someone else takes the document;
    renewing never hands a document out."""
    from irsample.assess.assign import Conflict

    store = Store(tmp_path / "l.db", lease_seconds=0.3)
    store.setup([("1", "d0", "s", 0, 1), ("1", "d1", "s", 1, 2), ("1", "d2", "s", 2, 1)],
                {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a, b, c = (store.assessor_by_token(store.add_assessor(n)).id for n in "abc")
    d0, d1, d2 = (it.id for it in store.items())
    assert store.current(a).id == d0 and store.current(b).id == d1
    with pytest.raises(Conflict, match="not handed to you"):
        store.claim(b, d0)
    with pytest.raises(Conflict, match="no longer reserved for you"):
        store.renew(b, d0)
    store.claim(a, d0)  # accepted: it holds d0's place until settled
    store.release(a, d0, judged=False)  # (the commit failed: a keeps the lease)
    assert store.current(c).id == d1  # a planned overlap: handed to a second assessor ...
    store.claim(c, d1)
    with pytest.raises(Conflict, match="not handed to you"):
        store.claim(a, d1)  # ... never judged by one it was not handed to
    store.judge(c, d1, 1)
    time.sleep(0.35)  # a's lease on d0 ran out; nobody took it: still a's
    store.renew(a, d0)
    time.sleep(0.35)
    assert store.current(b).id == d1  # b's expired lease kept: d1 has room for b
    assert store.current(c).id == d0  # a's lease on d0 expired: c takes it
    with pytest.raises(Conflict, match="went to another assessor"):
        store.claim(a, d0)
    with pytest.raises(Conflict, match="went to another assessor"):
        store.renew(a, d0)
    store.judge(c, d0, 2)
    store.claim(c, d0)  # a revision of c's own judgment needs no lease
    assert store.current(a).id == d2


def test_a_leased_document_a_later_round_took_out_is_not_handed_out_again(tmp_path):
    """Loading a round takes the unjudged documents of earlier rounds out of the judging set
    (``active`` 0); an assessor whose live lease is on one of them is handed an open document
    next, and a judgment of the one they held is refused with the reason."""
    from irsample.assess.assign import Conflict

    store = Store(tmp_path / "r.db", lease_seconds=600)
    store.setup([("1", f"d{i}", "s", i, 1) for i in range(3)], {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a = store.assessor_by_token(store.add_assessor("a")).id
    held = store.current(a)
    assert held.docno == "d0"
    store.db.execute("UPDATE items SET active=0 WHERE id=?", (held.id,))  # a round replaced it
    assert store.current(a).docno == "d1"
    with pytest.raises(Conflict, match="no longer to be judged"):
        store.claim(a, held.id, store.ticket(a, held.id))


def test_progress_lists_strata_in_natural_order_and_leases_read_in_words(tmp_path):
    """The dashboard's progress rows keep one stratum order for every topic (``1-10`` before
    ``11-100``), whatever order the documents are handed out in; a lease's length reads in
    words on the assessor's page."""
    from irsample.assess.dashboard import by_stratum, progress
    from irsample.assess.pages import duration

    store = Store(tmp_path / "p.db")
    store.setup([("2", "a", "11-100", 0, 1), ("2", "b", "1-10", 1, 1),
                 ("10", "c", "1-10", 2, 1), ("10", "d", "11-100", 3, 1)], {"x": 1})
    rows = progress(store.db)
    assert [(r["topic"], r["stratum"]) for r in rows] == [
        ("2", "1-10"), ("2", "11-100"), ("10", "1-10"), ("10", "11-100")]
    assert [r["stratum"] for r in by_stratum(rows)] == ["1-10", "11-100"]
    assert [duration(x) for x in (30, 60, 600, 90 * 60, 7200)] == [
        "30 seconds", "1 minute", "10 minutes", "90 minutes", "2 hours"]


def test_version1_database_is_upgraded(tmp_path):
    """A database of the first version (one judgments row per item and assessor, no roles,
    no rounds) opens with its judgments as current ones, and revising it keeps the old row."""
    import sqlite3

    path = tmp_path / "v1.db"
    con = sqlite3.connect(path)
    con.executescript("""
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE assessors(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
      token_hash TEXT UNIQUE NOT NULL, csrf TEXT NOT NULL, created REAL NOT NULL);
    CREATE TABLE items(id INTEGER PRIMARY KEY, topic TEXT NOT NULL, docno TEXT NOT NULL,
      stratum TEXT NOT NULL, seq INTEGER NOT NULL, required INTEGER NOT NULL,
      judged INTEGER NOT NULL DEFAULT 0, UNIQUE(topic, docno));
    CREATE TABLE judgments(id INTEGER PRIMARY KEY, item INTEGER NOT NULL REFERENCES items(id),
      assessor INTEGER NOT NULL REFERENCES assessors(id), grade INTEGER NOT NULL,
      note TEXT NOT NULL DEFAULT '', at REAL NOT NULL, UNIQUE(item, assessor));
    CREATE INDEX judgments_by_assessor ON judgments(assessor, id);
    INSERT INTO assessors VALUES (1, 'alice', 'h', 'c', 0);
    INSERT INTO items VALUES (1, '7', 'x', '1-10', 0, 1, 1);
    INSERT INTO judgments VALUES (1, 1, 1, 2, 'old note', 5.0);
    """)
    con.close()
    store = Store(path)
    assert store.meta("schema") == 2
    assert store.judge(1, 1, 1, "new") == "revised"
    assert store.db.execute("SELECT grade, note, current FROM judgments ORDER BY id").fetchall() \
        == [(2, "old note", 0), (1, "new", 1)]
    assert store.people() == {"alice": ("assessor", None)}


def test_design_order_serves_the_top_stratum_first(tmp_path):
    """The issue's case: 2strata@300 of the bundled Vaswani runs, seed 7, whose design file
    lists a row of stratum 11-100 first. The design order hands out one document of every
    (topic, stratum) cell, then all of stratum 1-10 before any of 11-100, and topics sort as
    numbers."""
    from irsample.assess.readout import topic_key

    runs = sorted((ROOT / "irsample" / "data" / "vaswani" / "runs").glob("*.gz"))
    design = sample(runs, tmp_path / "design", design="2strata@300", seed=7)
    first_row = (design / "design.json").read_text().split('"rows": [\n')[1].split("\n")[0]
    assert '"11-100"' in first_row  # the order of appearance would put 11-100 first
    pairs = [x.split("\t") for x in (design / "to_judge.tsv").read_text().splitlines()[1:]]
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"docno": d, "text": "x"}) + "\n" for _, d in pairs))
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\tt{q}\n" for q in sorted({q for q, _ in pairs})))
    session = Session.open(design, docs, topics, tmp_path / "v.db")
    a = session.store.assessor_by_token(session.store.add_assessor("a")).id
    strata, topics_strata = [], []
    while (item := session.next_item(a)) is not None:
        strata.append(item.stratum)
        topics_strata.append((item.topic, item.stratum))
        session.judge(a, item.id, 0)
    cells = len({(q, s) for q, s in topics_strata})
    assert len(set(topics_strata[:cells])) == cells  # one of every cell first, then ...
    top = strata.count("1-10") - strata[:cells].count("1-10")
    assert top > 0 and strata[cells:] == ["1-10"] * top + ["11-100"] * (len(strata) - cells - top)
    assert strata.count("1-10") == 121
    assert sorted(["10", "2", "1", "11", "A7", "A10"], key=topic_key) == [
        "1", "2", "10", "11", "A7", "A10"]


@pytest.mark.parametrize("method", ["mtf", "mtf-global", "hedge"])
def test_adaptive_order_hands_out_what_the_method_chooses(tmp_path, method):
    """One assessor judging through the session gets the documents in exactly the order
    judge_adaptively chooses them with batch 1 and the same grades (the order re-ranks after
    every saved judgment)."""
    from irsample.design.adaptive.assessor import QrelsAssessor
    from irsample.design.adaptive.judging import judge_adaptively
    from irsample.design.adaptive.methods import parse_method
    from irsample.io import load_runs, read_qrels
    from irsample.model import Collection

    data = tiny_data(tmp_path / "data", n_docs=30)
    design = sample(data["runs"], tmp_path / "design", design="1-20:1")
    session = Session.open(design, data["docs"], data["topics"], tmp_path / "a.db",
                           order=method, runs=data["runs"], seed=5, grades=(0, 1, 2))
    a = session.store.assessor_by_token(session.store.add_assessor("a")).id
    handed = []
    while (item := session.next_item(a)) is not None:
        handed.append((item.topic, item.docno))
        session.judge(a, item.id, data["qrels"][(item.topic, item.docno)])
    collection = Collection.build(load_runs(data["runs"]))
    result = judge_adaptively(collection, parse_method(method),
                              QrelsAssessor(collection, read_qrels(str(data["qrels_file"]))),
                              budget=len(handed), batch=1, rng=5)
    expected = [(collection.topics[t], d) for t, d in zip(result.topic, result.docnos())]
    assert handed == expected and len(set(handed)) == len(handed)


def test_adaptive_order_covers_exactly_a_sampled_design(tmp_path):
    data = tiny_data(tmp_path / "data")
    design = sample(data["runs"], tmp_path / "design")
    session = Session.open(design, data["docs"], data["topics"], tmp_path / "h.db",
                           order="hedge", runs=data["runs"])
    a = session.store.assessor_by_token(session.store.add_assessor("a")).id
    handed = []
    while (item := session.next_item(a)) is not None:
        handed.append((item.topic, item.docno))
        session.judge(a, item.id, data["qrels"][(item.topic, item.docno)])
    expected = [
        tuple(x.split("\t")) for x in (design / "to_judge.tsv").read_text().split("\n")[1:] if x
    ]
    assert sorted(handed) == sorted(expected) and len(handed) == len(set(handed))
    with pytest.raises(InputError, match="needs the design's runs"):
        Session.open(design, data["docs"], data["topics"], tmp_path / "m.db", order="mtf")
    with pytest.raises(InputError, match="other settings"):
        Session.open(design, data["docs"], data["topics"], tmp_path / "h.db", order="design")


def test_every_page_title_is_plain_text():
    """A template's title block is the browser tab's text: no markup may end up there (the
    progress page once carried its whole per-stratum table in it)."""
    pytest.importorskip("jinja2")
    import re

    from irsample.assess.pages import ENV

    for name in ENV.list_templates(filter_func=lambda n: n.endswith(".html")):
        source = ENV.loader.get_source(ENV, name)[0]
        title = re.search(r"{% block title %}(.*?){% endblock %}", source, re.S)
        if title:
            assert "<" not in title.group(1), name


def test_the_assessors_count_moves_with_every_judgment_overlap_or_not(tmp_path):
    """The judging page counted documents judged: an overlap document's second judgment left
    it where it was, so an assessor could tell which of theirs were overlap documents."""
    from irsample.assess.readout import totals

    store = Store(tmp_path / "t.db", lease_seconds=60)
    store.setup([("1", "d0", "s", 0, 2), ("1", "d1", "s", 1, 1)], {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a, b = (store.assessor_by_token(store.add_assessor(n)).id for n in "ab")
    seen = [totals(store.db)]
    for who in (a, b, a):
        store.judge(who, store.current(who).id, 1)
        seen.append(totals(store.db))
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)]


def test_skip_and_renew_of_a_document_judged_already(tmp_path):
    """Skipping a document one judged already was answered 'skipped' and renewing it
    'renewed', while another assessor held it: now skip is refused and renew says nothing is
    leased; the other assessor's lease stands."""
    from irsample.assess.assign import Conflict

    store = Store(tmp_path / "k.db", lease_seconds=60)
    store.setup([("1", "d0", "s", 0, 2), ("1", "d1", "s", 1, 1)], {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a, b = (store.assessor_by_token(store.add_assessor(n)).id for n in "ab")
    d0 = store.current(a).id
    store.judge(a, d0, 1)
    assert store.current(b).id == d0  # the overlap document's second judgment, b's now
    with pytest.raises(Conflict, match="you judged this document already"):
        store.bind(a, d0)
    assert store.renew(a, d0) == "judged"
    assert store.renew(b, d0) == "renewed" and store.current(b).id == d0


def test_error_pages_say_what_happened_in_words_with_the_way_back():
    """Error pages were headed by the bare status number ("409"), without the app's header,
    and a refused preview size on the dashboard left no way back to it."""
    from irsample.assess.pages import message_page

    page = message_page(409, "this document went to another assessor", "/judge")
    assert "<h1>Not saved</h1>" in page and "<header><strong>irsample assess" in page
    assert '<a href="/judge" id="next">Go on judging</a>' in page
    page = message_page(400, "batch must be a number of judgments, not 'abc'", "/admin")
    assert "<h1>Not understood</h1>" in page and "Back to the dashboard" in page
    page = message_page(403, "this link was revoked <b>", "/login")
    assert 'id="next"' not in page and "&lt;b&gt;" in page  # escaped, no way in offered
