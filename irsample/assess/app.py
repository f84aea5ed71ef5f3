"""The web app (Starlette): pages for assessors and organisers, a small JSON API for programs,
``/healthz``, ``/favicon.ico`` and ``/static/assess.css`` (the only routes without a token:
the error pages of a bad or revoked link are styled too).

Authentication: ``/login?token=T`` (the link ``irsample assess add-assessor`` or
``add-organiser`` prints) sets an HttpOnly, SameSite=Strict cookie and redirects to ``/judge``
(assessors) or ``/admin`` (organisers); programs may send ``Authorization: Bearer T`` instead.
Without a token every other route answers 401, with an unknown or revoked one 403, and with
the other role's token 403. Every POST needs the person's CSRF token (form field ``csrf`` or
header ``X-CSRF-Token``), else 403.

Assessor routes (blind: no stratum, rank, run, overlap flag or other assessor's statistics):
``GET /judge`` (the current document; ``?item=ID`` one of their own judgments to revise),
``POST /judge`` (``item``, ``grade``, ``note``), ``POST /skip``, ``POST /undo``, ``GET /mine``;
JSON: ``GET /api/next``, ``POST /api/judge``, ``POST /api/skip``, ``POST /api/undo``,
``POST /api/renew`` (``{"item"}``: the judging page renews its lease while open),
``GET /api/mine``. A judgment or skip of a document not handed to the assessor is answered
409, one message for all such documents (:mod:`.assign`); the page's and ``/api/next``'s
``ticket`` lets a grade sent after a restart through while nobody else holds the document.
Organiser routes: :mod:`.admin`. A judgment is answered only after it is committed.
Malformed requests get a 4xx status with a message (plain text, or JSON ``{"error": ...}`` on
``/api``).
"""

from __future__ import annotations

import sqlite3
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
)
from starlette.routing import Route

from . import admin, pages, readout
from .assign import Conflict
from .session import Paused, Session
from .web import COOKIE, digits, fields_of, integer, note_of, person
from .writer import GroupCommit

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; "
                               "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
STATIC = {"assess.js": "text/javascript", "assess.css": "text/css",
          "favicon.ico": "image/x-icon"}
#: served without a token (nothing secret in them): pages for a bad or revoked link use them
PUBLIC = {"assess.css", "favicon.ico"}


