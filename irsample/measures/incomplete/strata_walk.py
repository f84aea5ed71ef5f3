"""The stratum counter walk shared by every estimator of incomplete judgments.

infAP (trec_eval; Yilmaz & Aslam, CIKM 2006), xinfAP and infNDCG (sample_eval.pl; Yilmaz,
Kanoulas & Aslam, SIGIR 2008) and their variances all walk each ranking from the top keeping,
before the document at rank k is counted, per stratum u of the pool

    d_u  documents of u above k (judged or pooled but unjudged),
    m_u  judged documents of u above k,
    q_u  judged relevant documents of u above k (grade >= level),

and do their own work at each judged relevant document (a *cut-off*). Documents outside the
pool (unpooled) count in k only, so the walk visits the pool's positions alone: every kernel
loops over :func:`segment` of the list :func:`~irsample.measures.pool_layout.pooled_positions`
makes (rank, grade, stratum) and updates its counters with :func:`count`.

Two forms of the precision estimated above a cut-off at rank k (0-based j = k - 1) read them:

- :func:`stratified_precision`, sample_eval's PC_k = 1/k + (1/k) sum_u d_u (q_u + eps_r)/(m_u +
  eps_s) (the sum in stratum order, E_k = :func:`expected_relevant`);
- :func:`infap_precision`, trec_eval's one-stratum form 1/k + ((k-1)/k) (d/(k-1)) (q + eps)/(m +
  c eps), 1 at the top, in trec_eval's order of operations (so infAP prints as trec_eval does).
"""

from __future__ import annotations

import numpy as np
from numba import njit

SAMPLE_EVAL_DEPTH = 1000  #: sample_eval's maxResultSize: its estimators read the top 1000
SMOOTH_REL, SMOOTH_SAMPLED = 1e-5, 3e-5  #: sample_eval's smoothing of q_u / m_u
INFAP_EPSILON = 1e-5  #: trec_eval's infAP smoothing constant (eps_s = c * eps)
ALL_RANKS = np.iinfo(np.int64).max  #: a depth that keeps every rank (infAP)

DOCS, SAMPLED, RELEVANT = 0, 1, 2  #: rows of a counter array: d_u, m_u, q_u


@njit(cache=True, nogil=True, inline="always")
def segment(pool_offsets, rank, s, depth):
    """(first, end) of segment ``s``'s pooled entries ranked within the top ``depth``."""
    first = pool_offsets[s]
    end = pool_offsets[s + 1]
    while end > first and rank[end - 1] >= depth:
        end -= 1
    return first, end


@njit(cache=True, nogil=True, inline="always")
def count(counts, c, grade, level):
    """Count a pooled document of stratum ``c`` with ``grade`` (negative if not judged:
    :data:`~irsample.measures.pool_layout.UNJUDGED`): d_c += 1, m_c += judged, q_c += relevant
    at ``level`` (branch-free)."""
    counts[DOCS, c] += 1.0
    counts[SAMPLED, c] += np.float64(grade >= 0)
    counts[RELEVANT, c] += np.float64(grade >= level)


@njit(cache=True, nogil=True, inline="always")
def expected_relevant(counts, eps_rel, eps_sampled):
    """E = sum over strata u, in order, of d_u (q_u + eps_r)/(m_u + eps_s)."""
    e = 0.0
    for u in range(counts.shape[1]):
        e += counts[DOCS, u] * (counts[RELEVANT, u] + eps_rel) / (counts[SAMPLED, u] + eps_sampled)
    return e


@njit(cache=True, nogil=True, inline="always")
def stratified_precision(counts, k, eps_rel, eps_sampled):
    """sample_eval's PC_k = 1/k + E/k at (1-based, float) rank ``k`` (1/k with no pool above:
    then E = 0)."""
    return 1.0 / k + expected_relevant(counts, eps_rel, eps_sampled) / k


@njit(cache=True, nogil=True, inline="always")
def sample_eval_precision(counts, k):
    """:func:`stratified_precision` with sample_eval's smoothing (1e-5, 3e-5)."""
    return stratified_precision(counts, k, SMOOTH_REL, SMOOTH_SAMPLED)


@njit(cache=True, nogil=True, inline="always")
def sample_eval_expected(counts):
    """:func:`expected_relevant` with sample_eval's smoothing: E after the counted ranks."""
    return expected_relevant(counts, SMOOTH_REL, SMOOTH_SAMPLED)


@njit(cache=True, nogil=True, inline="always")
def infap_precision(j, counts, eps, c):
    """trec_eval's E[prec] above the cut-off at 0-based position ``j`` from one-stratum counts:
    1 at the top, else 1/k + ((k-1)/k) (d/(k-1)) (q + eps)/(m + c eps), k = j + 1."""
    if j == 0:
        return 1.0
    fj = float(j)
    return 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (counts[DOCS, 0] / fj) * (
        (counts[RELEVANT, 0] + eps) / (counts[SAMPLED, 0] + c * eps)
    )


def gain_table(gains: tuple, n_grades: int) -> np.ndarray:
    """Gain of each grade 0..n_grades-1: the grade itself unless ``gains`` maps it
    (sample_eval's ``-G``)."""
    table = np.arange(n_grades, dtype=np.float64)
    for level, g in gains:
        if 0 <= level < n_grades:
            table[level] = g
    return table
