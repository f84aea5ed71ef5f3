"""The organiser's routes: the dashboard, people (add, revoke, reissue a link) and rounds.

``GET /admin`` (the dashboard: :mod:`.dashboard`), ``GET /api/admin`` (the same as JSON),
``GET /progress`` (redirects to the dashboard), ``GET /api/progress`` (progress and agreement
as JSON), ``POST /admin/person`` (``name``, ``role``: a new link, shown once),
``POST /admin/revoke`` and ``POST /admin/reissue`` (``name``), ``POST /admin/round``
(``batch``: plan, draw and load the next round, :mod:`.rounds`; ``round``, optional: the
number of the round the button loads, so that a second press, or the same form sent from two
windows, loads none; one round is loaded at a time; ``GET /admin?batch=N`` previews a round of
N). The form posts answer with a redirect to the dashboard, which shows their message once (a
reload does not post again), also where the form is refused (a name on the list already, the
organiser's own link, no round to load). Judging pauses while a round is loaded (a judgment
sent meanwhile is answered 503, "send it again").
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict

from starlette.exceptions import HTTPException
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Route

from ..errors import IrsampleError
from . import dashboard, pages
from .web import digits, integer


def routes(session, writer, live, authorised) -> list[Route]:
    """The organiser's routes; ``authorised(request, post=, role=)`` checks token and CSRF."""

    #: organiser id -> (message, link, refused) of their last form post, shown once by the next
    #: GET /admin (post-redirect-get: reloading the page does not post the form again)
    flashes: dict[int, tuple[str, str, bool]] = {}
    #: one round loaded at a time: a second press of the button waits, then finds it loaded
    loading = asyncio.Lock()

    def organiser(request, post=False):
        return authorised(request, post=post, role="organiser")

    def after_post(who, message: str, link: str = "", *, refused: bool = False):
        flashes[who.id] = (message, link, refused)
        return RedirectResponse("/admin", status_code=303)

    async def admin_get(request):
        who, _ = await organiser(request)
        batch = request.query_params.get("batch")
        if batch is not None and live is not None:  # preview a next round of that size
            if not (digits(batch) and 1 <= int(batch) <= 10**7):
                raise HTTPException(400, f"batch must be a number of judgments, not {batch!r}"
                                    [:200])
            live.batch = int(batch)
        if live is not None:
            live.poke()
        message, link, refused = flashes.pop(who.id, ("", "", False))
        return HTMLResponse(pages.admin_page(session, who, live, message=message, link=link,
                                             refused=refused,
                                             base=str(request.base_url).rstrip("/")))

    async def api_admin(request):
        await organiser(request)
        if live is not None:
            live.poke()
        con = session.store.db
        result = None if live is None else live.result
        return JSONResponse({
            "progress": dashboard.progress(con),
            "people": [asdict(p) for p in dashboard.pace(con)],
            "rounds": session.store.rounds(),
            "computing": bool(live and live.computing),
            "estimates": None if result is None else {
                "basis": None if result.basis is None else {
                    "round": result.basis.round, "design": result.basis.design,
                    "format": result.basis.format, "note": result.basis.note},
                "judgments": result.judgments, "used": result.used, "at": result.at,
                "error": result.error, "commands": result.commands,
                "runs": [{"run": run, **{m: asdict(c) for m, c in cells.items()}}
                         for run, cells in result.rows]},
        })

    async def progress_get(request):
        await organiser(request)
        return RedirectResponse("/admin", status_code=303)

    async def api_progress(request):
        await organiser(request)
        found = dashboard.agreement(session.store.db, rel_level=session.rel_level,
                                    seed=session.seed)
        found["pairs"] = [{k: (v.__dict__ if hasattr(v, "__dict__") else v)
                           for k, v in p.items()} for p in found["pairs"]]
        found["alpha"] = [a.__dict__ for a in found["alpha"]]
        return JSONResponse({"progress": dashboard.progress(session.store.db),
                             "agreement": found})

    def refused(who, message: str) -> RedirectResponse:
        """A form the dashboard cannot carry out: back to it, with the reason shown once."""
        return after_post(who, message, refused=True)

    def name_of(fields) -> str:
        name = fields.get("name")
        if not isinstance(name, str) or not name:
            raise HTTPException(400, "missing field 'name'")
        return name

    async def add_person(request):
        who, fields = await organiser(request, post=True)
        name, role = name_of(fields), fields.get("role", "assessor")
        if name in session.store.people():
            return refused(who, f"Nobody added: {name} is on the list already (its New link "
                           "button gives them a new link).")
        try:
            token = session.store.add_person(name, role)
        except IrsampleError as exc:
            return refused(who, f"Nobody added: {getattr(exc, 'message', exc)}.")
        return after_post(who, f"Added {role} {name}; their link (shown once):",
                          f"/login?token={token}")

    async def revoke(request):
        who, fields = await organiser(request, post=True)
        name = name_of(fields)
        if name == who.name:
            return refused(who, "You cannot revoke your own link.")
        try:
            session.store.revoke(name)
        except IrsampleError as exc:
            return refused(who, f"Nothing revoked: {getattr(exc, 'message', exc)}.")
        return after_post(who, f"Revoked {name}'s link (their judgments stay).")

    async def reissue(request):
        who, fields = await organiser(request, post=True)
        name = name_of(fields)
        if name == who.name:  # the page would lose them: its link is shown once, to them
            return refused(who, "You cannot give yourself a new link here (this page would "
                           "stop working at once); `irsample assess reissue` does it.")
        try:
            token = session.store.reissue(name)
        except IrsampleError as exc:
            return refused(who, f"No new link: {getattr(exc, 'message', exc)}.")
        return after_post(who, f"New link for {name} (the old one no longer works; shown "
                          "once):", f"/login?token={token}")

    async def next_round(request):
        who, fields = await organiser(request, post=True)
        batch = integer(fields, "batch")
        if batch < 1:
            raise HTTPException(400, "batch must be at least 1")
        meant = integer(fields, "round") if "round" in fields else None
        async with loading:  # a second press waits here, then finds its round loaded
            number = len(session.store.rounds()) + 1
            if meant is not None and meant != number:
                return refused(who, f"Round {meant} is loaded already: no other round was "
                               "loaded (the button was pressed twice, or in two windows).")
            try:
                number, plan = await load_next_round(session, writer, live, batch)
            except IrsampleError as exc:
                return refused(who, f"No round loaded: {getattr(exc, 'message', exc)}")
        why = f" ({plan.why()})" if plan.why() else ""
        return after_post(who, f"Round {number} loaded: {plan.planned} judgments planned{why}.")

    return [
        Route("/admin", admin_get, methods=["GET"]),
        Route("/api/admin", api_admin),
        Route("/progress", progress_get),
        Route("/api/progress", api_progress),
        Route("/admin/person", add_person, methods=["POST"]),
        Route("/admin/revoke", revoke, methods=["POST"]),
        Route("/admin/reissue", reissue, methods=["POST"]),
        Route("/admin/round", next_round, methods=["POST"]),
    ]


