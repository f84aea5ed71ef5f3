"""statAP and its relatives for importance samples of judgments (prels), with variance.

Aslam, Pavlu & Yilmaz, "A statistical method for system evaluation using incomplete
judgments", SIGIR 2006; the Million Query track's statAP_MQ_eval script (reference-semantics
§3.2). Every sampled document d has an inclusion probability pi_d. Per topic:
R^ = sum over sampled relevant documents of 1/pi_d. Walking the ranking with S = the sum of
1/pi over sampled relevant documents above, a sampled relevant document at rank r has
prec_r = (1 + S)/r; statAP = (1/R^) * sum of prec_r / pi_d; stat P@k = S(k)/k (S at the last
rank when the run is shorter); stat R-prec = S(round(R^)) / round(R^), or S(n)/R^ when the run
is shorter than round(R^). A topic with R^ = 0 scores 0 (the script leaves it out).
Documents of methods 0 and 2 have pi = 1 and topics judged by method 0 alone are left out, as
the script's default mixed evaluation does; the prels reader applies both
(``io/strata.py:read_prels``).

The sampling variance of statAP is statAP_MQ_eval_v3's estimator: with y_d = (prec_d - statAP)/pi_d
for retrieved sampled relevant documents and y_d = -statAP/pi_d for the other sampled relevant
documents, and n the sampled documents of the topic,
  var = (sum (1-pi_d) y_d^2 - 2 sum_{d<d'} y_d y_d' / (n-1) + T) / R^2,
where T = sum over retrieved sampled relevant d (rank r_d) of
(sum over those ranked at or above d of (1-pi)/pi^2) / r_d^2; with one sampled document (n = 1)
the cross term, a sum over no pairs, is 0 (the script divides 0 by 0 and stops). The estimate
is not forced to be positive (with few samples the cross term can exceed the rest). Ties
follow trec_eval's order (the script's order is its hash order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from ...errors import InputError
from ...model import JUDGED
from ..base import Measure

_APY = "Aslam, Pavlu & Yilmaz, SIGIR 2006; Million Query track statAP_MQ_eval"


@njit(cache=True, nogil=True)
def _stat_walk(offsets, seg_topic, pos_state, pos_grade, pos_tdi, inclusion,
               rel_offsets, rel_prob, rel_tdi, n_sampled, r_hat, cutoffs):
    """Per segment: statAP, its variance, R-prec and S(k)/k for each cut-off."""
    n_seg = offsets.shape[0] - 1
    retrieved_in = np.full(inclusion.shape[0], -1, dtype=np.int64)  # segment that retrieved it
    ap = np.zeros(n_seg)
    var = np.zeros(n_seg)
    rprec = np.zeros(n_seg)
    prec_at = np.zeros((n_seg, cutoffs.shape[0]))
    for s in range(n_seg):
        t = seg_topic[s]
        rq = r_hat[t]
        if rq <= 0:
            continue
        a = offsets[s]
        n = offsets[s + 1] - a
        rounded = int(rq + 0.5)
        prec = np.empty(n)
        prob = np.empty(n)
        rank = np.empty(n)
        found = 0
        total = 0.0  # S
        up = 0.0
        rp = -1.0
        for i in range(n):
            r = i + 1.0
            d = pos_tdi[a + i]
            if pos_state[a + i] == JUDGED and inclusion[d] > 0 and pos_grade[a + i] > 0:
                pi = inclusion[d]
                p = (1.0 + total) / r
                up += p / pi
                prec[found] = p
                prob[found] = pi
                rank[found] = r
                found += 1
                total += 1.0 / pi
                retrieved_in[d] = s
            for c in range(cutoffs.shape[0]):
                if i + 1 == cutoffs[c]:
                    prec_at[s, c] = total / r
            if i + 1 == rounded:
                rp = total / r
        for c in range(cutoffs.shape[0]):
            if n < cutoffs[c]:
                prec_at[s, c] = total / cutoffs[c]
        rprec[s] = rp if rp >= 0 else total / rq
        stat = up / rq
        ap[s] = stat
        # y values: retrieved relevant first (rank order), then the other sampled relevant
        ys = np.empty(found + rel_offsets[t + 1] - rel_offsets[t])
        ps = np.empty(ys.shape[0])
        for c in range(found):
            ys[c] = (prec[c] - stat) / prob[c]
            ps[c] = prob[c]
        count = found
        for j in range(rel_offsets[t], rel_offsets[t + 1]):
            if rel_tdi[j] >= 0 and retrieved_in[rel_tdi[j]] == s:
                continue
            ys[count] = -stat / rel_prob[j]
            ps[count] = rel_prob[j]
            count += 1
        sum1 = 0.0
        sum2 = 0.0
        for i in range(count - 1, -1, -1):
            sum1 += (1.0 - ps[i]) * ys[i] * ys[i]
            for j in range(i - 1, -1, -1):
                sum2 += 2.0 * ys[i] * ys[j]
        sum3 = 0.0
        sum4 = 0.0
        for i in range(found):
            sum4 += (1.0 - prob[i]) / prob[i] / prob[i]
            sum3 += sum4 / rank[i] / rank[i]
        sampled = n_sampled[t]
        cross = sum2 / (sampled - 1) if sampled > 1 else 0.0  # one sampled: no pair
        var[s] = (sum1 - cross + sum3) / rq / rq
    return ap, var, rprec, prec_at


def stat_walk(ctx, cutoffs: tuple = ()):
    """The shared statAP walk (cached per context and set of cut-offs)."""

    def build():
        j = ctx.judgments
        if j.inclusion is None or not np.isfinite(j.inclusion).any():
            kind = ("stratified qrels" if j.inclusion is None and j.probabilities == "design"
                    else "TREC qrels" if j.inclusion is None else "judgments")
            raise InputError(
                "statAP needs prels (each sampled document's inclusion probability: 'topic "
                f"docno rel method prob' lines), and these are {kind}, without them; write them "
                "from the design with 'irsample merge design.json JUDGED --format prels'",
                j.source)
        return _stat_walk(
            ctx.offsets, ctx.seg_topic, ctx.pos_state, ctx.pos_grade, ctx.pos_tdi,
            np.nan_to_num(j.inclusion, nan=0.0), j.relevant_sampled_offsets,
            j.relevant_sampled_prob, j.relevant_sampled_tdi, j.sampled_count,
            estimated_relevant(ctx), np.array(cutoffs, dtype=np.int64),
        )

    return ctx.shared(("stat_walk", cutoffs), build)


def estimated_relevant(ctx) -> np.ndarray:
    """R^ per topic: the sum of 1/pi over sampled relevant documents."""
    j = ctx.judgments
    inv = 1.0 / j.relevant_sampled_prob
    topic = np.repeat(np.arange(ctx.n_topics), np.diff(j.relevant_sampled_offsets))
    return np.bincount(topic, weights=inv, minlength=ctx.n_topics)


@dataclass(frozen=True)
class _StatEstimate(Measure):
    """An estimate from a statAP-style sample (no ``family``: the registry skips this base);
    ``walk_output`` names the output of :func:`stat_walk` it reports, if it is one."""

    estimator = True
    citation = _APY
    reads_unjudged_ranks = True  #: prec_r = (1 + S)/r reads r in the whole ranking
    walk_output: ClassVar[int]

    def compute(self, ctx):
        return stat_walk(ctx)[self.walk_output]


@dataclass(frozen=True)
class StatAP(_StatEstimate):
    """statAP = (1/R^) * sum over sampled relevant retrieved d of prec_r / pi_d (module docstring).

    Aslam, Pavlu & Yilmaz, SIGIR 2006; the Million Query track's statAP."""

    ratio = True  #: a ratio of estimates: its weak topics matter (measures/reliability/)
    family = "statAP"
    trec = "statAP"
    walk_output = 0
    variance_method = "statAP_MQ_eval v3 estimator (module docstring)"

    def variance(self, ctx, method=None):  # one estimator: ``method`` is ignored
        return stat_walk(ctx)[1]


