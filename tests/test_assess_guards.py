"""The assessment app's guards: the dashboard's estimates follow every change of the
judgments; what an assessor's page shows after an action is about the document shown; item
ids are checked; documents not handed to an assessor are refused alike (blind to the overlap)
and a grade sent after a restart is kept when it can be; the design and topic orders reach
every cell first."""

from __future__ import annotations

import sqlite3

import pytest

pytest.importorskip("jinja2")

from irsample.assess.dashboard import Live  # noqa: E402
from irsample.assess.session import Session  # noqa: E402

from .test_assess_helpers import tiny_design  # noqa: E402


@pytest.fixture(scope="module")
def design(tmp_path_factory):
    return tiny_design(tmp_path_factory.mktemp("guards"))


@pytest.fixture()
def session(design, tmp_path):
    data, folder = design
    s = Session.open(folder, data["docs"], data["topics"], tmp_path / "g.db")
    yield s
    s.store.close()


def assessor(session, name="a"):
    return session.store.assessor_by_token(session.store.add_assessor(name))


def test_the_dashboard_stamp_changes_on_every_change_of_the_judgments(session):
    """An undo only updates rows: the estimates' stamp must move with it (and with a revision
    and its undo), else the dashboard keeps showing estimates of judgments taken back."""
    live = Live(session)
    a = assessor(session).id
    stamps = [live.stamp_now()]
    item = session.next_item(a)
    for action in (lambda: session.judge(a, item.id, 1), lambda: session.judge(a, item.id, 2),
                   lambda: session.undo(a), lambda: session.undo(a),
                   lambda: session.judge(a, item.id, 1)):
        action()
        stamps.append(live.stamp_now())
    assert len(set(stamps)) == len(stamps), stamps
    live.close()


def test_an_undo_message_and_its_note_are_for_the_document_shown_only(session):
    """Revisiting ``/judge?done=undone&item=X`` once X is judged again and Y is shown must not
    show X's message, note or old grade on Y."""
    from irsample.assess.pages import judge_page

    who = assessor(session)
    x = session.next_item(who.id)
    session.judge(who.id, x.id, 1, "NOTE FOR X")
    session.undo(who.id)
    undone = {"done": "undone", "item": str(x.id)}
    page = judge_page(session, who, session.next_item(who.id), undone)
    assert session.next_item(who.id).id == x.id  # right after the undo: X again, pre-filled
    assert "Withdrawn: your 1" in page and "NOTE FOR X</textarea>" in page
    session.judge(who.id, x.id, 0)
    y = session.next_item(who.id)
    assert y.id != x.id
    page = judge_page(session, who, y, undone)
    assert "Withdrawn" not in page and "NOTE FOR X" not in page and " was\"" not in page
    assert 'class="grade g1 was"' not in page


