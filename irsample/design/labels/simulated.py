"""Simulated automatic labellers for experiments: noisy copies of the true grades at a target
Cohen's kappa, and an adversarial labeller that favours a few runs.

Noise model (graded confusion). Each document's label comes from a latent score
z_d = g_d + sigma e_d (g_d the true grade, e_d standard normal), rounded and clipped to the
grades [0, G]: a label lands on a neighbouring grade more often than on a distant one, and on a
binary collection an error is a relevant document scored below 1/2 or a non-relevant one above.
sigma is calibrated numerically (bisection on a fixed draw of e; kappa falls as sigma grows) so
that Cohen's kappa of the labels against the truth, over the frame, is the target. Each trial
then draws fresh e with that sigma, so the realised kappa varies around the target.

Adversarial labeller: a calibrated source whose labels of the documents a few chosen runs rank
in their top ``depth`` are raised to at least 1 (relevant): a judge that over-labels those
runs' documents, as a gamed or biased judge would (Clarke & Dietz 2024; Alaofi et al. 2024).
"""

from __future__ import annotations

import numpy as np

from ...stats.agreement import cohen_kappa
from ..frame import generator


def noisy_grades(grade: np.ndarray, sigma: float, noise: np.ndarray, top: int | None = None):
    """Labels clip(round(g + sigma e), 0, top) for true grades ``grade`` and draws ``noise``."""
    grade = np.asarray(grade, dtype=np.float64)
    top = int(grade.max(initial=1)) if top is None else top
    top = max(top, 1)
    return np.clip(np.floor(grade + sigma * noise + 0.5), 0, top).astype(np.int64)


def calibrate_sigma(grade: np.ndarray, kappa: float, *, rng=0, tol: float = 1e-4) -> float:
    """The sigma at which the labels' Cohen's kappa against ``grade`` is ``kappa`` (bisection
    on one draw of the noise; ``kappa`` in (0, 1))."""
    if not 0.0 < kappa < 1.0:
        raise ValueError(f"target kappa must be in (0, 1), not {kappa}")
    grade = np.asarray(grade, dtype=np.int64)
    noise = generator(rng).standard_normal(len(grade))

    def k(sigma):
        return cohen_kappa(grade, noisy_grades(grade, sigma, noise)).kappa

    lo, hi = 1e-6, 1.0
    while k(hi) > kappa and hi < 1e4:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if k(mid) > kappa:
            lo = mid
        else:
            hi = mid
        if hi - lo < tol:
            break
    return 0.5 * (lo + hi)


def favoured_documents(collection, runs, depth: int, tdi_in_frame: np.ndarray) -> np.ndarray:
    """Mask over ``tdi`` of the frame documents the ``runs`` rank in their top ``depth``."""
    out = np.zeros(collection.n_tdi, dtype=bool)
    T = collection.n_topics
    for r in runs:
        for s in range(r * T, (r + 1) * T):
            a = collection.rank_offsets[s]
            b = min(collection.rank_offsets[s + 1], a + depth)
            out[collection.rank_tdi[a:b]] = True
    return out & tdi_in_frame


def over_label(labels: np.ndarray, favoured: np.ndarray) -> np.ndarray:
    """``labels`` (grades per tdi) with every ``favoured`` document raised to at least 1."""
    out = labels.copy()
    hit = favoured & np.isfinite(out)
    out[hit] = np.maximum(out[hit], 1.0)
    return out
