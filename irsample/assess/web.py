"""Reading requests: who sent them (token, role) and their fields (JSON or a form).

Shared by the assessors' routes (:mod:`.app`) and the organiser's (:mod:`.admin`).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from starlette.exceptions import HTTPException
from starlette.requests import Request

COOKIE = "irsample_assess"
MAX_BODY = 64 * 1024


def person(session, request: Request, role: str | None = None):
    """The person of the request's token (cookie or bearer), refused unless ``role``."""
    token = request.cookies.get(COOKIE)
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        token = auth[7:].strip()
    if not token:
        raise HTTPException(401, "no token: open the personal link 'irsample assess "
                                 "add-assessor' printed")
    who = session.store.assessor_by_token(token)
    if who is None:
        raise HTTPException(403, "unknown token")
    if who.revoked is not None:
        raise HTTPException(403, "this link was revoked: ask the organiser for a new one")
    if role is not None and who.role != role:
        raise HTTPException(403, "for organisers only" if role == "organiser" else
                            "organisers do not judge: the dashboard is at /admin")
    return who


async def fields_of(request: Request) -> dict:
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


def digits(text: str) -> bool:
    """ASCII digits only (not "٣"), at most 18 of them (a number SQLite's integers hold, not
    2**63)."""
    return 0 < len(text) <= 18 and text.isascii() and text.isdigit()


def integer(fields: dict, name: str) -> int:
    value = fields.get(name)
    if isinstance(value, bool) or value is None:
        raise HTTPException(400, f"missing or invalid field {name!r}: an integer")
    if isinstance(value, int) and abs(value) < 2**62:
        return value
    if isinstance(value, str):
        text = value.strip()
        if digits(text[1:] if text.startswith("-") else text):
            if abs(int(text)) < 2**62:
                return int(text)
            raise HTTPException(400, f"field {name!r} is out of range: {text}"[:200])
    raise HTTPException(400, f"field {name!r} must be an integer, not {value!r}"[:200])


def note_of(fields: dict) -> str:
    note = fields.get("note", "")
    if not isinstance(note, str):
        raise HTTPException(400, "field 'note' must be a string")
    return note.replace("\r\n", "\n").strip()
