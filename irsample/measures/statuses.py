"""Per run x measure of an evaluation, the status of each interval of a run's mean: ``ok``, or
``unreliable`` with the reason and the causing topics by id (the outcome of
:func:`irsample.measures.reliability.assess`, one column per measure), and per run x topic x
measure that of each topic's interval (:mod:`irsample.measures.topic_status`), as evaluations
carry them and print them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .topic_status import topic_reason

if TYPE_CHECKING:
    from .reliability import Reliability


@dataclass(frozen=True)
class Statuses:
    """Per run x measure of an evaluation: ``status`` (``"ok"``, ``"unreliable"``, or ``""``
    for a measure without an interval), ``reason`` (empty unless unreliable) and ``causes``
    (the topic ids causing it, a tuple, empty unless unreliable); object arrays of shape
    (runs, measures). ``topic_flags`` (runs, topics, measures; uint8) holds each topic's
    interval's flags (:func:`~irsample.measures.topic_status.topic_flags`, 0: ok) and ``found``
    (per topic) its judged relevant documents, which the reasons name; :meth:`topic` reads
    them. ``outcomes``: per measure column set, the rule's whole outcome behind it (which
    rules flag each run: :class:`~irsample.measures.reliability.Reliability`), for this
    evaluation's own columns (:meth:`concat` does not carry them)."""

    status: np.ndarray
    reason: np.ndarray
    causes: np.ndarray
    topic_flags: np.ndarray | None = None
    found: np.ndarray | None = None
    outcomes: dict[int, Reliability] = field(default_factory=dict)

    @classmethod
    def empty(cls, n_runs: int, n_measures: int, found=()) -> Statuses:
        """No status anywhere (no measure has an interval yet); ``found``: per topic, its
        judged relevant documents."""
        status = np.full((n_runs, n_measures), "", dtype=object)
        causes = np.empty((n_runs, n_measures), dtype=object)
        causes.fill(())
        found = np.asarray(found, dtype=np.int64)
        flags = np.zeros((n_runs, len(found), n_measures), dtype=np.uint8)
        return cls(status, status.copy(), causes, flags, found)

    def set(self, j: int, found: Reliability, topic_ids, topic_flags=None) -> None:
        """Column ``j`` from :func:`~irsample.measures.reliability.assess`'s outcome;
        ``topic_ids`` name its topic indices; ``topic_flags`` (runs, topics): its topics'
        intervals' flags."""
        ids = np.asarray(topic_ids, dtype=object)
        self.outcomes[j] = found
        self.status[:, j] = found.status
        self.reason[:, j] = found.reason
        for r, idx in enumerate(found.topics):
            self.causes[r, j] = tuple(str(t) for t in ids[list(idx)])
        if topic_flags is not None:
            self.topic_flags[:, :, j] = topic_flags

    def topic(self, r: int, t: int, j: int) -> tuple[str, str]:
        """(status, reason) of run ``r``'s interval on topic ``t`` for measure ``j``, which has
        an interval (``status[r, j]`` is not empty): positions, as in ``Evaluation.run_names``,
        ``topics`` and ``measures`` (``Evaluation.frame()`` has the statuses by name)."""
        if not all(isinstance(i, (int, np.integer)) for i in (r, t, j)):
            raise TypeError(f"Statuses.topic takes positions (run, topic, measure indices), not "
                            f"{(r, t, j)!r}: ev.run_names.index(name), ev.topics.index(topic_id) "
                            "and ev.measures.index(measure) give them; ev.frame() has the "
                            "statuses by name")
        return self._topic(r, t, j)

    def _topic(self, r, t, j) -> tuple[str, str]:
        """:meth:`topic` without the check of its arguments (:meth:`columns`' positions)."""
        flags = int(self.topic_flags[r, t, j]) if self.topic_flags is not None else 0
        if not flags:
            return "ok", ""
        return "unreliable", topic_reason(flags, int(self.found[t]))

    @classmethod
    def concat(cls, parts, topic_flags=None, found=None) -> Statuses:
        """The runs of several evaluations' statuses, one after another, with the topics'
        ``topic_flags`` and ``found`` already laid out on the joint topics by the caller."""
        return cls(*(np.concatenate([getattr(p, f) for p in parts])
                     for f in ("status", "reason", "causes")), topic_flags, found)

    def columns(self, numeric, n_rows: int, summary: bool, cells=None) -> dict:
        """``status``, ``reason`` and ``causes`` columns of a tidy table of ``n_rows`` rows
        whose first ones are the per-topic rows of ``cells`` (``(runs, topics, measures)``
        index arrays, one row each; None: no per-topic rows) and whose last ones (with
        ``summary``) are the runs x ``numeric`` measures' summaries; None on the other rows
        and for measures without an interval (a topic's causes: empty)."""
        cols = {f: np.full(n_rows, None, dtype=object) for f in ("status", "reason", "causes")}
        if cells is not None:
            for i, (r, t, j) in enumerate(zip(*cells)):
                if self.status[r, j]:
                    cols["status"][i], cols["reason"][i] = self._topic(r, t, j)
                    cols["causes"][i] = ()
        if summary and len(numeric):
            at = n_rows - self.status.shape[0] * len(numeric)
            empty = self.status[:, numeric].ravel() == ""
            for f, col in cols.items():
                col[at:] = np.where(empty, None, getattr(self, f)[:, numeric].ravel())
        return cols

    def __repr__(self) -> str:
        """A count, not the arrays (which ``Evaluation.frame()`` lays out by run and measure):
        ``Statuses(2 runs x 3 measures: 3 ok, 2 unreliable (run, measure): (0, 1), (1, 1);
        1 without an interval)``."""
        n_runs, n_measures = self.status.shape
        flagged = self.unreliable()
        parts = [f"{int((self.status == 'ok').sum())} ok", f"{len(flagged)} unreliable"]
        if flagged:
            shown = ", ".join(map(str, flagged[:5])) + (", ..." if len(flagged) > 5 else "")
            parts[-1] += f" (run, measure): {shown}"
        without = int((self.status == "").sum())
        parts += [f"{without} without an interval"] if without else []
        return f"Statuses({n_runs} runs x {n_measures} measures: {'; '.join(parts)})"

    def unreliable(self) -> list[tuple[int, int]]:
        """(run, measure) of every unreliable interval, run by run."""
        return [(int(r), int(j)) for r, j in zip(*np.nonzero(self.status == "unreliable"))]
