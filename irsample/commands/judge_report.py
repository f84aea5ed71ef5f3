"""``irsample judge-report``: how far automatic labels can be trusted, checked against the human
sample.

1. Agreement on the judged documents (the human sample): Cohen's kappa of the labels with its
   95% interval (Fleiss, Cohen & Everitt 1969) and the confusion by grade, each grade's share of
   agreeing labels with a Wilson interval (:mod:`irsample.stats.agreement`). Probability labels
   are read as the estimators read them (:func:`agreement_lines`).
2. Per run and measure: the auto-only value (labels as judgments, uncorrected), the ppi estimate
   with its interval (``eval --ci``'s: on the logit scale for AP and nDCG, so not symmetric),
   and their difference auto - ppi with auto minus the limits of ppi's (the auto-only value is
   fixed given the labels, so the difference varies with the sample exactly as ppi does). A
   run whose interval lies above 0 is flagged ``favoured`` (the labels inflate it),
   below 0 ``disfavoured``. The last columns give the status of ppi's interval, ``ok`` or
   ``unreliable`` with the reason (:mod:`irsample.measures.reliability`); ``--strict`` makes an
   unreliable one an error (nothing printed or written, exit 1).

``irsample eval`` with ``auto(M)`` measures warns on standard error that the values are
uncorrected (:func:`eval_labels`).
"""

from __future__ import annotations

import sys

import numpy as np

from .arguments import add_assume, add_design, add_output, add_runs, check_design, number
from .strict import add_strict, check_strict

_level = number(float, above=0.0, below=1.0)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "judge-report",
        help="agreement of automatic labels with the human sample, and the runs they favour",
        description="Check automatic labels against the judged sample: Cohen's kappa and the "
        "confusion by grade with intervals, and per run the auto-only value minus the "
        "prediction-powered estimate with its interval (runs the labels favour are flagged).",
    )
    p.add_argument("qrels", help="sampled judgments (qrels with -1 for pooled unjudged, or "
                   "stratified qrels)")
    add_runs(p)
    p.add_argument("--auto-labels", required=True, metavar="FILE|fusion",
                   help="label file (topic Q0 docno value) or 'fusion'")
    p.add_argument("-m", "--measure", action="append", default=None, metavar="MEASURE",
                   help="a measure to compare; repeat for more, as eval's -m (default AP, nDCG)")
    p.add_argument("-l", "--level", type=int, default=1, help="relevance level (default 1)")
    p.add_argument("--ci", type=_level, default=0.95, metavar="LEVEL", help="default 0.95")
    p.add_argument("--qrels-format", choices=("trec", "strata", "prels"), default=None,
                   help="as for irsample eval")
    add_assume(p)
    add_design(p)
    add_output(p)
    add_strict(p)
    p.set_defaults(run=cmd_judge_report)


def eval_labels(args, measures, collection, judgments):
    """The labels of ``irsample eval --auto-labels`` (None without), with a warning on standard
    error when an uncorrected ``auto(M)`` measure is asked for."""
    from ..design.labels.fusion import resolve_labels
    from ..judgment_notes import unlabelled_pool
    from .notices import print_notes

    if any(m.family == "auto" for m in measures):
        print("irsample: warning: auto(M) values use the automatic labels alone, uncorrected by "
              "the human sample: biased wherever the labels are (use ppi(M))", file=sys.stderr)
    spec = getattr(args, "auto_labels", None)
    labels = resolve_labels(spec, collection, judgments, rel_level=args.level)
    print_notes(unlabelled_pool(measures, labels, judgments))
    return labels


def warn_nothing_at_level(judgments, rel_level: int) -> None:
    """A warning on standard error when ``-l`` is above every judged grade: nothing is
    relevant, so every estimate is 0 with an interval of width 0."""
    from ..model import JUDGED

    if rel_level > 1 and not (judgments.grade[judgments.state == JUDGED] >= rel_level).any():
        print(f"irsample: warning: {judgments.source}: no judged document is graded {rel_level} "
              f"or more (-l {rel_level}): nothing is relevant, every estimate is 0",
              file=sys.stderr)


