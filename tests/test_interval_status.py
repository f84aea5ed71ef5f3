"""Every interval carries its status (:mod:`irsample.measures.reliability`): ``ok``, or
``unreliable`` with the reason and the topics that cause it, in the API (``Evaluation.statuses``,
the frame's ``status``/``reason``/``causes``, the pairs of ``compare``) and in every output of
``eval --ci``, ``compare``, ``demo`` and ``judge-report``; ``--strict`` makes an unreliable
interval an error. A thin sample (5% of Vaswani's depth-100 pool of four runs) is flagged, a
census (the whole pool judged) is ``ok`` everywhere, and output without intervals is unchanged."""

from __future__ import annotations

import csv
import io
import json
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import irsample
from irsample.cli import main
from irsample.measures import parse
from irsample.measures.context import EvalContext
from irsample.measures.pair_reliability import assess_pair
from irsample.measures.reliability import (
    FEW,
    MAX_BIAS_SE,
    MAX_WEAK,
    MIN_SUPPORT,
    SETTLED,
    Reliability,
    assess,
    certain_relevant_only,
    fitted_bound,
    found_per_topic,
    judged_share,
    summed_bias,
    unsettled_topics,
    weak_topics,
)
from irsample.streaming import evaluate_in_batches

from .docs_fixtures import FOUR_RUNS, make_sample_qrels

RUNS = FOUR_RUNS
MEASURES = ["ht(AP)", "ht(P@10)", "ht(nDCG)"]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    root = tmp_path_factory.mktemp("status")
    return {"thin": str(make_sample_qrels(root / "thin.qrels", RUNS, fraction=0.05)),
            "census": str(make_sample_qrels(root / "census.qrels", RUNS, fraction=1.0))}


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_api_thin_sample_is_unreliable_with_the_topics_that_cause_it(samples):
    ev = irsample.estimate(samples["thin"], RUNS, MEASURES, ci=0.95, assume="uniform")
    assert ev.statuses.status.shape == (len(RUNS), len(MEASURES))
    ap = ev.measures.index(irsample.parse("ht(AP)")[0])
    assert (ev.statuses.status[:, ap] == "unreliable").all()
    for r in range(len(RUNS)):
        causes = ev.statuses.causes[r, ap]
        assert causes and set(causes) <= set(ev.topics)
        assert "judged relevant documents" in ev.statuses.reason[r, ap]
        assert causes[0] in ev.statuses.reason[r, ap]  # the reason names topics
    flagged = ev.statuses.unreliable()
    assert repr(ev.statuses).startswith(  # a count, not the arrays
        f"Statuses({len(RUNS)} runs x {len(MEASURES)} measures: "
        f"{len(RUNS) * len(MEASURES) - len(flagged)} ok; {len(flagged)} unreliable (run, "
        f"measure): {flagged[0]}, ") and "array" not in repr(ev.statuses)
    shown = repr(ev)  # the evaluation, its collection and judgments: counts, not arrays
    assert shown.startswith(f"Evaluation({len(RUNS)} runs: ") and "array" not in shown
    assert shown.endswith(f"ht(AP), ht(P@10), ht(nDCG); ci 0.95, {len(flagged)} of "
                          f"{len(RUNS) * len(MEASURES)} intervals unreliable)")
    collection, judgments = irsample.load(samples["thin"], RUNS)
    assert repr(collection).startswith(f"Collection({len(RUNS)} runs: ")
    assert f"; {collection.n_topics} topics: " in repr(collection)
    assert repr(judgments).startswith(f"Judgments({samples['thin']!r}: ")
    assert "pooled unjudged" in repr(judgments) and "array" not in repr(judgments)
    frame = ev.frame()
    summary = frame[frame.topic == "all"]
    assert set(summary.status) <= {"ok", "unreliable"} and "unreliable" in set(summary.status)
    assert all(isinstance(c, tuple) for c in summary.causes)
    topics = frame[frame.topic != "all"]  # per-topic intervals: their own (test_topic_status)
    assert set(topics.status) <= {"ok", "unreliable"}


def test_statuses_keep_the_rules_outcome_behind_each_column(samples):
    """``Statuses.outcomes[j]`` is the outcome the statuses were set from (which rules flag
    each run: what ``plan --next-round`` counts), the same as the rule applied again."""
    from irsample.evaluation import evaluate_collection

    collection, judgments = irsample.load(samples["thin"], RUNS, assume="uniform")
    measures = irsample.measures_from(MEASURES)
    ev = evaluate_collection(collection, judgments, measures, ci=0.95)
    ctx = EvalContext(collection, judgments)
    assert sorted(ev.statuses.outcomes) == list(range(len(MEASURES)))
    for j, m in enumerate(measures):
        kept = ev.statuses.outcomes[j]
        again = assess(ctx, m, ev.evaluated, ev.variance[:, :, j], ev.values[:, :, j])
        assert kept.reason == again.reason == tuple(ev.statuses.reason[:, j])
        assert (kept.status == ev.statuses.status[:, j]).all()
        for rule in ("thin", "many_weak", "biased", "outside"):
            assert (getattr(kept, rule) == getattr(again, rule)).all()
    assert ev.statuses.outcomes[0].unreliable.all()  # ht(AP) on the thin sample


def test_by_rule_names_every_rule_and_their_union_is_the_status(samples):
    """``Reliability.by_rule``: the seven rules in order (``RULES``), each the runs it flags,
    their union the unreliable runs, on a thin sample and a census; the rules
    ``plan --next-round`` counts are among them."""
    from irsample.commands.plan_rounds import COUNTED
    from irsample.evaluation import evaluate_collection
    from irsample.measures.reliability import RULES

    assert len(RULES) == 7 and set(COUNTED) <= set(RULES)
    measures = irsample.measures_from(MEASURES + ["infAP"])
    seen = set()
    for name in ("thin", "census"):
        collection, judgments = irsample.load(samples[name], RUNS, assume="uniform")
        ev = evaluate_collection(collection, judgments, measures, ci=0.95)
        for j in range(len(measures)):
            outcome = ev.statuses.outcomes[j]
            flags = outcome.by_rule
            assert tuple(flags) == RULES
            assert all(f.shape == outcome.unreliable.shape and f.dtype == bool
                       for f in flags.values())
            assert (np.any(list(flags.values()), axis=0) == outcome.unreliable).all()
            assert (flags["too many weak topics"] == outcome.many_weak).all()
            seen |= {rule for rule, f in flags.items() if f.any()}
    assert {"too many weak topics", "no estimate of its bias"} <= seen


def test_api_census_is_ok_everywhere(samples):
    ev = irsample.estimate(samples["census"], RUNS, MEASURES, ci=0.95)
    assert (ev.statuses.status == "ok").all() and not ev.statuses.reason.any()
    assert all(c == () for c in ev.statuses.causes.ravel())
    for m in MEASURES:
        pairs = irsample.compare(samples["census"], RUNS, m)
        assert (pairs.status == "ok").all() and not pairs.reason.any()


def test_no_interval_no_status(samples):
    ev = irsample.evaluate(samples["thin"], RUNS[:1], ["AP"])
    assert ev.statuses is None and "status" not in ev.frame().columns


