"""``irsample plan --next-round``: judging in rounds from files on the bundled Vaswani collection.

Round 1 is drawn by ``irsample sample --design 2strata@600``, judged from the complete qrels,
and round 2 planned from the files; the union's probabilities are those
:func:`irsample.design.rounds.next_round` gives on the simulated frame for the same seeds, and
``merge`` + ``eval`` read them back. A complete judgment stops; bad input fails naming the
file and writes nothing."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from irsample.cli import main
from irsample.design import DesignRecord, Pool, SamplingFrame, parse_design
from irsample.design.rounds import allocation, fold_of, next_round, start
from irsample.design.rounds_files import draw_seed
from irsample.evaluation import evaluate_collection
from irsample.io import load_runs, read_qrels
from irsample.measures import parse
from irsample.model import Collection

VASWANI = Path(__file__).resolve().parents[1] / "irsample" / "data" / "vaswani"
RUNS = sorted(str(p) for p in (VASWANI / "runs").glob("*.run.gz"))
FIRST, SEED1, SEED2, BUDGET = "2strata@600", 7, 8, 1000


def quiet(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def grades() -> dict:
    with gzip.open(VASWANI / "qrels.gz", "rt") as fh:
        return {(q, d): int(r) for q, _, d, r in (line.split() for line in fh)}


def judge(out: Path, *lists: Path) -> int:
    """The assessor: the true grades (0 where the qrels list none) of the to-judge lists."""
    g = grades()
    rows = [r.split("\t") for t in lists for r in t.read_text().splitlines()[1:]]
    out.write_text("".join(f"{q} 0 {d} {g.get((q, d), 0)}\n" for q, d in rows))
    return len(rows)


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    """Round 1 drawn and judged, round 2 planned from the files (their folder and output)."""
    tmp = tmp_path_factory.mktemp("rounds")
    rc, _, err = quiet("sample", *RUNS, "--design", FIRST, "--seed", SEED1, "-o", tmp / "r1")
    assert rc == 0, err
    judge(tmp / "judged.qrels", tmp / "r1" / "to_judge.tsv")
    rc, out, err = quiet("plan", *RUNS, "--next-round", tmp / "r1" / "design.json", "--judged",
                         tmp / "judged.qrels", "--budget", BUDGET, "--seed", SEED2, "-o",
                         tmp / "r2")
    assert rc == 0, err
    judge(tmp / "all.qrels", tmp / "r1" / "to_judge.tsv", tmp / "r2" / "to_judge.tsv")
    return tmp, out


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """The same two rounds on the simulated frame (the pool with its complete grades)."""
    collection = Collection.build(load_runs(RUNS))
    pool = Pool.from_runs(collection, depth=100)
    g = grades()
    complete = tmp_path_factory.mktemp("frame") / "complete.qrels"
    complete.write_text("".join(f"{q} 0 {d} {g.get((q, d), 0)}\n"
                                for q, d in zip(pool.qids(), pool.docnos())))
    frame = SamplingFrame.from_pool(pool, read_qrels(complete))
    sample = parse_design(FIRST).select(frame, rng=SEED1)
    folds = fold_of([collection.topics[t] for t in frame.topic], SEED1)
    fold = np.array([folds.get(q, 0) for q in collection.topics])
    state = start(frame.topic, frame.best_rank, sample, fold, FIRST)
    return frame, state, next_round(frame, state, BUDGET - int(sample.judged.sum()),
                                    draw_seed(SEED2, 2))


def keys(frame, mask) -> list:
    return sorted(zip(np.asarray(frame_qids(frame))[mask], np.asarray(frame_docnos(frame))[mask]))


def frame_qids(frame):
    return [frame.collection.topics[t] for t in frame.topic]


def frame_docnos(frame):
    return [v.decode() for v in frame.collection.tdi_docno.take(frame.tdi).to_pylist()]


def test_round_two_is_the_simulated_round_and_says_why(rounds, simulated):
    tmp, out = rounds
    frame, first, second = simulated
    assert "r1/design.json: round 1 of 2strata@600, 600 of 23343 pool documents judged" in out
    assert "ht(AP): 11 of 11 run means flagged" in out
    # every rule that flags is counted, rule 5 too: the counts account for every flagged mean
    counts = re.search(r"ht\(AP\): 11 of 11 run means flagged \(too small or skewed a sample: "
                       r"(\d+), too many weak topics: (\d+), estimated bias: (\d+), outside "
                       r"\[0, 1\]: (\d+), blind topics left out: (\d+); a mean may have "
                       r"several\)", out)
    assert counts and sum(map(int, counts.groups())) >= 11
    assert "topics have none or fewer than 3 judged relevant documents expected" in out
    assert "ht(P@10): " in out and "round 2: 400 new documents" in out
    record = DesignRecord.read(tmp / "r2" / "design.json")
    assert record.design.first == FIRST and record.design.fold_seed == SEED1
    assert record.design.spent == (600, 400) and record.seed == SEED2
    # the same documents, with the simulated union's probabilities, row for row
    assert list(record.qid) == frame_qids(frame) and list(record.docno) == frame_docnos(frame)
    assert np.array_equal(record.selected, second.sample.judged)
    assert np.allclose(record.inclusion, second.sample.inclusion, rtol=0, atol=1e-15)
    # the to-judge list holds the new documents only, none judged in round 1
    new = [tuple(r.split("\t")) for r in
           (tmp / "r2" / "to_judge.tsv").read_text().splitlines()[1:]]
    assert len(new) == 400 and len(set(new)) == 400
    assert sorted(new) == keys(frame, second.sample.judged & ~first.sample.judged)


def test_merge_and_eval_read_the_union_probabilities(rounds, simulated):
    tmp, _ = rounds
    frame, _, second = simulated
    rc, _, err = quiet("merge", tmp / "r2" / "design.json", tmp / "all.qrels", "--format",
                       "strata", "-o", tmp / "s.qrels")
    assert rc == 0 and "1000 judged, 0 selected documents not judged yet" in err
    rc, _, err = quiet("merge", tmp / "r2" / "design.json", tmp / "all.qrels", "--format",
                       "prels", "-o", tmp / "s.prels")
    assert rc == 0, err
    # per cell (topic, stratum of the strata file): pi = judged / size, as the prels say
    cells: dict = {}
    for line in (tmp / "s.qrels").read_text().splitlines():
        q, _, d, s, r = line.split()
        n, size = cells.get((q, s), (0, 0))
        cells[q, s] = (n + (int(r) >= 0), size + 1)
    where = {}
    for line in (tmp / "s.qrels").read_text().splitlines():
        q, _, d, s, _ = line.split()
        where[q, d] = s
    prels = [line.split() for line in (tmp / "s.prels").read_text().splitlines()]
    # the whole pool, its 1,000 judged documents and the rest as -1
    assert len(prels) == len(where) and sum(int(r[2]) >= 0 for r in prels) == 1000
    for q, d, _, _, p in prels:
        n, size = cells[q, where[q, d]]
        assert float(p) == pytest.approx(n / size, abs=1e-15)
    # eval on the merged strata = the estimators on the simulated union
    rc, text, err = quiet("eval", "-m", "ht(AP)", "-m", "ht(P@10)", tmp / "s.qrels", *RUNS)
    assert rc == 0, err
    got = {}
    run = None
    for line in text.splitlines():
        name, _, value = (f.strip() for f in line.split("\t"))
        if name == "runid":
            run = value
        else:
            got[run, name] = float(value)
    measures = [parse(m)[0] for m in ("ht(AP)", "ht(P@10)")]
    ev = evaluate_collection(frame.collection, frame.judgments(second.sample), measures)
    for r, name in enumerate(frame.collection.run_names):
        for j, m in enumerate(("ht(AP)", "ht(P@10)")):
            assert got[name, m] == pytest.approx(ev.summary[r, j], abs=5e-5)


def test_allocation_reads_judged_grades_only(simulated):
    frame, first, _ = simulated
    rng = np.random.default_rng(1)
    scrambled = SamplingFrame(frame.collection, frame.topic, frame.tdi,
                              np.where(first.sample.judged, frame.rel,
                                       rng.integers(0, 3, len(frame.rel))),
                              frame.best_rank, frame.runs, frame.source, frame.depth)
    assert np.array_equal(allocation(frame, first, 400), allocation(scrambled, first, 400))


def test_allocation_counts_relevant_from_the_level(simulated):
    """With ``-l 2`` (a round's ``rel_level``) a cell's judged relevant documents are those
    graded 2 or more, as the estimates read them: grade-1 documents count at level 1 only."""
    from dataclasses import replace

    from irsample.design.rounds import cell_counts

    frame, first, _ = simulated
    graded = np.where(frame.rel > 0, 1 + (np.arange(len(frame.rel)) % 2), 0)  # grades 1 and 2
    frame2 = SamplingFrame(frame.collection, frame.topic, frame.tdi, graded, frame.best_rank,
                           frame.runs, frame.source, frame.depth)
    at1, at2 = first, replace(first, rel_level=2)
    judged = first.sample.judged & (first.cell >= 0)
    assert cell_counts(frame2, at1)[2].sum() == (judged & (graded >= 1)).sum()
    assert cell_counts(frame2, at2)[2].sum() == (judged & (graded >= 2)).sum() > 0
    assert cell_counts(frame2, at2)[2].sum() < cell_counts(frame2, at1)[2].sum()
    assert np.array_equal(allocation(frame2, at1, 400), allocation(frame, first, 400))
    assert not np.array_equal(allocation(frame2, at2, 400), allocation(frame2, at1, 400))


def test_the_level_reaches_the_statuses_and_is_refused_by_the_planner(rounds, tmp_path):
    """``plan --next-round -l 2`` reads relevance from grade 2 (Vaswani's grades are 0 and 1:
    nothing is relevant there, and every ht(AP) mean is flagged); the planner refuses -l."""
    tmp, out = rounds
    rc, out2, err = quiet("plan", *RUNS, "--next-round", tmp / "r1" / "design.json",
                          "--judged", tmp / "judged.qrels", "--budget", BUDGET, "--seed", SEED2,
                          "-l", "2", "-o", tmp_path / "r2")
    assert rc == 0, err
    assert "judged (0 relevant at level 2)" in out2 and "judged (0 relevant" not in out
    def ap_line(text):
        return next(line for line in text.splitlines() if line.startswith("ht(AP): "))

    # nothing relevant at level 2: every AP estimate is 0 with no spread, and flagged
    assert ap_line(out2).startswith("ht(AP): 11 of 11 run means flagged")
    assert ap_line(out2).endswith("half-widths 0.0000 to 0.0000")
    assert not ap_line(out).endswith("half-widths 0.0000 to 0.0000")
    rc, _, err = quiet("plan", *RUNS, "--budget", "500", "-l", "2", "-o", tmp_path / "p.json")
    assert rc != 0 and "-l LEVEL is for judging in rounds" in err


def test_a_third_round_reuses_the_folds(rounds, simulated, tmp_path):
    tmp, _ = rounds
    frame, _, second = simulated
    rc, out, err = quiet("plan", *RUNS, "--next-round", tmp / "r2" / "design.json", "--judged",
                         tmp / "all.qrels", "--batch", 300, "--measure", "ht(AP)", "--seed", 9,
                         "-o", tmp_path / "r3")
    assert rc == 0, err
    assert "round 2 of 2strata@600, 1000 of 23343" in out and "round 3: 300 new" in out
    assert "ht(nDCG)" not in out
    r2 = DesignRecord.read(tmp / "r2" / "design.json")
    r3 = DesignRecord.read(tmp_path / "r3" / "design.json")
    assert r3.design.fold_seed == SEED1 and r3.design.spent == (600, 400, 300)
    assert np.all(r3.selected[r2.selected]) and r3.selected.sum() == 1300
    assert len(r3.design.before) == 1000
    third = next_round(frame, second, 300, draw_seed(9, 3))  # cells renumbered, same order
    assert np.array_equal(r3.selected, third.sample.judged)
    assert np.allclose(r3.inclusion, third.sample.inclusion, rtol=0, atol=1e-15)
    # every cell (topic, recorded stratum) keeps one probability: its share judged
    cells = {}
    for q, s, p, sel in zip(r3.qid, r3.stratum, r3.inclusion, r3.selected):
        n, size, pis = cells.get((q, s), (0, 0, set()))
        cells[q, s] = (n + sel, size + 1, pis | {p})
    assert all(len(pis) == 1 and pis.pop() == pytest.approx(n / size)
               for n, size, pis in cells.values())
    rc, _, err = quiet("sample", *RUNS, "--design", tmp_path / "r3" / "design.json", "-o",
                       tmp_path / "again")
    assert rc == 1 and "union of judged rounds" in err


def test_the_planner_keeps_the_union_cells_as_boundaries(rounds, tmp_path):
    """`plan --design` after rounds: the union's cells (round-1 stratum x best-rank band,
    labels ``11-100/31-100``) stay strata boundaries, 31 as well as 11; reading only the
    stratum's first rank kept 11 and dropped 31, and a planned stratum 21-40 then mixed judged
    documents of two cells judged at different rates."""
    tmp, _ = rounds
    rc, _, err = quiet("plan", *RUNS, "--budget", 3000, "--design", tmp / "r2" / "design.json",
                       "--judged", tmp / "all.qrels", "-o", tmp_path / "plan.json")
    assert rc == 0, err
    plan = json.loads((tmp_path / "plan.json").read_text())["plan"]
    assert {1, 11, 31} <= set(plan["edges"])


def test_a_systematic_round_one_is_refused(tmp_path):
    """Equal probabilities within each stratum, but no simple random sample: the union of the
    rounds would not be one either, so `--next-round` refuses it (it drew round 2 before)."""
    rc, _, err = quiet("sample", *RUNS, "--design", "systematic(1-10:1,11-100:0.2)@600",
                       "--seed", 3, "-o", tmp_path / "r1")
    assert rc == 0, err
    judge(tmp_path / "judged.qrels", tmp_path / "r1" / "to_judge.tsv")
    rc, _, err = quiet("plan", *RUNS, "--next-round", tmp_path / "r1" / "design.json",
                       "--judged", tmp_path / "judged.qrels", "--budget", 1000, "-o",
                       tmp_path / "r2")
    assert rc == 1 and "is a systematic sample" in err and "r1/design.json" in err
    assert not (tmp_path / "r2").exists()


def test_complete_judgments_stop_and_write_nothing(tmp_path):
    rc, _, err = quiet("sample", *RUNS, "--design", "uniform(1)", "--seed", 3, "-o",
                       tmp_path / "r1")
    assert rc == 0, err
    judge(tmp_path / "judged.qrels", tmp_path / "r1" / "to_judge.tsv")
    rc, out, err = quiet("plan", *RUNS, "--next-round", tmp_path / "r1" / "design.json",
                         "--judged", tmp_path / "judged.qrels", "--budget", 30000,
                         "--target-halfwidth", 0.01, "-o", tmp_path / "r2")
    assert rc == 0, err
    assert "ht(AP): 0 of 11 run means flagged" in out
    assert out.endswith("nothing flagged, every half-width <= 0.01: stop\n")
    assert not (tmp_path / "r2").exists()


@pytest.fixture(scope="module")
def importance_round(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("importance")
    rc, _, err = quiet("sample", *RUNS, "--design", "importance(0.03)", "--seed", 3, "-o",
                       tmp / "r1")
    assert rc == 0, err
    judge(tmp / "judged.qrels", tmp / "r1" / "to_judge.tsv")
    return tmp


def tampered_union(tmp: Path, out: Path) -> Path:
    """Round 2's design file with one row's pi changed."""
    text = (tmp / "r2" / "design.json").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(text) if line.startswith('  ["1", '))
    row = json.loads(text[at].rstrip(",\n"))
    row[4] = 0.5
    text[at] = "  " + json.dumps(row) + (",\n" if text[at].rstrip().endswith(",") else "\n")
    out.write_text("".join(text))
    return out


@pytest.mark.parametrize("case, message", [
    ("missing", "judged.qrels: 5 documents selected by"),
    ("importance", "design.json: rounds need a round 1 whose strata are simple random samples"),
    ("importance", "draw round 1 with strata of equal rates (`irsample sample --design 2strata`"),
    ("tampered", "tampered.json: 1 rows' inclusion probabilities are not their cell's share"),
    ("planner", "the design-based estimators (ht(M), ppi(M)) are judged in rounds"),
    ("ppi", "ppi(M) needs automatic labels"),
    ("depth", "--depth does not apply"),
])
def test_bad_input_fails_naming_the_file(rounds, importance_round, tmp_path, case, message):
    tmp, _ = rounds
    design, judged = tmp / "r1" / "design.json", tmp / "judged.qrels"
    extra = []
    if case == "missing":
        judged = tmp_path / "judged.qrels"
        judged.write_text("".join((tmp / "judged.qrels").read_text().splitlines(True)[:-5]))
    elif case == "importance":
        design = importance_round / "r1" / "design.json"
        judged = importance_round / "judged.qrels"
    elif case == "tampered":
        design, judged = tampered_union(tmp, tmp_path / "tampered.json"), tmp / "all.qrels"
    elif case == "ppi":
        extra = ["--measure", "ppi(AP)"]
    elif case == "depth":
        extra = ["--depth", 50]
    args = ["--next-round", design, "--judged", judged, "--budget", 3000]
    if case == "planner":
        args = ["--measure", "ht(AP)", "--budget", 3000]
    rc, out, err = quiet("plan", *RUNS, *args, *extra, "-o", tmp_path / "next")
    assert rc == 1 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "next").exists() and out == ""


def test_the_assessment_app_judges_a_finished_round_in_rounds(tmp_path):
    """``irsample assess next-round`` after a finished round 1 of rank strata: the next round
    is judged in rounds (the union's probabilities judged / size per cell, not 1 for the
    documents judged before), and a second round from that union too."""
    from irsample.assess.session import Session
    from irsample.assess.store import Store

    from .test_assess_helpers import add_assessor, sample, tiny_data

    data = tiny_data(tmp_path / "data")
    design = sample(data["runs"], tmp_path / "r1", design="1-5:0.6,6-20:0.3")
    db = tmp_path / "r1" / "c.db"
    add_assessor(db, "alice")
    Session.open(tmp_path / "r1", data["docs"], data["topics"], db).store.close()
    for number in (1, 2, 3):
        store = Store(db)
        try:  # alice judges every document of the round
            person = next(k for k, v in store.assessors().items() if v == "alice")
            for item in store.items():
                store.judge(person, item.id, data["qrels"][(item.topic, item.docno)])
        finally:
            store.close()
        if number == 3:
            break
        rc, out, err = quiet("assess", "next-round", "--db", db, "--runs", *data["runs"],
                             "--batch", 8)
        assert rc == 0 and "judging in rounds for ht(M): 8 more judgments" in out, err
        record = DesignRecord.read(f"{db}.round{number + 1}/design.json")
        assert record.design.kind == "rounds" and len(record.design.spent) == number + 1
        cells: dict = {}
        for q, s, p, sel in zip(record.qid, record.stratum, record.inclusion, record.selected):
            n, size, pis = cells.get((q, s), (0, 0, set()))
            cells[q, s] = (n + sel, size + 1, pis | {p})
        assert all(len(pis) == 1 and pis.pop() == pytest.approx(n / size)
                   for n, size, pis in cells.values())
        assert record.selected.sum() == sum(record.design.spent)
    assert design.exists()  # round 1's design stays where it was


def judged_round_one(tmp_path):
    """The assessment app's round 1 of rank strata on the tiny collection, every document
    judged by alice from the qrels: (the data, the database)."""
    from irsample.assess.session import Session
    from irsample.assess.store import Store

    from .test_assess_helpers import add_assessor, sample, tiny_data

    data = tiny_data(tmp_path / "data")
    sample(data["runs"], tmp_path / "r1", design="1-5:0.6,6-20:0.3")
    db = tmp_path / "r1" / "c.db"
    add_assessor(db, "alice")
    Session.open(tmp_path / "r1", data["docs"], data["topics"], db).store.close()
    store = Store(db)
    try:
        person = next(k for k, v in store.assessors().items() if v == "alice")
        for item in store.items():
            store.judge(person, item.id, data["qrels"][(item.topic, item.docno)])
    finally:
        store.close()
    return data, db


def test_the_assessment_apps_round_reads_the_sessions_level(tmp_path):
    """The app's next round (``assess.rounds.plan_round``: the dashboard's button and ``assess
    next-round -l``) counts relevant documents from the session's level, as its estimates do."""
    from irsample.assess.export import export
    from irsample.assess.rounds import plan_round
    from irsample.assess.store import Store

    data, db = judged_round_one(tmp_path)
    store = Store(db)
    try:
        rounds, qrels = store.rounds(), export(store.db).qrels
    finally:
        store.close()
    for level in (1, 2):
        planned = plan_round(rounds, qrels, data["runs"], batch=8, rel_level=level)
        assert planned.rounds.state.rel_level == level