def agreement_lines(collection, judgments, labels, level: float, rel_level: int = 1):
    """The agreement of the labels with the judged documents, the labels read as the estimators
    read them: probability labels folded to relevant or not by ``label_judgments.label_grades``
    (per topic, the round(sum p) documents of highest p relevant), not at p >= 0.5 (Vaswani's
    fusion labels: 2 of 1,400 judged documents at p >= 0.5, kappa -0.003, where the estimators
    label a topic's most probable documents relevant)."""
    from ..measures.ppi.label_judgments import label_grades
    from ..model import JUDGED
    from ..stats.agreement import cohen_kappa, confusion_by_grade

    judged = np.flatnonzero((judgments.state == JUDGED) & np.isfinite(labels.value))
    human = np.maximum(judgments.grade[judged], 0)
    axes = "rows: human grade, columns: label"
    if labels.kind == "probability":
        human = (human >= rel_level).astype(np.int64)
        folded = label_grades(labels, judgments, collection.tdi_topic.astype(np.int64),
                              rel_level)
        auto = (folded[judged] >= max(rel_level, 1)).astype(np.int64)
        axes = (f"rows: human grade >= {rel_level} as 1, else 0; columns: labelled relevant "
                "as 1, else 0 (per topic the round(sum p) documents of highest p, as the "
                "estimators read the labels)")
    elif rel_level > 1:  # graded labels, read as the estimators read them at -l
        human = (human >= rel_level).astype(np.int64)
        auto = (labels.value[judged] >= rel_level).astype(np.int64)
        axes = f"rows: human grade >= {rel_level} as 1, else 0; columns: label >= {rel_level}"
    else:
        auto = labels.value[judged].astype(np.int64)
    if not len(judged):
        return ["no judged document has a label: no agreement to report"]
    k = cohen_kappa(human, auto, level=level)
    lines = [f"agreement on {k.n} judged documents with labels ({labels.source})",
             f"cohen_kappa\t{k.kappa:.4f}\t[{k.low:.4f}, {k.high:.4f}]",
             f"observed_agreement\t{k.observed:.4f}", f"chance_agreement\t{k.expected:.4f}",
             f"confusion ({axes})"]
    grades, counts, share, low, high = confusion_by_grade(human, auto, level=level)
    lines.append("grade\t" + "\t".join(f"label={g}" for g in grades) + "\tagree\tlow\thigh")
    for i, g in enumerate(grades):
        lines.append(f"{g}\t" + "\t".join(str(int(c)) for c in counts[i])
                     + f"\t{share[i]:.4f}\t{low[i]:.4f}\t{high[i]:.4f}")
    return lines


def cmd_judge_report(args) -> str:
    from ..api import load, measures_from
    from ..design.labels.fusion import resolve_labels
    from ..errors import InputError
    from ..evaluation import evaluate_collection
    from ..judgment_notes import unlabelled_pool, unsampled_documents
    from ..model import check_common_topics
    from .notices import print_notes

    check_design(args)
    names = args.measure or ["AP", "nDCG"]
    collection, judgments = load(args.qrels, args.runs, qrels_format=args.qrels_format,
                                 assume=args.assume, design=args.design)
    check_common_topics(collection, judgments)
    pairs = [(measures_from([f"ppi({n})"])[0], measures_from([f"auto({n})"])[0]) for n in names]
    if not pairs:
        raise InputError("no measure given")
    print_notes(unsampled_documents([ppi for ppi, _ in pairs], collection.topics, judgments))
    labels = resolve_labels(args.auto_labels, collection, judgments, rel_level=args.level)
    print_notes(unlabelled_pool([ppi for ppi, _ in pairs], labels, judgments))
    warn_nothing_at_level(judgments, args.level)
    ev = evaluate_collection(collection, judgments, [m for p in pairs for m in p],
                             rel_level=args.level, ci=args.ci, auto_labels=labels)
    low, high = ev.interval()  # normal, or t on the jackknife's degrees of freedom
    status = ev.statuses
    check_strict(args, [(collection.run_names[r], ev.measures[j].name, status.reason[r, j])
                        for r, j in status.unreliable()])
    lines = agreement_lines(collection, judgments, labels, args.ci, args.level)
    if ev.assumed:
        lines = [f"# assume {ev.assumed}"] + lines
    lines += ["", f"per run: auto-only - ppi with the {args.ci:g} interval of ppi",
              "run\tmeasure\tauto\tppi\tppi_low\tppi_high\tdifference\tlow\thigh\tflag\tstatus"
              "\treason"]
    for j, (ppi, _) in enumerate(pairs):
        for r, run in enumerate(collection.run_names):
            est, auto = ev.summary[r, 2 * j], ev.summary[r, 2 * j + 1]
            lo, hi = float(low[r, 2 * j]), float(high[r, 2 * j])  # eval's, logit scale or not
            flag = "favoured" if auto > hi else "disfavoured" if auto < lo else "-"
            lines.append(f"{run}\t{ppi.target}\t{auto:.4f}\t{est:.4f}\t{lo:.4f}\t{hi:.4f}\t"
                         f"{auto - est:.4f}\t{auto - hi:.4f}\t{auto - lo:.4f}\t{flag}\t"
                         f"{status.status[r, 2 * j]}\t{status.reason[r, 2 * j]}")
    text = "\n".join(lines) + "\n"
    if args.output:
        from pathlib import Path

        Path(args.output).write_text(text)
        return ""
    return text
