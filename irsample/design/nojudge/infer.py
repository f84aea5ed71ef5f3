"""Inferring relevance judgments from a sample (Aslam & Yilmaz, CIKM 2007, "Inferring document
relevance from incomplete information"; paper 003, "Inferring relevance judgments").

Judge a sample of the pool, estimate every run's AP per topic from it (infAP for a uniform
sample, xinfAP for a stratified one) and the topic's number of relevant documents R^ (sample_eval's
estimator R^ = sum_s r_s N_s / n_s, r_s of the n_s sampled documents of stratum s relevant, N_s
its size); then find relevance *probabilities* p_d of the unjudged pool documents whose expected
APs match the estimates, and round them into qrels.

Expected AP. With independent Bernoulli relevance x_d ~ B(p_d) and R fixed, a run ranking
d_1, d_2, ... has AP = (1/R) sum_i (x_i / i)(1 + sum_{j<i} x_j), so, as E[x_i x_j] = p_i p_j for
i != j and E[x_i^2] = p_i,

    E[AP] = (1/R) sum_i (p_i / i) (1 + sum_{j<i} p_j)                       (paper 003; CIKM 2007)

exactly (tests check it against the 2^n relevance vectors). Here R = R^, judged documents have
p = 1 (grade >= ``rel_level``) or 0, unpooled documents p = 0; ranks run over the whole
ranking. Its gradient is dE/dp_k = (1/R) ((1 + sum_{j<k} p_j)/k + sum_{i>k} p_i / i).

Fit, per topic: minimise sum_s (E[AP_s](p) - AP^_s)^2 over the unjudged pool documents' p in
[0, 1], subject to sum_d p_d = R^ (judged relevant included; the target for the unjudged ones is
clipped to [0, their number]) — the paper's least squares with "total number of relevant
documents is R_est", and "a document has the same relevance in every list" holds by
construction (one p per document). Solved with an augmented Lagrangian on the equality (at most
20 rounds, until |sum p - target| <= 1e-3 max(1, target)) around ``scipy.optimize.minimize``
(L-BFGS-B, box bounds), from the uniform start p = target / n. The problem is non-convex and,
with fewer runs than documents, underdetermined: the fit is *a* minimiser, the nearest in the
sense of L-BFGS-B's path from the uniform start.

Speed: L-BFGS-B's own work per iteration is a few vector operations of length n (the topic's
unjudged pool documents, ~1,700 on TREC-8); scipy >= 1.15 hands them to a multithreaded BLAS,
whose thread start-up then dominates (about 10x slower than one thread for these sizes). The
fits therefore run with BLAS limited to one thread (threadpoolctl), the objective skips the
documents fixed at p = 0 (exactly, see :func:`_live_positions`), and topics, independent fits,
run on a pool of threads: the same arithmetic per topic, so the same path and minimiser.

Rounding into binary qrels: ``threshold`` (relevant iff p >= 0.5), ``top`` (per topic the
round(target) unjudged documents of largest p, ties by docno), or ``random`` (randomised
rounding, relevant with probability p: the tutorial's choice; needs ``rng``).

Inputs: TREC qrels (-1 = pooled, not judged: one stratum) or stratified qrels, whose strata are
simple random samples. Judgments whose inclusion probabilities differ from their stratum's rate
n_s / N_s, such as prels (statAP's per-document probabilities, one stratum) of a stratified
sample, are refused (:func:`check_sample`): both estimators the method rests on, infAP/xinfAP and
R^ above, take the sample as uniform within a stratum; read as one stratum such prels gave R^
16.15 where the same sample's strata give 15.15 (topic 1 of a 2-stratum test sample).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from ...errors import DesignError, InputError
from ...evaluation import evaluate_collection
from ...measures import parse_all
from ...model import JUDGED, POOLED, Collection, Judgments
from ..frame import generator

ROUNDINGS = ("threshold", "top", "random")
#: tighter than scipy's defaults (ftol 2.2e-9, gtol 1e-5): on TREC-8 topics with exact AP
#: inputs the default stops at an RMS error ~2e-3 of E[AP], these reach ~1e-4
_LBFGSB = {"ftol": 1e-12, "gtol": 1e-8, "maxiter": 5000}


def expected_ap(p, r: float) -> float:
    """E[AP] of a ranking whose documents are relevant with probabilities ``p`` (rank order),
    independently, with R = ``r`` (module docstring)."""
    p = np.asarray(p, dtype=np.float64)
    above = np.concatenate([[0.0], np.cumsum(p)[:-1]])
    return float(np.sum(p / np.arange(1, len(p) + 1) * (1.0 + above)) / r)


@njit(cache=True, nogil=True)
def _objective_live(p_free, slot, denominator, offsets, target, inv_r):
    """sum_s (E[AP_s] - target_s)^2 and its gradient in the free p, over the positions of
    :func:`_live_positions`: ``slot`` maps a position to a free variable (< n) or to the fixed
    value n + 1 (p = 1; positions fixed at p = 0, slot n, add exactly 0.0 and are left out),
    ``denominator`` is its rank i + 1 in its ranking."""
    n = p_free.shape[0]
    p = np.empty(n + 2)
    p[:n] = p_free
    p[n] = 0.0
    p[n + 1] = 1.0
    f = 0.0
    grad = np.zeros(n)
    for s in range(offsets.shape[0] - 1):
        a, b = offsets[s], offsets[s + 1]
        above = 0.0
        e = 0.0
        for k in range(a, b):
            pi = p[slot[k]]
            e += pi * (1.0 + above) / denominator[k]
            above += pi
        diff = e * inv_r - target[s]
        f += diff * diff
        scale = 2.0 * diff * inv_r
        below = 0.0
        for k in range(b - 1, a - 1, -1):
            pi = p[slot[k]]
            above -= pi
            v = slot[k]
            if v < n:
                grad[v] += scale * ((1.0 + above) / denominator[k] + below)
            below += pi / denominator[k]
    return f, grad


def check_sample(collection: Collection, judgments: Judgments) -> None:
    """Raise :class:`InputError` naming the file when a judged document's given inclusion
    probability pi_d differs from its stratum's rate n_s / N_s (relative tolerance 1e-9): a
    sample that is not uniform within its strata, such as prels of a stratified or importance
    sample (one stratum, per-document pi), which the estimators here cannot use (module
    docstring). Prels of a uniform sample (pi_d = n / N) and the judgments of a stratified
    design's draw pass."""
    if judgments.inclusion is None:
        return
    judged = np.flatnonzero(judgments.state == JUDGED)
    given = judgments.inclusion[judged]
    topic = collection.tdi_topic[judged]
    stratum = np.maximum(judgments.stratum[judged], 0)
    size = judgments.stratum_size[topic, stratum].astype(np.float64)
    rate = judgments.stratum_sampled[topic, stratum] / np.maximum(size, 1.0)
    bad = np.flatnonzero(np.isfinite(given) & ~np.isclose(given, rate, rtol=1e-9, atol=0.0))
    if len(bad):
        i = bad[0]
        docno = collection.tdi_docno[int(judged[i])].as_py().decode("utf-8", "replace")
        where = ("its stratum" if judgments.stratum_size.shape[1] > 1
                 else "its topic, one stratum,")
        raise InputError(
            f"inclusion probabilities that are not their strata's sampling rates n/N (topic "
            f"{collection.topics[topic[i]]}, document {docno}: {given[i]:g}, where {where} "
            f"judged {judgments.stratum_sampled[topic[i], stratum[i]]} of {int(size[i])}), "
            "as in prels of a stratified or importance sample; relevance inference (Aslam & "
            "Yilmaz 2007) cannot use them: its estimates of AP (infAP, xinfAP) and of R take "
            "each stratum as a uniform sample. It reads TREC qrels (-1: pooled, not judged) and "
            "stratified qrels; write a design's judgments as stratified qrels with 'irsample "
            "merge design.json JUDGED --format strata'",
            judgments.source,
        )


