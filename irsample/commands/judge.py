"""``irsample judge``: choose the documents to judge adaptively (move-to-front pooling, Hedge).

With ``--qrels`` the qrels answer (a simulation): the command judges up to the budget and writes
``DIR/qrels`` (the judged set) and ``DIR/order.tsv`` (step, topic, docno, grade). Without, a
person judges: each invocation writes the next batch to ``DIR/batch.tsv`` and exits; the person
adds ``topic 0 docno grade`` lines to ``DIR/judgments`` and runs the same command again, which
continues from the files (see :mod:`irsample.design.adaptive.assessor`). Bad input stops the command
before anything is written.
"""

from __future__ import annotations

from pathlib import Path

from ..design.adaptive.methods import METHODS
from .arguments import add_level, add_runs, add_seed, number
from .notices import add_progress_option, bar, progress_enabled

_at_least_one = number(int, minimum=1)

#: the judged set is chosen adaptively: evaluated as qrels it is the frame itself (every
#: unjudged document non-relevant), and design-based estimators read it as a census: on CACM,
#: hedge 10/topic, bm25_k0.9_b0.4's ht(AP) was 0.5062 with the interval [0.5062, 0.5062] and
#: status ok, against 0.3622 on the complete qrels
NOT_A_SAMPLE = ("note: the judged set is chosen adaptively, not drawn as a probability sample: "
                "as qrels it counts every unjudged document as non-relevant, and ht(M) and ppi(M) "
                "read it as complete judgments (intervals of width 0 around its own values, not "
                "estimates for the whole pool); for estimates with intervals, draw a sample "
                "('irsample sample')\n")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "judge",
        help="choose documents to judge adaptively (move-to-front, Hedge): simulate with "
        "qrels, or judge by hand in resumable batches",
        description="Choose the documents to judge adaptively. Methods: mtf (local move-to-front "
        "pooling, Cormack et al. 1998), mtf-global (one queue over all topics), hedge (Aslam et "
        "al. 2003), depth (the depth-k pooling order, a baseline). With --qrels the qrels answer "
        "and the command runs to the budget; without, it writes the next batch to DIR/batch.tsv: "
        "add 'topic 0 docno grade' lines to DIR/judgments and run it again.",
    )
    add_runs(p)
    p.add_argument("--method", choices=METHODS, required=True)
    p.add_argument("--beta", type=float, default=None, help="Hedge's beta in (0, 1] (default 0.1)")
    p.add_argument(
        "--budget",
        type=_at_least_one,
        required=True,
        help="judgments in all (shared out over the topics), or per topic with --per-topic",
    )
    p.add_argument("--per-topic", action="store_true", help="the budget is per topic")
    p.add_argument("--state", required=True, metavar="DIR",
                   help="directory of the session's files (created if missing)")
    p.add_argument("--batch", type=_at_least_one, default=None,
                   help="documents handed out per step (default 1 with --qrels, else 20)")
    p.add_argument("--qrels", default=None, help="complete qrels: simulate the assessor")
    p.add_argument("--depth", type=_at_least_one, default=None,
                   help="consider only each run's first N documents (default: all)")
    add_seed(p, "seed of the tie-breaking")
    add_level(p)
    add_progress_option(p)
    p.set_defaults(run=run, output_folders=("state",))


class Counted:
    """An assessor that counts the documents it judges on a progress bar."""

    def __init__(self, assessor, progress):
        self.assessor, self.progress = assessor, progress

    def judge(self, topic, docs):
        grades = self.assessor.judge(topic, docs)
        self.progress.update(len(docs))
        return grades

    def __getattr__(self, name):
        return getattr(self.assessor, name)


def _judged(n: int) -> str:
    return f"{n} judged document{' is' if n == 1 else 's are'}"


