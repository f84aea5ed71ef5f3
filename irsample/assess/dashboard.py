"""What the organiser's dashboard shows: progress per topic and stratum, agreement on the
overlap, each assessor's pace, and the live estimates with the next round's plan (computed in a
background thread, :class:`Live`). Assessors see none of it (blind judging).
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import agreement as stats
from . import readout

#: a pause longer than this between two judgments is a break, not time spent judging
BREAK_SECONDS = 600.0


def progress(con) -> list[dict]:
    """Per topic and stratum (natural topic order): items, judged, judgments, required and
    the number still to judge."""
    keys = ("topic", "stratum", "items", "judged", "judgments", "required")
    rows = [dict(zip(keys, r)) for r in readout.counts(con)]
    for r in rows:
        r["to_judge"] = r["items"] - r["judged"]
    return rows


def by_stratum(rows: list[dict]) -> list[dict]:
    """The rows of :func:`progress` summed per stratum (in natural order)."""
    out: dict[str, dict] = {}
    for r in rows:
        acc = out.setdefault(r["stratum"], dict.fromkeys(("items", "judged", "judgments",
                                                           "required", "to_judge"), 0))
        for k in acc:
            acc[k] += r[k]
    return [{"stratum": s, **out[s]} for s in sorted(out, key=readout.topic_key)]


def agreement(con, *, rel_level: int = 1, seed: int = 0, level: float = 0.95,
              n_resamples: int = 2000) -> dict:
    """Kappa for every pair of assessors with common items, alpha over all of them (grades,
    and relevant/not at ``rel_level``), bootstrap intervals seeded by ``seed``; kappa also
    with the analytic interval."""
    ratings = readout.ratings(con)
    names = sorted({n for r in ratings.values() for n in r})
    out = {"items": len(ratings), "assessors": names, "pairs": [], "alpha": []}
    if not ratings:
        return out
    matrix = np.full((len(ratings), len(names)), np.nan)
    for row, grades in enumerate(ratings.values()):
        for name, g in grades.items():
            matrix[row, names.index(name)] = g
    binary = np.where(np.isnan(matrix), np.nan, (matrix >= rel_level).astype(float))
    opts = dict(level=level, n_resamples=n_resamples, rng=seed)
    for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
        both = ~np.isnan(matrix[:, i]) & ~np.isnan(matrix[:, j])
        if not both.any():
            continue
        x, y = matrix[both, i].astype(int), matrix[both, j].astype(int)
        bx, by = (x >= rel_level).astype(int), (y >= rel_level).astype(int)
        out["pairs"].append({
            "a": a, "b": b, "items": int(both.sum()),
            "kappa": stats.kappa_interval(x, y, **opts),
            "kappa_analytic": stats.kappa_interval(x, y, level=level, method="analytic"),
            "kappa_binary": stats.kappa_interval(bx, by, **opts),
            "raw": float(np.mean(x == y)),
        })
    out["alpha"] = [
        stats.alpha_interval(matrix, level_of_measurement="nominal", **opts),
        stats.alpha_interval(matrix, level_of_measurement="ordinal", **opts),
        stats.alpha_interval(binary, level_of_measurement="nominal", **opts),
    ]
    return out


@dataclass(frozen=True)
class Pace:
    """One person's line of the dashboard: their judgments and how fast they make them."""

    name: str
    role: str
    revoked: bool
    judgments: int  #: current judgments
    revised: int  #: earlier grades replaced by a revision
    withdrawn: int  #: judgments undone
    seconds: float | None  #: median seconds between consecutive judgments (breaks left out)
    per_hour: float | None  #: judgments per hour of judging time (breaks left out)
    last: float | None  #: time of their latest judgment


def pace(con) -> list[Pace]:
    """Every person's :class:`Pace`, in the order they were added."""
    states = {}
    for assessor, current, withdrawn, n in con.execute(
            "SELECT assessor, current, withdrawn IS NOT NULL, count(*) FROM judgments "
            "GROUP BY 1, 2, 3"):
        key = "current" if current else ("withdrawn" if withdrawn else "revised")
        states.setdefault(assessor, {})[key] = n
    times = readout.activity(con)
    out = []
    for pid, name, role, revoked in con.execute(
            "SELECT id, name, role, revoked FROM assessors ORDER BY id"):
        at = times.get(pid, [])
        gaps = [b - a for a, b in zip(at, at[1:]) if b - a <= BREAK_SECONDS]
        s = states.get(pid, {})
        out.append(Pace(name, role, revoked is not None, s.get("current", 0),
                        s.get("revised", 0), s.get("withdrawn", 0),
                        statistics.median(gaps) if gaps else None,
                        3600.0 * len(gaps) / sum(gaps) if gaps and sum(gaps) > 0 else None,
                        at[-1] if at else None))
    return out