def test_batches_carry_the_same_statuses(samples):
    measures = irsample.measures_from(["ht(AP)", "ht(P@10)", "P@10"])
    whole = irsample.estimate(samples["thin"], RUNS, [m for m in measures if m.variance_method],
                              ci=0.95, assume="uniform")
    batched = evaluate_in_batches(samples["thin"], RUNS, measures, batch_bytes=1, ci=0.95,
                                  assume="uniform")
    plain = batched.measures.index(irsample.parse("P@10")[0])
    assert (batched.statuses.status[:, plain] == "").all()  # no interval, no status
    for j, m in enumerate(whole.measures):
        k = batched.measures.index(m)
        for field in ("status", "reason", "causes"):
            assert (getattr(batched.statuses, field)[:, k]
                    == getattr(whole.statuses, field)[:, j]).all()


def test_trec_format_has_status_lines_and_reasons_on_stderr(samples, capsys):
    rc, out, err = cli(capsys, "eval", samples["thin"], "--assume", "uniform",
                       RUNS[0], "-m", "ht(AP)", "-m", "map",
                       "--ci", "0.95")
    assert rc == 0
    lines = out.splitlines()
    assert [ln.split("\t")[0].strip() for ln in lines] == [
        "assume", "map", "ht(AP)", "ht(AP)_low", "ht(AP)_high", "ht(AP)_status"]
    assert lines[-1] == f"{'ht(AP)_status':<22s}\tall\tunreliable"
    assert all(len(ln.split()) == 3 for ln in lines)  # trec_eval's three fields
    assert "irsample: warning: unreliable interval: bm25_k1.2_b0.75 ht(AP): " in err
    rc, out, err = cli(capsys, "eval", samples["census"], RUNS[0], "-m", "ht(AP)", "--ci", "0.95")
    assert out.splitlines()[-1].endswith("\tall\tok")
    assert "unreliable" not in err and "read it as complete judgments" not in err
    assert err.startswith("irsample: note: ") and "reads it as complete judgments" in err


def test_output_without_intervals_is_unchanged(samples, capsys):
    argv = ["eval", samples["thin"], "--assume", "uniform", *RUNS, "-m", "ht(AP)", "-m", "map"]
    rc, plain, err = cli(capsys, *argv)
    assert rc == 0 and "_status" not in plain and "unreliable" not in err
    # --strict without intervals would check nothing: refused, as --ci where no interval fits
    rc, strict, err = cli(capsys, *argv, "--strict")
    assert rc == 1 and strict == "" and "give --ci" in err
    rc, sample_eval, err = cli(capsys, "eval", samples["thin"], "--assume", "uniform",
                               RUNS[0], "-m", "infAP", "--ci",
                               "0.95", "--format", "sample_eval", "--strict")
    assert rc == 1 and sample_eval == "" and "no room for intervals" in err


def test_tsv_json_table_latex_carry_the_status(samples, capsys):
    base = ["eval", samples["thin"], "--assume", "uniform",
            *RUNS[:2], "-m", "ht(AP)", "-m", "P@10", "--ci", "0.95"]
    rc, out, _ = cli(capsys, *base, "--format", "tsv")
    rows = [ln.split("\t") for ln in out.splitlines()]
    assert rows[0] == ["run", "topic", "measure", "value", "low", "high", "status", "reason",
                       "assume"]
    by = {(r[0], r[2]): r for r in rows[1:]}
    assert by[("bm25_k1.2_b0.75", "ht(AP)")][6] == "unreliable"
    assert "judged relevant documents" in by[("bm25_k1.2_b0.75", "ht(AP)")][7]
    assert by[("bm25_k1.2_b0.75", "P_10")][4:] == ["", "", "", "", "uniform"]

    rc, out, _ = cli(capsys, *base, "--format", "json")
    entry = json.loads(out)["dfr_inexpb2_c1"]["all"]
    assert entry["ht(AP)"]["status"] == "unreliable" and entry["ht(AP)"]["causes"]
    assert entry["ht(AP)"]["causes"][0] in entry["ht(AP)"]["reason"]
    assert not isinstance(entry["P_10"], dict)

    rc, out, _ = cli(capsys, *base, "--format", "table")
    lines = out.splitlines()
    assert lines[0].split() == ["run", "P_10", "ht(AP)", "low", "high"]
    assert lines[1].split()[4].endswith("!") and lines[2].split()[4].endswith("!")
    assert lines[3].startswith("! bm25_k1.2_b0.75 ht(AP): ")
    assert lines[4].startswith("! dfr_inexpb2_c1 ht(AP): ")

    rc, out, _ = cli(capsys, *base, "--format", "latex")
    assert r"$^\dagger$ \\" in out and r"{\footnotesize $^\dagger$ bm25\_k1.2\_b0.75" in out

    rc, out, _ = cli(capsys, "eval", samples["census"], *RUNS[:2], "-m", "ht(AP)", "--ci",
                     "0.95", "--format", "table")
    assert "!" not in out and len(out.splitlines()) == 3


def test_csv_holds_the_tsv_rows_with_reasons_quoted(samples, capsys):
    """--format csv: the tsv's rows, comma-separated; a reason's commas are quoted, so a CSV
    reader gives back every field (and -q's per-topic rows too)."""
    base = ["eval", samples["thin"], "--assume", "uniform", *RUNS[:2], "-m", "ht(AP)", "-m",
            "P@10", "--ci", "0.95", "-q"]
    _, tsv, _ = cli(capsys, *base, "--format", "tsv")
    rc, out, _ = cli(capsys, *base, "--format", "csv")
    assert rc == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows == [ln.split("\t") for ln in tsv.splitlines()]
    assert any("," in r[7] for r in rows[1:])  # the reasons' commas did not split them
    frame = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert list(frame.columns) == rows[0] and len(frame) == len(rows) - 1


@pytest.mark.parametrize("fmt", ["trec", "tsv", "table"])
def test_strict_refuses_unreliable_intervals(samples, tmp_path, capsys, fmt):
    out_file = tmp_path / "out.txt"
    rc, out, err = cli(capsys, "eval", samples["thin"], "--assume", "uniform",
                       *RUNS, "-m", "ht(AP)", "--ci", "0.95",
                       "--format", fmt, "--strict", "-o", out_file)
    assert rc == 1 and out == "" and not out_file.exists()
    first = err.splitlines()[0]
    assert first == "irsample: --strict: 4 intervals are unreliable, nothing written:"
    assert "  bm25_k1.2_b0.75 ht(AP): " in err and "  and 1 more" in err
    assert "warning" not in err
    rc, out, err = cli(capsys, "eval", samples["census"], *RUNS, "-m", "ht(AP)", "--ci", "0.95",
                       "--format", fmt, "--strict", "-o", out_file)
    assert rc == 0 and out_file.read_text() and "warning" not in err
    assert err.startswith("irsample: note: ") and err.count("\n") == 1  # the census's


