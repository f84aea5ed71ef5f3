"""The tidy table of an :class:`~irsample.evaluation.Evaluation` (``Evaluation.frame``): one row
per run x topic x measure (topic ``all`` for the summaries), with the intervals and their
statuses where the evaluation has a confidence level. Per topic the interval is the topic's own
(``Evaluation.topic_variance``) and the status its own
(:meth:`~irsample.measures.statuses.Statuses.topic`)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def tidy_frame(ev, *, summary: bool = True, per_topic: bool = True) -> pd.DataFrame:
    """``run, topic, measure, value`` rows of the evaluation ``ev``, then ``variance, low,
    high`` and ``status, reason, causes`` with a confidence level (the columns of
    ``Evaluation.frame``, which calls this; ``ev`` is not imported here, which it imports)."""
    parts = []
    numeric = [i for i, m in enumerate(ev.measures) if m.value_type != "str"]
    names = np.array([ev.measures[i].trec_name for i in numeric], dtype=object)
    runs = np.array(ev.run_names, dtype=object)
    cells = None  # (runs, topics, measures) of the per-topic rows
    if per_topic:
        sel = [i for i in numeric if ev.measures[i].per_topic]
        r, t = np.nonzero(ev.evaluated)
        if sel and len(r):
            cells = (np.repeat(r, len(sel)), np.repeat(t, len(sel)),
                     np.tile(np.asarray(sel), len(r)))
            parts.append(pd.DataFrame({
                "run": runs[cells[0]],
                "topic": np.array(ev.topics, dtype=object)[cells[1]],
                "measure": np.array([m.trec_name for m in ev.measures], object)[cells[2]],
                "value": ev.values[cells],
            }))
    if summary and numeric:
        parts.append(pd.DataFrame({
            "run": np.repeat(runs, len(numeric)),
            "topic": "all",
            "measure": np.tile(names, len(runs)),
            "value": ev.summary[:, numeric].ravel(),
        }))
    if not parts:
        return pd.DataFrame(columns=["run", "topic", "measure", "value"])
    frame = pd.concat(parts, ignore_index=True)
    if ev.ci is not None:
        frame = _with_intervals(ev, frame, numeric, summary, cells)
    return frame


def _with_intervals(ev, frame, numeric, summary, cells):
    """``variance``, ``low``, ``high`` columns in the row order of :func:`tidy_frame` (per
    topic: the topic's own variance and interval), and the statuses'."""
    parts = []
    if cells is not None:
        low, high = ev.interval(summary=False)
        var = ev.variance if ev.topic_variance is None else ev.topic_variance
        parts.append(np.stack([var[cells], low[cells], high[cells]], axis=1))
    if summary and numeric:
        low, high = ev.interval(summary=True)
        parts.append(np.stack(
            [ev.summary_variance[:, numeric].ravel(), low[:, numeric].ravel(),
             high[:, numeric].ravel()], axis=1))
    extra = np.concatenate(parts)
    frame = frame.assign(variance=extra[:, 0], low=extra[:, 1], high=extra[:, 2])
    if ev.statuses is None:
        return frame
    return frame.assign(**ev.statuses.columns(numeric, len(frame), summary, cells))
