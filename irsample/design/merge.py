"""Merging judgments back into a design: the judged sample as the estimators' inputs.

Given a design file (:mod:`irsample.design.record`, with rows) and the assessors' judgments
(TREC qrels lines ``topic iter docno rel`` for judged documents; a partial file is fine; a
negative rel means "not judged yet"), :func:`merge` pairs them and writes any of:

- ``strata``: sample_eval's stratified qrels ``topic iter docno stratum rel`` for every document
  of the design's pool: rel the judgment, or -1 when not judged (not selected, or selected but
  not judged yet). For xinfAP and infNDCG. Only for designs whose strata are samples of equal
  probability (``"strata" in design.merge_formats``: not importance samples).
- ``prels``: statAP's ``topic docno rel method probability`` for every document of the design's
  pool, with its inclusion probability under the design (``method`` is written as 1): rel the
  judgment, or -1 when not judged; with selected documents not judged yet, a design of
  equal-probability strata writes each cell's judged / size, as stratified qrels say
  (:attr:`Merged.probabilities`). statAP reads the judged rows alone (a -1 row is not
  relevant, and statAP sums over relevant ones); the design-based estimators need the rest
  of the pool too (the share of a topic judged, the anticipated variance, the labels' totals
  of ``ppi(M)``), which prels listing the sampled documents alone do not give.
- ``trec``: trec_eval qrels ``topic 0 docno rel`` for every document of the design's pool, -1
  for pooled but not (yet) judged ones. For infAP and the trec_eval measures. The format has
  no place for the inclusion probabilities, nor for a mark saying where the file came from
  (trec_eval reads exactly four fields per line, comment lines included), so the file is an
  honest sample of unknown design: the design-based estimators refuse it unless the user
  assumes a uniform design (right only for a uniform one, :attr:`Merged.uniform`), and
  ``irsample merge`` warns when the design is not uniform (:func:`trec_warning`).

Judgments of documents outside the design's pool, or not selected by its draw, are errors naming
the judgments file and line: they would break the inclusion probabilities. Selected documents
without a judgment are reported (:attr:`Merged.unjudged`). In a design of equal-probability
strata a cell's judged documents are read as a simple random sample of it (valid where the
missing judgments are missing at random, :attr:`Merged.probabilities`); in an importance or
active sample they are written as not sampled, which biases every estimator, so ``merge``
warns (:func:`unjudged_warning`) and ``eval --design`` refuses (:func:`unjudged_refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..io.arrow import binary_of
from ..io.trec import QrelsTable
from ..io.writers import format_prels, format_strata_qrels, format_trec_qrels
from ..model.judgments import varies_within
from .record import DesignRecord

MERGE_FORMATS = ("strata", "prels", "trec")


@dataclass(frozen=True, eq=False)
class Merged:
    """A design record with its judgments: ``rel[i]`` the grade of row i, -1 if not judged."""

    record: DesignRecord
    rel: np.ndarray
    source: str

    @property
    def judged(self) -> np.ndarray:
        return self.rel >= 0

    def _topic_index(self) -> tuple[int, np.ndarray]:
        """(number of topics, each row's topic index)."""
        topics, topic = np.unique(np.asarray(self.record.qid, dtype=object), return_inverse=True)
        return len(topics), topic

    @property
    def uniform(self) -> bool:
        """Whether every pool document of a topic has the same inclusion probability (a
        uniform design, which ``--assume uniform`` reads right from TREC qrels)."""
        n_topics, topic = self._topic_index()
        return not varies_within(topic, self.record.inclusion, n_topics)

    @property
    def unjudged(self) -> np.ndarray:
        """Rows selected for judging that have no judgment (yet)."""
        return self.record.selected & ~self.judged

    @property
    def probabilities(self) -> np.ndarray:
        """Each row's inclusion probability as the judgments stand: the design's, except in
        a design of equal-probability strata with selected documents not judged yet, where a
        (topic, stratum) cell's judged documents are a simple random sample of it at the rate
        judged / size (what stratified qrels say of the same file, and 0 for a cell with
        nothing judged); an importance sample keeps the design's (the report names what is
        missing)."""
        rec = self.record
        if "strata" not in rec.design.merge_formats or not self.unjudged.any():
            return rec.inclusion
        _, topic = self._topic_index()
        cell = topic * (len(rec.labels) or 1) + np.asarray(rec.stratum, dtype=np.int64)
        size = np.bincount(cell)
        judged = np.bincount(cell[self.judged], minlength=len(size))
        return (judged / size)[cell]

    def table(self) -> QrelsTable:
        """The merged judgments as the estimators read them (``eval --design``): every row of
        the design's pool with its judgment (-1: not judged), its stratum (the design's cell,
        which a stratified qrels file keeps too) and its inclusion probability
        (:attr:`probabilities`, which prels keep too): both at once, which no file format
        holds, so that an estimator can draw the design again (``measures/ppi/redraw.py``)."""
        rec = self.record
        return QrelsTable(
            f"{rec.source} with {self.source}", binary_of(rec.qid), binary_of(rec.docno),
            self.rel.astype(np.int64), None,  # rows of the design, not lines of a qrels file
            stratum=binary_of([rec.labels[s] for s in rec.stratum]),
            prob=np.asarray(self.probabilities, dtype=np.float64))

    def render(self, fmt: str) -> bytes:
        """The merged judgments in format ``strata``, ``prels`` or ``trec``."""
        rec = self.record
        if fmt in MERGE_FORMATS and fmt not in rec.design.merge_formats:
            raise InputError(
                f"{rec.design.name} cannot be merged as {fmt}: {rec.design.merge_note}",
                rec.source,
            )
        if fmt == "strata":
            labels = [rec.labels[s] for s in rec.stratum]
            return format_strata_qrels(rec.qid, rec.docno, labels, self.rel)
        if fmt == "prels":
            # every pool row, the unjudged ones with rel -1: the design-based estimators read
            # the whole pool (its share judged, the variance, the labels' totals)
            return format_prels(rec.qid, rec.docno, self.rel, self.probabilities)
        if fmt == "trec":
            return format_trec_qrels(rec.qid, rec.docno, self.rel)
        raise InputError(f"unknown merge format {fmt!r} (one of {', '.join(MERGE_FORMATS)})")

    def report(self) -> str:
        """Per topic: documents in the design, selected, judged, still unjudged (and a total)."""
        rec = self.record
        topics = sorted(set(rec.qid))
        index = {t: i for i, t in enumerate(topics)}
        t = np.array([index[q] for q in rec.qid], dtype=np.int64)
        cols = [np.ones(len(t), bool), rec.selected, self.judged, self.unjudged]
        counts = [np.bincount(t[c], minlength=len(topics)) for c in cols]
        lines = ["topic\tpool\tselected\tjudged\tunjudged"]
        lines += ["\t".join([q] + [str(int(c[i])) for c in counts]) for i, q in enumerate(topics)]
        lines.append("\t".join(["all"] + [str(int(c.sum())) for c in counts]))
        missing = np.flatnonzero(self.unjudged)
        if len(missing):
            shown = ", ".join(f"{rec.qid[i]}/{rec.docno[i]}" for i in missing[:5])
            lines.append(f"# {len(missing)} selected documents are not judged yet (no row in the "
                         f"judgments, or a value below 0): {shown}"
                         + (", ..." if len(missing) > 5 else ""))
        return "\n".join(lines) + "\n"


def trec_warning(merged: Merged) -> str | None:
    """The one line ``irsample merge --format trec`` prints on standard error: a warning when
    the design is not uniform (the estimators would have to guess the probabilities the
    format drops), a note on how to read it otherwise; ``None`` for a census (pi = 1
    everywhere) or a design without formats that carry the probabilities."""
    rec = merged.record
    carry = [f for f in ("strata", "prels") if f in rec.design.merge_formats]
    if not carry or (len(rec.inclusion) and np.all(rec.inclusion >= 1.0)):
        return None  # nothing to keep, or a census: every pool document judged, pi = 1
    use = " or ".join(f"--format {f}" for f in carry)
    if not merged.uniform:
        return (f"irsample: warning: the trec format drops the inclusion probabilities of "
                f"this {rec.design.name} design (not uniform): ht(M), ppi(M) and xinfAP need "
                f"them, and infAP takes the sample as uniform; merge with {use} to keep them")
    return (f"irsample: note: the trec format drops the inclusion probabilities: ht(M) and "
            f"ppi(M) read this uniform design's file with --assume uniform (or merge with "
            f"{use})")


def prels_note(merged: Merged) -> str | None:
    """The line ``irsample merge --format prels`` prints on standard error for a design of
    strata (one that stratified qrels can carry): prels keep each document's pi but not the
    strata, so ht(M) and ppi(M) read them as a planned design's (the sample's own variance, no
    ratio correction for nDCG) and give other numbers than from stratified qrels of the same
    judgments (the demo's CACM round 1, bm25_k0.9_b0.4: ht(nDCG) 0.8045 [0.7383, 0.8571] from
    strata, 0.7913 [0.7553, 0.8232] from prels); ``None`` for other designs, one stratum (a
    uniform design, which prels carry whole) or a census."""
    rec = merged.record
    if ("strata" not in rec.design.merge_formats or np.all(rec.inclusion >= 1.0)
            or len(np.unique(rec.stratum)) < 2):
        return None
    return ("irsample: note: prels keep each document's inclusion probability but not the "
            "design's strata: ht(M) and ppi(M) read them as a planned design's (the sample's "
            "own variance, no ratio correction for nDCG), and their numbers differ from those "
            "of --format strata, which keeps the strata the intervals of stratified designs "
            "were validated on")


def _unjudged_unweighted(merged: Merged) -> int:
    """Selected documents not judged yet in a design whose cells cannot be reweighted (no
    equal-probability strata: an importance or active sample); 0 where there are none."""
    if "strata" in merged.record.design.merge_formats:
        return 0
    return int(merged.unjudged.sum())


def unjudged_refusal(merged: Merged) -> str | None:
    """Why ``eval --design`` (and ``compare``, ``judge-report``) refuse these judgments, or
    None: selected documents of a design with unequal probabilities and no cells to reweight
    (an importance or active sample) are not judged yet, so no estimator has the probabilities
    of the part judged (:func:`unjudged_warning`; CACM, active(mix=0.2) of 1,500, every other
    judgment: ht(num_rel) 327 [222, 433] against 665 with all of them, both intervals ok)."""
    missing = _unjudged_unweighted(merged)
    if not missing:
        return None
    rec = merged.record
    return (f"{missing} of the {int(rec.selected.sum())} documents this {rec.design.name} "
            "design selected are not judged yet: its inclusion probabilities hold for the whole "
            "selection, and the estimators would read the missing documents as not sampled "
            "while weighting the judged ones by the design's probabilities (biased: totals "
            "such as num_rel too low); judge them first (irsample merge -v lists them per "
            "topic)")


def unjudged_warning(merged: Merged) -> str | None:
    """The warning ``irsample merge --format prels`` prints when selected documents of a design
    whose prels keep the design's probabilities (an importance or active sample: unequal pi, no
    cells to reweight) are not judged yet: every estimator reads them as not sampled while
    weighting the judged ones by the design's pi, so estimates of totals come out too low
    (CACM, importance(0.1), half the selection judged: ht(num_rel) 232 against 597 with all of
    it, with no flag). ``None`` when every selected document is judged, or for designs of
    equal-probability strata (their cells are reweighted, :attr:`Merged.probabilities`)."""
    missing = _unjudged_unweighted(merged)
    if not missing:
        return None
    rec = merged.record
    return (f"irsample: warning: {missing} of the {int(rec.selected.sum())} documents this "
            f"{rec.design.name} design selected are not judged yet; the prels keep the design's "
            "inclusion probabilities, so ht(M), ppi(M) and statAP read the missing ones as not "
            "sampled and their estimates are biased (totals such as num_rel too low): judge "
            "them before estimating")


def merge(record: DesignRecord, table: QrelsTable) -> Merged:
    """Pair a design record with judgments ``table`` (see the module docstring)."""
    if not record.has_rows:
        raise InputError(
            "the design file lists no documents (a design to draw, not a drawn sample); run "
            "'irsample sample' first", record.source,
        )
    where = {(q, d): i for i, (q, d) in enumerate(zip(record.qid, record.docno))}
    rel = np.full(len(record.qid), -1, dtype=np.int64)
    qids, docnos = table.qid.to_pylist(), table.docno.to_pylist()
    for j, (q, d) in enumerate(zip(qids, docnos)):
        qs, ds = q.decode("utf-8", "surrogateescape"), d.decode("utf-8", "surrogateescape")
        i = where.get((qs, ds))
        if i is None:
            raise InputError(
                f"document {ds!r} of topic {qs!r} is not in the design's pool "
                f"({record.source})", table.source, int(table.lineno[j]),
            )
        if not record.selected[i] and table.rel[j] >= 0:
            raise InputError(
                f"document {ds!r} of topic {qs!r} was not selected for judging by the design "
                f"({record.source}); its judgment would break the inclusion probabilities",
                table.source, int(table.lineno[j]),
            )
        if table.rel[j] < -1:  # -1 is "not judged yet"; -2 is a typo, not a judgment
            raise InputError(
                f"grade {int(table.rel[j])} of document {ds!r} of topic {qs!r}: a judgment is "
                "a grade >= 0, or -1 for not judged yet", table.source, int(table.lineno[j]),
            )
        rel[i] = int(table.rel[j])
    return Merged(record, rel, table.source)
