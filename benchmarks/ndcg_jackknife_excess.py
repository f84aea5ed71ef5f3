"""Experiment (a record for issue 25): where nDCG's delete-one jackknife exceeds the variance of
its estimate over draws, and whether the delete-two correction removes the excess.

Why: on TREC-COVID's uniform samples the floor at ht(nDCG)'s jackknife makes its variance 24-26%
larger than the spread of the run means over draws, while the anticipated variance is right
there (REPRODUCTION.md, "Why TREC-COVID's ppi(nDCG) covers above 0.98 at 5-10%"). A delete-one
jackknife's variance is biased upward by the statistic's higher-order terms (Efron & Stein, Ann.
Statist. 9, 1981); ``jackknife_second_order.py`` measured, for AP, that removing
c sum_{i<j} D_ij^2 with the delete-two differences D_ij = theta - theta_(-i) - theta_(-j) +
theta_(-ij) takes that excess away.

Setting: a collection's runs and depth-``--depth`` pool, every topic a simple random sample of a
share f of its pool (n = round(f N), 3 or more), ``--draws`` samples a topic. Per run and topic
the plain ratio theta = DCG^ / IDCG(C^) with DCG^ = sum_d g_d / log2(rank_d + 1) / pi over the
sampled documents of positive grade the run ranks, C^_v = c_v / pi their counts by grade
(pi = n / N) and IDCG the ideal DCG of those counts as ``ht/ideal_dcg.ideal_dcg`` takes it (no
cut-off). Per draw: the linearised variance at the estimate, v_L = (1 - f) N^2 s_z^2 / n with
z_d = (t_d - theta sigma_(v_d)) / IDCG (sigma the ideal DCG's slopes), the delete-one jackknife
v_J = (1 - f) (n - 1) / n sum_i (theta_(-i) - mean)^2, and S = sum_{i<j} D_ij^2 (deleting
documents of grade 0 gives one difference, counted by multiplicity). Topics where a draw holds no
relevant document are left out of that draw (not identified: ht imputes them), and topics whose
draws miss every relevant document with probability above ``--miss`` are left out (the variance
over draws would be conditional on the draw holding one).

Printed per rate: per run, each variance's mean summed over topics over the summed variances of
theta over draws, median (range) over runs, for v_L, v_J, v_J - (1 - f) S and v_J - (1 - f)^2 S.

Usage: python benchmarks/ndcg_jackknife_excess.py --collection covid [--rates 0.05,0.1]
       [--draws 200] [--seed 1] [--depth 100] [--miss 0.001]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np
from scipy.stats import hypergeom

LABELS = ("v_L", "v_J", "-(1-f)S", "-(1-f)^2S")


def topic_terms(col, frame, t: int) -> tuple[np.ndarray, np.ndarray]:
    """(grades (N,), terms (runs, N)) of topic t's pool: each document's grade and, per run, its
    grade over log2(rank + 1) (0 where the run does not rank it)."""
    rows = np.flatnonzero(frame.topic == t)
    tdi, grade = frame.tdi[rows], frame.rel[rows].astype(np.int64)
    local = {d: i for i, d in enumerate(tdi.tolist())}
    terms = np.zeros((col.n_runs, len(rows)))
    for run in range(col.n_runs):
        s = run * col.n_topics + t
        ranked = col.rank_tdi[col.rank_offsets[s]:col.rank_offsets[s + 1]]
        for rank, d in enumerate(ranked.tolist(), start=1):
            i = local.get(d)
            if i is not None and grade[i] > 0:
                terms[run, i] = grade[i] / np.log2(rank + 1.0)
    return grade, terms


def ratio(terms_sum: np.ndarray, counts: np.ndarray, scale: np.ndarray,
          gains: np.ndarray) -> np.ndarray:
    """theta (runs, k) of k samples: sum of terms (runs, k) and counts by grade (k, G) of the
    sampled relevant documents, each sample's 1/pi in ``scale`` (k,)."""
    from irsample.measures.ht.ideal_dcg import ideal_dcg
    from irsample.measures.ht.walks import NO_CUTOFF

    ideal = ideal_dcg(counts * scale[:, None], np.tile(gains, (len(scale), 1)), NO_CUTOFF)
    return np.where(ideal > 0, terms_sum * scale[None, :] / np.where(ideal > 0, ideal, 1.0), 0.0)


