"""Why do a design's paired comparisons reject twins too often? (issue 25, ``compare``)

Replays the type-I part of ``irsample simulate comparisons`` for one design cell, draw for draw
(the same twinned runs, twins and per-trial seeds as ``experiments/comparisons.py``), and splits
the ht(M) comparison of each run with its tie-preserving twin into what makes it reject: the
standardised difference z = D / se(D) over the trials (rejected where a t on the variance's
degrees of freedom rejects, as ``compare`` does: Satterthwaite's for the jackknife), its mean
(a difference whose two sides are estimated with different biases) and variance (1 for a
calibrated se), the ratio of the mean se to the spread of D over the trials (``sd_ratio``),
each side's bias against the frame truth (run and twin, in units of that spread), and the
rule's estimated bias of the difference (``HT.difference_bias``, summed over topics) in the
same units. Rejections at 0.05 over all pairs and over those the rule leaves unflagged are
printed first, as the recipe counts them, and last the share of the top 10 positions judged,
for runs and for twins: a design stratified by best rank samples a run's top documents, which
other runs rank high too, at higher rates than its twin's, which only the twin ranks there;
then how much se moves from draw to draw (2 / CV^2 of its square over the trials, the degrees
of freedom of a chi-squared variance with that spread) beside the estimated ones, the mean of
se^2 over the variance of D, and the rejections a t on that 2 / CV^2 would give (a check with the
draws, not an estimator). For ht(AP), last, the mean z of three other differences over the
topics both runs identify, in the same se:
the plain ratios' N^/R^ (no bias correction) and the plain ratios less the stratified jackknife's
estimate of their bias, sum_h (1 - f_h)(n_h - 1)(mean_h theta_(-d) - theta^) (Wolter §4.5;
``ht/jackknife.py``'s replicates), with its ratio of spread to se, and, as a check with the
truth (not an estimator), the numerators' difference over each topic's true R; the variance over
the trials of the topics' corrected differences against their plain ones (what the Taylor
correction adds to the spread, which a jackknife of the plain ratios would not carry); and the
pairs whose jackknife bias of the difference exceeds ``reliability.MAX_BIAS_SE`` of se, as a
flag: their share and rejections against the others'. On the planner's designs, the plan's own
predicted second-order bias of the run's mean less the twin's (``Plan.bias``, from the relevance
model fitted to the pilot), beside the observed mean difference D, both over the spread of D:
whether the planner could see a pair's bias before judging.

``--depth D`` takes the depth-D pool as the frame (as the recipe's ``--param depth=D``);
``--band`` holds the planner's rates to its band whatever its switch says
(``design/planner/plan.py``, "Band"), as ``planned_pilot_bias.py --plan band`` does.

Measured (TREC-8, planned 10% and 2strata 10%, 100 trials, seed 2525): REPRODUCTION.md,
"compare's rule for ht(AP)" and "The jackknife's degrees of freedom"; depth 20: "compare on
TREC-8's depth-20 planned cells: what the sample can and cannot see" and "...: the Taylor
correction's own variance".

Usage: python benchmarks/compare_twin_anatomy.py [--collection trec8|vaswani|cacm]
       [--shared ../shared] [--cell 'planned 10%'] [--trials 100] [--seed 2525] [--twins 20]
       [--measure 'ht(AP)'] [--depth 100] [--band]  (vaswani, cacm: the bundled collections;
       --twins 0 twins every run, as the recipe does when it is not given)
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", default="trec8", choices=("trec8", "vaswani", "cacm"))
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--cell", default="planned 10%")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=2525)
    parser.add_argument("--twins", type=int, default=20, help="runs twinned (0: all)")
    parser.add_argument("--measure", default="ht(AP)")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--band", action="store_true",
                        help="hold the planner's rates to its band whatever its switch says")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))

    from irsample.comparison import pair_status
    from irsample.design.planner.sequential import PlannedDesign
    from irsample.evaluation import evaluate_collection
    from irsample.experiments import CollectionFiles
    from irsample.experiments.comparisons import add_twins, pooled_twin_frame
    from irsample.experiments.coverage import design_cells
    from irsample.experiments.data import load
    from irsample.measures import parse
    from irsample.measures.context import EvalContext, safe_divide
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.ht.inclusion import ht_design
    from irsample.measures.ht.jackknife import ap_replicates
    from irsample.measures.ht.pairs import pair_estimates
    from irsample.measures.ht.walks import NO_CUTOFF
    from irsample.measures.reliability import MAX_BIAS_SE, quadrature_cells, summed_bias
    from irsample.model import JUDGED
    from irsample.stats.random import derived_seed

    if args.band:  # the module (``import ... as`` would bind the package's plan function)
        planner = importlib.import_module("irsample.design.planner.plan")
        planner.BIAS_LIMIT = -1.0  # every plan's predicted bias is above it: always banded

    if args.collection == "trec8":
        folder = Path(args.shared) / "data" / "trec8-adhoc"
        files = CollectionFiles.of(folder / "runs", folder / "qrels.trec8.adhoc",
                                   pooled=folder / "run-pooled-flag.txt")
    else:  # a bundled collection, every run pooled
        folder = ROOT / "irsample" / "data" / args.collection
        files = CollectionFiles.of(folder / "runs", folder / "qrels.gz")
    data = load(files)
    frame = data.frame(data.info.pooled_runs, args.depth)
    percent = float(args.cell.split()[1].rstrip("%"))
    cells = design_cells(len(frame), [percent], depth=args.depth)
    design = cells[args.cell]
    n_runs = data.collection.n_runs
    chosen = list(range(n_runs)) if args.twins <= 0 or args.twins >= n_runs else sorted(
        np.random.default_rng(derived_seed(args.seed, "twinned")).choice(
            n_runs, args.twins, replace=False).tolist())
    twins = add_twins(data.collection, frame, chosen,
                      np.random.default_rng(derived_seed(args.seed, "twins")))
    first, second = np.array(chosen), n_runs + np.arange(len(chosen))
    twin_frame = pooled_twin_frame(frame, twins, first, second)
    (measure,) = parse(args.measure)
    truth = evaluate_collection(twins, twin_frame.judgments(), [measure.inner]).values[:, :, 0]
    a, b = np.triu_indices(twins.n_runs, k=1)
    where = {(int(x), int(y)): k for k, (x, y) in enumerate(zip(a, b))}
    pairs = np.array([where[(min(x, y), max(x, y))] for x, y in zip(first, second)])
    diff, se, df, flagged, run_error, twin_error, rule = ([] for _ in range(7))
    predicted = []  # the planner's predicted bias of run minus twin, per trial (planned cells)
    if isinstance(design, PlannedDesign):
        log_plans(predicted, first, second)
    plain, jackknifed, jack_bias, true_r = [], [], [], []
    topic_plain, topic_corrected = [], []  # per trial: (twins, topics) differences, NaN if not
    r_true = evaluate_collection(twins, twin_frame.judgments(), parse("num_rel")).values[0, :, 0]
    top = {"run": [], "twin": []}
    offsets = twins.rank_offsets
    start = time.time()
    for trial in range(args.trials):
        rng = np.random.default_rng(derived_seed(args.seed, "type1", args.cell, trial))
        ctx = EvalContext(twins, design.sample(twin_frame, rng=rng))
        pe = pair_estimates(ctx, measure.inner)
        sd = np.sqrt(pe.variance)
        diff.append(pe.diff[pairs])
        se.append(sd[pairs])
        df.append(pe.df[pairs])
        flagged.append(pair_status(ctx, measure, pe, sd).unreliable[pairs])
        values = np.asarray(measure.compute(ctx)).reshape(twins.n_runs, -1)
        error = np.where(ctx.answered, values - truth, 0.0).sum(1) / ctx.answered.sum(1)
        run_error.append(error[first])
        twin_error.append(error[second])
        both = ctx.answered[first] & ctx.answered[second]
        bias = np.where(both, measure.difference_bias(ctx, first, second), 0.0)
        fixed = quadrature_cells(ctx, measure, (twins.n_runs, twins.n_topics))
        rule.append(summed_bias(bias, fixed[first] & fixed[second]) / both.sum(1))
        est = estimate(ctx, measure.inner)
        if est.replicates is not None:  # ht(AP): the plain and jackknifed differences
            shape = (twins.n_runs, twins.n_topics)
            theta = est.plain.reshape(shape)
            # the plain ratios' replicates (the estimate's are of the corrected ratio on the
            # planner's designs: ht/corrected_replicates.py)
            bj = jackknife_bias(ctx, ht_design(ctx), ap_replicates(ctx, ht_design(ctx), NO_CUTOFF),
                                theta)
            known = est.known.reshape(shape)
            ident = known[first] & known[second]
            k = np.maximum(ident.sum(1), 1)
            d_plain = np.where(ident, theta[first] - theta[second], 0.0).sum(1) / k
            d_bias = np.where(ident, bj[first] - bj[second], 0.0).sum(1) / k
            plain.append(d_plain)
            corrected = est.value.reshape(shape)  # the Taylor-corrected ratio on these topics
            topic_plain.append(np.where(ident, theta[first] - theta[second], np.nan))
            topic_corrected.append(np.where(ident, corrected[first] - corrected[second], np.nan))
            jackknifed.append(d_plain - d_bias)
            jack_bias.append(d_bias)
            num = est.num.reshape(shape)
            true_r.append(np.where(ident, safe_divide(num[first] - num[second], r_true), 0.0)
                          .sum(1) / k)
        judged = ctx.judgments.state == JUDGED
        for side, runs in (("run", first), ("twin", second)):
            segments = (runs[:, None] * twins.n_topics + np.arange(twins.n_topics)).ravel()
            top[side].append(np.mean([judged[twins.rank_tdi[offsets[g]:offsets[g + 1]][:10]]
                                      .mean() for g in segments if offsets[g + 1] > offsets[g]]))
    diff, se, df, flagged, run_error, twin_error, rule = map(
        np.array, (diff, se, df, flagged, run_error, twin_error, rule))
    z = diff / se
    rejected = stats.t.sf(np.abs(z), df) < 0.025  # compare's test: t on the variance's df
    spread = diff.std(axis=0)
    print(f"{args.collection} {args.cell}, {args.measure}, {args.trials} trials x "
          f"{len(chosen)} twins, seed "
          f"{args.seed} ({time.time() - start:.0f} s)")
    unflagged = f"{rejected[~flagged].mean():.3f}" if (~flagged).any() else "- (none)"
    print(f"rejections: all {rejected.mean():.3f}, unflagged {unflagged} "
          f"({flagged.mean():.3f} flagged; as a normal test {np.mean(np.abs(z) > 1.96):.3f}); "
          f"z: mean {z.mean():.3f}, variance {z.var():.3f}; sd_ratio median "
          f"{np.median(se.mean(0) / spread):.3f}; df median {np.median(df):.1f}")
    for name, row in (("mean z", z.mean(0)), ("sd_ratio", se.mean(0) / spread),
                      ("run bias / spread", run_error.mean(0) / spread),
                      ("twin bias / spread", twin_error.mean(0) / spread),
                      ("mean D / spread", diff.mean(0) / spread),
                      ("rule's bias / spread", rule.mean(0) / spread)):
        print(f"{name:>21}: mean {row.mean():+.3f}  " + " ".join(f"{v:+.2f}" for v in row))
    print(f"top 10 positions judged: runs {np.mean(top['run']):.3f}, twins "
          f"{np.mean(top['twin']):.3f}")
    # how much the variance moves with the draw: 2 / CV^2 of se^2 over the trials, per twin (the
    # degrees of freedom a chi-squared variance with that spread has), against the estimated df
    v = se * se
    implied = 2.0 / (v.std(axis=0) / v.mean(axis=0)) ** 2
    moved = [np.corrcoef(diff[:, k], se[:, k])[0, 1] for k in range(diff.shape[1])]
    print(f"variance over the trials: 2/CV^2 median {np.median(implied):.1f} (range "
          f"{implied.min():.1f}-{implied.max():.1f}), estimated df median {np.median(df):.1f}; "
          f"correlation of D and se, mean over twins {np.nanmean(moved):+.2f}")
    oracle = stats.t.sf(np.abs(z), implied[None, :]) < 0.025
    print(f"mean se^2 / variance of D over the trials: median over twins "
          f"{np.median(v.mean(axis=0) / diff.var(axis=0)):.3f}; rejections with a t on each "
          f"twin's 2/CV^2 (the draws' own spread of se^2, not an estimator) {oracle.mean():.3f}")
    if predicted:
        spread_d = diff.std(axis=0)
        guess = np.mean(predicted, axis=0)
        pooled = np.isfinite(guess)
        print(f"planner's predicted bias, run - twin, over the spread of D ({pooled.sum()} pooled "
              f"runs): mean {np.mean(guess[pooled] / spread_d[pooled]):+.3f} (observed mean D / "
              f"spread {np.mean(diff.mean(axis=0)[pooled] / spread_d[pooled]):+.3f}); "
              f"correlation over those twins "
              f"{np.corrcoef(guess[pooled], diff.mean(axis=0)[pooled])[0, 1]:+.2f}")
    if plain:
        plain, jackknifed, jack_bias, true_r = map(np.array, (plain, jackknifed, jack_bias,
                                                             true_r))
        for name, d in (("plain ratios (no correction)", plain),
                        ("jackknife-corrected ratios", jackknifed),
                        ("numerators over the true R (truth)", true_r)):
            print(f"{name}: mean z {np.mean(d / se):+.3f}, spread / se "
                  f"{np.mean(d.std(axis=0) / se.mean(axis=0)):.3f}, rejections as a normal test "
                  f"{np.mean(np.abs(d / se) > 1.96):.3f}")
        # what the Taylor correction adds to a topic's difference: its spread over the trials,
        # corrected against plain, summed over (twin, topic) cells identified in every trial
        tp, tc = np.array(topic_plain), np.array(topic_corrected)
        every = np.isfinite(tp).all(axis=0)
        print(f"topic differences' variance over the trials, Taylor-corrected / plain ratio: "
              f"{tc.var(axis=0)[every].sum() / tp.var(axis=0)[every].sum():.3f} "
              f"({every.sum()} twin x topic cells identified in every trial)")
        big = np.abs(jack_bias) > MAX_BIAS_SE * se
        print(f"jackknife bias of the difference above {MAX_BIAS_SE} se: {big.mean():.3f} of the "
              f"pairs, rejecting {rejected[big].mean():.3f} against {rejected[~big].mean():.3f}"
              f"; with the rule's flags, the pairs left unflagged reject "
              f"{rejected[~(big | flagged)].mean():.3f} ({np.mean(big | flagged):.3f} flagged)")


def log_plans(predicted: list, first, second) -> None:
    """Make the planner's draws (``PlannedDesign.select``, which calls the sequential module's
    ``judge_in_batches``) append to ``predicted`` each draw's last plan's predicted bias of run
    ``first[k]``'s mean less run ``second[k]``'s (``Plan.bias`` is indexed by the frame's
    pooled runs; NaN for a run not pooled, whose twin is not either). The draws themselves are
    unchanged: only a :class:`BatchLog` is passed."""
    sequential = importlib.import_module("irsample.design.planner.sequential")
    draw = sequential.judge_in_batches

    def judge_logged(units, *args, **kwargs):
        log = sequential.BatchLog()
        sample = draw(units, *args, log=log, **kwargs)
        at = {int(r): k for k, r in enumerate(units.runs)}
        bias = log.plans[-1].bias
        predicted.append(np.array([bias[at[int(a)]] - bias[at[int(b)]] if int(a) in at
                                   else np.nan for a, b in zip(first, second)]))
        return sample

    sequential.judge_in_batches = judge_logged


def jackknife_bias(ctx, design, replicates, theta):
    """(runs, topics): the stratified jackknife's estimate of the bias of the plain ratios
    ``theta``, sum_h (1 - f_h)(n_h - 1)(mean_h theta_(-d) - theta^) over the cells sampled twice
    or more (the replicates of ``ht/jackknife.py``: a cell's non-relevant deletions share one)."""
    from irsample.measures.context import safe_divide

    rep_offsets, rep, base, (offsets, cell, pi, _) = replicates
    n_runs, n_topics = theta.shape
    n = design.cell_n.astype(np.float64)
    fpc = 1.0 - safe_divide(n - design.cell_w, n)
    out = np.zeros(theta.shape)
    for t in range(n_topics):
        segs = np.arange(n_runs) * n_topics + t
        u = rep_offsets[segs[0] + 1] - rep_offsets[segs[0]]
        units = rep[rep_offsets[segs][:, None] + np.arange(u)]
        cells = cell[offsets[t]:offsets[t + 1]]
        certain = pi[offsets[t]:offsets[t + 1]] >= 1.0
        for h in range(design.n_cells):
            if n[t, h] < 2:
                continue
            mine = units[:, (cells == h) & ~certain]
            mean = (mine.sum(axis=1) + (n[t, h] - mine.shape[1]) * base[segs, h]) / n[t, h]
            out[:, t] += fpc[t, h] * (n[t, h] - 1.0) * (mean - theta[:, t])
    return out


if __name__ == "__main__":
    main()
