"""The labels' side of ppi(M) under the design: ht(M) run on the automatic labels over new draws
of the design, for ppi's correction centred on the design (``ppi_estimate(...,
centre="design")``, an option) where ht(M)'s interval is its sample's own variance (the
planner's designs).

Why. ppi(M) = ht_y + lambda (M(f) - ht_f) (``ppi/ap_ratio.py``, ``ppi/control_variate.py``)
has the bias b_y - lambda b_f: ht's ratio bias on the humans less lambda times the same
estimator's on the labels, b_f = E[ht_f] - M(f). The rule (``measures/reliability/``, rule 3)
reads ht's estimated bias as ppi's bound, which is right where the labels' ratio is no more
biased than the humans', and on a thin planned sample it need not be: on DL 2019 passages at
5% (planned, kappa 0.7 labels, which call more documents relevant than the assessors) ht_f sat
+0.45 of its spread above M(f), and ppi's unflagged means covered 0.877-0.909 (REPRODUCTION.md,
"Collections we do not have"). An estimate of b_f from the sample moves with the draw's error
(tried: the same section). But the labels are known on the whole pool and the design is known
too, so b_f needs no estimate: the mean c of ht_f over ``REDRAWS`` new draws of the design on
the labels (seeded by :data:`SEED`: the same judgments give the same numbers) computes it, and
with c in place of M(f) the correction lambda (c - ht_f) has mean 0 for a fixed lambda: ppi's
bias is b_y, ht's, which the rule reads. The draws' Monte Carlo error lambda^2 s^2 / B per
segment is added to the variance (the topics are drawn independently, so are the errors).

Why an option and not the default (REPRODUCTION.md, "ppi on the planner's designs: the labels'
bias computed"). It mends the DL 2019 cell: coverage of all intervals 0.899 -> 0.936 (AP) and
0.896 -> 0.920 (nDCG) with the kappa 0.7 labels (100 draws), and changes little with weaker
ones. But it gives up what right labels fix: with labels equal to the truth ppi is then
E[ht_y], with an interval of Monte Carlo width that misses the truth by ht's bias (30 draws of
the same cell: 0.787 of the unflagged AP means covered, M(f) as the centre is exact). Which of
b_y and b_y - lambda b_f is smaller depends on how the labels err, and the sample cannot say.
Adding the computed -lambda b_f to ht's estimated bias in the rule instead (M(f) kept) was
tried and not kept: on the same cell (100 trials, five label sources) it flagged 92-100% of the
ppi(nDCG) means for kappa 0.3-0.7 labels, and those it left covered less than before (kappa
0.3: 0.910 against 0.945).

The design. The judgments must state it whole: every pooled document listed with its stratum and
the judged ones with their inclusion probabilities (a design's draw; ``irsample eval --design
design.json``, ``irsample.load(..., design=)``), each cell (topic x stratum) a simple random
sample of its documents apart from its certain ones (pi = 1: the planner's pilot and the cells
it judges whole), which every draw keeps. So a redraw keeps the certain documents and draws the
cell's other n_h - c_h of its N_h - c_h at random; the sampled documents' pi must be
(n_h - c_h) / (N_h - c_h), as the planner's designs give. Where the judgments cannot be redrawn
(prels, which keep no strata; unequal probabilities within a cell: importance samples; a pooled
document no run retrieved, which has no label) :func:`label_centre` returns None and the
correction keeps M(f). Cost: ``REDRAWS`` evaluations of ht on the labels per measure (1.2 s on
DL 2019's ten synthetic runs, 11 s on TREC-8's 129 runs at planned 10%).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import Judgments
from ..context import safe_divide
from ..ht.anticipated import stratified_srs
from ..ht.estimator import estimate as ht_estimate
from ..ht.inclusion import ht_design, open_cells
from .label_judgments import pool_cells

#: draws of the design per evaluation (Monte Carlo error of the centre: s / 10 per segment)
REDRAWS = 100
#: the draws' seed: a fixed one, so that an evaluation is repeatable
SEED = 20261202


@dataclass(frozen=True, eq=False)
class CellDesign:
    """A stratified design with certain documents, as :func:`cell_design` reads it: per pooled
    document of the collection (``pooled``, tdi) its ``cell``, whether it is ``certain``, and its
    inclusion probability ``pi``; per cell the uncertain documents each draw takes (``take``)."""

    pooled: np.ndarray
    topic: np.ndarray
    stratum: np.ndarray
    cell: np.ndarray
    certain: np.ndarray
    pi: np.ndarray
    take: np.ndarray

    @property
    def start(self) -> np.ndarray:
        """Per cell: the uncertain documents of the cells before it (where its keys start)."""
        uncertain = np.bincount(self.cell[~self.certain], minlength=len(self.take))
        return np.concatenate([[0], np.cumsum(uncertain)[:-1]])

    def draws(self, rng, count: int) -> np.ndarray:
        """(count, pooled) bool: whether each of ``count`` new draws of the design takes each
        pooled document. A cell's uncertain documents are ranked by a random key and its first
        ``take`` drawn: a simple random sample of that size."""
        key = self.cell + rng.random((count, len(self.pooled)))  # cell, then a random order
        key[:, self.certain] = np.inf  # never among a cell's drawn uncertain documents
        place = np.empty(key.shape, dtype=np.int64)
        order = np.argsort(key, axis=1)
        np.put_along_axis(place, order, np.arange(len(self.pooled))[None, :], axis=1)
        place -= self.start[self.cell]  # rank within the cell
        return self.certain | (place < self.take[self.cell])


def cell_design(ctx) -> CellDesign | None:
    """The design of ``ctx``'s judgments to redraw (module docstring), or None where it cannot
    be: ht's design facts give each cell's documents not judged with certainty and how many the
    sample took of them (``inclusion.open_cells``), and whether every sampled one has its cell's
    rate over them (``anticipated.stratified_srs``)."""
    judgments = ctx.judgments
    if not judgments.pool_listed or judgments.stratum is None:
        return None
    c = pool_cells(ctx.collection, judgments)
    if np.any(c.size != c.inside):  # pooled documents no run retrieved: no label
        return None
    d = ht_design(ctx)
    if not stratified_srs(ctx, d):
        return None  # unequal probabilities within a cell (importance samples)
    rest, take = (a.ravel() for a in open_cells(judgments, d))
    certain = c.sampled & (d.tdi_pi[c.pooled] >= 1.0)
    pi = np.where(certain, 1.0, safe_divide(take, rest)[c.cell])
    return CellDesign(c.pooled, c.topic_of[c.pooled], c.stratum, c.cell, certain, pi,
                      take.astype(np.int64))


def corrected_value(m, auto):
    """What ppi's correction subtracts per segment, as a function of an ht estimate on the
    labels: AP its value (``ap_ratio.py``), nDCG the topic's own ratio where its sample holds a
    labelled-relevant document and M(f) ``auto`` where it does not (``control_variate.py``)."""
    if m.family == "AP":
        return lambda e: np.nan_to_num(e.value)
    return lambda e: np.where(e.den > 0, np.nan_to_num(e.plain), auto)


def label_centre(ctx, m, grades, value_of, redraws: int = REDRAWS):
    """``(centre, mc_variance)`` per segment: the mean over ``redraws`` draws of the design of
    ``value_of(estimate)`` (an array per segment) for ht(``m``) on the labels ``grades`` (per
    tdi), and the Monte Carlo variance of that mean; None where the design cannot be redrawn
    (module docstring)."""
    design = cell_design(ctx)
    if design is None:
        return None
    rng = np.random.default_rng(SEED)
    total = np.zeros(ctx.n_seg)
    square = np.zeros(ctx.n_seg)
    labels = ctx.judgments.stratum_labels
    for drawn in design.draws(rng, redraws):
        rel = np.where(drawn, grades[design.pooled], -1)
        judgments = Judgments.from_arrays(
            ctx.collection, design.topic, design.pooled, rel, stratum=design.stratum,
            labels=labels, prob=np.where(drawn, design.pi, 1.0), source="redrawn labels",
            probabilities="design")
        x = value_of(ht_estimate(ctx.on(judgments), m))
        total += x
        square += x * x
    mean = total / redraws
    spread = np.maximum(square / redraws - mean * mean, 0.0) * redraws / max(redraws - 1, 1)
    return mean, spread / redraws
