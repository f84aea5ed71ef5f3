"""Documents to show: TREC SGML files, JSONL files or a folder of either (or of plain texts).

- TREC SGML: ``<DOC> <DOCNO> id </DOCNO> ... </DOC>`` blocks (several per file; plain or gzip);
  the text is the block without its DOCNO element, tags removed and entities decoded.
- JSONL: one ``{"docno": ..., "text": ...}`` object a line (plain or gzip); a ``.jsonl`` or
  ``.jsonl.gz`` name, or a first non-blank character ``{``.
- a folder: every file inside (recursively, in name order) read as one of the above; any other
  file is one document whose docno is its name without ``.txt``.

Only the documents asked for (``wanted``) are kept, so a large collection costs a scan, not its
size in memory. Errors are :class:`~irsample.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from ..errors import InputError
from ..io.files import read_raw

_DOC = re.compile(rb"<DOC>(.*?)</DOC>", re.DOTALL | re.IGNORECASE)
_DOCNO = re.compile(rb"<DOCNO>\s*(.*?)\s*</DOCNO>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<[^>]{0,200}>")
_BLANKS = re.compile(r"[ \t]*\n[ \t\n]*\n[ \t\n]*")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class _Kept(dict):
    """docno -> text of the documents kept, with where each was read: a docno read twice
    with different texts is an error naming both places (which text to show?)."""

    def __init__(self):
        super().__init__()
        self.where: dict[str, tuple[str, int]] = {}

    def put(self, docno: str, text: str, path: Path, line: int) -> None:
        if docno in self and self[docno] != text:
            first, at = self.where[docno]
            raise InputError(f"document {docno!r} appears twice with different texts (first at "
                             f"{first}:{at})", str(path), line)
        self[docno] = text
        self.where.setdefault(docno, (str(path), line))


def _sgml(raw: bytes, path: Path, wanted, out: _Kept) -> None:
    found = False
    line, counted = 1, 0  # line of byte ``counted``, advanced block by block
    for block in _DOC.finditer(raw):
        found = True
        line += raw.count(b"\n", counted, block.start())
        counted = block.start()
        m = _DOCNO.search(block.group(1))
        if m is None:
            raise InputError("a <DOC> without <DOCNO>", str(path), line)
        docno = _text(m.group(1))
        if wanted is not None and docno not in wanted:
            continue
        body = block.group(1)[: m.start()] + block.group(1)[m.end():]
        text = html.unescape(_TAG.sub(" ", _text(body)))
        out.put(docno, _BLANKS.sub("\n\n", text).strip(), path, line)
    if not found:
        raise InputError("no <DOC> blocks found (expected TREC SGML documents)", str(path), 1)


def _jsonl(raw: bytes, path: Path, wanted, out: _Kept) -> None:
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise InputError(f"not a JSON object ({exc})", str(path), number) from None
        if not (isinstance(record, dict) and isinstance(record.get("docno"), str)
                and isinstance(record.get("text"), str)):
            raise InputError('expected {"docno": string, "text": string}', str(path), number)
        if wanted is None or record["docno"] in wanted:
            out.put(record["docno"], record["text"], path, number)


def _is_jsonl(path: Path, raw: bytes) -> bool:
    name = path.name.lower()
    return name.endswith((".jsonl", ".jsonl.gz")) or raw.lstrip()[:1] == b"{"


def _one_file(path: Path, wanted, out: _Kept, *, loose: bool) -> None:
    raw = read_raw(path)
    if _is_jsonl(path, raw):
        _jsonl(raw, path, wanted, out)
    elif _DOC.search(raw) is not None or not loose:
        _sgml(raw, path, wanted, out)
    else:  # a plain text file in a folder: its name is the docno
        docno = path.name.removesuffix(".txt")
        if wanted is None or docno in wanted:
            out.put(docno, _text(raw), path, 1)


def read_documents(source, wanted=None) -> dict[str, str]:
    """docno -> text of the documents in ``source`` (a file or folder; see the module
    docstring), only those in ``wanted`` when it is given."""
    path = Path(source)
    wanted = set(wanted) if wanted is not None else None
    out = _Kept()
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        if not files:
            raise InputError("the folder holds no documents", str(path))
        for f in files:
            _one_file(f, wanted, out, loose=True)
    elif path.exists():
        _one_file(path, wanted, out, loose=False)
    else:
        raise InputError("no such file or folder", str(path))
    return dict(out)
