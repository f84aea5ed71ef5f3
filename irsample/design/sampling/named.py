"""Designs by name: paper 002's named strategies, and parsing of design names and specs.

Voorhees, "The effect of sampling strategy on inferred measures", SIGIR 2014 (paper 002),
compares four kinds of strategy at similar judgment-set sizes:

- ``pool``: one exhaustively judged shallow stratum; ``pool15`` and ``pool25`` judge the depth-15
  and depth-25 pools (``poolK`` for any K).
- ``1stratum``: one stratum sampled uniformly from the top 100 ranks.
- ``2strata``: an exhaustively judged top-10 stratum plus a moderate-depth, moderate-rate one.
- ``3strata``: top 10 exhaustive, a moderate stratum, and a deep, very sparsely sampled one (the
  TREC 2011 Medical Records strategy).

The text we have of paper 002 gives these shapes but not the rates (its strategy table did not
survive extraction, and we found no other copy). The rates below are therefore ours, chosen on
TREC-8 with the paper's protocol (the 71 pooled runs split in random halves, one half pooled):
the sampled strategies land near pool25's judgment-set size (the paper: "depth 25 is a better
match for the other methods' judgment set sizes on that collection") and 1stratum is the largest
(as in the paper). See ``benchmarks/strategy_sizes_trec8.py`` for the sizes they give.

Design names (each design's :attr:`~irsample.design.frame.Design.name` parses back to it):
``KIND(SPEC)`` for every registered design kind (:data:`~irsample.design.frame.DESIGNS`:
``uniform(0.1)``, ``stratified(1-10:1,11-100:0.2)``, ``terabyte(10)``, ``importance(0.1)``,
...; each class reads its own SPEC), the bare strata spec ``1-10:1,11-100:0.2``, or a preset
name; any of them followed by ``@B`` (a budget of B judgments in total) or ``@B/topic`` (per
topic).
"""

from __future__ import annotations

import re

from ...errors import DesignError
from ..frame import DESIGNS, Design
from .budget import Budget
from .stratified import Stratified, parse_strata

#: paper 002's strategies as strata specs (rates ours; see the module docstring)
PRESETS: dict[str, str] = {
    "pool15": "1-15:1",
    "pool25": "1-25:1",
    "1stratum": "1-100:0.3",
    "2strata": "1-10:1,11-100:0.2",
    "3strata": "1-10:1,11-30:0.4,31-100:0.1",
}

_CALL = re.compile(r"^([a-z][a-z0-9_]*)\((.*)\)$")
_PLANNED = re.compile(r"^[A-Za-z][\w.-]*\(\s*\d+-\d*(\s*,\s*\d+-\d*)*\s*\)$")


def preset(name: str, *, budget=None) -> Stratified:
    """A named strategy (``pool15``, ``2strata``, ``poolK``) as a :class:`Stratified` design."""
    m = re.fullmatch(r"pool(\d+)", name)
    if name in PRESETS:
        spec = PRESETS[name]
    elif m and int(m.group(1)) >= 1:
        spec = f"1-{int(m.group(1))}:1"
    else:
        raise DesignError(f"unknown strategy {name!r} (known: {', '.join(PRESETS)}, poolK)")
    return Stratified(parse_strata(spec), budget, alias=name)


def parse_design(text: str) -> Design:
    """A design from its name (see the module docstring).

    Parameters
    ----------
    text : str
        ``uniform(F)``, ``stratified(SPEC)`` or a bare strata spec, ``terabyte(K)``,
        ``importance(F)``, a preset (``pool15``, ``2strata``, ``poolK``, ...), optionally
        followed by ``@B`` (a budget of B judgments) or ``@B/topic``.

    Returns
    -------
    Design
        Its :attr:`~irsample.design.frame.Design.name` parses back to it.

    Raises
    ------
    DesignError
        A name that is none of these.

    Examples
    --------
    >>> from irsample.design import parse_design
    >>> parse_design("1-10:1,11-100:0.2").name
    'stratified(1-10:1,11-100:0.2)'
    >>> parse_design("terabyte(10)@50/topic").name
    'terabyte(10)@50/topic'
    >>> parse_design("2strata@2000").strata[1]
    RankStratum(first=11, last=100.0, rate=0.2)
    >>> parse_design("no-such-design")
    Traceback (most recent call last):
    ...
    irsample.errors.DesignError: cannot read design 'no-such-design': ...
    """
    if not isinstance(text, str):
        raise DesignError(f"a design name must be a string, got {text!r}")
    body, _, budget_text = text.strip().partition("@")
    budget = Budget.parse(budget_text) if budget_text else None
    body = body.strip()
    m = _CALL.match(body)
    if m is not None and m.group(1) in DESIGNS:
        return DESIGNS[m.group(1)].from_spec(m.group(2).strip(), budget)
    if re.fullmatch(r"pool\d+", body) or body in PRESETS:
        return preset(body, budget=budget)
    if ":" in body and "-" in body:
        return Stratified(parse_strata(body), budget)
    if _PLANNED.match(body):  # Allocated.name: strata without rates
        raise DesignError(
            f"{text.strip()!r} is a planned design (fixed sample sizes per topic and stratum): "
            "it is read from its design file (irsample sample --design FILE), not from its name"
        )
    kinds = ", ".join(cls.syntax for _, cls in sorted(DESIGNS.items()) if cls.syntax)
    raise DesignError(
        f"cannot read design {text!r}: expected a strata spec like '1-10:1,11-100:0.2', "
        f"{kinds}, or a strategy ({', '.join(PRESETS)}, poolK); optionally followed by @N or "
        "@N/topic"
    )
