"""Which estimator's 95% intervals are calibrated, per target measure: the measured choice that
``irsample plan`` follows (kept free of heavy imports: the CLI reads it while building its
parsers). ``irsample demo`` judges in rounds and prints the design-based estimators, whose
intervals carry a reliability status, instead.

The evidence: ``benchmarks/demo_coverage.py --once`` (the demo's round-1 design drawn once, 20
seeds, on the bundled Vaswani and CACM) and ``irsample simulate ci-coverage``
(:mod:`irsample.experiments.coverage`; REPRODUCTION.md, "Intervals of run means": per design
and judged percentage, the share of runs x trials whose 95% interval of a run's mean covers the
frame truth). For each measure the
chosen estimator is the one whose coverage is closest to 0.95 on the demo's design, provided it
reaches at least 0.93; ``None`` when none does (point estimates only).
Update this table and :data:`EVIDENCE` together with the measurement, never by hand-picking.
"""

from __future__ import annotations

#: target measure -> the estimator whose 95% intervals are calibrated (None: none is)
INTERVALS: dict[str, str | None] = {"AP": None, "nDCG": "infNDCG"}

#: target measure -> the measured coverage behind the choice (printed by the commands); numbers
#: from ``python benchmarks/demo_coverage.py --once xinfAP,ht(AP),infNDCG,ht(nDCG) --seeds 20
#: [--collection cacm]`` (the demo's round-1 design at 10% drawn once, seeds 2008-2027: mean
#: share of the 11 runs whose interval covers the pool's truth; re-measured on 2026-12-08)
EVIDENCE: dict[str, str] = {
    "AP": ("no AP estimator's 95% intervals reached 0.93 on the demo's design at 10% over 20 "
           "seeds: ht(AP)'s covered the pool's truth for 13.2% of the runs on Vaswani and 14.1% "
           "on CACM, xinfAP's 6.4% and 1.8% (benchmarks/demo_coverage.py); the estimates are "
           "biased on topics whose sample holds few relevant documents, and ht(AP)'s "
           "intervals are flagged unreliable by the rule there"),
    "nDCG": ("infNDCG's 95% intervals covered the pool's truth for 94.5% of the runs on "
             "Vaswani and 99.5% on CACM over 20 seeds of the demo's design at 10% "
             "(benchmarks/demo_coverage.py; ht(nDCG): 31.8% and 16.4%, flagged)"),
}

#: the estimators of a measure that irsample plan can plan for -> its target measure
TARGET_OF = {"xinfAP": "AP", "statAP": "AP", "infAP": "AP", "ht(AP)": "AP",
             "infNDCG": "nDCG", "ht(nDCG)": "nDCG"}


def interval_note(estimator: str) -> str:
    """One line for the output of a command that plans or reports ``estimator``: which
    estimator's intervals to report for its measure, and why."""
    target = TARGET_OF.get(estimator)
    if target is None:
        return f"intervals: no coverage measured for {estimator}"
    chosen = INTERVALS.get(target)
    if chosen is None:
        return f"intervals: report {target} point estimates only; {EVIDENCE[target]}"
    return f"intervals: report {chosen}'s 95% intervals for {target}; {EVIDENCE[target]}"
