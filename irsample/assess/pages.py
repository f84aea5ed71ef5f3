"""Server-rendered pages (Jinja2 templates with autoescaping) and query-term highlighting.

Every value reaches the page escaped: document text goes through :func:`highlight`, which
escapes each piece and adds only ``<mark>`` elements of its own; templates autoescape the rest.
Assessors' pages are blind: they show the topic, the document and the assessor's own counts,
never a stratum, rank, run, overlap flag or another assessor's statistics.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from . import dashboard, readout
from .session import grade_labels
from .topics import s_stem
from .web import digits

HERE = Path(__file__).parent
ENV = Environment(loader=FileSystemLoader(HERE / "templates"),
                  autoescape=select_autoescape(default=True, default_for_string=True))
_WORD = re.compile(r"(\w+)")


def plural(n: int, word: str) -> str:
    """``1 judgment``, ``2 judgments``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def first_clause(reason: str, limit: int = 90) -> str:
    """The start of a reliability reason, up to its first clause's end (``;``, `` (`` or
    ``:``) or ``limit`` characters: the visible part of a folded reason."""
    cut = min((i for i in (reason.find("; "), reason.find(" ("), reason.find(": "))
               if i >= 20), default=len(reason))
    cut = min(cut, limit)
    return reason if cut >= len(reason) else reason[:cut].rstrip(" ,") + "\u2026"


def duration(seconds: float) -> str:
    """``10 minutes``, ``1 minute``, ``90 seconds``, ``2.5 hours``: a lease's length."""
    if seconds < 120 and seconds != 60:
        return plural(round(seconds), "second")
    if seconds < 7200:
        minutes = seconds / 60
        return plural(round(minutes), "minute") if minutes == round(minutes) or minutes >= 10 \
            else f"{minutes:.1f} minutes"
    return f"{seconds / 3600:g} hours"


ENV.filters["plural"] = plural
ENV.filters["duration"] = duration
ENV.filters["first_clause"] = first_clause
ENV.filters["age"] = dashboard.age


def highlight(text: str, terms) -> Markup:
    """``text`` escaped, with words whose S-stem (:func:`~.topics.s_stem`) is a query term's
    wrapped in ``<mark>``."""
    stems = {s_stem(t) for t in terms}
    out = []
    for k, piece in enumerate(_WORD.split(text)):
        hit = k % 2 == 1 and s_stem(piece) in stems
        out.append(f"<mark>{escape(piece)}</mark>" if hit else str(escape(piece)))
    return Markup("".join(out))


def _fmt(result) -> str:
    if result.estimate != result.estimate:  # NaN
        return "n/a"
    if result.low != result.low:
        return f"{result.estimate:.3f}"
    return f"{result.estimate:.3f} [{result.low:.3f}, {result.high:.3f}]"


def _known(con, assessor: int, item_id: int) -> bool:
    """Whether the assessor was handed the item: they judged it (now or before) or skipped it
    (only then does a message name its docno)."""
    return con.execute("SELECT 1 FROM judgments WHERE item=? AND assessor=? UNION ALL SELECT 1 "
                       "FROM skips WHERE item=? AND assessor=? LIMIT 1",
                       (item_id, assessor, item_id, assessor)).fetchone() is not None


def _flash(session, assessor, params, labels, shown=None) -> tuple[str, tuple | None]:
    """The message after an action (from the redirect's query) and, after an undo, the
    withdrawn (grade, note) to show again. An undo's message and pre-fill are for the document
    ``shown`` only (a page revisited after the assessor moved on shows another one); a docno
    is named only for a document the assessor holds, judged or skipped."""
    con = session.store.db
    done, item_id = params.get("done", ""), params.get("item", "")
    item = session.store.item(int(item_id)) if digits(item_id) else None
    if item is not None and not (shown is not None and shown.id == item.id
                                 or _known(con, assessor.id, item.id)):
        item = None
    here = item is not None and shown is not None and shown.id == item.id
    docno = item.docno if item else "the document"
    own = readout.own_judgment(con, assessor.id, item.id) if item else None

    def graded(g):
        return f"{g} ({labels.get(g, 'grade')})"

    if done in ("saved", "revised", "unchanged") and own is not None:
        text = {"saved": f"Saved: {docno} judged {graded(own[0])}.",
                "revised": f"Revised: {docno} is now {graded(own[0])}; the earlier grade is "
                           "kept in the history.",
                "unchanged": f"Already saved: {docno} {graded(own[0])}."}[done]
        return text, None
    if done == "skipped":
        return f"Skipped {docno}: it comes back after the other documents.", None
    if done == "undone" and here and own is None:
        row = con.execute("SELECT grade, note FROM judgments WHERE item=? AND assessor=? AND "
                          "withdrawn IS NOT NULL ORDER BY id DESC LIMIT 1",
                          (item.id, assessor.id)).fetchone()
        if row is not None:
            with_note = " and your note (below)" if row[1] else ""
            return (f"Withdrawn: your {graded(row[0])} for {docno}{with_note}. Judge it "
                    "again.", tuple(row))
    undone = params.get("undone", "")
    if digits(undone) and here and own is not None:
        return (f"Withdrawn: your revision to {graded(int(undone))}; {docno} is back "
                f"to {graded(own[0])}.", None)
    if done == "nothing":
        return "Nothing to undo.", None
    return "", None