def estimated_relevant(judgments: Judgments, *, rel_level: int = 1) -> np.ndarray:
    """R^ per topic: sum over strata with n_s > 0 of r_s N_s / n_s (sample_eval's estimator; plain
    TREC qrels with -1 entries are one stratum, N = all entries, n = judged ones)."""
    r_s = judgments.stratum_grades[:, :, rel_level:].sum(axis=2).astype(np.float64)
    n_s = judgments.stratum_sampled.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(n_s > 0, r_s * judgments.stratum_size / n_s, 0.0)
    return per.sum(axis=1)


def estimates_from_sample(
    collection: Collection, judgments: Judgments, *, measure: str = "infAP", rel_level: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """(AP^ per run and topic, NaN where not evaluated; R^ per topic) from sampled judgments
    (uniform within strata: :func:`check_sample`)."""
    check_sample(collection, judgments)
    ev = evaluate_collection(collection, judgments, parse_all([measure]), rel_level=rel_level)
    return ev.values[:, :, 0], estimated_relevant(judgments, rel_level=rel_level)


@dataclass(frozen=True, eq=False)
class InferredRelevance:
    """Inferred judgments of a topic's pool: ``tdi`` the pool documents (judged or not, by topic
    then docno), ``probability`` the fitted p (judged: 0/1), ``relevant`` after rounding,
    ``judged`` whether the sample judged the document; per topic ``r_hat``, the ``target`` sum
    of p over unjudged documents and the fit's RMS error of E[AP] against the estimates."""

    collection: Collection
    tdi: np.ndarray
    topic: np.ndarray
    judged: np.ndarray
    grade: np.ndarray  #: the sample's grade (judged) or the inferred 0/1
    probability: np.ndarray
    relevant: np.ndarray
    r_hat: np.ndarray
    target: np.ndarray
    rms: np.ndarray
    rounding: str

    def rounded(self, rounding: str, *, rng=None) -> InferredRelevance:
        """The same fit rounded another way (see :func:`infer_relevance`)."""
        if rounding not in ROUNDINGS:
            raise DesignError(f"rounding must be one of {', '.join(ROUNDINGS)}, not {rounding!r}")
        known_rel = self.judged & (self.probability == 1.0)
        relevant = _round(
            self.probability, self.judged, known_rel, self.topic, self.target, rounding,
            generator(rng) if rounding == "random" else None, self.collection.n_topics,
        )
        grade = np.where(self.judged, self.grade, relevant.astype(np.int64))
        return replace(self, relevant=relevant, grade=grade, rounding=rounding)

    def qrels_text(self) -> str:
        """TREC qrels of the whole pool: judged documents keep their grade, the others 0/1."""
        topics = np.array(self.collection.topics, dtype=object)[self.topic]
        raw = self.collection.tdi_docno.take(self.tdi).to_pylist()
        docnos = [d.decode("utf-8", "surrogateescape") for d in raw]
        return "".join(f"{q} 0 {d} {int(g)}\n" for q, d, g in zip(topics, docnos, self.grade))


def _pool_rows(judgments: Judgments) -> np.ndarray:
    return np.flatnonzero(judgments.state != 0)


def infer_relevance(
    collection: Collection, judgments: Judgments, ap, r_hat, *, rounding: str = "threshold",
    rng=None, rel_level: int = 1, progress=None,
) -> InferredRelevance:
    """Fit p to the AP estimates ``ap[run, topic]`` (NaN: no estimate) and ``r_hat[topic]``, then
    round (module docstring). The pool is every document of ``judgments`` (judged or -1);
    samples that are not uniform within strata are refused (:func:`check_sample`).
    ``progress``, if given, is called with 1 after each topic."""
    check_sample(collection, judgments)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _infer(collection, judgments, ap, r_hat, rounding, rng, rel_level, progress)


def _infer(collection, judgments, ap, r_hat, rounding, rng, rel_level, progress):
    if rounding not in ROUNDINGS:
        raise DesignError(f"rounding must be one of {', '.join(ROUNDINGS)}, not {rounding!r}")
    n_runs, n_topics = collection.n_runs, collection.n_topics
    ap = np.asarray(ap, dtype=np.float64)
    r_hat = np.asarray(r_hat, dtype=np.float64)
    if ap.shape != (n_runs, n_topics) or r_hat.shape != (n_topics,):
        raise DesignError(f"need ap of shape {(n_runs, n_topics)} and r_hat of {(n_topics,)}")
    rng = generator(rng) if rounding == "random" else None
    tdi = _pool_rows(judgments)
    topic = collection.tdi_topic[tdi]
    judged = judgments.state[tdi] == JUDGED
    known_rel = judged & (judgments.grade[tdi] >= rel_level)
    judged_rel = np.bincount(_relevant_topics(judgments, rel_level), minlength=n_topics)
    target = np.zeros(n_topics)
    rms = np.full(n_topics, np.nan)
    free_all = np.flatnonzero(judgments.state == POOLED)
    free_topic = collection.tdi_topic[free_all]
    bounds = np.searchsorted(free_topic, np.arange(n_topics + 1))
    fitted = np.zeros(collection.n_tdi)
    tasks = {}
    for t in range(n_topics):
        free = free_all[bounds[t] : bounds[t + 1]]
        if not judgments.has_topic[t]:
            continue
        target[t] = min(max(r_hat[t] - judged_rel[t], 0.0), float(len(free)))
        runs = np.flatnonzero(np.isfinite(ap[:, t]))
        if len(free) == 0 or r_hat[t] <= 0 or len(runs) == 0:
            continue
        tasks[t] = (collection, judgments, t, free, runs, ap[runs, t], r_hat[t], target[t],
                    rel_level)
    if progress is not None and n_topics - len(tasks):
        progress(n_topics - len(tasks))  # topics with nothing to fit
    # topics are independent fits: threads share them out (the objective releases the GIL)
    workers = max(1, min(len(tasks), os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_fit_topic, *args): t for t, args in tasks.items()}
        for future in as_completed(futures):
            t = futures[future]
            fitted[tasks[t][3]], rms[t] = future.result()
            if progress is not None:
                progress(1)
    prob = np.where(judged, known_rel.astype(np.float64), fitted[tdi])
    relevant = _round(prob, judged, known_rel, topic, target, rounding, rng, n_topics)
    grade = np.where(judged, judgments.grade[tdi], relevant.astype(np.int64))
    return InferredRelevance(
        collection, tdi, topic, judged, grade, prob, relevant, r_hat, target, rms, rounding
    )


def _relevant_topics(judgments: Judgments, rel_level: int) -> np.ndarray:
    """Topic of every judged relevant qrels entry (documents no run retrieved included)."""
    counts = np.diff(judgments.grade_offsets)
    topic = np.repeat(np.arange(len(counts)), counts)
    return topic[judgments.judged_grades >= rel_level]


def _fit_topic(collection, judgments, t, free, runs, estimates, r_hat, target, rel_level):
    import scipy.optimize

    n = len(free)
    local = np.full(collection.n_tdi, -1, dtype=np.int64)
    local[free] = np.arange(n)
    segs = runs * collection.n_topics + t
    starts, stops = collection.rank_offsets[segs], collection.rank_offsets[segs + 1]
    lengths = stops - starts
    before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pos = np.repeat(starts - before, lengths) + np.arange(lengths.sum())
    docs = collection.rank_tdi[pos]
    fixed_rel = (judgments.state[docs] == JUDGED) & (judgments.grade[docs] >= rel_level)
    slot = np.where(local[docs] >= 0, local[docs], np.where(fixed_rel, n + 1, n))
    slot, denominator, offsets = _live_positions(slot, lengths, n)
    inv_r = 1.0 / r_hat
    target_ap = np.ascontiguousarray(estimates)
    scale = max(target, 1.0)
    lam, mu = 0.0, 10.0 * len(runs)
    p = np.full(n, target / n)

    def fun(x):
        f, g = _objective_live(x, slot, denominator, offsets, target_ap, inv_r)
        c = (x.sum() - target) / scale
        return f + lam * c + 0.5 * mu * c * c, g + (lam + mu * c) / scale

    for _ in range(20):
        res = scipy.optimize.minimize(
            fun, p, jac=True, method="L-BFGS-B", bounds=scipy.optimize.Bounds(0.0, 1.0),
            options=_LBFGSB,
        )
        p = np.clip(res.x, 0.0, 1.0)
        c = (p.sum() - target) / scale
        if abs(c) <= 1e-3:
            break
        lam += mu * c
    f, _ = _objective_live(p, slot, denominator, offsets, target_ap, inv_r)
    return p, math.sqrt(f / len(runs))


def _live_positions(slot, lengths, zero):
    """The positions whose p can be non-zero (slot != ``zero``), with the float rank i + 1 of
    each within its ranking, and the offsets of the rankings among them. A document with p = 0
    adds exactly 0.0 to E[AP], to the running sums and to the gradient, so
    :func:`_objective_live` over these positions gives the objective over every position bit for
    bit, with about half the work on TREC-8 (56% of a topic's ranked documents lie outside its
    pool)."""
    ends = np.cumsum(lengths)
    rank = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths, lengths)
    live = slot != zero
    segment = np.repeat(np.arange(len(lengths)), lengths)
    counts = np.bincount(segment[live], minlength=len(lengths))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return slot[live], rank[live] + 1.0, offsets


