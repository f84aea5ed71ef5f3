"""A judging campaign in a real browser (headless Chromium, as tests/test_assess_browser.py):
one document of every cell comes first and the assessor's pages are blind; a document leased to one
assessor is refused to another; the organiser's dashboard shows live estimates equal to
``irsample eval`` on the exported judgments, and revokes and reissues links; a revision keeps
the earlier grade; no page is wider than a phone's screen (390x844) or a desktop's (1280x900).
"""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

import pytest

from irsample.cli import main

from .test_assess_browser import playwright, serving  # noqa: F401  (the fixture)
from .test_assess_helpers import ROOT, Api, add_assessor, sample, selected, tiny_design

pytestmark = pytest.mark.browser

VASWANI_RUNS = sorted((ROOT / "irsample" / "data" / "vaswani" / "runs").glob("*.gz"))
#: what an assessor's page may not show: strata, overlap, another assessor
BLIND = ("1-10", "11-100", "stratum", "overlap", "two assessors", "bob")
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, wide = [];
  for (const e of document.querySelectorAll("body *")) {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && (r.right > width + 0.5 || r.left < -0.5))
      wide.push(`${e.tagName}#${e.id}.${e.className} ${Math.round(r.left)}-${Math.round(r.right)}`);
  }
  return {width, scroll: document.documentElement.scrollWidth, wide};
}"""

#: table cells whose label (a floated ::before on phone cards) sticks out below the cell
LABELS_INSIDE = """() => [...document.querySelectorAll("table.stack td[data-label]")].filter(td => {
  const style = getComputedStyle(td, "::before");
  if (style.content === "none" || style.float !== "left") return false;
  return td.getBoundingClientRect().height < parseFloat(style.lineHeight || "0") ||
         td.getBoundingClientRect().height < 0.9 * parseFloat(getComputedStyle(td).fontSize);
}).map(td => td.dataset.label)"""


@pytest.fixture(scope="module")
def vaswani(tmp_path_factory):
    """The issue's design (2strata@300 of the bundled Vaswani runs, seed 7) with made-up
    documents and topics."""
    folder = tmp_path_factory.mktemp("vaswani")
    design = sample(VASWANI_RUNS, folder / "design", design="2strata@300", seed=7)
    pairs = selected(design)
    docs = folder / "docs.jsonl"
    docs.write_text("".join(json.dumps({"docno": d, "text": f"document {d} about words " * 5})
                            + "\n" for _, d in pairs))
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"{q}\ttopic {q} words\tFind words.\tAnything on words.\n"
                              for q in sorted({q for q, _ in pairs})))
    return design, docs, topics


def strata_of(design: Path) -> dict:
    rows = json.loads((design / "design.json").read_text())["rows"]
    return {(r[0], r[1]): r[3] for r in rows}


def login(browser, server, token, size=(1280, 900)):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(f"{server.url}/login?token={token}")
    return page


def test_every_cell_first_and_assessor_pages_are_blind(playwright, vaswani, tmp_path):  # noqa: F811
    design, docs, topics = vaswani
    db = tmp_path / "b.db"
    alice, bob = add_assessor(db, "alice"), add_assessor(db, "bob")
    stratum = strata_of(design)
    with serving(playwright, design, docs, topics, db, "--overlap", "0.3") as (server, browser):
        Api(server.url, bob).next()
        page = login(browser, server, alice)
        cells = set()
        for key in "102":
            docno = page.inner_text("#docno")
            topic = page.inner_text(".topic h2").split()[-1]
            cells.add((topic, stratum[(topic, docno)]))
            text = page.inner_text("body")
            assert not [w for w in BLIND if w in text], text
            with page.expect_navigation():
                page.keyboard.press(key)
        assert len(cells) == 3  # one document of every (topic, stratum) cell first
        for path in ("/mine", "/judge"):
            page.goto(server.url + path)
            assert not [w for w in BLIND if w in page.inner_text("body")], path
        for path in ("/progress", "/admin"):
            assert page.goto(server.url + path).status == 403
            assert "for organisers only" in page.inner_text("body")
        answer = Api(server.url, alice).http.get(server.url + "/api/next").json()
        assert set(answer["next"]) == {"item", "topic", "docno", "ticket"}


def test_a_document_leased_to_one_assessor_is_refused_to_another(playwright, tmp_path):  # noqa: F811
    """A 2-second lease, kept alive by alice's open page for 3 seconds: bob gets another
    document, and his judgment of alice's (a tampered form) is answered 409, not saved."""
    data, design = tiny_design(tmp_path)
    db = tmp_path / "l.db"
    alice, bob = add_assessor(db, "alice"), add_assessor(db, "bob")
    with serving(playwright, design, data["docs"], data["topics"], db, "--lease",
                 "2") as (server, browser):
        a = login(browser, server, alice)
        hers = a.get_attribute("#judge", "data-item")
        a.wait_for_timeout(3000)  # longer than the lease: the page renewed it
        b = login(browser, server, bob)
        assert b.get_attribute("#judge", "data-item") != hers
        b.evaluate(f"document.querySelector('#judge input[name=item]').value = '{hers}'")
        with b.expect_navigation():
            b.keyboard.press("1")
        assert "/judge" in b.url and "not handed to you" in b.inner_text("#message")
        with a.expect_navigation():
            a.keyboard.press("2")
        assert "Saved:" in a.inner_text(".flash")
    rows = sqlite3.connect(db).execute(
        "SELECT j.item, a.name, j.grade FROM judgments j JOIN assessors a ON a.id = j.assessor"
    ).fetchall()
    assert rows == [(int(hers), "alice", 2)]


