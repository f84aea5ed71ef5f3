"""``irsample pool``, ``irsample sample`` and ``irsample merge``: plan, draw and merge judgments.

- ``pool RUNS... --depth K``: the depth-K pool of the runs (``topic docno best_rank runs
  [groups]``, TSV), or with ``--stats summary|depth`` its per-topic statistics.
- ``sample RUNS... --design D --seed S -o DIR``: draw the documents to judge from the pool of
  the runs; writes ``DIR/to_judge.tsv`` and ``DIR/design.json`` (see
  :mod:`irsample.design.record`). D is a design name (``2strata``, ``uniform(0.1)``,
  ``1-10:1,11-100:0.2``, ``importance(0.1)``, ...) or a design file. ``--budget N [--per-topic]``
  sets the number of judgments; a design name with its own budget (``2strata@500``) takes
  none (refused: one command, two budgets), a design file's recorded budget is replaced. A
  design file with a ``plan`` (fixed sample sizes per topic and stratum, topping up documents
  judged before) takes no budget; its to-judge list leaves out the documents already judged.
- ``merge DESIGN JUDGMENTS --format strata|prels|trec``: the design's judgments for the
  estimators; a report of what is still unjudged goes to standard error.

The pool's depth: ``--depth``, else the design file's, else the design's own (100 for
``2strata``, 15 for ``pool15``), else 100.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from ..errors import DesignError, InputError
from .arguments import add_output, add_runs, add_seed, number

DEFAULT_DEPTH = 100


_depth = number(int, minimum=1)  # a depth or a budget


def add_parser(sub) -> None:
    po = sub.add_parser("pool", help="the depth-k pool of runs, or its statistics",
                        description="List the depth-K pool of the runs with each document's "
                        "best rank, or per-topic pool statistics.")
    add_runs(po)
    po.add_argument("--depth", type=_depth, required=True, help="pool depth K")
    po.add_argument("--runs-from", metavar="FILE",
                    help="pool only the runs named in FILE (one per line; 'run notjudged' lines "
                    "are skipped, as in TREC's run-pooled-flag.txt)")
    po.add_argument("--groups", metavar="FILE",
                    help="run -> group map ('run group' or 'run:group:...' lines) for documents "
                    "unique to one group")
    po.add_argument("--stats", choices=("summary", "depth"), default=None,
                    help="summary: per topic size, unique_run, unique_group; depth: per topic "
                    "and depth k = 1..K the pool size")
    add_output(po)
    po.set_defaults(run=cmd_pool)

    sa = sub.add_parser("sample", help="draw the documents to judge from a pool",
                        description="Draw a sample of the runs' pool to judge; writes "
                        "DIR/to_judge.tsv and DIR/design.json.")
    add_runs(sa)
    sa.add_argument("--design", required=True,
                    help="design name (2strata, pool25, uniform(0.1), 1-10:1,11-100:0.2, "
                    "terabyte(10), importance(0.1), ...) or a design file")
    sa.add_argument("--budget", type=_depth, default=None, metavar="N",
                    help="number of judgments (in total, or per topic with --per-topic)")
    sa.add_argument("--per-topic", action="store_true", help="the budget is per topic")
    add_seed(sa, "seed of the draw")
    sa.add_argument("--depth", type=_depth, default=None,
                    help="pool depth (default: the design file's depth, else the design's own, "
                    "100 for 2strata, else 100)")
    sa.add_argument("--runs-from", metavar="FILE", help="pool only the runs named in FILE")
    sa.add_argument("-o", dest="outdir", required=True, metavar="DIR",
                    help="folder for to_judge.tsv and design.json (created if missing)")
    sa.set_defaults(run=cmd_sample, output_folders=("outdir",))

    me = sub.add_parser("merge", help="merge judgments back into a design",
                        description="Combine a design file and the judgments of its sample "
                        "into stratified qrels, prels or trec_eval qrels.")
    me.add_argument("design", help="design file written by irsample sample")
    me.add_argument("judgments", help="TREC qrels of the judged documents (partial allowed)")
    me.add_argument("--format", required=True, choices=("strata", "prels", "trec"),
                    help="strata: stratified qrels (xinfAP, infNDCG, ht); prels: statAP's, "
                    "with each document's inclusion probability (statAP, ht, ppi); trec: qrels "
                    "with -1 for pooled documents not judged (infAP, trec_eval), without the "
                    "inclusion probabilities (a warning when the design is not uniform)")
    add_output(me)
    me.add_argument("-v", "--verbose", action="store_true",
                    help="report per topic on standard error (default: one summary line)")
    me.set_defaults(run=cmd_merge)


def _collection(paths):
    from ..io import load_runs
    from ..model import Collection

    return Collection.build(load_runs(paths))


def _pooled_runs(collection, runs_from, fallback=None, fallback_source=None):
    from ..design.pools import runs_from_list
    from ..io.lists import read_run_list

    if runs_from is not None:
        return runs_from_list(collection, read_run_list(runs_from), runs_from)
    if fallback is not None:
        missing = [r for r in fallback if r not in collection.run_names]
        if missing:
            raise InputError(
                f"unknown run(s) in the design: {', '.join(missing)} (runs given: "
                f"{', '.join(collection.run_names)})", fallback_source,
            )
        return tuple(collection.run_names.index(r) for r in fallback)
    return None


def cmd_pool(args) -> str:
    from ..design.pools import Pool, runs_without_group
    from ..io.lists import read_group_map

    collection = _collection(args.runs)
    runs = _pooled_runs(collection, args.runs_from)
    groups = None
    if args.groups is not None:
        groups = {run: group for run, (group, _) in read_group_map(args.groups).items()}
        missing = runs_without_group(collection, runs, groups)
        if missing:  # the library's error does not know the file
            raise InputError(f"no group for run(s) {', '.join(missing)}", args.groups)
    pool = Pool.from_runs(collection, runs, depth=args.depth, groups=groups)
    if args.stats == "summary":
        frame = pool.stats().summary()
        if groups is None:
            frame = frame.drop(columns="unique_group")
        total = frame.drop(columns="topic").sum(numeric_only=True)
        lines = ["\t".join(frame.columns)]
        lines += ["\t".join(str(v) for v in row) for row in frame.itertuples(index=False)]
        lines.append("\t".join(["all"] + [str(int(v)) for v in total]))
        return "\n".join(lines) + "\n"
    if args.stats == "depth":
        frame = pool.stats().by_depth()
        return frame.to_csv(sep="\t", index=False, lineterminator="\n")
    head = "topic\tdocno\tbest_rank\truns" + ("\tgroups" if groups is not None else "")
    out = [head]
    qids, docnos = pool.qids(), pool.docnos()
    for i in range(len(pool)):
        row = f"{qids[i]}\t{docnos[i]}\t{int(pool.best_rank[i])}\t{int(pool.n_runs[i])}"
        out.append(row + (f"\t{int(pool.n_groups[i])}" if groups is not None else ""))
    return "\n".join(out) + "\n"


def cmd_sample(args) -> str:
    from ..design import Budget, DesignRecord, Pool, parse_design
    from ..design.sampling.importance import thin_tail_note
    from ..io.output import write_atomic

    planned = None
    given = Path(args.design)
    if given.exists() and not given.is_dir():  # a file, a FIFO, <(...): read as a design file
        planned = DesignRecord.read(args.design)
        design = planned.design
    elif args.design.replace(" ", "").startswith("plan("):
        # judged as it goes from complete grades: a design for simulation, which no budget
        # makes drawable (it asked for one first, then named a SamplingFrame)
        raise DesignError(f"--design {args.design}: the planner judges as it goes, so it is "
                          "not drawn in one go: plan a sample with `irsample plan` (a pilot's "
                          "judgments and a budget), then draw its design file with `irsample "
                          "sample --design FILE`")
    else:
        design = parse_design(args.design)
    if args.per_topic and args.budget is None:
        raise DesignError("--per-topic needs --budget")
    if args.budget is not None and planned is None and getattr(design, "budget", None):
        # two budgets in one command: refused, as --budget is for designs of fixed sizes
        raise DesignError(
            f"--design {args.design} sets a budget already (@{design.budget.label}), and "
            f"--budget {args.budget} would override it: give one of them"
        )
    if args.budget is not None:
        design = design.with_budget(Budget(args.budget, args.per_topic))
    collection = _collection(args.runs)
    runs = _pooled_runs(
        collection, args.runs_from, planned.runs if planned else None,
        planned.source if planned else None,
    )
    depth = args.depth
    if depth is None and planned is not None and planned.depth is not None:
        depth = int(planned.depth)
    if depth is None:
        depth = int(design.depth) if not math.isinf(design.depth) else DEFAULT_DEPTH
    pool = Pool.from_runs(collection, runs, depth=depth)
    sample = design.select(pool, rng=args.seed)
    record = DesignRecord.from_sample(pool, design, sample, seed=args.seed)
    note = thin_tail_note(design, sample, pool.topic)
    files = {"design.json": record.to_json(), "to_judge.tsv": record.to_judge_tsv()}
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)  # checked before any work (cli.check_outputs)
    for name, data in files.items():
        write_atomic(out / name, data)
    lines = [f"{design.name}: depth-{depth} pool of {len(pool.runs)} runs, seed {args.seed}",
             "stratum\tpool\tselected\trate"]
    for s in record.strata_summary():
        rate = s["sampled"] / s["size"] if s["size"] else 0.0
        lines.append(f"{s['label']}\t{s['size']}\t{s['sampled']}\t{rate:.4f}")
    if len(record.strata_summary()) > 1:  # one stratum (uniform) is its own total
        lines.append(f"all\t{len(record.qid)}\t{int(record.selected.sum())}\t"
                     f"{record.selected.mean() if len(record.qid) else 0:.4f}")
    to_judge = files["to_judge.tsv"].count(b"\n") - 1
    if to_judge < int(record.selected.sum()):  # a design topping up documents judged before
        lines.append(f"{int(record.selected.sum()) - to_judge} selected documents are judged "
                     f"already; {to_judge} to judge")
    lines.append(f"wrote {out / 'to_judge.tsv'} and {out / 'design.json'}")
    if note is not None:
        print(note, file=sys.stderr)
    return "\n".join(lines) + "\n"


def cmd_merge(args) -> str:
    from ..design import DesignRecord, merge
    from ..design.merge import prels_note, trec_warning, unjudged_warning
    from ..io import read_qrels

    record = DesignRecord.read(args.design)
    merged = merge(record, read_qrels(args.judgments))
    text = merged.render(args.format).decode("utf-8", "surrogateescape")
    sys.stderr.write(merged.report() if args.verbose else merge_summary(merged))
    warning = (trec_warning(merged) if args.format == "trec"
               else prels_note(merged) or unjudged_warning(merged) if args.format == "prels"
               else None)
    if warning is not None:
        print(warning, file=sys.stderr)
    return text


def merge_summary(merged) -> str:
    """One line: topics, pool, selected, judged and still unjudged documents (the per-topic
    table is ``merged.report()``, printed with ``-v``)."""
    rec = merged.record
    unjudged = int(merged.unjudged.sum())
    line = (f"merge: {len(set(rec.qid))} topics, {len(rec.qid)} pool documents, "
            f"{int(rec.selected.sum())} selected, {int(merged.judged.sum())} judged, "
            f"{unjudged} selected documents not judged yet")
    if unjudged:
        first = next(i for i in range(len(rec.qid)) if merged.unjudged[i])
        line += f" (first: {rec.qid[first]}/{rec.docno[first]}; -v lists them per topic)"
    return line + "\n"
