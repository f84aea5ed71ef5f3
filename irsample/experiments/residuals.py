"""Paper 004's experiment: system separability against the number of judgments, per point estimate.

Ravana & Moffat, "Score estimation, incomplete judgments, and significance testing in IR
evaluation", AIRS 2010 (paper 004 here; Fig. 2 and Table 2). Protocol:

1. Judgment subsets: the first ``n`` entries of the complete qrels in an order, for each ``n`` of
   ``sizes`` (``None``: all of them). Paper 004 takes prefixes of the TREC-9 qrels file in an
   order it does not give; we offer ``order="depth"`` (default: entries by their best rank over
   the pooled runs, ties in random order, i.e. incremental depth pooling, so 1,000 judgments on
   TREC-8 are about the top 1-2 of every pooled run) and ``order="uniform"`` (a uniform random
   permutation: each subset a simple random sample of the qrels). Each trial redraws the ties
   (or the permutation) with its own seed.
2. Evaluated runs: ``runs="unpooled"`` (default; the runs that did not contribute to the pool,
   as paper 004's "46-non" TREC-9 systems, so residuals stay even with every judgment),
   ``"pooled"`` or ``"all"``.
3. Measures (paper 004): P@10, SDCG@100 and RBP with p = 0.95, each as an interval [B, T] of
   the unknown (unjudged) documents, and the point estimates
   (:mod:`irsample.measures.incomplete.score_intervals`, E = 0.01): XS = B; XB = B + E (T - B); XI
   = B + (T - B) B / (B + 1 - T); XM = (1 - resid) XI + resid XB.
4. Separability of a point estimate (paper 004's Fig. 2): the fraction of run pairs i < j whose
   paired t-test over topics on the point estimates has p < ``alpha`` (0.01 in the paper).
   Two interval versions: ``interval`` = the fraction of (run pair, topic) cells the
   pessimistic comparison decides (one interval entirely above the other; paper 004 §3), and
   ``interval_mean`` = the fraction of run pairs whose intervals of the mean over topics,
   [mean B, mean T], do not overlap. ``discordant`` counts decided pairs whose direction is the
   opposite of the same test on all judgments (point XS there).
5. Recanting (paper 004's Table 3): of the pairs significant with ``judgments``, the number
   (``recanted``) no longer significant with a larger subset ``later``, same point estimate.

Separability is not accuracy: an estimate that separates many pairs may separate them wrongly
(``discordant``); XS on a small subset evaluates a shallower measure (paper 004 §5).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..evaluation import evaluate_collection
from ..measures.incomplete.score_intervals import compare_intervals
from ..model import Judgments
from ..plots import new_figure, save_figure
from ..stats.pairs import decisions
from .data import CollectionFiles, load, parse_one
from .executors import map_on_workers
from .splits import derived_seed
from .trial import single_threaded

FAMILIES = {"P@10": "PInterval(point={})@10", "SDCG@100": "SDCG(point={})@100",
            "RBP.95": "RBP(p=0.95,point={})"}
POINTS = ("XS", "XB", "XI", "XM")
SIZES = (1000, 2000, 5000, 10000, 20000, 50000, None)
COLUMNS = ("trial", "order", "judgments", "measure", "point", "separability", "separated",
           "pairs", "discordant")
RECANT_COLUMNS = ("trial", "measure", "point", "judgments", "later", "significant", "recanted")


def run_residuals(files: CollectionFiles, *, trials: int = 5, seed: int = 2010,
                  workers: int = 1, sizes=SIZES, order: str = "depth", runs: str = "unpooled",
                  alpha: float = 0.01, out: str | Path | None = None) -> dict:
    """Run paper 004's separability experiment (module docstring) on ``files``.

    Returns ``trials`` (one row per trial x subset size x measure x point, COLUMNS),
    ``recant`` (RECANT_COLUMNS, the mean over trials of the recanted fraction),
    ``separability`` (mean over trials: rows size, columns measure x point), ``runs`` (how many
    runs are compared), ``seconds`` and ``figures`` (separability vs judgments, with ``out``).
    """
    if order not in ("depth", "uniform"):
        raise ValueError(f"order must be 'depth' or 'uniform', not {order!r}")
    if runs not in ("unpooled", "pooled", "all"):
        raise ValueError(f"runs must be 'unpooled', 'pooled' or 'all', not {runs!r}")
    start = time.perf_counter()
    spec = (tuple(sizes), order, runs, alpha, seed)
    if workers <= 1 or trials == 1:
        parts = [one_trial(files, spec, t) for t in range(trials)]
    else:
        parts = map_on_workers(one_trial, files, [(files, spec, t) for t in range(trials)],
                               min(workers, trials))
    table = pd.DataFrame([row for part, _ in parts for row in part], columns=list(COLUMNS))
    recant = pd.DataFrame([row for _, part in parts for row in part],
                          columns=list(RECANT_COLUMNS))
    recant = (recant.groupby(["measure", "point", "judgments", "later"], sort=False)
              [["significant", "recanted"]].mean())
    recant["fraction"] = recant.recanted / recant.significant
    summary = (table.groupby(["judgments", "measure", "point"], sort=False).separability.mean()
               .unstack(["measure", "point"]))
    n_runs = int(table.pairs.iloc[0]) if len(table) else 0
    result = {"trials": table, "separability": summary, "recant": recant,
              "runs": int(round((1 + np.sqrt(1 + 8 * n_runs)) / 2)),
              "seconds": time.perf_counter() - start, "figures": []}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "trials.csv", index=False)
        summary.to_csv(out / "separability.csv")
        result["figures"].append(separability_figure(summary, out / "separability.png"))
    return result


def judgment_order(frame, order: str, rng: np.random.Generator) -> np.ndarray:
    """Row indices of ``frame`` in judging order: by best rank with random ties (``depth``) or
    a uniform random permutation (``uniform``)."""
    if order == "uniform":
        return rng.permutation(len(frame.rel))
    return np.lexsort((rng.random(len(frame.rel)), frame.best_rank))


def one_trial(files: CollectionFiles, spec: tuple, trial: int) -> tuple[list, list]:
    """Rows of one trial (COLUMNS, RECANT_COLUMNS); its subsets are nested prefixes."""
    sizes, order, runs, alpha, seed = spec
    data = load(files)
    info = data.info
    pooled = tuple(r for r in range(len(info.names)) if info.pooled[r])
    evaluate = {"pooled": pooled, "all": tuple(range(len(info.names))),
                "unpooled": tuple(r for r in range(len(info.names)) if not info.pooled[r])}[runs]
    if len(evaluate) < 2:
        raise ValueError(f"fewer than two {runs} runs to compare (a collection whose runs are "
                         "all pooled, as the bundled ones: --param runs=all, or name the pooled "
                         "runs with --pooled FILE)")
    sub = data.subcollection(evaluate)
    frame = data.frame(pooled, float("inf"))
    rows_order = judgment_order(frame, order, np.random.default_rng(
        derived_seed(seed, "residuals", order, trial)))
    names = {(f, p): FAMILIES[f].format(p) for f in FAMILIES for p in (*POINTS, "B", "T")}
    measures = [parse_one(n) for n in names.values()]
    column = {key: j for j, key in enumerate(names)}
    first, second = np.triu_indices(len(evaluate), k=1)
    out = []
    reference = None
    significant = {}  # (family, point) -> [(judgments, significant flags)], largest first
    with single_threaded():
        for n in sorted(sizes, key=lambda s: np.inf if s is None else s, reverse=True):
            take = rows_order[: len(rows_order) if n is None else min(n, len(rows_order))]
            judgments = Judgments.from_arrays(
                sub, frame.topic[take], frame.tdi[take], frame.rel[take])
            values = evaluate_collection(sub, judgments, measures).values
            label = len(take)
            if reference is None:  # the largest subset first: its XS decisions are the reference
                reference = {f: decisions(values[:, :, column[f, "XS"]], alpha=alpha)
                             for f in FAMILIES}
            for f in FAMILIES:
                ref = reference[f]
                for p in POINTS:
                    d = decisions(values[:, :, column[f, p]], alpha=alpha)
                    significant.setdefault((f, p), []).append((label, d.significant))
                    wrong = d.significant & ref.significant & (d.sign != ref.sign)
                    out.append((trial, order, label, f, p, float(d.significant.mean()),
                                int(d.significant.sum()), len(d), int(wrong.sum())))
                low, high = values[:, :, column[f, "B"]], values[:, :, column[f, "T"]]
                cells = compare_intervals(low[first], high[first], low[second], high[second])
                out.append((trial, order, label, f, "interval", float(np.mean(cells != 0)),
                            int(np.sum(cells != 0)), cells.size, 0))
                means = compare_intervals(low.mean(1)[first], high.mean(1)[first],
                                          low.mean(1)[second], high.mean(1)[second])
                out.append((trial, order, label, f, "interval_mean", float(np.mean(means != 0)),
                            int(np.sum(means != 0)), len(means), 0))
    recants = []
    for (f, p), found in significant.items():
        found = found[::-1]  # smallest first
        for i, (n, sig) in enumerate(found):
            for later, sig_later in found[i + 1:]:
                recants.append((trial, f, p, n, later, int(sig.sum()),
                                int(np.sum(sig & ~sig_later))))
    return sorted(out, key=lambda r: r[2]), recants


def separability_figure(summary: pd.DataFrame, path) -> Path:
    """Paper 004's Fig. 2: separability against the number of judgments (log scale), one panel
    per measure, one line per point estimate (and the interval comparisons, dashed)."""
    families = list(dict.fromkeys(summary.columns.get_level_values(0)))
    fig, axes = new_figure(len(families), 4.5, 3.8)
    x = summary.index.to_numpy()
    for ax, f in zip(axes, families):
        for p in summary[f].columns:
            style = "--" if p.startswith("interval") else "-o"
            ax.plot(x, summary[f][p].to_numpy(), style, markersize=3, label=p)
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.set_xlabel("judgments")
        ax.set_ylabel("separability")
        ax.set_title(f, fontsize=10)
        ax.legend(fontsize=7)
    return save_figure(fig, path, dpi=110)
