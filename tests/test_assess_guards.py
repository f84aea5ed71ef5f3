"""The assessment app's guards, without a server: the dashboard's estimates follow every change
of the judgments, the design and topic orders reach every cell first, and what an assessor's
page shows after an action is about the document shown."""

from __future__ import annotations

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