def one_draw(grade, terms, drawn, n_docs, gains):
    """(theta (R,), v_L, v_J, S (each (R,))) of one sample ``drawn`` (module docstring)."""
    from irsample.measures.ht.ideal_dcg import ideal_and_slopes
    from irsample.measures.ht.walks import NO_CUTOFF

    n, n_grades = len(drawn), len(gains)
    f = n / n_docs
    rel = drawn[grade[drawn] > 0]
    m = len(rel)
    hot = np.zeros((m, n_grades))
    hot[np.arange(m), grade[rel]] = 1.0
    t = terms[:, rel]  # (R, m)
    total, counts = t.sum(axis=1), hot.sum(axis=0)
    theta = ratio(total[:, None], counts[None], np.array([n_docs / n]), gains)[:, 0]
    # linearised at the estimate: z_d per sampled document (0 - 0 for grade 0, centred below)
    ideal, slope = ideal_and_slopes((counts * n_docs / n)[None], gains[None], NO_CUTOFF)
    z = np.zeros((len(theta), n))
    z[:, :m] = (t - theta[:, None] * (hot @ slope[0])[None, :]) / max(ideal[0], 1e-300)
    v_l = (1 - f) * n_docs ** 2 / n * z.var(axis=1, ddof=1)
    # delete-one: the m relevant units, then one of grade 0 (n - m of them)
    one = np.full(m + 1, n_docs / (n - 1.0))
    minus = ratio(total[:, None] - np.hstack([t, np.zeros((len(theta), 1))]),
                  counts[None] - np.vstack([hot, np.zeros(n_grades)]), one, gains)  # (R, m+1)
    weight = np.append(np.ones(m), n - m)
    mean = (minus * weight).sum(axis=1) / n
    v_j = (1 - f) * (n - 1) / n * (((minus - mean[:, None]) ** 2) * weight).sum(axis=1)
    # delete-two: pairs of relevant, relevant with grade 0, two of grade 0
    i, j = np.triu_indices(m, 1)
    pair_t = np.hstack([t[:, i] + t[:, j], t, np.zeros((len(theta), 1))])
    pair_c = np.vstack([hot[i] + hot[j], hot, np.zeros(n_grades)])
    both = ratio(total[:, None] - pair_t, counts[None] - pair_c,
                 np.full(len(pair_c), n_docs / (n - 2.0)), gains)
    first = np.hstack([minus[:, i], minus[:, :m], minus[:, [m]]])
    second = np.hstack([minus[:, j], np.repeat(minus[:, [m]], m, axis=1), minus[:, [m]]])
    diff = theta[:, None] - first - second + both
    count = np.concatenate([np.ones(len(i)), np.full(m, n - m), [(n - m) * (n - m - 1) / 2]])
    s = ((diff ** 2) * count).sum(axis=1)
    return theta, v_l, v_j, s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", required=True,
                        help="cacm, vaswani, trec8, covid or QRELS:RUNS")
    parser.add_argument("--rates", default="0.05,0.1")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--miss", type=float, default=0.001,
                        help="leave out topics whose draws miss every relevant document with"
                        " a larger probability")
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(__file__))
    from ht_coverage import load

    rng = np.random.default_rng(args.seed)
    col, frame = load(args.collection, Path(args.shared), depth=args.depth)
    n_grades = int(frame.rel.max()) + 1
    gains = np.arange(n_grades, dtype=np.float64)
    topics = [topic_terms(col, frame, t) for t in range(col.n_topics)]
    print(f"{args.collection}: {col.n_runs} runs, {col.n_topics} topics, uniform samples of "
          f"each topic's depth-{args.depth} pool, {args.draws} draws a topic and rate, seed "
          f"{args.seed}; per run each variance's mean summed over topics over the summed "
          "variances of the plain ratio over draws, median (range) over runs")
    print(f"{'rate':>5} {'topics':>6} {'m':>5} " + " ".join(f"{x:>17}" for x in LABELS))
    for f in (float(x) for x in args.rates.split(",")):
        observed, summed, sampled_rel = np.zeros(col.n_runs), np.zeros((4, col.n_runs)), []
        kept = 0
        for grade, terms in topics:
            n_docs = len(grade)
            n = int(round(f * n_docs))
            if n < 3 or hypergeom.pmf(0, n_docs, int((grade > 0).sum()), n) > args.miss:
                continue  # a draw would miss every relevant document too often
            kept += 1
            draws = []
            for _ in range(args.draws):
                drawn = rng.choice(n_docs, n, replace=False)
                if not (grade[drawn] > 0).any():
                    continue
                sampled_rel.append(int((grade[drawn] > 0).sum()))
                draws.append(one_draw(grade, terms, drawn, n_docs, gains))
            if len(draws) < 2:
                continue
            theta, v_l, v_j, s = (np.array(x) for x in zip(*draws))  # each (draws, R)
            observed += theta.var(axis=0, ddof=1)
            summed += np.array([v_l.mean(0), v_j.mean(0), (v_j - (1 - f) * s).mean(0),
                                (v_j - (1 - f) ** 2 * s).mean(0)])
        keep = observed > 0
        ratios = summed[:, keep] / observed[keep]
        cells = " ".join(f"{np.median(r):5.3f} ({r.min():.2f}-{r.max():.2f})" for r in ratios)
        print(f"{f:5.2f} {kept:6d} {np.mean(sampled_rel):5.1f} {cells}", flush=True)


if __name__ == "__main__":
    main()
