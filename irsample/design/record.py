"""Design files: a drawn sample written down, to judge and to merge back; and the to-judge list.

A design file is JSON (UTF-8), one document row per line so it diffs and greps well::

    {"format": "irsample-design", "version": 1,
     "design": "2strata@1000",          # a design name (design.sampling.named.parse_design)
     "seed": 42,                        # the seed of the draw (null: not drawn)
     "runs": ["runA", "runB"],          # the pooled runs (names)
     "depth": 100,                      # pool depth (null: whole rankings)
     "strata": [{"label": "1-10", "size": 640, "sampled": 640}, ...],
     "columns": ["topic", "docno", "best_rank", "stratum", "inclusion", "selected"],
     "rows": [
      ["401", "FBIS3-10082", 1, "1-10", 1.0, 1],
      ...
     ]}

``rows`` lists every document of the design's pool: its best rank over the runs, its stratum,
its inclusion probability pi under the design and whether the draw selected it for judging
(``1``). Only ``format``, ``version`` and ``design`` are required: a file without ``rows`` (e.g.
written by a planner) describes a design to draw with ``irsample sample --design FILE``; merging
needs the rows. ``budget`` is part of the design name; ``runs`` and ``depth``, when given, say
which pool to build. ``strata`` is a summary (sizes and selections over all topics), in the
design's order of strata, which reading keeps (rows alone give the order they appear in).

A design that cannot be named (``Design.file_key`` set: a planned design,
:class:`~irsample.design.sampling.allocated.Allocated`, fixed sample sizes per topic and
stratum, topping up documents judged before; or the union of judging rounds,
:class:`~irsample.design.sampling.union.RoundsUnion`, ``"rounds": {...}``, whose rows' strata
are the rounds' cells) is carried in its own entry after ``depth`` (``"plan": {...}``,
:mod:`irsample.design.sampling.plan_file`), written by the design's
``file_block`` and read by its ``from_file_block``; the ``design`` name is then only
informative (the entry is read, the name is not parsed).

The to-judge list is TSV with a header, ``topic<TAB>docno``, one selected document per line,
in topic then docno order; documents judged before the draw (a planned design's ``before``) are
left out (the design file's rows keep them as selected).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..io.trec import read_bytes, source_name
from .frame import DESIGNS, Design, Sample
from .sampling.named import parse_design

FORMAT, VERSION = "irsample-design", 1
COLUMNS = ["topic", "docno", "best_rank", "stratum", "inclusion", "selected"]


@dataclass(frozen=True, eq=False)
class DesignRecord:
    """A design, its pool and (optionally) one draw, as written in a design file.

    Rows are the design's pool documents (rows outside the design are not recorded); ``stratum``
    indexes ``labels``. Without rows (``has_rows`` False) the record only names a design.
    """

    design: Design
    seed: int | None = None
    runs: tuple[str, ...] | None = None
    depth: float | None = None
    qid: tuple[str, ...] = ()
    docno: tuple[str, ...] = ()
    best_rank: np.ndarray = field(default_factory=lambda: np.zeros(0))
    labels: tuple[str, ...] = ()
    stratum: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    inclusion: np.ndarray = field(default_factory=lambda: np.zeros(0))
    selected: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    source: str = "<design>"
    has_rows: bool = False

    @classmethod
    def from_sample(cls, units, design: Design, sample: Sample, *, seed=None) -> DesignRecord:
        """The record of ``sample`` drawn by ``design`` over a pool or frame ``units``."""
        rows = np.flatnonzero(sample.stratum >= 0)
        col = units.collection
        import pyarrow as pa

        docnos = col.tdi_docno.take(pa.array(units.tdi[rows]))
        return cls(
            design, seed, tuple(col.run_names[r] for r in units.runs),
            None if math.isinf(units.depth) else float(units.depth),
            tuple(col.topics[t] for t in units.topic[rows]),
            tuple(v.decode("utf-8", "surrogateescape") for v in docnos.to_pylist()),
            np.asarray(units.best_rank[rows], dtype=np.float64), tuple(sample.labels),
            np.asarray(sample.stratum[rows], dtype=np.int64),
            np.asarray(sample.inclusion[rows], dtype=np.float64),
            np.asarray(sample.judged[rows], dtype=bool), getattr(units, "source", "<design>"),
            True,
        )

    def strata_summary(self) -> list[dict]:
        size = np.bincount(self.stratum, minlength=len(self.labels))
        sampled = np.bincount(self.stratum[self.selected], minlength=len(self.labels))
        return [
            {"label": label, "size": int(n), "sampled": int(k)}
            for label, n, k in zip(self.labels, size, sampled)
        ]

    def to_json(self) -> bytes:
        """The design file's bytes (see the module docstring)."""
        head = {
            "format": FORMAT, "version": VERSION, "design": self.design.name, "seed": self.seed,
            "runs": list(self.runs) if self.runs is not None else None,
            "depth": int(self.depth) if self.depth is not None else None,
        }
        parts = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())]
        block = self.design.file_block()
        if block is not None:
            parts.append(block)
        if self.has_rows:
            parts.append(f' "strata": {json.dumps(self.strata_summary())}')
            parts.append(f' "columns": {json.dumps(COLUMNS)}')
            body = []
            for i in range(len(self.qid)):
                rank = self.best_rank[i]
                body.append("  " + json.dumps([
                    self.qid[i], self.docno[i], None if math.isinf(rank) else int(rank),
                    self.labels[self.stratum[i]], float(self.inclusion[i]), int(self.selected[i]),
                ]))
            parts.append(' "rows": [\n' + ",\n".join(body) + "\n ]")
        return (",\n".join(parts) + "\n}\n").encode("utf-8", "surrogateescape")

    def to_judge_tsv(self) -> bytes:
        """``topic<TAB>docno`` of the selected documents still to judge, with a header line."""
        done = self.design.judged_before()
        order = sorted(
            (i for i in np.flatnonzero(self.selected) if (self.qid[i], self.docno[i]) not in done),
            key=lambda i: (self.qid[i], self.docno[i]),
        )
        out = ["topic\tdocno\n"] + [f"{self.qid[i]}\t{self.docno[i]}\n" for i in order]
        return "".join(out).encode("utf-8", "surrogateescape")

    @classmethod
    def read(cls, source) -> DesignRecord:
        """Read a design file (:class:`InputError` with the file and line on bad content)."""
        name = source_name(source)
        text = read_bytes(source).tobytes().decode("utf-8", "surrogateescape")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not a design file: invalid JSON ({exc.msg})", name, exc.lineno
            ) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"not a design file: expected \"format\": \"{FORMAT}\"", name, 1)
        if data.get("version") != VERSION:
            raise InputError(f"unsupported design file version {data.get('version')!r}", name, 1)
        kinds = [cls for cls in DESIGNS.values() if cls.file_key and cls.file_key in data]
        if kinds:  # a design that cannot be named: its own entry in the file
            design = kinds[0].from_file_block(
                data[kinds[0].file_key], name, lambda needle, after=None: _line_of(
                    text, needle, max(text.find(after), 0) if after else 0))
        else:
            try:
                design = parse_design(data.get("design"))
            except Exception as exc:  # DesignError: located in the file
                raise InputError(f"design: {exc}", name, _line_of(text, '"design"')) from None
        seed, runs, depth = data.get("seed"), data.get("runs"), data.get("depth")
        if runs is not None and (
            not isinstance(runs, list) or not all(isinstance(r, str) for r in runs)
        ):
            raise InputError("runs must be a list of run names", name, _line_of(text, '"runs"'))
        if depth is not None and (not isinstance(depth, int) or depth < 1):
            raise InputError(f"depth must be an integer >= 1 or null, got {depth!r}", name,
                             _line_of(text, '"depth"'))
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InputError(f"seed must be an integer or null, got {seed!r}", name,
                             _line_of(text, '"seed"'))
        common = dict(design=design, seed=seed, runs=tuple(runs) if runs is not None else None,
                      depth=float(depth) if depth is not None else None, source=name)
        if "rows" not in data:
            return cls(**common)
        rows = _rows(data, text, name)
        _check_summary(data.get("strata"), rows, name, _line_of(text, '"strata"'))
        labels = design.stratum_labels()
        if labels is None:  # the order they were written in (the summary's), where it says
            labels = _summary_order(data.get("strata"), rows["labels"])
        rows = _in_design_order(rows, labels, name, _line_of(text, '"rows"'))
        return cls(**common, **rows, has_rows=True)


