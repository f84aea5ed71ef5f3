#!/usr/bin/env python3
"""Build the bundled CACM example runs in ``irsample/data/cacm/``.

Usage (from the repository root)::

    python scripts/make_cacm_runs.py [--data ../shared/data/cacm] [--depth 1000]

Input (read-only): ``cacm-docs.tar.gz`` (3,204 documents, one ``CACM-NNNN.html`` each),
``topics.cacm.txt`` (64 topics, ``<DOC><DOCNO> n </DOCNO> text </DOC>``) and
``qrels.cacm.txt`` (796 relevance judgments, relevant only, 52 topics).

Output, exactly as ``scripts/make_vaswani_runs.py`` does for Vaswani (same text processing,
same eleven ranking models with the same parameters, same ordering, rounding and gzip
settings; the functions are imported from that script, so the two collections' runs are made
by one implementation): ``runs/<tag>.run.gz``, ``qrels.gz`` (the qrels byte-for-byte) and
``README.md`` (provenance, models and the MAP of each run).

Document text: the ``<pre>`` body up to the line of the record identifier (``CA581203 JB ...``):
title, journal date, authors, and the abstract and keywords where the record has them. The
citation lists after that line (numbers only) are left out.
"""

from __future__ import annotations

import html
import importlib.util
import re
import shutil
import sys
import tarfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "irsample" / "data" / "cacm"
DEFAULT_DATA = REPO.parent / "shared" / "data" / "cacm"


def _vaswani():
    """The Vaswani script as a module (text processing, index, models, run writing)."""
    spec = importlib.util.spec_from_file_location(
        "make_vaswani_runs", Path(__file__).with_name("make_vaswani_runs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


V = _vaswani()

_RECORD_ID = re.compile(r"^CA\d{6}\s", re.M)
_TAG = re.compile(r"<[^>]+>")
_TOPIC = re.compile(r"<DOC>\s*<DOCNO>\s*(.*?)\s*</DOCNO>(.*?)</DOC>", re.S)


def document_text(page: str) -> str:
    """The indexed text of one CACM record (module docstring)."""
    text = html.unescape(_TAG.sub(" ", page))
    cut = _RECORD_ID.search(text)
    return text[: cut.start()] if cut else text


def read_docs(path: Path) -> tuple[list[str], list[list[str]]]:
    docnos, toks = [], []
    with tarfile.open(path, "r:gz") as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.isfile() or not member.name.endswith(".html"):
                continue
            number = int(Path(member.name).stem.split("-")[1])  # CACM-0001.html
            docno = f"CACM-{number}"  # as the qrels name it
            page = tar.extractfile(member).read().decode("utf-8", errors="replace")
            docnos.append(docno)
            toks.append(V.analyze(document_text(page)))
    return docnos, toks


def read_topics(path: Path) -> tuple[list[str], list[list[str]]]:
    qids, toks = [], []
    for m in _TOPIC.finditer(path.read_text(encoding="utf-8", errors="replace")):
        qids.append(m.group(1))
        toks.append(V.analyze(m.group(2)))
    return qids, toks


README = """\
# CACM example data

Bundled example data for `irsample`: the relevance judgments of the CACM test collection and
{n_runs} runs produced by classic ranking models (the same models and parameters as the
bundled Vaswani runs).

## Collection

CACM: titles, authors and abstracts of the Communications of the ACM, 1958-1979, with the
queries and relevance judgments of Fox (1983), as distributed publicly for research in the
SMART / Glasgow IR test collections (<http://ir.dcs.gla.ac.uk/resources/test_collections/cacm/>):

- documents: {n_docs:,}
- topics: {n_topics} ({n_judged} with relevant documents; the others have no qrels and are not
  evaluated)
- relevance judgments: {n_qrels:,} (relevant only, binary)

Licence note: like the NPL (Vaswani) collection, CACM is distributed publicly for research
purposes (University of Glasgow IR group test collections page). Only the judgments
(`qrels.gz`) and the derived runs are included here, not the document text.

## Files

- `qrels.gz` -- the collection's qrels (`qid Q0 docno 1`), gzip-compressed, unchanged.
- `runs/<tag>.run.gz` -- TREC runs, `qid Q0 docno rank score tag`, the top {depth} documents
  per topic, scores with 6 decimals, ordered by score descending with ties broken by docno
  descending (trec_eval's order); gzip with mtime 0, so rerunning the script is byte-identical.
  Only documents containing at least one query term are retrieved, so a topic may have fewer
  than {depth}.

## How the runs were made

    python scripts/make_cacm_runs.py --data ../shared/data/cacm

run from the repository root. Text processing and models: those of
`scripts/make_vaswani_runs.py` (imported from it). Document text: the record's title, date,
authors and abstract (the text before the `CA......` record line; the citation lists after it
are left out). The index has {n_terms:,} terms, average document length {avgdl:.1f} indexed
tokens.

## Runs and MAP

MAP computed by the script: per topic with relevant documents, the sum of the precision at the
rank of every relevant retrieved document divided by the number of relevant documents; mean over
the {n_judged} judged topics.

| run | model and parameters | MAP |
|---|---|---:|
{table}
"""


def main(argv=None) -> int:
    args = V.arguments(argv, __doc__, DEFAULT_DATA, OUT)
    t0 = time.perf_counter()

    docnos, dtoks = read_docs(args.data / "cacm-docs.tar.gz")
    qids, qtoks = read_topics(args.data / "topics.cacm.txt")
    qrels_raw = (args.data / "qrels.cacm.txt").read_bytes()
    qrels = V.read_qrels(args.data / "qrels.cacm.txt")
    assert len(docnos) == 3204 and len(set(docnos)) == len(docnos), len(docnos)
    assert len(qids) == 64 and len(set(qids)) == 64, len(qids)
    unknown = {d for rel in qrels.values() for d in rel} - set(docnos)
    assert not unknown, sorted(unknown)[:5]
    ix = V.Index(docnos, dtoks)

    runs = V.make_runs(ix, qids, qtoks, args.depth)
    out = args.out
    if (out / "runs").exists():
        shutil.rmtree(out / "runs")
    for tag, (_, per) in runs.items():
        V.write_gzip(out / "runs" / f"{tag}.run.gz", V.run_bytes(tag, per))
    V.write_gzip(out / "qrels.gz", qrels_raw)

    judged = [q for q in qids if q in qrels]
    rows = []
    for tag, (desc, per) in runs.items():
        m = float(np.mean([V.average_precision(per[q][0], qrels[q]) for q in judged]))
        rows.append((tag, desc, m))
        print(f"{tag:18s} MAP {m:.4f}")
    table = "\n".join(f"| `{t}` | {d} | {m:.4f} |" for t, d, m in rows)
    (out / "README.md").write_text(README.format(
        n_runs=len(runs), n_docs=ix.N, n_topics=len(qids), n_judged=len(judged),
        n_qrels=sum(len(v) for v in qrels.values()), depth=args.depth,
        n_terms=len(ix.vocab), avgdl=ix.avgdl, table=table), encoding="utf-8")
    print(f"wrote {out} ({V.dir_size(out) / 2**20:.2f} MB) in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
