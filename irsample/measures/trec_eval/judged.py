"""How much of a ranking is judged: relstring, unj@k (trec_eval 10) and Judged@k."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import JUDGED, POOLED
from ..base import Measure, _atol, single_value

#: relstring characters: judged grades 0-9 as digits, '>' above 9, '.' pooled but unjudged,
#: '-' unpooled (trec_eval m_relstring)
_UNPOOLED_CHAR, _POOLED_CHAR, _HIGH_CHAR = ord("-"), ord("."), ord(">")


@dataclass(frozen=True)
class RelString(Measure):
    """The judgments of the top ``k`` documents as a string (per topic only; not averaged).

    One character per document: its grade 0-9, ``>`` above 9, ``.`` pooled but unjudged,
    ``-`` unpooled. trec_eval ``relstring`` (default k = 10).
    """

    k: int | None = 10
    family = "relstring"
    trec = "relstring"
    trec_typed = ("relstring",)
    summary = "none"
    value_type = "str"
    trec_quoted = True
    citation = "trec_eval relstring"

    @classmethod
    def from_trec(cls, params, name=None):
        if params is None:
            return [cls()]
        return [cls(k=single_value(params, _atol, cls.trec, "cut-off"))]

    @property
    def canonical_trec_name(self):
        return "relstring" if self.k == 10 else f"relstring_{self.k}"

    def compute(self, ctx):
        return np.zeros(ctx.n_seg)

    def compute_strings(self, ctx) -> list[str]:
        """The string of every segment (trec_eval's output puts it in single quotes,
        :attr:`trec_quoted`, which ``formats.to_trec`` adds; the other formats give it bare)."""
        chars = np.full(len(ctx.pos_grade), _UNPOOLED_CHAR, dtype=np.uint8)
        judged = ctx.pos_state == JUDGED
        chars[ctx.pos_state == POOLED] = _POOLED_CHAR
        grade = ctx.pos_grade
        chars[judged] = np.where(grade[judged] > 9, _HIGH_CHAR, 48 + np.clip(grade[judged], 0, 9))
        data = chars.tobytes()
        out = []
        for s in range(ctx.n_seg):
            a = int(ctx.offsets[s])
            b = min(int(ctx.offsets[s + 1]), a + self.k)
            out.append(data[a:b].decode("ascii"))
        return out


def _unjudged_at(ctx, k: int) -> np.ndarray:
    cum_unjudged = ctx.shared(
        "cum_unjudged", lambda: ctx.rank - ctx.cum_judged
    )
    return ctx.at_cutoff(cum_unjudged, k)


@dataclass(frozen=True)
class Unjudged(Measure):
    """unj@k: documents in the top k that are not judged (pooled or not), divided by k.

    A run shorter than k counts its missing ranks as judged (the denominator stays k).
    trec_eval 10 ``unj``.
    """

    k: int | None = None
    family = "unj"
    trec = "unj"
    trec_defaults = (5, 10, 20)
    citation = "trec_eval 10 unj"

    def compute(self, ctx):
        return _unjudged_at(ctx, self.k) / self.k


@dataclass(frozen=True)
class Judged(Measure):
    """Judged@k: judged documents (qrels value >= 0) in the top k, divided by k.

    A run shorter than k is divided by k too, so a short run cannot look fully judged; pooled
    but unjudged (-1) documents are not judged. Compare ir_measures' Judged@k, which counts -1 as
    judged and divides by the run length (see the spec §4). Sakai, "Alternatives to bpref",
    SIGIR 2007 (condensed lists and the judged fraction).
    """

    k: int | None = None
    family = "Judged"
    trec = None
    trec_extra = ("judged",)
    citation = "Sakai, SIGIR 2007; ir_measures Judged@k"

    @property
    def trec_family(self):
        return "judged"

    def compute(self, ctx):
        return (np.minimum(self.k, ctx.seg_len) - _unjudged_at(ctx, self.k)) / self.k