def create_app(session: Session, live=None) -> Starlette:
    """The Starlette app serving ``session``; judgments go through a group commit; ``live``
    (:class:`~.dashboard.Live`) computes the organiser's estimates."""
    writer = GroupCommit(session.store)

    async def authorised(request: Request, *, post: bool = False, role: str | None = "assessor"):
        who = person(session, request, role)
        fields = {}
        if post:
            fields = await fields_of(request)
            csrf = request.headers.get("x-csrf-token") or fields.get("csrf")
            if not session.store.csrf_ok(who, csrf):
                raise HTTPException(403, "missing or wrong CSRF token")
        return who, fields

    async def act(assessor, fields, what: str) -> str:
        """Judge or skip from the fields (answered once committed); returns the status."""
        item, ticket = integer(fields, "item"), fields.get("ticket")
        try:
            if what == "skip":
                await session.skip_async(writer, assessor.id, item, ticket)
                return "skipped"
            return await session.judge_async(writer, assessor.id, item,
                                             integer(fields, "grade"), note_of(fields), ticket)
        except KeyError as exc:
            raise HTTPException(404, exc.args[0]) from None
        except Conflict as exc:
            raise HTTPException(409, f"not saved: {exc}") from None
        except (ValueError, Paused) as exc:
            raise HTTPException(503 if isinstance(exc, Paused) else 400, str(exc)) from None
        except sqlite3.Error as exc:  # e.g. locked by another program for over 10 s
            raise HTTPException(503, f"the judgment was not saved ({exc}); send it again") from None

    async def healthz(request):
        return PlainTextResponse("ok\n")

    async def favicon(request):
        return FileResponse(pages.HERE / "static" / "favicon.ico", media_type="image/x-icon",
                            headers={"Cache-Control": "max-age=86400"})

    async def login(request):
        token = request.query_params.get("token", "")
        if not token:
            raise HTTPException(401, "no token in the link")
        who = session.store.assessor_by_token(token)
        if who is None:
            raise HTTPException(403, "unknown token")
        if who.revoked is not None:
            raise HTTPException(403, "this link was revoked: ask the organiser for a new one")
        response = RedirectResponse("/admin" if who.organiser else "/judge", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    async def home(request):
        who = person(session, request)
        return RedirectResponse("/admin" if who.organiser else "/judge", status_code=303)

    async def judge_get(request):
        who = person(session, request)
        if who.organiser:
            return RedirectResponse("/admin", status_code=303)
        params = request.query_params
        for name in ("item", "undone"):
            if name in params and not digits(params[name]):
                raise HTTPException(400, f"{name!r} must be a number (ASCII digits), not "
                                         f"{params[name]!r}"[:200])
        revising = None
        if "item" in params and params.get("done") is None:
            item = session.store.item(int(params["item"]))
            if item is not None and readout.own_judgment(session.store.db, who.id, item.id):
                revising = item
        item = revising or session.next_item(who.id)
        return HTMLResponse(pages.judge_page(session, who, item, params, revising=bool(revising)))

    def done(status: str, item: int, **extra) -> RedirectResponse:
        query = urlencode({"done": status, "item": item, **extra})
        return RedirectResponse(f"/judge?{query}", status_code=303)

    async def judge_post(request):
        who, fields = await authorised(request, post=True)
        status = await act(who, fields, "judge")
        return done(status, integer(fields, "item"))

    async def skip_post(request):
        who, fields = await authorised(request, post=True)
        await act(who, fields, "skip")
        return done("skipped", integer(fields, "item"))

    async def undo_post(request):
        who, _ = await authorised(request, post=True)
        withdrawn = await session.undo_async(writer, who.id)
        if withdrawn is None:
            return RedirectResponse("/judge?done=nothing", status_code=303)
        if withdrawn.restored is not None:  # a revision undone: back to the earlier grade
            return RedirectResponse(f"/judge?{urlencode({'item': withdrawn.item})}&undone="
                                    f"{withdrawn.grade}", status_code=303)
        return done("undone", withdrawn.item)

    async def mine_get(request):
        who, _ = await authorised(request)
        return HTMLResponse(pages.mine_page(session, who))

    def item_json(item, who=None):
        if item is None:
            return None
        out = {"item": item.id, "topic": item.topic, "docno": item.docno}
        if who is not None:  # sent back with a judgment, it survives a restart of the server
            out["ticket"] = session.store.ticket(who.id, item.id)
        return out

    async def api_next(request):
        who, _ = await authorised(request)
        return JSONResponse({"assessor": who.name, "csrf": who.csrf,
                             "next": item_json(session.next_item(who.id), who),
                             "grades": list(session.grades),
                             "lease_seconds": session.store.lease_seconds})

    async def api_judge(request):
        who, fields = await authorised(request, post=True)
        return JSONResponse({"status": await act(who, fields, "judge"),
                             "item": integer(fields, "item")})

    async def api_skip(request):
        who, fields = await authorised(request, post=True)
        return JSONResponse({"status": await act(who, fields, "skip"),
                             "item": integer(fields, "item")})

    async def api_undo(request):
        who, _ = await authorised(request, post=True)
        w = await session.undo_async(writer, who.id)
        item = None if w is None else session.store.item(w.item)
        return JSONResponse({"undone": None if w is None else {
            **item_json(item), "grade": w.grade, "note": w.note, "restored": w.restored}})

    async def api_renew(request):
        who, fields = await authorised(request, post=True)
        item = integer(fields, "item")
        try:
            status = session.renew(who.id, item, fields.get("ticket"))
        except KeyError as exc:
            raise HTTPException(404, exc.args[0]) from None
        except Conflict as exc:
            raise HTTPException(409, str(exc)) from None
        if status == "judged":  # a revision needs no lease, and none was taken
            return JSONResponse({"status": "judged", "item": item, "lease_seconds": None})
        return JSONResponse({"status": "renewed", "item": item,
                             "lease_seconds": session.store.lease_seconds})

    async def api_mine(request):
        who, _ = await authorised(request)
        return JSONResponse({"judgments": [m.__dict__ for m in readout.mine(session.store.db,
                                                                            who.id)]})

    async def static(request):
        name = request.path_params["name"]
        if name not in PUBLIC:  # the stylesheet styles the error pages of bad links too
            person(session, request)
        if name not in STATIC:
            raise HTTPException(404, "no such file")
        return FileResponse(pages.HERE / "static" / name, media_type=STATIC[name])

    async def http_error(request, exc: HTTPException):
        headers = dict(HEADERS)
        if exc.status_code == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, exc.status_code, headers=headers)
        if "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(pages.message_page(exc.status_code, exc.detail,
                                                   request.url.path),
                                exc.status_code, headers=headers)
        return PlainTextResponse(f"{exc.detail}\n", exc.status_code, headers=headers)

    routes = [
        Route("/healthz", healthz),
        Route("/favicon.ico", favicon),
        Route("/login", login),
        Route("/", home),
        Route("/judge", judge_get, methods=["GET"]),
        Route("/judge", judge_post, methods=["POST"]),
        Route("/skip", skip_post, methods=["POST"]),
        Route("/undo", undo_post, methods=["POST"]),
        Route("/mine", mine_get),
        Route("/api/next", api_next),
        Route("/api/judge", api_judge, methods=["POST"]),
        Route("/api/skip", api_skip, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]),
        Route("/api/renew", api_renew, methods=["POST"]),
        Route("/api/mine", api_mine),
        Route("/static/{name}", static),
        *admin.routes(session, writer, live, authorised),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return SecurityHeaders(app)


class SecurityHeaders:
    """ASGI middleware adding :data:`HEADERS` to every HTTP response that lacks them."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()
                         if k.lower().encode() not in present]
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        await self.app(scope, receive, send_with_headers)