def _round(prob, judged, known_rel, topic, target, rounding, rng, n_topics):
    free = ~judged
    if rounding == "threshold":
        chosen = free & (prob >= 0.5)
    elif rounding == "random":
        chosen = free & (rng.random(len(prob)) < prob)
    else:
        chosen = np.zeros(len(prob), dtype=bool)
        order = np.lexsort((np.arange(len(prob)), -prob, topic))  # per topic, p descending
        order = order[free[order]]
        start = np.searchsorted(topic[order], np.arange(n_topics))
        rank = np.arange(len(order)) - start[topic[order]]
        take = np.floor(target + 0.5).astype(np.int64)
        chosen[order[rank < take[topic[order]]]] = True
    return known_rel | chosen


@dataclass(frozen=True)
class Agreement:
    """Per-topic precision, recall and F1 of an inferred relevant set against the truth, and
    their means over the topics with at least one truly relevant document."""

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    topics: np.ndarray  #: the topics averaged over

    @property
    def mean(self) -> tuple[float, float, float]:
        return tuple(float(np.mean(v[self.topics])) for v in (self.precision, self.recall, self.f1))


def agreement(
    inferred: InferredRelevance, truth: Judgments, *, rel_level: int = 1,
    unjudged_only: bool = False,
) -> Agreement:
    """Compare the inferred relevant documents with ``truth`` (complete judgments) per topic:
    P = |I & T| / |I| (0 if I is empty), R = |I & T| / |T|, F1 = 2PR / (P + R) (0 if both 0),
    over the pool (``unjudged_only``: over the documents the sample did not judge)."""
    n_topics = inferred.collection.n_topics
    keep = ~inferred.judged if unjudged_only else np.ones(len(inferred.tdi), dtype=bool)
    topic = inferred.topic[keep]
    inf = inferred.relevant[keep]
    docs = inferred.tdi[keep]
    true = (truth.state[docs] == JUDGED) & (truth.grade[docs] >= rel_level)
    hit = np.bincount(topic[inf & true], minlength=n_topics).astype(np.float64)
    n_inf = np.bincount(topic[inf], minlength=n_topics)
    n_true = np.bincount(topic[true], minlength=n_topics)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(n_inf > 0, hit / n_inf, 0.0)
        recall = np.where(n_true > 0, hit / n_true, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return Agreement(precision, recall, f1, np.flatnonzero(n_true > 0))
