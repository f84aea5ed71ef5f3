"""The organiser's dashboard against a real server: the next round's preview is for the number
of judgments asked for and says, before loading, when the round cannot be that size; form posts
answer with a redirect (a reload does not post again) and their message shows once; a pool
judged whole is said plainly and offers no round; the top line says when to stop."""

from __future__ import annotations

import re
import sqlite3
import time
from types import SimpleNamespace

import pytest

requests = pytest.importorskip("requests")
pytest.importorskip("starlette")

from irsample.assess.dashboard import verdict  # noqa: E402

from .test_assess_helpers import Api, Server, add_assessor, sample, tiny_data  # noqa: E402
from .test_assess_rounds import admin, judge  # noqa: E402


def organiser_session(server, token) -> requests.Session:
    http = requests.Session()
    http.get(f"{server.url}/login?token={token}")
    return http


def settled(server, http, token) -> str:
    """The dashboard's page once the estimates and the plan are computed."""
    admin(server, token)
    for _ in range(600):
        page = http.get(server.url + "/admin").text
        if 'data-computing="0"' in page:
            return page
        time.sleep(0.1)
    raise AssertionError("the plan was not computed")


def campaign(tmp_path, name: str):
    """A campaign on the tiny data: its data, a two-strata design, the database and the tokens
    of assessor alice and organiser olga."""
    data = tiny_data(tmp_path / "data")
    design = sample(data["runs"], tmp_path / "design", design="1-5:0.2,6-20:0.1")
    db = tmp_path / name
    return data, design, db, add_assessor(db, "alice"), add_assessor(db, "olga", role="organiser")


def test_the_preview_is_for_the_batch_asked_and_says_why_a_round_is_larger(tmp_path):
    data, design, db, alice, boss = campaign(tmp_path, "d.db")
    with Server(design, data["docs"], data["topics"], db, "--runs", *data["runs"]) as server:
        judge(Api(server.url, alice), data["qrels"], 10_000)  # round 1, all of it
        http = organiser_session(server, boss)
        assert http.get(server.url + "/admin?batch=x").status_code == 400
        http.get(server.url + "/admin?batch=1")
        page = settled(server, http, boss)
        assert 'name="batch" min="1" value="1"' in page  # the preview is for 1 ...
        note = re.search(r'id="batch-note">(.*?)</p>', page, re.S)
        assert note and "not the 1 asked for" in note.group(1)  # ... and says why it is more
        planned = int(re.search(r"This round would load (\d+) judgments", page).group(1))
        assert planned > 1 and f"Load round 2: {planned} judgments</button>" in page
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        r = http.post(server.url + "/admin/round", data={"csrf": csrf, "batch": "1"},
                      allow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/admin"  # post-redirect-get
        page = http.get(server.url + "/admin").text
        assert f"Round 2 loaded: {planned} judgments planned ({planned} judgments, not the 1 " \
            "asked for" in page
        assert "Round 2 loaded" not in http.get(server.url + "/admin").text  # shown once
        r = http.post(server.url + "/admin/person", data={"csrf": csrf, "name": "carl"},
                      allow_redirects=False)
        assert r.status_code == 303
        page = http.get(server.url + "/admin").text
        assert "Added assessor carl" in page and "/login?token=" in page
        assert "/login?token=" not in http.get(server.url + "/admin").text
    assert sqlite3.connect(db).execute(
        "SELECT count(*) FROM items WHERE round=2").fetchone() == (planned,)


def test_a_pool_judged_whole_says_so_and_offers_no_round(tmp_path):
    data = tiny_data(tmp_path / "data", n_topics=2, depth=6)
    design = sample(data["runs"], tmp_path / "design", design="1-6:1")
    db = tmp_path / "w.db"
    alice = add_assessor(db, "alice")
    boss = add_assessor(db, "olga", role="organiser")
    with Server(design, data["docs"], data["topics"], db, "--runs", *data["runs"]) as server:
        judge(Api(server.url, alice), data["qrels"], 10_000)
        http = organiser_session(server, boss)
        page = settled(server, http, boss)
        top = re.search(r'id="verdict"[^>]*>(.*?)</p>', page, re.S)
        assert top and "The whole pool is judged" in top.group(1), page
        assert 'id="round-form"' not in page and "Load round" not in page


def test_the_top_line_says_when_to_stop():
    def cell(status):
        return SimpleNamespace(status=status)

    def result(*statuses):
        return SimpleNamespace(error=None, rows=[("run", {f"m{k}": cell(s) for k, s in
                                                          enumerate(statuses)})])

    plan = SimpleNamespace(left=10, planned=5)
    kind, text = verdict(result("ok", "ok"), plan)
    assert kind == "stop" and text.startswith("Nothing flagged") and "stop" in text
    kind, text = verdict(result("ok", "unreliable"), plan)
    assert kind == "go" and "1 of 2 intervals flagged" in text and "next round" in text
    kind, text = verdict(result("ok", "unreliable"), SimpleNamespace(left=0, planned=0))
    assert kind == "stop" and "whole pool is judged" in text and "1 of 2" in text
    assert verdict(None, None) == ("", "")


def test_refused_forms_come_back_to_the_dashboard_and_a_round_loads_once(tmp_path):
    """A form the dashboard cannot carry out answers with a redirect to it and the reason shown
    once (a name on the list already, a bad name, the organiser's own link); the preview of a
    round larger than the pool has left says what it would load, and is never shown for another
    size; the round button sent twice loads one round."""
    data, design, db, alice, boss = campaign(tmp_path, "f.db")
    with Server(design, data["docs"], data["topics"], db, "--runs", *data["runs"]) as server:
        judge(Api(server.url, alice), data["qrels"], 5)  # round 1 part-judged: the planner
        http = organiser_session(server, boss)
        http.get(server.url + "/admin?batch=100000")
        page = settled(server, http, boss)
        note = re.search(r'id="batch-note">(.*?)</p>', page, re.S)
        assert note and "not the 100000 asked for: only" in note.group(1), page
        left = int(re.search(r"This round would load (\d+) judgments", page).group(1))
        page = http.get(server.url + "/admin?batch=3").text
        assert "100000" not in page  # planning 3 (or planned): never the answer for 100000
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)

        def post(path, **fields):
            r = http.post(server.url + path, data={"csrf": csrf, **fields},
                          allow_redirects=False)
            assert r.status_code == 303 and r.headers["location"] == "/admin", r.text
            return http.get(server.url + "/admin").text.replace("&#39;", "'")

        page = post("/admin/person", name="alice")
        assert 'class="flash refused"' in page and "alice is on the list already" in page
        assert "Nobody added: names are" in post("/admin/person", name="bad name")
        page = post("/admin/reissue", name="olga")
        assert "You cannot give yourself a new link" in page and 'id="summary"' in page
        assert "You cannot revoke your own link" in post("/admin/revoke", name="olga")
        assert "no assessor or organiser called 'nobody'" in post("/admin/revoke", name="nobody")

        page = post("/admin/round", batch="3", round="2")
        assert "Round 2 loaded: 3 judgments planned" in page and 0 < 3 <= left
        page = post("/admin/round", batch="3", round="2")  # the button pressed twice
        assert "Round 2 is loaded already: no other round was loaded" in page
    rounds = sqlite3.connect(db).execute("SELECT max(round) FROM items").fetchone()
    assert rounds == (2,)
