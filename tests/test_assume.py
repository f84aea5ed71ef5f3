"""No estimate from guessed inclusion probabilities (issue 3), on the bundled Vaswani data.

TREC qrels with -1 rows mark a sample but not its design: the design-based estimators (ht, ppi,
auto) refuse them, naming the formats that carry the probabilities, unless the user states the
design (``--assume uniform``, ``assume="uniform"``), which every output format records. Complete
TREC qrels (no -1 rows) are a census and keep working; stratified qrels and prels carry their
probabilities. ``merge --format trec`` of a design that is not uniform warns, and infAP and
induced measures warn on judgments that tell they come from a stratified design.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

import irsample
from irsample.cli import main
from irsample.errors import InputError

from .docs_fixtures import VASWANI, make_sample_qrels

RUNS = [VASWANI / "runs" / f"{n}.run.gz" for n in ("bm25_k1.2_b0.75", "ql_dir_mu2000", "tf_raw")]


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _grades() -> dict:
    with gzip.open(VASWANI / "qrels.gz", "rt") as fh:
        return {(q, d): int(r) for q, _, d, r in (line.split() for line in fh)}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A uniform sample as TREC qrels (-1 rows) and the same sample as stratified qrels with one
    stratum per topic; a 2strata design drawn, judged from the qrels and merged in the three
    formats; a uniform design merged as trec; the complete qrels."""
    out = tmp_path_factory.mktemp("assume")
    sample = make_sample_qrels(out / "sample.qrels", RUNS, depth=50, fraction=0.3)
    (out / "one.strata").write_text("".join(
        f"{q} 0 {d} {q} {r}\n" for q, _, d, r in (ln.split() for ln in sample.open())))
    with gzip.open(VASWANI / "qrels.gz", "rb") as fh:
        (out / "complete.qrels").write_bytes(fh.read())
    grades = _grades()
    for name, design in (("s2", "2strata@400"), ("u", "uniform(0.2)")):
        assert main(["sample", *map(str, RUNS), "--design", design, "--depth", "50", "--seed",
                     "7", "-o", str(out / name)]) == 0
        rows = (out / name / "to_judge.tsv").read_text().splitlines()[1:]
        (out / f"{name}.judged").write_text("".join(
            f"{q} 0 {d} {grades.get((q, d), 0)}\n" for q, d in (r.split("\t")[:2] for r in rows)))
    return out


def _merge(capsys, files, name, fmt):
    path = files / f"{name}.{fmt}"
    rc, _, err = cli(capsys, "merge", files / name / "design.json", files / f"{name}.judged",
                     "--format", fmt, "-o", path)
    assert rc == 0, err
    return path, err


def test_design_based_estimators_refuse_trec_qrels_with_unjudged_rows(files, capsys):
    for measure in ("ht(AP)", "ht(P@10)"):
        rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", measure)
        assert rc == 1 and out == ""
        assert err.startswith(f"irsample: {files / 'sample.qrels'}: {measure} needs each judged "
                              "document's inclusion probability")
        for named in ("--format strata", "--format prels", "irsample merge",
                      "--assume uniform"):
            assert named in err
        rows = (files / "sample.qrels").read_text().splitlines()
        below = [i + 1 for i, row in enumerate(rows) if int(row.split()[3]) < 0]
        assert f"({len(below)} rows below 0 here, the first on line {below[0]})" in err
    rc, _, err = cli(capsys, "compare", files / "sample.qrels", *RUNS)
    assert rc == 1 and "ht(AP) needs" in err and "--assume uniform" in err
    with pytest.raises(InputError, match='assume="uniform"') as caught:
        irsample.estimate(files / "sample.qrels", RUNS, ["ht(AP)", "ht(nDCG)"])
    assert "ht(AP), ht(nDCG) need each" in str(caught.value)
    # the reference estimators keep their own assumptions
    rc, out, _ = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "infAP", "-m", "map")
    assert rc == 0 and "infAP" in out and "assume" not in out


