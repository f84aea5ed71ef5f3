"""``irsample plan RUNS --next-round DIR/design.json --judged QRELS --budget N -o NEXT/``: judging
in rounds for the design-based estimators ``ht(M)`` and ``ppi(M)``.

After a judged round (round 1: ``irsample sample RUNS --design 2strata@N --seed S -o r1/``, or
a round this command wrote), the measures are estimated with their 95% intervals on everything
judged so far and every run mean gets its status by the reliability rule
(:func:`irsample.measures.reliability.assess`). If nothing is flagged (and, with
``--target-halfwidth W``, every half-width is at most W), the command says ``stop`` and writes
nothing. Otherwise it draws the next round (:mod:`irsample.design.rounds`: every cell
(topic, round-1 stratum, best-rank band) topped up from the documents it has left, by an
allocation one fold of topics learns from the other fold's judgments) and writes ``NEXT/
design.json`` (the union: each row's cell and its pi = n_h / N_h) and ``NEXT/to_judge.tsv``
(the new documents only). ``irsample merge NEXT/design.json ALL.qrels --format strata``, with
ALL.qrels every judgment so far, gives the estimators the union's exact probabilities.

Where a run mean of P@10 (a measure with a cut-off) is estimated outside [0, 1], the round
judges the best ranks 1-10 of every topic whole where they fit in it, which makes every run's
P@10 exact (:mod:`irsample.design.rounds`, "Top bands judged whole").

Why every cell and not only the flagged topics: topping up the topics that look weak selects
the others for looking good, and their estimates keep that bias (:mod:`irsample.design.rounds`).
``--budget N`` counts every judgment (those of earlier rounds included), as in the other modes
of ``irsample plan``; ``--batch B`` is the new round's size; cells keep two judgments each
where they have them, which may add a few.
"""

from __future__ import annotations

import argparse

from ..errors import DesignError

#: what ``--measure`` defaults to when judging in rounds
DEFAULT_MEASURES = ("ht(AP)", "ht(nDCG)", "ht(P@10)")
#: flagged run means whose reasons are printed per measure
SHOWN = 2
#: the reliability rules whose flags are counted per measure (``reliability.RULES``): those a
#: round's ht(M) and ppi(M) can meet; rule 4 is the reference estimators' and rule 6 needs a
#: stratum with nothing judged, which the rounds' designs never leave
COUNTED = ("too small or skewed a sample", "too many weak topics", "estimated bias",
           "outside [0, 1]", "blind topics left out")


