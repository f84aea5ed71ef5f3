"""Is ppi's interval as wide as its error? Its variance, bias and coverage over draws.

Draws ``--trials`` samples of one design of ``irsample simulate model-assisted`` (the same
seeds: trial t's draw is that of the recipe run on this one design and percentage) on a
collection with complete judgments, labels the frame with one of the recipe's label sources, and
prints for ppi(M) (``--measure``, AP or nDCG; ``--form``, nDCG's) tuned as by default,
ppi(M) at fixed weights 0.5 and 0.8, with ``--design-centre`` ppi(M) tuned with its
correction centred on the design's draws (``centre="design"``, ``ppi/redraw.py``: 100
evaluations of ht on the labels a draw, so it is asked for), and ht(M): the coverage of the 95%
intervals of the run means, the median over runs of the mean estimated se over the spread of
the estimates (``se_over_sd``) and over the root-mean-square error (``se_over_rms``), the mean
bias in standard deviations of the estimate, the share of misses below and above, the mean
half-width and lambda; and for AP the labels' own ht(AP) bias (``ht_f`` against AP(f)), which
ppi's correction carries into its estimate times lambda.
Last, for AP, the estimated variances of the run means of ht_y and ht_f and their covariance
(with the jackknife's and the linearised correlation, ``ppi/ap_ratio.py``) over their values
across the draws.

Measured (seed 2525, kappa 0.7 labels, 100 trials): REPRODUCTION.md, "ppi(AP)'s variance: the
jackknife's correlation".

Usage: python benchmarks/ppi_variance_anatomy.py [--collection covid] [--strategy planned]
       [--percent 5] [--trials 100] [--labels kappa0.7] [--measure AP]
       [--form auto|control|difference] [--design-centre] [--seed 2525] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ht_coverage import recipe_cell  # noqa: E402


def draws(args) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per trial, estimator and run: the run mean's estimate, variance and truth; and
    for AP one row per trial and run with the means of ht_y and ht_f and their estimated
    variances and covariance (the jackknife's and the linearised correlation's)."""
    from irsample.experiments.model_assisted import _means
    from irsample.measures import parse
    from irsample.measures.ht.estimator import estimate as ht_estimate
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import jackknife_cross_moments
    from irsample.measures.ppi.ap_ratio import strata_moments
    from irsample.measures.ppi.estimate import label_contexts, ppi_estimate

    setup = recipe_cell(args.collection, Path(args.shared), args.seed, args.percent, args.strategy)
    n_runs, evaluated, q = setup.collection.n_runs, setup.evaluated, setup.q
    truth = setup.truth_mean[:, ["AP", "nDCG"].index(args.measure)]
    rows, moments, started = [], [], time.time()

    def add(trial, name, values, variances, lam):
        est = _means(values, evaluated, q, n_runs)
        var = _means(variances, evaluated, q, n_runs) / np.maximum(q, 1)
        lam = lam.reshape(n_runs, -1).max(axis=1)
        rows.extend(zip([trial] * n_runs, [name] * n_runs, range(n_runs), est, var, truth, lam))

    for trial in range(args.trials):
        for _, _, _, ctx, sources in setup.trial(trial):
            labels = sources[args.labels]
            forms = [("ppi tuned", None, "census"), ("ppi 0.5", 0.5, "census"),
                     ("ppi 0.8", 0.8, "census")]
            if args.design_centre:
                forms.append(("ppi design centre", None, "design"))
            for name, tuning, centre in forms:
                e = ppi_estimate(ctx, labels, args.measure, tuning=tuning, form=args.form,
                                 centre=centre)
                add(trial, name, e.value, e.variance, e.lam)
            add(trial, "ht", e.ht, e.ht_variance, 0.0 * e.lam)
            if args.measure != "AP":
                continue
            est_f = _means(np.nan_to_num(e.ht_f), evaluated, q, n_runs)
            auto = _means(e.auto, evaluated, q, n_runs)
            rows.extend(zip([trial] * n_runs, ["labels' ht_f"] * n_runs, range(n_runs), est_f,
                            [0.0] * n_runs, auto, [0.0] * n_runs))
            ctx_f, m = label_contexts(ctx, labels)[0], parse("AP")[0]
            hy, hf = ht_estimate(ctx, m), ht_estimate(ctx_f, m)
            v_y, v_f = hy.variance_from_sample, hf.variance_from_sample
            jack = jackknife_cross_moments(ctx, ht_design(ctx), hy.replicates,
                                          hf.replicates)[:3]
            c_jack = strata_moments(ctx, ctx_f, hy, hf, v_y, v_f, moments=jack)[0].sum(axis=1)
            c_lin = strata_moments(ctx, ctx_f, hy, hf, v_y, v_f)[0].sum(axis=1)
            means = [_means(np.nan_to_num(x), evaluated, q, n_runs) for x in (hy.value, hf.value)]
            variances = [_means(v, evaluated, q, n_runs) / np.maximum(q, 1)
                         for v in (v_y, v_f, c_jack, c_lin)]
            moments.extend(zip([trial] * n_runs, range(n_runs), *means, *variances))
        if (trial + 1) % 20 == 0:
            print(f"trial {trial + 1}: {time.time() - started:.0f} s", file=sys.stderr)
    return (pd.DataFrame(rows, columns=["trial", "estimator", "run", "value", "var", "truth",
                                        "lam"]),
            pd.DataFrame(moments, columns=["trial", "run", "y", "f", "v_y", "v_f", "c_jackknife",
                                           "c_linearised"]))


