"""Per-topic intervals (``eval -q --ci``) carry their own status and the topic's own variance
(:mod:`irsample.measures.topic_status`, ``Measure.topic_variance``): an imputed topic has no
interval, a width-0 interval where the pool is not judged whole is flagged, a weak topic's ratio
is flagged, and the run means' variances are unchanged by it. Samples of Vaswani's depth-100
pool of four runs (uniform, 20% and 5%) and a census of it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import irsample
from irsample.cli import main
from irsample.measures.context import EvalContext
from irsample.measures.ht.estimator import estimate
from irsample.measures.ht.imputation import imputation_weights, topic_states
from irsample.measures.ht.inclusion import ht_design
from irsample.measures.reliability import assess, found_per_topic, judged_share
from irsample.measures.topic_status import (
    IMPUTED,
    NO_SPREAD,
    OUTSIDE,
    WEAK,
    _blind_cells,
    topic_flags,
    topic_reason,
)
from irsample.streaming import evaluate_in_batches

from .docs_fixtures import FOUR_RUNS, make_sample_qrels

RUNS = FOUR_RUNS
MEASURES = ["ht(AP)", "ht(nDCG)", "ht(P@10)", "ht(num_rel)"]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("topic_status")
    return {"part": str(make_sample_qrels(root / "part.qrels", RUNS, fraction=0.2)),
            "thin": str(make_sample_qrels(root / "thin.qrels", RUNS, fraction=0.05)),
            "census": str(make_sample_qrels(root / "census.qrels", RUNS, fraction=1.0))}


@pytest.fixture(scope="module")
def part(samples):
    return irsample.estimate(samples["part"], RUNS, MEASURES, ci=0.95, assume="uniform")


def column(ev, name):
    return ev.measures.index(irsample.parse(name)[0])


def test_an_identified_topic_takes_its_own_variance_not_its_share_of_the_imputed_ones(samples,
                                                                                     part):
    """ht(AP): variance = own (1 + m a_q)^2 on identified topics (the imputation's growth,
    ``imputation.impute``); the per-topic interval takes own; imputed topics have none."""
    collection, judgments = irsample.load(samples["part"], RUNS, assume="uniform")
    ctx = EvalContext(collection, judgments)
    inner = irsample.parse("AP")[0]
    e = estimate(ctx, inner)
    known, missing = topic_states(ctx, ht_design(ctx), e.den)
    assert missing.any() and known.any()  # the sample imputes some topics and not others
    _, grow = imputation_weights(known, missing)
    shape = known.shape
    own = e.topic_variance.reshape(shape)
    np.testing.assert_allclose(own[known] * grow[known] ** 2, e.variance.reshape(shape)[known],
                               rtol=1e-12)
    assert np.isnan(own[missing]).all()
    j = column(part, "ht(AP)")
    low, high = part.interval(summary=False)
    assert np.isnan(low[:, :, j][missing]).all() and np.isnan(high[:, :, j][missing]).all()
    half = (high - low)[:, :, j][known] / 2
    np.testing.assert_allclose(half, 1.959963984540054 * np.sqrt(own[known]), rtol=1e-9)


def test_the_run_means_variance_is_unchanged(part):
    """The mean's variance stays the sum of the spread variances over Q^2 (the allocation the
    topics' own variances do not replace)."""
    q = part.evaluated.sum(axis=1)
    spread = np.where(part.evaluated[:, :, None], part.variance, 0.0).sum(axis=1)
    np.testing.assert_allclose(part.summary_variance[:, :3], (spread / q[:, None] ** 2)[:, :3],
                               rtol=1e-12)
    assert np.isfinite(part.summary_variance).all()