def test_the_plan_names_the_topics_it_judges_whole(tmp_path):
    """Round 1 judging 55% of every topic's pool: the topics with 1-2 relevant documents judged
    (which the status lines name as weak until judged whole) get the rest of their pools in
    round 2, the plan names them and their share of the round, and their documents enter the
    union at pi = 1."""
    rc, _, err = quiet("sample", *RUNS, "--design", "uniform(0.55)", "--seed", SEED1, "-o",
                       tmp_path / "r1")
    assert rc == 0, err
    judge(tmp_path / "judged.qrels", tmp_path / "r1" / "to_judge.tsv")
    rc, out, err = quiet("plan", *RUNS, "--next-round", tmp_path / "r1" / "design.json",
                         "--judged", tmp_path / "judged.qrels", "--batch", 2000, "--seed",
                         SEED2, "-o", tmp_path / "r2")
    assert rc == 0, err
    found = re.search(r"; topics ([\d, ]+) judged whole, (\d+) of the judgments \(1 to 2 "
                      r"relevant documents judged with 50% or more of the pool judged: weak "
                      r"until all of it is\)\n", out)
    assert found, out
    whole, rest = found[1].split(", "), int(found[2])
    # the topics the rule holds weak until judged whole, as the status lines name them
    weak = re.search(r"\d+ of them \(([^)]*)\) with 1 to 2 judged, judged 50% or more but not "
                     r"whole", out)[1]
    assert weak.startswith(", ".join(whole[:8])) and weak.endswith(f"{len(whole) - 8} more")
    record = DesignRecord.read(tmp_path / "r2" / "design.json")
    rows = np.isin(record.qid, whole)
    assert record.selected[rows].all() and np.all(record.inclusion[rows] == 1.0)
    new = [r.split("\t")[0] for r in
           (tmp_path / "r2" / "to_judge.tsv").read_text().splitlines()[1:]]
    assert sum(q in whole for q in new) == rest > 0 and len(new) == 2000