def test_compare_pairs_carry_the_status(samples, capsys, tmp_path):
    pairs = irsample.compare(samples["thin"], RUNS, "ht(AP)", assume="uniform")
    assert (pairs.status == "unreliable").all()
    first = pairs.iloc[0]
    assert first.reason.startswith(f"{first.run_a}: ") and f"; {first.run_b}: " in first.reason
    assert first.causes and set(first.causes) <= {str(t) for t in range(1, 94)}

    rc, out, _ = cli(capsys, "compare", samples["thin"], "--assume", "uniform",
                     *RUNS[:3], "-m", "ht(AP)")
    assert out.startswith("# assume uniform\n")
    lines = out.splitlines()[1:]
    assert lines[0].split()[-1] == "status" and lines[1].endswith("unreliable!")
    assert lines[4].startswith(f"! {RUNS and 'bm25_k1.2_b0.75'} - dfr_inexpb2_c1 ht(AP): ")
    rc, out, _ = cli(capsys, "compare", samples["thin"], "--assume", "uniform",
                     *RUNS[:2], "--format", "csv")
    assert out.splitlines()[0].endswith(",decided,status,reason,assume")
    rc, out, _ = cli(capsys, "compare", samples["thin"], "--assume", "uniform",
                     *RUNS[:2], "--format", "json")
    assert json.loads(out.splitlines()[0])["status"] == "unreliable"

    rc, out, _ = cli(capsys, "compare", samples["thin"], "--assume", "uniform",
                     *RUNS[:2], "-m", "ht(AP)",
                     "--format", "markdown")
    row = [ln for ln in out.splitlines() if ln.startswith("| (a)")][0]
    assert "†" in row and "ht(AP): unreliable (" in row

    out_file = tmp_path / "pairs.txt"
    rc, out, err = cli(capsys, "compare", samples["thin"], "--assume", "uniform",
                       *RUNS[:2], "--strict", "-o", out_file)
    assert rc == 1 and out == "" and not out_file.exists()
    assert "bm25_k1.2_b0.75 - dfr_inexpb2_c1 ht(AP): " in err
    rc, out, err = cli(capsys, "compare", samples["census"], *RUNS[:2], "--strict",
                       "--format", "markdown")
    assert rc == 0 and "†" not in out and "| ok |" in out


def _pair_world(bias):
    """Two runs x four topics, each mean resting on plenty of judged relevant documents, with
    the per-segment estimated biases ``bias`` (runs x topics)."""
    ctx = SimpleNamespace(n_runs=2, n_topics=4,
                          collection=SimpleNamespace(run_names=("a", "b")))
    measure = SimpleNamespace(
        estimated_bias=lambda ctx, from_sample=False: np.asarray(bias, float).ravel())
    runs = Reliability(np.zeros(2, bool), ("", ""), ((), ()), np.full(2, 2.0 * MIN_SUPPORT),
                       np.zeros(2), np.zeros(2), np.zeros(2, bool))
    return ctx, measure, runs


def test_pair_bias_rule():
    evaluated = np.ones((2, 4), bool)
    se = np.array([0.01])
    # a's bias 0.02 on topic 2 only: the mean difference's bias 0.005 = 0.5 se > MAX_BIAS_SE
    ctx, measure, runs = _pair_world([[0, 0, 0.02, 0], [0, 0, 0, 0]])
    found = assess_pair(ctx, measure, runs, [0], [1], evaluated, se)
    assert found.status.tolist() == ["unreliable"]
    assert found.bias_se[0] == pytest.approx(0.5) and 0.5 > MAX_BIAS_SE
    assert found.reason[0] == "estimated bias of the difference 0.50 of its standard error"
    assert found.topics[0] == (2,)
    # the same bias in both runs cancels in the difference
    ctx, measure, runs = _pair_world([[0, 0, 0.02, 0], [0, 0, 0.02, 0]])
    found = assess_pair(ctx, measure, runs, [0], [1], evaluated, se)
    assert found.status.tolist() == ["ok"] and found.reason == ("",)
    # a run whose mean rests on too few judged relevant documents makes its pairs unreliable
    ctx, measure, _ = _pair_world(np.zeros((2, 4)))
    thin = Reliability(np.array([False, True]), ("", "rests on 3 judged relevant documents "
                       "(fewer than 40); estimated bias 0.90 of its standard error"),
                       ((), (1, 3)), np.array([80.0, 3.0]), np.zeros(2), np.array([0.0, 0.9]),
                       np.array([False, True]))
    found = assess_pair(ctx, measure, thin, [0], [1], evaluated, se)
    assert found.reason == ("b: rests on 3 judged relevant documents (fewer than 40)",)
    assert found.topics == ((1, 3),)
    # an estimator that removes its bias: the topics' bounds of the difference's correction
    # error add in quadrature (sqrt(4) 0.01 / 4 = 0.5 se), where signed they would sum (1 se)
    ctx, measure, runs = _pair_world(np.zeros((2, 4)))
    measure.difference_bias = lambda ctx, first, second: np.full((len(first), 4), 0.01)
    found = assess_pair(ctx, measure, runs, [0], [1], evaluated, se)
    assert found.bias_se[0] == pytest.approx(1.0)
    measure.bias_in_quadrature = lambda ctx: True
    found = assess_pair(ctx, measure, runs, [0], [1], evaluated, se)
    assert found.bias_se[0] == pytest.approx(0.5)


def test_summed_bias_adds_the_signed_and_the_corrected_parts():
    """Rule 3's size of a mean's bias: the topics whose bias the estimate leaves in sum with
    their signs, the bounds of the corrected topics add in quadrature, and the two parts add
    (ht(nDCG) corrects some topics of a run and not others)."""
    per_cell = np.array([[0.3, -0.1, 0.4, 0.3], [-0.3, -0.1, 0.4, 0.3]])
    mixed = np.array([[False, False, True, True]] * 2)
    np.testing.assert_allclose(summed_bias(per_cell, mixed), [0.2 + 0.5, 0.4 + 0.5])
    np.testing.assert_allclose(summed_bias(per_cell, False), [0.9, 0.3])
    np.testing.assert_allclose(summed_bias(per_cell, True), [np.sqrt(0.35)] * 2)


def test_difference_bias_of_ht_ratios(samples):
    """ht's estimated bias of a pair's difference per topic: both runs' ratios share the
    topic's denominator, so the difference's second-order bias is b_a - b_b, signed where the
    estimate leaves it in (nDCG's topics with one or two relevant documents sampled), and where
    it removes it (ht(AP)'s identified topics, nDCG's others) the bound |b_a - b_b| cv;
    ``compare``'s rule adds ht(AP)'s in quadrature over the topics."""
    from irsample.measures import parse
    from irsample.measures.ht.estimator import estimate

    ctx, evaluated = _thin_context(samples)
    shape = evaluated.shape
    first, second = np.array([0, 0, 2]), np.array([1, 3, 1])
    for name in ("AP", "nDCG"):
        (m,) = parse(f"ht({name})")
        e = estimate(ctx, m.inner)
        den = np.where(evaluated, e.den.reshape(shape), np.nan)
        np.testing.assert_allclose(np.nanmin(den, axis=0), np.nanmax(den, axis=0))
        y = np.where(e.den > 0, e.den, 1.0)
        b = np.where(e.den > 0, (e.plain * e.var_den - e.cov) / y**2, 0.0).reshape(shape)
        cv = np.minimum(np.sqrt(np.maximum(e.var_den, 0.0)) / y, 1.0).reshape(shape)
        expected = b[first] - b[second]
        fixed = m.corrected(ctx).reshape(shape)
        assert fixed.any() and (name == "AP" or not fixed.all())  # nDCG: not its sparse topics
        fixed = fixed[first] & fixed[second]
        expected = np.where(fixed, np.abs(expected) * np.maximum(cv[first], cv[second]),
                            expected)
        np.testing.assert_allclose(m.difference_bias(ctx, first, second), expected)
    (ap,) = parse("ht(AP)")
    runs = Reliability(np.zeros(ctx.n_runs, bool), ("",) * ctx.n_runs, ((),) * ctx.n_runs,
                       np.zeros(ctx.n_runs), np.zeros(ctx.n_runs), np.zeros(ctx.n_runs),
                       np.zeros(ctx.n_runs, bool))
    se = np.full(len(first), 0.01)
    found = assess_pair(ctx, ap, runs, first, second, evaluated, se)
    both = evaluated[first] & evaluated[second]
    d = np.where(both, ap.difference_bias(ctx, first, second), 0.0)
    np.testing.assert_allclose(found.bias_se, np.sqrt((d**2).sum(1)) / both.sum(1) / 0.01)


