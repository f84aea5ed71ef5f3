"""Render an :class:`~irsample.evaluation.Evaluation` as text.

- ``trec``: trec_eval's lines ``%-22s\\t%s\\t%6.4f`` (measure, topic or ``all``, value), counts as
  integers, one block per run: per-topic lines (with ``per_topic``) topic by topic, then the
  summary starting with ``runid`` (always, when there are several runs).
- ``tsv``: header ``run\\ttopic\\tmeasure\\tvalue``; the run's tag, the topic or ``all``, the
  trec_eval measure name, the value; ``csv``: the same rows as comma-separated values (fields
  with a comma or a quote quoted, as spreadsheets and pandas read them).
- ``json``: ``{run: {topic: {measure: value}}}`` with ``all`` for summaries.
- ``latex``: a booktabs table of the summaries, one row per run.
- ``table``: the summaries as an aligned plain-text table, one row per run.
- ``sample_eval``: NIST sample_eval.pl's layout (``infAP\t\t<topic>\t\t0.1234``), its
  measure order and names, topics in numeric order.

Where a design-based measure relied on an assumed design (``Evaluation.assumed``, ``--assume
uniform``: the judgments carry no inclusion probabilities), every format records it: an
``assume`` line ``assume  all  uniform`` at the start of each run's summary, after ``runid``
(trec, sample_eval), an ``assume`` column (tsv), an ``"assume": "uniform"`` entry in each
run's ``all`` object (json), a ``% assume uniform`` comment line (latex) and a closing
``assume: uniform`` line (table).

``places`` sets the decimals of real values (trec: 4 by default; tsv/json: shortest exact
representation unless given).

Evaluated with a confidence level (``ci``), every measure with a variance estimator also gets its
interval limits: ``<name>_low`` / ``<name>_high`` lines after its line (trec), ``low`` and
``high`` columns (tsv; empty for other measures), ``{"value", "low", "high"}`` objects (json) and
``low`` / ``high`` columns after the measure's column (table, latex).

Each interval of a run's mean also carries its status (:mod:`irsample.measures.reliability`):
a ``<name>_status`` line (``ok`` or ``unreliable``) after the limits (trec: three fields a line,
as trec_eval's; ``irsample eval`` prints the reasons on standard error); ``status`` and
``reason`` columns (tsv; empty for measures without an interval); ``"status"``, ``"reason"``
and ``"causes"`` (the topic ids) in the summary's object (json); in the tables a ``!`` (table)
or a dagger (latex) after an unreliable interval and, below the table, one line per unreliable
run and measure, ``! run measure: reason``. So does each per-topic interval (``per_topic``:
:mod:`irsample.measures.topic_status`): a ``<name>_status`` line (trec; its reasons are in the
tsv and json outputs), the ``status`` and ``reason`` columns (tsv), ``"status"``, ``"reason"``
and empty ``"causes"`` (json). An imputed topic's limits are NaN (``nan`` in trec and tsv,
``null`` in json).
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .evaluation import Evaluation

FORMATS = ("trec", "tsv", "csv", "json", "latex", "table", "sample_eval")

#: sample_eval.pl's per-topic and summary order (by trec_name; iprec@rec is summary only)
_SAMPLE_EVAL_ORDER = ["xinfAP", "infNDCG", "iprec_rec", "iP", "inum_rel_ret", "inum_rel", "num_ret"]


def _value_text(value: float, value_type: str, places: int | None) -> str:
    if value_type == "int":
        return str(int(round(value)))
    if places is None:
        return repr(float(value))
    return f"{value:.{places}f}"


class _Limits:
    """Interval limits of an evaluation with ``ci``, looked up by (run, topic index, measure)."""

    def __init__(self, ev: Evaluation):
        self.ev = ev
        self.index = {m: j for j, m in enumerate(ev.measures)}
        self.has = ev.has_interval if ev.ci is not None else None
        if self.has is not None:
            self.topic = ev.interval(summary=False)
            self.summary = ev.interval(summary=True)
            self.topic_index = {t: i for i, t in enumerate(ev.topics)}

    def status(self, r, topic, m):
        """(status, reason, causes) of a row's interval, or None (no interval, or an evaluation
        without statuses); a topic's causes are empty."""
        found = getattr(self.ev, "statuses", None)
        if found is None or self.get(r, topic, m) is None:
            return None
        j = self.index[m]
        if not found.status[r, j]:
            return None
        if topic != "all":
            return (*found.topic(r, self.topic_index[topic], j), ())
        return found.status[r, j], found.reason[r, j], found.causes[r, j]

    def get(self, r, topic, m):
        """(low, high) of the row, or None when the measure has no interval."""
        if self.has is None or m.value_type == "str" or not self.has[self.index[m]]:
            return None
        j = self.index[m]
        if topic == "all":
            return self.summary.low[r, j], self.summary.high[r, j]
        t = self.topic_index[topic]
        return self.topic.low[r, t, j], self.topic.high[r, t, j]


