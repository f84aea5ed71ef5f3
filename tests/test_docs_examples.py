"""Every command line of README.md and docs/*.md is executed, not just read.

A command line is a line of a code block (fenced, or indented four spaces) that starts with
``irsample ``; the blocks' lines that start with ``pip install`` are README's set-up, run by
.ci/run's readme_install, and a ``pip install ... && irsample demo`` line runs its ``irsample``
part here. Synopses in square brackets (``[--ci 0.95]``, ``RUNS...``) are not commands and are
only counted as such. Each code block runs in a fresh folder holding what its commands name,
made from the bundled Vaswani collection (:func:`workspace`): ``runs/`` (the 11 runs),
``qrels.txt`` (complete), ``sample.qrels`` (a 20% uniform sample of the depth-100 pool of four
runs, the sample of usage.md's compare table), ``llm.labels``, ``pooled.txt`` and
``run-pooled-flag.txt``, ``runs_table.adhoc``, ``irsample/data``, and an ``IR_DATASETS_HOME``
holding Vaswani's qrels (``irds:vaswani``). Between the commands an
assessor is simulated: before a command reads ``judged.qrels`` it is written from the
``to_judge.tsv`` files drawn so far, graded by the complete qrels. Commands that need
``../shared`` (TREC-8, the Vaswani texts) run under the ``shared`` marker; the few that cannot
run in a test are listed in :data:`NOT_RUN` with the reason.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .docs_fixtures import VASWANI, irds_home, make_sample_qrels

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: the installed console script (``python -m irsample`` in the work folder would import its
#: ``irsample/data`` link as the package)
SCRIPT = Path(sys.executable).parent / "irsample"
COMPARE_RUNS = ["bm25_k1.2_b0.75", "dfr_inexpb2_c1", "ql_dir_mu2000", "tf_raw"]

#: command lines that are not executed, by their start, with the reason
NOT_RUN = {
    "irsample assess serve": "serves the judging app until stopped (tests/test_assess_*.py "
                             "start it and judge through it)",
    "irsample assess export": "exports judgments made in the browser; the simulated assessor "
                              "writes round1/judged.qrels instead",
}
#: a command line needing ../shared, by a word in it
SHARED_WORDS = ("../shared", "simulate xinfap-terabyte", "simulate infap-random")


def code_blocks(path: Path) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each code block of a Markdown file."""
    blocks, current, fence = [], None, False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip().startswith("```"):
            fence = not fence
            current = [] if fence else None
            if fence:
                blocks.append((number + 1, current))
            continue
        if fence:
            current.append(line)
        elif line.startswith("    ") and line.strip():
            if not blocks or blocks[-1][1] is not None and blocks[-1][0] < 0:
                pass
            if current is None or not isinstance(current, list):
                current = []
                blocks.append((number, current))
            current.append(line[4:])
        else:
            current = None
    return blocks


def command_lines(lines: list[str]) -> list[str]:
    """The block's command lines (continuations joined, ``# comments`` dropped)."""
    out, joined = [], ""
    for line in lines:
        joined += line.rstrip()
        if joined.endswith("\\"):
            joined = joined[:-1] + " "
            continue
        text, joined = joined.strip(), ""
        text = re.sub(r"\s+#.*$", "", text)
        if text.startswith("pip install") and "&& irsample " in text:
            text = "irsample " + text.split("&& irsample ", 1)[1]
        if text.startswith("irsample "):
            out.append(text)
    return out


def is_synopsis(command: str) -> bool:
    return bool(re.search(r"\[-|\.\.\.|RUNS|\w\|\w", command))


def collect():
    """pytest params: one per document, its blocks' commands in order (a document's blocks
    share a folder: assess.md's walk-through spans several), marked shared where needed."""
    params, total = [], 0
    for path in DOCS:
        blocks = []
        for _, lines in code_blocks(path):
            total += len(command_lines(lines))
            commands = [c for c in command_lines(lines) if not is_synopsis(c)]
            if commands:
                blocks.append(commands)
        for shared in (False, True):
            chosen = [b for b in blocks
                      if any(w in c for c in b for w in SHARED_WORDS) == shared]
            if chosen:
                params.append(pytest.param(chosen, id=f"{path.name}" + ("-shared" * shared),
                                           marks=[pytest.mark.shared] if shared else []))
    return params, total


PARAMS, TOTAL = collect()


def _grades() -> dict:
    grades = {}
    with gzip.open(VASWANI / "qrels.gz", "rt") as fh:
        for line in fh:
            q, _, d, r = line.split()
            grades[q, d] = int(r)
    return grades