def test_design_based_estimators_refuse_judged_only(files, capsys):
    """-J moves judged documents up past the unjudged ones, so a judged document no longer sits
    at the rank its inclusion probability weighs: ht(M) and ppi(M) refuse it, before any output,
    and the measures of the complete judgments keep it."""
    rc, out, err = cli(capsys, "eval", "-J", files / "one.strata", *RUNS, "-m", "ht(AP)",
                       "-m", "ht(nDCG)", "--ci", "0.95")
    assert rc == 1 and out == ""
    assert "ht(AP), ht(nDCG) cannot be computed over judged documents only (-J)" in err
    assert "leave out -J" in err
    rc, out, _ = cli(capsys, "eval", "-J", files / "one.strata", *RUNS, "-m", "map")
    assert rc == 0 and "map" in out


def test_sample_estimators_refuse_judged_only(files, capsys):
    """sample_eval's estimators and statAP read the judged share above each rank (or a judged
    document's rank in the whole ranking): with -J every stratum looks judged whole (TREC-8
    random10, input.INQ604: infNDCG 0.1256 against 0.5982), so they refuse it; infAP, a
    trec_eval measure, keeps trec_eval's -J."""
    rc, out, err = cli(capsys, "eval", "-J", files / "one.strata", *RUNS, "-m", "xinfAP",
                       "-m", "infNDCG", "-m", "iP.10", "-m", "ht(AP)")
    assert rc == 1 and out == ""
    assert err.startswith("irsample: ht(AP), xinfAP, infNDCG, iP@10 cannot be computed over "
                          "judged documents only (-J): ht(AP) weighs each judged document")
    assert "; xinfAP, infNDCG, iP@10 estimate from the judged and unjudged documents" in err
    prels, _ = _merge(capsys, files, "s2", "prels")
    rc, out, err = cli(capsys, "eval", "-J", prels, *RUNS, "-m", "statAP")
    assert rc == 1 and out == "" and "statAP cannot be computed" in err
    rc, out, _ = cli(capsys, "eval", "-J", files / "sample.qrels", *RUNS, "-m", "infAP")
    assert rc == 0 and "infAP" in out


def test_assume_uniform_gives_the_uniform_numbers(files, capsys):
    """--assume uniform reads each topic's judged documents as a uniform sample of its pool:
    the numbers of the same sample given as one stratum per topic (what the trec qrels gave
    before the refusal)."""
    measures = ["ht(AP)", "ht(nDCG@10)", "ht(P@10)"]
    assumed = irsample.estimate(files / "sample.qrels", RUNS, measures, assume="uniform")
    strata = irsample.estimate(files / "one.strata", RUNS, measures)
    np.testing.assert_array_equal(assumed.summary, strata.summary)
    np.testing.assert_array_equal(assumed.summary_variance, strata.summary_variance)
    assert assumed.assumed == "uniform" and strata.assumed is None
    pairs = irsample.compare(files / "sample.qrels", RUNS, assume="uniform")
    same = irsample.compare(files / "one.strata", RUNS)
    np.testing.assert_array_equal(pairs["diff"], same["diff"])
    assert list(pairs.assume.unique()) == ["uniform"] and "assume" not in same.columns


