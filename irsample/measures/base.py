"""Measures as frozen value objects and their registry.

A measure *family* is a frozen dataclass subclass of :class:`Measure`; its fields are the
declared parameters. Subclassing registers the family under its irsample name, its trec_eval
name and its aliases (ir_measures names), so adding a measure touches one module, plus its names
in :mod:`.families` (the index :func:`~.names.parse` uses to import only the modules a name
needs; ``tests/test_measure_families.py`` says when it is missing a name). Names in the three
syntaxes (irsample / ir_measures, trec_eval's ``-m``, the named sets) parse to these objects in
:mod:`.names`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..errors import MeasureError
from .variance_methods import DEFAULT_VARIANCE, VARIANCE_METHODS  # noqa: F401 (re-exported)

if TYPE_CHECKING:  # pragma: no cover
    from .context import EvalContext

#: trec_eval 10's measure table order; output follows it, not the command-line order.
TREC_ORDER = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P "
    "relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg "
    "ndcg_rel Rndcg ndcg_cut map_cut relative_P success set_P set_relative_P set_recall set_map "
    "set_F num_nonrel_judged_ret rbp rbp_resid unj judged"
).split()

#: trec_eval's default cut-offs for P, recall, ndcg_cut, map_cut and relative_P.
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


REGISTRY: dict[str, type[Measure]] = {}  # irsample family name -> class
TREC_REGISTRY: dict[str, type[Measure]] = {}  # trec_eval family name -> class
ALIASES: dict[str, type[Measure]] = {}  # lower-cased aliases -> class


@dataclass(frozen=True)
class Measure:
    """Base of every measure family.

    Class attributes describe the family: ``family`` (irsample name), ``trec`` (trec_eval name or
    ``None``), ``aliases``, ``summary`` (how per-topic values become the ``all`` line: ``"mean"``,
    ``"sum"``, ``"gmean"`` — exp of the mean of log(max(x, 1e-5)) — or ``"none"``), ``value_type``
    (``"float"``, ``"int"`` or ``"str"``), ``per_topic`` (printed per topic with ``-q``) and
    ``citation``. ``summary`` may also be ``"variance_of_mean"`` (sum / Q^2, for per-topic
    variances of an estimator whose mean over Q topics is reported). ``estimator`` marks
    families that estimate a measure from sampled or incomplete judgments (they read the pool or
    sample design). The docstring of each family gives its formula.

    A family may define a classmethod ``from_params(text)`` that returns its constructor
    arguments from the text between the parentheses of its irsample name (``None`` when the name
    has none); :func:`~.names.parse` then uses it instead of reading ``name=value`` pairs.
    """

    family: ClassVar[str] = ""
    trec: ClassVar[str | None] = None
    #: further trec_eval family names of the same measure (``map_cut`` for AP with a cut-off)
    trec_extra: ClassVar[tuple[str, ...]] = ()
    aliases: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = "mean"
    value_type: ClassVar[str] = "float"
    #: for ``value_type`` ``"str"``: trec_eval's output puts the string in single quotes (the
    #: data formats give it bare)
    trec_quoted: ClassVar[bool] = False
    per_topic: ClassVar[bool] = True
    citation: ClassVar[str] = ""
    estimator: ClassVar[bool] = False
    #: for families with a cut-off field ``k``: the cut-offs a bare trec_eval name expands to
    trec_defaults: ClassVar[tuple] = ()
    #: the parameter written after ``@`` in irsample names (``P@10``, ``IPrec@0.1``)
    at_param: ClassVar[str] = "k"
    #: how :meth:`variance` estimates the sampling variance (``None``: the family has none)
    variance_method: ClassVar[str | None] = None
    #: trec_eval names of the family whose printed name repeats the ``-m`` parameters as
    #: typed (trec_eval's ``te_init_meas_s_double_p_double`` and ``_p_pair``): see
    #: :attr:`trec_name`. Cut-off lists (``P.5,10``) are printed one value each, not as typed.
    trec_typed: ClassVar[tuple[str, ...]] = ()
    #: design-based: reads each judged document's inclusion probability, so it refuses
    #: judgments that carry none unless a design is assumed
    #: (:meth:`~irsample.model.Judgments.require_probabilities`)
    needs_inclusion: ClassVar[bool] = False
    #: estimates from where the unjudged documents sit in each ranking (the judged share of
    #: each stratum above a rank, or a judged document's rank), which -J (judged documents
    #: only) takes away: refused with it (``measures/judged_only.py``)
    reads_unjudged_ranks: ClassVar[bool] = False
    #: estimates from the strata of stratified qrels (sample_eval's estimators), not from each
    #: judged document's own inclusion probability: prels' unequal probabilities are lost on it
    #: (``judgment_notes.py:strata_ignored``)
    reads_strata: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("family"):
            return
        keys = [(REGISTRY, cls.family), (TREC_REGISTRY, cls.trec)]
        keys += [(TREC_REGISTRY, extra) for extra in cls.trec_extra]
        for table, key in keys:
            if key is None:
                continue
            if key in table and table[key].__qualname__ != cls.__qualname__:
                raise RuntimeError(f"measure name {key!r} registered twice")
            table[key] = cls
        for alias in (cls.family, *cls.aliases):
            ALIASES[alias.lower()] = cls

    #: the parameters as typed after ``-m family.`` for a family in :attr:`trec_typed` (None
    #: otherwise): how trec_eval prints its name, not a parameter (equal measures compare equal)
    trec_params: str | None = field(default=None, compare=False, repr=False, kw_only=True)

    # ---- names ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """Canonical irsample name: ``Family(param=value)@k`` with non-default params only."""
        params = [
            f"{f.name}={_format_value(getattr(self, f.name))}"
            for f in parameters(self)
            if f.name != self.at_param and getattr(self, f.name) != f.default
        ]
        text = self.family + (f"({','.join(params)})" if params else "")
        at = getattr(self, self.at_param, None)
        return f"{text}@{format_number(at)}" if at is not None else text

    @property
    def trec_family(self) -> str | None:
        """The trec_eval family this measure prints under (``None``: not a trec_eval measure)."""
        return self.trec

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints (``P_10``, ``ndcg_cut_10``); the irsample name otherwise.

        Families named with ``-m family.PARAMS`` whose trec_eval name repeats the parameters
        (:attr:`trec_typed`) print them as typed, as trec_eval does (meas_init.c keeps the
        string, ``printable_params``): ``set_F.1`` prints ``set_F_1``, ``utility.2.0,-1,0,0``
        prints ``utility_2.0,-1,0,0``; otherwise :attr:`canonical_trec_name`."""
        if self.trec_params is not None:
            return f"{self.trec_family}_{self.trec_params}"
        return self.canonical_trec_name

    @property
    def canonical_trec_name(self) -> str:
        """trec_eval's name for these parameter values (the default one when unchanged)."""
        base = self.trec_family
        if base is None:
            return self.name
        k = getattr(self, "k", None)
        return f"{base}_{k}" if k is not None else base

    def __str__(self) -> str:
        return self.name

    @property
    def order(self) -> int:
        """Position of the family in trec_eval's output order (unknown families come last)."""
        key = self.trec_family or self.family
        return TREC_ORDER.index(key) if key in TREC_ORDER else len(TREC_ORDER)

    # ---- construction from trec_eval syntax ---------------------------------------------
    @classmethod
    def from_trec(cls, params: str | None, name: str | None = None) -> list[Measure]:
        """Measures named by ``name[.params]`` in trec_eval syntax; ``None``: the defaults.

        ``name`` is the trec_eval family name used (one of ``trec`` and ``trec_extra``).

        The default implementation handles families with an integer cut-off field ``k``
        (``P.5,10`` is ``[P@5, P@10]``) and families without parameters.
        """
        if "k" in {f.name for f in fields(cls)}:
            values = (
                cls.trec_defaults
                if params is None
                else split_values(params, _atol, cls.trec or cls.family)
            )
            return [cls(k=v) for v in values]
        if params is not None:
            raise MeasureError(f"{cls.trec} takes no parameters (got {params!r})")
        return [cls()]

    # ---- evaluation ------------------------------------------------------------------------
    def compute(self, ctx: EvalContext) -> np.ndarray:  # pragma: no cover - abstract
        """Per-segment values (one per run x topic, ``ctx.n_seg``)."""
        raise NotImplementedError

    #: a ratio of estimated totals (AP = N/R, nDCG = DCG/IDCG, ...): its topics whose sample holds
    #: one or two relevant documents are weak (:mod:`irsample.measures.reliability`)
    ratio: ClassVar[bool] = False

    @property
    def logit_interval(self) -> bool:
        """Whether the interval of a run's mean is found on the logit scale
        (:func:`irsample.stats.intervals.logit_interval`): the design-based estimators of a
        ratio in [0, 1] (ht(M), ppi(M) for AP, nDCG, R-prec, recall) say so; every other
        measure keeps the normal interval, as its reference defines it."""
        return False

    #: how an unreliable interval's reason names :meth:`estimated_bias`
    #: (:func:`irsample.measures.reliability.assess`)
    bias_reason = "estimated bias"

    def estimated_bias(self, ctx: EvalContext, from_sample: bool = False) -> np.ndarray | None:
        """Per segment: the estimator's estimated bias where it can give one (None: it gives
        none); read by :func:`irsample.measures.reliability.assess`. ``from_sample``: the
        sample's estimate even where the design's anticipated one exists (for an interval that
        takes the sample's variance)."""
        return None

    def corrected(self, ctx: EvalContext) -> np.ndarray | bool:
        """Per segment (or for all): whether the estimate removes its estimated second-order
        bias there."""
        return False

    def bias_in_quadrature(self, ctx: EvalContext) -> np.ndarray | bool:
        """Per segment (or for all): whether :meth:`estimated_bias` is there a bound of no fixed
        sign, independent from topic to topic, which
        :func:`irsample.measures.reliability.assess` adds in quadrature rather than summing it
        signed: by default where the estimate removes its bias (:meth:`corrected`), the bound
        being on the correction's own error."""
        return self.corrected(ctx)

    def unseen_variance(self, ctx: EvalContext) -> tuple[np.ndarray, np.ndarray] | None:
        """Per segment, where the estimator's interval keeps a variance of 0 on topics whose
        sample shows no variation while its model anticipates some: (the variance the interval
        leaves out there, the variance it is read against); None where not assessed. Read by
        :func:`irsample.measures.reliability.assess` (rule 7)."""
        return None

    def expected_support(self, ctx: EvalContext, cutoff: int | None) -> np.ndarray | None:
        """Per segment: the relevant documents the design is expected to judge within
        ``cutoff`` of each ranking, where the estimator's interval rests on the design rather
        than on the draw (None: the rule counts those judged); read by
        :func:`irsample.measures.reliability.assess`."""
        return None

    def expected_sample(self, ctx: EvalContext, cutoff: int | None):
        """Per segment: the positions within ``cutoff`` the design is expected to judge, and
        the variance and third cumulant of its estimate of the relevant documents there
        (``ht.expected.ExpectedSample``), where the estimator's interval rests on the design
        rather than on the draw (None: the rule counts the judged relevant documents); read by
        :func:`irsample.measures.reliability.assess` (rule 1)."""
        return None

    def expected_found(self, ctx: EvalContext) -> np.ndarray | None:
        """Per topic: the relevant documents the design is expected to judge in the topic's
        pool, where the estimator's interval rests on the design rather than on the draw
        (None: the rule counts those judged); read by
        :func:`irsample.measures.reliability.assess` (weak topics)."""
        return None

    def variance(self, ctx: EvalContext, method: str = DEFAULT_VARIANCE) -> np.ndarray:
        """Per-segment estimated sampling variance of :meth:`compute`'s values over the random
        choice of judged documents (families with a ``variance_method`` only); ``method`` is one
        of :data:`VARIANCE_METHODS` (families with one formula ignore it)."""
        raise MeasureError(f"{self.name} has no variance estimator")

    def topic_variance(self, ctx: EvalContext, method: str = DEFAULT_VARIANCE) -> np.ndarray:
        """Per segment: the variance of the topic's own estimate, which its per-topic interval
        takes; :meth:`variance` (the default) where that is what it gives. It differs where
        :meth:`variance` spreads the variance of the run's mean over the topics: ht(M) and
        ppi(M) give an identified topic its share of the imputed topics' error as well, and a
        topic whose value is imputed (the run's mean over its identified topics) no variance
        of its own (NaN: no per-topic interval, ``ht/imputation.py``)."""
        return self.variance(ctx, method)

    def topic_variance_from_sample(self, ctx: EvalContext) -> bool:
        """Whether :meth:`topic_variance` is estimated from each topic's own sample with no
        model to steady it (ht(M) and ppi(M) on importance samples: ``ht/topic_own.py``),
        which falls short on one topic; the per-topic status flags it
        (``topic_status.SAMPLE_ONLY``). False by default."""
        return False

    def variance_spread(self, ctx: EvalContext) -> np.ndarray | None:
        """Per segment: the estimated variance of :meth:`variance`'s estimate, where that is
        estimated from few deletions of the sample (ht(AP)'s and ppi(AP)'s jackknife on the
        planner's designs), from which the run mean's interval takes Satterthwaite's degrees of
        freedom (``ht/jackknife.py``); None (the default) where the variance is taken as known
        and the interval is normal."""
        return None

    def __post_init__(self):
        k = getattr(self, "k", None)
        if k is not None and (not isinstance(k, (int, np.integer)) or k < 1):
            raise MeasureError(f"{self.family}: cut-off must be a positive integer, got {k!r}")