def test_the_plan_judges_the_top_ranks_whole_where_a_p10_mean_is_outside(rounds, simulated,
                                                                         monkeypatch):
    """Where a P@10 mean is estimated outside [0, 1] (``design.rounds.outside_bands``, made to
    say so here: Vaswani's round 1 has no such mean) and the open documents of best ranks 1-10
    fit in the round, the plan judges them whole in every topic, says so with their count,
    and they enter the union at pi = 1; the rest of the round goes to the other cells."""
    from irsample.design.rounds import band_of

    frame, first, _ = simulated
    top = (band_of(frame.best_rank) == 0) & ~first.sample.judged
    size = int(top.sum()) + 200
    out, record = plan_with_the_band_asked(rounds, monkeypatch, "top", "--batch", size)
    assert (f"; best ranks 1-10 judged whole in every topic, {int(top.sum())} of the "
            "judgments (a run mean of a measure with that cut-off estimated outside [0, 1]"
            in out), out
    rows = band_of(frame.best_rank) == 0
    assert record.selected[rows].all() and np.all(record.inclusion[rows] == 1.0)
    assert record.design.spent == (600, size)


def test_the_assessment_app_judges_the_top_ranks_whole_where_a_p10_mean_is_outside(
        tmp_path, monkeypatch):
    """``irsample assess next-round`` where a P@10 mean is estimated outside [0, 1]
    (``design.rounds.outside_bands``, made to say so): the round judges every open document of
    best ranks 1-10 (pi = 1 in the union), says so, and spends the rest of the batch on the
    other cells."""
    import irsample.design.rounds as rounds_module

    data, db = judged_round_one(tmp_path)
    round1 = DesignRecord.read(tmp_path / "r1" / "design.json")
    top = (round1.best_rank <= 10) & ~round1.selected
    monkeypatch.setattr(rounds_module, "outside_bands", lambda ev: 1)
    batch = int(top.sum()) + 3
    rc, out, err = quiet("assess", "next-round", "--db", db, "--runs", *data["runs"],
                         "--batch", batch)
    assert rc == 0, err
    assert f"best ranks 1-10 judged whole in every topic, {int(top.sum())} of the" in out, out
    record = DesignRecord.read(f"{db}.round2/design.json")
    band = record.best_rank <= 10
    assert band.any() and record.selected[band].all() and np.all(record.inclusion[band] == 1)
    assert record.design.spent[-1] == batch