def test_judging_or_skipping_needs_the_document_handed_to_you(tmp_path):
    """Overlap documents or not, a document never handed to the assessor is refused with one
    message (so the answer does not tell which are overlap documents), and so is a skip."""
    from irsample.assess.assign import NOT_YOURS, Conflict
    from irsample.assess.store import Store

    store = Store(tmp_path / "b.db")
    store.setup([("1", f"d{i}", "s", i, 2 if i % 2 else 1) for i in range(4)], {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a = store.assessor_by_token(store.add_assessor("a")).id
    mine = store.current(a).id
    for other in (it.id for it in store.items() if it.id != mine):
        for refuse in (store.claim, store.bind):
            with pytest.raises(Conflict) as caught:
                refuse(a, other)
            assert str(caught.value) == NOT_YOURS
        with pytest.raises(Conflict):  # a ticket is for its own assessor and item only
            store.claim(a, other, store.ticket(a, mine))
    store.bind(a, mine)  # the one handed out may be skipped
    store.claim(a, mine)


def test_a_grade_sent_after_a_restart_is_accepted_if_nobody_else_holds_the_document(tmp_path):
    """Leases live in memory: after a restart a grade pressed on a page left open is saved
    (the page's ticket shows the document was handed to that assessor) when the document is
    still free, and refused in plain words when it went to someone else."""
    from irsample.assess.assign import GONE, Conflict
    from irsample.assess.store import Store

    path = tmp_path / "r.db"
    store = Store(path)
    store.setup([("1", f"d{i}", "s", i, 1) for i in range(3)], {"x": 1})
    store.set_positions([it.id for it in store.items()])
    a, b = (store.assessor_by_token(store.add_assessor(n)).id for n in "ab")
    item_a, item_b = store.current(a).id, store.current(b).id
    tickets = {a: store.ticket(a, item_a), b: store.ticket(b, item_b)}
    store.close()
    store = Store(path)  # the restart: leases are gone
    store.set_positions([it.id for it in store.items()])
    with pytest.raises(Conflict, match="not handed to you"):
        store.claim(a, item_a)  # no ticket: nothing shows it was handed out
    store.renew(a, item_a, tickets[a])  # the open page's heartbeat takes it again
    store.claim(a, item_a, tickets[a])
    store.judge(a, item_a, 1)
    c = store.assessor_by_token(store.add_assessor("c")).id
    assert store.current(c).id == item_b  # b's document, free after the restart, goes to c
    with pytest.raises(Conflict) as caught:
        store.claim(b, item_b, tickets[b])
    assert str(caught.value) == GONE and "restarted" in GONE and "/api" not in GONE
    store.close()


def serve(design, tmp_path, *extra):
    """A server on a new database with one assessor: (server, token, db)."""
    pytest.importorskip("uvicorn")
    from .test_assess_helpers import Server, add_assessor

    data, folder = design
    db = tmp_path / "s.db"
    token = add_assessor(db, "alice")
    return Server(folder, data["docs"], data["topics"], db, *extra), token, db


def test_malformed_item_ids_get_400_and_the_api_answers_item_ids_as_numbers(design, tmp_path):
    """Item ids out of SQLite's range (a 500 before) or in other digits than ASCII ones (item
    3 before) are 400; an item sent as a string is answered as the stored number."""
    requests = pytest.importorskip("requests")
    from .test_assess_helpers import Api

    server, token, _ = serve(design, tmp_path)
    with server:
        browser = requests.Session()
        browser.get(f"{server.url}/login?token={token}")
        for query in ("item=9223372036854775808", "done=undone&item=" + "9" * 20,
                      "item=%D9%A3", "item=3&undone=%D9%A3"):
            r = browser.get(f"{server.url}/judge?{query}")
            assert r.status_code == 400, (query, r.status_code)
        api = Api(server.url, token)
        mine = api.next()
        r = api.post("/api/judge", {"item": "\u0663", "grade": 1})
        assert r.status_code == 400, r.text
        r = api.post("/api/skip", {"item": str(mine["item"])})
        assert r.status_code == 200 and r.json()["item"] == mine["item"]
        mine = api.next()
        r = api.post("/api/judge", {"item": str(mine["item"]), "grade": "1"})
        assert r.status_code == 200 and r.json()["item"] == mine["item"]


def test_documents_not_handed_out_are_refused_alike_and_not_named(design, tmp_path):
    """Judging or skipping a document not handed out is 409 with one message, overlap
    documents or not (accepted for overlap documents before, which told them apart); a
    message after a skip names a docno only for a document the assessor had."""
    requests = pytest.importorskip("requests")
    from irsample.assess.assign import NOT_YOURS

    from .test_assess_helpers import Api

    server, token, db = serve(design, tmp_path, "--overlap", "0.5")
    with server:
        browser = requests.Session()
        browser.get(f"{server.url}/login?token={token}")
        api = Api(server.url, token)
        mine = api.next()
        con = sqlite3.connect(db)
        required = dict(con.execute("SELECT id, required FROM items"))
        assert set(required.values()) == {1, 2}
        answers = set()
        for other in sorted(required):
            if other == mine["item"]:
                continue
            for path in ("/api/judge", "/api/skip"):
                r = api.post(path, {"item": other, "grade": 0})
                assert r.status_code == 409, (path, other, r.text)
                answers.add(r.json()["error"])
            r = browser.post(server.url + "/skip", data={"item": other, "csrf": api.csrf},
                             allow_redirects=False)
            assert r.status_code == 409
            page = browser.get(f"{server.url}/judge?done=skipped&item={other}").text
            docno = con.execute("SELECT docno FROM items WHERE id=?", (other,)).fetchone()[0]
            assert f"Skipped {docno}" not in page and "Skipped the document" in page
        assert answers == {f"not saved: {NOT_YOURS}"}
        assert not con.execute("SELECT count(*) FROM judgments").fetchone()[0]

def test_the_static_orders_reach_every_cell_first_and_keep_each_cell_random():
    """Stopping early in the design or topic order leaves no (topic, stratum) cell without a
    judgment once as many documents as cells are judged; within a cell both orders follow
    the same seeded permutation (what is judged of it is a random subset of it)."""
    import numpy as np

    from irsample.assess.order import static_order

    rng = np.random.default_rng(1)
    rows = sorted({(str(rng.integers(1, 6)), f"d{i}", "s", int(rng.integers(0, 3)))
                   for i in range(80)})
    cells = {(r[0], r[3]) for r in rows}
    for seed in (0, 1, 2):
        design = [rows[i] for i in np.argsort(static_order(rows, "design", seed))]
        assert {(r[0], r[3]) for r in design[:len(cells)]} == cells
        rest = [r[3] for r in design[len(cells):]]
        assert rest == sorted(rest)  # then stratum by stratum from the top
        by_topic = [rows[i] for i in np.argsort(static_order(rows, "topic", seed))]
        for q in {r[0] for r in rows}:
            mine = [r for r in by_topic if r[0] == q]
            heads = len({r[3] for r in mine})
            assert len({r[3] for r in mine[:heads]}) == heads
            assert [r[3] for r in mine[heads:]] == sorted(r[3] for r in mine[heads:])
        for cell in cells:
            assert [r for r in design if (r[0], r[3]) == cell] == \
                [r for r in by_topic if (r[0], r[3]) == cell]
    firsts = {tuple(rows[i] for i in np.argsort(static_order(rows, "design", s))[:5])
              for s in range(6)}
    assert len(firsts) > 1  # seeded: another seed, another order


def test_the_next_rounds_default_size_is_round_ones_after_a_restart(session):
    """``--batch``'s default is round 1's size; a server restarted after round 2 was loaded
    took every item loaded so far (round 1's and round 2's) instead."""
    first = len(session.store.items(active_only=False))
    rounds = session.store.rounds()
    session.store._set_meta("rounds", rounds + [{"round": 2, "design": rounds[0]["design"],
                                                 "items": 7, "at": 0.0}])
    session.store.db.execute("INSERT INTO items(topic, docno, stratum, seq, required, round) "
                             "VALUES ('x', 'y', 's', 999, 1, 2)")
    live, given = Live(session), Live(session, batch=5)
    assert live.batch == first == rounds[0]["items"] and given.batch == 5
    live.close()
    given.close()