def test_the_assumption_is_recorded_in_every_output_format(files, capsys):
    base = ["eval", files / "sample.qrels", *RUNS, "-m", "ht(AP)", "-m", "map",
            "--assume", "uniform"]
    rc, out, err = cli(capsys, *base)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines.count("assume                \tall\tuniform") == len(RUNS)
    assert lines[1] == "assume                \tall\tuniform"  # after the run's runid line
    rc, out, _ = cli(capsys, *base, "-m", "runid")  # runid asked for: still right after it
    lines = out.splitlines()
    assert lines[0].startswith("runid") and lines[1] == "assume                \tall\tuniform"
    rc, out, _ = cli(capsys, *base, "--format", "tsv")
    head, *rows = out.splitlines()
    assert head == "run\ttopic\tmeasure\tvalue\tassume"
    assert rows and all(r.endswith("\tuniform") for r in rows)
    rc, out, _ = cli(capsys, *base, "--format", "json")
    assert all(run["all"]["assume"] == "uniform" for run in json.loads(out).values())
    rc, out, _ = cli(capsys, *base, "--format", "table")
    assert out.splitlines()[-1] == "assume: uniform"
    rc, out, _ = cli(capsys, *base, "--format", "latex")
    assert out.splitlines()[0] == "% assume uniform"
    rc, out, _ = cli(capsys, *base, "--format", "sample_eval")
    assert out.count("assume\t\tall\t\tuniform") == len(RUNS)
    rc, out, _ = cli(capsys, "compare", files / "sample.qrels", *RUNS, "--assume", "uniform")
    assert rc == 0 and out.startswith("# assume uniform\n")
    rc, out, _ = cli(capsys, "compare", files / "sample.qrels", *RUNS, "--assume", "uniform",
                     "--format", "csv")
    assert out.splitlines()[0].endswith(",assume")
    rc, out, _ = cli(capsys, "compare", files / "sample.qrels", *RUNS, "--assume", "uniform",
                     "--format", "markdown")
    assert "Inclusion probabilities assumed uniform" in out
    # trec_eval's measures alone rely on nothing: nothing is recorded
    rc, out, _ = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "map",
                     "--assume", "uniform")
    assert rc == 0 and "assume" not in out


def test_complete_trec_qrels_are_a_census(files, capsys):
    rc, out, err = cli(capsys, "eval", files / "complete.qrels", *RUNS, "-m", "ht(AP)", "-m",
                       "map", "--format", "tsv", "--places", "exact")
    assert rc == 0 and err == "" and "assume" not in out
    values = {}
    for row in out.splitlines()[1:]:
        run, _, measure, value = row.split("\t")
        values[run, measure] = float(value)
    for run in {r for r, _ in values}:
        assert values[run, "ht(AP)"] == pytest.approx(values[run, "map"], abs=1e-12)
    rc, out, err = cli(capsys, "eval", files / "complete.qrels", *RUNS, "-m", "ht(AP)",
                       "--assume", "uniform")
    assert rc == 0 and "assume" not in out and "--assume uniform not used" in err


def test_intervals_from_a_census_say_so(files, capsys):
    """Intervals of width 0 from complete qrels come with a note naming the file and how a
    sample's judgments are given; estimates without intervals, and trec_eval's measures, stay
    quiet; judgments with strata or -1 rows get no such note."""
    complete = files / "complete.qrels"
    rc, out, err = cli(capsys, "eval", complete, *RUNS, "-m", "ht(AP)", "--ci", "0.95")
    assert rc == 0 and err.count("\n") == 1
    assert err.startswith(f"irsample: note: {complete} marks no pooled document unjudged (-1)")
    assert "ht(AP) reads it as complete judgments" in err and "--assume uniform" in err
    rc, out, err = cli(capsys, "compare", complete, *RUNS, "-m", "ht(AP)", "-m", "ht(P@10)")
    assert rc == 0 and "ht(AP), ht(P@10) read it as complete judgments" in err
    rc, out, err = cli(capsys, "eval", complete, *RUNS, "-m", "map", "--ci", "0.95")
    assert rc == 0 and "complete judgments" not in err  # only: no interval to print
    assert err.startswith("irsample: warning: --ci: no interval to print") and err.count("\n") == 1
    path, _ = _merge(capsys, files, "s2", "strata")
    rc, out, err = cli(capsys, "eval", path, *RUNS, "-m", "ht(AP)", "--ci", "0.95")
    assert "complete judgments" not in err
    rc, out, err = cli(capsys, "eval", files / "sample.qrels", *RUNS, "-m", "ht(AP)", "--ci",
                       "0.95", "--assume", "uniform")
    assert "complete judgments" not in err


