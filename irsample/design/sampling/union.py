"""The union of judging rounds as a design: what ``irsample plan --next-round`` writes.

After round 1 (a design whose strata are simple random samples) and k more rounds
(:mod:`irsample.design.rounds`), the judged documents are a stratified simple random sample
over the cells h = (topic, round-1 stratum, best-rank band): n_h of N_h judged, so

    pi_d = n_h / N_h    for every document d of cell h (judged or not),

exact because each round drew its j_h from the N_h - m_h documents left with j_h fixed by
counts only (the cross-fitted allocation). A design file of the union carries it per row: the
stratum column names the cell's kind (``1-10/11-30``: round-1 stratum ``1-10``, best ranks
11-30; with the topic, the cell) and the inclusion column its pi. So ``irsample merge --format
strata`` writes the cells as sample_eval strata, whose n_h / N_h the estimators read back, and
``--format prels`` the same pi per judged document.

The union cannot be drawn again (it is a record of rounds judged one after the other), so it
has no parseable name; its design file carries it in a ``rounds`` block::

     "rounds": {"first": "2strata@600", "fold_seed": 7, "spent": [600, 300],
      "before": [
       ["1", "10410"]                  # (topic, docno) judged before the last round
      ]
     },

``first``: round 1's design; ``fold_seed``: the seed the topics' folds come from
(:func:`irsample.design.rounds.fold_of`; later rounds reuse it); ``spent``: new judgments per
round; ``before``: the documents judged before the last round (left out of its to-judge list).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...errors import DesignError, InputError
from ..frame import Design, Sample

KEYS = {"first", "fold_seed", "spent", "before"}


@dataclass(frozen=True)
class RoundsUnion(Design):
    """The judged union of round 1 (``first``, a design name) and the later rounds (``spent``:
    new judgments per round, round 1 first), its topics' folds drawn from ``fold_seed``;
    ``before``: (topic, docno) judged before the last round. A record of judgments, not a
    design to draw (:meth:`select` refuses)."""

    kind = "rounds"
    takes_budget = False
    file_key = "rounds"

    first: str
    fold_seed: int
    spent: tuple[int, ...]
    before: frozenset[tuple[str, str]] = frozenset()

    @property
    def name(self) -> str:
        return f"rounds({self.first}{''.join(f',+{n}' for n in self.spent[1:])})"

    @classmethod
    def from_spec(cls, spec: str, budget):
        raise DesignError(f"rounds({spec}) is the union of judged rounds: it is read from its "
                          "design file, not from its name")

    def judged_before(self) -> frozenset[tuple[str, str]]:
        return self.before

    def select(self, units, *, rng) -> Sample:
        raise DesignError(f"{self.name} is the union of judged rounds, not a design to draw: "
                          "plan the next round with `irsample plan RUNS --next-round "
                          "DIR/design.json --judged QRELS`")

    def file_block(self) -> str:
        head = {"first": self.first, "fold_seed": self.fold_seed, "spent": list(self.spent)}
        before = ",\n".join(f"   {json.dumps(list(p))}" for p in sorted(self.before))
        return (' "rounds": {' + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}"
                                           for k, v in head.items())
                + (',\n  "before": [\n' + before + "\n  ]" if before else ', "before": []')
                + "\n }")

    @classmethod
    def from_file_block(cls, block, source: str, locate) -> RoundsUnion:
        line = locate('"rounds":')

        def fail(message, where=None):
            raise InputError(f"rounds: {message}", source, where or line)

        if not isinstance(block, dict) or set(block) - KEYS or not {"first", "fold_seed",
                                                                    "spent"} <= set(block):
            fail(f"expected the keys {sorted(KEYS)}, got "
                 f"{sorted(block) if isinstance(block, dict) else type(block).__name__}")
        first, seed, spent = block["first"], block["fold_seed"], block["spent"]
        if not isinstance(first, str):
            fail(f"first must be round 1's design name, got {first!r}")
        if not _is_count(seed):
            fail(f"fold_seed must be an integer >= 0, got {seed!r}")
        if not (isinstance(spent, list) and spent and all(map(_is_count, spent))):
            fail(f"spent must list the judgments of every round (integers >= 0), got {spent!r}")
        before = block.get("before", [])
        start = (locate('"before":', '"rounds":') or line) + 1
        if not isinstance(before, list):
            fail("before must be a list of [topic, docno] pairs")
        pairs = set()
        for i, pair in enumerate(before):
            if not (isinstance(pair, list) and len(pair) == 2
                    and all(isinstance(v, str) for v in pair)):
                fail(f"before: expected [topic, docno], got {pair!r}", start + i)
            pairs.add(tuple(pair))
        return cls(first, seed, tuple(spent), frozenset(pairs))


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
