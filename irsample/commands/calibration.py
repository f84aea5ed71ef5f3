"""Which estimator's 95% intervals are calibrated, per target measure: the measured choice that
``irsample demo`` and ``irsample plan`` follow (kept free of heavy imports: the CLI reads it
while building its parsers).

The evidence is ``irsample simulate ci-coverage`` (:mod:`irsample.experiments.coverage`;
REPRODUCTION.md, "Intervals of run means"): per design (uniform, 2strata, planned) and judged
percentage, the share of runs x trials whose 95% interval of the run's mean covers the frame
truth. An estimator counts as calibrated for a measure when that coverage is within 0.93-0.98
for the 2strata and planned designs from 10% judged on the bundled collections (Vaswani,
CACM), where the demo runs; ``None`` when no estimator of the measure is. Update this table
and :data:`EVIDENCE` together with the measurement, never by hand-picking.
"""

from __future__ import annotations

#: target measure -> the estimator whose 95% intervals are calibrated (None: none is)
INTERVALS: dict[str, str | None] = {"AP": None, "nDCG": "infNDCG"}

#: target measure -> the measured coverage behind the choice (printed by the commands)
EVIDENCE: dict[str, str] = {
    "AP": ("no AP estimator's 95% intervals are calibrated at these fractions: against the "
           "pool's truth, ci-coverage (REPRODUCTION.md) measured coverage far below 0.95 for "
           "xinfAP and ht(AP) with the 2strata design at 10% on Vaswani: the estimates are "
           "biased on topics whose sample holds few relevant documents, which their variances "
           "do not show"),
    "nDCG": ("infNDCG's 95% intervals covered the pool's truth for 11/11 runs of the demo on "
             "Vaswani and CACM (2strata, 10%); ci-coverage (REPRODUCTION.md) gives the "
             "coverage per design and fraction"),
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
