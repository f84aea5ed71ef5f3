"""Automatic relevance labels: ``topic Q0 docno value`` per line, from any source.

``value`` is a probability of relevance in [0, 1] (``kind="probability"``) or a grade as in
qrels (an integer >= 0, ``kind="grade"``); by default the kind is inferred: all values integers
and at least one > 1, or all in {0, 1} with no fraction, read as grades, otherwise as
probabilities (every value must then lie in [0, 1]); a value that fits neither kind is named
with its own line, and a file mixing fractions with grades above 1 by its first fraction's
line (the one that makes it read as probabilities). The second column is ignored (as in
qrels). Labels of topics or documents outside the collection's pool are ignored (a labeller
may score more documents than were pooled); bad input is an :class:`InputError` naming the file
and line: a line without four fields, a value that is not a number, outside its range, or a
document labelled twice for one topic. The file is read as runs and qrels are (gzip, standard
input, pipes; a leading byte-order mark dropped, blank lines and ``#`` lines skipped); text that
is not UTF-8, a byte-order mark further on or a NUL byte is an error naming the line (such a
topic id matched nothing and its labels were dropped without a word).

:func:`read_labels` returns the labels as an :class:`AutoLabels` aligned with a
:class:`~irsample.model.Collection`'s ``tdi`` space (NaN where a document has no label).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..errors import InputError

KINDS = ("probability", "grade")


@dataclass(frozen=True, eq=False)
class AutoLabels:
    """Per ``tdi`` of a collection: ``value`` (NaN: no label) of ``kind`` (one of :data:`KINDS`)."""

    value: np.ndarray
    kind: str
    source: str = "<labels>"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"label kind must be one of {KINDS}, not {self.kind!r}")

    def relevance(self, level: int = 1) -> np.ndarray:
        """f_d for binary relevance: the probability, or 1[grade >= level]; 0 without a label."""
        v = np.nan_to_num(self.value, nan=0.0)
        if self.kind == "probability":
            return v.astype(np.float64)
        return (v >= level).astype(np.float64)

    def at_least(self, grade: int) -> np.ndarray:
        """f_d for the indicator 1[y_d >= grade] (grade >= 1): a probability counts towards
        grade 1 only; 0 without a label."""
        v = np.nan_to_num(self.value, nan=0.0)
        if self.kind == "probability":
            return v.astype(np.float64) if grade == 1 else np.zeros(len(v))
        return (v >= grade).astype(np.float64)

    def gain(self) -> np.ndarray:
        """f_d for the gain (trec_eval's: the grade when positive): the grade, or the probability
        (the expected gain of a binary judgment); 0 without a label."""
        return np.maximum(np.nan_to_num(self.value, nan=0.0), 0.0).astype(np.float64)

    def max_grade(self) -> int:
        v = self.value[np.isfinite(self.value)]
        return 1 if self.kind == "probability" or not len(v) else max(int(v.max()), 1)


def read_labels(path, collection, *, kind: str | None = None) -> AutoLabels:
    """Read a label file (module docstring) onto ``collection``."""
    from .files import source_name
    from .trec import decode_utf8, read_bytes

    source = source_name(path)
    if kind is not None and kind not in KINDS:
        raise ValueError(f"label kind must be one of {KINDS}, not {kind!r}")
    # as every reader takes its file: gzip, standard input, pipes; leading byte-order marks
    # dropped, a NUL byte an error with its line
    raw = read_bytes(path).tobytes()
    qids, docnos, values, lines = [], [], [], []
    for lineno, data in enumerate(raw.split(b"\n"), 1):
        line = decode_utf8(data, source, lineno, "line")
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise InputError(f"expected 4 fields 'topic Q0 docno value', found {len(fields)}",
                             source, lineno)
        try:
            value = float(fields[3])
        except ValueError:
            raise InputError(f"label value {fields[3]!r} is not a number", source,
                             lineno) from None
        if not math.isfinite(value):
            raise InputError(f"label value {fields[3]!r} is not finite", source, lineno)
        qids.append(fields[0])
        docnos.append(fields[2])
        values.append(value)
        lines.append(lineno)
    v = np.array(values, dtype=np.float64)
    if kind is None:
        _check_one_kind(v, source, lines)
    kind = kind or _infer_kind(v)
    bad = _out_of_range(v, kind)
    if bad is not None:
        raise InputError(f"label value {fields_text(values[bad])} outside its range "
                         f"({'[0, 1]' if kind == 'probability' else 'an integer grade >= 0'} "
                         f"for {kind} labels)", source, lines[bad])
    seen: dict[tuple[str, str], int] = {}
    for q, d, ln in zip(qids, docnos, lines):
        if (q, d) in seen:
            raise InputError(f"document {d!r} labelled twice for topic {q!r} (first on line "
                             f"{seen[(q, d)]})", source, ln)
        seen[(q, d)] = ln
    out = np.full(collection.n_tdi, np.nan)
    if qids:
        enc = [s.encode("utf-8") for s in qids]
        docs = [s.encode("utf-8") for s in docnos]
        _, tdi = collection.lookup(pa.array(enc, pa.binary()), pa.array(docs, pa.binary()))
        inside = tdi >= 0
        out[tdi[inside]] = v[inside]
    return AutoLabels(out, kind, source)


def fields_text(value: float) -> str:
    return f"{value:g}"


def _check_one_kind(v: np.ndarray, source: str, lines: list[int]) -> None:
    """Before the kind is inferred: a value that fits neither kind (below 0, or a fraction
    above 1) is named with its own line; integer grades above 1 next to fractions (a file that
    mixes grades and probabilities) are named by the first fraction's line, the one that makes
    the file read as probabilities, and the first grade's. (Inferring first named the grade 2
    on line 2 for a fraction 0.5 on line 3, and for a -0.5 on line 4.)"""
    integral = v == np.round(v)
    for bad in np.flatnonzero((v < 0) | (~integral & (v > 1)))[:1]:
        raise InputError(f"label value {fields_text(v[bad])} outside its range (labels are "
                         "probabilities in [0, 1] or integer grades >= 0)", source, lines[bad])
    fractions, grades = np.flatnonzero(~integral), np.flatnonzero(v > 1)
    if len(fractions) and len(grades):
        f, g = fractions[0], grades[0]
        raise InputError(
            f"label value {fields_text(v[f])} is a probability, but line {lines[g]} holds the "
            f"grade {fields_text(v[g])}: a label file holds probabilities in [0, 1] or integer "
            "grades >= 0, not both", source, lines[f],
        )


def _infer_kind(v: np.ndarray) -> str:
    integral = np.all(v == np.round(v))
    return "grade" if integral and len(v) and (v.max() > 1 or np.all((v == 0) | (v == 1))) \
        else "probability"


def _out_of_range(v: np.ndarray, kind: str) -> int | None:
    if kind == "probability":
        bad = np.flatnonzero((v < 0) | (v > 1))
    else:
        bad = np.flatnonzero((v < 0) | (v != np.round(v)))
    return int(bad[0]) if len(bad) else None