class Live:
    """The live estimates and the next round's plan, recomputed in a background thread when
    the judgments changed since the last computation (:meth:`poke`, from the dashboard's
    requests); the dashboard shows the latest finished one meanwhile."""

    def __init__(self, session, runs=None, labels=None, *, ci: float = 0.95, batch: int = 0):
        self.session, self.runs, self.labels, self.ci = session, runs, labels, ci
        # default: round 1's size, as --help says (not every item loaded, which grows by
        # each round: after a restart round 2's size was 200 + 185)
        rounds = session.store.rounds()
        first = rounds[0]["items"] if rounds else len(session.store.items(active_only=False))
        self.batch = batch or first
        self.result = None  #: the latest :class:`~.estimates.Estimates`
        self.preview = None  #: the latest :class:`~.rounds.RoundPlan`, or an error text
        self.stamp = None
        self.task = None
        self.records: dict = {}
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="irsample-live")

    def stamp_now(self) -> tuple:
        """What the estimates are computed from: it changes on every change of the judgments.
        Judgments are append-only: a save or a revision adds a row (count and max id), an undo
        sets a row's ``withdrawn`` (never cleared), so the three counts change on each."""
        con = self.session.store.db
        return (con.execute("SELECT count(*), coalesce(max(id), 0), count(withdrawn) FROM "
                            "judgments").fetchone()
                + (len(self.session.store.rounds()), self.batch))

    @property
    def computing(self) -> bool:
        return self.task is not None and not self.task.done()

    def read(self, path):
        """Design records by path, read once (each round's file does not change)."""
        from ..design import DesignRecord

        if path not in self.records:
            self.records[path] = DesignRecord.read(path)
        return self.records[path]

    def poke(self) -> None:
        """Start a computation if the judgments changed and none is running."""
        if not self.runs or self.computing or self.stamp == self.stamp_now():
            return
        self.task = asyncio.get_running_loop().create_task(self._compute(self.stamp_now()))

    async def _compute(self, stamp) -> None:
        loop = asyncio.get_running_loop()
        store = self.session.store
        rounds = store.rounds()
        self.result = await loop.run_in_executor(self.thread, self._estimates, rounds)
        self.preview = await loop.run_in_executor(self.thread, self._plan, rounds, stamp)
        self.stamp = stamp

    def _estimates(self, rounds):
        from .estimates import compute

        adaptive = self.session.order if self.session.adaptive is not None else None
        return compute(self.session.store.path, rounds, self.runs, labels=self.labels,
                       ci=self.ci, rel_level=self.session.rel_level, read=self.read,
                       adaptive=adaptive)

    def _plan(self, rounds, stamp):
        from ..errors import IrsampleError
        from .export import export
        from .rounds import plan_round
        from .store import connect

        con = connect(self.session.store.path, readonly=True)
        try:
            qrels = export(con).qrels
        finally:
            con.close()
        try:
            return plan_round(rounds, qrels, self.runs, batch=self.batch, stamp=stamp,
                              level=self.ci, rel_level=self.session.rel_level)
        except (IrsampleError, ValueError) as exc:
            return f"no plan: {exc}"

    def close(self) -> None:
        self.thread.shutdown(wait=False, cancel_futures=True)


def verdict(result, plan) -> tuple[str, str]:
    """What the top of the dashboard says about stopping, as (kind, text): ``stop`` when the
    pool has nothing left to judge or no interval is flagged by the reliability rule, ``go``
    when some are flagged, ("", "") before the estimates are computed. ``result``: the
    :class:`~.estimates.Estimates`; ``plan``: the next round's (or None)."""
    cells = [] if result is None or result.error else [
        c for _, row in result.rows for c in row.values()]
    flagged = sum(c.status != "ok" for c in cells)
    if plan is not None and plan.left == 0:
        return "stop", ("The whole pool is judged: nothing is left to judge, and no further "
                        "round can be loaded." + (
                            f" {flagged} of {len(cells)} intervals stay flagged (status "
                            "column): more judgments of this pool cannot clear them."
                            if flagged else ""))
    if not cells:
        return "", ""
    if not flagged:
        return "stop", ("Nothing flagged: every interval can be trusted by the reliability "
                        "rule; stop, or judge more to narrow them.")
    more = " or load the next round below" if plan is not None and plan.planned else ""
    return "go", (f"{flagged} of {len(cells)} intervals flagged (status column): keep "
                  f"judging{more}.")


def age(when: float | None) -> str:
    """How long ago ``when`` was, in words (``-`` for never)."""
    if when is None:
        return "-"
    s = max(0, time.time() - when)
    if s < 90:
        return f"{s:.0f} s ago"
    if s < 5400:
        return f"{s / 60:.0f} min ago"
    return f"{s / 3600:.1f} h ago"
