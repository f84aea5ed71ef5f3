"""Predicted variance of a stratified estimate of mean AP or mean nDCG, for any strata and
sample sizes: the objective of the planner (:mod:`irsample.design.planner.plan`).

Setting. Topic t's pool is cut by best rank into strata; cell c = (t, stratum) holds N_c pool
documents of which an SRS of n_c is judged. The estimators of sample_eval and statAP are, to
first order, linear in the judged documents' relevance x_d: a run's estimate of its measure on
topic t is close to the Horvitz-Thompson total sum_c (N_c / n_c) sum_{d judged in c} y_d with
y_d = u_d x_d, u_d the measure's *influence* (its derivative in x_d). The stratified-SRS
variance of such a total (Cochran, *Sampling Techniques*, 3rd ed., eq. 5.6) is

    Var = sum_c N_c^2 (1/n_c - 1/N_c) S_c^2,   S_c^2 = sum_{d in c} (y_d - mean_c y)^2 / (N_c - 1),

and the variance of a run's mean over the T topics is the sum over all cells divided by T^2.
The y_d are unknown before judging; with x_d independent with E[x_d] = mu_d and
E[x_d^2] = nu_d (a :class:`~irsample.design.planner.relevance_model.RelevanceModel`),

    E[(N_c - 1) S_c^2] = sum u^2 nu - (1/N_c) [ (sum u mu)^2 + sum u^2 (nu - mu^2) ].

Influences (u = 0 for documents the run did not retrieve, except the AP term below; a run's
ranking counts to rank 1000, as the estimators read it, also below the pool's depth):

- **AP** (xinfAP, statAP): AP = A / R with A = sum_i (x_i / i)(1 + sum_{j<i} x_j); the gradient
  of E[A] at rank k is w_k = (1 + sum_{j<k} p_j) / k + sum_{i>k} p_i / i (paper 003, Aslam &
  Yilmaz 2007; :mod:`irsample.design.nojudge.infer`), and linearising the ratio, u_d = (w_k - AP) /
  R for
  a document at rank k and u_d = -AP / R for a pool document the run did not retrieve (it only
  counts in R). AP and R are their model expectations.
- **nDCG** (infNDCG): u_d = 1 / (log2(k + 1) IDCG), x_d the gain, with IDCG the ideal DCG of the
  topic's expected relevant documents at the mean gain (held fixed, as in infNDCG's own
  variance, :mod:`irsample.measures.incomplete.sample_eval_variance`).

Averaged over the runs, the cell's weight A_c = mean_r N_c^2 S_{r,c}^2 / T^2 makes the mean
variance over runs sum_c A_c (1/n_c - 1/N_c): what Neyman allocation minimises.

Ratio bias (AP). N^/R^ has second-order bias (theta v(R^) - c(N^, R^)) / R^2 (Cochran §6.8)
= -Cov(Z^, R^) / R with z_d = u_d x_d; for stratified SRS, Cov = sum_c N_c^2 (1/n_c - 1/N_c)
S_{zx,c}, and E[(N_c - 1) S_zx] = sum u nu - (1/N_c) [(sum u mu)(sum mu) + sum u (nu - mu^2)].
:meth:`VarianceModel.cells_and_bias` gives B_{r,c} = -N_c^2 S_{zx,c} / (R_t T), so run r's mean
has bias sum_c B_{r,c} (1/n_c - 1/N_c) (R_t: the model's expected relevant documents). nDCG's
influence holds IDCG fixed, so it has no ratio here: B = 0. The sums over
documents are kept per run, topic and best rank, cumulated over ranks, so the A_c of any strata
are differences of cumulative sums.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit

from ...errors import DesignError
from ...measures.incomplete.sample_eval import SAMPLE_EVAL_DEPTH

#: target estimator -> influence kind
INFLUENCE = {"xinfAP": "AP", "statAP": "AP", "infNDCG": "nDCG"}
_AP, _NDCG = 0, 1


@njit(cache=True, nogil=True)
def _walked_rows(rank_offsets, rank_tdi, n_topics, runs, walk, row_of_tdi):
    """The pool row (-1: none) of each document the runs ``runs`` rank in their top ``walk``,
    run by run and topic by topic (CSR ``offsets`` over i * n_topics + t)."""
    offsets = np.zeros(runs.shape[0] * n_topics + 1, dtype=np.int64)
    for i in range(runs.shape[0]):
        for t in range(n_topics):
            s = runs[i] * n_topics + t
            z = min(rank_offsets[s + 1] - rank_offsets[s], walk)
            offsets[i * n_topics + t + 1] = offsets[i * n_topics + t] + z
    rows = np.empty(offsets[-1], dtype=np.int64)
    for i in range(runs.shape[0]):
        for t in range(n_topics):
            a = rank_offsets[runs[i] * n_topics + t]
            w = offsets[i * n_topics + t]
            for k in range(offsets[i * n_topics + t + 1] - w):
                rows[w + k] = row_of_tdi[rank_tdi[a + k]]
    return offsets, rows


@njit(cache=True, nogil=True)
def _influence_sums(walked_offsets, walked_rows, n_topics, n_runs, bin_of_row,
                    prob, mean, second, r_topic, idcg, kind, sums, shift):
    """Per run i, topic t and best-rank bin b: sums[0..4, i, t, b] = sum v mu, sum v^2 nu,
    sum v^2 (nu - mu^2), sum v nu, sum v (nu - mu^2) over the run's retrieved documents (its
    top ``walk``, however deep the pool: :func:`_walked_rows`) whose best rank is b + 1, with
    v the rank part of the influence; ``shift[i, t]`` the part common to every pool document
    (u = v + shift)."""
    for i in range(n_runs):
        for t in range(n_topics):
            a = walked_offsets[i * n_topics + t]
            z = walked_offsets[i * n_topics + t + 1] - a
            if z == 0 or r_topic[t] <= 0.0:
                continue
            rows = np.empty(z, np.int64)
            p = np.zeros(z)
            for k in range(z):
                rows[k] = walked_rows[a + k]
                if rows[k] >= 0:
                    p[k] = prob[rows[k]]
            v = np.zeros(z)
            if kind == _AP:
                tail = np.zeros(z + 1)  # tail[k] = sum_{i > k} p_i / i (1-based i)
                for k in range(z - 1, -1, -1):
                    tail[k] = tail[k + 1] + (p[k + 1] / (k + 2.0) if k + 1 < z else 0.0)
                above = 0.0
                expected_a = 0.0
                for k in range(z):
                    w = (1.0 + above) / (k + 1.0) + tail[k]
                    expected_a += p[k] * (1.0 + above) / (k + 1.0)
                    v[k] = w / r_topic[t]
                    above += p[k]
                shift[i, t] = -expected_a / r_topic[t] / r_topic[t]
            else:
                for k in range(z):
                    v[k] = 1.0 / (math.log2(k + 2.0) * idcg[t])
            for k in range(z):
                row = rows[k]
                if row < 0 or bin_of_row[row] < 0:
                    continue
                b = bin_of_row[row]
                mu, nu = mean[row], second[row]
                sums[0, i, t, b] += v[k] * mu
                sums[1, i, t, b] += v[k] * v[k] * nu
                sums[2, i, t, b] += v[k] * v[k] * (nu - mu * mu)
                sums[3, i, t, b] += v[k] * nu
                sums[4, i, t, b] += v[k] * (nu - mu * mu)


@dataclass(frozen=True, eq=False)
class VarianceModel:
    """Cumulative sums for the cell weights of any strata over best ranks 1..depth.

    ``cum_runs[j, i, t, b]``: the run sums of :func:`_influence_sums` over best ranks <= b + 1;
    ``cum_rows[j, t, b]``: pool rows (count, sum mu, sum nu, sum nu - mu^2) over the same ranks;
    ``shift[i, t]``: the influence every pool document of topic t has on run i."""

    cum_runs: np.ndarray
    cum_rows: np.ndarray
    shift: np.ndarray
    depth: int
    n_topics: int
    relevant: np.ndarray  #: (T,) the model's expected number of relevant pool documents
    ratio: bool = True  #: whether the target is a ratio with R below (AP; not nDCG)

    @classmethod
    def build(cls, units, model, estimator: str) -> VarianceModel:
        """The sums for the rows of ``units`` (Pool or SamplingFrame; its runs are the runs
        whose variance counts) under relevance ``model``, for ``estimator`` in
        :data:`INFLUENCE`."""
        if estimator not in INFLUENCE:
            raise DesignError(f"no variance model for {estimator!r}; known: {', '.join(INFLUENCE)}")
        depth = pool_depth(units)
        n_topics = units.collection.n_topics
        memo = getattr(units, "memo", None)  # pools and frames keep it; other row sets do not
        layout = (_layout(units, depth) if memo is None
                  else memo(("planner layout", depth), lambda: _layout(units, depth)))
        inside, bin_of_row, walked_offsets, walked_rows = layout
        r_topic = np.bincount(units.topic[inside], weights=model.prob[inside], minlength=n_topics)
        idcg = _expected_idcg(r_topic, model, inside, units.topic, n_topics)
        n_runs = len(units.runs)
        sums = np.zeros((5, n_runs, n_topics, depth))
        shift = np.zeros((n_runs, n_topics))
        kind = _AP if INFLUENCE[estimator] == "AP" else _NDCG
        _influence_sums(walked_offsets, walked_rows, n_topics, n_runs, bin_of_row, model.prob,
                        model.mean, model.second, r_topic, idcg, kind, sums, shift)
        rows = np.zeros((4, n_topics, depth))
        t, b = units.topic[inside], bin_of_row[inside]
        mu, nu = model.mean[inside], model.second[inside]
        for j, w in enumerate((np.ones(len(t)), mu, nu, nu - mu * mu)):
            np.add.at(rows[j], (t, b), w)
        return cls(np.cumsum(sums, axis=3), np.cumsum(rows, axis=2), shift, depth, n_topics,
                   r_topic, kind == _AP)

    @cached_property
    def _by_rank(self) -> tuple[np.ndarray, np.ndarray]:
        """``cum_runs`` and ``cum_rows`` with the rank axis first: a search reads a few ranks of
        every run and topic for each of its ~80 candidate strata, and whole blocks gather in a
        fraction of the time of strided columns (TREC-8: 1.1 -> 0.6 ms per candidate)."""
        return tuple(np.ascontiguousarray(np.moveaxis(c, -1, 0))
                     for c in (self.cum_runs, self.cum_rows))

    def _between(self, by_rank, edges):
        """Sums over the strata [edges[s], edges[s+1]) (1-based ranks; last ends at depth) of
        cumulative sums with the rank axis first (``_by_rank``), the strata last (C order, so
        later reductions add in the same order as over the rank-last arrays)."""
        hi = np.array(list(edges[1:]) + [self.depth + 1]) - 2
        lo = np.array(edges) - 2
        upper = by_rank[hi]
        lower = np.where((lo >= 0).reshape((-1,) + (1,) * (by_rank.ndim - 1)),
                         by_rank[np.maximum(lo, 0)], 0.0)
        return np.ascontiguousarray(np.moveaxis(upper - lower, 0, -1))

    def cells(self, edges) -> tuple[np.ndarray, np.ndarray]:
        """(N, W) for strata starting at ``edges`` (edges[0] = 1): N[t, s] pool sizes and
        W[i, t, s] = N^2 S^2 / T^2 of run i (so run i's variance is sum W (1/n - 1/N))."""
        n, w, _ = self.cells_and_bias(edges)
        return n, w

    def cell_relevant(self, edges) -> np.ndarray:
        """(T, S): the model's expected relevant pool documents per topic and stratum (strata
        starting at ``edges``)."""
        return self._between(self._by_rank[1], tuple(int(e) for e in edges))[1]

    @cached_property
    def _cells(self) -> dict:
        return {}

    def cells_and_bias(self, edges) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`cells` and B[i, t, s] = -N^2 S_zx / (R_t T): run i's second-order ratio bias
        of its mean per unit of (1/n - 1/N) (module docstring, "Ratio bias"); kept per strata
        (a plan searches the same candidates again within the band)."""
        key = tuple(int(e) for e in edges)
        if key not in self._cells:
            out = self._cells_and_bias(key)
            for a in out:
                a.flags.writeable = False  # shared by every search that asks again
            self._cells[key] = out
        return self._cells[key]

    def _cells_and_bias(self, edges):
        by_runs, by_rows = self._by_rank
        runs = self._between(by_runs, edges)
        rows = self._between(by_rows, edges)
        n, m1, m2, m3 = rows
        c = self.shift[:, :, None]
        su = runs[0] + c * m1
        su2 = runs[1] + 2 * c * runs[3] + c * c * m2
        suv = runs[2] + 2 * c * runs[4] + c * c * m3
        with np.errstate(invalid="ignore", divide="ignore"):
            ss = su2 - (su * su + suv) / n
            s2 = np.where(n >= 2, np.maximum(ss, 0.0) / (n - 1), 0.0)
            szx = (runs[3] + c * m2) - (su * m1 + runs[4] + c * m3) / n
            szx = np.where(n >= 2, szx / (n - 1), 0.0)
            r = self.relevant[None, :, None]
            bias = np.where(r > 0, -n * n * szx / np.maximum(r, 1e-12), 0.0) / self.n_topics
        if not self.ratio:
            bias = np.zeros_like(bias)
        return n.astype(np.int64), n * n * s2 / self.n_topics ** 2, bias


def _layout(units, depth: int):
    """What the variance model of any relevance model on ``units`` reads from the pool alone
    (computed once per pool: a simulation plans every draw on one): the rows within
    ``depth``, their best-rank bins, and the pool rows of the documents the pool's runs rank
    (:func:`_walked_rows`)."""
    col = units.collection
    inside = np.isfinite(units.best_rank) & (units.best_rank <= depth) & (units.tdi >= 0)
    bin_of_row = np.where(inside, np.nan_to_num(units.best_rank, posinf=0) - 1, -1)
    bin_of_row = bin_of_row.astype(np.int64)
    row_of_tdi = np.full(col.n_tdi, -1, dtype=np.int64)
    row_of_tdi[units.tdi[inside]] = np.flatnonzero(inside)
    runs = np.array(units.runs, dtype=np.int64)
    walked = _walked_rows(col.rank_offsets, col.rank_tdi, col.n_topics, runs, SAMPLE_EVAL_DEPTH,
                          row_of_tdi)
    for a in (inside, bin_of_row, *walked):
        a.flags.writeable = False
    return (inside, bin_of_row, *walked)


def pool_depth(units) -> int:
    """The pool's depth: its own, or (a frame cut from qrels) its deepest finite best rank."""
    if not math.isinf(units.depth):
        return int(units.depth)
    finite = units.best_rank[np.isfinite(units.best_rank)]
    if not len(finite):
        raise DesignError("planning needs documents with a best rank (the runs retrieve none)")
    return int(finite.max())


def _expected_idcg(r_topic, model, inside, topic, n_topics):
    """Ideal DCG of ``r_topic`` relevant documents at the model's mean gain (a fractional last
    document counts in proportion); 1 where nothing is expected relevant."""
    rel = inside & (model.prob > 0)
    gain = (np.bincount(topic[rel], weights=model.mean[rel], minlength=n_topics)
            / np.maximum(r_topic, 1e-12))
    idcg = np.ones(n_topics)
    for t in range(n_topics):
        r = r_topic[t]
        if r <= 0:
            continue
        whole = int(math.floor(r))
        ranks = np.arange(1, whole + 1)
        dcg = np.sum(1.0 / np.log2(ranks + 1.0)) + (r - whole) / math.log2(whole + 2.0)
        idcg[t] = max(gain[t] * dcg, 1e-12)
    return idcg
