"""A planned design in its design file: the ``plan`` block, written and read back.

A planned design (:class:`~irsample.design.sampling.allocated.Allocated`: fixed sample sizes
per topic and stratum, topping up documents judged before) has no parseable name, so its design
file (:mod:`irsample.design.record`) carries it in a ``plan`` block, one topic and one judged
document a line::

     "plan": {
      "label": "planned", "edges": [1, 6, 21], "last": 100,   # last: null = open-ended
      "take": {
       "401": [5, 8, 20],                 # per topic: the sample size of each stratum
       "402": [5, 6, 12]
      },
      "before": [
       ["401", "FBIS3-10082"]             # (topic, docno) judged before: always selected
      ]
     },
"""

from __future__ import annotations

import json
import math

from ...errors import DesignError, InputError

PLAN_KEYS = {"label", "edges", "last", "take", "before"}


def plan_json(design) -> str:
    """The ``plan`` block of a planned design (one topic, one judged document a line)."""
    last = None if math.isinf(design.last) else int(design.last)
    head = {"label": design.label, "edges": list(design.edges), "last": last}
    take = ",\n".join(f"   {json.dumps(q)}: {json.dumps(list(k))}" for q, k in design.take)
    before = ",\n".join(f"   {json.dumps(list(p))}" for p in sorted(design.before))
    return (
        ' "plan": {\n  ' + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items())
        + ',\n  "take": {\n' + take + "\n  },\n"
        + ('  "before": [\n' + before + "\n  ]" if before else '  "before": []') + "\n }"
    )


def read_plan(cls, plan, name: str, locate):
    """The planned design (of class ``cls``) of a ``plan`` block, its types checked
    (:class:`InputError` of file ``name`` at the line of the offending entry where
    ``locate(needle, after)`` finds it, else at the ``plan`` key's)."""
    line = locate('"plan":')

    def fail(message, where=None):
        raise InputError(f"plan: {message}", name, where or line)

    def inside(needle):
        return locate(needle, '"plan":')

    if not isinstance(plan, dict):
        fail("must be an object with edges, last, take and before")
    unknown = sorted(set(plan) - PLAN_KEYS)
    if unknown or not {"edges", "take"} <= set(plan):
        fail(f"expected the keys {sorted(PLAN_KEYS)} (edges and take required), "
             f"got {sorted(plan)}")
    edges, last = plan["edges"], plan.get("last")
    shape = inside('"edges":')  # the line of label, edges and last, as written
    if not isinstance(edges, list) or not edges or not all(_is_count(e) for e in edges):
        fail(f"edges must be a list of integers, got {edges!r}", shape)
    if last is not None and not _is_count(last):
        fail(f"last must be an integer or null (open-ended), got {last!r}", shape)
    take = plan["take"]
    if not isinstance(take, dict) or not take:
        fail("take must map topic ids to lists of sample sizes", inside('"take":'))
    for qid, sizes in take.items():
        if not (isinstance(sizes, list) and len(sizes) == len(edges)
                and all(map(_is_count, sizes))):
            fail(f"topic {qid!r}: expected {len(edges)} sample sizes (integers >= 0), one per "
                 f"stratum, got {sizes!r}", inside(json.dumps(qid) + ":"))
    before = plan.get("before", [])
    if not isinstance(before, list):
        fail("before must be a list of [topic, docno] pairs", inside('"before":'))
    first = (inside('"before":') or 0) + 1
    seen = set()
    for i, pair in enumerate(before):
        if not (isinstance(pair, list) and len(pair) == 2
                and all(isinstance(v, str) for v in pair)):
            fail(f"before: expected [topic, docno], got {pair!r}", first + i)
        if tuple(pair) in seen:
            fail(f"before: document {pair[1]!r} of topic {pair[0]!r} listed twice", first + i)
        seen.add(tuple(pair))
    try:
        return cls(tuple(edges), last, take, frozenset(seen), plan.get("label", "planned"))
    except DesignError as exc:  # edges, last or label
        fail(str(exc), shape)


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
