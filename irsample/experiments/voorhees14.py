"""Paper 002's experiment: sampling strategies judged by the significant run pairs they keep.

Voorhees, "The effect of sampling strategy on inferred measures", SIGIR 2014 (paper 002 here).
Protocol, as in the paper's TREC-8 part:

1. ``trials`` (50) random halves of the pooled runs (:class:`~.splits.RandomHalves`): the
   half's runs build the pool, every run of the collection is evaluated;
2. per half and strategy, one draw of judgments from the half's pool (depth 100);
3. per measure, the per-topic estimates of every run; the gold standard is the paired t-test
   at alpha = 0.05 on the truth over all run pairs; each pair is a true positive,
   true negative, miss, false alarm or inversion (:mod:`irsample.stats.pairs`) and

       accuracy = (TP + TN) / (TP + TN + miss + false alarm + 2 inversion);

   the truth is the frame truth, the measure on the complete judgments of the half's depth-100
   pool (the pool actually sampled from; for the runs outside the half as for those in it),
   so ``accuracy`` measures what sampling loses; ``accuracy_qrels`` uses the complete qrels
   (paper 002's gold standard: sampling and the half pool's bias against unpooled runs
   together);

4. per topic, the estimate R^ of the number of relevant documents (``inum_rel``: the number
   of judged relevant documents, each weighted by its inverse inclusion probability; for a
   pool, the judged relevant count) against the true R, the relevant documents of the half's
   depth-100 pool (``r_qrels``: of the complete qrels, kept for comparison);
   per trial the Pearson correlation over topics (paper 002's Table 3), and per topic the
   min / mean / max of R^ over trials (paper 002's Fig. 1).

Estimators: MAP by xinfAP, nDCG by infNDCG, P@10 by iP@10 (Yilmaz, Kanoulas & Aslam, SIGIR
2008) for every strategy. For a pool strategy (everything within the depth judged, inclusion
probability 1) they reduce to the measure on the pool's qrels with unjudged documents
non-relevant (what trec_eval reports), so one estimator set serves all strategies.

Strata: paper 002's exact sampling rates are not in our copy of the paper; ours
(:data:`STRATEGIES`) are pool10 and pool25 = the depth-10 and depth-25 pools (paper 002's
"pool": one exhaustively judged, thus shallow, stratum); pool100 = the half's complete depth-100
pool (a reference: every judgment the half can have); 1stratum = 30% of ranks 1-100; 2strata =
ranks 1-10 + 20% of 11-100; 3strata = 1-10 + 30% of 11-30 + 5% of 31-100. pool25, 1stratum and
2strata draw about the same number of judgments (about 300 per topic on TREC-8).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..design import stratified
from ..evaluation import evaluate_collection
from ..plots import new_figure, save_figure
from ..stats.pairs import CLASSES
from .data import CollectionFiles, load, parse_one
from .runner import Experiment
from .trial import strategy

#: strategy name -> stratified design (ranks: rate)
STRATEGIES = {
    "pool10": "1-10:1",
    "pool25": "1-25:1",
    "pool100": "1-100:1",
    "1stratum": "1-100:0.3",
    "2strata": "1-10:1,11-100:0.2",
    "3strata": "1-10:1,11-30:0.3,31-100:0.05",
}
MEASURES = {"xinfAP": "AP", "infNDCG": "nDCG", "iP@10": "P@10"}
TARGET_NAMES = {"AP": "MAP", "nDCG": "nDCG", "P@10": "P@10"}


def run_voorhees14(files: CollectionFiles, *, trials: int = 50, seed: int = 2014,
                   workers: int = 2, executor: str = "processes",
                   strategies: dict[str, str] | None = None, alpha: float = 0.05,
                   out: str | Path | None = None, figure_strategies=("pool25", "2strata"),
                   progress: bool = False, scheduler=None) -> dict:
    """Run paper 002's experiment (module docstring) on ``files``.

    Returns a dict of pandas tables and paths: ``accuracy`` (strategy x measure: mean, min,
    max accuracy over trials, against the frame truth), ``accuracy_qrels`` (the same against
    the complete qrels), ``classes`` (mean pair counts per class), ``judged`` (mean
    judgments per topic per strategy), ``r_correlation`` (strategy: mean, min, max over trials
    of Pearson r between R^ and R per topic), ``r_hat`` (trial x strategy x topic: R^ and R),
    ``trials`` (the runner's per-trial table), ``seconds`` (wall time of the grid, t-tests
    included) and ``figures`` (paths of the R^ figure, when ``out`` is given). ``executor``,
    ``workers``, ``scheduler`` and ``progress``: as in :meth:`Experiment.run`.
    """
    specs = STRATEGIES if strategies is None else strategies
    exp = Experiment(
        collection=files,
        strategies=[strategy(name, stratified(spec)) for name, spec in specs.items()],
        measures=MEASURES, splits=["halves"], trials=trials, seed=seed, ci=None, alpha=alpha,
    )
    start = time.perf_counter()
    result = exp.run(executor=executor, workers=workers, scheduler=scheduler, progress=progress)
    seconds = time.perf_counter() - start
    tr = result.trials.copy()
    tr["measure_name"] = tr.target.map(TARGET_NAMES).fillna(tr.target)
    order = list(specs)
    accuracy = (tr.groupby(["strategy", "measure_name"]).accuracy.agg(["mean", "min", "max"])
                .unstack("measure_name").reindex(order))
    accuracy_qrels = (tr.groupby(["strategy", "measure_name"]).accuracy_qrels
                      .agg(["mean", "min", "max"]).unstack("measure_name").reindex(order))
    classes = tr.groupby(["strategy", "measure_name"])[list(CLASSES)].mean().reindex(
        order, level="strategy")
    n_topics = load(files).collection.n_topics
    first = tr[tr.measure == next(iter(MEASURES))]
    judged = (first.groupby("strategy").judged.mean() / n_topics).reindex(order).rename(
        "judged_per_topic").to_frame()
    judged["pool_per_topic"] = (first.groupby("strategy").pool_size.mean() / n_topics
                                ).reindex(order)
    r_hat = estimated_r(exp)
    r_corr = (r_hat.groupby(["strategy", "trial"])
              .apply(lambda g: np.corrcoef(g.r_true, g.r_hat)[0, 1], include_groups=False)
              .groupby("strategy").agg(["mean", "min", "max"]).reindex(order))
    out_dict = {
        "accuracy": accuracy,
        "accuracy_qrels": accuracy_qrels,
        "classes": classes,
        "judged": judged,
        "r_correlation": r_corr,
        "r_hat": r_hat,
        "trials": result.trials,
        "runs": result.runs,
        "seconds": seconds,
        "figures": [],
    }
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        chosen = [s for s in figure_strategies if s in specs] or order[:2]
        out_dict["figures"].append(r_hat_figure(r_hat, chosen, out / "r_hat.png"))
        for name in ("accuracy", "accuracy_qrels", "classes", "judged", "r_correlation"):
            out_dict[name].to_csv(out / f"{name}.csv")
    return out_dict


def estimated_r(exp: Experiment) -> pd.DataFrame:
    """R^ (``inum_rel``) per trial x strategy x topic, from the same draws as ``exp.run``
    (each cell's seed is redrawn in this process), with the true R of the frame (``r_true``:
    relevant documents of the pool sampled from) and of the complete qrels (``r_qrels``); the
    topics the qrels name only (CACM's runs answer 12 topics its qrels do not judge, where R^
    has no value and R is no count of anything)."""
    data = load(exp.collection)
    col = data.collection
    num_rel, inum_rel = parse_one("num_rel"), parse_one("inum_rel")
    r_qrels = evaluate_collection(col, data.judgments, [num_rel]).values[0, :, 0]
    rows = []
    for task in exp.tasks(data.info):
        split = task.split
        one = data.subcollection(split.pool[:1])  # R^ is a per-topic quantity: one run suffices
        for cell in task.cells:
            frame = data.frame(split.pool, cell.depth)
            whole = data.frame(split.pool, cell.truth_depth)
            r_true = np.bincount(whole.topic[whole.rel > 0], minlength=col.n_topics)
            judgments = cell.design.sample(frame, rng=np.random.default_rng(cell.seed))
            est = evaluate_collection(one, judgments, [inum_rel]).values[0, :, 0]
            rows.append(pd.DataFrame({
                "trial": task.trial, "strategy": cell.strategy, "topic": col.topics,
                "r_hat": est, "r_true": r_true.astype(float), "r_qrels": r_qrels}))
    out = pd.concat(rows, ignore_index=True)
    named = set(np.asarray(col.topics, dtype=object)[data.judgments.has_topic])
    return out[out.topic.isin(named)].reset_index(drop=True)


def r_hat_figure(r_hat: pd.DataFrame, strategies, path) -> Path:
    """Paper 002's Fig. 1: per topic (sorted by true R) the min-max range of R^ over trials
    (line), its mean (x) and the true R (circle), the mean over trials: each trial's half of
    the runs pools its own documents, so R moves with the trial too (trial 0's alone was
    plotted before); one panel per strategy."""
    fig, axes = new_figure(len(strategies), 6, 4)
    for ax, name in zip(axes, strategies):
        g = (r_hat[r_hat.strategy == name].groupby("topic")
             .agg(lo=("r_hat", "min"), mean=("r_hat", "mean"), hi=("r_hat", "max"),
                  truth=("r_true", "mean")).sort_values("truth"))
        x = np.arange(len(g))
        ax.vlines(x, g.lo, g.hi, color="0.5", linewidth=1)
        ax.plot(x, g["mean"], "x", color="tab:blue", label="mean R^")
        ax.plot(x, g.truth, "o", mfc="none", color="tab:red", label="true R (mean)")
        ax.set_ylim(0, max(float(g.truth.max()) * 1.3, float(g.hi.max()) * 1.05, 1.0))
        ax.set_xlabel("topic (sorted by true R)")
        ax.set_ylabel("relevant documents")
        ax.set_title(f"{name}: R^ over trials (min-max, mean) vs true R", fontsize=9)
        ax.legend(fontsize=8)
    return save_figure(fig, path, dpi=110)
