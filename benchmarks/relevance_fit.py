"""Benchmark: the relevance model's fit (``stats/logistic.random_intercept_logit``, one random
intercept per topic) by Newton's method, against the L-BFGS it took before (scipy's L-BFGS-B
with the exact gradient, its default tolerance, at most 500 iterations).

Per collection and rate, ``--draws`` uniform samples of that share of the depth-100 pool of the
pooled runs (seeded by ``--seed``); each sample's judged rows fit the model as
``design/planner/relevance_model.fit_relevance`` does (features [1, log N_t q_d, log rank],
topic sd 1). Printed per rate: the fits, the median milliseconds a fit of each method (one
BLAS thread), the largest difference of a fitted probability over the pool, the largest
difference of negative log posterior (L-BFGS's minus Newton's: above 0 where L-BFGS stopped
short of the mode) and in how many fits Newton's is at or below L-BFGS's.

Usage: python benchmarks/relevance_fit.py [--collection cacm] [--rates 0.05,0.1,0.2,0.3]
       [--draws 20] [--seed 1] [--shared ../shared]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def neg_log_posterior(x, y, group, n_groups, sd, coef, g) -> float:
    """sum_i log(1 + e^eta_i) - y_i eta_i + sum_g g^2 / (2 sd^2), eta = x beta + g_group."""
    eta = x @ coef + g[group]
    return float(np.sum(np.logaddexp(0.0, eta) - y * eta) + 0.5 * g @ g / sd ** 2)


def lbfgs(x, y, group, n_groups, sd):
    """The fit as it was: L-BFGS-B from the overall rate's intercept, default tolerance."""
    import scipy.optimize
    from scipy.special import expit

    k = x.shape[1]

    def objective(theta):
        coef, g = theta[:k], theta[k:]
        eta = x @ coef + g[group]
        resid = expit(eta) - y
        grad = np.concatenate([x.T @ resid,
                               np.bincount(group, weights=resid, minlength=n_groups) + g / sd ** 2])
        return neg_log_posterior(x, y, group, n_groups, sd, coef, g), grad

    start = np.zeros(k + n_groups)
    rate = min(max(float(np.mean(y)), 1e-3), 1 - 1e-3)
    start[0] = np.log(rate / (1 - rate))
    theta = scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                                    options={"maxiter": 500}).x
    return theta[:k], theta[k:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="cacm", help="cacm, vaswani, trec8 or covid")
    parser.add_argument("--rates", default="0.05,0.1,0.2,0.3")
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()
    from ht_coverage import load
    from scipy.special import expit
    from threadpoolctl import threadpool_limits

    from irsample.design.planner.relevance_model import features
    from irsample.stats.logistic import GROUP_SD, random_intercept_logit

    col, frame = load(args.collection, Path(args.shared))
    x, topic, n_topics = features(frame), frame.topic, col.n_topics
    rng = np.random.default_rng(args.seed)
    print(f"{args.collection}: {len(frame):,} pooled documents, {n_topics} topics; "
          f"{args.draws} uniform samples a rate, seed {args.seed}")
    print(" rate  fits  newton_ms  lbfgs_ms  max_dprob  max_dnlp  newton_le")
    for rate in (float(r) for r in args.rates.split(",")):
        times, dprob, dnlp = [], [], []
        for _ in range(args.draws):
            judged = rng.random(len(frame)) < rate
            y = (frame.rel[judged] >= 1).astype(np.float64)
            if y.all() or not y.any():
                continue  # fit_relevance takes the prior there
            xs, gs = x[judged], topic[judged]
            fits = []
            with threadpool_limits(limits=1, user_api="blas"):
                for fit in (random_intercept_logit, lbfgs):
                    start = time.perf_counter()
                    coef, g = fit(xs, y, gs, n_topics, GROUP_SD)
                    fits.append((time.perf_counter() - start, coef, g))
            times.append([t for t, _, _ in fits])
            prob = [expit(x @ coef + g[topic]) for _, coef, g in fits]
            dprob.append(float(np.abs(prob[0] - prob[1]).max()))
            nlp = [neg_log_posterior(xs, y, gs, n_topics, GROUP_SD, coef, g)
                   for _, coef, g in fits]
            dnlp.append(nlp[1] - nlp[0])
        if not times:
            print(f"{rate:5.2f}     0  (every sample all relevant or none)")
            continue
        ms = 1000 * np.median(np.array(times), axis=0)
        below = sum(d >= -1e-9 for d in dnlp)
        print(f"{rate:5.2f} {len(times):5d} {ms[0]:10.1f} {ms[1]:9.1f} {max(dprob):10.2e} "
              f"{max(dnlp):9.2e} {below:4d}/{len(dnlp)}", flush=True)


if __name__ == "__main__":
    main()