def test_demo_and_judge_report_print_the_status(tmp_path, capsys):
    rc, out, err = cli(capsys, "demo", "--plot", tmp_path / "d.png", "--fraction", "0.03",
                       "--collection", "vaswani", "--rounds", "3")
    assert rc == 0
    table = [ln for ln in out.splitlines() if ln.count("[") == 3]
    notes = out.split("still flagged after 3 rounds")[1].splitlines()
    flagged = {ln.split(":")[0][4:] for ln in notes if ln.startswith("  ! ")}
    assert flagged and all(re.match(r"  ! \S+: +\d+ of 11 flagged: \S", ln)
                           for ln in notes if ln.startswith("  ! "))
    # an estimator has a note exactly when some interval of its column is marked
    columns = ["ht(AP)", "ht(nDCG)", "ht(P@10)"]
    marked = {columns[k] for ln in table for k in range(3)
              if ln.split("]")[k + 1].startswith("!")}
    assert marked == flagged
    rc, out, err = cli(capsys, "demo", "--plot", tmp_path / "s.png", "--fraction", "0.03",
                       "--collection", "vaswani", "--rounds", "3", "--strict")
    assert rc == 1 and out == "" and not (tmp_path / "s.png").exists()
    assert "--strict:" in err and "ht(AP)" in err
    rc, out, err = cli(capsys, "demo", "--plot", tmp_path / "c.png", "--fraction", "1",
                       "--strict")
    assert rc == 0 and "!" not in out


def test_judge_report_status_columns(samples, capsys, tmp_path):
    base = ["judge-report", samples["thin"], "--assume", "uniform",
            *RUNS[:2], "--auto-labels", "fusion", "-m", "AP"]
    rc, out, err = cli(capsys, *base)
    assert rc == 0, err
    table = out.split("per run")[1].splitlines()[1:]
    assert table[0].split("\t")[-2:] == ["status", "reason"]
    assert {ln.split("\t")[10] for ln in table[1:]} == {"unreliable"}
    out_file = tmp_path / "report.txt"
    rc, out, err = cli(capsys, *base, "--strict", "-o", out_file)
    assert rc == 1 and out == "" and not out_file.exists() and "ppi(AP)" in err


@pytest.mark.parametrize("options", [{}, {"max_docs": 50}, {"judged_only": True}])
def test_support_counts_judged_relevant_documents_within_the_cutoff(samples, options):
    from irsample.measures.context import EvalContext
    from irsample.measures.reliability import judged_relevant, support_per_segment

    ctx = EvalContext(*irsample.load(samples["thin"], RUNS, assume="uniform"), **options)
    hit = judged_relevant(ctx)[ctx.pos_tdi]
    seg = np.repeat(np.arange(ctx.n_seg), ctx.seg_len)
    for cutoff in (None, 1, 10, 1000):
        keep = hit if cutoff is None else hit & (ctx.rank <= cutoff)
        expected = np.bincount(seg, weights=keep.astype(float), minlength=ctx.n_seg)
        np.testing.assert_array_equal(support_per_segment(ctx, cutoff), expected)


def test_run_bias_rule_adds_the_topics_signed_biases(samples):
    """Rule 3 for a run's mean: the bias of a sum over topics is the sum of the topics' signed
    biases, so biases of opposite signs cancel and biases of one sign add up."""
    from irsample.measures.context import EvalContext
    from irsample.measures.reliability import assess

    ctx = EvalContext(*irsample.load(samples["census"], RUNS))  # nothing thin, nothing weak
    evaluated = np.ones((ctx.n_runs, ctx.n_topics), bool)
    variance = np.full(evaluated.shape, 1e-4)  # the sum's standard error: 0.01 sqrt(topics)
    se = 0.01 * np.sqrt(ctx.n_topics)
    half = ctx.n_topics // 2
    bias = np.zeros(evaluated.shape)
    bias[0, :half] = se / half  # run 0: one sign, summing to one standard error
    bias[1, :half], bias[1, half:2 * half] = se / half, -se / half  # run 1: they cancel
    measure = SimpleNamespace(estimated_bias=lambda ctx, from_sample=False: bias.ravel())
    found = assess(ctx, measure, evaluated, variance)
    assert found.bias_se[0] == pytest.approx(1.0) and found.bias_se[1] == pytest.approx(0.0)
    assert found.status[:2].tolist() == ["unreliable", "ok"]
    assert found.reason[0] == "estimated bias 1.00 of its standard error"
    assert set(found.topics[0]) <= set(range(half)) and found.topics[0]
    # a measure that reads another's bias says whose (ppi reads ht's, as its bound)
    measure.bias_reason = parse("ppi(nDCG)")[0].bias_reason
    assert assess(ctx, measure, evaluated, variance).reason[0] == (
        "estimated bias (ht(nDCG)'s, taken as ppi's bound) 1.00 of its standard error")
    assert parse("ht(AP)")[0].bias_reason == "estimated bias"
    del measure.bias_reason
    # an estimator that removes its bias: the bounds of the correction's error, of no fixed
    # sign and independent over topics, add in quadrature (sqrt(half) (se / half) for both)
    measure.bias_in_quadrature = lambda ctx: True
    found = assess(ctx, measure, evaluated, variance)
    np.testing.assert_allclose(found.bias_se[:2], [1 / np.sqrt(half), np.sqrt(2 / half)])


def _thin_context(samples):
    """The evaluation context of the thin sample (5% of Vaswani's pool, four runs) and the
    topics each run answers."""
    from irsample.measures.context import EvalContext

    ctx = EvalContext(*irsample.load(samples["thin"], RUNS, assume="uniform"))
    return ctx, ctx.answered


def test_support_is_the_designs_expectation_for_design_based_estimators(samples):
    """Rule 1 counts, for ht(M) and ppi(M) on a uniform or stratified sample, the relevant
    documents the design is expected to judge (``Measure.expected_support``), and for the
    other estimators those the sample judged."""
    from irsample.measures import parse
    from irsample.measures.reliability import assess, support_per_segment

    ctx, evaluated = _thin_context(samples)
    shape = evaluated.shape
    for name, cutoff in (("ht(P@10)", 10), ("infAP", None)):
        (m,) = parse(name)
        found = assess(ctx, m, evaluated, np.zeros(shape))
        expected = m.expected_support(ctx, cutoff)
        assert (expected is None) == (name == "infAP")
        counted = support_per_segment(ctx, cutoff) if expected is None else expected
        np.testing.assert_allclose(found.support,
                                   np.where(evaluated, counted.reshape(shape), 0.0).sum(1))
    ht_count = support_per_segment(ctx, 10).reshape(shape)
    assert not np.allclose(parse("ht(P@10)")[0].expected_support(ctx, 10).reshape(shape),
                           ht_count)  # not the draw's count