class _RowLine:
    """The line of ``rows[index]`` in the JSON ``text``, found when asked (``int()``): only an
    error needs it, and finding it scans the text up to the row. The rows need not be one a
    line (before, a row's line was counted from the ``"rows"`` key, which named line 2 or 91 of
    one-line files); messages also give the row index, ``rows[i]``, which is what locates a row
    in a file without line structure."""

    def __init__(self, text: str, index: int):
        self.text, self.index = text, index

    def __int__(self) -> int:
        key = re.search(r'"rows"\s*:\s*\[', self.text)
        at = _element_offset(self.text, key.end(), self.index) if key else -1
        return self.text.count("\n", 0, at) + 1 if at >= 0 else 1


def _element_offset(text: str, start: int, index: int) -> int:
    """Offset in ``text`` of element ``index`` of the JSON array whose ``[`` ends at ``start``
    (-1 if not found): strings and nested brackets are skipped, commas at the top level
    count."""
    depth, count, in_string, escaped, expect = 0, 0, False, False, True
    for pos in range(start, len(text)):
        c = text[pos]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            continue
        if expect and not c.isspace() and depth == 0:
            if count == index:
                return pos
            expect = False
        if c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
        elif c in "]}":
            if depth == 0:
                return -1
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
            expect = True
    return -1


