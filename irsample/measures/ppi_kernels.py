"""The one walk behind the prediction-powered estimators of ``ppi.py``: the design covariance of
ht(M) on the human judgments and ht(M) on the automatic labels, from the same sample.

Per (run, topic) segment, every sampled document d of the topic (0 < pi_d < 1) gets the
linearised influence of each of the two estimates, as ``design_based.py`` linearises ht(M):

    z_d = (x_d - theta~ r_d) / Y,

x_d the document's numerator influence at its ranked position (``Estimate.x``: 0 when the run
did not retrieve it), r_d its value in the denominator total (AP: relevance; nDCG: the slope of
the ideal DCG in its grade; linear measures: 0), theta~ the centre and Y the denominator of the
segment (``Estimate.centre``, ``Estimate.den``). Per stratum (cell) h of the topic, with
x = z / pi_d and w = 1 - pi_d, the walk returns the sums ``ht_design.cell_variance`` reads:
sum x, sum w x, sum w x^2 for each of the two influences and sum w x_y x_f for the cross term.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: columns of the walk's output: y's sx, swx, swxx; f's sx, swx, swxx; the cross swxy
N_SUMS = 7


@njit(cache=True, nogil=True, parallel=True)
def influence_sums(offsets, seg_topic, pos_tdi, pos_x_y, pos_x_f, sample_offsets, sample_tdi,
                   local, tdi_pi, tdi_cell, r_y, r_f, theta_y, theta_f, den_y, den_f, n_cells):
    """Per segment and cell, the sums of the module docstring. ``sample_tdi`` lists each
    topic's sampled documents with 0 < pi < 1 (CSR by ``sample_offsets``), ``local[tdi]`` the
    position of a document in its topic's list (-1: not listed)."""
    n_seg = offsets.shape[0] - 1
    out = np.zeros((n_seg, n_cells, N_SUMS))
    for s in prange(n_seg):
        t = seg_topic[s]
        lo, hi = sample_offsets[t], sample_offsets[t + 1]
        zy = np.empty(hi - lo)
        zf = np.empty(hi - lo)
        for j in range(hi - lo):
            d = sample_tdi[lo + j]
            zy[j] = -theta_y[s] * r_y[d]
            zf[j] = -theta_f[s] * r_f[d]
        for i in range(offsets[s], offsets[s + 1]):
            j = local[pos_tdi[i]]
            if j >= 0:
                zy[j] += pos_x_y[i]
                zf[j] += pos_x_f[i]
        for j in range(hi - lo):
            d = sample_tdi[lo + j]
            p = tdi_pi[d]
            w = 1.0 - p
            xy = zy[j] / (den_y[s] * p) if den_y[s] > 0.0 else 0.0
            xf = zf[j] / (den_f[s] * p) if den_f[s] > 0.0 else 0.0
            m = out[s, tdi_cell[d]]
            m[0] += xy
            m[1] += w * xy
            m[2] += w * xy * xy
            m[3] += xf
            m[4] += w * xf
            m[5] += w * xf * xf
            m[6] += w * xy * xf
    return out


@njit(cache=True, nogil=True, parallel=True)
def pair_walk(offsets, above, below, single, pos_pi, pos_cell, pos_g, n_cells, cutoff):
    """AP's numerator with real values, estimated from the sampled positions (pi > 0):

        N^ = sum_{k in S} [single_k + below_k sum_{j < k, j in S} above_j / pi_{j|k}] / (k pi_k),

    k the rank (<= ``cutoff``), pi_{j|k} = pi_jk / pi_k as in ``ht_kernels.ap_walk`` (pi_j g_j
    g_k within a cell of uncertain documents, pi_j otherwise; a cell with g = 0 leaves its pairs
    out). With above = below = single = rel it is ht's AP numerator; with pi = 1 everywhere, the
    census sum_k [single_k + below_k sum_{j<k} above_j] / k. Returns N^ per segment and per
    position d the first-order (Hoeffding) influence
    [single_d + below_d sum_{j above} above_j/pi_{j|d}] / k_d
    + above_d sum_{e below} below_e / (m_e pi_{e|d}) (0 where not sampled)."""
    n_seg = offsets.shape[0] - 1
    influence = np.zeros(pos_pi.shape[0])
    num = np.zeros(n_seg)
    for s in prange(n_seg):
        a = offsets[s]
        n = min(offsets[s + 1] - a, cutoff)
        plain = np.zeros(n_cells + 1)  # sum of v/pi by cell (index n_cells: certain)
        scaled = np.zeros(n_cells + 1)  # sum of v/(pi g) by cell
        total = 0.0
        acc = 0.0
        for i in range(n):  # down the ranking: the pairs above each k
            p = pos_pi[a + i]
            if p <= 0.0:
                continue
            c = pos_cell[a + i] if p < 1.0 else n_cells
            g = pos_g[a + i] if p < 1.0 else 1.0
            passed = total - plain[c]
            if g > 0.0:
                passed += scaled[c] / g
            prec = (single[a + i] + below[a + i] * passed) / (i + 1.0)
            influence[a + i] = prec
            acc += prec / p
            v = above[a + i] / p
            if v != 0.0:
                total += v
                plain[c] += v
                if g > 0.0:
                    scaled[c] += v / g
        num[s] = acc
        plain[:] = 0.0
        scaled[:] = 0.0
        total = 0.0
        for step in range(n):  # up the ranking: the pairs below each d
            i = n - 1 - step
            p = pos_pi[a + i]
            if p <= 0.0:
                continue
            c = pos_cell[a + i] if p < 1.0 else n_cells
            g = pos_g[a + i] if p < 1.0 else 1.0
            passed = total - plain[c]
            if g > 0.0:
                passed += scaled[c] / g
            influence[a + i] += above[a + i] * passed
            v = below[a + i] / (p * (i + 1.0))
            if v != 0.0:
                total += v
                plain[c] += v
                if g > 0.0:
                    scaled[c] += v / g
    return num, influence
