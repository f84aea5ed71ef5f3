"""Automatic relevance labels as auxiliary data: the built-in fusion labeller (cross-fitted on
the human sample, :mod:`.fusion`) and simulated labellers for experiments (noisy copies at a
target Cohen's kappa, an adversarial one: :mod:`.simulated`)."""

from .fusion import fusion_labels, resolve_labels

__all__ = ["fusion_labels", "resolve_labels"]