def _eval_exact(commands, tmp_path) -> dict:
    """Run the dashboard's command lines (export, merge, eval with exact places)."""
    out = {}
    for line in commands:
        argv = line.split()[1:]
        argv = [a.strip("'") for a in argv]
        if argv[0] == "eval":
            argv += ["--format", "tsv", "--places", "exact", "-o", str(tmp_path / "eval.tsv")]
        argv = [str(tmp_path / a) if a in ("judged.qrels", "merged.strata", "merged.prels")
                else a for a in argv]
        assert main(argv) == 0, line
    for row in (tmp_path / "eval.tsv").read_text().splitlines()[1:]:
        run, _, measure, value, low, high, status, reason = row.split("\t")
        out[(run, measure)] = (value, low, high, status, reason)
    return out


def test_dashboard_estimates_equal_eval_and_links_are_revoked(playwright, vaswani, tmp_path):  # noqa: F811
    design, docs, topics = vaswani
    db = tmp_path / "d.db"
    tokens = {n: add_assessor(db, n) for n in ("alice", "bob")}
    boss = add_assessor(db, "olga", role="organiser")
    with serving(playwright, design, docs, topics, db, "--overlap", "0.2", "--grades", "0-1",
                 "--runs", *VASWANI_RUNS) as (server, browser):
        for token in tokens.values():
            api = Api(server.url, token)
            for k in range(30):
                item = api.next()
                api.judge(item["item"], int(k % 4 == 0))
        page = login(browser, server, boss)
        assert page.url.endswith("/admin")
        page.wait_for_selector("#estimates-table", timeout=90_000)
        cells = page.eval_on_selector_all("#estimates-table td[data-measure]", """cells =>
            cells.map(c => [c.closest("tr").dataset.run, c.dataset.measure,
                            c.dataset.value, c.dataset.low, c.dataset.high])""")
        commands = page.text_content("pre.commands").strip().splitlines()
        assert page.inner_text("#next-round pre.plan").startswith("plan for xinfAP")
        expected = _eval_exact(commands, tmp_path)
        assert len(cells) == 3 * len(VASWANI_RUNS)
        for run, measure, value, low, high in cells:
            assert (value, low, high) == expected[(run, measure)][:3], (run, measure)
        # each run's status cell: eval's status and reason of each of its intervals, each
        # reason folded to its first clause, left-aligned
        shown = page.eval_on_selector_all("#estimates-table td[data-label=status]", """cs =>
            cs.map(c => [c.closest("tr").dataset.run, c.innerText, getComputedStyle(c).textAlign,
                         [...c.querySelectorAll("[data-measure]")].map(
                             e => [e.dataset.measure, e.dataset.status, e.dataset.reason,
                                   e.innerText])])""")
        assert len(shown) == len(VASWANI_RUNS)
        for run, text, align, notes in shown:
            assert align == "left" and [n[:3] for n in notes] == [
                [m, *expected[(run, m)][3:]] for r, m, *_ in cells
                if r == run and expected[(run, m)][3] != "ok"], run
            assert text == "ok" if not notes else all(
                len(n[3]) <= len(f"{n[0]}: {n[1]}: ") + 91 for n in notes), run
        assert any(notes for *_, notes in shown)  # 60 judgments: too few to trust
        bob_page = login(browser, server, tokens["bob"])
        assert bob_page.url.endswith("/judge")
        with page.expect_navigation():
            page.click("tr[data-name=bob] button.revoke")
        assert "Revoked bob" in page.inner_text(".flash")
        assert bob_page.goto(f"{server.url}/login?token={tokens['bob']}").status == 403
        assert "revoked" in bob_page.inner_text("body")
        with page.expect_navigation():
            page.click("tr[data-name=bob] button.reissue")
        link = page.inner_text("#newlink")
        assert link.startswith(server.url + "/login?token=")
        bob_page.goto(link)
        assert bob_page.url.endswith("/judge") and bob_page.inner_text("#docno")