def _rows(ev: Evaluation, per_topic: bool, runs=None):
    """(run index, topic label, measure, value) in trec_eval order, per run block."""
    for r in range(len(ev.run_names)) if runs is None else runs:
        if per_topic:
            for t in range(len(ev.topics)):
                if not ev.evaluated[r, t]:
                    continue
                for j, m in enumerate(ev.measures):
                    if not m.per_topic:
                        continue
                    if m.value_type == "str":
                        yield r, ev.topics[t], m, ev.strings[(r, t, m)]
                    else:
                        yield r, ev.topics[t], m, ev.values[r, t, j]
        for j, m in enumerate(ev.measures):
            if m.summary == "none" and m.family != "runid":
                continue
            if m.family == "runid":
                yield r, "all", m, ev.strings[(r, None, m)]
            else:
                yield r, "all", m, ev.summary[r, j]


def to_trec(ev: Evaluation, *, per_topic: bool = False, places: int = 4, runs=None,
            zscores: bool = False) -> str:
    """trec_eval's lines for all runs (or the run indices ``runs``), one block per run.

    With several runs in the output, each run's summary starts with trec_eval's ``runid`` line
    (its ``-m all_trec`` line) even when ``runid`` was not asked for, so that every block is
    named. ``zscores``: the values are trec_eval's ``-Z`` z-scores, printed as it prints them,
    ``Z`` before the name and every number, counts too, with decimals."""
    lines = []
    limits = _Limits(ev)
    several = len(range(len(ev.run_names)) if runs is None else runs) > 1
    named = several and not any(m.family == "runid" for m in ev.measures)
    summary_started = None
    for r, topic, m, value in _rows(ev, per_topic, runs):
        if topic == "all" and summary_started != r:
            summary_started = r
            if named:
                lines.append(f"{'runid':<22s}\tall\t{ev.run_names[r]}")
            if ev.assumed and m.family != "runid":  # else after the runid line, below
                lines.append(_assume_line(ev))
        if m.value_type == "str":  # relstring in quotes, as trec_eval prints it
            text = f"'{value}'" if m.trec_quoted else value
        elif zscores:
            lines.append(f"Z{m.trec_name:<22s}\t{topic}\t{value:{places + 2}.{places}f}")
            continue
        elif m.value_type == "int":
            text = str(int(round(value)))
        else:
            text = f"{value:{places + 2}.{places}f}"
        lines.append(f"{m.trec_name:<22s}\t{topic}\t{text}")
        if ev.assumed and m.family == "runid":
            lines.append(_assume_line(ev))
        bounds = limits.get(r, topic, m)
        if bounds is not None:
            for suffix, bound in zip(("_low", "_high"), bounds):
                lines.append(
                    f"{m.trec_name + suffix:<22s}\t{topic}\t{bound:{places + 2}.{places}f}"
                )
        found = limits.status(r, topic, m)
        if found is not None:
            lines.append(f"{m.trec_name + '_status':<22s}\t{topic}\t{found[0]}")
    return "\n".join(lines) + ("\n" if lines else "")


def _assume_line(ev: Evaluation) -> str:
    return f"{'assume':<22s}\tall\t{ev.assumed}"


def _table_rows(ev: Evaluation, per_topic: bool, places: int | None):
    """The tsv and csv rows (lists of fields), the header first."""
    limits = _Limits(ev)
    with_ci = ev.ci is not None
    yield (["run", "topic", "measure", "value"] + (["low", "high", "status", "reason"]
           if with_ci else []) + (["assume"] if ev.assumed else []))
    for r, topic, m, value in _rows(ev, per_topic):
        if m.family == "runid":
            continue
        fields = [ev.run_names[r], str(topic), m.trec_name,
                  value if m.value_type == "str" else _value_text(value, m.value_type, places)]
        if with_ci:
            bounds = limits.get(r, topic, m) or (None, None)
            fields += ["" if b is None else _value_text(b, "float", places) for b in bounds]
            fields += list((limits.status(r, topic, m) or ("", "", ()))[:2])
        yield fields + ([ev.assumed] if ev.assumed else [])