def test_skewness_limit_is_cochrans_rule_as_revised():
    """n > 28 + 25 G1^2 (Sugden, Smith & Jones 2000) with G1 = gamma sqrt(n): |gamma| may reach
    sqrt((1 - 28/n) / 25), which tends to Cochran's 0.2; nothing is allowed from 28 units down.
    For 0/1 values in one simple random sample, where gamma = G1 / sqrt(n), the limit is met
    exactly at n = 28 + 25 G1^2."""
    from irsample.measures.reliability import skewness_limit

    limit = skewness_limit(np.array([10.0, 28.0, 56.0, 1e9]))
    assert limit[0] == 0.0 and limit[1] == 0.0
    assert limit[2] == pytest.approx(np.sqrt(0.5 / 25)) and limit[3] == pytest.approx(0.2)
    p = 0.1
    g1 = (1 - 2 * p) / np.sqrt(p * (1 - p))
    n = 28 + 25 * g1**2
    assert g1 / np.sqrt(n) == pytest.approx(float(skewness_limit(n)))


def test_design_based_support_is_the_skewness_a_normal_interval_allows(samples):
    """For ht(M) on a uniform sample rule 1 flags a run exactly when the skewness of the
    design's estimate of its relevant documents within the cut-off (``expected_sample``'s
    third cumulant over variance^1.5, added over topics), with their fitted number at the low
    end of the relevance model's 95% interval, exceeds Cochran's limit for the positions it is
    expected to judge, while most of those positions are unjudged; the reason says so with the
    numbers. The low end is below the fitted number and raises the skewness."""
    from irsample.measures import parse
    from irsample.measures.reliability import FIT_Z, assess, open_share, skewness_limit

    ctx, evaluated = _thin_context(samples)
    shape = evaluated.shape
    (m,) = parse("ht(P@10)")
    found = assess(ctx, m, evaluated, np.zeros(shape))
    sample = m.expected_sample(ctx, 10)

    def per_run(x):
        return np.where(evaluated, x.reshape(shape), 0.0).sum(1)

    fitted = per_run(sample.relevant.sum(axis=1))
    se = sample.count_se(evaluated)
    assert np.all(se > 0) and np.all(se < fitted)
    end = 1.0 - FIT_Z * se / fitted
    var, third = sample.moments(np.repeat(end, shape[1]))
    n, skew = per_run(sample.judged), per_run(third) / per_run(var) ** 1.5
    at_fit = per_run(sample.third) / per_run(sample.variance) ** 1.5
    assert np.all(skew > at_fit) and np.all(at_fit > 0)  # rare relevant documents: right tail
    low = (skew > skewness_limit(n)) & (open_share(ctx, 10, evaluated) > 0.5)
    np.testing.assert_array_equal(found.thin, low)
    assert low.any()  # 5% of the pool: too thin for a normal interval
    r = int(np.flatnonzero(low)[0])
    assert f"has skewness {skew[r]:.2f}" in found.reason[r]
    assert f"({end[r]:.0%} of it;" in found.reason[r]
    for k in np.flatnonzero(low):  # 28 positions or fewer: Cochran's rule allows no skewness
        allowed = (f"none allowed with the {n[k]:.0f} positions" if n[k] <= 28
                   else f"at most {skewness_limit(n[k]):.2f} with the {n[k]:.0f} positions")
        assert allowed in found.reason[k], found.reason[k]
    assert parse("infAP")[0].expected_sample(ctx, None) is None  # counts the draw's documents


def test_weak_topics_read_the_designs_expectation_for_design_based_estimators(samples):
    """Rule 2 counts a topic weak, for ht(M) and ppi(M) on a uniform or stratified sample,
    when no relevant document was judged or the design is expected to judge fewer than FEW + 1
    (``Measure.expected_found``); for the other ratio estimators when 1 to FEW were judged."""
    from irsample.measures import parse
    from irsample.measures.reliability import (
        FEW,
        MAX_WEAK,
        assess,
        found_per_topic,
        judged_share,
        weak_topics,
    )

    ctx, evaluated = _thin_context(samples)
    found, share = found_per_topic(ctx), judged_share(ctx)
    for name in ("ht(AP)", "ppi(AP)", "infAP"):
        (m,) = parse(name)
        expected = m.expected_found(ctx)
        assert (expected is None) == (name == "infAP")
        weak = weak_topics(found, share, expected)
        got = assess(ctx, m, evaluated, np.ones(evaluated.shape))
        share_weak = (evaluated & weak[None, :]).sum(1) / evaluated.sum(1)
        np.testing.assert_allclose(got.weak, share_weak)
        assert (got.status == "unreliable")[share_weak > MAX_WEAK].all()
    expected = parse("ht(AP)")[0].expected_found(ctx)
    # the expectation is the model's, not the draw's: sum pi_d P(rel) over the topic's frame
    assert np.all(expected > 0) and not np.allclose(expected, found)
    rich = np.full(ctx.n_topics, FEW + 1.0)
    np.testing.assert_array_equal(weak_topics(found, share, rich), (found == 0) & (share < 1))
    np.testing.assert_array_equal(weak_topics(found, share, rich - 0.5),
                                  ((found == 0) & (share < 1)) | (share < 0.5))


def test_pairs_count_the_draws_relevant_documents(samples):
    """A pair's difference takes the sample's variance, so ``compare``'s rule counts the draw's
    judged relevant documents and reads the sample's bias (``anticipated=False``) where the
    run means' rule reads the design's expectation and the model's bias."""
    from irsample.measures import parse
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.reliability import (
        assess,
        found_per_topic,
        judged_share,
        support_per_segment,
        weak_topics,
    )

    ctx, evaluated = _thin_context(samples)
    shape = evaluated.shape
    (p10,) = parse("ht(P@10)")
    drawn = assess(ctx, p10, evaluated, np.zeros(shape), anticipated=False)
    counted = np.where(evaluated, support_per_segment(ctx, 10).reshape(shape), 0.0).sum(1)
    np.testing.assert_allclose(drawn.support, counted)
    assert not np.allclose(assess(ctx, p10, evaluated, np.zeros(shape)).support, counted)
    (ap,) = parse("ht(AP)")
    weak = weak_topics(found_per_topic(ctx), judged_share(ctx))
    drawn = assess(ctx, ap, evaluated, np.ones(shape), anticipated=False)
    np.testing.assert_allclose(drawn.weak, (evaluated & weak).sum(1) / evaluated.sum(1))
    sample_bias, model_bias = ap.estimated_bias(ctx, from_sample=True), ap.estimated_bias(ctx)
    assert estimate(ctx, ap.inner).model_bias is not None
    assert not np.allclose(sample_bias, model_bias)
    # ht(AP) removes its bias: the bounds of the correction's error add in quadrature
    assert ap.corrected(ctx)[estimate(ctx, ap.inner).known].all()
    per_run = np.sqrt((np.where(evaluated, sample_bias.reshape(shape), 0.0) ** 2).sum(1))
    np.testing.assert_allclose(drawn.bias_se, per_run / np.sqrt(evaluated.sum(1)))


def test_rule_two_limit_flags_four_weak_topics_of_fifty_not_three():
    """MAX_WEAK: a run mean with three weak topics of 50 is not flagged by rule 2, one with
    four is (the 5% limit flagged three; REPRODUCTION.md, "Rule 2's limit")."""
    from irsample.measures.reliability import Reliability

    weak = np.array([2, 3, 4]) / 50
    nothing = np.zeros(3)
    found = Reliability(np.zeros(3, dtype=bool), ("",) * 3, ((),) * 3, nothing, weak,
                        np.full(3, np.nan), np.zeros(3, dtype=bool))
    assert found.many_weak.tolist() == [False, False, True]