def judge_page(session, assessor, item, params, *, revising: bool = False) -> str:
    from .topics import query_terms

    con = session.store.db
    labels = grade_labels(session.grades)
    message, withdrawn = _flash(session, assessor, params, labels, item)
    done, total = readout.totals(con)
    context = dict(assessor=assessor, item=item, message=message, grades=labels,
                   mine=readout.judged_by(con, assessor.id), all_done=done, all_total=total,
                   revising=revising, lease=session.store.lease_seconds, was=None, note="")
    if withdrawn is not None and item is not None:
        context.update(was=withdrawn[0], note=withdrawn[1])
    if revising:
        own = readout.own_judgment(con, assessor.id, item.id)
        context.update(was=own[0], note=own[1])
    if item is None:  # documents still waiting for a judgment (held by others or coming back)
        context["open_left"] = con.execute("SELECT count(*) FROM items WHERE active=1 AND "
                                           "judged < required").fetchone()[0]
    else:
        topic = session.topics[item.topic]
        context.update(topic=topic, ticket=session.store.ticket(assessor.id, item.id),
                       text=highlight(session.documents[item.docno], query_terms(topic)))
    return ENV.get_template("judge.html").render(**context)


def mine_page(session, assessor) -> str:
    rows = readout.mine(session.store.db, assessor.id)
    return ENV.get_template("mine.html").render(
        assessor=assessor, rows=rows, grades=grade_labels(session.grades),
        when=lambda t: time.strftime("%Y-%m-%d %H:%M", time.localtime(t)))


ALPHA_LABELS = ("grades as categories (nominal)", "grades as ranks (ordinal)",
                "relevant or not (nominal)")


def admin_page(session, organiser, live, *, message: str = "", link: str = "", base: str = "",
               refused: bool = False, level: float = 0.95, resamples: int = 2000) -> str:
    con = session.store.db
    rows = dashboard.progress(con)
    total = {k: sum(r[k] for r in rows) for k in ("items", "judged", "judgments", "required")}
    agreement = dashboard.agreement(con, rel_level=session.rel_level, seed=session.seed,
                                    level=level, n_resamples=resamples)
    preview = None if live is None else live.preview
    if isinstance(preview, str) and live.stamp is not None and live.stamp[-1] != live.batch:
        preview = None  # an answer for another batch: the page says it is planning this one
    plan = None if isinstance(preview, str) or preview is None else preview
    result = None if live is None else live.result
    return ENV.get_template("admin.html").render(
        assessor=organiser, rows=rows, strata=dashboard.by_stratum(rows), total=total,
        agreement=agreement, alphas=list(zip(agreement["alpha"], ALPHA_LABELS)), fmt=_fmt,
        level_pct=f"{level * 100:g}", resamples=resamples, seed=session.seed,
        people=dashboard.pace(con), live=live, result=result, preview=preview, plan=plan,
        verdict=dashboard.verdict(result, plan),
        rounds=session.store.rounds(), message=message, link=(base + link) if link else "",
        kept=dict(con.execute("SELECT round, count(*) FROM items WHERE active=1 GROUP BY "
                              "round").fetchall()),
        judged_in=dict(con.execute("SELECT round, sum(judged > 0) FROM items WHERE active=1 "
                                   "GROUP BY round").fetchall()),
        refused=refused,
        now=time.time())


#: the heading of an error page, in words (the status number stays in its title)
STATUS_WORDS = {400: "Not understood", 401: "Sign-in needed", 403: "Not allowed",
                404: "Not found", 409: "Not saved", 503: "Not saved: try again"}


def message_page(status: int, message: str, path: str = "") -> str:
    """An error page with the app's header, the reason in words, and the way back: to the
    dashboard from the organiser's pages, to judging after a refused or failed judgment."""
    if path.startswith("/admin"):
        back = ("/admin", "Back to the dashboard")
    elif status in (409, 503) or (status == 400 and path.startswith(("/judge", "/skip"))):
        back = ("/judge", "Go on judging")
    else:
        back = None
    return ENV.get_template("message.html").render(
        status=status, heading=STATUS_WORDS.get(status, f"Error {status}"), message=message,
        back=back)
