"""trec_eval's z-scores (``-Z``) and judgment groups (``-R qrels_jg``) over an evaluation.

Z-scores (trec_eval's ``convert_zscores.c``, applied per topic before the summary): each
per-topic value x of a measure printed as ``name`` on topic q becomes

    z = (x - mean[q, name]) / stddev[q, name]

with the reference mean and standard deviation of a z-score file
(:func:`irsample.io.trec_extra.read_zscores`); when stddev is 0, z = 0 if x equals the mean,
otherwise -1000000 (trec_eval's ``MISSING_ZSCORE_VALUE``), which is also the value of a measure
or topic the file lacks. The summary is then taken over the z values as over the raw ones (mean,
sum or geometric mean), except ``num_q``, which trec_eval sets to the number of topics, and with
``-c`` ``num_rel``, which it sets to the relevant documents of every qrels topic
(``m_num_q.c``, ``m_num_rel.c``: both summaries are taken from the counts, not the values).

Judgment groups (trec_eval's ``m_map_avgjg.c``, ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``):
with qrels ``qid jg docno rel`` a topic has one set of judgments per group that judged it, and
``M_avgjg`` on topic q is

    M_avgjg(q) = (1 / |G_q|) sum over g in G_q of M(q; judgments of group g)

for M in map, P@k and Rprec_mult, G_q the groups with judgments of q; the summary is the mean
over topics. Each group's M is irsample's M (trec_eval-exact) on that group's qrels. trec_eval
computes no other relevance measure from qrels_jg ("rel_info format not qrels"), so neither does
:func:`evaluate_judgment_groups`: its measure set, trec_eval's ``qrels_jg``, is runid, num_q and
the three ``_avgjg`` families.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from .errors import MeasureError
from .evaluation import Evaluation, evaluate_collection, summarise
from .measures import Measure, parse
from .model import Collection, Judgments

#: trec_eval's value for a z-score it cannot compute (no reference mean, or stddev 0)
MISSING_ZSCORE = -1000000.0
#: the families averaged over judgment groups, in trec_eval's order: avgjg name -> inner name
AVGJG = {"map_avgjg": "map", "P_avgjg": "P", "Rprec_mult_avgjg": "Rprec_mult"}
#: trec_eval's measure set of qrels_jg
QRELS_JG_SET = ("runid", "num_q", *AVGJG)


def zscores(ev: Evaluation, table: dict[tuple[str, str], tuple[float, float]], *,
            complete: bool = False) -> Evaluation:
    """``ev`` with every numeric per-topic value turned into its z-score against ``table``
    (``{(qid, trec_eval name): (mean, stddev)}``) and the summaries taken again (module
    docstring); ``complete``: ``ev`` was evaluated with trec_eval's ``-c``. Intervals are
    dropped: they describe the raw values."""
    counted = {"num_q", "num_rel"} if complete else {"num_q"}  # summaries from counts
    values = ev.values.copy()
    summary = ev.summary.copy()
    for j, m in enumerate(ev.measures):
        if m.value_type == "str":
            continue
        for t, topic in enumerate(ev.topics):
            raw = values[:, t, j]
            mean, stddev = table.get((topic, m.trec_name), (None, None))
            if mean is None:
                z = np.full_like(raw, MISSING_ZSCORE)
            elif stddev:
                z = (raw - mean) / stddev
            else:
                z = np.where(raw == mean, 0.0, MISSING_ZSCORE)
            values[:, t, j] = np.where(ev.evaluated[:, t], z, np.nan)
        if m.trec_name not in counted and m.summary != "none":
            summary[:, j] = summarise(values[:, :, j], ev.evaluated, m.summary)
    return replace(ev, values=values, summary=summary, ci=None, variance=None,
                   summary_variance=None, variance_method=None, statuses=None,
                   summary_df=None)


@dataclass(frozen=True, eq=False)
class AveragedOverGroups(Measure):
    """A measure averaged over a topic's judgment groups (module docstring); printed as
    trec_eval prints it (``P_avgjg_5``). Not a registered family: it exists only within
    :func:`evaluate_judgment_groups`."""

    inner: Measure | None = None
    summary: ClassVar[str] = "mean"
    value_type: ClassVar[str] = "float"

    @property
    def name(self) -> str:
        return self.trec_name

    @property
    def canonical_trec_name(self) -> str:
        family = self.inner.trec_family
        return f"{family}_avgjg{self.inner.trec_name[len(family):]}"

    def compute(self, ctx):  # pragma: no cover - evaluated by evaluate_judgment_groups
        raise MeasureError(f"{self.trec_name} needs judgment groups (-R qrels_jg)")


def judgment_group_measures(names) -> list[Measure]:
    """The measures of ``names`` (trec_eval syntax: ``qrels_jg``, ``map_avgjg``,
    ``P_avgjg.5,10``, ``Rprec_mult_avgjg``, ``runid``, ``num_q``) in trec_eval's order; a
    :class:`MeasureError` for any other measure."""
    plain, groups = {}, {}
    for name in names:
        for one in QRELS_JG_SET if name.strip() == "qrels_jg" else (name.strip(),):
            family, dot, params = one.partition(".")
            if family in AVGJG:
                for m in parse(AVGJG[family] + dot + params):
                    groups.setdefault(family, {})[m.trec_name] = m
            elif family in ("runid", "num_q") and not dot:  # trec_eval names
                plain[family] = parse(family)[0]
            else:
                raise MeasureError(
                    f"-R qrels_jg: trec_eval computes only {', '.join(QRELS_JG_SET)} from "
                    f"judgment groups, not {one!r}")
    ordered = [plain[f] for f in ("runid", "num_q") if f in plain]
    for family in AVGJG:
        inner = sorted(groups.get(family, {}).values(), key=lambda m: _cutoff(m))
        ordered += [AveragedOverGroups(inner=m) for m in inner]
    return ordered


def _cutoff(m: Measure) -> float:
    """The parameter that orders a family's measures (P's k, Rprec_mult's multiple)."""
    for value in vars(m).values():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return 0.0


