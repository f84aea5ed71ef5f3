"""Paper 000 §6: xinfAP and infNDCG with the depth-100 pool in four strata.

Yilmaz, Kanoulas & Aslam, "A simple and efficient sampling method for estimating AP and NDCG",
SIGIR 2008 (paper 000 here), §6 and Fig. 4: "The first stratum is the regular depth-k pool,
fully judged. [...] we now divide the rest of the documents into three other strata and
distribute the remaining judgments with a ratio of 3:1.5:1", the remaining judgments being as
many as the depth-k pool holds. xinfAP and infNDCG on these samples are compared with infAP
and nDCG on uniform random samples of the same size (nDCG computed as it is, unjudged
documents non-relevant), by Kendall's tau and RMS error against the truth.

What the paper leaves open, and our choice (documented here and in :func:`four_strata_design`):

- the depths k (its x-axis is the judged fraction): ``depths`` (default 1, 2, 3, 5, 10);
- the boundaries of the three lower strata: ranks k+1..100 cut at the best-rank tertiles of the
  pool's documents beyond rank k (over all topics), so each lower stratum holds about a third
  of those documents;
- the rates: with n_k documents in the depth-k pool and N_s in lower stratum s, rate_s =
  share_s n_k / N_s with shares 3/5.5, 1.5/5.5, 1/5.5 (totals over topics; capped at 1).

Per trial and k one draw from the pooled runs' depth-100 pool; every run evaluated; per
(trial, k, estimator): Kendall tau, RMS error and Pearson rho between the runs' estimates and
their true MAP / nDCG (the frame truth: the depth-100 pool judged completely; on TREC-8 the
complete qrels).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..design import stratified, uniform
from .data import CollectionFiles, load
from .runner import Experiment
from .trial import strategy

SHARES = (3.0, 1.5, 1.0)
MEASURES = {"xinfAP": "AP", "infNDCG": "nDCG", "infAP": "AP", "nDCG": "nDCG"}
#: (strategy family, estimator) pairs compared, as in paper 000's Fig. 4
COMPARED = (("4strata", "xinfAP"), ("4strata", "infNDCG"), ("uniform", "infAP"),
            ("uniform", "nDCG"))


def four_strata_design(best_rank: np.ndarray, k: int, depth: int = 100):
    """(stratified design, uniform design, judged fraction) for depth ``k`` from the best ranks
    of the pool's documents (module docstring)."""
    best_rank = np.asarray(best_rank, dtype=np.float64)
    best_rank = best_rank[best_rank <= depth]
    n_k = int(np.sum(best_rank <= k))
    rest = np.sort(best_rank[best_rank > k])
    if n_k == 0 or len(rest) < 3:
        raise ValueError(f"depth {k} leaves no pool or no documents beyond it")
    b1, b2 = (int(rest[int(len(rest) * q)]) for q in (1 / 3, 2 / 3))
    b1 = max(b1, k + 1)
    b2 = max(b2, b1 + 1)
    bounds = ((k + 1, b1), (b1 + 1, b2), (b2 + 1, depth))
    parts = [f"1-{k}:1"]
    for (lo, hi), share in zip(bounds, SHARES):
        size = int(np.sum((rest >= lo) & (rest <= hi)))
        rate = min(1.0, share / sum(SHARES) * n_k / size) if size else 1.0
        parts.append(f"{lo}-{hi}:{rate:.6g}")
    fraction = 2 * n_k / len(best_rank)
    return stratified(",".join(parts)), uniform(min(fraction, 1.0)), fraction


def run_four_strata(files: CollectionFiles, *, trials: int = 10, seed: int = 2008,
                    workers: int = 2, executor: str = "processes", depths=(1, 2, 3, 5, 10),
                    progress: bool = False, scheduler=None) -> dict:
    """Run paper 000 §6's experiment (module docstring) on ``files``.

    Returns ``summary`` (k x compared estimator: judged fraction, mean tau, RMS and rho over
    trials), ``designs`` (k: the four strata and the uniform fraction), ``trials`` and ``runs``
    (the runner's tables) and ``seconds``. ``executor``, ``workers``, ``scheduler`` and
    ``progress``: as in :meth:`Experiment.run`.
    """
    data = load(files)
    frame = data.frame(data.info.pooled_runs, 100.0)
    strategies, rows = [], []
    for k in depths:
        four, flat, fraction = four_strata_design(frame.best_rank, k)
        strategies += [strategy(f"4strata-{k}", four), strategy(f"uniform-{k}", flat)]
        rows.append({"k": k, "four_strata": four.name, "uniform": flat.name,
                     "judged_fraction": fraction})
    exp = Experiment(collection=files, strategies=strategies, measures=MEASURES,
                     splits=["pooled"], trials=trials, seed=seed, ci=None, alpha=None)
    start = time.perf_counter()
    result = exp.run(executor=executor, workers=workers, scheduler=scheduler, progress=progress)
    seconds = time.perf_counter() - start
    runs = result.runs
    rho = (runs.groupby(["strategy", "trial", "measure"])
           .apply(lambda g: np.corrcoef(g.truth, g.estimate)[0, 1], include_groups=False)
           .rename("rho").reset_index())
    tr = result.trials.merge(rho, on=["strategy", "trial", "measure"])
    tr["family"] = tr.strategy.str.rsplit("-", n=1).str[0]
    tr["k"] = tr.strategy.str.rsplit("-", n=1).str[1].astype(int)
    keep = pd.Series(list(zip(tr.family, tr.measure))).isin(COMPARED).to_numpy()
    tr = tr[keep]
    summary = (tr.groupby(["k", "family", "measure"])
               .agg(judged=("judged", "mean"), pool=("pool_size", "mean"),
                    tau=("kendall_tau", "mean"), rms=("rms", "mean"), rho=("rho", "mean")))
    summary["judged_fraction"] = summary.judged / summary.pool
    return {"summary": summary.drop(columns="pool"), "designs": pd.DataFrame(rows).set_index("k"),
            "trials": result.trials, "runs": runs, "seconds": seconds}
