"""The organiser's live estimates: each run's ht(M) (and ppi(M) with labels) with its interval
and reliability status, from the judgments so far, computed exactly as ``irsample eval``
computes them on the export.

:func:`compute` takes the current judgments (:func:`~.export.export`, first judgment of a
document), keeps those of the documents the basis round's design selected
(``irsample assess export --design FILE``), merges them with that design
(:func:`irsample.design.merge`, ``irsample merge``) and evaluates with
:func:`irsample.api.estimate` (``irsample eval --ci``). :attr:`Estimates.commands` are the
command lines that give the same numbers.

The basis (:func:`choose_basis`): the latest round that can be estimated. A design without
documents judged before (a first round from ``irsample sample``) is merged as stratified qrels
(``strata``): its strata's sampling rates are those of the documents judged so far, so it is
estimated while it is being judged (in the design order, what is judged of a stratum is a
random subset of its sample; under an adaptive order it is not, and such a round waits
until it is completely judged). A planned round that tops up earlier judgments is merged as
prels (each document's inclusion probability given the earlier judgments), which hold for
its *whole* top-up: it is estimated once it is completely judged; meanwhile the estimates are
the previous round's. A round judged in rounds (the union of the rounds, ``design/sampling/
union.py``) is the same, merged as stratified qrels whose strata are its cells.

:func:`interval_status` reads whether an interval can be trusted from the ``status``/``reason``
columns of the evaluation table (the rule: :mod:`irsample.measures.reliability`, as ``irsample
eval --ci`` prints it); the organiser's page shows each unreliable interval with its reason.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from io import BytesIO

from .export import export

HT_MEASURES = ("ht(AP)", "ht(nDCG)", "ht(P@10)")
PPI_MEASURES = ("ppi(AP)", "ppi(nDCG)", "ppi(P@10)")


def measures_for(labels) -> tuple[str, ...]:
    """The measures estimated: ht of AP, nDCG and P@10, and their ppi forms with labels."""
    return HT_MEASURES + (PPI_MEASURES if labels else ())


@dataclass(frozen=True)
class Basis:
    """The round whose design the estimates use, how it is merged, and why it was chosen."""

    round: int
    design: str
    format: str  #: ``strata`` or ``prels``
    selected: frozenset  #: (topic, docno) the design selected
    note: str = ""


@dataclass(frozen=True)
class Cell:
    value: float
    low: float
    high: float
    status: str
    reason: str = ""


@dataclass
class Estimates:
    """One computation: per run and measure a :class:`Cell`; the basis; the judgments it used."""

    basis: Basis | None
    measures: tuple[str, ...]
    rows: list = field(default_factory=list)  #: (run, {measure: Cell}), best first
    judgments: int = 0
    used: int = 0  #: documents with a judgment in the basis design
    at: float = 0.0
    error: str = ""
    commands: list = field(default_factory=list)


def interval_status(frame) -> list[tuple[str, str]]:
    """(status, reason) of each row of an evaluation's summary table: ``ok``, or
    ``unreliable`` with the reason. The table's own ``status`` and ``reason`` columns decide
    (every evaluation with intervals has them); a table without them (made by hand) gives
    ``ok`` unless the interval is not finite (an undefined variance)."""
    columns = set(frame.columns)
    out = []
    for row in frame.itertuples(index=False):
        if "status" in columns:
            reason = getattr(row, "reason", "") if "reason" in columns else ""
            missing = reason is None or (isinstance(reason, float) and math.isnan(reason))
            out.append((str(row.status), "" if missing else str(reason)))
        elif not (math.isfinite(row.low) and math.isfinite(row.high)):
            out.append(("unreliable", "no interval: the variance is undefined on this sample"))
        else:
            out.append(("ok", ""))
    return out


def choose_basis(rounds: list[dict], judged: set, read, *,
                 adaptive: str | None = None) -> tuple[Basis | None, str]:
    """The latest round that can be estimated (module docstring) and a note on the rounds
    passed over; ``read(path)`` reads a design record (cached by the caller). Under an
    adaptive order (``adaptive``: its name) a first round is estimated only once it is
    completely judged: until then what is judged of a stratum is the method's choice (the
    documents it expects to be relevant first), not a random subset, and the stratum's rate
    judged/size would weigh it as one (a total too high, with no flag)."""
    from .order import to_judge

    notes = []
    for entry in reversed(rounds):
        record = read(entry["design"])
        before = record.design.judged_before()
        selected = frozenset((record.qid[i], record.docno[i]) for i in range(len(record.qid))
                             if record.selected[i])
        left = sum((r[0], r[1]) not in judged for r in to_judge(record)) if (
            before or adaptive) else 0
        if not before and left:
            return None, (f"Round {entry['round']} is handed out in the adaptive order "
                          f"'{adaptive}' ({left} documents left): what is judged of a stratum "
                          "is the method's choice, not a random subset, so it is estimated "
                          "once it is completely judged.")
        if not before:
            return Basis(entry["round"], entry["design"], "strata", selected,
                         " ".join(notes)), ""
        if before - judged:
            notes.append(f"Round {entry['round']} tops up {len(before - judged)} documents "
                         "judged outside this database: it cannot be estimated here.")
        elif left:
            notes.append(f"Round {entry['round']} is in progress ({left} documents left): its "
                         "inclusion probabilities hold for its whole sample, so it is estimated "
                         "once it is complete; until then these are the previous round's.")
        else:  # a union of rounds: its cells are strata (n_h / N_h, exact second order)
            fmt = "strata" if record.design.kind == "rounds" else "prels"
            return Basis(entry["round"], entry["design"], fmt, selected, " ".join(notes)), ""
    return None, " ".join(notes)


def compute(db, rounds: list[dict], runs, *, labels=None, ci: float = 0.95,
            rel_level: int = 1, read=None, adaptive: str | None = None) -> Estimates:
    """The live estimates from the database file ``db`` (module docstring); errors end up in
    :attr:`Estimates.error`, never raised. ``adaptive``: the name of the adaptive order the
    documents are handed out in, if any (:func:`choose_basis`)."""
    from ..api import estimate
    from ..design import DesignRecord, merge
    from ..errors import IrsampleError
    from ..io import load_qrels
    from .store import connect

    read = read or DesignRecord.read
    measures = measures_for(labels)
    con = connect(db, readonly=True)
    try:
        con.execute("BEGIN")  # one snapshot of the database
        exported = export(con)
        con.execute("COMMIT")
    finally:
        con.close()
    lines = exported.qrels.splitlines(keepends=True)
    judged = {(x.split()[0], x.split()[2]) for x in lines}
    out = Estimates(None, measures, judgments=exported.judgments, at=time.time())
    try:
        out.basis, note = choose_basis(rounds, judged, read, adaptive=adaptive)
        if out.basis is None:
            out.error = note or "no round can be estimated"
            return out
        kept = [x for x in lines if (x.split()[0], x.split()[2]) in out.basis.selected]
        out.used = len(kept)
        if not kept:
            out.error = "no judgments yet"
            return out
        table = load_qrels(BytesIO("".join(kept).encode("utf-8", "surrogateescape")), "trec")
        merged = merge(read(out.basis.design), table).render(out.basis.format)
        ev = estimate(BytesIO(merged), list(map(str, runs)), list(measures), ci=ci,
                      qrels_format=out.basis.format, rel_level=rel_level, auto_labels=labels)
        frame = ev.frame(per_topic=False)
    except (IrsampleError, ValueError, KeyError) as exc:
        out.error = f"the estimates could not be computed: {exc}"
        return out
    cells: dict[str, dict] = {}
    for row, (status, reason) in zip(frame.itertuples(index=False), interval_status(frame)):
        cells.setdefault(row.run, {})[row.measure] = Cell(float(row.value), float(row.low),
                                                          float(row.high), status, reason)
    first = measures[0]
    out.rows = sorted(cells.items(), key=lambda kv: -_value(kv[1].get(first)))
    out.commands = commands(db, out.basis, runs, measures, ci, labels, rel_level)
    return out


def _value(cell) -> float:
    return cell.value if cell is not None and math.isfinite(cell.value) else -math.inf


def commands(db, basis: Basis, runs, measures, ci, labels, rel_level) -> list[str]:
    """The command lines that compute the same numbers from the database, each path and
    measure quoted for a POSIX shell (a path with a space or a measure with parentheses
    pastes as one argument)."""
    import shlex

    merged = f"merged.{basis.format}"
    ms = " ".join(f"-m {shlex.quote(str(m))}" for m in measures)
    extra = (f" --auto-labels {shlex.quote(str(labels))}" if labels else "") + (
        f" -l {rel_level}" if rel_level != 1 else "")
    design, paths = shlex.quote(str(basis.design)), " ".join(
        shlex.quote(str(r)) for r in runs)
    return [f"irsample assess export --db {shlex.quote(str(db))} --design {design} -o "
            "judged.qrels",
            f"irsample merge {design} judged.qrels --format {basis.format} -o {merged}",
            f"irsample eval --ci {ci:g} {merged} {paths} {ms}{extra}"]
