"""Property tests: irsample against pytrec_eval (trec_eval 9.0.8 in process) on random collections.

pytrec_eval (PyPI ``pytrec-eval-terrier``) embeds trec_eval 9.0.8, so it is an oracle for every
trec_eval measure it exposes (reference-semantics.md §2, last paragraph). Hypothesis generates
small collections with what the spec makes delicate (§1-2):

- score ties among docnos whose byte order differs from their numeric or case-folded order
  ("9" > "10", "Z" < "a", UTF-8 "é" after "z"), so the docno-descending tie break decides ranks;
- graded qrels 0-4, -1 and -2 (pooled but unjudged), retrieved documents absent from the qrels
  (unpooled);
- topics only in a run, topics only in the qrels, topics without a relevant document, one-document
  rankings, two runs evaluated together;
- ``rel_level`` (trec_eval ``-l``) 1-3 and ``judged_only`` (``-J``).

Per topic, every value pytrec_eval returns is compared with irsample's to 1e-12 (absolute). The
summary irsample computes is compared with the one derived from pytrec_eval's per-topic values:
the mean over the topics pytrec_eval evaluated (those in both run and qrels, as trec_eval 9.0.8),
the sum for ``num_*``, exp(mean(log(max(x, 1e-5)))) for ``gm_*`` and the topic count for
``num_q``. irsample runs with ``compat="9.0.8"`` (iprec_at_recall/11pt_avg rounding, spec §2).

Measures: all of ``pytrec_eval.supported_measures`` (trec_eval 9.0.8's ``all_trec``) with default
parameters, and random parameters for every parameterised family, including gain maps for
ndcg/ndcg_rel/Rndcg/G, utility coefficients, set_F's beta and 11pt_avg points. :func:`_compare`
fails if pytrec_eval returns a key irsample does not produce or the reverse, so nothing is skipped
silently. Exclusions and intended differences, each explained where it is defined:
``NOT_NUMERIC``, ``SUMMARY_ONLY``, ``_nan_ok`` (where trec_eval divides 0 by 0) and
``ALL_NEGATIVE_QRELS`` (an input on which trec_eval 9.0.8 has undefined behaviour, not generated).
Section 3 pins the minimal reproducers of the disagreements found (test_gain_table_top_entry).

Shrinking is off to keep the module fast; a failure message instead carries the failing topic's
qrels and ranking, which is a small reproducer on its own.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import irsample
from irsample.measures.names import parse

pytrec_eval = pytest.importorskip("pytrec_eval")
# pytrec_eval.RelevanceEvaluator is a thin Python subclass of this C class; see _ext_evaluator.
pytrec_eval_ext = pytest.importorskip("pytrec_eval_ext")

TOL = 1e-12
GM_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN (spec §2, "Averaging")

# pytrec_eval keys that are not numbers: runid and relstring are strings in trec_eval; pytrec_eval
# returns a placeholder 0.0 for them. (irsample keeps them in Evaluation.strings.)
NOT_NUMERIC = {"runid", "relstring"}
# What pytrec_eval returns per topic for these is trec_eval's accumulator, not a printed value:
# log(max(x, 1e-5)) for gm_map and gm_bpref, 1 for num_q. trec_eval prints none of them per topic
# (research notes trec_eval_semantics.md §2, "The per-topic block has 96 lines: no runid, num_q,
# gm_map or gm_bpref") and irsample marks them per_topic=False. They are compared in the summary;
# the gm_* logs are also checked per topic against log(max(map|bpref, 1e-5)).
LOG_PER_TOPIC = {"gm_map": "map", "gm_bpref": "bpref"}
SUMMARY_ONLY = {"num_q", *LOG_PER_TOPIC}

DEFAULT_MEASURES = sorted(pytrec_eval.supported_measures)  # trec_eval 9.0.8's all_trec

# --------------------------------------------------------------------------------------------
# Generated collections
# --------------------------------------------------------------------------------------------
# byte-wise (strcmp) order differs from numeric and from case-insensitive order on purpose
DOCNOS = (
    "1", "01", "001", "2", "9", "10", "100", "10a", "1a", "a", "aa", "ab", "b", "B", "Z", "z",
    "z9", "d9", "d10", "D10", "d010", "doc-2", "doc_2", "doc.2", "doc2", "x~", "é", "éa",
    "FBIS3-10082", "FBIS3-1009", "LA010189-0001", "LA010189-00010",
)
QIDS = ("1", "2", "9", "10", "100", "q1", "Q1", "010", "topic-3")
# few values: many ties; and scores that differ only past single precision, which trec_eval
# 9.0.8 (float) ties and irsample's --compat 9.0.8 ties too
SCORES = (-3.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.0, 7.25, 1e-9, 123456.789, 1.00000002, 1.00000001,
          123456.7891)
GRADES = (-2, -1, -1, 0, 0, 1, 1, 2, 3, 4)
TAGS = ("runA", "runB")

# ALL_NEGATIVE_QRELS. A qrels topic whose entries are all negative (pooled, nothing judged) is not
# generated. trec_eval 9.0.8's te_form_res_rels then computes max_rel = -1 and asks for a 0-long
# rel_levels buffer: in a fresh process it gets NULL and fails, and pytrec_eval ignores the error
# (num_ret comes back 0); afterwards it reuses a freed buffer and a stale cached ranking, and can
# crash the interpreter: pytrec_eval.RelevanceEvaluator({"1": {"1": -1}},
# pytrec_eval.supported_measures).evaluate({"1": {"1": -3.0}}) segfaults. That is undefined
# behaviour, not a reference value (research notes trec_eval_semantics.md §1: "a topic whose
# qrels are all negative leaves num_rel_levels stale in C ... Treat it as 0"). Every other mix of
# negative and judged grades is generated, down to a single judged document among -1 entries.


def _docnos(min_size=1, max_size=12):
    return st.lists(st.sampled_from(DOCNOS), min_size=min_size, max_size=max_size, unique=True)


@st.composite
def collections(draw):
    """(qrels, runs): ``qrels[qid][docno] = grade``, ``runs[tag][qid][docno] = score``."""
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=5, unique=True))
    n_runs = draw(st.integers(1, len(TAGS)))
    qrels: dict = {}
    runs: dict = {tag: {} for tag in TAGS[:n_runs]}
    for i, q in enumerate(qids):
        # the first topic is in the qrels and in every run: irsample rejects a run that shares no
        # topic with the qrels (api.check_common_topics), where pytrec_eval returns {}
        kind = "both" if i == 0 else draw(
            st.sampled_from(["both", "both", "both", "run_only", "qrels_only"])
        )
        judged: list = []
        if kind != "run_only":
            judged = draw(_docnos(max_size=16))
            grade_kind = draw(st.sampled_from(["graded", "graded", "graded", "no_rel", "pooled"]))
            pool = {"graded": GRADES, "no_rel": (-1, 0), "pooled": (-2, -1, -1, -1, 0)}[grade_kind]
            grades = draw(st.lists(st.sampled_from(pool), min_size=len(judged),
                                   max_size=len(judged)))
            if max(grades) < 0:
                grades[draw(st.integers(0, len(grades) - 1))] = 0  # see ALL_NEGATIVE_QRELS
            qrels[q] = dict(zip(judged, grades))
        if kind == "qrels_only":
            continue
        for run in runs.values():
            if i > 0 and not draw(st.booleans()):
                continue  # this topic is missing from this run only
            if draw(st.integers(0, 5)) == 0:
                docs = [draw(st.sampled_from(judged or DOCNOS))]  # a one-document ranking
            else:  # mostly judged documents, often unpooled ones too
                docs = draw(st.lists(st.sampled_from(judged), unique=True)) if judged else []
                more = 1 if not docs or draw(st.booleans()) else 0
                docs += [d for d in draw(_docnos(min_size=more, max_size=8)) if d not in docs]
            scores = draw(st.lists(st.sampled_from(SCORES), min_size=len(docs),
                                   max_size=len(docs)))
            run[q] = dict(zip(docs, scores))
    return qrels, runs


options = st.fixed_dictionaries(
    # pytrec_eval refuses relevance_level 0 ("Argument relevance_level should be positive")
    {"rel_level": st.sampled_from([1, 2, 3]), "judged_only": st.booleans()}
)

# A hand-made collection with every feature at once, always tested first.
EXAMPLE_QRELS = {
    "10": {"9": 1, "10": 0, "100": 2, "a": -1, "B": 4, "z": 0, "é": 3, "d10": 1, "x~": -2},
    "9": {"1": -1, "2": -1, "3": 0},  # R = 0, N = 1, mostly pooled-unjudged
    "2": {"x~": 0, "doc-2": 0},  # judged, nothing relevant
    "q1": {"a": 1},  # qrels only
}
EXAMPLE_RUNS = {
    "runA": {
        "10": {"9": 1.0, "10": 1.0, "100": 1.0, "a": 2.0, "Z": 2.0, "z": 0.5, "é": 0.5, "1": 0.5,
               "x~": 0.5},
        "9": {"1": 3.0},
        "2": {"doc-2": 1.0, "doc_2": 1.0, "doc.2": 1.0},
        "100": {"a": 1.0},  # run only
    },
    "runB": {"10": {"d10": 0.0}, "2": {"x~": 5.0}},
}


# --------------------------------------------------------------------------------------------
# The two evaluators
# --------------------------------------------------------------------------------------------
def _irsample(qrels, runs, measures, rel_level, judged_only):
    qdf = pd.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        columns=["qid", "docno", "rel"],
    )
    rdf = pd.DataFrame(
        [(q, d, s, tag) for tag, run in runs.items() for q, docs in run.items()
         for d, s in docs.items()],
        columns=["qid", "docno", "score", "tag"],
    )
    return irsample.evaluate(
        qdf, rdf, measures, rel_level=rel_level, judged_only=judged_only, compat="9.0.8"
    )


def _wrapper_evaluator(qrels, measures, rel_level, judged_only):
    return pytrec_eval.RelevanceEvaluator(
        qrels, set(measures), relevance_level=rel_level, judged_docs_only_flag=judged_only
    )


def _ext_evaluator(qrels, measures, rel_level, judged_only):
    """pytrec_eval's C evaluator, without the Python wrapper's rewriting of measure names.

    ``pytrec_eval.RelevanceEvaluator._combine_measures`` keeps only the leading number of a
    parameter string: ``ndcg.1=3,2=9`` becomes ``ndcg.1`` (trec_eval reports "malformed pair
    parameters" and the interpreter segfaults), ``utility.2,-1,0,0`` becomes ``utility.2``
    ("improper number of coefficients", value 0) and ``11pt_avg..25,.5`` is refused. The C class
    hands the string to trec_eval as ``-m`` does (split at the first '.'). Empty qrels topics are
    dropped as the wrapper does (pytrec_eval issue #57); none are generated anyway.
    """
    return pytrec_eval_ext.RelevanceEvaluator(
        {q: d for q, d in qrels.items() if d}, set(measures), rel_level, int(judged_only)
    )


def _nan_ok(key: str, pt_value: float, ours: float, pt_topic: dict, judged_only: bool) -> bool:
    """Intended differences: where trec_eval divides 0 by 0, irsample returns 0.

    Both are the reference tool's bug (spec, preamble: the library does the right thing by default
    and documents the difference); each case below is narrowed to the only C path giving NaN.

    1. iprec_at_recall and 11pt_avg of an empty ranking (possible only with -J). trec_eval starts
       interpolated precision at num_rel_ret / num_ret = 0 / 0, so the recall points whose cut-off
       rounds to 0 (all of them when R = 0) are NaN, and 11pt_avg averages that NaN. irsample:
       "An empty ranking gives 0 (trec_eval divides 0 by 0)"
       (irsample/measures/trec_eval/interpolated.py module docstring); research notes
       trec_eval_semantics.md §7 "n = 0" leave the choice to the library.
    2. Rndcg when R > 0 but the ideal walk takes no sample: no judged level has a positive gain
       (``Rndcg.0=-1,1=-1``), or the top entry of trec_eval's gain table has gain <= 0
       (``Rndcg.1=0.5`` on a topic with level-1 documents only, see test_gain_table_top_entry).
       trec_eval returns sum / (number of samples) = 0 / 0 (research notes §6.24: "C divides even
       if nch == 0 (NaN; only with all-nonpositive gains and R>0)"); irsample's kernel returns 0
       when there is no sample (irsample/measures/trec_eval/gain.py, _rndcg_kernel). With R = 0
       trec_eval returns 0 before dividing, hence the R > 0 condition.
    """
    if not (math.isnan(pt_value) and ours == 0.0):
        return False
    if key.startswith("iprec_at_recall_") or key.startswith("11pt_avg"):
        return judged_only and pt_topic["num_ret"] == 0
    if key == "Rndcg":
        return pt_topic["num_rel"] > 0
    return False


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


STATS: dict = {
    "collections": 0,
    "per_topic_values": 0,
    "summary_values": 0,
    "measure_names": set(),
    "features": Counter(),
}


def _record_features(qrels, runs, opts):
    """Count what the generated inputs exercised (checked by test_inputs_and_measures_covered)."""
    f = STATS["features"]
    f[f"rel_level={opts['rel_level']}"] += 1
    f[f"judged_only={opts['judged_only']}"] += 1
    f["two runs"] += len(runs) == 2
    run_topics = {q for run in runs.values() for q in run}
    f["topic only in qrels"] += any(q not in run_topics for q in qrels)
    f["topic only in a run"] += any(q not in qrels for q in run_topics)
    for grades in qrels.values():
        f["topic without relevant doc"] += max(grades.values()) < opts["rel_level"]
        f["qrels -1"] += -1 in grades.values()
        f["qrels -2"] += -2 in grades.values()
        f["grade 4"] += 4 in grades.values()
    for run in runs.values():
        for q, docs in run.items():
            judged = qrels.get(q, {})
            f["one-document ranking"] += len(docs) == 1
            f["unpooled doc retrieved"] += q in judged and any(d not in judged for d in docs)
            f["pooled-unjudged doc retrieved"] += any(judged.get(d, 0) < 0 for d in docs)
            f["empty ranking under -J"] += opts["judged_only"] and q in judged and not any(
                judged.get(d, -1) >= 0 for d in docs
            )
            by_score: dict = {}
            for d, s in docs.items():
                by_score.setdefault(s, []).append(d)
            for tied in by_score.values():
                states = {judged.get(d, "unpooled") for d in tied}
                f["tie between different judgments"] += q in judged and len(states) > 1
                digits = sorted((d for d in tied if d.isdigit()), key=int)
                f["tie: byte order != numeric order"] += digits != sorted(digits)


def _compare(ev, tag, pt, key_to_name, opts, reproduce):
    """Compare one run: pytrec_eval's per-topic dict ``pt`` against irsample's Evaluation ``ev``.

    ``key_to_name`` maps the pytrec_eval keys that differ from irsample's trec_name:
    parameterised measures trec_eval prints as ``name_<params>`` (``ndcg_1=3,2=9``, ``set_F_0.5``)
    but pytrec_eval reports under the bare family name.
    """
    r = ev.run_names.index(tag)
    topics = list(ev.topics)
    # topics evaluated: those in both the run and the qrels (trec_eval 9.0.8, spec §2)
    ours_topics = {topics[t] for t in np.flatnonzero(ev.evaluated[r])}
    assert ours_topics == set(pt), f"{tag}: evaluated topics {ours_topics} != {set(pt)}"

    index = {m.trec_name: j for j, m in enumerate(ev.measures)}
    per_topic_names = {m.trec_name for m in ev.measures if m.per_topic and m.value_type != "str"}
    keys = set().union(*(v.keys() for v in pt.values()))
    compared = {key_to_name.get(k, k) for k in keys - NOT_NUMERIC - SUMMARY_ONLY}
    # coverage: every numeric measure pytrec_eval returns is one irsample computes, and back
    assert compared == per_topic_names, (
        f"{tag}: pytrec_eval only {sorted(compared - per_topic_names)}, "
        f"irsample only {sorted(per_topic_names - compared)}"
    )
    STATS["measure_names"] |= compared | (keys & SUMMARY_ONLY)

    mismatches = []
    column: dict[str, list[float]] = {}  # pytrec_eval's per-topic values, for the summary
    for qid in sorted(pt):
        t = topics.index(qid)
        for key, value in pt[qid].items():
            if key in NOT_NUMERIC or key == "num_q":
                continue
            if key in LOG_PER_TOPIC:
                name = key
                ours = math.log(max(ev.values[r, t, index[LOG_PER_TOPIC[key]]], GM_FLOOR))
            else:
                name = key_to_name.get(key, key)
                ours = float(ev.values[r, t, index[name]])
                if _nan_ok(key, value, ours, pt[qid], opts["judged_only"]):
                    value = 0.0  # irsample's documented value, see _nan_ok
            column.setdefault(name, []).append(value)
            STATS["per_topic_values"] += 1
            if not _close(value, ours):
                mismatches.append((qid, name, value, ours))
    assert not mismatches, (
        f"{len(mismatches)} per-topic values differ (qid, measure, pytrec_eval, irsample), e.g. "
        f"{mismatches[:6]}\nreproduce with {reproduce(mismatches[0][0])}"
    )

    wrong = []
    for j, m in enumerate(ev.measures):
        if m.value_type == "str":
            continue
        name = m.trec_name
        if name == "num_q":
            expected = float(len(pt))
        elif m.summary == "gmean":
            expected = math.exp(sum(column[name]) / len(column[name]))  # logs already floored
        elif m.summary == "sum":
            expected = math.fsum(column[name])
        else:
            expected = math.fsum(column[name]) / len(column[name])
        STATS["summary_values"] += 1
        if not _close(expected, float(ev.summary[r, j])):
            wrong.append((name, expected, float(ev.summary[r, j])))
    assert not wrong, (
        f"summary differs (measure, from pytrec_eval, irsample): {wrong[:6]}\n"
        f"reproduce with {reproduce(None)}"
    )


def _check(qrels, runs, opts, pytrec_measures, irsample_measures, key_to_name, make_evaluator):
    try:
        ev = _irsample(qrels, runs, irsample_measures, **opts)
    except Exception as exc:  # report the input: shrinking is off
        raise AssertionError(
            f"irsample.evaluate raised {exc!r} for measures {irsample_measures} on "
            f"qrels={qrels!r} runs={runs!r} options={opts!r}"
        ) from exc
    for tag, run in runs.items():

        def reproduce(qid, tag=tag, run=run):
            q = {qid: qrels[qid]} if qid else qrels
            rr = {qid: run[qid]} if qid else run
            return f"qrels={q!r} run={rr!r} options={opts!r} (run {tag})"

        evaluator = make_evaluator(qrels, pytrec_measures, opts["rel_level"], opts["judged_only"])
        _compare(ev, tag, evaluator.evaluate(run), key_to_name, opts, reproduce)
    STATS["collections"] += 1
    _record_features(qrels, runs, opts)


SETTINGS = settings(
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: see the module docstring
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------------------------
# 1. every all_trec measure with trec_eval's default parameters
# --------------------------------------------------------------------------------------------
@pytest.mark.xdist_group("pytrec_eval_oracle")
@settings(SETTINGS, max_examples=1200)
@given(collection=collections(), opts=options)
@example(collection=(EXAMPLE_QRELS, EXAMPLE_RUNS), opts={"rel_level": 1, "judged_only": False})
@example(collection=(EXAMPLE_QRELS, EXAMPLE_RUNS), opts={"rel_level": 2, "judged_only": False})
@example(collection=(EXAMPLE_QRELS, EXAMPLE_RUNS), opts={"rel_level": 1, "judged_only": True})
def test_default_measures_match_pytrec_eval(collection, opts):
    qrels, runs = collection
    _check(qrels, runs, opts, DEFAULT_MEASURES, DEFAULT_MEASURES, {}, _wrapper_evaluator)


# --------------------------------------------------------------------------------------------
# 2. random parameters for every parameterised family
# --------------------------------------------------------------------------------------------
def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


cutoffs = st.lists(st.integers(1, 35), min_size=1, max_size=3, unique=True)
# no two fractions share a '%3.2f' name (0.12 and 0.125 would both print iprec_at_recall_0.12)
fractions = st.lists(
    st.sampled_from([0.0, 0.05, 0.1, 0.125, 0.25, 0.3, 1 / 3, 0.5, 0.7, 0.75, 0.9, 1.0]),
    min_size=1, max_size=4, unique=True,
)
multiples = st.lists(
    st.sampled_from([0.2, 0.35, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0]), min_size=1, max_size=3, unique=True
)
# Gain maps: levels 0-5 (5 is never judged: a count-0 entry at the top of the gain table), zero
# and negative gains, and fractional gains less than 1 apart, which trec_eval's truncating
# comparator orders as equal (research notes §6.22). Negative *levels* are not generated: irsample
# rejects them (MeasureError "gain levels must be >= 0").
gain_maps = st.dictionaries(
    st.integers(0, 5),
    st.sampled_from([-1.0, 0.0, 0.5, 1.0, 1.3, 1.7, 2.0, 3.0, 4.5, 9.0]),
    min_size=1, max_size=4,
)
# families trec_eval prints as name_<params> and pytrec_eval reports under the bare name
BARE_NAME_FAMILIES = ("set_F", "utility", "11pt_avg", "ndcg", "ndcg_rel", "Rndcg", "G")


@st.composite
def parameterised(draw):
    """(measure strings for the wrapper, measure strings for the C class)."""
    wrapper = [
        f"{family}.{','.join(map(str, draw(cutoffs)))}"
        for family in ("P", "recall", "ndcg_cut", "map_cut", "relative_P", "success")
    ]
    wrapper.append("iprec_at_recall." + ",".join(_fmt(p) for p in draw(fractions)))
    wrapper.append("Rprec_mult." + ",".join(_fmt(m) for m in draw(multiples)))
    wrapper.append("set_F." + _fmt(draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0]))))
    # the wrapper cannot pass these (see _ext_evaluator)
    coefficients = draw(st.lists(st.sampled_from([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0]),
                                 min_size=4, max_size=4))
    ext = ["utility." + ",".join(_fmt(c) for c in coefficients)]
    # ascending points: trec_eval's 11pt_avg loop assumes them sorted (research notes §6.19)
    points = sorted(draw(fractions))
    # written ".25" as in trec_eval's own tests
    ext.append("11pt_avg." + ",".join(_fmt(p)[1:] if 0 < p < 1 else _fmt(p) for p in points))
    for family in ("ndcg", "ndcg_rel", "Rndcg", "G"):
        gains = draw(gain_maps)
        ext.append(f"{family}." + ",".join(f"{lv}={_fmt(g)}" for lv, g in gains.items()))
    return wrapper, ext


def _key_to_name(strings):
    out = {}
    for s in strings:
        family = s.split(".", 1)[0]
        if family in BARE_NAME_FAMILIES:
            (measure,) = parse(s)
            out[family] = measure.trec_name
    return out


@pytest.mark.xdist_group("pytrec_eval_oracle")
@settings(SETTINGS, max_examples=400)
@given(collection=collections(), opts=options, params=parameterised())
@example(
    collection=(EXAMPLE_QRELS, EXAMPLE_RUNS),
    opts={"rel_level": 1, "judged_only": False},
    params=(
        ["P.3,7", "recall.1,20", "ndcg_cut.5,10", "map_cut.2", "relative_P.4", "success.2,3",
         "iprec_at_recall.0.25,0.5", "Rprec_mult.0.35,5", "set_F.0.5"],
        ["utility.2,-1,0,0", "11pt_avg..25,.5,.75", "ndcg.1=3,2=9", "ndcg_rel.4=0.5,3=1.3",
         "Rndcg.0=1,5=2", "G.1=-1,2=9"],
    ),
)
def test_parameterised_measures_match_pytrec_eval(collection, opts, params):
    qrels, runs = collection
    wrapper, ext = params
    wrapper, ext = wrapper + ["num_ret", "num_rel"], ext + ["num_ret", "num_rel"]  # for _nan_ok
    _check(qrels, runs, opts, wrapper, wrapper, _key_to_name(wrapper), _wrapper_evaluator)
    _check(qrels, runs, opts, ext, ext, _key_to_name(ext), _ext_evaluator)


@pytest.mark.xdist_group("pytrec_eval_oracle")
def test_inputs_and_measures_covered():
    """The property tests above exercised every input feature and every pytrec_eval measure.

    Runs after them in the same process (pytest keeps definition order, and ``--dist
    loadgroup`` sends the three to one worker); alone it has nothing to check.
    """
    if STATS["collections"] == 0:
        pytest.skip("runs together with the property tests of this module")
    names = STATS["measure_names"]
    numeric = set(pytrec_eval.supported_measures) - NOT_NUMERIC
    never = sorted(m for m in numeric if not any(n == m or n.startswith(m + "_") for n in names))
    assert not never, f"never compared: {never}"
    features = STATS["features"]
    expected = [
        "rel_level=1", "rel_level=2", "rel_level=3", "judged_only=True", "judged_only=False",
        "two runs", "topic only in qrels", "topic only in a run", "topic without relevant doc",
        "qrels -1", "qrels -2", "grade 4", "one-document ranking", "unpooled doc retrieved",
        "pooled-unjudged doc retrieved", "empty ranking under -J",
        "tie between different judgments", "tie: byte order != numeric order",
    ]
    rare = {k: features[k] for k in expected if features[k] < 10}
    assert not rare, f"input features exercised fewer than 10 times: {rare}"
    print(
        f"\npytrec_eval oracle: {STATS['collections']} collection evaluations, "
        f"{STATS['per_topic_values']} per-topic and {STATS['summary_values']} summary values, "
        f"{len(names)} measure names; features: {dict(sorted(features.items()))}"
    )


# --------------------------------------------------------------------------------------------
# 3. minimal reproducers of the disagreements the property tests found
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "qrels, run, measure",
    [
        pytest.param({"t": {"a": 1}}, {"t": {"a": 1.0}}, "ndcg.1=0.5", id="ndcg"),
        pytest.param({"t": {"a": 1}}, {"t": {"a": 1.0}}, "ndcg_rel.1=0.5", id="ndcg_rel"),
        pytest.param({"t": {"a": 1}}, {"t": {"a": 1.0}}, "G.1=0.5", id="G"),
        # agrees, up to trec_eval's NaN (see _nan_ok)
        pytest.param({"t": {"a": 1}}, {"t": {"a": 1.0}}, "Rndcg.1=0.5", id="Rndcg"),
        pytest.param({"t": {"a": 1, "b": 0}}, {"t": {"a": 1.0}}, "ndcg_rel.1=0.5",
                     id="ndcg_rel-zero-division"),
    ],
)
def test_gain_table_top_entry(qrels, run, measure):
    """Gain maps where the top entry of trec_eval's gain table has gain <= 0.

    trec_eval sorts the gain table (level, gain, number of judged documents) with a comparator that
    truncates gain differences to int, so 0.5 and 0 compare equal and the stable sort keeps
    insertion order: for ``ndcg.1=0.5`` the table is [(1, 0.5, n1), (0, 0.0, n0)], and its top
    entry is level 0 with gain 0 (research notes trec_eval_semantics.md §6.22). ndcg, ndcg_rel, G
    and Rndcg all start the ideal walk at the top entry's gain, *whatever its document count*,
    and stop at once when it is <= 0 (m_ndcg.c and m_ndcg_rel.c in 9.0.8 and 10:
    ``ideal_gain = gains.rel_gains[cur_level].gain; for (...; ideal_gain > 0.0; ...)``), so the
    IDCG is 0 and the value 0. irsample uses that top gain for Rndcg only (``top_gain`` in
    irsample/measures/trec_eval/gain.py); for ndcg, ndcg_rel and G it builds the ideal ranking by
    skipping empty entries before testing the gain, finds [0.5] and returns 1.0 (ndcg, ndcg_rel) and
    0.7565 (G). With a judged level-0 document (last case) irsample's ideal is empty too, but
    its ndcg_rel kernel then divides DCG by a zero IDCG for the retrieved gain-0.5 document and
    raises ZeroDivisionError; trec_eval returns 0.
    """
    family = measure.split(".")[0]
    pt = _ext_evaluator(qrels, [measure], 1, False).evaluate(run)["t"][family]
    try:
        ev = _irsample(qrels, {"runA": run}, [measure], rel_level=1, judged_only=False)
    except ZeroDivisionError as exc:
        pytest.fail(f"irsample raised {exc!r} for {measure} on qrels={qrels} run={run}; "
                    f"pytrec_eval gives {pt}")
    ours = float(ev.values[0, 0, 0])
    if family == "Rndcg":
        assert math.isnan(pt)  # trec_eval: 0 samples, 0 / 0
        assert _nan_ok("Rndcg", pt, ours, {"num_rel": 1, "num_ret": 1}, False)
    else:
        assert pt == 0.0  # trec_eval: IDCG 0
        assert ours == pt, f"{measure} on {qrels} / {run}: pytrec_eval {pt}, irsample {ours}"