def run(args) -> str:
    from ..design.adaptive.assessor import (
        BATCH,
        JUDGMENTS,
        FileAssessor,
        QrelsAssessor,
        check_config,
        write_state,
    )
    from ..design.adaptive.judging import judge_adaptively
    from ..design.adaptive.methods import parse_method
    from ..io import load_qrels, load_runs
    from ..model import Collection

    method = parse_method(args.method, beta=args.beta)
    runs = load_runs(args.runs)
    qrels = load_qrels(args.qrels) if args.qrels else None
    if qrels is not None:
        runs = judged_topics_only(runs, qrels)
    collection = Collection.build(runs, [qrels] if qrels is not None else [])
    batch = args.batch or (1 if qrels is not None else 20)
    state = Path(args.state)
    config = {
        "method": method.name, "budget": args.budget, "per_topic": args.per_topic,
        "batch": batch, "depth": args.depth, "seed": args.seed, "rel_level": args.level,
        "runs": sorted(collection.run_names),
        "assessor": f"qrels {qrels.source}" if qrels is not None else "files",
    }
    check_config(state, config)
    options = dict(budget=args.budget, per_topic=args.per_topic, depth=args.depth, batch=batch,
                   rng=args.seed, rel_level=args.level)
    assessor = (
        QrelsAssessor(collection, qrels) if qrels is not None else FileAssessor(collection, state)
    )
    history = assessor.history() if qrels is None else None
    total = args.budget * (collection.n_topics if args.per_topic else 1)
    with bar(progress_enabled(args) and qrels is not None, total=total, unit="doc",
             desc=f"judging ({method.name})") as progress:
        watched = Counted(assessor, progress) if qrels is not None else assessor
        result = judge_adaptively(collection, method, watched, history=history, **options)
    write_state(state, result, config, batch_file=qrels is None)

    judged = int((~result.pending).sum())
    found = int(result.relevant_found().sum())
    ranked = int((collection.segment_lengths() > 0).any(axis=0).sum())  # not the qrels' own
    head = (f"{method.name}: {judged} of {result.total} documents judged, {found} relevant "
            f"({ranked} topics, {collection.n_runs} runs)\n")
    if qrels is not None:
        note = ""
        if assessor.outside:
            note += (f"{_judged(assessor.outside)} not in {qrels.source}; "
                     "taken as non-relevant\n")
        if assessor.unjudged:
            note += (f"{_judged(assessor.unjudged)} listed below 0 (pooled, not judged) in "
                     f"{qrels.source}; taken as non-relevant, as trec_eval takes them\n")
        return head + note + f"wrote {state / 'qrels'} and {state / 'order.tsv'}\n" + NOT_A_SAMPLE
    if result.complete:
        return head + f"done: the judged set is in {state / 'qrels'}\n" + NOT_A_SAMPLE
    pending = int(result.pending.sum())
    return head + (
        f"{pending} document{'s' if pending != 1 else ''} to judge in {state / BATCH}: "
        "add their grades to "
        f"{state / JUDGMENTS} as 'topic 0 docno grade' lines and run this command again\n"
    )


def judged_topics_only(runs, qrels):
    """The ``runs``' rankings of the topics ``qrels`` name (an error if a run keeps none): a
    simulated assessor has no answer for the others, which would take budget and count as
    non-relevant (CACM's qrels leave 12 of its runs' 64 topics out), as the demo and the
    estimators evaluate only the topics the qrels name."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.compute as pc

    from ..errors import InputError
    from ..io.trec import text_of

    named = pc.unique(qrels.qid)
    kept = []
    for run in runs:
        mask = pc.is_in(run.qid, value_set=named)
        keep = mask.to_numpy(zero_copy_only=False).astype(bool)
        if not keep.any():
            mine = [text_of(t) for t in pc.unique(run.qid).to_pylist()[:3]]
            theirs = [text_of(t) for t in named.to_pylist()[:3]]
            raise InputError(f"run {run.name!r} has no topic in common with the qrels "
                             f"({qrels.source}; topic ids compare as text: the run's "
                             f"{', '.join(mine) or 'none'}, the qrels' "
                             f"{', '.join(theirs) or 'none'})", run.source)
        if not keep.all():
            mask = pa.array(keep)
            run = dataclasses.replace(run, qid=run.qid.filter(mask),
                                      docno=run.docno.filter(mask), score=run.score[keep],
                                      lineno=run.lineno[keep])
        kept.append(run)
    return kept
