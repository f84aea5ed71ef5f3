"""Statistics over evaluation results: rank correlations (:mod:`.correlation`), paired tests and
multiple-comparison corrections (:mod:`.tests`), run-pair classes (:mod:`.pairs`).

    from irsample.stats import kendall_tau, tau_ap
    kendall_tau(true_map, estimated_map).statistic
"""

from .correlation import CorrelationResult, kendall_tau, pearson, rms_error, tau_ap

__all__ = ["CorrelationResult", "kendall_tau", "pearson", "rms_error", "tau_ap"]
