"""Estimators for stratified samples of judgments: xinfAP, infNDCG, iP@k (sample_eval.pl).

Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and NDCG",
SIGIR 2008 (paper 000 here); the numbers of NIST's sample_eval.pl (2011 revision), per
reference-semantics §3.1. Per topic and stratum s: N_s qrels entries, n_s sampled (rel >= 0),
r_s relevant (rel > 0); R^ = sum over s with n_s > 0 of r_s N_s / n_s.

One walk over each ranking (its first ``depth`` = 1000 documents; the walk of ``strata_walk.py``)
keeps, before the document at rank k is counted, d_s (documents of s above k), m_s (sampled
among them), q_s (relevant among them) and D = sum d_s. At a relevant document (rel > 0) of
stratum s it adds to SAP_s the estimated precision
1/k + (D/k) * sum_s' (d_s'/D) (q_s' + 1e-5)/(m_s' + 3e-5)  and to the stratum's gain
rel / log2(k + 1). After each rank, E_k = sum_s d_s (q_s + 1e-5)/(m_s + 3e-5)
estimates the relevant documents retrieved so far. Documents outside every stratum count in
k only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ..base import DEFAULT_VARIANCE, Measure, split_values
from ..context import safe_divide
from ..pool_layout import pooled_positions
from ..trec_eval.gain_tables import gains_text, parse_gains
from ..trec_eval.interpolated import ELEVEN_POINTS
from . import strata_walk
from .ap_variance import ap_variance
from .sample_eval_variance import infndcg_variance, xinfap_variance
from .strata_walk import DOCS, SAMPLE_EVAL_DEPTH, SAMPLED

_YKA = "Yilmaz, Kanoulas & Aslam, SIGIR 2008; NIST sample_eval.pl"


@njit(cache=True, nogil=True)
def _log2_ranks(offsets, depth):
    """log2(k + 1) = log(k + 1)/log(2) at every 1-based rank k up to the longest ranking's
    length or ``depth``: the DCG discount, computed once per walk rather than per relevant
    document (the same expression, so the same doubles)."""
    longest = 0
    for s in range(offsets.shape[0] - 1):
        longest = max(longest, offsets[s + 1] - offsets[s])
    out = np.empty(min(longest, depth))
    for i in range(out.shape[0]):
        k = i + 1.0
        out[i] = math.log(k + 1.0) / math.log(2.0)
    return out


@parallel_when_large
def _walk(offsets, pool_offsets, rank, grade, stratum, gain_table, n_strata, depth,
          keep_expected):
    """Per segment: SAP_s, gain_s, d_s, m_s (over the top ``depth``) and, with
    ``keep_expected``, E after every rank (a one-element array otherwise).

    E is summed over the strata in stratum order (the reference's order: interpolated precision
    compares E with r * R^, so E must be bit-identical); the estimated precision above a
    relevant document, (D/k) * sum_s (d_s/D) (q_s + 1e-5)/(m_s + 3e-5), is then E/k (0 when
    D = 0).
    """
    n_seg = pool_offsets.shape[0] - 1
    sap = np.zeros((n_seg, n_strata))
    gain = np.zeros((n_seg, n_strata))
    counted = np.zeros((n_seg, 3, n_strata))
    expected = np.empty(offsets[-1] if keep_expected else 1)
    discount = _log2_ranks(offsets, depth)
    for s in prange(n_seg):
        counts = counted[s]
        first, end = strata_walk.segment(pool_offsets, rank, s, depth)
        a = offsets[s]
        done = 0  # with keep_expected: ranks whose E is written
        e = 0.0
        for x in range(first, end):
            c = stratum[x]
            g = grade[x]
            if g > 0:
                k = rank[x] + 1.0
                sap[s, c] += strata_walk.sample_eval_precision(counts, k)
                gain[s, c] += gain_table[min(g, gain_table.shape[0] - 1)] / discount[rank[x]]
            strata_walk.count(counts, c, g, 1)
            if keep_expected:
                expected[a + done : a + rank[x]] = e  # unpooled ranks: E unchanged
                e = strata_walk.sample_eval_expected(counts)
                expected[a + rank[x]] = e
                done = rank[x] + 1
        if keep_expected:
            expected[a + done : a + min(offsets[s + 1] - a, depth)] = e
    return sap, gain, counted[:, DOCS].copy(), counted[:, SAMPLED].copy(), expected


#: families that read E after every rank; the walk keeps that array (50 MB on TREC-8) only
#: when one of them is evaluated in the same context
READS_EXPECTED = frozenset({"iP", "inum_rel_ret", "iIPrec"})


def walk(ctx, gains: tuple = (), *, expected: bool = False):
    """The shared walk of every sample_eval estimator (cached per context and gain map).

    E after every rank is kept when ``expected`` is asked for or when the context's requested
    measures include a family of :data:`READS_EXPECTED` (so one walk serves them all)."""
    key = ("sample_eval_walk", gains)
    keep = expected or any(m.family in READS_EXPECTED for m in ctx.requested)
    cached = ctx.shared(key, lambda: None)  # (kept E, walk results) once computed
    if cached is not None and (cached[0] or not keep):
        return cached[1]

    def build():
        j = ctx.judgments
        if j.stratum is None:
            raise MeasureError("sampled estimators need judgments built by Judgments.from_qrels")
        table = strata_walk.gain_table(gains, j.stratum_grades.shape[2])
        pool_offsets, rank, grade, stratum = pooled_positions(ctx)
        return _walk(
            ctx.offsets, pool_offsets, rank, grade, stratum, table, len(j.stratum_labels),
            SAMPLE_EVAL_DEPTH, keep,
        )

    return ctx.replace_shared(key, (keep, build()))[1]


def estimated_relevant(ctx) -> tuple[np.ndarray, np.ndarray]:
    """(R^ per topic, R^_s per topic and stratum) from the stratum counts."""
    j = ctx.judgments
    r_s = j.stratum_grades[:, :, 1:].sum(axis=2).astype(np.float64)
    per_stratum = safe_divide(r_s * j.stratum_size, j.stratum_sampled)
    return per_stratum.sum(axis=1), per_stratum


def expected_at(ctx, k: int) -> np.ndarray:
    """E at rank min(k, n, depth) of every segment (0 for an empty ranking)."""
    *_, expected = walk(ctx, expected=True)
    depth = np.minimum(np.minimum(ctx.seg_len, SAMPLE_EVAL_DEPTH), k)
    out = np.zeros(ctx.n_seg)
    has = depth > 0
    out[has] = expected[ctx.offsets[:-1][has] + depth[has] - 1]
    return out


@dataclass(frozen=True)
class XInfAP(Measure):
    """xinfAP: sum over strata s with n_s > 0 of (R^_s / R^) * (SAP_s / r_s); 0 if R^ = 0.

    SAP_s sums the estimated precisions at the relevant retrieved documents of stratum s (see
    the module docstring), r_s counts the sampled relevant documents of s, R^_s = r_s N_s / n_s.
    Printed as ``infAP`` by sample_eval.pl. Yilmaz, Kanoulas & Aslam, SIGIR 2008.
    """

    reads_unjudged_ranks = True
    reads_strata = True

    ratio = True  #: a ratio of estimates: its weak topics matter (measures/reliability/)
    family = "xinfAP"
    trec = "xinfAP"
    estimator = True
    sample_eval_name = "infAP"
    citation = _YKA
    variance_method = (
        "jackknife, covariance or paper (incomplete/ap_variance.py, "
        "incomplete/sample_eval_variance.py)")

    def variance(self, ctx, method=DEFAULT_VARIANCE):
        """``"paper"``: the stratified two-stage formula of ``incomplete/sample_eval_variance.py``
        (precisions at different cut-offs independent); ``"covariance"`` and ``"jackknife"``:
        ``incomplete/ap_variance.py``."""
        if method == "paper":
            return xinfap_variance(ctx, self.compute(ctx))
        return ap_variance(ctx, method, self.compute(ctx))

    def compute(self, ctx):
        sap, *_ = walk(ctx)
        j = ctx.judgments
        r_hat, r_hat_s = estimated_relevant(ctx)
        r_s = j.stratum_grades[:, :, 1:].sum(axis=2)[ctx.seg_topic]
        weight = safe_divide(r_hat_s[ctx.seg_topic], r_hat[ctx.seg_topic][:, None])
        weight[j.stratum_sampled[ctx.seg_topic] == 0] = 0.0
        return (weight * safe_divide(sap, r_s)).sum(axis=1)


def ideal_dcg(ctx, gains: tuple) -> np.ndarray:
    """sample_eval's IDCG per topic: int(R^_g + 0.5) documents of each grade g, highest gain first,
    gain gain(g), discount log2(rank + 1), through rank 1000 (the reference script adds one more
    term per further grade past rank 1000; irsample stops at 1000)."""
    j = ctx.judgments
    n_grades = j.stratum_grades.shape[2]
    table = strata_walk.gain_table(gains, n_grades)
    per_grade = safe_divide(
        j.stratum_grades * j.stratum_size[:, :, None], j.stratum_sampled[:, :, None]
    ).sum(axis=1)
    order = sorted(range(1, n_grades), key=lambda g: -table[g])
    discount = 1.0 / (np.log(np.arange(2, SAMPLE_EVAL_DEPTH + 2)) / np.log(2.0))
    out = np.zeros(ctx.n_topics)
    for t in range(ctx.n_topics):
        start = 0
        for g in order:
            count = min(int(per_grade[t, g] + 0.5), SAMPLE_EVAL_DEPTH - start)
            if count > 0:
                out[t] += table[g] * discount[start : start + count].sum()
                start += count
    return out


@dataclass(frozen=True)
class InfNDCG(Measure):
    """infNDCG: (sum over strata s with m_s > 0 of d_s * gain_s / m_s) / IDCG.

    d_s and m_s count the retrieved documents of stratum s and the sampled ones among them (top
    1000), gain_s the discounted gains of its relevant retrieved documents; IDCG places
    int(R^_g + 0.5) documents of each grade, highest gain first. ``gains`` maps grades to gains
    (sample_eval's ``-G``; default gain = grade). Yilmaz, Kanoulas & Aslam, SIGIR 2008.
    """

    reads_unjudged_ranks = True
    reads_strata = True

    ratio = True  #: a ratio of estimates: its weak topics matter (measures/reliability/)
    gains: tuple = ()
    family = "infNDCG"
    trec = "infNDCG"
    estimator = True
    citation = _YKA

    def __post_init__(self):
        if any(g < 0 for _, g in self.gains):
            raise MeasureError("infNDCG: gains must be >= 0")

    @classmethod
    def from_trec(cls, params, name=None):
        return [cls(gains=parse_gains(params))] if params else [cls()]

    @property
    def canonical_trec_name(self):
        return "infNDCG" if not self.gains else f"infNDCG_{gains_text(self.gains)}"

    variance_method = "stratified expansion, ideal DCG fixed (incomplete/sample_eval_variance.py)"

    def variance(self, ctx, method=None):  # one estimator: ``method`` is ignored
        return infndcg_variance(ctx, self.gains, ideal_dcg(ctx, self.gains))

    def compute(self, ctx):
        _, gain, docs, sampled, _ = walk(ctx, self.gains)
        total = docs.sum(axis=1)
        prob = safe_divide(docs, total[:, None])
        dcg = (prob * safe_divide(gain, sampled)).sum(axis=1)
        return safe_divide(total * dcg, ideal_dcg(ctx, self.gains)[ctx.seg_topic])


@dataclass(frozen=True)
class InfP(Measure):
    """iP@k: E_k / k, the estimated relevant documents in the top k over k (E at the last rank
    when the run is shorter than k). sample_eval prints iP10, iP50, iP1000."""

    reads_unjudged_ranks = True
    reads_strata = True

    k: int | None = None
    family = "iP"
    trec = "iP"
    estimator = True
    trec_defaults = (10, 50, 1000)
    citation = _YKA

    @property
    def sample_eval_name(self):
        """The name sample_eval.pl prints (``iP10``)."""
        return f"iP{self.k}"

    def compute(self, ctx):
        return expected_at(ctx, self.k) / self.k


@dataclass(frozen=True)
class InumRelRet(Measure):
    """Estimated relevant documents retrieved: E at the last rank (within the top 1000); summed."""

    reads_unjudged_ranks = True
    reads_strata = True

    family = "inum_rel_ret"
    trec = "inum_rel_ret"
    estimator = True
    summary = "sum"
    citation = _YKA

    def compute(self, ctx):
        return expected_at(ctx, SAMPLE_EVAL_DEPTH)


@dataclass(frozen=True)
class InumRel(Measure):
    """Estimated relevant documents of the topic: R^ = sum over s with n_s > 0 of r_s N_s / n_s;
    summed over the evaluated topics."""

    reads_strata = True

    family = "inum_rel"
    trec = "inum_rel"
    estimator = True
    summary = "sum"
    citation = _YKA

    def compute(self, ctx):
        r_hat, _ = estimated_relevant(ctx)
        return r_hat[ctx.seg_topic]


@njit(cache=True, nogil=True)
def _interpolated(offsets, expected, r_hat, depth, points):
    """sample_eval's interpolated precision at the recall ``points`` (ascending), per segment.

    Walking up from the last rank with the running maximum of E_k/k, the highest cut-off
    point * R^ still above E_k is assigned that maximum and the walk moves to the next lower
    cut-off: at most one cut-off per rank. Cut-offs above E at the last rank stay 0; cut-offs
    never passed get the maximum over all ranks.
    """
    n_seg = offsets.shape[0] - 1
    n_points = points.shape[0]
    out = np.zeros((n_seg, n_points))
    for s in range(n_seg):
        a = offsets[s]
        n = min(offsets[s + 1] - a, depth)
        final = expected[a + n - 1] if n > 0 else 0.0
        cur = n_points - 1
        while cur >= 0 and points[cur] * r_hat[s] > final:
            cur -= 1
        best = 0.0
        for i in range(n - 1, -1, -1):
            p = expected[a + i] / (i + 1.0)
            if p > best:
                best = p
            if cur >= 0 and points[cur] * r_hat[s] > expected[a + i]:
                out[s, cur] = best
                cur -= 1
        while cur >= 0:
            out[s, cur] = best
            cur -= 1
    return out


@dataclass(frozen=True)
class InfIPrec(Measure):
    """Interpolated precision at recall fraction ``recall`` from estimated counts, as
    sample_eval.pl computes it for the 11 points 0, 0.1, ..., 1 (``iprec@rec0.10``): walking up
    from the last rank with the running maximum of E_k/k, each rank where E_k falls below the
    next cut-off recall * R^ assigns that maximum to it (one cut-off per rank); cut-offs above E
    at the last rank are 0. Only the 11 points are defined, since each depends on the others."""

    reads_unjudged_ranks = True
    reads_strata = True

    recall: float = 0.0
    family = "iIPrec"
    trec = "iprec_rec"
    estimator = True
    at_param = "recall"
    citation = _YKA

    def __post_init__(self):
        if self.recall not in ELEVEN_POINTS:
            raise MeasureError(
                f"iIPrec is defined at recall 0, 0.1, ..., 1 only, not {self.recall}"
            )

    @classmethod
    def from_trec(cls, params, name=None):
        points = ELEVEN_POINTS if params is None else split_values(params, float, cls.trec)
        return [cls(recall=p) for p in points]

    @property
    def canonical_trec_name(self):
        return f"iprec_rec_{self.recall:3.2f}"

    @property
    def sample_eval_name(self):
        """The name sample_eval.pl prints (``iprec@rec0.10``)."""
        return f"iprec@rec{self.recall:4.2f}"

    def compute(self, ctx):
        *_, expected = walk(ctx, expected=True)
        r_hat, _ = estimated_relevant(ctx)
        values = ctx.shared(
            "sample_eval_iprec",
            lambda: _interpolated(
                ctx.offsets, expected, r_hat[ctx.seg_topic], SAMPLE_EVAL_DEPTH,
                np.array(ELEVEN_POINTS),
            ),
        )
        return values[:, ELEVEN_POINTS.index(self.recall)]


