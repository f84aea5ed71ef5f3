"""Can the interval of a run's mean be trusted? A rule computed from the judged sample alone.

A run's mean is ``unreliable`` when (1) its sample is too small or skewed for a normal
interval, (2) too many of its topics are weak, (3) its estimated bias exceeds 0.35 of its
standard error, (4) its estimator gives no estimate of its own bias on a sample, (5) it lies
outside [0, 1], (6) it ranks documents of strata with nothing judged, or (7) its interval
leaves out more variance on blind topics than it holds. Each rule, its formula, its source and
how its threshold was chosen: :mod:`.limits`; what the sample holds per topic: :mod:`.topics`;
rule 3's reading of the bias: :mod:`.bias`; the rule applied, with its reasons: :mod:`.rule`.
A difference of two runs' means has its own rule (:mod:`irsample.measures.pair_reliability`).
"""

from .bias import (
    carrying,
    fitted_bound,
    imputation_bound,
    per_relevant,
    quadrature_cells,
    summed_bias,
)
from .limits import (
    FEW,
    FIT_Z,
    MAX_BIAS_SE,
    MAX_UNSEEN,
    MAX_WEAK,
    MIN_SUPPORT,
    NAMED,
    NO_SPREAD,
    PER_RELEVANT,
    SETTLED,
    biased_beyond_limit,
    left_out_beyond_limit,
    skewness_limit,
    weak_beyond_limit,
)
from .rule import RULES, Reliability, apart, assess, named_topics, outside_range, unseen_share
from .topics import (
    certain_relevant_only,
    found_per_topic,
    imputed_topics,
    judged_relevant,
    judged_share,
    open_positions,
    open_share,
    support_per_segment,
    unsettled_topics,
    weak_topics,
)

__all__ = [
    "FEW", "FIT_Z", "MAX_BIAS_SE", "MAX_UNSEEN", "MAX_WEAK", "MIN_SUPPORT", "NAMED", "NO_SPREAD",
    "PER_RELEVANT", "RULES", "SETTLED", "Reliability", "apart", "assess", "biased_beyond_limit",
    "carrying", "certain_relevant_only", "fitted_bound", "found_per_topic", "imputation_bound",
    "imputed_topics", "judged_relevant", "judged_share", "left_out_beyond_limit", "named_topics",
    "open_positions", "open_share", "outside_range", "per_relevant", "quadrature_cells",
    "skewness_limit", "summed_bias", "support_per_segment", "unseen_share", "unsettled_topics",
    "weak_beyond_limit", "weak_topics",
]
