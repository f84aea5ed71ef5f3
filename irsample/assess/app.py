"""The web app (Starlette): pages for people, a small JSON API for programs, ``/healthz``.

Authentication: ``/login?token=T`` (the link ``irsample assess add-assessor`` prints) sets an
HttpOnly, SameSite=Strict cookie and redirects to ``/judge``; programs may send
``Authorization: Bearer T`` instead. Without a token every route but ``/healthz`` answers 401,
with an unknown one 403. Every POST needs the assessor's CSRF token (form field ``csrf`` or
header ``X-CSRF-Token``), else 403.

Routes: ``GET /judge`` (the current document), ``POST /judge`` (``item``, ``grade``, ``note``),
``POST /skip`` (``item``), ``POST /undo``, ``GET /progress``; JSON: ``GET /api/next``,
``POST /api/judge`` (``{"item", "grade", "note"}``), ``POST /api/skip``, ``POST /api/undo``,
``GET /api/progress``. A judgment is answered only after it is committed. Malformed requests
get a 4xx status with a message (plain text, or JSON ``{"error": ...}`` on ``/api``).
"""

from __future__ import annotations

import json
import sqlite3
from urllib.parse import parse_qs

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

from . import pages
from .session import Session
from .writer import GroupCommit

COOKIE = "irsample_assess"
MAX_BODY = 64 * 1024
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; "
                               "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
STATIC = {"assess.js": "text/javascript", "assess.css": "text/css"}


def _assessor(session: Session, request: Request):
    token = request.cookies.get(COOKIE)
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        token = auth[7:].strip()
    if not token:
        raise HTTPException(401, "no token: open the personal link 'irsample assess "
                                 "add-assessor' printed")
    assessor = session.store.assessor_by_token(token)
    if assessor is None:
        raise HTTPException(403, "unknown token")
    return assessor


async def _fields(request: Request) -> dict:
    """The POST body as a dict: JSON on /api routes, else a urlencoded form (one value each)."""
    body = await request.body()
    if len(body) > MAX_BODY:
        raise HTTPException(413, f"request body over {MAX_BODY} bytes")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise HTTPException(400, "the request body is not UTF-8") from None
    if request.url.path.startswith("/api/"):
        if not text.strip():
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            raise HTTPException(400, "the request body is not JSON") from None
        if not isinstance(data, dict):
            raise HTTPException(400, "the request body must be a JSON object")
        return data
    try:
        form = parse_qs(text, keep_blank_values=True, strict_parsing=bool(text), max_num_fields=20)
    except ValueError as exc:
        raise HTTPException(400, f"malformed form data ({exc})") from None
    repeated = [k for k, v in form.items() if len(v) > 1]
    if repeated:
        raise HTTPException(400, f"field {repeated[0]!r} given more than once")
    return {k: v[0] for k, v in form.items()}


def _integer(fields: dict, name: str) -> int:
    value = fields.get(name)
    if isinstance(value, bool) or value is None:
        raise HTTPException(400, f"missing or invalid field {name!r}: an integer")
    if isinstance(value, int) and abs(value) < 2**62:
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 19:
        return int(value)
    raise HTTPException(400, f"field {name!r} must be an integer, not {value!r}"[:200])


def _note(fields: dict) -> str:
    note = fields.get("note", "")
    if not isinstance(note, str):
        raise HTTPException(400, "field 'note' must be a string")
    return note.replace("\r\n", "\n").strip()


