"""The ranking walks behind the prediction-powered estimators of ``ppi.py``.

One walk per (run, topic) segment gives, for a stratified simple random sample of the topic's
frame F (the pool) with automatic labels f on every document of F:

- ``known``: the measure's numerator with f in place of y over all of F (no sample needed);
- ``ht_y`` / ``ht_f``: its Horvitz-Thompson estimates from the sampled documents S, with y and
  with f, so that the PPI numerator for a weight lambda is ``ht_y + lambda (known - ht_f)``;
- per stratum, sums of the estimated linear influences u = u0 + lambda u1 of the sampled
  documents the run retrieved, and their products with the denominator influences r0, r1
  (``ppi.py`` turns these moments into variances for any lambda).

The formulas (linear measures and AP) are in ``ppi.py``'s docstring; here only the walks.
Moment columns: 0 Su0, 1 Su1, 2 Su0u0, 3 Su0u1, 4 Su1u1, 5 Su0r0, 6 Su0r1, 7 Su1r0, 8 Su1r1.

"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

N_MOMENTS = 9


@njit(cache=True, nogil=True)
def _add_moments(m, u0, u1, r0, r1):
    m[0] += u0
    m[1] += u1
    m[2] += u0 * u0
    m[3] += u0 * u1
    m[4] += u1 * u1
    m[5] += u0 * r0
    m[6] += u0 * r1
    m[7] += u1 * r0
    m[8] += u1 * r1


@njit(cache=True, nogil=True, parallel=True)
def linear_walk(offsets, seg_topic, pos_tdi, y, f, in_frame, sampled, pi, stratum,
                r0, r1, n_strata, cutoff, kind):
    """Linear measures sum_{rank <= cutoff} w(rank) x_d: ``kind`` 0 is w = 1/cutoff (P@k),
    1 is w = 1/log2(rank + 1) (DCG@k). Returns known, ht_y, ht_f per segment and the moments
    (n_seg, n_strata, 9) of u0 = w y_d, u1 = -w f_d over the sampled retrieved documents."""
    n_seg = offsets.shape[0] - 1
    known = np.zeros(n_seg)
    ht_y = np.zeros(n_seg)
    ht_f = np.zeros(n_seg)
    moments = np.zeros((n_seg, n_strata, N_MOMENTS))
    for s in prange(n_seg):
        a = offsets[s]
        n = min(offsets[s + 1] - a, cutoff)
        for i in range(n):
            d = pos_tdi[a + i]
            if not in_frame[d]:
                continue
            if kind == 0:
                w = 1.0 / cutoff
            else:
                w = 1.0 / (math.log(i + 2.0) / math.log(2.0))
            known[s] += w * f[d]
            if sampled[d]:
                ht_y[s] += w * y[d] / pi[d]
                ht_f[s] += w * f[d] / pi[d]
                _add_moments(moments[s, stratum[d]], w * y[d], -w * f[d], r0[d], r1[d])
    return known, ht_y, ht_f, moments


@njit(cache=True, nogil=True, parallel=True)
def ap_walk(offsets, seg_topic, pos_tdi, y, f, in_frame, sampled, pi, stratum, same,
            r0, r1, n_strata):
    """AP's numerator sum_{j <= k} x_j x_k / k over the run's ranks (``ppi.py``): known, ht_y,
    ht_f per segment (pairs weighted by 1/pi_jk = c / (pi_j pi_k), c = ``same[t, h]`` within
    stratum h, 1 across strata) and the moments of the linearised influences u0, u1."""
    n_seg = offsets.shape[0] - 1
    known = np.zeros(n_seg)
    ht_y = np.zeros(n_seg)
    ht_f = np.zeros(n_seg)
    moments = np.zeros((n_seg, n_strata, N_MOMENTS))
    for s in prange(n_seg):
        t = seg_topic[s]
        a = offsets[s]
        n = offsets[s + 1] - a
        # totals of the "below" sums: sum over e of g_e / k_e
        tot_f = 0.0  # e in F: f_e / k_e
        tot_sy = 0.0  # e in S: y_e / (pi_e k_e)
        tot_sf = 0.0  # e in S: f_e / (pi_e k_e)
        for i in range(n):
            d = pos_tdi[a + i]
            if not in_frame[d]:
                continue
            k = i + 1.0
            tot_f += f[d] / k
            if sampled[d]:
                tot_sy += y[d] / (pi[d] * k)
                tot_sf += f[d] / (pi[d] * k)
        above_f = 0.0  # sum over F above of f
        above_sy = np.zeros(n_strata)  # sum over S_h above of y / pi
        above_sf = np.zeros(n_strata)
        pre_f = 0.0  # running totals of the g_e / k_e, at or above
        pre_sy = 0.0
        pre_sf = 0.0
        kn = 0.0
        hy = 0.0
        hf = 0.0
        for i in range(n):
            d = pos_tdi[a + i]
            if not in_frame[d]:
                continue
            k = i + 1.0
            fd = f[d]
            kn += fd / k + fd * above_f / k
            pre_f += fd / k
            if sampled[d]:
                h = stratum[d]
                yd = y[d]
                p = pi[d]
                pair_y = 0.0
                pair_f = 0.0
                all_sy = 0.0
                all_sf = 0.0
                for g in range(n_strata):
                    c = same[t, g] if g == h else 1.0
                    pair_y += c * above_sy[g]
                    pair_f += c * above_sf[g]
                    all_sy += above_sy[g]
                    all_sf += above_sf[g]
                hy += yd / (k * p) * (1.0 + pair_y)
                hf += fd / (k * p) * (1.0 + pair_f)
                pre_sy += yd / (p * k)
                pre_sf += fd / (p * k)
                u0 = yd / k + yd * (all_sy / k + (tot_sy - pre_sy))
                u1 = (-fd / k + (yd - fd) * (above_f / k + (tot_f - pre_f))
                      - yd * (all_sf / k + (tot_sf - pre_sf)))
                _add_moments(moments[s, h], u0, u1, r0[d], r1[d])
                above_sy[h] += yd / p
                above_sf[h] += fd / p
            above_f += fd
        known[s] = kn
        ht_y[s] = hy
        ht_f[s] = hf
    return known, ht_y, ht_f, moments
