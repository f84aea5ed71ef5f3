"""Statistics over evaluation results: paired tests, corrections, correlations, run-pair classes."""
