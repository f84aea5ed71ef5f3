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
    return "\n\n".join(blocks) + "\n"
