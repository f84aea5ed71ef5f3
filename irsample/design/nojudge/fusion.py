"""Condorcet fusion of runs and the pseudo-qrels Nuray & Can build from it.

Condorcet fusion (Nuray & Can, IP&M 2006, §3, after Montague & Aslam, CIKM 2002): per topic,
the candidates are the distinct documents in the top ``depth`` of the fused runs; every run is a
voter ranking its top ``depth`` documents in its order and *all other candidates below them,
tied*. For candidates a, b let V(a, b) be the number of runs ranking a strictly above b; a
*beats* b if V(a, b) > V(b, a) (equal counts: a tie). Candidates are ordered by

    1. wins  (number of candidates they beat), descending;
    2. losses (number of candidates that beat them), ascending;
    3. docno, byte-wise ascending (a deterministic last resort, this module's choice),

the win/loss counting of Nuray & Can's description (a Copeland-style ordering: it needs no
Condorcet winner to exist, and cycles simply tie on wins).

Pseudo-qrels (Nuray & Can §4): the top n_t = max(1, round(fraction * N_t)) of the N_t fused
candidates are relevant, the other candidates non-relevant (judged), every document outside the
candidates unjudged, i.e. non-relevant for AP.

Cost per topic: V is an N_t x N_t count matrix filled in O(m * depth * N_t) by a numba kernel
(m runs); N_t is a few thousand on TREC-8 at depth 100.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...errors import DesignError

_BELOW = np.iinfo(np.int32).max  #: position of a candidate a run did not retrieve


@njit(cache=True, nogil=True)
def _preferences(position):
    """V[a, b] = number of runs (rows of ``position``) with position[r, a] < position[r, b]."""
    m, n = position.shape
    votes = np.zeros((n, n), dtype=np.int32)
    for r in range(m):
        for a in range(n):
            pa = position[r, a]
            if pa == _BELOW:
                continue
            for b in range(n):
                if pa < position[r, b]:
                    votes[a, b] += 1
    return votes


def condorcet_order(
    local_run: np.ndarray, local_rank: np.ndarray, local_doc: np.ndarray, n_docs: int
):
    """Fuse one topic: rows (run index 0..m-1, 1-based rank, candidate index 0..n_docs-1).

    Returns (order, wins, losses): candidate indices best first (ties by candidate index, which
    callers number in docno order) and each candidate's win and loss counts.
    """
    m = int(local_run.max()) + 1 if len(local_run) else 0
    position = np.full((m, n_docs), _BELOW, dtype=np.int32)
    position[local_run, local_doc] = local_rank
    votes = _preferences(position)
    wins = (votes > votes.T).sum(axis=1)
    losses = (votes < votes.T).sum(axis=1)
    order = np.lexsort((np.arange(n_docs), losses, -wins))
    return order, wins, losses


def condorcet_pseudo_qrels(
    pooled, n_topics: int, *, fraction: float
) -> tuple[np.ndarray, np.ndarray]:
    """(candidate ``tdi``, relevant flags): the top ``fraction`` of every topic's Condorcet
    fusion of the pooled top-k positions ``pooled`` (a
    :class:`~irsample.design.nojudge.methods.Pool`:
    arrays ``run``, ``topic``, 1-based ``rank``, ``tdi``; see the module docstring)."""
    if isinstance(fraction, bool) or not 0.0 < float(fraction) <= 1.0:
        raise DesignError(f"condorcet: fraction must be in (0, 1], got {fraction!r}")
    docs_out, rel_out = [], []
    by_topic = np.argsort(pooled.topic, kind="stable")
    bounds = np.searchsorted(pooled.topic[by_topic], np.arange(n_topics + 1))
    for t in range(n_topics):
        rows = by_topic[bounds[t] : bounds[t + 1]]
        if len(rows) == 0:
            continue
        tdi = pooled.tdi[rows]
        candidates, local_doc = np.unique(tdi, return_inverse=True)  # tdi order = docno order
        _, local_run = np.unique(pooled.run[rows], return_inverse=True)
        order, _, _ = condorcet_order(local_run, pooled.rank[rows], local_doc, len(candidates))
        n_rel = max(1, math.floor(float(fraction) * len(candidates) + 0.5))
        relevant = np.zeros(len(candidates), dtype=bool)
        relevant[order[:n_rel]] = True
        docs_out.append(candidates)
        rel_out.append(relevant)
    if not docs_out:
        raise DesignError("condorcet: the runs retrieve no documents")
    return np.concatenate(docs_out), np.concatenate(rel_out)
