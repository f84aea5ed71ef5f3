"""Make the screenshots of docs/assess.md: the judging page on a desktop (1280x900) and on a
phone (390x844), and the organiser's dashboard, of the app serving a 2strata@300 design (seed
7) of the bundled Vaswani runs with the Vaswani documents and topics (../shared/data/vaswani).
Two assessors answer 60 documents each from the qrels (bob flips 15% of his grades, seeded)
with 30% overlap, so the agreement tables and the live estimates have numbers; then headless
Chromium (/usr/bin/chromium) takes the pictures.

Usage: python docs/assess_screenshots.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# imported after the checkout is put on sys.path
from tests.test_assess_browser import ARGS, CHROMIUM  # noqa: E402
from tests.test_assess_helpers import Api, Server, add_assessor, sample, selected  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = p.parse_args(argv)
    vaswani = Path(args.shared) / "data" / "vaswani"
    runs = sorted((ROOT / "irsample" / "data" / "vaswani" / "runs").glob("*.gz"))
    qrels = {}
    for line in gzip.open(ROOT / "irsample" / "data" / "vaswani" / "qrels.gz", "rt"):
        q, _, d, g = line.split()
        qrels[(q, d)] = int(g)
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        design = sample(runs, tmp / "design", design="2strata@300", seed=7)
        truth = {pair: qrels.get(pair, 0) for pair in selected(design)}
        db = tmp / "s.db"
        tokens = {n: add_assessor(db, n) for n in ("alice", "bob", "carol")}
        boss = add_assessor(db, "olga", role="organiser")
        with Server(design, vaswani / "doc-text.trec.gz", vaswani / "query-text.trec", db,
                    "--overlap", "0.3", "--grades", "0-2", "--runs", *runs) as server:
            for name in ("alice", "bob"):
                api = Api(server.url, tokens[name])
                for _ in range(60):
                    item = api.next()
                    grade = truth[(item["topic"], item["docno"])]
                    if name == "bob" and rng.random() < 0.15:
                        grade = int(rng.integers(0, 3))
                    api.judge(item["item"], grade)
            from playwright.sync_api import sync_playwright

            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                for name, size in (("judging", (1280, 900)), ("judging-phone", (390, 844))):
                    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
                    page.goto(f"{server.url}/login?token={tokens['carol']}")
                    for key in "10":  # two judgments by keyboard: the page shows a message
                        with page.expect_navigation():
                            page.keyboard.press(key)
                    page.screenshot(path=str(ROOT / "docs" / f"assess-{name}.png"))
                    page.close()
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{server.url}/login?token={boss}")
                page.wait_for_selector("#estimates-table", timeout=120_000)
                page.wait_for_selector("pre.plan", timeout=120_000)
                page.screenshot(path=str(ROOT / "docs" / "assess-dashboard.png"), full_page=True)
                browser.close()
    print("wrote docs/assess-judging.png, docs/assess-judging-phone.png and "
          "docs/assess-dashboard.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