def test_each_topic_status_says_why(part):
    flags = part.statuses.topic_flags
    ap, num_rel = column(part, "ht(AP)"), column(part, "ht(num_rel)")
    low, _ = part.interval(summary=False)
    imputed = (flags[:, :, ap] & IMPUTED) > 0
    assert (imputed == (np.isnan(low[:, :, ap]) & part.evaluated)).all()
    assert ((flags[:, :, ap] & WEAK) > 0).any()
    # num_rel: width 0 where the sample found no relevant document in a pool not judged whole,
    # flagged with every topic one of whose strata left to chance shows none
    width0 = part.evaluated & (part.topic_variance[:, :, num_rel] == 0)
    blind = (flags[:, :, num_rel] & NO_SPREAD) > 0
    assert width0.any() and (blind[width0]).all()
    frame = part.frame()
    topics = frame[frame.topic != "all"]
    assert set(topics.status) == {"ok", "unreliable"}
    assert (topics.reason[topics.status == "ok"] == "").all()
    assert (topics.reason[topics.status == "unreliable"].str.len() > 0).all()
    assert all(c == () for c in topics.causes)
    assert topics.reason.str.contains("imputed").any()


def test_reasons_name_every_flag():
    assert topic_reason(0, 3) == ""
    text = topic_reason(WEAK | OUTSIDE, 1)
    assert "1 judged relevant document:" in text and "outside [0, 1]" in text
    assert "2 judged relevant documents" in topic_reason(WEAK, 2)
    # flagged by the design's expected count with more found in the draw: said so, not "too few"
    text = topic_reason(WEAK, 3)
    assert "3 judged relevant documents in this draw" in text
    assert "expected to judge fewer than 3" in text


def test_a_census_is_ok_on_every_topic(samples):
    ev = irsample.estimate(samples["census"], RUNS, MEASURES, ci=0.95)
    assert not ev.statuses.topic_flags.any()
    low, high = ev.interval(summary=False)
    done = ev.evaluated[:, :, None] & np.ones(len(MEASURES), bool)
    assert (low[done] == high[done]).all()  # width 0, and every limit a number


def test_flags_read_the_topics_own_pool(samples):
    """Without a variance of its own the NO_SPREAD bit needs a pool not judged whole, and a
    weak topic is one of rule 2's."""
    collection, judgments = irsample.load(samples["thin"], RUNS, assume="uniform")
    ctx = EvalContext(collection, judgments)
    m = irsample.parse("ht(AP)")[0]
    evaluated = np.ones((ctx.n_runs, ctx.n_topics), bool)
    values = np.asarray(m.compute(ctx)).reshape(evaluated.shape)
    found, share = found_per_topic(ctx), judged_share(ctx)
    rule = assess(ctx, m, evaluated, np.asarray(m.variance(ctx)).reshape(evaluated.shape), values)
    flags = topic_flags(ctx, m, evaluated, values, m.topic_variance(ctx), rule)
    imputed = (found == 0) & (share < 1)
    assert ((flags & IMPUTED) > 0).any(axis=0).tolist() == imputed.tolist()
    assert ((flags & WEAK) > 0).any(axis=0).tolist() == (rule.weak_topic & ~imputed).tolist()
    assert rule.weak_topic.any() and not rule.unchecked


def test_a_stratum_without_a_relevant_document_found_is_blind():
    """Two strata: the topic's stratum 0 shows a relevant document, stratum 1 none with
    documents left: a total over the topic is blind there (its variance is 0 in that
    stratum); judged whole, or with one found, it is not."""
    from io import BytesIO

    strata = (b"1 0 a 0 1\n1 0 b 0 0\n1 0 c 1 0\n1 0 d 1 -1\n"
              b"2 0 x 0 1\n2 0 y 1 1\n2 0 z 1 -1\n")
    collection, judgments = irsample.load(BytesIO(strata), [BytesIO(
        b"1 Q0 a 1 4 r\n1 Q0 b 2 3 r\n1 Q0 c 3 2 r\n1 Q0 d 4 1 r\n"
        b"2 Q0 x 1 3 r\n2 Q0 y 2 2 r\n2 Q0 z 3 1 r\n")], qrels_format="strata")
    ctx = EvalContext(collection, judgments)
    assert _blind_cells(ctx, None, True).tolist() == [True, False]
    assert _blind_cells(ctx, 2, False).tolist() == [False, False]  # ranks 1-2: none left
    assert _blind_cells(ctx, None, False).tolist() == [True, False]


