"""Per run x measure of an evaluation, the status of each interval of a run's mean: ``ok``, or
``unreliable`` with the reason and the causing topics by id (the outcome of
:func:`irsample.measures.reliability.assess`, one column per measure), as evaluations carry it
and print it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .reliability import Reliability


@dataclass(frozen=True)
class Statuses:
    """Per run x measure of an evaluation: ``status`` (``"ok"``, ``"unreliable"``, or ``""``
    for a measure without an interval), ``reason`` (empty unless unreliable) and ``causes``
    (the topic ids causing it, a tuple, empty unless unreliable); object arrays of shape
    (runs, measures)."""

    status: np.ndarray
    reason: np.ndarray
    causes: np.ndarray

    @classmethod
    def empty(cls, n_runs: int, n_measures: int) -> Statuses:
        """No status anywhere (no measure has an interval yet)."""
        status = np.full((n_runs, n_measures), "", dtype=object)
        causes = np.empty((n_runs, n_measures), dtype=object)
        causes.fill(())
        return cls(status, status.copy(), causes)

    def set(self, j: int, found: Reliability, topic_ids) -> None:
        """Column ``j`` from :func:`~irsample.measures.reliability.assess`'s outcome;
        ``topic_ids`` name its topic indices."""
        ids = np.asarray(topic_ids, dtype=object)
        self.status[:, j] = found.status
        self.reason[:, j] = found.reason
        for r, idx in enumerate(found.topics):
            self.causes[r, j] = tuple(str(t) for t in ids[list(idx)])

    @classmethod
    def concat(cls, parts) -> Statuses:
        """The runs of several evaluations' statuses, one after another."""
        return cls(*(np.concatenate([getattr(p, f) for p in parts])
                     for f in ("status", "reason", "causes")))

    def columns(self, numeric, n_rows: int, summary: bool) -> dict:
        """``status``, ``reason`` and ``causes`` columns of a tidy table of ``n_rows`` rows
        whose last ones (with ``summary``) are the runs x ``numeric`` measures' summaries; None
        on the other rows and for measures without an interval."""
        cols = {f: np.full(n_rows, None, dtype=object) for f in ("status", "reason", "causes")}
        if summary and len(numeric):
            at = n_rows - self.status.shape[0] * len(numeric)
            empty = self.status[:, numeric].ravel() == ""
            for f, col in cols.items():
                col[at:] = np.where(empty, None, getattr(self, f)[:, numeric].ravel())
        return cols

    def unreliable(self) -> list[tuple[int, int]]:
        """(run, measure) of every unreliable interval, run by run."""
        return [(int(r), int(j)) for r, j in zip(*np.nonzero(self.status == "unreliable"))]