def workspace(folder: Path, shared: Path | None) -> Path:
    """The files the docs' commands name (module docstring)."""
    runs = folder / "runs"
    runs.mkdir(parents=True)
    names = sorted(p.name.removesuffix(".run.gz") for p in (VASWANI / "runs").glob("*.run.gz"))
    for name in names:
        shutil.copy(VASWANI / "runs" / f"{name}.run.gz", runs / f"{name}.run.gz")
    (folder / "irsample").mkdir()
    (folder / "irsample" / "data").symlink_to(VASWANI.parent)
    with gzip.open(VASWANI / "qrels.gz", "rb") as fh:
        (folder / "qrels.txt").write_bytes(fh.read())
    sample = make_sample_qrels(folder / "sample.qrels",
                               [runs / f"{n}.run.gz" for n in COMPARE_RUNS])
    grades = _grades()
    labels = []
    for line in sample.read_text().splitlines():
        q, _, d, _ = line.split()
        labels.append(f"{q} Q0 {d} {0.8 if grades.get((q, d), 0) > 0 else 0.1}\n")
    (folder / "llm.labels").write_text("".join(labels))
    flags = "".join(f"{n} judged\n" for n in names)
    (folder / "pooled.txt").write_text(flags)
    (folder / "run-pooled-flag.txt").write_text(flags)
    (folder / "runs_table.adhoc").write_text(
        "".join(f"{n}:{n.split('_')[0]}:x\n" for n in names))
    if shared is not None:
        (folder / ".." / "shared").resolve().parent.mkdir(parents=True, exist_ok=True)
    return folder


def judge(folder: Path, command: str, before: set) -> None:
    """The simulated assessor: write the judged.qrels the command reads, judging the documents
    of the to_judge.tsv files drawn in the current block (else all drawn so far)."""
    for word in command.split():
        if word.endswith("judged.qrels") and "export" not in command:
            grades = _grades()
            lines = []
            drawn = sorted(folder.glob("**/to_judge.tsv"))
            for tsv in [t for t in drawn if t not in before] or drawn:
                for row in tsv.read_text().splitlines()[1:]:
                    q, d = row.split("\t")[:2]
                    lines.append(f"{q} 0 {d} {grades.get((q, d), 0)}\n")
            (folder / word).write_text("".join(dict.fromkeys(lines)))


def serve_and_judge(folder: Path, command: str) -> None:
    """What ``assess serve`` and its assessors did before ``assess next-round`` reads the
    database (serve is not run here, see :data:`NOT_RUN`): the session is opened on the design
    with stand-in texts of the runs' documents and of the topics, and alice judges every
    document by the complete qrels."""
    if "assess next-round" not in command:
        return
    from irsample.assess.session import Session
    from irsample.assess.store import Store

    words = command.split()
    db = folder / words[words.index("--db") + 1]
    store = Store(db)
    try:
        if store.rounds():
            return
    finally:
        store.close()
    rows = [r.split("\t")[:2] for r in
            (db.parent / "to_judge.tsv").read_text().splitlines()[1:]]
    docnos = set()  # every document of the runs: the next round draws from them
    for run in (VASWANI / "runs").glob("*.run.gz"):
        with gzip.open(run, "rt") as fh:
            docnos.update(line.split()[2] for line in fh)
    (folder / "docs.jsonl").write_text("".join(
        json.dumps({"docno": d, "text": f"document {d}"}) + "\n" for d in sorted(docnos)))
    (folder / "topics.tsv").write_text("qid\ttitle\n" + "".join(
        f"{q}\ttopic {q}\n" for q in sorted({q for q, _ in rows})))
    session = Session.open(db.parent, folder / "docs.jsonl", folder / "topics.tsv", db)
    try:
        grades, alice = _grades(), session.store.assessors()
        person = next(k for k, v in alice.items() if v == "alice")
        for item in session.store.items():
            session.store.judge(person, item.id, grades.get((item.topic, item.docno), 0))
    finally:
        session.store.close()


def test_count_of_command_lines():
    """The number this test runs (the closing note of issue 27 asks for it)."""
    run = sum(len(b) for p in PARAMS for b in p.values[0])
    skipped = sum(1 for p in PARAMS for b in p.values[0] for c in b
                  if c.startswith(tuple(NOT_RUN)))
    print(f"\n{TOTAL} command lines in the docs: {run - skipped} executed, {skipped} not run "
          f"({', '.join(NOT_RUN)}), {TOTAL - run} synopses")
    assert run - skipped >= 25


@pytest.mark.parametrize("blocks", PARAMS)
def test_docs_commands_run(blocks, tmp_path, request):
    shared = None
    if request.node.get_closest_marker("shared"):
        shared = request.getfixturevalue("shared")
    folder = workspace(tmp_path / "work", shared)
    if shared is not None:  # ../shared next to the folder the commands run in
        (tmp_path / "shared").symlink_to(shared)
    env = dict(os.environ, IR_DATASETS_HOME=str(irds_home(tmp_path / "irds")))
    for commands in blocks:
        before = set(folder.glob("**/to_judge.tsv"))
        for command in commands:
            if command.startswith(tuple(NOT_RUN)):
                continue
            judge(folder, command, before)
            serve_and_judge(folder, command)
            result = subprocess.run(["bash", "-c", command.replace("irsample ", f"{SCRIPT} ", 1)],
                                    cwd=folder, capture_output=True, text=True, timeout=1800,
                                    env=env)
            assert result.returncode == 0, f"{command}\n{result.stderr[-2000:]}"
    if any("--format markdown" in c for b in blocks for c in b):  # the table of usage.md
        assert (folder / "table.md").read_text() in (ROOT / "docs" / "usage.md").read_text()
