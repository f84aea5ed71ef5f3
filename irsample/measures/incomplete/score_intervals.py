"""Score intervals for incomplete judgments: RBP, SDCG@k and P@k as [B, T] (paper 004).

Ravana & Moffat, "Score estimation, incomplete judgments, and significance testing in IR
evaluation", AIRS 2010 (paper 004 here; spec §3.5). For a weighted-precision measure every
retrieved document that is not judged (pooled but unjudged, or unpooled) is unknown:

- B: the score with unknown documents taken as non-relevant (what trec_eval reports);
- T: the score with them taken as relevant (for RBP also the tail beyond the ranking);
- resid = T - B, the residual (Moffat & Zobel 2008);
- point estimates in [B, T], with E the background probability of relevance (default 0.01):
  XS = B; XB = B + E resid; XI = B + resid B / (B + 1 - T), and E when resid = 1 (B = 0,
  T = 1, where the ratio is undefined); XM = (1 - resid) XI + resid XB.

Each family takes ``point`` (B, T, resid, XS, XB, XI, XM; default B) and ``E``. Scores of
several points of one family share one pass over the rankings (cached per evaluation).
:func:`compare_intervals` is the paper's pessimistic comparison of two intervals (of every pair of
runs of an evaluation: :func:`irsample.comparison.interval_outcomes`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import prange

from ..._threads import parallel_when_large
from ...errors import MeasureError
from ...model import JUDGED
from ..base import Measure, format_number
from ..trec_eval.gain_tables import gains_text, rbp_gain_table

_PAPER = (
    "Ravana & Moffat, Score estimation, incomplete judgments, and significance testing in IR "
    "evaluation, AIRS 2010"
)
_MZ = (
    "Moffat & Zobel, Rank-biased precision for measurement of retrieval effectiveness, "
    "TOIS 27(1), 2008"
)

#: the ``point`` values, as the integer codes the kernels use
POINTS = {"B": 0, "T": 1, "resid": 2, "XS": 3, "XB": 4, "XI": 5, "XM": 6}
_B, _T, _RESID, _XS, _XB, _XI, _XM = range(7)
TREC_RBP_P = 0.9  #: trec_eval's default persistence for rbp and rbp_resid


@parallel_when_large
def point_estimates(bottom, resid, point, e):
    """The ``point`` code of every interval [bottom, bottom + resid], clipped into the interval."""
    out = np.empty_like(bottom)
    for s in prange(bottom.shape[0]):
        b = bottom[s]
        r = resid[s]
        t = min(b + r, 1.0)
        if point == _B or point == _XS:
            x = b
        elif point == _T:
            x = t
        elif point == _RESID:
            x = r
        else:
            xb = b + e * r
            xi = e if r >= 1.0 else b + r * b / (b + 1.0 - t)
            x = xb if point == _XB else (xi if point == _XI else (1.0 - r) * xi + r * xb)
            x = min(max(x, b), t)
        out[s] = x
    return out


@dataclass(frozen=True)
class _Interval(Measure):
    """Shared handling of the fields ``point`` and ``E`` that each family declares last, so that
    names list its own parameters first (not registered itself)."""

    def __post_init__(self):
        super().__post_init__()
        canonical = {name.lower(): name for name in POINTS}.get(str(self.point).lower())
        if canonical is None:
            raise MeasureError(
                f"{self.family}: point must be one of {', '.join(POINTS)}, got {self.point!r}"
            )
        object.__setattr__(self, "point", canonical)
        if not (isinstance(self.E, (int, float)) and 0.0 <= self.E <= 1.0):
            raise MeasureError(f"{self.family}: E must be a number in [0, 1], got {self.E!r}")
        object.__setattr__(self, "E", float(self.E))

    def interval(self, ctx) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        """Per segment: B and the residual T - B."""
        raise NotImplementedError

    def compute(self, ctx):
        bottom, resid = self.interval(ctx)
        return point_estimates(bottom, resid, POINTS[self.point], self.E)


# ---- RBP -------------------------------------------------------------------------------------
@parallel_when_large
def _rbp_kernel(offsets, seg_topic, state, grade, table, answered, p, judged_state):
    """Per segment: RBP with unknown documents as gain 0 (trec_eval's summation order), and its
    residual p^n + (1 - p) * sum over unknown ranks i of p^(i-1); 1 exactly when nothing is
    judged; 0 and 0 for a topic the run did not answer."""
    n_seg = offsets.shape[0] - 1
    bottom = np.zeros(n_seg)
    resid = np.zeros(n_seg)
    for s in prange(n_seg):
        if not answered[s]:
            continue
        t = seg_topic[s]
        gained = 0.0
        unknown = 0.0
        judged = 0
        weight = 1.0  # p^(i-1)
        for i in range(offsets[s], offsets[s + 1]):
            if state[i] == judged_state:
                judged += 1
                g = table[t, grade[i]]
                if g != 0:
                    gained += g * weight
            else:
                unknown += weight
            weight *= p
        bottom[s] = (1.0 - p) * gained
        resid[s] = 1.0 if judged == 0 else weight + (1.0 - p) * unknown
    return bottom, resid


def _parse_rbp_params(text: str) -> dict:
    """trec_eval's pair parameters of rbp: ``p=0.8`` and integer gain levels ``1=3,2=9``."""
    p, pairs = TREC_RBP_P, []
    for part in text.split(","):
        name, sep, value = (s.strip() for s in part.partition("="))
        try:
            number = float(value)
            if not sep:
                raise ValueError
            if name == "p":
                p = number
            else:
                pairs.append((int(name), number))
        except ValueError:
            raise MeasureError(
                f"bad rbp parameter {part!r} (expected p=<float> or <level>=<gain>)"
            ) from None
    return {"p": p, "gains": tuple(pairs)}


@dataclass(frozen=True)
class RBP(_Interval):
    """Rank-biased precision: (1 - p) * sum over ranks i of gain_i * p^(i-1), with its interval.

    Gains: the level itself, or ``gains={1:3,2:9}`` (trec_eval ``rbp.p=0.8,1=3,2=9``), rescaled
    into [0, 1] as trec_eval 10 does (see :func:`rbp_gain_table`); unjudged documents gain 0.
    Not affected by the relevance level. B is that value (trec_eval ``rbp``). T takes every
    unknown document (pooled-unjudged or unpooled) and the tail beyond the ranking as gain 1:
    resid = p^n + (1 - p) * sum over unknown ranks i of p^(i-1) (trec_eval ``rbp_resid``, which
    prints 0 instead when no unknown document is retrieved, leaving out p^n). A topic the run
    did not answer (with -c) scores 0 for every point. ``point`` and ``E`` as in paper 004.

    Default p: ``RBP`` is p = 0.8 (ir_measures' default); trec_eval's ``rbp`` and
    ``rbp_resid`` are p = 0.9 (``RBP(p=0.9)``). Moffat & Zobel, TOIS 2008.
    """

    p: float = 0.8
    gains: tuple = ()
    point: str = "B"
    E: float = 0.01
    family = "RBP"
    trec = "rbp"
    trec_typed = ("rbp", "rbp_resid")
    trec_extra = ("rbp_resid",)
    citation = _MZ + "; " + _PAPER + "; trec_eval rbp, rbp_resid"

    def __post_init__(self):
        super().__post_init__()
        if not (isinstance(self.p, (int, float)) and 0.0 <= self.p < 1.0):
            raise MeasureError(f"RBP: persistence p must be in [0, 1), got {self.p!r}")
        object.__setattr__(self, "p", float(self.p))
        for level, _ in self.gains:
            if level < 0:
                raise MeasureError(f"RBP: gain levels must be >= 0, got {level}")

    @classmethod
    def from_trec(cls, params, name=None):
        kwargs = _parse_rbp_params(params) if params else {"p": TREC_RBP_P}
        if name == "rbp_resid":
            if kwargs.get("gains"):
                raise MeasureError("rbp_resid takes only p (gains do not change the residual)")
            return [cls(p=kwargs["p"], point="resid")]
        return [cls(**kwargs)]

    @property
    def trec_family(self):
        if self.E != 0.01:
            return None
        if self.point == "B":
            return "rbp"
        return "rbp_resid" if self.point == "resid" and not self.gains else None

    @property
    def canonical_trec_name(self):
        base = self.trec_family
        if base is None:
            return self.name
        params = [f"p={format_number(self.p)}"] if self.p != TREC_RBP_P else []
        params += [gains_text(self.gains)] if self.gains else []
        return base + ("_" + ",".join(params) if params else "")

    def interval(self, ctx):
        def build():
            answered = ctx.collection.segment_lengths().ravel() > 0
            table = rbp_gain_table(ctx, self.gains)
            return _rbp_kernel(
                ctx.offsets, ctx.seg_topic, ctx.pos_state, ctx.pos_grade, table, answered,
                self.p, JUDGED,
            )

        return ctx.shared(("rbp_interval", self.p, self.gains), build)


# ---- P@k and SDCG@k --------------------------------------------------------------------------
@parallel_when_large
def _cutoff_kernel(offsets, state, grade, level, k, discounted, judged_state):
    """Per segment, over ranks i <= min(k, n) with weight w_i (1, or 1/log2(i + 1)) divided by
    the sum of w_i for i <= k: the weight of judged relevant ranks (B) and of unknown ranks."""
    norm = 0.0
    for j in range(k):
        norm += 1.0 / math.log2(j + 2.0) if discounted else 1.0
    n_seg = offsets.shape[0] - 1
    bottom = np.zeros(n_seg)
    resid = np.zeros(n_seg)
    for s in prange(n_seg):
        a = offsets[s]
        rel = 0.0
        unknown = 0.0
        for j in range(min(k, offsets[s + 1] - a)):
            w = 1.0 / math.log2(j + 2.0) if discounted else 1.0
            if state[a + j] != judged_state:
                unknown += w
            elif grade[a + j] >= level:
                rel += w
        bottom[s] = rel / norm
        resid[s] = unknown / norm
    return bottom, resid


@dataclass(frozen=True)
class _CutoffInterval(_Interval):
    """Binary weighted precision at k with interval (not registered itself)."""

    k: int | None = None
    point: str = "B"
    E: float = 0.01
    discounted = False

    def __post_init__(self):
        super().__post_init__()
        if self.k is None:
            raise MeasureError(f"{self.family} needs a cut-off, e.g. {self.family}@10")

    def interval(self, ctx):
        return ctx.shared(
            (type(self).__name__, self.k, ctx.rel_level),
            lambda: _cutoff_kernel(
                ctx.offsets, ctx.pos_state, ctx.pos_grade, ctx.rel_level, self.k,
                self.discounted, JUDGED,
            ),
        )


@dataclass(frozen=True)
class PInterval(_CutoffInterval):
    """Precision at k as an interval: B = rel(k) / k (trec_eval P_k), T = (rel(k) + u(k)) / k.

    rel(k) counts judged relevant documents (grade >= the relevance level) in the top k, u(k)
    unknown ones (pooled-unjudged or unpooled); resid = u(k) / k. Ranks past the end of a
    shorter ranking hold no document and count as non-relevant, as in P_k, so T = B whenever
    every retrieved document is judged. ``point`` and ``E`` as in paper 004 (Ravana & Moffat
    2010: B = r/k, T = 1 - n/k).
    """

    family = "PInterval"
    citation = _PAPER


@dataclass(frozen=True)
class SDCG(_CutoffInterval):
    """Scaled DCG at k: DCG@k / (DCG of k relevant documents), in [0, 1], with its interval.

    DCG@k = sum over ranks i <= k of rel_i / log2(i + 1) with binary rel_i (judged grade >= the
    relevance level), as paper 004 takes TREC-9's graded judgments; the divisor is
    sum over i <= k of 1 / log2(i + 1). B counts unknown documents (pooled-unjudged or
    unpooled) as non-relevant, T as relevant; ranks past the end of a shorter ranking count as
    non-relevant. ``point`` and ``E`` as in paper 004. Ravana & Moffat, AIRS 2010; DCG:
    Järvelin & Kekäläinen, TOIS 2002.
    """

    family = "SDCG"
    discounted = True
    citation = _PAPER + "; Järvelin & Kekäläinen, TOIS 2002"


# ---- pessimistic comparison --------------------------------------------------------------------
def compare_intervals(low1, high1, low2, high2) -> np.ndarray:
    """Pessimistic interval comparison of paper 004, elementwise (arrays broadcast).

    +1 where system 1 is better (high2 < low1), -1 where system 2 is (high1 < low2), 0 where the
    intervals overlap (inconclusive) or a value is NaN (a topic not evaluated).
    """
    arrays = (np.asarray(x, dtype=np.float64) for x in (low1, high1, low2, high2))
    low1, high1, low2, high2 = np.broadcast_arrays(*arrays)
    if np.any(low1 > high1) or np.any(low2 > high2):
        raise ValueError("an interval has low > high")
    out = np.zeros(low1.shape, dtype=np.int8)
    out[high2 < low1] = 1
    out[high1 < low2] = -1
    return out