def test_batches_carry_the_same_topic_statuses(samples, part):
    batched = evaluate_in_batches(samples["part"], RUNS, irsample.measures_from(MEASURES),
                                  batch_bytes=1, ci=0.95, assume="uniform")
    topics = [part.topics.index(t) for t in batched.topics]
    np.testing.assert_array_equal(batched.statuses.topic_flags,
                                  part.statuses.topic_flags[:, topics])
    np.testing.assert_array_equal(batched.topic_variance, part.topic_variance[:, topics])


def test_cli_prints_a_status_line_per_topic_interval(samples, capsys):
    rc = main(["eval", "-q", "--ci", "0.95", "--assume", "uniform", "-m", "ht(AP)",
               samples["part"], RUNS[0]])
    out = capsys.readouterr().out
    assert rc == 0
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names.count("ht(AP)_status") == names.count("ht(AP)_low") > 1
    assert "nan" in out  # the imputed topics' limits
    rc = main(["eval", "-q", "--ci", "0.95", "--assume", "uniform", "-m", "ht(AP)",
               "--format", "json", samples["part"], RUNS[0]])
    data = json.loads(capsys.readouterr().out)
    run = next(iter(data.values()))
    shown = [v["ht(AP)"] for t, v in run.items() if t != "all"]
    assert {s["status"] for s in shown} == {"ok", "unreliable"}
    assert any(s["low"] is None and "imputed" in s["reason"] for s in shown)


def test_ppi_has_no_interval_where_ht_imputes(samples):
    labels = "fusion"
    ev = irsample.estimate(samples["part"], RUNS, ["ppi(AP)", "ht(AP)"], ci=0.95,
                           assume="uniform", auto_labels=labels)
    ppi, ht = column(ev, "ppi(AP)"), column(ev, "ht(AP)")
    low, _ = ev.interval(summary=False)
    imputed = np.isnan(ev.topic_variance[:, :, ht]) & ev.evaluated
    assert imputed.any()
    assert np.isnan(low[:, :, ppi][imputed]).all()
    assert ((ev.statuses.topic_flags[:, :, ppi] & IMPUTED) > 0)[imputed].all()


@pytest.mark.parametrize("target", ["AP", "nDCG", "P@10"])
def test_ppi_identified_topic_takes_its_own_variance(samples, target):
    """ppi(M) on an identified topic: its variance without the imputation's growth, ht's
    (1 + m a_q)^2 (each form grows an identified topic's variance as ht's imputation does); so
    own x growth gives back the variance the run's mean sums, where ppi moves the estimate,
    and ht's own where ppi keeps ht's. A total (P@10) has no imputation: own = variance."""
    ev = irsample.estimate(samples["part"], RUNS, [f"ppi({target})", f"ht({target})"], ci=0.95,
                           assume="uniform", auto_labels="fusion")
    ppi_var, ht_var = ev.variance[:, :, 0], ev.variance[:, :, 1]
    ppi_own, ht_own = ev.topic_variance[:, :, 0], ev.topic_variance[:, :, 1]
    known = np.isfinite(ht_own) & ev.evaluated
    assert np.isnan(ppi_own[~np.isfinite(ht_own) & ev.evaluated]).all()
    growth = np.where(ht_own > 0, ht_var / np.where(ht_own > 0, ht_own, 1.0), 1.0)
    if target == "P@10":
        np.testing.assert_allclose(growth[known], 1.0)
    else:
        assert (growth[known] > 1.0 + 1e-9).any()  # some identified topics stand for others
    np.testing.assert_allclose(ppi_own[known] * growth[known], ppi_var[known], rtol=1e-9,
                               atol=1e-300)
    assert (ppi_own[known] <= ppi_var[known] * (1 + 1e-12)).all()
    low, high = ev.interval(summary=False)
    half = (high - low)[:, :, 0][known] / 2
    np.testing.assert_allclose(half, 1.959963984540054 * np.sqrt(ppi_own[known]), rtol=1e-9)