def test_topics_their_judged_share_does_not_settle_stay_weak(tmp_path):
    """Rule 2's ``unsettled`` part: a topic judged more than half (short of whole) with 1 to
    FEW judged relevant documents stays weak, whatever the design; a difference of two runs
    does not inherit it."""
    path = make_sample_qrels(tmp_path / "most.qrels", RUNS, fraction=0.8)
    ctx = EvalContext(*irsample.load(str(path), RUNS, assume="uniform"))
    evaluated = ctx.answered
    found, share = found_per_topic(ctx), judged_share(ctx)
    few = (found >= 1) & (found <= FEW) & (share >= SETTLED) & (share < 1)
    assert few.sum() >= 4 and np.array_equal(unsettled_topics(found, share), few)
    assert weak_topics(found, share)[few].all()
    (ap,) = parse("ht(AP)")
    evaluated = evaluated & (few | (np.arange(ctx.n_topics) < 20))[None, :]  # few > 7%
    got = assess(ctx, ap, evaluated, np.full(evaluated.shape, 1e-4), anticipated=False)
    q = evaluated.sum(axis=1)
    np.testing.assert_allclose(got.unsettled, (evaluated & few).sum(axis=1) / q)
    flagged = got.unsettled > MAX_WEAK
    assert flagged.any() and (got.status == "unreliable")[flagged].all()
    assert not got.thin_or_weak.any()  # a pair's difference does not inherit it
    np.testing.assert_allclose(got.inherited, got.weak - got.unsettled)
    r = int(np.flatnonzero(flagged)[0])
    assert f"judged {SETTLED:.0%} or more but not whole" in got.reason[r]
    assert set(np.flatnonzero(few & evaluated[r]).tolist()) <= set(got.topics[r])
    # judged whole, or under half judged (where the design's expected count decides), not so
    share4 = np.array([0.6, 0.6, 1.0, 0.6])
    found4 = np.array([1, 2, 1, FEW + 1])
    assert unsettled_topics(found4, share4).tolist() == [True, True, False, False]
    thin = np.full(4, SETTLED / 2)
    rich = np.full(4, FEW + 1.0)
    assert not weak_topics(found4, thin, rich).any()


@pytest.mark.parametrize("how", ["planned", "2strata"])
def test_unsettled_topics_flag_planned_and_two_strata_samples(how):
    """Rule 2's last part end to end on designs with rates that differ by rank: CACM's depth-100
    pool sampled 70% by the planner (a pilot, then top-ups), and CACM's depth-20 pool sampled
    70% with ranks 1-4 at four times the rate of 5-20: topics judged half or more with 1-2
    judged relevant documents count as weak, and the run means they exceed 7% of are flagged
    with them named. (Judged in rounds, such topics are judged whole in the next round:
    tests/test_design_rounds.py.)"""
    from irsample.api import load
    from irsample.commands import demo
    from irsample.design.planner.sequential import PlannedDesign
    from irsample.experiments.rounds import first_design
    from irsample.measures.ht.estimator import estimate

    collection, complete = load(*demo.bundled("cacm"))
    if how == "planned":
        frame, _, _, _ = demo.setup(collection, complete, 100, 0.1)
        design = PlannedDesign(int(0.7 * len(frame)), "xinfAP")
        judgments = design.sample(frame, rng=np.random.default_rng(3))
    else:
        frame, _, _, _ = demo.setup(collection, complete, 20, 0.1)
        design = first_design("2strata", int(0.7 * len(frame)), 0.7, 20)
        judgments = frame.judgments(design.select(frame, rng=np.random.default_rng(3)))
    ctx = EvalContext(collection, judgments)
    (ndcg,) = parse("ht(nDCG)")
    e = estimate(ctx, ndcg.inner)
    evaluated = ctx.answered
    variance = e.variance.reshape(evaluated.shape)
    found, share = found_per_topic(ctx), judged_share(ctx)
    late = unsettled_topics(found, share)
    assert late.sum() >= 2
    got = assess(ctx, ndcg, evaluated, variance, e.value.reshape(evaluated.shape),
                 anticipated=how == "2strata")
    np.testing.assert_allclose(got.unsettled, (evaluated & late).sum(axis=1)
                               / evaluated.sum(axis=1))
    flagged = got.unsettled > MAX_WEAK
    assert flagged.any() and (got.status == "unreliable")[flagged].all()
    r = int(np.flatnonzero(flagged)[0])
    assert "but not whole: nothing settles how many are left unjudged" in got.reason[r]
    assert set(np.flatnonzero(late & evaluated[r]).tolist()) <= set(got.topics[r])


def test_imputed_topics_judged_half_or_more_are_bounded_by_their_value(tmp_path):
    """Rule 3's bound on an imputed topic's error (``imputation_bound``): the spread of the
    run's estimates over its other topics, and on a topic judged SETTLED or more of its pool
    with no relevant document found at least its imputed value (it may have none, and then its
    truth is 0). End to end on an 80% uniform sample of Vaswani: the bound is what ``values``
    adds to each run's estimated bias."""
    from irsample.measures.ht.estimator import estimate
    from irsample.measures.reliability import imputation_bound

    values = np.array([[0.5, 0.1, 0.3, 0.4], [0.2, 0.2, 0.6, 0.05]])
    evaluated = np.ones(values.shape, dtype=bool)
    imputed = np.array([False, False, True, True])[None, :] & evaluated
    settled = np.array([False, False, False, True])
    spread = np.sqrt(0.08)  # of (0.5, 0.1); run 1: of (0.2, 0.2), 0
    np.testing.assert_allclose(imputation_bound(values, evaluated, imputed),
                               [[0, 0, spread, spread], [0, 0, 0, 0]])
    np.testing.assert_allclose(imputation_bound(values, evaluated, imputed, settled),
                               [[0, 0, spread, 0.4], [0, 0, 0, 0.05]])

    path = make_sample_qrels(tmp_path / "most.qrels", RUNS, fraction=0.8)
    ctx = EvalContext(*irsample.load(str(path), RUNS, assume="uniform"))
    found, share = found_per_topic(ctx), judged_share(ctx)
    late = (found == 0) & (share >= SETTLED) & (share < 1)
    assert late.any()  # topics judged most of the way with nothing relevant found
    (ap,) = parse("ht(AP)")
    e = estimate(ctx, ap.inner)
    evaluated = ctx.answered
    variance, value = (a.reshape(evaluated.shape) for a in (e.variance, e.value))
    cells = evaluated & ((found == 0) & (share < 1))[None, :]
    bound = imputation_bound(value, evaluated, cells, share >= SETTLED)
    assert (bound[:, late] >= np.abs(value[:, late]) - 1e-15)[evaluated[:, late]].all()
    assert (bound > imputation_bound(value, evaluated, cells) + 1e-6).any()  # the value counts
    plain = assess(ctx, ap, evaluated, variance)
    got = assess(ctx, ap, evaluated, variance, value)
    se = np.sqrt(np.where(evaluated, variance, 0.0).sum(axis=1))
    np.testing.assert_allclose((got.bias_se - plain.bias_se) * se, bound.sum(axis=1))


