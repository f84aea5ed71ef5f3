"""Server-rendered pages (Jinja2 templates with autoescaping) and query-term highlighting.

Every value reaches the page escaped: document text goes through :func:`highlight`, which
escapes each piece and adds only ``<mark>`` elements of its own; templates autoescape the rest.
"""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from .session import grade_labels
from .topics import s_stem

HERE = Path(__file__).parent
ENV = Environment(loader=FileSystemLoader(HERE / "templates"),
                  autoescape=select_autoescape(default=True, default_for_string=True))
_WORD = re.compile(r"(\w+)")


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


def judge_page(session, assessor, item, message: str = "") -> str:
    from .topics import query_terms

    store = session.store
    counts = store.counts()
    context = dict(assessor=assessor, item=item, message=message,
                   mine=store.judged_by(assessor.id),
                   all_done=sum(r[3] for r in counts), all_total=sum(r[2] for r in counts),
                   grades=grade_labels(session.grades))
    if item is not None:
        topic = session.topics[item.topic]
        done, total = store.topic_progress(item.topic)
        context.update(topic=topic, topic_done=done, topic_total=total,
                       text=highlight(session.documents[item.docno], query_terms(topic)))
    return ENV.get_template("judge.html").render(**context)


ALPHA_LABELS = ("grades as categories (nominal)", "grades as ranks (ordinal)",
                "relevant or not (nominal)")


def progress_page(session, assessor, *, level: float = 0.95, resamples: int = 2000) -> str:
    rows = session.progress()
    total = {k: sum(r[k] for r in rows) for k in ("items", "judged", "judgments", "required")}
    names = session.store.assessors()
    counts = dict(session.store.db.execute(
        "SELECT assessor, count(*) FROM judgments GROUP BY assessor").fetchall())
    agreement = session.agreement(level=level, n_resamples=resamples)
    return ENV.get_template("progress.html").render(
        assessor=assessor, rows=rows, total=total, agreement=agreement,
        assessors=[(n, counts.get(i, 0)) for i, n in names.items()],
        alphas=list(zip(agreement["alpha"], ALPHA_LABELS)), fmt=_fmt,
        level_pct=f"{level * 100:g}", resamples=resamples, seed=session.seed)


def message_page(status: int, message: str) -> str:
    return ENV.get_template("message.html").render(status=status, message=message)
