"""Do the per-topic intervals that ``eval -q --ci`` marks ``ok`` cover the topic's truth?

For ``--draws`` samples of one design of ``irsample simulate ci-coverage`` (the depth-100 pool
of the collection's runs as the frame, its complete judgments as the truth;
``ht_coverage.design_for``) this evaluates ht(AP), ht(nDCG), ht(P@10) and ht(num_rel) with 95%
intervals, as ``irsample eval -q --ci 0.95`` does, and sets each (run, topic) interval against
the topic's truth on the frame: per measure, the share of the per-topic intervals flagged
(``irsample/measures/topic_status.py``), the coverage of those marked ``ok``, of the flagged
ones that have limits, and the share of flagged ones without (imputed topics). The Monte Carlo
error of a coverage treats each draw as a cluster (the runs and topics of one draw miss
together).

Measured: REPRODUCTION.md, "Per-topic intervals and their status".

Usage: python benchmarks/topic_intervals.py [--collection cacm] [--design uniform]
       [--percent 20] [--draws 100] [--seed 5] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import design_cell_arguments, design_for, load  # noqa: E402

MEASURES = ("ht(AP)", "ht(nDCG)", "ht(P@10)", "ht(num_rel)")


def clustered(hits: list, counts: list) -> tuple[float, float]:
    """A share pooled over draws (sum of hits / sum of counts) and its Monte Carlo standard
    error with each draw a cluster (ratio estimator's linearisation); NaN without counts."""
    hits, counts = np.asarray(hits, float), np.asarray(counts, float)
    total = counts.sum()
    if total == 0:
        return float("nan"), float("nan")
    share = hits.sum() / total
    k = len(counts)
    resid = hits - share * counts
    se = np.sqrt(k / max(k - 1, 1) * (resid ** 2).sum()) / total
    return float(share), float(se)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    design_cell_arguments(ap, ROOT, design="uniform", percent=20.0, draws=100)
    a = ap.parse_args(argv)

    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse
    from irsample.stats.intervals import covers

    collection, frame = load(a.collection, a.shared)
    design = design_for(a.design, a.percent / 100, frame)
    measures = [parse(m)[0] for m in MEASURES]
    targets = [m.inner for m in measures]
    truth = evaluate_collection(collection, frame.judgments(), targets).values
    keys = ("cells", "flagged", "ok", "ok_hit", "limits", "limits_hit")
    tally = {m: {k: [] for k in keys} for m in MEASURES}
    for child in np.random.SeedSequence(a.seed).spawn(a.draws):
        judgments = design.sample(frame, rng=np.random.default_rng(child))
        ev = evaluate_collection(collection, judgments, measures, ci=0.95)
        low, high = ev.interval(summary=False)
        for j, name in enumerate(MEASURES):
            cell = ev.evaluated & ~np.isnan(truth[:, :, j])
            flag = ev.statuses.topic_flags[:, :, j] > 0
            hit = covers(ev.values[:, :, j], low[:, :, j], high[:, :, j], truth[:, :, j])
            has = np.isfinite(low[:, :, j])
            t = tally[name]
            t["cells"].append(cell.sum())
            t["flagged"].append((cell & flag).sum())
            t["ok"].append((cell & ~flag).sum())
            t["ok_hit"].append((cell & ~flag & hit).sum())
            t["limits"].append((cell & flag & has).sum())
            t["limits_hit"].append((cell & flag & has & hit).sum())
    print(f"{a.collection} {a.design} {a.percent:g}%, {a.draws} draws (seed {a.seed}): per-topic "
          "95% intervals against the topic's truth on the frame")
    print("| measure | cells a draw | flagged | ok: coverage | flagged with limits: coverage | "
          "flagged without limits |")
    print("|---|---|---|---|---|---|")
    for name, t in tally.items():
        flagged, _ = clustered(t["flagged"], t["cells"])
        ok, ok_se = clustered(t["ok_hit"], t["ok"])
        lim, lim_se = clustered(t["limits_hit"], t["limits"])
        none = 1.0 - sum(t["limits"]) / max(sum(t["flagged"]), 1)
        print(f"| {name} | {np.mean(t['cells']):.0f} | {flagged:.3f} | {ok:.3f} +- {ok_se:.3f} | "
              f"{lim:.3f} +- {lim_se:.3f} | {none:.3f} of the flagged |")


if __name__ == "__main__":
    main()