def test_strata_and_prels_carry_their_probabilities(files, capsys):
    for fmt in ("strata", "prels"):
        path, err = _merge(capsys, files, "s2", fmt)
        assert "warning" not in err
        rc, out, err = cli(capsys, "eval", path, *RUNS, "-m", "ht(AP)", "--ci", "0.95")
        assert rc == 0 and "assume" not in out
        assert all("unreliable interval" in line for line in err.splitlines())
        rc, out2, err = cli(capsys, "eval", path, *RUNS, "-m", "ht(AP)", "--ci", "0.95",
                            "--assume", "uniform")
        assert out2 == out and "carry their inclusion probabilities" in err


def test_merge_as_trec_warns_for_a_design_that_is_not_uniform(files, capsys):
    path, err = _merge(capsys, files, "s2", "trec")
    warning = err.splitlines()[-1]
    assert warning.startswith("irsample: warning: the trec format drops the inclusion "
                              "probabilities of this 2strata@400 design (not uniform)")
    assert "--format strata or --format prels" in warning
    assert all(len(line.split()) == 4 for line in path.read_text().splitlines())  # trec_eval's
    rc, _, err = cli(capsys, "eval", path, *RUNS, "-m", "ht(AP)")
    assert rc == 1 and "--format strata" in err
    _, err = _merge(capsys, files, "u", "trec")
    assert err.splitlines()[-1].startswith("irsample: note: the trec format drops the "
                                           "inclusion probabilities")
    assert "--assume uniform" in err and "warning" not in err


def test_uniform_readers_warn_on_a_stratified_design(files, capsys):
    strata, _ = _merge(capsys, files, "s2", "strata")
    prels, _ = _merge(capsys, files, "s2", "prels")
    rc, _, err = cli(capsys, "eval", prels, *RUNS, "-m", "infAP", "-m", "induced(AP)")
    assert rc == 0
    assert err.splitlines() == [
        "irsample: warning: infAP takes the sample as uniform, but these judgments come from a "
        "stratified design (unequal inclusion probabilities); ht(AP) or statAP estimates from "
        "them",
        "irsample: warning: induced takes the sample as uniform, but these judgments come from a "
        "stratified design (unequal inclusion probabilities); ht(M) estimates from them",
    ]
    rc, _, err = cli(capsys, "eval", strata, *RUNS, "-m", "induced(AP)")
    assert rc == 0 and "induced takes the sample as uniform" in err
    # sample_eval's estimators read strata, not the probabilities of prels
    rc, _, err = cli(capsys, "eval", prels, *RUNS, "-m", "xinfAP", "-m", "iP.10",
                     "-m", "inum_rel")
    assert rc == 0 and sorted(err.splitlines()) == sorted(
        f"irsample: warning: {f} estimates from the strata of stratified qrels; these prels "
        "give each judged document its own inclusion probability, which it ignores, reading "
        "the judged documents as a uniform sample of the pool; statAP and ht(M) estimate "
        "from them" for f in ("xinfAP", "iP", "inum_rel"))
    sampled_only = files / "sampled_only.prels"  # the Million Query's kind: no row below 0
    sampled_only.write_text("".join(line for line in prels.read_text().splitlines(True)
                                    if line.split()[2] != "-1"))
    rc, _, err = cli(capsys, "eval", sampled_only, *RUNS, "-m", "infNDCG")
    assert rc == 0 and "as the whole pool (these prels list the sampled documents alone); " \
        "statAP estimates from them" in err
    rc, _, err = cli(capsys, "eval", strata, *RUNS, "-m", "xinfAP", "-m", "infNDCG")
    assert rc == 0 and err == ""  # their own format
    for uniform in (files / "sample.qrels", files / "complete.qrels"):
        rc, _, err = cli(capsys, "eval", uniform, *RUNS, "-m", "infAP", "-m", "induced(AP)")
        assert rc == 0 and err == ""


