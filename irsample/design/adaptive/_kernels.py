"""Numba kernels of the adaptive judging methods (algorithms in
:mod:`irsample.design.adaptive.methods`).

Documents are ``tdi`` (the collection's per-topic document ids); a run's list for a topic is the
segment ``rank_tdi[start : start + length]`` (trec_eval order, truncated at the depth considered).
``known[tdi]`` is the grade of a judged document, :data:`UNJUDGED` for the others, or
:data:`ASSUMED` while a batch is planned (a proposed document counts as relevant until judged).
"""

from __future__ import annotations

import numpy as np
from numba import njit

UNJUDGED = -1
ASSUMED = 1 << 40  #: provisional grade of a proposed document while a batch is planned


@njit(cache=True, nogil=True)
def candidate_mask(starts, lengths, rank_tdi, n_tdi):
    """Whether each ``tdi`` is in some list (``starts``/``lengths`` of any shape, same shape)."""
    mask = np.zeros(n_tdi, np.bool_)
    s, n = starts.ravel(), lengths.ravel()
    for j in range(s.shape[0]):
        for i in range(s[j], s[j] + n[j]):
            mask[rank_tdi[i]] = True
    return mask


@njit(cache=True, nogil=True)
def depth_order(starts, lengths, rank_tdi, seen):
    """The documents of the lists in pooling order: rank 1 of every list (in list order), then
    rank 2, ...; each document at its first occurrence. ``seen`` (all False) is scratch."""
    out = np.empty(lengths.sum(), np.int64)
    n = 0
    for i in range(lengths.max() if lengths.shape[0] else 0):
        for s in range(starts.shape[0]):
            if i < lengths[s]:
                d = rank_tdi[starts[s] + i]
                if not seen[d]:
                    seen[d] = True
                    out[n] = d
                    n += 1
    for j in range(n):
        seen[out[j]] = False
    return out[:n]


# ---------------------------------------------------------------------------------------- Hedge


@njit(cache=True, nogil=True)
def hedge_entries(starts, lengths, rank_tdi, local_of, base, n_local, harmonic):
    """Per local document ``local_of[tdi - base]``: the runs that retrieved it and the gain
    v_s(d) = H(Z_s) - H(r - 1) of a relevant document at rank r of a list of Z_s documents, as
    CSR ``(offsets, run, gain)`` with the runs of a document in ascending order."""
    offsets = np.zeros(n_local + 1, np.int64)
    for s in range(starts.shape[0]):
        for i in range(lengths[s]):
            offsets[local_of[rank_tdi[starts[s] + i] - base] + 1] += 1
    for d in range(n_local):
        offsets[d + 1] += offsets[d]
    fill = offsets[:-1].copy()
    run = np.empty(offsets[n_local], np.int64)
    gain = np.empty(offsets[n_local], np.float64)
    for s in range(starts.shape[0]):
        for i in range(lengths[s]):
            d = local_of[rank_tdi[starts[s] + i] - base]
            run[fill[d]] = s
            gain[fill[d]] = harmonic[lengths[s]] - harmonic[i]
            fill[d] += 1
    return offsets, run, gain


@njit(cache=True, nogil=True)
def _score(d, offsets, run, gain, w):
    total = 0.0
    for j in range(offsets[d], offsets[d + 1]):
        total += w[run[j]] * gain[j]
    return total


@njit(cache=True, nogil=True)
def hedge_scores(offsets, run, gain, logw, taken):
    """score(d) = sum_s w_s v_s(d) over the runs s that retrieved d, w = exp(logw - max logw);
    -1 for documents already ``taken``."""
    w = np.exp(logw - logw.max())
    score = np.full(offsets.shape[0] - 1, -1.0)
    for d in range(score.shape[0]):
        if not taken[d]:
            score[d] = _score(d, offsets, run, gain, w)
    return score


@njit(cache=True, nogil=True)
def hedge_best(offsets, run, gain, logw, taken, key):
    """The untaken document of largest score (ties: smallest ``key``), or -1."""
    w = np.exp(logw - logw.max())
    best, best_score = -1, -1.0
    for d in range(offsets.shape[0] - 1):
        if taken[d]:
            continue
        score = _score(d, offsets, run, gain, w)
        if score > best_score or (score == best_score and key[d] < key[best]):
            best, best_score = d, score
    return best


@njit(cache=True, nogil=True)
def hedge_update(docs, relevant, offsets, run, gain, log_beta, logw):
    """Hedge's update for judged local documents: w_s <- w_s * beta^loss with loss
    ``+v_s(d)`` (non-relevant) or ``-v_s(d)`` (relevant); runs without d lose nothing."""
    for k in range(docs.shape[0]):
        d = docs[k]
        sign = -1.0 if relevant[k] else 1.0
        for j in range(offsets[d], offsets[d + 1]):
            logw[run[j]] += sign * gain[j] * log_beta


# ------------------------------------------------------------------------------- move-to-front


@njit(cache=True, nogil=True)
def _before(a, b, prio, stamp, rkey):
    """Whether list ``a`` comes before ``b``: higher priority, then the more recent relevant
    document, then the smaller random key."""
    if prio[a] != prio[b]:
        return prio[a] > prio[b]
    if stamp[a] != stamp[b]:
        return stamp[a] > stamp[b]
    return rkey[a] < rkey[b]


@njit(cache=True, nogil=True)
def _sift_down(heap, size, i, prio, stamp, rkey):
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        if child + 1 < size and _before(heap[child + 1], heap[child], prio, stamp, rkey):
            child += 1
        if not _before(heap[child], heap[i], prio, stamp, rkey):
            return
        heap[i], heap[child] = heap[child], heap[i]
        i = child


@njit(cache=True, nogil=True)
def mtf_walk(state, heap, prio, stamp, rkey, ptr, start, length, topic, rank_tdi, known, caps,
             rel_level):
    """Advance a move-to-front queue to the next document to judge; returns ``(list, tdi)`` or
    ``(-1, -1)`` when every list is exhausted or its topic has no budget left.

    ``state = [heap size, clock]``. The front list's next document is examined: judged (or
    assumed) documents cost nothing: relevant ones set the list's priority to the maximum (0)
    and stamp it with the clock, non-relevant ones lower it by one; the list moves back in the
    heap accordingly. An unjudged document is returned without advancing (it is examined, for
    free, once judged). Lists whose topic has no budget left (``caps``) leave the queue.
    """
    while state[0] > 0:
        lst = heap[0]
        d = -1
        if ptr[lst] < length[lst]:
            d = rank_tdi[start[lst] + ptr[lst]]
            if known[d] < 0 and caps[topic[lst]] > 0:
                return lst, d
        if d < 0 or known[d] < 0:  # exhausted, or its topic is out of budget: drop the list
            state[0] -= 1
            heap[0] = heap[state[0]]
            _sift_down(heap, state[0], 0, prio, stamp, rkey)
            continue
        ptr[lst] += 1
        state[1] += 1
        if known[d] >= rel_level:
            prio[lst] = 0
            stamp[lst] = state[1]
        else:
            prio[lst] -= 1
        _sift_down(heap, state[0], 0, prio, stamp, rkey)
    return -1, -1
