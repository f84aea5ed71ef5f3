"""The TREC-8 path of issue 3 (shared data): a 10% ``2strata`` sample of the depth-100 pool of a
few pooled runs, judged from the official qrels (complete for that pool), merged as trec, strata
and prels. From the trec file ``ht(AP)`` refuses; assuming a uniform design (the old silent
guess) overestimates every run; from strata or prels ``ht(AP)`` stays in [0, 1] and near the
true AP of the official qrels. docs/usage.md gives the numbers of all 129 runs."""

from __future__ import annotations

import json

import pytest

from irsample.cli import main

pytestmark = pytest.mark.shared

RUNS = ("READWARE2", "INQ604", "ok8amxc", "CL99XT", "weaver1")


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _maps(capsys, *argv) -> dict[str, float]:
    rc, out, err = cli(capsys, "eval", *argv, "--format", "json")
    assert rc == 0, err
    return {run: values["all"] for run, values in json.loads(out).items()}


@pytest.fixture(scope="module")
def sample(shared, tmp_path_factory):
    base = shared / "data" / "trec8-adhoc"
    out = tmp_path_factory.mktemp("trec8_assume")
    runs = [base / "runs" / f"input.{r}.gz" for r in RUNS]
    rc = main(["sample", *map(str, runs), "--design", "2strata", "--budget", "1000", "--seed",
               "8", "-o", str(out / "s")])
    assert rc == 0
    grades = {}
    for line in (base / "qrels.trec8.adhoc").read_text().splitlines():
        q, _, d, r = line.split()
        grades[q, d] = int(r)
    rows = (out / "s" / "to_judge.tsv").read_text().splitlines()[1:]
    (out / "judged.qrels").write_text("".join(
        f"{q} 0 {d} {grades.get((q, d), 0)}\n" for q, d in (r.split("\t")[:2] for r in rows)))
    return base, out, runs


def test_trec8_trec_refuses_and_strata_prels_estimate(sample, capsys):
    base, out, runs = sample
    merged = {}
    for fmt in ("trec", "strata", "prels"):
        merged[fmt] = out / f"s.{fmt}"
        rc, _, err = cli(capsys, "merge", out / "s" / "design.json", out / "judged.qrels",
                         "--format", fmt, "-o", merged[fmt])
        assert rc == 0
        assert ("the trec format drops the inclusion probabilities" in err) == (fmt == "trec")
    rc, stdout, err = cli(capsys, "eval", merged["trec"], *runs, "-m", "ht(AP)", "-m", "infAP")
    assert rc == 1 and stdout == "" and "--format strata" in err and "--assume uniform" in err

    truth = {r: v["map"] for r, v in _maps(capsys, base / "qrels.trec8.adhoc", *runs,
                                           "-m", "map").items()}
    guessed = _maps(capsys, merged["trec"], *runs, "-m", "ht(AP)", "--assume", "uniform")
    assert all(v["assume"] == "uniform" for v in guessed.values())
    # the uniform guess weighs the top-ranked stratum's relevant documents ~3x too much
    assert all(guessed[r]["ht(AP)"] > truth[r] + 0.05 for r in truth)
    for fmt in ("strata", "prels"):
        est = _maps(capsys, merged[fmt], *runs, "-m", "ht(AP)", "--ci", "0.95")
        values = {r: v["ht(AP)"] for r, v in est.items()}
        assert all(0.0 <= v["value"] <= 1.0 for v in values.values())
        error = [abs(values[r]["value"] - truth[r]) for r in truth]
        assert sum(error) / len(error) < 0.05, (fmt, values, truth)
        assert "assume" not in est[RUNS[0]]