def test_judgments_know_where_their_probabilities_come_from(files):
    def probabilities(path):
        return irsample.load(path, RUNS)[1].probabilities

    assert probabilities(files / "sample.qrels") == "none"
    assert probabilities(files / "complete.qrels") == "census"
    assert probabilities(files / "one.strata") == "design"
    _, judgments = irsample.load(files / "sample.qrels", RUNS, assume="uniform")
    assert judgments.assumed == "uniform"
    _, judgments = irsample.load(files / "one.strata", RUNS, assume="uniform")
    assert judgments.assumed is None  # its own probabilities win
    with pytest.raises(InputError, match="unknown design to assume"):
        irsample.load(files / "sample.qrels", RUNS, assume="stratified")


def test_prels_list_the_whole_pool_and_sampled_only_prels_are_refused(files, capsys):
    """merge --format prels writes every pool document (the unjudged as -1), so a uniform
    design's prels give the stratified file's estimates, intervals and statuses to the digit.
    Prels listing the sampled documents alone (statAP's convention) leave the pool unknown: ht
    and ppi refuse them, naming what to use, and statAP reads them as it always has."""
    prels, _ = _merge(capsys, files, "u", "prels")
    strata, _ = _merge(capsys, files, "u", "strata")
    rows = [line.split() for line in prels.read_text().splitlines()]
    assert len(rows) == len(strata.read_text().splitlines())
    assert {r[2] for r in rows if int(r[2]) < 0} == {"-1"}
    measures = ["ht(AP)", "ht(nDCG)", "ht(P@10)"]
    a = irsample.estimate(prels, RUNS, measures, ci=0.95)
    b = irsample.estimate(strata, RUNS, measures, ci=0.95)
    np.testing.assert_array_equal(a.summary, b.summary)
    np.testing.assert_array_equal(a.summary_variance, b.summary_variance)
    sa, sb = a.frame(per_topic=False), b.frame(per_topic=False)
    assert sa["status"].tolist() == sb["status"].tolist()
    assert sa["reason"].tolist() == sb["reason"].tolist()
    sampled_only = files / "u.sampled.prels"
    sampled_only.write_text("".join(" ".join(r) + "\n" for r in rows if int(r[2]) >= 0))
    for measure in ("ht(AP)", "ppi(AP)"):
        rc, out, err = cli(capsys, "eval", sampled_only, *RUNS, "-m", measure,
                           "--auto-labels", "fusion", "--ci", "0.95")
        assert rc == 1 and out == ""
        assert err.startswith(f"irsample: {sampled_only}: {measure} needs each topic's whole "
                              "pool, and these prels list only the sampled documents")
        assert "--format prels" in err and "statAP" in err
    rc, out, _ = cli(capsys, "eval", sampled_only, *RUNS, "-m", "statAP")
    rc2, out2, _ = cli(capsys, "eval", prels, *RUNS, "-m", "statAP")
    assert rc == rc2 == 0 and out == out2  # the -1 rows change nothing for statAP


def test_reference_estimators_that_ignore_the_relevance_level_say_so(files, capsys):
    """sample_eval.pl and statAP count every grade >= 1 as relevant and have no -l: with -l 2
    xinfAP and iP@k give their level-1 numbers, and eval says so once on standard error (and
    says nothing at -l 1); infAP, which reads the level, is left out of the comparison."""
    strata, _ = _merge(capsys, files, "s2", "strata")
    rc, one, err1 = cli(capsys, "eval", strata, *RUNS, "-m", "xinfAP", "-m", "iP@10")
    rc2, two, err2 = cli(capsys, "eval", "-l", "2", strata, *RUNS, "-m", "xinfAP",
                         "-m", "iP@10", "-m", "infAP")
    assert rc == rc2 == 0 and err1 == ""
    assert [ln for ln in two.splitlines() if not ln.startswith("infAP")] == one.splitlines()
    assert err2.splitlines()[-1:] == [  # after infAP's warning about the strata
        "irsample: warning: xinfAP, iP count every grade of 1 or more as relevant whatever -l "
        "(as sample_eval.pl and statAP do); -l 2 applies to trec_eval's measures, infAP and "
        "the design-based estimators (ht(M), ppi(M))"]