def evaluate_judgment_groups(collection: Collection, groups: dict, measures, **options
                             ) -> Evaluation:
    """``measures`` (from :func:`judgment_group_measures`) of every run with the judgments of
    ``groups`` (``{label: QrelsTable}``, :func:`irsample.io.trec_extra.read_qrels_jg`);
    ``options`` are :func:`~irsample.evaluation.evaluate_collection`'s trec_eval options
    (``rel_level``, ``judged_only``, ``max_docs``, ``complete``, ``compat``)."""
    inner = [m.inner for m in measures if isinstance(m, AveragedOverGroups)]
    shape = (collection.n_runs, collection.n_topics)
    sums = np.zeros(shape + (len(inner),))
    count = np.zeros(shape)
    evaluated = np.zeros(shape, dtype=bool)
    for table in groups.values():
        ev = evaluate_collection(collection, Judgments.from_qrels(collection, table), inner,
                                 **options)
        sums += np.where(ev.evaluated[:, :, None], np.nan_to_num(ev.values), 0.0)
        count += ev.evaluated
        evaluated |= ev.evaluated
    averaged = sums / np.maximum(count, 1)[:, :, None]
    values = np.full(shape + (len(measures),), np.nan)
    summary = np.zeros((collection.n_runs, len(measures)))
    strings: dict = {}
    k = 0
    for j, m in enumerate(measures):
        if m.family == "runid":
            strings.update({(r, None, m): n for r, n in enumerate(collection.run_names)})
            continue
        v = averaged[:, :, k] if isinstance(m, AveragedOverGroups) else np.ones(shape)
        k += isinstance(m, AveragedOverGroups)
        values[:, :, j] = np.where(evaluated, v, np.nan)
        summary[:, j] = summarise(v, evaluated, m.summary)
    return Evaluation(collection, tuple(measures), values, evaluated, summary, strings)