def moments_summary(m: pd.DataFrame) -> str:
    """Median over runs of each estimated moment of the run means over its observed value
    across the draws (runs whose estimates move)."""
    runs = m.groupby("run")
    observed = pd.DataFrame({"v_y": runs.y.var(), "v_f": runs.f.var(),
                             "c": runs.apply(lambda d: np.cov(d.y, d.f)[0, 1],
                                             include_groups=False)})
    estimated = runs[["v_y", "v_f", "c_jackknife", "c_linearised"]].mean()
    moving = (observed.v_y > 0) & (observed.v_f > 0)
    parts = [f"{name} {np.median((estimated[name] / observed[obs])[moving]):.3f}"
             for name, obs in (("v_y", "v_y"), ("v_f", "v_f"), ("c_jackknife", "c"),
                               ("c_linearised", "c"))]
    rho = observed.c / np.sqrt(observed.v_y * observed.v_f)
    return ("estimated / observed, median over runs: " + ", ".join(parts)
            + f"; observed correlation {np.median(rho[moving]):.3f}")


def summary(df: pd.DataFrame) -> pd.DataFrame:
    out = {}
    for name, d in df.groupby("estimator", sort=False):
        err = d.value - d.truth
        runs = d.groupby("run")
        sd = runs.value.std()
        se = np.sqrt(runs["var"].mean())
        rms = np.sqrt((err * err).groupby(d.run).mean())
        moving = sd > 0  # runs whose estimate moves over the draws
        z = err / np.sqrt(d["var"])
        row = {"bias_over_sd": float((err.groupby(d.run).mean() / sd)[moving].mean())}
        if name != "labels' ht_f":
            row |= {"coverage": float(np.mean(np.abs(z) <= 1.96)),
                    "se_over_sd": float(np.median((se / sd)[moving])),
                    "se_over_rms": float(np.median((se / rms)[moving])),
                    "miss_low": float(np.mean(z < -1.96)), "miss_high": float(np.mean(z > 1.96)),
                    "halfwidth": float(1.96 * np.sqrt(d["var"]).mean()),
                    "lambda": float(d.lam.mean())}
        out[name] = row
    return pd.DataFrame(out).T


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="covid")
    parser.add_argument("--strategy", default="planned")
    parser.add_argument("--percent", type=float, default=5.0)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--labels", default="kappa0.7",
                        help="kappa0.3, kappa0.5, kappa0.7, adversarial or fusion")
    parser.add_argument("--measure", choices=("AP", "nDCG"), default="AP")
    parser.add_argument("--form", choices=("auto", "control", "difference"), default="auto",
                        help="ppi(nDCG)'s form")
    parser.add_argument("--design-centre", action="store_true",
                        help="add ppi with its correction centred on the design's draws")
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args(argv)
    print(f"ppi({args.measure}, {args.form} form), {args.collection} {args.strategy} "
          f"{args.percent:g}%, {args.labels} labels, "
          f"{args.trials} trials, seed {args.seed}")
    table, moments = draws(args)
    print(summary(table).to_string(float_format=lambda x: f"{x:.3f}"))
    if len(moments):
        print("ht_y and ht_f (ht(AP) on the labels):", moments_summary(moments))


if __name__ == "__main__":
    main()