async def load_next_round(session, writer, live, batch: int) -> tuple[int, object]:
    """Pause judging, wait for the judgments in flight, plan ``batch`` more judgments from
    every judgment so far, draw them, check their texts, load them, resume (:mod:`.rounds`);
    the new round's number and its plan (its ``planned`` judgments: fewer where the pool has
    fewer left, more where judging in rounds keeps cells' floors or judges topics whole; its
    ``why()`` says so)."""
    from ..errors import InputError
    from ..stats.random import derived_seed
    from .documents import read_documents
    from .export import export
    from .rounds import draw_round, load_round, plan_round, round_folder

    if session.adaptive is not None:
        raise InputError("rounds need the design or topic order (an adaptive order ranks one "
                         "round's documents)")
    if live is None or not live.runs:
        raise InputError("planning a round needs the design's runs (serve --runs)")
    loop = asyncio.get_running_loop()
    store = session.store
    session.paused = True
    try:
        await writer.idle()
        rounds = store.rounds()
        number = len(rounds) + 1
        qrels = export(store.db).qrels  # here: the store's connection is this thread's
        plan = await loop.run_in_executor(
            live.thread, lambda: plan_round(rounds, qrels, live.runs, batch=batch,
                                            level=live.ci, rel_level=session.rel_level))
        if plan.planned < 1:
            raise InputError("nothing is left to judge in the pool")
        record, path = await loop.run_in_executor(
            live.thread, draw_round, plan, derived_seed(session.seed, "draw", number),
            round_folder(store.path, number))
        wanted = {record.docno[i] for i in range(len(record.docno)) if record.selected[i]}
        texts = await loop.run_in_executor(live.thread, read_documents, session.sources[0],
                                           wanted - set(session.documents))
        lost = wanted - set(session.documents) - set(texts)
        if lost:
            raise InputError(f"{len(lost)} documents of the new round are not in the documents "
                             f"(e.g. {sorted(lost)[0]!r})", str(session.sources[0]))
        session.documents.update(texts)
        load_round(store, record, path, order=session.order, overlap=session.overlap,
                   seed=session.seed)
        session.read_texts()
    finally:
        session.paused = False
    return number, plan