def parameters(measure) -> list:
    """The dataclass fields of a measure (class or instance) that are its parameters (not
    :attr:`Measure.trec_params`, which only spells its trec_eval name)."""
    return [f for f in fields(measure) if f.compare]


def _format_value(value) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return "{" + ",".join(f"{format_number(a)}:{format_number(b)}" for a, b in value) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(format_number(v) for v in value) + ")"
    return format_number(value)


def format_number(x) -> str:
    """A parameter value as written in names: ``3`` for 3.0, ``4.5``, ``0.1``."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def _atol(text: str) -> int:
    """A cut-off as trec_eval reads it with C ``atol``: ``23.4`` is 23."""
    match = re.match(r"\s*[+-]?\d+", text)
    if match is None:
        raise ValueError(text)
    return int(match.group())


def split_values(text: str, kind, what: str) -> list:
    """Comma-separated parameter values converted by ``kind``; an empty list or a value that does
    not convert is a :class:`MeasureError` naming ``what``."""
    try:
        values = [kind(v) for v in text.split(",") if v.strip() != ""]
    except ValueError:
        raise MeasureError(f"bad parameters {text!r} for {what}") from None
    if not values:
        raise MeasureError(f"{what} needs at least one value")
    return values


def single_value(text: str, kind, what: str, meaning: str):
    """The one parameter value of ``text`` (:func:`split_values`); several are a
    :class:`MeasureError` saying ``what`` takes one ``meaning``."""
    values = split_values(text, kind, what)
    if len(values) != 1:
        raise MeasureError(f"{what} takes one {meaning} (got {text!r})")
    return values[0]
