"""Statistics over evaluation results: rank correlations (:mod:`.correlation`), paired tests and
multiple-comparison corrections (:mod:`.tests`), run-pair classes (:mod:`.pairs`); the one home
of confidence intervals and z values (:mod:`.intervals`) and of generators and seeds
(:mod:`.random`).

    from irsample.stats import kendall_tau, tau_ap
    kendall_tau(true_map, estimated_map).statistic
"""

from .intervals import Interval, normal_interval, z
from .random import DEFAULT_SEED, derived_seed, generator

_LAZY = {"CorrelationResult", "kendall_tau", "pearson", "rms_error", "tau_ap"}  # scipy.stats


def __getattr__(name):
    """The correlation functions, imported on first use (scipy.stats takes about a second to
    import; intervals and generators need none of it)."""
    if name in _LAZY:
        from . import correlation

        return getattr(correlation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_SEED", "CorrelationResult", "Interval", "derived_seed", "generator", "kendall_tau",
    "normal_interval", "pearson", "rms_error", "tau_ap", "z",
]
