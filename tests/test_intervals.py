"""One home for z values, normal intervals and generators (irsample.stats.intervals, .random).

- z(level) is the two-sided normal quantile, checked against scipy's; bad levels are refused.
- normal_interval returns an Interval (estimate, low, high, level, method, standard_error) that
  unpacks as (low, high); Evaluation.interval returns one, equal to value -/+ z sqrt(variance).
- logit_interval is expit(logit(m) -/+ q se / (m (1 - m))) where asked and the normal interval
  lies inside (0, 1), the normal interval elsewhere; the run means of ht and ppi ratios take it
  in Evaluation.interval, the reference estimators and per-topic intervals do not.
- generator() accepts Generators, int seeds and SeedSequences and refuses None; the design
  layer's generator raises DesignError; derived_seed is stable.
- The planner study's half-widths (predicted, jackknife, observed) all follow its ``level``:
  each scales by z(level) (it used a fixed 1.96 for the observed spread and the plan's 0.95).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from irsample.errors import DesignError
from irsample.stats import Interval, derived_seed, generator, normal_interval, z
from irsample.stats.intervals import logit_interval

from .experiment_data import write_collection


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_z_is_the_two_sided_normal_quantile(level):
    assert z(level) == pytest.approx(sps.norm.ppf(0.5 + level / 2), rel=1e-14)
    assert sps.norm.cdf(z(level)) - sps.norm.cdf(-z(level)) == pytest.approx(level, rel=1e-12)


@pytest.mark.parametrize("level", [0, 1, -0.5, 1.5, math.nan, "0.95", None, True])
def test_z_refuses_what_is_not_a_level(level):
    with pytest.raises(ValueError, match="confidence level"):
        z(level)


def test_normal_interval_is_an_interval_that_unpacks():
    ci = normal_interval(np.array([0.5, 0.2]), np.array([0.01, 0.0]), 0.9)
    assert isinstance(ci, Interval)
    low, high = ci
    assert np.array_equal(low, ci.low) and np.array_equal(high, ci.high)
    np.testing.assert_array_equal(ci.low, [0.5 - z(0.9) * 0.1, 0.2])
    np.testing.assert_array_equal(ci.high, [0.5 + z(0.9) * 0.1, 0.2])
    assert ci.level == 0.9 and ci.method == "normal"
    np.testing.assert_array_equal(ci.standard_error, [0.1, 0.0])
    one = normal_interval(1.0, 4.0, 0.95)
    assert isinstance(one.low, float) and one.high == pytest.approx(1.0 + 2 * 1.959963984540054)


def test_logit_interval_leans_to_one_half_inside_the_bounds():
    m = np.array([0.2, 0.5, 0.8, 0.0003, 0.2, 0.3])
    var = np.array([0.02, 0.02, 0.02, 0.003, 0.0, 0.02]) ** 2
    ci = logit_interval(m, var, 0.95, logit=[True, True, True, True, True, False])
    se = np.sqrt(var)
    spread = z(0.95) * se / (m * (1 - m))
    logit = np.log(m / (1 - m))
    for k in range(3):  # inside: on the logit scale, exactly
        assert ci.low[k] == pytest.approx(1 / (1 + math.exp(-(logit[k] - spread[k]))), rel=1e-12)
        assert ci.high[k] == pytest.approx(1 / (1 + math.exp(-(logit[k] + spread[k]))), rel=1e-12)
    # it leans towards 1/2 and keeps the width to first order
    assert ci.high[0] - m[0] > m[0] - ci.low[0] and m[2] - ci.low[2] > ci.high[2] - m[2]
    assert ci.high[1] - m[1] == pytest.approx(m[1] - ci.low[1])
    assert (ci.high[:3] - ci.low[:3]) == pytest.approx(2 * z(0.95) * se[:3], rel=0.01)
    normal = normal_interval(m, var, 0.95)
    for k in (3, 4, 5):  # past a bound, no variance, or not asked: the normal interval
        assert (ci.low[k], ci.high[k]) == (normal.low[k], normal.high[k])
    assert np.array_equal(ci.standard_error, se)
    t = logit_interval(0.2, 0.02**2, 0.95, df=5.0)
    assert t.high == pytest.approx(1 / (1 + math.exp(-(math.log(0.25) + sps.t.ppf(0.975, 5)
                                                          * 0.02 / 0.16))), rel=1e-12)


@given(st.floats(0.001, 0.999), st.floats(1e-6, 0.5), st.sampled_from([0.8, 0.9, 0.95, 0.99]),
       st.sampled_from([None, 3.0, 40.0]))
def test_logit_interval_holds_the_estimate_inside_the_bounds(m, se, level, df):
    ci = logit_interval(m, se * se, level, df=df)
    normal = normal_interval(m, se * se, level, df=df)
    assert ci.low <= m <= ci.high
    if 0 < normal.low and normal.high < 1:  # on the logit scale: inside (0, 1), leaning to 1/2
        assert 0 <= ci.low and ci.high <= 1
        lean = (ci.high - m) - (m - ci.low)  # above minus below: > 0 below 1/2, < 0 above
        if abs(lean) > 1e-9 * (ci.high - ci.low):
            assert (lean > 0) == (m < 0.5)
        # the width is the normal one's to first order in the logit-scale spread s = half /
        # (m (1 - m)): within [0.92, 1.18] of it for s <= 1 (wider spreads squeeze it into (0, 1))
        width, normal_width = ci.high - ci.low, normal.high - normal.low
        if normal_width / 2 <= m * (1 - m):
            assert normal_width * 0.92 <= width <= normal_width * 1.18 + 1e-12
    else:
        assert (ci.low, ci.high) == (normal.low, normal.high)


def test_evaluation_interval_is_an_interval():
    from irsample.design import stratified
    from irsample.design.frame import SamplingFrame
    from irsample.evaluation import evaluate_collection
    from irsample.measures import parse_all

    from .synthetic import pooled_collection

    col, table = pooled_collection(1, n_topics=4, n_runs=3, n_docs=400, depth=50, pool_depth=20)
    judgments = stratified("1-5:0.9,6-20:0.3").sample(SamplingFrame.from_qrels(col, table), rng=3)
    ev = evaluate_collection(col, judgments, parse_all(["xinfAP", "infNDCG"]), ci=0.8)
    ci = ev.interval()
    assert isinstance(ci, Interval) and ci.level == 0.8
    half = z(0.8) * np.sqrt(ev.summary_variance)
    np.testing.assert_array_equal(ci.low, ev.summary - half)
    np.testing.assert_array_equal(ci.high, ev.summary + half)
    np.testing.assert_array_equal(ci.estimate, ev.summary)
    per_topic = ev.interval(summary=False)
    assert per_topic.low.shape == ev.values.shape
    # ht(AP)'s run means: on the logit scale where the normal interval lies inside (0, 1)
    ev = evaluate_collection(col, judgments, parse_all(["ht(AP)", "ht(P@10)", "xinfAP"]), ci=0.8)
    ci = ev.interval()
    normal = normal_interval(ev.summary, ev.summary_variance, 0.8, df=ev.summary_df)
    on_logit = logit_interval(ev.summary, ev.summary_variance, 0.8, df=ev.summary_df)
    np.testing.assert_array_equal(ci.low[:, 0], on_logit.low[:, 0])
    np.testing.assert_array_equal(ci.low[:, 1:], normal.low[:, 1:])
    assert not np.array_equal(ci.low[:, 0], normal.low[:, 0])
    per_topic = ev.interval(summary=False)
    np.testing.assert_array_equal(per_topic.high, ev.values + z(0.8) * np.sqrt(ev.variance))


def test_generator_accepts_seeds_and_refuses_none():
    g = np.random.default_rng(1)
    assert generator(g) is g
    assert generator(5).integers(1000) == np.random.default_rng(5).integers(1000)
    assert generator(np.random.SeedSequence(5)).integers(1000) == np.random.default_rng(
        5).integers(1000)
    for bad in (None, True, 1.5, "3"):
        with pytest.raises(ValueError, match="rng must be"):
            generator(bad)
    from irsample.design.frame import generator as design_generator

    with pytest.raises(DesignError, match="rng must be"):
        design_generator(None)


def test_derived_seed_is_stable_and_keyed():
    assert derived_seed(7, "a", 1) == derived_seed(7, "a", 1)
    assert len({derived_seed(7, "a", 1), derived_seed(7, "a", 2), derived_seed(8, "a", 1)}) == 3
    assert 0 <= derived_seed(2**40, "x") < 2**63


def test_planner_study_halfwidths_follow_the_level(tmp_path):
    """Same seed, two levels: the draws are the same, so every half-width scales by the ratio
    of the z values (a fixed 1.96 or the plan's default level would leave a ratio of 1)."""
    from irsample.experiments import CollectionFiles
    from irsample.experiments.planner_study import run_halfwidths

    paths = write_collection(tmp_path)
    files = CollectionFiles.of(paths["runs"], paths["qrels"], pooled=paths["pooled"],
                               groups=paths["groups"])
    tables = {level: run_halfwidths(files, budgets=(150,), trials=3, seed=3, level=level,
                                    executor="sequential")["halfwidths"]
              for level in (0.5, 0.95)}
    ratio = z(0.5) / z(0.95)
    for column in ("predicted", "jackknife", "observed"):
        np.testing.assert_allclose(tables[0.5][column], ratio * tables[0.95][column], rtol=1e-12,
                                   err_msg=column)


def test_every_command_that_draws_has_one_seed_default():
    """``--seed`` defaults to DEFAULT_SEED in every subcommand that has one (none requires it)."""
    import argparse

    from irsample.cli import COMMANDS, build_parser
    from irsample.stats import DEFAULT_SEED

    seeded = {}
    for command in COMMANDS:  # each command's real parser (the others are stubs)
        sub = next(a for a in build_parser(command)._actions
                   if isinstance(a, argparse._SubParsersAction))
        for action in sub.choices[command]._actions:
            if "--seed" in action.option_strings:
                seeded[command] = (action.default, action.required)
    assert {"sample", "demo", "simulate", "judge", "nojudge", "infer-qrels"} <= seeded.keys()
    assert set(seeded.values()) == {(DEFAULT_SEED, False)}, seeded


def test_a_variance_rounded_below_zero_is_zero_and_nan_stays_nan():
    """A design that leaves a topic nothing to chance can round its variance to -3e-14; the
    interval is then the estimate, not NaN (an unknown variance still gives NaN limits)."""
    for make in (normal_interval, logit_interval):
        iv = make(np.array([0.4, 0.4]), np.array([-3.2e-14, np.nan]), 0.95)
        assert iv.low[0] == iv.high[0] == 0.4 and iv.standard_error[0] == 0.0
        assert np.isnan(iv.low[1]) and np.isnan(iv.high[1])