@dataclass(frozen=True)
class StatAPVariance(_StatEstimate):
    """The sampling variance of statAP estimated from the sample (module docstring); the mean
    over topics of the variances divided by the number of topics is the variance of statMAP."""

    family = "statAP_var"
    trec = "statAP_var"
    walk_output = 1
    summary = "variance_of_mean"


@dataclass(frozen=True)
class StatRprec(_StatEstimate):
    """stat R-precision: S(round(R^)) / round(R^); S(n)/R^ when the run is shorter."""

    family = "statRprec"
    trec = "statRprec"
    walk_output = 2


@dataclass(frozen=True)
class StatP(_StatEstimate):
    """stat P@k = S(k)/k, S the sum of 1/pi over sampled relevant documents in the top k."""

    k: int | None = None
    family = "statP"
    trec = "statP"
    trec_defaults = (10, 30, 100)

    def compute(self, ctx):
        return stat_walk(ctx, (self.k,))[3][:, 0]


@dataclass(frozen=True)
class StatNumRel(_StatEstimate):
    """R^: the estimated number of relevant documents, sum of 1/pi over sampled relevant
    documents; summed over topics."""

    family = "statnum_rel"
    trec = "statnum_rel"
    summary = "sum"

    def compute(self, ctx):
        return estimated_relevant(ctx)[ctx.seg_topic]
