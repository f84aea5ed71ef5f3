"""Writers for TREC runs and qrels (plain, or gzip when the name ends in ``.gz``), written safely
by :func:`~irsample.io.output.write_atomic`.
"""

from __future__ import annotations

import numpy as np

from .output import write_atomic
from .trec import QrelsTable, RunTable


def _text(values) -> list[str]:
    return [v.decode("utf-8", "surrogateescape") for v in values.to_pylist()]


def format_run(run: RunTable) -> bytes:
    """``qid Q0 docno rank score tag`` lines, ranked per topic in trec_eval order."""
    qids, docnos = _text(run.qid), _text(run.docno)
    order = sorted(range(len(qids)), key=lambda i: (qids[i], -run.score[i], _desc(docnos[i])))
    lines, rank, previous = [], 0, None
    for i in order:
        rank = rank + 1 if qids[i] == previous else 1
        previous = qids[i]
        lines.append(f"{qids[i]} Q0 {docnos[i]} {rank} {float(run.score[i])!r} {run.name}\n")
    return "".join(lines).encode("utf-8", "surrogateescape")


def _desc(text: str):
    """Sort key putting strings in descending byte order."""
    return tuple(-b for b in text.encode("utf-8", "surrogateescape")) + (1,)


def format_qrels(table: QrelsTable) -> bytes:
    """``qid 0 docno rel`` lines in the table's order."""
    rel = np.asarray(table.rel)
    lines = [f"{q} 0 {d} {int(r)}\n" for q, d, r in zip(_text(table.qid), _text(table.docno), rel)]
    return "".join(lines).encode("utf-8", "surrogateescape")


def _encode(lines: list[str]) -> bytes:
    return "".join(lines).encode("utf-8", "surrogateescape")


def format_trec_qrels(qids, docnos, rels) -> bytes:
    """``qid 0 docno rel`` lines (rel -1: pooled, not judged)."""
    return _encode([f"{q} 0 {d} {int(r)}\n" for q, d, r in zip(qids, docnos, rels)])


def format_strata_qrels(qids, docnos, strata, rels) -> bytes:
    """sample_eval's stratified qrels: ``qid 0 docno stratum rel`` lines (rel -1: not sampled)."""
    return _encode(
        [f"{q} 0 {d} {s} {int(r)}\n" for q, d, s, r in zip(qids, docnos, strata, rels)]
    )


def format_prels(qids, docnos, rels, probs, method: int = 1) -> bytes:
    """statAP's prels: ``qid docno rel method probability`` lines; probabilities are written
    with Python's shortest round-trip repr, so reading them back gives the same floats."""
    return _encode([
        f"{q} {d} {int(r)} {method} {float(p)!r}\n"
        for q, d, r, p in zip(qids, docnos, rels, probs)
    ])


def write_run(run: RunTable, path) -> None:
    """Write a run in TREC format (ranks renumbered from the trec_eval order)."""
    write_atomic(path, format_run(run))


def write_qrels(table: QrelsTable, path) -> None:
    """Write qrels in TREC format."""
    write_atomic(path, format_qrels(table))
