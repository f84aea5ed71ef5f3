"""The assessment app's guards, without a server: the dashboard's estimates follow every change
of the judgments, the design and topic orders reach every cell first, and what an assessor's
page shows after an action is about the document shown."""

from __future__ import annotations

import numpy as np
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

