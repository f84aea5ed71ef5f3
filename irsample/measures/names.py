"""The measure name parser: three syntaxes to the same :class:`~.base.Measure` objects.

- irsample / ir_measures: ``AP``, ``P@10``, ``nDCG@10``, ``nDCG(gains={1:3,2:9})``, ``R@100``;
- trec_eval ``-m`` syntax: ``map``, ``P_10``, ``P.5,10`` (two measures), ``P`` (trec_eval's
  default cut-offs), ``ndcg_cut.10``, ``ndcg.1=3,2=9``, ``iprec_at_recall.0.1``;
- the named sets (:data:`MEASURE_SETS`) ``official``, ``all_trec`` and ``sample_eval``.

A name is looked up in the registries the families fill when they are defined
(:mod:`.base`), after importing only the modules that can define it (:mod:`.families`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from ..errors import MeasureError
from .base import ALIASES, REGISTRY, TREC_REGISTRY, Measure, parameters

_IRS = re.compile(r"^(?P<fam>[A-Za-z0-9][\w\-]*?)(?:\((?P<params>.*)\))?(?:@(?P<at>[\d.]+))?$")


def parse_one(name: str | Measure) -> Measure:
    """The single measure ``name`` stands for (``xinfAP``, ``AP``, ``iP@10``, ``P_10``; a
    :class:`Measure` is itself); :class:`MeasureError` if it names a set or several."""
    if isinstance(name, Measure):
        return name
    found = parse(name)
    if len(found) != 1:
        raise MeasureError(f"{name!r} names {len(found)} measures; name exactly one")
    return found[0]


def parse(name: str) -> list[Measure]:
    """Parse one measure name (any supported syntax) into measures; named sets expand."""
    text = name.strip()
    if text in MEASURE_SETS:
        return [m for item in MEASURE_SETS[text] for m in parse(item)]
    from .families import load_all, load_for

    load_for(text)  # the modules that can define this name (families.py)
    try:
        return _parse_one(text, name)
    except MeasureError:
        load_all()  # the table of families.py missed a name: the whole registry decides
        return _parse_one(text, name)


def _parse_one(text: str, name: str) -> list[Measure]:
    trec = _parse_trec(text)
    if trec is not None:
        return trec
    match = _IRS.match(text)
    if match:
        cls = REGISTRY.get(match["fam"]) or ALIASES.get(match["fam"].lower())
        if cls is not None:
            if hasattr(cls, "from_params"):
                kwargs = cls.from_params(match["params"])
            else:
                kwargs = _parse_params(match["params"], cls) if match["params"] else {}
            if match["at"] is not None:
                declared = {f.name: f for f in parameters(cls)}
                if cls.at_param not in declared:
                    raise MeasureError(f"{cls.family} takes no @ parameter ({text!r})")
                kwargs[cls.at_param] = _coerce(
                    match["at"], declared[cls.at_param].default, cls, cls.at_param
                )
            return [_construct(cls, kwargs, text)]
    raise MeasureError(f"unknown measure {name!r} (see `irsample measures`)")


def parse_all(names: Iterable[str]) -> list[Measure]:
    """Parse several names, drop repeats, and sort into trec_eval's output order.

    As in trec_eval, a family named with explicit trec_eval parameters (``relstring.20``,
    ``P.5,10``) replaces that family's default expansion brought in by a bare name or a set
    (``all_trec``): ``-m all_trec -m relstring.20`` prints ``relstring_20`` only. A name in
    irsample's own syntax (``RBP(p=0.8)``, ``P@10``) is one more measure and replaces
    nothing: ``-m rbp -m 'RBP(p=0.8)'`` prints both.
    """
    seen: dict[Measure, bool] = {}  # measure -> came from a default expansion
    explicit: set = set()  # trec_eval families named with parameters
    spelled: dict[Measure, Measure] = {}  # measure -> the equal one to print (its spelling)
    for n in names:
        text = n.strip()
        items = MEASURE_SETS.get(text, (text,))
        for item in items:
            from .families import load_for

            load_for(item)
            default = _is_trec_default(item)
            with_parameters = not default and _parse_trec(item) is not None
            for m in parse(item):
                if with_parameters:
                    explicit.add(m.trec_family)
                    spelled[m] = m  # printed as typed (set_F.1: set_F_1), not as the default
                seen[m] = seen.get(m, True) and default
                spelled.setdefault(m, m)
    kept = [spelled[m] for m, default in seen.items()
            if not (default and m.trec_family in explicit)]
    return sorted(kept, key=output_key)


def output_key(m: Measure):
    """trec_eval's output order: family table order, then cut-offs ascending (stable)."""
    at = getattr(m, m.at_param, None)
    return (m.order, at if isinstance(at, (int, float)) else 0)


