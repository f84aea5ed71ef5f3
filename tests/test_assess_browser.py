"""A real browser judges by keyboard: headless Chromium (Debian's /usr/bin/chromium, driven by
playwright without its own browser download) opens an assessor's link, judges five documents
with the digit keys (one with a note typed after pressing n), undoes one with u, and the
store holds exactly the grades pressed. Skipped when Chromium or playwright is missing, unless
IRSAMPLE_REQUIRE_BROWSER=1 (set by .ci/run, which installs Chromium)."""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import pytest

from .test_assess_helpers import Server, add_assessor, tiny_design

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

pytestmark = pytest.mark.browser


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)


@pytest.fixture(scope="module")
def playwright():
    required = os.environ.get("IRSAMPLE_REQUIRE_BROWSER") == "1"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if required:
            raise
        pytest.skip("playwright is not installed")
    if not Path(CHROMIUM).exists():
        if required:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing")
    with sync_playwright() as p:
        yield p


@contextmanager
def serving(playwright, *args):
    """``irsample assess serve`` with ``args`` (design, docs, topics, db, options) and a
    browser, both stopped afterwards."""
    with Server(*args) as server:
        browser = launch(playwright)
        try:
            yield server, browser
        finally:
            browser.close()


def test_five_documents_judged_by_keyboard(playwright, tmp_path):
    data, design = tiny_design(tmp_path)
    db = tmp_path / "b.db"
    token = add_assessor(db, "carol")
    with serving(playwright, design, data["docs"], data["topics"], db) as (server, browser):
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        page.goto(f"{server.url}/login?token={token}")
        assert page.url.endswith("/judge")
        pressed = {}
        for k, key in enumerate(["2", "0", "1", "3", "1"]):
            docno = page.inner_text("#docno")
            assert page.inner_text("#doctext").strip()
            if k == 2:
                page.keyboard.press("n")
                assert page.evaluate("document.activeElement.id") == "note"
                page.keyboard.type("typed in the browser; keys 0-3 do not grade here")
                page.keyboard.press("Escape")
            with page.expect_navigation():
                page.keyboard.press(key)
            pressed[docno] = int(key)
            assert f"Saved: {docno} judged {key} (" in page.inner_text(".flash")
        with page.expect_navigation():
            page.keyboard.press("u")  # undo the last one, then judge it again with 2
        last = page.inner_text("#docno")
        flash = page.inner_text(".flash")
        assert f"Withdrawn: your 1 (marginally relevant) for {last}" in flash
        assert pressed[last] == 1 and page.get_attribute("button.was", "value") == "1"
        with page.expect_navigation():
            page.keyboard.press("2")
        pressed[last] = 2
        shot = tmp_path / "judging.png"
        page.screenshot(path=str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        errors = []
        page.on("pageerror", lambda e: errors.append(e))
        page.goto(server.url + "/mine")
        assert "My judgments" in page.inner_text("h1") and not errors
    rows = sqlite3.connect(db).execute(
        "SELECT i.docno, j.grade, j.note FROM judgments j JOIN items i ON i.id = j.item").fetchall()
    assert {d: g for d, g, _ in rows} == pressed
    notes = [n for _, _, n in rows if n]
    assert notes == ["typed in the browser; keys 0-3 do not grade here"]
