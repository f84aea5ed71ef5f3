"""The one walk behind the prediction-powered estimators of ``ppi/estimate.py``: the design
covariance of ht(M) on the human judgments and ht(M) on the automatic labels, from the same sample.

Per (run, topic) segment, every sampled document d of the topic (0 < pi_d < 1) gets the
linearised influence of each of the two estimates, as ``ht/estimator.py`` linearises ht(M):

    z_d = (x_d - theta~ r_d) / Y,

x_d the document's numerator influence at its ranked position (``Estimate.x``: 0 when the run
did not retrieve it), r_d its value in the denominator total (AP: relevance; nDCG: the slope of
the ideal DCG in its grade; linear measures: 0), theta~ the centre and Y the denominator of the
segment (``Estimate.centre``, ``Estimate.den``). Per stratum (cell) h of the topic, with
x = z / pi_d and w = 1 - pi_d, the walk returns the sums ``inclusion.cell_variance`` reads:
sum x, sum w x, sum w x^2 for each of the two influences and sum w x_y x_f for the cross term.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..._threads import parallel_when_large

#: columns of the walk's output: y's sx, swx, swxx; f's sx, swx, swxx; the cross swxy
N_SUMS = 7


@parallel_when_large
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