class NextRound(argparse.Action):
    """``--next-round DIR/design.json``: ``-o`` is then a folder (checked as one before any
    work, as ``irsample sample -o``'s)."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.next_round = values
        namespace.output_files = ()
        namespace.output_folders = ("plan_out",)


def design_based(names) -> list:
    """The measures to estimate: ``ht(M)`` and ``ppi(M)`` names (default
    :data:`DEFAULT_MEASURES`), parsed."""
    from ..measures import parse

    out = []
    for name in names or DEFAULT_MEASURES:
        if not name.startswith(("ht(", "ppi(")):
            raise DesignError(f"--measure {name}: judging in rounds plans for the design-based "
                              "estimators, ht(M) or ppi(M) (e.g. 'ht(AP)')")
        out += parse(name)
    return out


def cmd_next_round(args) -> str:
    from pathlib import Path

    import numpy as np

    from ..design import DesignRecord
    from ..design.rounds import MIN_CELL, allocation, judged_whole_note, outside_bands
    from ..design.rounds_files import resume
    from ..io import read_qrels
    from ..io.output import write_atomic
    from .design import _collection

    if args.judged is None:
        raise DesignError("--next-round needs --judged QRELS: every judgment so far")
    if args.budget is None and args.batch is None:
        raise DesignError("--next-round needs --budget N (judgments in all) or --batch B (the "
                          "new round's size)")
    if args.design is not None:
        raise DesignError("--next-round names the judged round's design file: give it instead "
                          "of --design")
    ignored = [o for o, v in (("--depth", args.depth), ("--runs-from", args.runs_from),
                              ("--pilot", args.pilot)) if v is not None]
    if ignored:
        raise DesignError(f"--next-round keeps the judged round's pool and cells: "
                          f"{', '.join(ignored)} does not apply")
    measures = design_based(args.measure)
    record = DesignRecord.read(args.next_round)
    collection = _collection(args.runs)
    rounds = resume(record, read_qrels(args.judged), collection, seed=args.seed,
                    rel_level=args.level)
    state = rounds.state
    judgments = rounds.judgments()
    pool = int((state.cell >= 0).sum())
    relevant = int((rounds.frame.rel[state.sample.judged] >= args.level).sum())
    at = f" at level {args.level}" if args.level != 1 else ""
    lines = [f"{record.source}: round {state.rounds} of {rounds.first}, {state.judged} of "
             f"{pool} pool documents judged ({relevant} relevant{at}), "
             f"{len(set(record.qid))} topics"]
    more, status, ev = _status(args, collection, judgments, measures)
    lines += status
    if not more:
        lines.append("nothing flagged" + (f", every half-width <= {args.target_halfwidth:g}"
                                          if args.target_halfwidth is not None else "")
                     + ": stop")
        return "\n".join(lines) + "\n"
    size = args.batch if args.batch is not None else args.budget - state.judged
    if args.budget is not None:
        size = min(size, args.budget - state.judged)
    if size <= 0:
        lines.append(f"the budget of {args.budget} judgments is spent ({state.judged} judged): "
                     "stop")
        return "\n".join(lines) + "\n"
    if state.open_documents() == 0:
        lines.append("every pool document is judged: stop")
        return "\n".join(lines) + "\n"
    top = outside_bands(ev)
    take = allocation(rounds.frame, state, size, top)
    whole = judged_whole_note(rounds.frame, state, take, top)
    after, union = rounds.next(size, args.seed, take)
    new = after.spent[-1]
    files = {"design.json": union.to_json(), "to_judge.tsv": union.to_judge_tsv()}
    out = Path(args.plan_out)
    out.mkdir(parents=True, exist_ok=True)  # checked before any work (cli.check_outputs)
    for name, data in files.items():
        write_atomic(out / name, data)
    cells = int(np.count_nonzero(np.bincount(after.cell[after.cell >= 0])))
    lines.append(f"round {after.rounds}: {new} new documents (seed {args.seed}"
                 + (f"; {new - size} more than planned, to keep {MIN_CELL} judged per cell"
                    if new > size else "") + f"), {after.judged} judged in all over {cells} "
                 f"cells (topic x round-1 stratum x best-rank band){whole}")
    lines.append(f"wrote {out / 'to_judge.tsv'} and {out / 'design.json'}; judge the list, then "
                 f"`irsample merge {out / 'design.json'} ALL.qrels --format strata` (ALL.qrels: "
                 "every judgment so far)")
    return "\n".join(lines) + "\n"


def _status(args, collection, judgments, measures) -> tuple[bool, list[str], object]:
    """Whether another round is needed, per measure how many run means are flagged, why (the
    first :data:`SHOWN`) and the largest half-width, and the evaluation."""
    import numpy as np

    from ..design.labels.fusion import resolve_labels
    from ..evaluation import evaluate_collection

    labels = None
    if any(m.family == "ppi" for m in measures):
        if args.auto_labels is None:
            raise DesignError("ppi(M) needs automatic labels: --auto-labels FILE|fusion")
        labels = resolve_labels(args.auto_labels, collection, judgments)
    ev = evaluate_collection(collection, judgments, measures, ci=args.ci, auto_labels=labels,
                             rel_level=args.level)
    low, high = ev.interval()
    names = collection.run_names
    more, lines = False, []
    for j, m in enumerate(measures):
        rel = ev.statuses.outcomes[j]  # the rule's outcome as evaluate_collection reached it
        half = (high[:, j] - low[:, j]) / 2
        wide = (np.zeros(len(half), bool) if args.target_halfwidth is None
                else ~(half <= args.target_halfwidth))
        flagged = np.flatnonzero(rel.unreliable)
        more |= bool(len(flagged)) or bool(wide.any())
        line = f"{m.name}: {len(flagged)} of {len(names)} run means flagged"
        if len(flagged):
            causes = rel.by_rule
            counted = ", ".join(f"{name}: {int(causes[name].sum())}" for name in COUNTED)
            line += f" ({counted}; a mean may have several)"
        line += f", half-widths {np.nanmin(half):.4f} to {np.nanmax(half):.4f}"
        if args.target_halfwidth is not None:
            line += f" ({int(wide.sum())} above {args.target_halfwidth:g})"
        lines.append(line)
        lines += [f"  {names[r]}: {rel.reason[r]}" for r in flagged[:SHOWN]]
        if len(flagged) > SHOWN:
            lines.append(f"  and {len(flagged) - SHOWN} more")
    return more, lines, ev