def _line_of(text: str, needle: str, start: int = 0) -> int | None:
    at = text.find(needle, start)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _check_summary(strata, rows: dict, name: str, line) -> None:
    """The ``strata`` summary (written with the rows) must agree with them: every row's
    stratum listed, and each listed stratum's ``size`` and ``sampled`` the rows' and the
    selected rows' counts. A file edited by hand that disagrees (a row moved to a stratum
    the summary does not know, a size changed) is refused: which would the estimators trust?"""
    if not isinstance(strata, list) or not strata:
        return  # a file without the summary: the rows alone
    listed = {s.get("label"): s for s in strata if isinstance(s, dict)}
    size = np.bincount(rows["stratum"], minlength=len(rows["labels"]))
    sampled = np.bincount(rows["stratum"], weights=rows["selected"],
                          minlength=len(rows["labels"]))
    for k, label in enumerate(rows["labels"]):
        entry = listed.get(label)
        if entry is None:
            raise InputError(f"rows have stratum {label!r}, which the strata summary does not "
                             f"list ({', '.join(map(str, listed))})", name, line)
        for key, count in (("size", int(size[k])), ("sampled", int(sampled[k]))):
            if key in entry and entry[key] != count:
                raise InputError(f"the strata summary gives stratum {label!r} {key} "
                                 f"{entry[key]!r}, the rows {count}", name, line)


def _summary_order(strata, labels: tuple[str, ...]) -> tuple[str, ...]:
    """The rows' stratum ``labels`` in the order of the file's ``strata`` summary (the draw's
    order: a stratum's index decides the order of cells, hence of a later round's draws), those
    it does not list after them in the rows' order."""
    listed = [s.get("label") for s in strata if isinstance(s, dict)] \
        if isinstance(strata, list) else []
    first = [label for label in dict.fromkeys(listed) if label in labels]
    return tuple(first) + tuple(label for label in labels if label not in first)


def _in_design_order(rows: dict, labels: tuple[str, ...], name: str, line) -> dict:
    """Rows with their strata indexed in the design's order, checked to be its."""
    unknown = sorted(set(rows["labels"]) - set(labels))
    if unknown:
        raise InputError(f"rows have strata {unknown} that the design does not ({list(labels)})",
                         name, line)
    index = np.array([labels.index(label) for label in rows["labels"]], dtype=np.int64)
    return rows | {"labels": labels, "stratum": index[rows["stratum"]]}


def _rows(data: dict, text: str, name: str) -> dict:
    if data.get("columns", COLUMNS) != COLUMNS:
        raise InputError(f"columns must be {COLUMNS}", name, _line_of(text, '"columns"'))
    rows = data["rows"]
    if not isinstance(rows, list):
        raise InputError("rows must be a list", name, _line_of(text, '"rows"'))
    qid, docno, best, labels, stratum, pi, selected = [], [], [], {}, [], [], []
    seen = set()
    for i, row in enumerate(rows):
        line = _RowLine(text, i)
        ok = isinstance(row, list) and len(row) == 6
        if ok:
            q, d, rank, label, p, sel = row
            ok = (isinstance(q, str) and isinstance(d, str) and isinstance(label, str)
                  and (rank is None or (isinstance(rank, int) and rank >= 1))
                  and isinstance(p, (int, float)) and 0 <= p <= 1 and sel in (0, 1))
        if not ok:
            raise InputError(
                f"rows[{i}]: expected [topic, docno, best_rank, stratum, inclusion, selected] "
                "with a probability in [0, 1] and selected 0 or 1", name, int(line),
            )
        if sel and p <= 0:
            raise InputError(f"rows[{i}]: a selected document needs an inclusion probability "
                             "> 0", name, int(line))
        if (q, d) in seen:
            raise InputError(f"rows[{i}]: document {d!r} of topic {q!r} listed twice", name,
                             int(line))
        seen.add((q, d))
        qid.append(q)
        docno.append(d)
        best.append(math.inf if rank is None else float(rank))
        stratum.append(labels.setdefault(label, len(labels)))
        pi.append(float(p))
        selected.append(bool(sel))
    return dict(
        qid=tuple(qid), docno=tuple(docno), best_rank=np.array(best, dtype=np.float64),
        labels=tuple(labels), stratum=np.array(stratum, dtype=np.int64),
        inclusion=np.array(pi, dtype=np.float64), selected=np.array(selected, dtype=bool),
    )