def to_tsv(ev: Evaluation, *, per_topic: bool = False, places: int | None = None) -> str:
    return "".join("\t".join(fields) + "\n" for fields in _table_rows(ev, per_topic, places))


def to_csv(ev: Evaluation, *, per_topic: bool = False, places: int | None = None) -> str:
    """The tsv's rows as RFC 4180 CSV (a field with a comma or quote is quoted)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(_table_rows(ev, per_topic, places))
    return out.getvalue()


def to_json(ev: Evaluation, *, per_topic: bool = False, places: int | None = None) -> str:
    out: dict = {}
    limits = _Limits(ev)

    def real(x):
        x = float(x) if places is None else round(float(x), places)
        return None if math.isnan(x) else x

    for r, topic, m, value in _rows(ev, per_topic):
        if m.family == "runid":
            continue
        if m.value_type == "str":
            v = value
        elif m.value_type == "int":
            v = int(round(value))
        else:
            v = real(value)
            bounds = limits.get(r, topic, m)
            if bounds is not None:
                v = {"value": v, "low": real(bounds[0]), "high": real(bounds[1])}
                found = limits.status(r, topic, m)
                if found is not None:
                    v.update(status=found[0], reason=found[1], causes=list(found[2]))
        out.setdefault(ev.run_names[r], {}).setdefault(topic, {})[m.trec_name] = v
    if ev.assumed:
        for run in out.values():
            run.setdefault("all", {})["assume"] = ev.assumed
    return json.dumps(out, indent=1) + "\n"


_LATEX_SPECIALS = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "\\": r"\textbackslash{}",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def unreliable_notes(ev: Evaluation) -> list[tuple[str, str, str]]:
    """(run, measure's trec_eval name, reason) of every unreliable interval of a run's mean,
    run by run."""
    found = getattr(ev, "statuses", None)
    if found is None:
        return []
    return [(ev.run_names[r], ev.measures[j].trec_name, found.reason[r, j])
            for r, j in found.unreliable()]


def _summary_columns(ev: Evaluation, places: int, mark: str = "!"):
    """Header and per-run cells of the summary tables: each numeric measure, followed by its
    ``low`` and ``high`` limits when the evaluation has intervals, ``mark`` after the ``high``
    of an unreliable one; and the notes ``(run, measure, reason)`` of the unreliable ones."""
    cols = [(j, m) for j, m in enumerate(ev.measures) if m.value_type != "str"]
    limits = _Limits(ev)
    head, rows, notes = [], [[] for _ in ev.run_names], []
    for j, m in cols:
        head.append(m.trec_name)
        with_limits = limits.get(0, "all", m) is not None if ev.run_names else False
        head += ["low", "high"] if with_limits else []
        for r, cells in enumerate(rows):
            cells.append(_value_text(ev.summary[r, j], m.value_type, places))
            if with_limits:
                cells += [_value_text(b, "float", places) for b in limits.get(r, "all", m)]
                found = limits.status(r, "all", m)
                if found is not None and found[0] != "ok":
                    cells[-1] += mark
                    notes.append((ev.run_names[r], m.trec_name, found[1]))
    return head, rows, sorted(notes, key=lambda n: ev.run_names.index(n[0]))


def to_latex(ev: Evaluation, *, per_topic: bool = False, places: int | None = None) -> str:
    places = 4 if places is None else places
    names, cells, notes = _summary_columns(ev, places, r"$^\dagger$")
    head = " & ".join(["Run"] + [_latex_escape(n) for n in names])
    lines = [f"% assume {ev.assumed}"] if ev.assumed else []
    lines += [
        r"\begin{tabular}{l" + "r" * len(names) + "}",
        r"\toprule",
        head + r" \\",
        r"\midrule",
    ]
    for name, row in zip(ev.run_names, cells):
        lines.append(" & ".join([_latex_escape(name)] + row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    lines += [r"{\footnotesize $^\dagger$ " + _latex_escape(f"{run} {name}: {reason}") + r"\par}"
              for run, name, reason in notes]
    return "\n".join(lines) + "\n"


def to_table(ev: Evaluation, *, per_topic: bool = False, places: int | None = None) -> str:
    places = 4 if places is None else places
    names, cells, notes = _summary_columns(ev, places)
    rows = [["run"] + names] + [[name] + row for name, row in zip(ev.run_names, cells)]
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(w) if c == 0 else cell.rjust(w)
            for c, (cell, w) in enumerate(zip(row, widths))
        )
        for row in rows
    ]
    lines += [f"! {run} {name}: {reason}" for run, name, reason in notes]
    if ev.assumed:
        lines.append(f"assume: {ev.assumed}")
    return "\n".join(lines) + "\n"


def sample_eval_name(m) -> str:
    """The name sample_eval.pl's layout prints ``m`` under (its own where it names the measure
    otherwise, as ``infAP`` for xinfAP; else trec_eval's)."""
    return getattr(m, "sample_eval_name", m.trec_name)


def _sample_eval_line(m, topic: str, value: float, places: int) -> str:
    name = sample_eval_name(m)
    if m.value_type == "int":
        return f"{name}\t\t{topic}\t{int(round(value)):9d}"
    if m.family in ("inum_rel", "inum_rel_ret"):
        return f"{name}\t{topic}\t{value:14.{places}f}"
    if m.family == "iIPrec":
        return f"{name}\t{topic}\t\t{value:6.{places}f}"
    return f"{name}\t\t{topic}\t\t{value:6.{places}f}"


def to_sample_eval(
    ev: Evaluation, *, per_topic: bool = False, places: int | None = None, runs=None
) -> str:
    """sample_eval.pl's lines for all runs (or the run indices ``runs``), one block per run.
    sample_eval.pl evaluates one run and names none; with several, each block is headed
    ``## run <name>`` so that the blocks can be told apart (one run: its lines alone)."""
    places = 4 if places is None else places

    def rank(m):
        key = m.trec_family or m.family
        key = "iP" if m.family == "iP" else ("iprec_rec" if m.family == "iIPrec" else key)
        return (
            _SAMPLE_EVAL_ORDER.index(key) if key in _SAMPLE_EVAL_ORDER else len(_SAMPLE_EVAL_ORDER)
        )

    numeric = sorted(
        [(j, m) for j, m in enumerate(ev.measures) if m.value_type != "str"],
        key=lambda jm: rank(jm[1]),
    )
    topics = list(range(len(ev.topics)))
    if all(t.isdigit() for t in ev.topics):
        topics.sort(key=lambda t: int(ev.topics[t]))
    lines = []
    chosen = range(len(ev.run_names)) if runs is None else runs
    for r in chosen:
        if len(chosen) > 1:
            lines.append(f"## run {ev.run_names[r]}")
        if per_topic:
            for t in topics:
                if ev.evaluated[r, t]:
                    lines += [
                        _sample_eval_line(m, ev.topics[t], ev.values[r, t, j], places)
                        for j, m in numeric
                        if m.family != "iIPrec"
                    ]
        if ev.assumed:
            lines.append(f"assume\t\tall\t\t{ev.assumed}")
        lines += [_sample_eval_line(m, "all", ev.summary[r, j], places) for j, m in numeric]
    return "\n".join(lines) + ("\n" if lines else "")


def render(ev: Evaluation, fmt: str, *, per_topic: bool = False, places: int | None = None,
           zscores: bool = False) -> str:
    """Render in one of :data:`FORMATS` (``zscores``: trec only, see :func:`to_trec`). Two
    measures printing under one name (``iprec_at_recall.0.12,0.125``) are refused, and per
    topic a topic named ``all``: their lines could not be told apart (JSON kept one value);
    so is a string measure (relstring) per topic in sample_eval's format, which has no line
    for it (it went missing without a word)."""
    printed = {}
    for m in ev.measures:
        other = printed.setdefault(m.trec_name, m)
        if other != m:
            from .errors import MeasureError

            raise MeasureError(f"{other.name} and {m.name} both print as {m.trec_name}, so "
                               "their values could not be told apart (JSON would keep one); "
                               "ask for one of them")
    if per_topic and "all" in list(ev.topics):
        from .errors import InputError

        raise InputError("a topic is named 'all', as the summary lines are: its lines per topic "
                         "(-q) would read as the summary's; rename the topic in the qrels and "
                         "runs, or leave out -q")
    strings = [m.name for m in ev.measures if m.value_type == "str"]
    if fmt == "sample_eval" and per_topic and strings:
        from .errors import MeasureError

        raise MeasureError(f"{', '.join(strings)} has no line in sample_eval's format, which "
                           "prints numbers alone; use --format trec, tsv, csv or json for it")
    if fmt == "trec":
        return to_trec(ev, per_topic=per_topic, places=4 if places is None else places,
                       zscores=zscores)
    renderers = {
        "tsv": to_tsv, "csv": to_csv, "json": to_json, "latex": to_latex, "table": to_table,
        "sample_eval": to_sample_eval,
    }
    return renderers[fmt](ev, per_topic=per_topic, places=places)
