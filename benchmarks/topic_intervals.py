"""Do the per-topic intervals that ``eval -q --ci`` marks ``ok`` cover the topic's truth?

For ``--draws`` samples of one design of ``irsample simulate ci-coverage`` (the depth-100 pool
of the collection's runs as the frame, its complete judgments as the truth;
``ht_coverage.design_for``) this evaluates ht(AP), ht(nDCG), ht(P@10) and ht(num_rel) with 95%
intervals, as ``irsample eval -q --ci 0.95`` does, and sets each (run, topic) interval against
the topic's truth on the frame: per measure, the share of the per-topic intervals flagged
(``irsample/measures/topic_status.py``), the coverage of those marked ``ok`` and their mean
half-width, the coverage of the flagged ones that have limits, and the share of flagged ones
without (imputed topics). The Monte Carlo
error of a coverage treats each draw as a cluster (the runs and topics of one draw miss
together). ``--labels kappaK`` evaluates ppi(AP), ppi(nDCG) and ppi(P@10) instead, with
automatic labels that copy the frame's grades at Cohen's kappa K (``irsample simulate
model-assisted``'s noisy labels: one noise draw per sample, seeded with it).

Measured: REPRODUCTION.md, "Per-topic intervals and their status".

Designs: uniform, 2strata, planned, top10, importance (statAP's).

Usage: python benchmarks/topic_intervals.py [--collection cacm] [--design uniform]
       [--percent 20] [--draws 100] [--seed 5] [--shared ../shared] [--labels kappa0.7]
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
#: with ``--labels``
PPI_MEASURES = ("ppi(AP)", "ppi(nDCG)", "ppi(P@10)")


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
    ap.add_argument("--labels", default=None, help="kappaK: ppi's measures, labels at kappa K")
    a = ap.parse_args(argv)

    from irsample.design.labels.simulated import calibrate_sigma, noisy_grades
    from irsample.evaluation import evaluate_collection
    from irsample.io.labels import AutoLabels
    from irsample.measures import parse
    from irsample.stats.intervals import covers

    collection, frame = load(a.collection, a.shared)
    design = design_for(a.design, a.percent / 100, frame)
    names = MEASURES if a.labels is None else PPI_MEASURES
    measures = [parse(m)[0] for m in names]
    targets = [m.inner for m in measures]
    truth = evaluate_collection(collection, frame.judgments(), targets).values
    if a.labels is not None:
        sigma = calibrate_sigma(frame.rel, float(a.labels.removeprefix("kappa")), rng=a.seed)
    keys = ("cells", "flagged", "ok", "ok_hit", "limits", "limits_hit", "ok_width")
    tally = {m: {k: [] for k in keys} for m in names}
    for child in np.random.SeedSequence(a.seed).spawn(a.draws):
        draw, noise_seed = child.spawn(2)
        judgments = design.sample(frame, rng=np.random.default_rng(draw))
        labels = None
        if a.labels is not None:
            value = np.full(collection.n_tdi, np.nan)
            noise = np.random.default_rng(noise_seed).standard_normal(len(frame))
            value[frame.tdi] = noisy_grades(frame.rel, sigma, noise)
            labels = AutoLabels(value, "grade", a.labels)
        ev = evaluate_collection(collection, judgments, measures, ci=0.95, auto_labels=labels)
        low, high = ev.interval(summary=False)
        for j, name in enumerate(names):
            cell = ev.evaluated & ~np.isnan(truth[:, :, j])
            flag = ev.statuses.topic_flags[:, :, j] > 0
            hit = covers(ev.values[:, :, j], low[:, :, j], high[:, :, j], truth[:, :, j])
            has = np.isfinite(low[:, :, j])
            t = tally[name]
            t["cells"].append(cell.sum())
            t["flagged"].append((cell & flag).sum())
            t["ok"].append((cell & ~flag).sum())
            t["ok_hit"].append((cell & ~flag & hit).sum())
            t["ok_width"].append(np.where(cell & ~flag, high[:, :, j] - low[:, :, j], 0.0).sum())
            t["limits"].append((cell & flag & has).sum())
            t["limits_hit"].append((cell & flag & has & hit).sum())
    print(f"{a.collection} {a.design} {a.percent:g}%, {a.draws} draws (seed {a.seed})"
          f"{'' if a.labels is None else ', labels ' + a.labels}: per-topic 95% intervals "
          "against the topic's truth on the frame")
    print("| measure | cells a draw | flagged | ok: coverage | ok: mean half-width | flagged with "
          "limits: coverage | flagged without limits |")
    print("|---|---|---|---|---|---|---|")
    for name, t in tally.items():
        flagged, _ = clustered(t["flagged"], t["cells"])
        ok, ok_se = clustered(t["ok_hit"], t["ok"])
        lim, lim_se = clustered(t["limits_hit"], t["limits"])
        none = 1.0 - sum(t["limits"]) / max(sum(t["flagged"]), 1)
        width = sum(t["ok_width"]) / max(2 * sum(t["ok"]), 1)
        print(f"| {name} | {np.mean(t['cells']):.0f} | {flagged:.3f} | {ok:.3f} +- {ok_se:.3f} | "
              f"{width:.4f} | {lim:.3f} +- {lim_se:.3f} | {none:.3f} of the flagged |")


if __name__ == "__main__":
    main()