def test_ratios_fitted_to_few_relevant_documents_are_bounded_by_value_over_count(tmp_path):
    """Rule 3's bound on a weak topic that is not imputed (``fitted_bound``: 1 to FEW judged
    relevant documents): the estimate over the count, |theta^| / k, whatever its sign, since
    the ratio's variance, fitted to those documents, is near 0 while its bias is of the order
    of the estimate over the count (Robust 2005, planned 30%: 0.5 read for a truth of 0.2 with
    variance 0). It applies where the interval takes the sample's own variance and to measures
    normalised by R, on the weak topics whose judged relevant documents were all judged with
    certainty (``certain_relevant_only``; one drawn at random gets its deletion's jackknife
    variance): end to end on a 30% uniform sample of four Vaswani runs read as the sample's
    (``anticipated=False``) no topic qualifies and only the imputed topics' bound is added;
    with the weak topics' judged documents made certain (a top-up's earlier judgments), every
    run's ht(AP) estimated bias grows by exactly the bounds of those topics (and the imputed
    ones'), in standard errors, and the topics carrying it are named where it flags; ht(nDCG),
    and ht(AP) read with the design's expected count, take none."""
    values = np.array([[0.5, -0.2, 0.3], [0.1, 0.4, 0.9]])
    fitted = np.array([[True, True, False], [False, True, False]])
    found = np.array([2, 1, 5])
    np.testing.assert_allclose(fitted_bound(values, fitted, found),
                               [[0.25, 0.2, 0.0], [0.0, 0.4, 0.0]])

    from dataclasses import replace

    from irsample.measures.ht.estimator import estimate
    from irsample.measures.reliability import imputation_bound
    from irsample.model import JUDGED

    path = make_sample_qrels(tmp_path / "some.qrels", RUNS, fraction=0.3)
    drawn = EvalContext(*irsample.load(str(path), RUNS, assume="uniform"))
    found, share = found_per_topic(drawn), judged_share(drawn)
    imputed = (found == 0) & (share < 1)
    (ap,) = parse("ht(AP)")

    def read(ctx):
        e = estimate(ctx, ap.inner)
        variance, value = (a.reshape(ctx.answered.shape) for a in (e.variance, e.value))
        got = assess(ctx, ap, ctx.answered, variance, value, anticipated=False)
        plain = assess(ctx, ap, ctx.answered, variance, anticipated=False)
        se = np.sqrt(np.where(ctx.answered, variance, 0.0).sum(axis=1))
        filled = imputation_bound(value, ctx.answered, ctx.answered & imputed[None, :],
                                  share >= SETTLED)
        return got, plain, se, value, variance, filled

    got, plain, se, value, variance, filled = read(drawn)
    assert not (certain_relevant_only(drawn) & (found > 0)).any()
    np.testing.assert_allclose((got.bias_se - plain.bias_se) * se, filled.sum(axis=1))
    design = assess(drawn, ap, drawn.answered, variance, value)  # the design's expected count
    plain = assess(drawn, ap, drawn.answered, variance)
    np.testing.assert_allclose((design.bias_se - plain.bias_se) * se, filled.sum(axis=1))
    # the weak topics' judged documents made certain, as a top-up's earlier judgments are
    j = drawn.judgments
    weak_topic = got.weak_topic & ~imputed
    certain = (j.state == JUDGED) & weak_topic[drawn.collection.tdi_topic]
    inclusion = np.where(certain, 1.0, np.nan if j.inclusion is None else j.inclusion)
    ctx = EvalContext(drawn.collection, replace(j, inclusion=inclusion))
    assert (certain_relevant_only(ctx) == (weak_topic | (found == 0))).all()
    got, plain, se, value, variance, filled = read(ctx)
    evaluated = ctx.answered
    fitted = evaluated & (got.weak_topic & ~imputed)[None, :]
    assert fitted.any()
    bound = fitted_bound(value, fitted, found)
    np.testing.assert_allclose((got.bias_se - plain.bias_se) * se,
                               filled.sum(axis=1) + bound.sum(axis=1))
    newly = np.flatnonzero(got.biased & ~plain.biased)
    assert len(newly)
    for r in newly:
        assert set(np.flatnonzero(bound[r] > 0)) & set(got.topics[r])
    (ndcg,) = parse("ht(nDCG)")
    n = estimate(ctx, ndcg.inner)
    n_var, n_value = (a.reshape(evaluated.shape) for a in (n.variance, n.value))
    n_got = assess(ctx, ndcg, evaluated, n_var, n_value, anticipated=False)
    n_plain = assess(ctx, ndcg, evaluated, n_var, anticipated=False)
    n_se = np.sqrt(np.where(evaluated, n_var, 0.0).sum(axis=1))
    n_filled = imputation_bound(n_value, evaluated, evaluated & imputed[None, :],
                                share >= SETTLED)
    np.testing.assert_allclose((n_got.bias_se - n_plain.bias_se) * n_se, n_filled.sum(axis=1))


def test_a_mean_outside_the_measures_range_is_flagged(samples):
    """Rule 5: an ht(M) or ppi(M) mean of a measure bounded by [0, 1] estimated above 1 (or
    below 0) is flagged, naming the topics estimated outside the range; num_rel (a sum) and
    the reference estimators are not read this way, and a mean inside the range is not."""
    from irsample.measures import parse
    from irsample.measures.reliability import assess, outside_range

    ctx, evaluated = _thin_context(samples)
    shape = evaluated.shape
    (m,) = parse("ht(P@10)")
    values = np.full(shape, 0.5)
    values[0, np.flatnonzero(evaluated[0])[:3]] = 30.0  # run 0: a mean above 1
    found = assess(ctx, m, evaluated, np.zeros(shape), values)
    mean, outside = outside_range(m, evaluated, values)
    assert outside[0] and not outside[1:].any() and mean[0] > 1
    assert found.unreliable[0]
    assert f"estimate {mean[0]:.4f} outside [0, 1], the measure's range" in found.reason[0]
    assert set(np.flatnonzero(evaluated[0])[:3]) <= set(found.topics[0])
    off = np.asarray(ctx.collection.topics)[np.flatnonzero(evaluated[0])[:3]]
    assert f"outside on 3 topics: {', '.join(map(str, off))})" in found.reason[0]
    assert found.outside[0] and not found.outside[1:].any()
    assert not any("outside [0, 1]" in r for r in found.reason[1:])
    for name in ("ht(num_rel)", "xinfAP"):
        assert not outside_range(parse(name)[0], evaluated, values)[1].any()
    assert not outside_range(m, evaluated, None)[1].any()


def test_a_reason_shows_a_value_and_its_limit_apart():
    """The skewness and the limit it exceeds are printed to as many places as they need to
    differ (two at least)."""
    from irsample.measures.reliability import apart

    assert apart(0.1436, 0.1424) == ("0.144", "0.142")
    assert apart(0.25, 0.13) == ("0.25", "0.13")
    assert apart(0.1400004, 0.14) == ("0.140000", "0.140000")  # six places at most


def test_rule_1_reads_a_ratio_measures_cut_off(samples):
    """Rule 1 reads the sample within the measure's cut-off: ht(nDCG@10)'s numerator is the
    top ten's, as ht(P@10)'s is, so both rest on the same judged positions and are flagged
    alike; ht(nDCG) reads the whole ranking (a TREC-COVID 10% sample printed ht(nDCG@10)
    0.87 [0.62, 1.12] as ok beside a flagged ht(P@10), reading the whole ranking's support)."""
    from irsample.measures import parse
    from irsample.measures.reliability import assess

    ctx, evaluated = _thin_context(samples)
    shape = evaluated.shape
    variance, values = np.full(shape, 1e-4), np.full(shape, 0.5)
    top = {name: assess(ctx, parse(name)[0], evaluated, variance, values)
           for name in ("ht(nDCG@10)", "ht(P@10)", "ht(nDCG)")}
    np.testing.assert_array_equal(top["ht(nDCG@10)"].support, top["ht(P@10)"].support)
    np.testing.assert_array_equal(top["ht(nDCG@10)"].thin, top["ht(P@10)"].thin)
    assert (top["ht(nDCG)"].support > top["ht(nDCG@10)"].support).any()


