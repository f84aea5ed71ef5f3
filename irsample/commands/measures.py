"""``irsample measures``: every measure of the registry with its formula and citation."""

from __future__ import annotations

import textwrap


def add_parser(sub) -> None:
    sub.add_parser("measures", help="list every measure with its formula and citation"
                   ).set_defaults(run=cmd_measures)


def cmd_measures(args) -> str:
    from ..measures import REGISTRY

    blocks = []
    for name in sorted(REGISTRY, key=str.lower):
        cls = REGISTRY[name]
        doc = textwrap.dedent(cls.__doc__ or "").strip()
        names = [cls.family] + ([cls.trec] if cls.trec and cls.trec != cls.family else [])
        head = " / ".join(names)
        blocks.append(f"{head}\n{textwrap.indent(doc, '    ')}\n    Source: {cls.citation}")
    blocks.append(_judgment_groups())
    return "\n\n".join(blocks) + "\n"


def _judgment_groups() -> str:
    """The three measures over judgment groups (``-R qrels_jg``), which are not registered
    families: they exist only with that option (:mod:`irsample.trec_inputs`)."""
    from .. import trec_inputs

    doc = textwrap.dedent(trec_inputs.__doc__ or "").strip()
    start = doc.index("Judgment groups")
    names = " / ".join(trec_inputs.AVGJG)
    return (f"{names} (with -R qrels_jg)\n{textwrap.indent(doc[start:], '    ')}\n"
            "    Source: trec_eval m_map_avgjg.c, m_P_avgjg.c, m_Rprec_mult_avgjg.c")