def test_a_partly_judged_importance_sample_is_refused_with_its_design(files, capsys):
    """Selected documents of an importance sample not judged yet leave no inclusion
    probabilities for the part judged (no cells to reweight): ``eval --design`` and ``compare
    --design`` refuse, saying how many are missing, and print nothing; judged whole, it
    evaluates. (A stratified design's partial judgments are its cells' simple random samples:
    ``test_merge``.)"""
    out = files / "imp"
    assert main(["sample", *map(str, RUNS), "--design", "importance(0.1)", "--depth", "50",
                 "--seed", "7", "-o", str(out)]) == 0
    capsys.readouterr()
    grades = _grades()
    rows = [r.split("\t")[:2] for r in (out / "to_judge.tsv").read_text().splitlines()[1:]]
    whole, half = out / "whole.qrels", out / "half.qrels"
    whole.write_text("".join(f"{q} 0 {d} {grades.get((q, d), 0)}\n" for q, d in rows))
    half.write_text("".join(f"{q} 0 {d} {grades.get((q, d), 0)}\n" for q, d in rows[::2]))
    missing = len(rows) - len(rows[::2])
    for command in ("eval", "compare"):
        rc, printed, err = cli(capsys, command, half, *RUNS, "--design", out / "design.json",
                               "-m", "ht(P@10)", "--ci", "0.95")
        assert rc == 1 and printed == ""
        assert f"{missing} of the {len(rows)} documents this importance" in err
        assert "judge them first" in err
    rc, printed, err = cli(capsys, "eval", whole, *RUNS, "--design", out / "design.json",
                           "-m", "ht(P@10)", "--ci", "0.95")
    assert rc == 0 and "ht(P@10)" in printed, err


def test_a_run_ranking_outside_the_judged_pool_is_noted(files, capsys):
    """A run whose top 10 documents lie mostly outside the judged pool (a run of another
    collection, or one far from the pooled runs) gets a note naming it with its share: the
    design-based estimators read those documents as not relevant. The pooled runs get none,
    and the trec_eval measures (which read them so by definition) none either."""
    from irsample.judgment_notes import outside_pool_share

    strata = files / "one.strata"
    stranger = files / "stranger.run"
    topics = sorted({line.split()[0] for line in strata.read_text().splitlines()})
    stranger.write_text("".join(f"{q} Q0 X{k} {k} {100 - k} stranger\n" for q in topics
                                for k in range(1, 21)))
    rc, _, err = cli(capsys, "eval", strata, *RUNS, stranger, "--qrels-format", "strata",
                     "-m", "ht(P@10)", "--ci", "0.95")
    assert rc == 0 and "1 run ranks mostly documents outside the judged pool in their top " \
        "10 (share unpooled: stranger (100%))" in err and "ht(P@10) reads those" in err
    rc, _, err = cli(capsys, "eval", strata, *RUNS, "--qrels-format", "strata",
                     "-m", "ht(P@10)", "--ci", "0.95")
    assert rc == 0 and "outside the judged pool" not in err
    rc, _, err = cli(capsys, "eval", strata, stranger, "--qrels-format", "strata", "-m", "P_10")
    assert "outside the judged pool" not in err
    collection, judgments = irsample.load(strata, [*RUNS, stranger], qrels_format="strata")
    share = outside_pool_share(collection, judgments)
    assert share[-1] == 1.0 and (share[:-1] < 0.5).all()
