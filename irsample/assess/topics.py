"""Topics to show: TREC topic files (``<top> <num> <title> <desc> <narr> </top>``) or TSV.

- TREC: each ``<top>`` block; ``<num>`` may read ``Number: 401``; ``<desc>`` and ``<narr>`` lose
  their ``Description:``/``Narrative:`` labels. Closing tags are optional (TREC's own files have
  none for title, desc and narr).
- TSV: ``qid<TAB>title[<TAB>description[<TAB>narrative]]`` a line; a first line whose first
  field is ``qid``, ``topic`` or ``id`` is a header.

:func:`query_terms` gives the words to highlight in documents: the title's words of at least
two letters, less a few stop words, lower-cased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..io.files import read_raw
from .documents import _text


@dataclass(frozen=True)
class Topic:
    qid: str
    title: str
    description: str = ""
    narrative: str = ""


_TOP = re.compile(r"<top>(.*?)</top>", re.DOTALL | re.IGNORECASE)
_FIELD = re.compile(r"<(num|title|desc|narr)>(.*?)(?=<(?:/?num|/?title|/?desc|/?narr|/top)>|$)",
                    re.DOTALL | re.IGNORECASE)
_LABEL = re.compile(r"^\s*(number|description|narrative|topic)\s*:\s*", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_STOP = ("a an and are as at be by document documents for from in into is it its of on or "
         "that the their these this to was what which with")
STOP_WORDS = frozenset(_STOP.split())


def _clean(text: str) -> str:
    return " ".join(_LABEL.sub("", text).split())


def _trec(text: str, name: str) -> dict[str, Topic]:
    topics: dict[str, Topic] = {}
    for block in _TOP.finditer(text):
        fields = {k.lower(): _clean(v) for k, v in _FIELD.findall(block.group(1))}
        line = text.count("\n", 0, block.start()) + 1
        qid = fields.get("num", "")
        if not qid:
            raise InputError("a <top> without <num>", name, line)
        if qid in topics:
            raise InputError(f"topic {qid!r} given twice", name, line)
        topics[qid] = Topic(qid, fields.get("title", ""), fields.get("desc", ""),
                            fields.get("narr", ""))
    return topics


def _tsv(text: str, name: str) -> dict[str, Topic]:
    topics: dict[str, Topic] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if number == 1 and fields[0].strip().lower() in ("qid", "topic", "id"):
            continue
        if len(fields) < 2 or len(fields) > 4 or not fields[0].strip():
            raise InputError("expected qid<TAB>title[<TAB>description[<TAB>narrative]]",
                             name, number)
        qid = fields[0].strip()
        if qid in topics:
            raise InputError(f"topic {qid!r} given twice", name, number)
        rest = [f.strip() for f in fields[1:]] + ["", ""]
        topics[qid] = Topic(qid, rest[0], rest[1], rest[2])
    return topics


def read_topics(source) -> dict[str, Topic]:
    """qid -> :class:`Topic` of a TREC topic file or a TSV file (plain or gzip)."""
    path = Path(source)
    if not path.is_file():
        raise InputError("no such file", str(path))
    text = _text(read_raw(path))
    topics = _trec(text, str(path)) if _TOP.search(text) else _tsv(text, str(path))
    if not topics:
        raise InputError("no topics found (expected TREC <top> blocks or qid<TAB>title lines)",
                         str(path))
    return topics


def s_stem(word: str) -> str:
    """Harman's S-stemmer (JASIS 1991): -ies -> -y, -es -> -e, -s -> '' (not after a, e, o;
    u or s); lower case. Query terms and document words match when their stems do."""
    w = word.lower()
    if w.endswith("ies") and not w.endswith(("eies", "aies")):
        return w[:-3] + "y"
    if w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
        return w[:-1]
    if w.endswith("s") and not w.endswith(("us", "ss")):
        return w[:-1]
    return w


def query_terms(topic: Topic) -> tuple[str, ...]:
    """The title's words to highlight (lower case, at least 2 letters, no stop words)."""
    words = (w.lower() for w in _WORD.findall(topic.title))
    return tuple(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOP_WORDS))