def _strata_with_one_empty_cell(samples, path, judged_in_empty=0):
    """Stratified qrels of the census sample: each topic's documents in two strata by docno
    parity, ``odd`` of the first topic with ``judged_in_empty`` of its documents judged (the
    rest -1, pooled but not judged)."""
    rows = [line.split() for line in open(samples["census"])]
    first = rows[0][0]
    kept, out = 0, []
    for q, _, d, rel in rows:
        stratum = "odd" if int(d) % 2 else "even"
        if q == first and stratum == "odd":
            rel, kept = (rel, kept + 1) if kept < judged_in_empty else ("-1", kept)
        out.append(f"{q} 0 {d} {stratum} {rel}\n")
    path.write_text("".join(out))
    return str(path), first


def test_strata_with_nothing_judged_are_flagged_with_their_topics(samples, tmp_path):
    """Rule 6: a run whose ranking (within the cut-off) holds pooled documents of a topic's
    stratum with nothing judged (inclusion probability 0) is unreliable, the reason naming
    the topic and stratum; one judged document in that stratum lifts the flag, and a
    difference of two runs inherits it (a campaign judged stratum by stratum and stopped
    early printed ht(P@10) 0.15 [0.05, 0.25] against 0.39 with every stratum sampled)."""
    qrels, topic = _strata_with_one_empty_cell(samples, tmp_path / "empty.strata")
    ev = irsample.estimate(qrels, RUNS, MEASURES, ci=0.95)
    expect = "in strata with nothing judged (inclusion probability 0"
    for m in range(len(MEASURES)):
        for r in range(len(RUNS)):
            reason = ev.statuses.reason[r, m]
            assert ev.statuses.status[r, m] == "unreliable" and expect in reason
            assert f"on 1 topic: {topic} (odd); judge at least one" in reason
            assert ev.statuses.causes[r, m][0] == topic
    one, _ = _strata_with_one_empty_cell(samples, tmp_path / "one.strata", judged_in_empty=1)
    ev = irsample.estimate(one, RUNS, MEASURES, ci=0.95)
    assert not any(expect in r for r in ev.statuses.reason.ravel())
    pairs = irsample.compare(qrels, RUNS[:2], "ht(P@10)")
    assert (pairs.status == "unreliable").all() and expect in pairs.iloc[0].reason


def test_prels_listing_documents_with_probability_0_are_flagged_and_warned(samples, tmp_path,
                                                                          capsys):
    """Prels listing pooled documents with pi = 0 (``merge --format prels`` of a depth-k
    design) keep those rows (they list the pool) with no warning about their probability;
    rule 6 flags the runs that rank them, and the command line warns of them without --ci
    too, before any estimate (a depth-5 design printed ht(num_rel) 19 against 37 in the
    pool, silently)."""
    rows = [line.split() for line in open(samples["census"])]
    first = rows[0][0]
    lines = [f"{q} {d} {'-1' if q == first and int(d) % 2 else rel} 1 "
             f"{'0.0' if q == first and int(d) % 2 else '1.0'}\n" for q, _, d, rel in rows]
    prels = tmp_path / "zero.prels"
    prels.write_text("".join(lines))
    ev = irsample.estimate(str(prels), RUNS, ["ht(AP)"], ci=0.95)
    reason = ev.statuses.reason[0, 0]
    assert "listed with inclusion probability 0 (no judgment stands for them" in reason
    assert f"on 1 topic: {first}; judge them under a design" in reason
    rc, out, err = cli(capsys, "eval", prels, RUNS[0], "-m", "ht(AP)")
    assert rc == 0 and "ht(AP)" in out
    lines = err.splitlines()
    count = sum(1 for q, _, d, _ in rows if q == first and int(d) % 2)
    assert lines == [f"irsample: warning: {prels}: {count} pooled documents have inclusion "
                     f"probability 0 (in strata with nothing judged, or listed so) on 1 topic: "
                     f"{first}; ht(AP) cannot estimate their relevance (with --ci the runs "
                     "that rank them are flagged); judge at least one document of each such "
                     "stratum"]
    rc, _, err = cli(capsys, "eval", samples["census"], RUNS[0], "-m", "ht(AP)")
    assert rc == 0 and err == ""


def test_input_warnings_read_as_irsample_warnings_on_every_path(tmp_path, capsys):
    """An input warning raised on a path that does not print its own (here: prels with a
    judged record outside (0, 1], read for ht(M), which loads every run at once) reads as
    ``irsample: warning: FILE:LINE: ...``, never as Python's warning with its source line."""
    rows = [line.split() for line in open(_census_qrels(tmp_path))]
    lines = [f"{q} {d} {rel} 1 {'1.5' if i == 0 else '1.0'}\n"
             for i, (q, _, d, rel) in enumerate(rows)]
    prels = tmp_path / "bad.prels"
    prels.write_text("".join(lines))
    rc, _, err = cli(capsys, "eval", prels, RUNS[0], "-m", "ht(AP)")
    assert rc == 0
    assert err.startswith(f"irsample: warning: {prels}:1: skipped 1 record(s) whose inclusion "
                          "probability is outside (0, 1]")
    assert "InputWarning" not in err and "return readers" not in err


def _census_qrels(root):
    return make_sample_qrels(root / "census.qrels", RUNS, fraction=1.0)


def test_the_refusal_of_an_unstated_design_comes_alone(tmp_path, capsys):
    """TREC qrels with -1 rows and no stated design: ht(M) is refused, with no warning before
    it about the topic judged nowhere; with --assume uniform that topic is warned of."""
    qrels, run = tmp_path / "t.qrels", tmp_path / "t.run"
    qrels.write_text("1 0 a 1\n1 0 b -1\n2 0 c -1\n2 0 d -1\n")
    run.write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 c 1 1 r\n")
    rc, out, err = cli(capsys, "eval", qrels, run, "-m", "ht(AP)")
    assert rc == 1 and out == "" and len(err.splitlines()) == 1 and "--assume uniform" in err
    rc, out, err = cli(capsys, "eval", qrels, run, "-m", "ht(AP)", "--assume", "uniform")
    assert rc == 0 and "2 pooled documents have inclusion probability 0" in err
    assert "on 1 topic: 2;" in err


def test_compare_and_judge_report_warn_of_strata_with_nothing_judged(samples, tmp_path,
                                                                    capsys):
    """``compare`` and ``judge-report`` warn of pooled documents with inclusion probability 0
    once on standard error, as ``eval`` does (they showed rule 6 in their statuses alone)."""
    qrels, topic = _strata_with_one_empty_cell(samples, tmp_path / "empty.strata")
    warning = "pooled documents have inclusion probability 0 (in strata with nothing judged"
    rc, out, err = cli(capsys, "compare", qrels, *RUNS[:2], "-m", "ht(P@10)")
    assert rc == 0 and out and err.count(warning) == 1 and f"on 1 topic: {topic}" in err
    assert "ht(P@10) cannot estimate their relevance" in err
    rc, out, err = cli(capsys, "judge-report", qrels, *RUNS[:2], "--auto-labels", "fusion",
                       "-m", "AP")
    assert rc == 0 and out and err.count(warning) == 1
    assert "ppi(AP) cannot estimate their relevance" in err
    one, _ = _strata_with_one_empty_cell(samples, tmp_path / "one.strata", judged_in_empty=1)
    rc, _, err = cli(capsys, "compare", one, *RUNS[:2], "-m", "ht(P@10)")
    assert rc == 0 and warning not in err
