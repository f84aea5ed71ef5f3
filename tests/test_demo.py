"""``irsample demo`` on the bundled Vaswani and CACM data: judging in rounds (a block per round
with what is flagged and why, the plan of the next one), the final table with intervals and their
``!``, the coverage lines, the advice on what is still flagged, and the figure."""

from __future__ import annotations

import re

import numpy as np
import pytest

from irsample.cli import main
from irsample.commands import demo
from irsample.commands.demo_text import ESTIMATORS, merge_reasons

NAMES = list(ESTIMATORS.values())


def coverage(out: str) -> dict[str, tuple[int, int]]:
    """Per estimator: (intervals covering the truth, runs) from the final lines."""
    found = re.findall(r"^(\S+) +vs truth: Kendall tau [-\d.]+, RMS error [\d.]+; (\d+)/(\d+) "
                       r"intervals cover the true value", out, re.M)
    return {name: (int(k), int(n)) for name, k, n in found}


def test_demo_judges_cacm_in_rounds_until_nothing_is_flagged(tmp_path, capsys):
    """The default: CACM, rounds of 10% until no interval is flagged (at most 10)."""
    plot = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(plot), "--no-progress"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    assert out.startswith("CACM: 11 runs, 52 topics (12 more in the runs, which the qrels do not "
                          "name, are not evaluated); the\n  depth-100 pool holds 12,520 ")
    assert ("round 1 judges 10% of the pool (1,252 documents) with a two-strata design (ranks 1-3 "
            "of every run in full, ranks 4-100 at random; seed 2008); later rounds 1,252 more "
            "each, up to 10 rounds or until no interval is flagged") in flat
    first = out.split("\nround 1: ")[1].split("\n\n")[0]
    # ranks 1-3 judged whole beside sampled ones: the ratios' rule reads the sample's counts
    assert ("ht(AP): 11 of 11 flagged: 20 of 52 topics have 2 or fewer judged relevant "
            "documents in this draw; estimated bias 2.59-5.37 of its standard "
            "error") in " ".join(first.split())
    # two runs' P@10 rest on 18 positions expected to be judged: too few for any skewness
    assert ("ht(P@10): 2 of 11 flagged: too skewed for a normal interval: the design's estimate "
            "of its relevant documents has skewness 0.88-1.06 with their fitted number at the "
            "low end of the relevance model's 95% interval (48-50% of it; none allowed with the "
            "18 positions it is expected to judge") in " ".join(first.split())
    # a block per round, each but the last planning the next; the default seed stops at 7
    plans = re.findall(r"^  -> round (\d) judges 1,252 more in (\d+) topics \(ranks 1-10: ", out,
                       re.M)
    assert [int(k) for k, _ in plans] == [2, 3, 4, 5, 6, 7]
    assert re.search(r"^round 6: 7,512 judged \(60\.0% of the pool, 1,252 new\)$", out, re.M)
    assert re.search(r"^round 7: 8,764 judged \(70\.0% of the pool, 1,252 new\); nothing "
                     r"flagged$", out, re.M)
    # the topics the rule holds weak until judged whole are judged whole, named in the plan
    assert "judged whole" not in out.split("\nround 5: ")[0]
    assert ("-> round 6 judges 1,252 more in 52 topics (ranks 1-10: 100, ranks 11-30: 307, ranks "
            "31-100: 845); topic 64 judged whole, 129 of the judgments (1 to 2 relevant documents "
            "judged with 50% or more of the pool judged: weak until all of it is); each half of "
            "the other topics") in flat
    assert ("-> round 7 judges 1,252 more in 51 topics (ranks 1-10: 56, ranks 11-30: 253, ranks "
            "31-100: 943); topics 31, 32, 33, 57 judged whole, 495 of the judgments (1 to 2 "
            "relevant documents judged with 50% or more of the pool judged: weak until all of it "
            "is); each half of the other topics is allocated") in flat
    assert "final, after 7 rounds: 8,764 judged (70.0% of the pool" in out
    # the table: a row per run, best true MAP first, three intervals each, none flagged
    rows = [line for line in out.splitlines() if line.count("[") == 3]
    assert len(rows) == 11 and rows[0].startswith("dfr_inexpb2_c1 ")
    assert sum(row.count("]!") for row in rows) == 0
    assert list(coverage(out)) == NAMES
    # the default seed's story (measured; see docs/usage.md "The demo")
    assert coverage(out) == {name: (11, 11) for name in NAMES}
    assert out.count("11/11 unflagged cover it") == 3
    assert "nothing is flagged: every interval printed can be trusted by the rule" in out
    assert "still flagged" not in out
    assert "xinfAP" not in out and "infNDCG" not in out
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_demo_on_vaswani_says_what_stays_flagged(tmp_path, capsys):
    plot = tmp_path / "demo.png"
    assert main(["demo", "--plot", str(plot), "--no-progress", "--collection", "vaswani",
                 "--rounds", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Vaswani: 11 runs, 93 topics; the depth-100 pool holds 23,343 ")
    assert "round 1 judges 10% of the pool (2,334 documents) with a two-strata design" in out
    # a block per round; the first two plan the next one, the third is the last
    assert re.search(r"^round 1: 2,334 judged \(10\.0% of the pool\)$", out, re.M)
    assert re.search(r"^round 2: 4,668 judged \(20\.0% of the pool, 2,334 new\)$", out, re.M)
    assert re.search(r"^round 3: 7,002 judged \(30\.0% of the pool, 2,334 new\); the last", out,
                     re.M)
    assert len(re.findall(r"^  -> round \d judges 2,334 more in \d+ topics \(ranks 1-10: ", out,
                          re.M)) == 2
    first = out.split("\nround 1: ")[1].split("\n\n")[0]
    assert ("ht(AP): 11 of 11 flagged: 34 of 93 topics have 2 or fewer judged relevant "
            "documents in this draw; estimated bias 3.83-6.18 of its standard "
            "error") in " ".join(first.split())
    # one run's P@10 rests on ranks 4-10 sampled at a low rate: its estimate is skewed
    assert "  ht(P@10): 1 of 11 flagged: too skewed for a normal interval" in first
    assert "final, after 3 rounds: 7,002 judged (30.0% of the pool" in out
    # the table: a row per run, best true MAP first, three intervals each
    rows = [line for line in out.splitlines() if line.count("[") == 3]
    assert len(rows) == 11 and rows[0].startswith("dfr_inexpb2_c1 ")
    assert list(coverage(out)) == NAMES
    assert all(n == 11 for _, n in coverage(out).values())
    # the default seed's story on Vaswani (measured; see docs/usage.md "The demo")
    assert coverage(out) == {"ht(AP)": (1, 11), "ht(nDCG)": (11, 11), "ht(P@10)": (11, 11)}
    assert "ht(P@10) vs truth" in out and "11/11 unflagged cover it" in out
    assert out.count("none unflagged") == 2
    # still flagged: said plainly, with the topics to judge
    tail = out.split("still flagged after 3 rounds (30% of the pool judged):")[1]
    assert "! ht(AP):   11 of 11 flagged" in tail and "! ht(P@10)" not in tail
    assert "Do not trust the flagged intervals: here 12 of the 22 cover the true value." in tail
    assert "judge topics 10, 36, 39, 45, 5, 50, 59, 60 and 8 more further" in tail
    assert ("once one of its relevant documents is judged and 3 are judged while less than 50% "
            "of its pool is judged" in " ".join(tail.split()))
    assert sum(row.count("]!") for row in rows) == 22
    assert "xinfAP" not in out and "infNDCG" not in out
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"


def test_demo_on_cacm_tells_what_stays_flagged_after_3_rounds(tmp_path, capsys):
    assert main(["demo", "--plot", str(tmp_path / "d.png"), "--rounds", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CACM: 11 runs, 52 topics (12 more in the runs, which the qrels do not "
                          "name, are not evaluated);")
    assert coverage(out) == {"ht(AP)": (9, 11), "ht(nDCG)": (1, 11), "ht(P@10)": (10, 11)}
    flat = " ".join(out.split())
    assert ("5 of the 11 weak topics have 2 or fewer relevant documents in the whole pool (the "
            "complete judgments show it): no sample finds more, only judging the whole of their "
            "pools clears them, 1,015 more judgments") in flat


def test_demo_frame_leaves_out_topics_the_qrels_do_not_name():
    """CACM's qrels name 52 of the 64 topics its runs answer: the other 12 are not evaluated
    (trec_eval), so they are not in the demo's frame; taken as all non-relevant their truth
    was 0 while every estimator imputed them from the other topics."""
    import numpy as np

    from irsample.api import load

    collection, complete = load(*demo.bundled("cacm"))
    frame, _, budget, _ = demo.setup(collection, complete, 100, 0.1)
    assert collection.n_topics == 64 and complete.has_topic.sum() == 52
    assert set(np.unique(frame.topic)) == set(np.flatnonzero(complete.has_topic))
    assert len(frame) == 12_520 and budget == 1_252
    judged = frame.judgments()
    assert np.array_equal(judged.has_topic, complete.has_topic)


def test_demo_one_round(tmp_path, capsys):
    assert main(["demo", "--plot", str(tmp_path / "d.png"), "--rounds", "1", "--collection",
                 "vaswani"]) == 0
    out = capsys.readouterr().out
    assert "round 1: 2,334 judged (10.0% of the pool); the last round" in out
    assert not re.search("^round 2", out, re.M) and "-> round" not in out
    assert "still flagged after 1 round (10% of the pool judged):" in out
    assert "final, after 1 round: 2,334 judged" in out


def test_demo_complete_judgments_reproduce_the_truth(tmp_path, capsys):
    assert main(["demo", "--plot", str(tmp_path / "d.png"), "--fraction", "1", "--collection",
                 "vaswani"]) == 0
    out = capsys.readouterr().out
    assert "round 1 judges the whole pool (23,343 documents)" in out
    assert "round 1: 23,343 judged (100.0% of the pool); nothing flagged" in out
    assert not re.search("^round 2", out, re.M) and "!" not in out
    for name in NAMES:
        assert re.search(rf"{re.escape(name)} +vs truth: Kendall tau 1\.000, RMS error "
                         r"0\.0000; 11/11 intervals cover the true value, 11/11 unflagged", out)
    assert "nothing is flagged" in out


@pytest.mark.parametrize("argv, what", [(["--fraction", "0"], "--fraction"),
                                         (["--rounds", "0"], "--rounds")])
def test_demo_rejects_bad_arguments(argv, what, capsys):
    assert main(["demo", *argv]) == 1
    assert what in capsys.readouterr().err


def test_demo_budget_below_its_cells_names_the_fraction_that_suffices(tmp_path, capsys):
    """CACM's depth-3 pool (512 documents) at the default 10%: 51 judgments for 104 cells; the
    error names the --fraction that gives one judgment a cell, and that fraction runs."""
    plot = tmp_path / "d.png"
    assert main(["demo", "--depth", "3", "--plot", str(plot)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and not plot.exists()
    assert err == ("irsample: --fraction 0.1 gives each round 51 judgments, fewer than the 104 "
                   "(topic, stratum) cells of the depth-3 pool's two-strata design, each of "
                   "which needs one: give --fraction 0.21 or more\n")
    assert main(["demo", "--depth", "3", "--fraction", "0.21", "--rounds", "1",
                 "--plot", str(plot)]) == 0


def test_demo_refuses_qrels_naming_none_of_the_runs_topics(tmp_path, capsys):
    qrels = tmp_path / "other.qrels"
    qrels.write_text("999 0 doc1 1\n")
    _, runs = demo.bundled("cacm")
    plot = tmp_path / "d.png"
    assert main(["demo", "--qrels", str(qrels), *runs, "--plot", str(plot)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and not plot.exists()
    assert f"{qrels}: the qrels name none of the topics the runs rank documents for" in err


def test_merge_reasons_ranges_the_numbers_and_drops_topic_lists():
    few = "34 of 93 topics have 2 or fewer judged relevant documents in this draw"
    reasons = [f"{few} (10, 11 and 32 more); estimated bias 1.66 of its standard error",
               f"{few} (10, 11 and 32 more); estimated bias 2.19 of its standard error",
               "estimated bias 0.50 of its standard error"]
    assert merge_reasons(reasons) == f"estimated bias 0.50-2.19 of its standard error; {few}"


def test_demo_loop_stops_when_nothing_is_flagged():
    from irsample.api import load
    from irsample.design.rounds import judge_in_rounds
    from irsample.experiments.data import parse_one

    collection, complete = load(*demo.bundled("vaswani"))
    frame, design, budget, _ = demo.setup(collection, complete, 100, 1.0)
    history = judge_in_rounds(collection, frame, design, budget, 3, 2008,
                                   [parse_one(e) for e in NAMES])
    assert len(history) == 1 and not history[0].flagged.any() and history[0].plan is None


def test_plan_line_names_the_topics_judged_whole():
    """The plan of the next round names the topics it judges whole (the rule holds them weak
    until then: ``design.rounds.judged_whole_next``) and how many documents that takes."""
    from irsample.commands.demo_text import plan_line
    from irsample.design import Pool, SamplingFrame, uniform
    from irsample.design.rounds import allocation, first_round, judged_whole_next

    from .synthetic import pooled_collection

    collection, table = pooled_collection(7, n_topics=6, n_runs=4, relevant=(2, 5))
    frame = SamplingFrame.from_pool(Pool.from_runs(collection, depth=30), table)
    seen = 0
    for seed in range(20):
        state = first_round(frame, uniform(0.6), np.random.default_rng(seed))
        take = allocation(frame, state, 5)
        whole, rest = judged_whole_next(frame, state, take)
        line = " ".join(" ".join(plan_line(frame, state, take, 2)).split())
        assert line.startswith(f"-> round 2 judges {int(take.sum()):,} more in ")
        if not len(whole):
            assert "judged whole" not in line and "each half of the topics" in line
            continue
        seen += 1
        assert rest == int(take.reshape(-1, state.n_cells_per_topic)[whole].sum()) > 0
        ids = ", ".join(str(collection.topics[t]) for t in whole)
        assert (f"; topic{'s' if len(whole) > 1 else ''} {ids} judged whole, {rest} of the "
                "judgments (1 to 2 relevant documents judged with 50% or more of the pool "
                "judged: weak until all of it is); each half of the other topics") in line
    assert seen >= 5, seen