def _is_trec_default(text: str) -> bool:
    """A bare trec_eval family name, which expands to the family's default parameters."""
    return text in TREC_REGISTRY


def _parse_trec(text: str) -> list[Measure] | None:
    best = None
    for key in TREC_REGISTRY:
        if text == key or (text.startswith(key) and text[len(key)] in "._"):
            if best is None or len(key) > len(best):
                best = key
    if best is None:
        return None
    cls = TREC_REGISTRY[best]
    rest = text[len(best) :]
    if rest == "":
        return cls.from_trec(None, best)
    if rest[0] == ".":
        return _typed(cls.from_trec(rest[1:], best), best, rest[1:])
    # "_" form names one measure as trec_eval prints it (P_10, iprec_at_recall_0.10)
    try:
        found = cls.from_trec(rest[1:], best)
    except MeasureError:
        return None
    if len(found) != 1:
        return None
    return _typed(found, best, rest[1:])


def _typed(found: list[Measure], name: str, params: str) -> list[Measure]:
    """The measures of ``-m name.params``, printed with ``params`` as typed where trec_eval
    prints them so (``Measure.trec_typed``)."""
    if not found or name not in type(found[0]).trec_typed:
        return found
    return [replace(m, trec_params=params) for m in found]


def _parse_params(text: str, cls) -> dict:
    kwargs: dict = {}
    declared = {f.name: f for f in parameters(cls)}
    for part in _split_top_level(text):
        if "=" not in part:
            raise MeasureError(f"{cls.family}: parameter {part!r} is not name=value")
        key, value = (s.strip() for s in part.split("=", 1))
        if key not in declared:
            known = ", ".join(declared) or "none"
            raise MeasureError(f"{cls.family} has no parameter {key!r} (parameters: {known})")
        kwargs[key] = _coerce(value, declared[key].default, cls, key)
    return kwargs


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "{[("
        depth -= ch in "}])"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


def _coerce(value: str, default, cls, key):
    try:
        if value.startswith("{"):
            pairs = [p.split(":") for p in value.strip("{}").split(",") if p.strip()]
            return tuple((int(a), float(b)) for a, b in pairs)
        if value.startswith(("(", "[")):
            return tuple(float(v) for v in value.strip("()[]").split(",") if v.strip())
        if isinstance(default, bool):
            return value.lower() in ("1", "true", "yes")
        if isinstance(default, int) or default is None:
            return int(value) if re.fullmatch(r"[+-]?\d+", value) else float(value)
        if isinstance(default, float):
            return float(value)
        return value
    except ValueError:
        raise MeasureError(f"{cls.family}: bad value {value!r} for {key}") from None


def _construct(cls, kwargs, text):
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise MeasureError(f"cannot build {text!r}: {exc}") from None


#: named measure sets, as in trec_eval
MEASURE_SETS: dict[str, tuple[str, ...]] = {
    "official": (
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
        "iprec_at_recall P"
    ).split(),
    "all_trec": (
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
        "iprec_at_recall P relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G "
        "ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P success set_P set_relative_P "
        "set_recall set_map set_F num_nonrel_judged_ret rbp rbp_resid unj"
    ).split(),
    # what NIST's sample_eval.pl prints (xinfAP is printed as infAP)
    "sample_eval": "xinfAP infNDCG iP inum_rel_ret inum_rel num_ret iprec_rec".split(),
}
