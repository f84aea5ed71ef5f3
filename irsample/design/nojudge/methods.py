"""Ranking runs without relevance judgments: pseudo-qrels from the runs themselves.

Every method looks only at the runs' top-``depth`` documents per topic (the depth-k pool) and
returns :class:`SystemScores`: a score per run (higher = better) and the system ranking.

- :func:`soboroff` (Soboroff, Nicholas & Cahan, SIGIR 2001, "Ranking retrieval systems without
  relevance judgments"): per topic the pool is kept *with duplicates*, a multiset holding a
  document once per run that retrieved it in its top ``depth`` (M_t entries, U_t distinct
  documents). Per trial and topic, the number of pseudo-relevant entries is

      n_t = min(M_t, max(1, round(clip(x, 0, 1) * U_t))),   x ~ Normal(mean, sd),

  mean/sd being the fraction of relevant documents in a real pool (the paper used TREC's; see
  :func:`relevant_fraction`); n_t entries of the multiset are drawn uniformly without
  replacement, so a document retrieved by c runs is drawn with c times the weight and can be
  drawn several times (the distinct documents drawn, possibly fewer than n_t, are relevant).
  The uniform keys of the draw are assigned to the entries in (topic, run name, rank) order, so
  a seed gives the same pseudo-qrels for the same runs in any order (before, g0..g3 given in
  reverse swapped the ranks of g1 and g3).
  The other pool documents are judged non-relevant; each run is scored with ``measure`` (MAP by
  default) and the scores are averaged over ``trials`` seeded draws.
- :func:`refcount` (Wu & Crestani, SAC 2003, "Methods for ranking information retrieval systems
  without relevance judgments"), basic method: the reference count of document d in run r's
  top ``depth`` is the number of *other* runs that also retrieve d in their top ``depth``,
  rc_r(d) = c(d) - 1; the run's topic score is the sum of rc_r over its top ``depth``
  documents and its score the mean over topics (a run lacking a topic scores 0 there).
  ``weighted=True`` is this module's rank-weighted variant in the spirit of the paper's
  position-weighted versions (not their exact formulas): an occurrence at rank i weighs
  w(i) = (depth + 1 - i) / depth, and the score sums w(i_r(d)) * (W(d) - w(i_r(d))) with
  W(d) the sum of w over all runs retrieving d.
- :func:`condorcet` (Nuray & Can, IP&M 2006, "Automatic ranking of information retrieval systems
  using data fusion"): see :mod:`irsample.design.nojudge.fusion`: the pool of the fused runs is
  ordered
  by Condorcet fusion, its top ``fraction`` is pseudo-relevant, the rest non-relevant, and every
  run is scored with ``measure``. With ``select`` only that fraction of the runs, those with the
  largest *bias* (Mowshowitz & Kawaguchi's deviation from the norm, :func:`bias`), is fused —
  the paper's remedy for the "tyranny of the masses" (Aslam & Savell, SIGIR 2003); runs of
  equal bias are selected in run-name order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.stats

from ...errors import DesignError
from ...evaluation import evaluate_collection
from ...measures import Measure, parse_all
from ...model import Collection, Judgments
from ..frame import generator
from .fusion import condorcet_pseudo_qrels

__all__ = [
    "Pool", "SystemScores", "bias", "condorcet", "pool", "refcount", "relevant_fraction",
    "score_pseudo_qrels", "scoring_measure", "soboroff", "soboroff_draw",
]


@dataclass(frozen=True, eq=False)
class SystemScores:
    """Scores of every run of a collection by a judgment-free ``method``.

    ``score[r]`` is run r's score (higher = better), the mean of ``per_topic[r, t]``, its
    topic scores (0 on a topic the run lacks).
    """

    method: str
    run_names: tuple[str, ...]
    score: np.ndarray
    per_topic: np.ndarray

    @property
    def rank(self) -> np.ndarray:
        """1-based rank of every run (1 = best; equal scores share the smallest rank)."""
        return scipy.stats.rankdata(-self.score, method="min").astype(np.int64)

    def frame(self) -> pd.DataFrame:
        """``run, score, rank``, best run first (ties in run-name order)."""
        frame = pd.DataFrame({"run": self.run_names, "score": self.score, "rank": self.rank})
        return frame.sort_values(["rank", "run"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class Pool:
    """The top-``depth`` positions of some runs, one row per (run, topic, rank <= depth)."""

    run: np.ndarray
    topic: np.ndarray
    rank: np.ndarray  #: 1-based
    tdi: np.ndarray
    depth: int
    #: per run index, its rank among the collection's runs by name (None: index order); the
    #: random draws over pool entries follow it, so they do not depend on the runs' order
    run_order: np.ndarray | None = None

    def counts(self, n_tdi: int) -> np.ndarray:
        """c(d): how many of the runs retrieve d in their top ``depth``."""
        return np.bincount(self.tdi, minlength=n_tdi)

    def documents(self, n_tdi: int) -> np.ndarray:
        """The distinct pooled ``tdi`` (sorted: by topic, then docno)."""
        return np.flatnonzero(self.counts(n_tdi))


def check_depth(depth) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise DesignError(f"depth must be a positive integer, got {depth!r}")
    return int(depth)


def pool(collection: Collection, depth: int, runs: Sequence[int] | None = None) -> Pool:
    """The top ``depth`` positions of ``runs`` (default: all runs) in every topic."""
    depth = check_depth(depth)
    n_topics = collection.n_topics
    offsets = collection.rank_offsets
    take = np.minimum(np.diff(offsets), depth)
    seg_run = np.arange(len(take)) // max(n_topics, 1)
    if runs is not None:
        chosen = np.zeros(collection.n_runs, dtype=bool)
        chosen[np.asarray(list(runs), dtype=np.int64)] = True
        take = np.where(chosen[seg_run], take, 0)
    seg = np.repeat(np.arange(len(take)), take)
    first = np.concatenate([[0], np.cumsum(take)[:-1]])
    rank0 = np.arange(len(seg)) - first[seg]
    return Pool(
        seg_run[seg], seg % max(n_topics, 1), rank0 + 1,
        collection.rank_tdi[offsets[:-1][seg] + rank0].astype(np.int64), depth,
        name_order(collection),
    )


def name_order(collection: Collection) -> np.ndarray:
    """Per run index, its 0-based rank by run name (the runid): the key of every tie rule and
    random draw over runs here, so that results do not depend on the order of the run files."""
    order = np.argsort(np.array(collection.run_names, dtype=object), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank


def scoring_measure(measure) -> Measure:
    """The one measure ``measure`` names, refused where it is not a score (a count, a label)."""
    found = [measure] if isinstance(measure, Measure) else parse_all([measure])
    if len(found) != 1:
        raise DesignError(f"one measure is needed to score runs, {measure!r} names {len(found)}")
    if found[0].value_type != "float":
        kind = "a count" if found[0].value_type == "int" else "a label"
        raise DesignError(f"{found[0].name!r} is {kind}, not a score of a run's ranking: "
                          "give a measure such as AP, P@10 or nDCG")
    return found[0]


def score_pseudo_qrels(
    collection: Collection, tdi, relevant, measure="AP"
) -> tuple[np.ndarray, np.ndarray]:
    """(per-run summary, per-run-topic values) of ``measure`` against pseudo-qrels: documents
    ``tdi`` judged, relevant where ``relevant``; every other document unjudged (non-relevant).
    A topic a run lacks scores 0 in its mean (trec_eval's ``-c``), as in :func:`refcount`: a
    run answering 3 of 64 topics was ranked first by its mean over those 3 here and third by
    refcount's over all 64."""
    tdi = np.asarray(tdi, dtype=np.int64)
    judgments = Judgments.from_arrays(
        collection, collection.tdi_topic[tdi], tdi, np.asarray(relevant, dtype=np.int64),
        source="<pseudo-qrels>",
    )
    ev = evaluate_collection(collection, judgments, [scoring_measure(measure)], complete=True)
    return ev.summary[:, 0], ev.values[:, :, 0]


def relevant_fraction(judgments: Judgments, *, rel_level: int = 1) -> tuple[float, float]:
    """(mean, sd) over topics of R_t / J_t, the fraction of a topic's judged documents that are
    relevant (grade >= ``rel_level``); sd with ddof = 1. Soboroff et al.'s normal parameters,
    from a collection with complete judgments."""
    judged = np.diff(judgments.grade_offsets)
    topic = np.repeat(np.arange(len(judged)), judged)
    rel = np.bincount(topic[judgments.judged_grades >= rel_level], minlength=len(judged))
    has = judged > 0
    frac = rel[has] / judged[has]
    if len(frac) < 2:
        raise DesignError("relevant_fraction needs judgments of at least 2 topics")
    return float(frac.mean()), float(frac.std(ddof=1))


def soboroff_draw(
    pooled: Pool, n_tdi: int, n_topics: int, *, mean: float, sd: float, rng
) -> tuple[np.ndarray, np.ndarray]:
    """One trial's pseudo-qrels: (pooled ``tdi``, relevant flags) — see the module docstring."""
    rng = generator(rng)
    counts = pooled.counts(n_tdi)
    docs = np.flatnonzero(counts)
    first = np.unique(pooled.tdi, return_index=True)[1]
    distinct = np.bincount(pooled.topic[first], minlength=n_topics)
    entries = np.bincount(pooled.topic, minlength=n_topics)
    frac = np.clip(rng.normal(mean, sd, n_topics), 0.0, 1.0)
    n = np.minimum(entries, np.maximum(1, np.floor(frac * distinct + 0.5).astype(np.int64)))
    # a uniform n_t-subset of each topic's entries: the n_t smallest of iid uniform keys, drawn
    # over the entries in (topic, run name, rank) order so that the draw does not depend on the
    # order the runs were given in
    keys = np.empty(len(pooled.tdi))
    name_rank = pooled.run if pooled.run_order is None else pooled.run_order[pooled.run]
    keys[np.lexsort((pooled.rank, name_rank, pooled.topic))] = rng.random(len(pooled.tdi))
    order = np.lexsort((keys, pooled.topic))
    start = np.concatenate([[0], np.cumsum(entries)[:-1]])
    topic_sorted = pooled.topic[order]
    within = np.arange(len(order)) - start[topic_sorted]
    drawn = pooled.tdi[order[within < n[topic_sorted]]]
    relevant = np.zeros(n_tdi, dtype=bool)
    relevant[drawn] = True
    return docs, relevant[docs]


def soboroff(
    collection: Collection, *, mean: float, sd: float, rng, depth: int = 100, trials: int = 50,
    measure="AP", pool_runs: Sequence[int] | None = None,
) -> SystemScores:
    """Soboroff, Nicholas & Cahan's random pseudo-qrels, ``measure`` averaged over ``trials``
    (module docstring). ``pool_runs``: the runs whose top ``depth`` form the pool (default all);
    every run is scored. ``rng``: seed or Generator (required, for reproducibility)."""
    if not (0.0 <= mean <= 1.0 and sd >= 0.0 and math.isfinite(mean) and math.isfinite(sd)):
        raise DesignError(f"soboroff: need 0 <= mean <= 1 and sd >= 0, got mean={mean}, sd={sd}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise DesignError(f"soboroff: trials must be a positive integer, got {trials!r}")
    rng = generator(rng)
    pooled = pool(collection, depth, pool_runs)
    total = np.zeros(collection.n_runs)
    per_topic = np.zeros((collection.n_runs, collection.n_topics))
    for _ in range(trials):
        docs, rel = soboroff_draw(
            pooled, collection.n_tdi, collection.n_topics, mean=mean, sd=sd, rng=rng
        )
        summary, values = score_pseudo_qrels(collection, docs, rel, measure)
        total += summary
        per_topic += values
    name = f"soboroff(depth={depth}, mean={mean:g}, sd={sd:g}, trials={trials})"
    return SystemScores(name, collection.run_names, total / trials, per_topic / trials)


def refcount(collection: Collection, *, depth: int = 100, weighted: bool = False) -> SystemScores:
    """Wu & Crestani's reference counts (basic, or this module's rank-weighted variant)."""
    pooled = pool(collection, depth)
    n_runs, n_topics = collection.n_runs, collection.n_topics
    if weighted:
        w = (pooled.depth + 1.0 - pooled.rank) / pooled.depth
        total_w = np.bincount(pooled.tdi, weights=w, minlength=collection.n_tdi)
        contribution = w * (total_w[pooled.tdi] - w)
    else:
        contribution = pooled.counts(collection.n_tdi)[pooled.tdi] - 1.0
    per_topic = np.bincount(
        pooled.run * n_topics + pooled.topic, weights=contribution, minlength=n_runs * n_topics
    ).reshape(n_runs, n_topics)
    name = f"refcount(depth={depth}{', weighted' if weighted else ''})"
    return SystemScores(name, collection.run_names, per_topic.mean(axis=1), per_topic)


def bias(
    collection: Collection, *, depth: int = 100, runs: Sequence[int] | None = None
) -> np.ndarray:
    """Bias of every run (NaN for runs outside ``runs``), after Mowshowitz & Kawaguchi (IP&M
    2002) as Nuray & Can use it: per topic, v_r is the 0/1 vector of run r's top-``depth``
    documents and the norm vector c = sum_r v_r (the counts of the runs considered);
    bias_rt = 1 - cos(v_r, c) = 1 - sum_{d in top(r)} c(d) / (sqrt(|top(r)|) * ||c||), and a run's
    bias is its mean over the topics it retrieved documents for. Larger = further from the
    majority."""
    pooled = pool(collection, depth, runs)
    n_runs, n_topics = collection.n_runs, collection.n_topics
    counts = pooled.counts(collection.n_tdi).astype(np.float64)
    norm = np.sqrt(np.bincount(collection.tdi_topic, weights=counts**2, minlength=n_topics))
    cell = pooled.run * n_topics + pooled.topic
    dot = np.bincount(cell, weights=counts[pooled.tdi], minlength=n_runs * n_topics)
    size = np.bincount(cell, minlength=n_runs * n_topics)
    dot, size = dot.reshape(n_runs, n_topics), size.reshape(n_runs, n_topics)
    with np.errstate(invalid="ignore", divide="ignore"):
        b = 1.0 - dot / (np.sqrt(size) * norm[None, :])
    b[size == 0] = np.nan
    out = np.full(n_runs, np.nan)
    has = (size > 0).any(axis=1)
    out[has] = np.nanmean(b[has], axis=1)
    return out


def condorcet(
    collection: Collection, *, depth: int = 100, fraction: float = 0.1,
    select: float | None = None, measure="AP",
) -> SystemScores:
    """Nuray & Can's Condorcet pseudo-qrels (module docstring; fusion in
    :func:`irsample.design.nojudge.fusion.condorcet_pseudo_qrels`)."""
    runs = None
    if select is not None:
        if isinstance(select, bool) or not 0.0 < float(select) <= 1.0:
            raise DesignError(f"condorcet: select must be a fraction in (0, 1], got {select!r}")
        b = bias(collection, depth=depth)
        k = max(1, math.ceil(float(select) * np.count_nonzero(np.isfinite(b))))
        # largest bias first, equal biases in run-name order
        runs = np.sort(np.lexsort((name_order(collection), -np.nan_to_num(b, nan=-np.inf)))[:k])
    pooled = pool(collection, depth, runs)
    docs, rel = condorcet_pseudo_qrels(pooled, collection.n_topics, fraction=fraction)
    summary, values = score_pseudo_qrels(collection, docs, rel, measure)
    name = f"condorcet(depth={depth}, fraction={fraction:g}" + (
        f", select={select:g})" if select is not None else ")"
    )
    return SystemScores(name, collection.run_names, summary, values)
