"""Statistics over evaluation results: rank correlations and agreement between system scores
(see :mod:`irsample.stats.correlation`).

    from irsample.stats import kendall_tau, tau_ap
    kendall_tau(true_map, estimated_map).statistic
"""

from .correlation import CorrelationResult, kendall_tau, pearson, rms_error, tau_ap

__all__ = ["CorrelationResult", "kendall_tau", "pearson", "rms_error", "tau_ap"]
