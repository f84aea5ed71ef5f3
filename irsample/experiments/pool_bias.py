"""The pool's own bias: frame truth against complete-qrels truth, apart from sampling error.

Every simulation compares its estimates with the **frame truth** (the measure on the complete
judgments restricted to the pool the design samples from; :mod:`irsample.experiments.data`).
How far that truth is from the measure on the complete qrels is a property of the pool, not of
any sample: relevant documents outside the pool count as non-relevant for every run, more so
for runs that did not build the pool (Zobel, SIGIR 1998; Buckley & Voorhees, SIGIR 2004). This
module reports that difference, from the ``truth`` and ``truth_qrels`` columns of an
experiment's ``runs`` table:

- per run and target measure: mean over trials of the frame truth, the qrels truth and
  frame - qrels (:func:`per_run`);
- per split, target and group of runs (pooled, unpooled, all; ``n_runs`` per trial, as a
  random half changes which runs are pooled): mean frame - qrels, its root
  mean square sqrt(mean_r (frame_r - qrels_r)^2), and Kendall's tau-b between the runs' frame
  and qrels truths (``scipy.stats.kendalltau``), means over trials (:func:`summary`).

On TREC-8, whose qrels are exactly the depth-100 pool of the pooled runs, a depth-100 frame of
the pooled runs has no pool bias (RMS 0, tau 1); frames of fewer runs (random halves,
leave-one-group-out) or shallower pools, and any collection whose qrels do not come from the
runs' pool (Vaswani, CACM), do.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

KEYS = ["split", "trial", "target", "run"]


def _frames(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per split x trial x target x run (estimators and strategies of one frame share
    its truths; strategies with different frames are averaged)."""
    need = {"truth", "truth_qrels", *KEYS, "pooled"}
    missing = need - set(runs.columns)
    if missing:
        raise ValueError(f"runs table lacks {', '.join(sorted(missing))}")
    return (runs.groupby(KEYS, sort=False)
            .agg(pooled=("pooled", "first"), frame=("truth", "mean"),
                 qrels=("truth_qrels", "mean"))
            .reset_index())


def per_run(runs: pd.DataFrame) -> pd.DataFrame:
    """Per split, target and run: frame truth, qrels truth and their difference, means over
    trials; largest |difference| first."""
    t = _frames(runs)
    out = (t.groupby(["split", "target", "run"], sort=False)
           .agg(pooled=("pooled", "first"), frame_truth=("frame", "mean"),
                qrels_truth=("qrels", "mean"))
           .reset_index())
    out["pool_bias"] = out["frame_truth"] - out["qrels_truth"]
    return out.sort_values("pool_bias", key=np.abs, ascending=False, kind="stable",
                           ignore_index=True)


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per split, target and group of runs: mean pool bias, its RMS and Kendall's tau between
    frame and qrels truths (means over trials)."""
    t = _frames(runs)
    rows = []
    for (split, target), g in t.groupby(["split", "target"], sort=False):
        groups = [("all", g)]
        if g["pooled"].any() and not g["pooled"].all():
            groups += [("pooled", g[g["pooled"]]), ("unpooled", g[~g["pooled"]])]
        for name, part in groups:
            per_trial = []
            for _, one in part.groupby("trial", sort=False):
                diff = one["frame"].to_numpy() - one["qrels"].to_numpy()
                tau = (stats.kendalltau(one["qrels"], one["frame"]).statistic
                       if len(one) > 1 else math.nan)
                per_trial.append((len(one), diff.mean(), math.sqrt(np.mean(diff**2)), tau))
            n_runs, bias, rms, tau = np.mean(per_trial, axis=0)
            rows.append({"split": split, "target": target, "runs": name,
                         "n_runs": float(n_runs),
                         "mean_frame_truth": float(part["frame"].mean()),
                         "mean_qrels_truth": float(part["qrels"].mean()),
                         "bias": float(bias), "rms": float(rms), "kendall_tau": float(tau)})
    return pd.DataFrame(rows)


TEXT = ("Frame truth (complete judgments restricted to the sampled pool: what judging the "
        "whole pool would give) minus the complete-qrels truth, per split and target; a "
        "property of the pool, not of any sample, so it is reported apart from the sampling "
        "error above (which is measured against the frame truth). Means over trials; tau: "
        "Kendall's tau-b between the runs' frame and qrels truths.")


def section(runs: pd.DataFrame, *, largest: int = 10):
    """The report section (:class:`~irsample.experiments.report.Section`) of the pool bias:
    :func:`summary`, and the ``largest`` runs by |pool bias| per target."""
    from .report import Section

    table = summary(runs)
    runs_bias = per_run(runs)
    top = runs_bias.groupby(["split", "target"], sort=False).head(largest)
    top = top[top.pool_bias.abs() > 0]
    lines = "; ".join(f"{r.run} ({r.target}, {r.split}) {r.pool_bias:+.4f}"
                      for r in top.head(5).itertuples())
    largest_abs = float(runs_bias.pool_bias.abs().max()) if len(runs_bias) else 0.0
    note = (f" Largest per-run differences: {lines}." if lines else
            f" Every run's frame truth equals its qrels truth (largest |difference| "
            f"{largest_abs:.1e}).")
    return Section("Pool bias (frame truth vs complete qrels)", TEXT + note, table)