def test_the_plan_says_when_the_top_ranks_do_not_fit(rounds, simulated, monkeypatch):
    """Asked for the top band (made to be, as above) with a round too small for its open
    documents, the plan is the round without it (the simulated round 2, row for row) and says
    how many documents a round would need to hold."""
    from irsample.design.rounds import band_of

    frame, first, second = simulated
    top = (band_of(frame.best_rank) == 0) & ~first.sample.judged
    out, record = plan_with_the_band_asked(rounds, monkeypatch, "short", "--budget", BUDGET)
    assert (f"; best ranks 1-10 not judged whole: their {int(top.sum())} open documents do "
            "not fit in this round" in out), out
    assert np.array_equal(record.selected, second.sample.judged)


def plan_with_the_band_asked(rounds, monkeypatch, folder: str, *size):
    """``plan --next-round`` after the fixture's round 1 with ``size`` (``--batch B`` or
    ``--budget N``) into ``folder``, ``design.rounds.outside_bands`` made to ask for the first
    band (Vaswani's round 1 has no P@10 mean outside [0, 1]): its output and design record."""
    import irsample.design.rounds as rounds_module

    tmp, _ = rounds
    monkeypatch.setattr(rounds_module, "outside_bands", lambda ev: 1)
    rc, out, err = quiet("plan", *RUNS, "--next-round", tmp / "r1" / "design.json", "--judged",
                         tmp / "judged.qrels", *size, "--seed", SEED2, "-o", tmp / folder)
    assert rc == 0, err
    return out, DesignRecord.read(tmp / folder / "design.json")