def create_app(session: Session) -> Starlette:
    """The Starlette app serving ``session``; judgments go through a group commit."""
    writer = GroupCommit(session.store)

    async def authorised(request: Request, *, post: bool = False):
        assessor = _assessor(session, request)
        fields = {}
        if post:
            fields = await _fields(request)
            csrf = request.headers.get("x-csrf-token") or fields.get("csrf")
            if not session.store.csrf_ok(assessor, csrf):
                raise HTTPException(403, "missing or wrong CSRF token")
        return assessor, fields

    async def act(assessor, fields, what: str) -> str:
        """Judge or skip from the fields (answered once committed); returns the status."""
        item = _integer(fields, "item")
        try:
            if what == "skip":
                await session.skip_async(writer, assessor.id, item)
                return "skipped"
            return await session.judge_async(writer, assessor.id, item,
                                             _integer(fields, "grade"), _note(fields))
        except KeyError as exc:
            raise HTTPException(404, exc.args[0]) from None
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        except sqlite3.Error as exc:  # e.g. locked by another program for over 10 s
            raise HTTPException(503, f"the judgment was not saved ({exc}); send it again") from None

    async def healthz(request):
        return PlainTextResponse("ok\n")

    async def login(request):
        token = request.query_params.get("token", "")
        if not token:
            raise HTTPException(401, "no token in the link")
        if session.store.assessor_by_token(token) is None:
            raise HTTPException(403, "unknown token")
        response = RedirectResponse("/judge", status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    async def home(request):
        _assessor(session, request)
        return RedirectResponse("/judge", status_code=303)

    async def judge_get(request):
        assessor, _ = await authorised(request)
        item = session.next_item(assessor.id)
        message = {"saved": "Saved.", "updated": "Updated.", "skipped": "Skipped.",
                   "undone": "Undone: judge it again.", "unchanged": "Already saved.",
                   "nothing": "Nothing to undo."}.get(request.query_params.get("done", ""), "")
        return HTMLResponse(pages.judge_page(session, assessor, item, message))

    async def judge_post(request):
        assessor, fields = await authorised(request, post=True)
        status = await act(assessor, fields, "judge")
        return RedirectResponse(f"/judge?done={status}", status_code=303)

    async def skip_post(request):
        assessor, fields = await authorised(request, post=True)
        await act(assessor, fields, "skip")
        return RedirectResponse("/judge?done=skipped", status_code=303)

    async def undo_post(request):
        assessor, _ = await authorised(request, post=True)
        item = await session.undo_async(writer, assessor.id)
        return RedirectResponse(f"/judge?done={'undone' if item else 'nothing'}", status_code=303)

    async def progress_get(request):
        assessor, _ = await authorised(request)
        return HTMLResponse(pages.progress_page(session, assessor))

    def item_json(item):
        if item is None:
            return None
        return {"item": item.id, "topic": item.topic, "docno": item.docno,
                "stratum": item.stratum, "overlap": item.required > 1}

    async def api_next(request):
        assessor, _ = await authorised(request)
        return JSONResponse({"assessor": assessor.name, "csrf": assessor.csrf,
                             "next": item_json(session.next_item(assessor.id)),
                             "grades": list(session.grades)})

    async def api_judge(request):
        assessor, fields = await authorised(request, post=True)
        return JSONResponse(
            {"status": await act(assessor, fields, "judge"), "item": fields["item"]}
        )

    async def api_skip(request):
        assessor, fields = await authorised(request, post=True)
        return JSONResponse({"status": await act(assessor, fields, "skip"), "item": fields["item"]})

    async def api_undo(request):
        assessor, _ = await authorised(request, post=True)
        return JSONResponse({"undone": item_json(await session.undo_async(writer, assessor.id))})

    async def api_progress(request):
        await authorised(request)
        agreement = session.agreement()
        agreement["pairs"] = [{k: (v.__dict__ if hasattr(v, "__dict__") else v)
                               for k, v in p.items()} for p in agreement["pairs"]]
        agreement["alpha"] = [a.__dict__ for a in agreement["alpha"]]
        return JSONResponse({"progress": session.progress(), "agreement": agreement})

    async def static(request):
        await authorised(request)
        name = request.path_params["name"]
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
            return HTMLResponse(pages.message_page(exc.status_code, exc.detail),
                                exc.status_code, headers=headers)
        return PlainTextResponse(f"{exc.detail}\n", exc.status_code, headers=headers)

    routes = [
        Route("/healthz", healthz),
        Route("/login", login),
        Route("/", home),
        Route("/judge", judge_get, methods=["GET"]),
        Route("/judge", judge_post, methods=["POST"]),
        Route("/skip", skip_post, methods=["POST"]),
        Route("/undo", undo_post, methods=["POST"]),
        Route("/progress", progress_get),
        Route("/api/next", api_next),
        Route("/api/judge", api_judge, methods=["POST"]),
        Route("/api/skip", api_skip, methods=["POST"]),
        Route("/api/undo", api_undo, methods=["POST"]),
        Route("/api/progress", api_progress),
        Route("/static/{name}", static),
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
