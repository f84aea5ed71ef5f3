"""The organiser's live estimates without a server: ppi(M) with automatic labels equal
``irsample eval --auto-labels`` on the export, and the reliability status comes from the
evaluation table's own ``status``/``reason`` columns (the organiser's page shows them)."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import pandas as pd
import pytest

pytest.importorskip("jinja2")

from irsample.assess.estimates import compute, interval_status  # noqa: E402
from irsample.assess.pages import admin_page  # noqa: E402
from irsample.assess.session import Session  # noqa: E402
from irsample.cli import main  # noqa: E402

from .test_assess_helpers import sample, tiny_data  # noqa: E402


def test_interval_status_reads_the_tables_own_status():
    frame = pd.DataFrame({"run": ["a", "b"], "measure": ["ht(AP)"] * 2, "value": [0.2, 0.3],
                          "low": [0.1, math.nan], "high": [0.3, math.nan]})
    assert interval_status(frame) == [
        ("ok", ""), ("unreliable", "no interval: the variance is undefined on this sample")]
    frame["status"] = ["unreliable", "ok"]
    frame["reason"] = ["few relevant documents in topics 3, 7", None]
    assert interval_status(frame) == [("unreliable", "few relevant documents in topics 3, 7"),
                                      ("ok", "")]


def judged_session(tmp_path, n: int, order: str = "design"):
    """A session on tiny data whose one assessor has judged its first ``n`` documents (from
    the true grades): (data, session, database path, the assessor's token)."""
    data = tiny_data(tmp_path / "data")
    design = sample(data["runs"], tmp_path / "design")
    db = tmp_path / f"{order}.db"
    session = Session.open(design, data["docs"], data["topics"], db, grades=(0, 1, 2),
                           order=order, runs=data["runs"])
    token = session.store.add_assessor("a")
    a = session.store.assessor_by_token(token).id
    for _ in range(n):
        item = session.next_item(a)
        session.judge(a, item.id, data["qrels"][(item.topic, item.docno)])
    return data, session, db, token


def test_live_estimates_with_labels_equal_eval(tmp_path, capsys):
    data, session, db, token = judged_session(tmp_path, 40)
    found = compute(db, session.store.rounds(), data["runs"], labels="fusion")
    assert not found.error and found.used == 40 and found.basis.format == "strata"
    assert found.measures[-3:] == ("ppi(AP)", "ppi(nDCG)", "ppi(P@10)")
    capsys.readouterr()
    for line in found.commands:
        argv = [x.strip("'") for x in line.split()[1:]]
        argv = [str(tmp_path / x) if x.startswith(("judged.", "merged.")) else x for x in argv]
        if argv[0] == "eval":
            argv += ["--format", "tsv", "--places", "exact"]
        assert main(argv) == 0, line
    out = capsys.readouterr().out
    expected = {(r, m): (float(v), float(lo), float(hi), status, reason)
                for r, _, m, v, lo, hi, status, reason in
                (x.split("\t") for x in out.splitlines()[1:])}
    got = {(run, m): (c.value, c.low, c.high, c.status, c.reason) for run, cells in found.rows
           for m, c in cells.items()}
    assert got == expected and len(got) == 6 * len(data["runs"])
    # the dashboard shows the evaluation's own status (equal above): 40 judgments leave some
    # intervals unreliable, each with its reason
    cells_all = [c for _, cells in found.rows for c in cells.values()]
    assert "unreliable" in {c.status for c in cells_all}
    assert all(c.reason for c in cells_all if c.status == "unreliable")
    page = admin_page(session, session.store.assessor_by_token(token),
                      SimpleNamespace(result=found, preview=None, computing=False,
                                      runs=data["runs"]))
    status_cells = re.findall(r'<td data-label="status" class="status (\w+)">(.*?)</td>', page,
                              re.S)
    assert len(status_cells) == len(data["runs"])
    flagged_runs = {run for run, cells in found.rows if cells["ht(AP)"].status != "ok"}
    assert sum(kind == "warning" for kind, _ in status_cells) >= len(flagged_runs)
    assert all('data-status="unreliable" data-reason="' in text and "<summary>" in text
               for kind, text in status_cells if kind == "warning")


def test_an_adaptive_order_is_estimated_once_its_round_is_judged(tmp_path):
    """Handed out by hedge, what is judged of a stratum is what the method expects relevant,
    not a random subset: estimated as strata at judged/size before the round was complete,
    the totals came out too high with no flag. Now the estimates wait for the round's end
    (a note says why), and a complete round is estimated as before."""
    data, session, db, token = judged_session(tmp_path, 10, order="hedge")
    a = session.store.assessor_by_token(token).id
    early = compute(db, session.store.rounds(), data["runs"], adaptive="hedge")
    assert early.basis is None and not early.rows
    assert "adaptive order 'hedge'" in early.error and "completely judged" in early.error
    while (item := session.next_item(a)) is not None:
        session.judge(a, item.id, data["qrels"][(item.topic, item.docno)])
    done = compute(db, session.store.rounds(), data["runs"], adaptive="hedge")
    assert not done.error and done.basis.format == "strata" and done.rows