def test_revise_from_my_judgments_keeps_the_earlier_grade(playwright, tmp_path):  # noqa: F811
    data, design = tiny_design(tmp_path)
    db = tmp_path / "r.db"
    alice = add_assessor(db, "alice")
    with serving(playwright, design, data["docs"], data["topics"], db) as (server, browser):
        page = login(browser, server, alice)
        first = page.inner_text("#docno")
        page.keyboard.press("n")
        page.keyboard.type("first look")
        page.keyboard.press("Escape")
        with page.expect_navigation():
            page.keyboard.press("1")
        with page.expect_navigation():
            page.keyboard.press("0")
        page.goto(server.url + "/mine")
        rows = page.eval_on_selector_all("#mine tbody tr", "rs => rs.map(r => r.innerText)")
        assert len(rows) == 2 and first in rows[1]  # newest first
        with page.expect_navigation():
            page.click("#mine tbody tr:nth-child(2) a.button")
        assert "revising your judgment" in page.inner_text(".meta")
        assert page.input_value("#note") == "first look"
        assert page.get_attribute("button.was", "value") == "1"
        with page.expect_navigation():
            page.keyboard.press("2")
        assert f"Revised: {first} is now 2" in page.inner_text(".flash")
    out, details = tmp_path / "x.qrels", tmp_path / "d.tsv"
    assert main(["assess", "export", "--db", str(db), "-o", str(out), "--details",
                 str(details)]) == 0
    assert f" alice {first} 2" in out.read_text()
    rows = [x.split("\t") for x in details.read_text().splitlines()[1:] if f"\t{first}\t" in x]
    assert [(r[4], r[6], r[7]) for r in rows] == [("1", "revised", "first look"),
                                                  ("2", "current", "first look")]


def png_width(path: Path) -> int:
    return struct.unpack(">I", path.read_bytes()[16:20])[0]


def test_no_page_is_wider_than_the_screen(playwright, tmp_path):  # noqa: F811
    """At 390x844 and 1280x900: no element reaches past the right edge (every <details>
    opened), the page does not scroll sideways, and a full-page screenshot is exactly as wide
    as the screen."""
    data, design = tiny_design(tmp_path)
    docs = data["docs"]  # every document with a word longer than a phone is wide
    docs.write_text(docs.read_text().replace("words and more", "w" * 120 + " and more"))
    db = tmp_path / "w.db"
    tokens = {n: add_assessor(db, n) for n in ("alice", "bob")}
    boss = add_assessor(db, "olga", role="organiser")
    with serving(playwright, design, data["docs"], data["topics"], db, "--overlap", "0.5",
                 "--runs", *data["runs"]) as (server, browser):
        for token in tokens.values():
            api = Api(server.url, token)
            for _ in range(12):
                api.judge(api.next()["item"], 1)
        for size in ((390, 844), (1280, 900)):
            for token, path in ((tokens["alice"], "/judge"), (tokens["alice"], "/mine"),
                                (boss, "/admin")):
                page = login(browser, server, token, size)
                page.goto(server.url + path)
                if path == "/admin":
                    page.wait_for_selector("#estimates-table", timeout=90_000)
                page.evaluate("document.querySelectorAll('details').forEach(d => "
                              "d.open = true)")
                found = page.evaluate(OVERFLOW)
                assert found["wide"] == [] and found["scroll"] == size[0], (path, size,
                                                                           found)
                shot = tmp_path / f"{path[1:]}-{size[0]}.png"
                page.screenshot(path=str(shot), full_page=True)
                assert png_width(shot) == size[0], (path, size)
                if path == "/judge":  # every control on the first screen
                    for selector in ("button.grade", "#note", "button[data-key=s]",
                                     "button[data-key=u]"):
                        box = page.locator(selector).first.bounding_box()
                        assert box["y"] + box["height"] <= size[1], (selector, size)
                # on cards, an empty cell keeps its label inside it (an empty note, the
                # organiser's own "link" cell), and the next round's plan is readable
                assert page.evaluate(LABELS_INSIDE) == [], (path, size)
                if path == "/admin" and page.locator("pre.plan").count():
                    assert page.evaluate("parseFloat(getComputedStyle(document.querySelector("
                                         "'pre.plan')).fontSize)") >= 12, size
                page.close()
