#!/usr/bin/env python3
"""Build the bundled Vaswani (NPL) example runs in ``irsample/data/vaswani/``.

Usage (from the repository root)::

    python scripts/make_vaswani_runs.py [--data /work/shared/data/vaswani] [--depth 1000]

Input (read-only) is terrier's TREC-format copy of the NPL test collection:
``doc-text.trec.gz`` (11,429 documents), ``query-text.trec`` (93 topics) and ``qrels``.

Output:

- ``runs/<tag>.run.gz``: one TREC run per ranking model, ``qid Q0 docno rank score tag``, the top
  ``--depth`` documents per topic (only documents that contain at least one query term);
- ``qrels.gz``: the qrels, byte-for-byte;
- ``README.md``: provenance, models, parameters and the MAP of each run.

Text processing: lowercase, split on non-alphanumerics, drop a hard-coded list of ~100 English
stopwords, then stem with Porter's step 1 (1a plurals, 1b -ed/-ing with its clean-up rules,
1c y->i) only -- a light, deterministic stemmer written out below, chosen over the full Porter
algorithm to keep the script self-contained and short. Porter's later steps (derivational
suffixes such as -ation, -ness, -ful) are not applied.

Ranking: each model is a sparse document-term weight matrix ``W`` (same sparsity as the
term-frequency matrix), a query-term weight vector ``q`` and, for the language models, a
per-document additive term; a topic's score vector is ``W[:, terms] @ q (+ doc term)``.

Ordering and determinism: scores are rounded to 6 decimals *before* sorting, then documents are
ordered by score descending and ties broken by docno descending (byte-wise), which is
trec_eval's own tie order, so the file order is exactly the order trec_eval / irsample
evaluate. Files are gzip'd with ``mtime=0`` and no file name in the header, so reruns are
byte-identical.

Only numpy and scipy.sparse are used.
"""

from __future__ import annotations

import argparse
import gzip
import io
import math
import re
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "irsample" / "data" / "vaswani"
DEFAULT_DATA = Path("/work/shared/data/vaswani")
SIZE_LIMIT = 6 * 1024 * 1024  # bytes; above this the runs are cut to depth 500

# --------------------------------------------------------------------------------------------
# Text processing
# --------------------------------------------------------------------------------------------

# ~100 common English function words (a subset of the SMART / van Rijsbergen lists).
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers him his how however i if in into is it its itself
just may me might more most must my no nor not now of off on once only or other our ours out
over own same she should so some such than that the their them then there these they this
those through to too under until up upon very was we were what when where which while who whom
why will with within without would you your
""".split())

_SPLIT = re.compile(r"[^a-z0-9]+")


def _cons(w: str, i: int) -> bool:
    """Porter's consonant test: not a vowel, and 'y' only after a vowel (or at the start)."""
    c = w[i]
    if c in "aeiou":
        return False
    return c != "y" or i == 0 or not _cons(w, i - 1)


def _measure(s: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in [C](VC)^m[V]."""
    return "".join("c" if _cons(s, i) else "v" for i in range(len(s))).count("vc")


def _has_vowel(s: str) -> bool:
    return any(not _cons(s, i) for i in range(len(s)))


def stem(w: str) -> str:
    """Porter (1980) step 1 only: 1a (plurals), 1b (-eed/-ed/-ing + repairs), 1c (y -> i)."""
    if len(w) <= 2:
        return w
    if w.endswith("sses") or w.endswith("ies"):  # 1a
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    repair = False
    if w.endswith("eed"):  # 1b
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    else:
        for suf in ("ed", "ing"):
            if w.endswith(suf) and _has_vowel(w[: -len(suf)]):
                w, repair = w[: -len(suf)], True
                break
    if repair:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1) and w[-1] not in "lsz":
            w = w[:-1]
        elif (_measure(w) == 1 and len(w) >= 3 and _cons(w, len(w) - 3)
              and not _cons(w, len(w) - 2) and _cons(w, len(w) - 1) and w[-1] not in "wxy"):
            w += "e"
    if w.endswith("y") and _has_vowel(w[:-1]):  # 1c
        w = w[:-1] + "i"
    return w


_STEM_CACHE: dict[str, str] = {}


def analyze(text: str) -> list[str]:
    out = []
    for tok in _SPLIT.split(text.lower()):
        if tok and tok not in STOPWORDS:
            s = _STEM_CACHE.get(tok)
            if s is None:
                s = _STEM_CACHE[tok] = stem(tok)
            out.append(s)
    return out


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------

_DOC = re.compile(r"<DOC>\s*<DOCNO>\s*(.*?)\s*</DOCNO>(.*?)</DOC>", re.S)
_TOP = re.compile(r"<top>\s*<num>\s*(.*?)\s*</num>\s*<title>(.*?)(?:</title>\s*)?</top>", re.S)


def read_docs(path: Path) -> tuple[list[str], list[list[str]]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        text = f.read()
    docnos, toks = [], []
    for m in _DOC.finditer(text):
        docnos.append(m.group(1))
        toks.append(analyze(m.group(2)))
    return docnos, toks


def read_topics(path: Path) -> tuple[list[str], list[list[str]]]:
    text = path.read_text(encoding="utf-8")
    qids, toks = [], []
    for m in _TOP.finditer(text):
        qids.append(m.group(1))
        toks.append(analyze(m.group(2)))
    return qids, toks


def read_qrels(path: Path) -> dict[str, set[str]]:
    rel: dict[str, set[str]] = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) == 4 and int(f[3]) > 0:
            rel.setdefault(f[0], set()).add(f[2])
    return rel


# --------------------------------------------------------------------------------------------
# Index
# --------------------------------------------------------------------------------------------


class Index:
    def __init__(self, docnos: list[str], doc_tokens: list[list[str]]):
        vocab: dict[str, int] = {}
        rows, cols = [], []
        for d, toks in enumerate(doc_tokens):
            for t in toks:
                cols.append(vocab.setdefault(t, len(vocab)))
                rows.append(d)
        self.vocab = vocab
        self.docnos = np.array(docnos)
        n_docs, n_terms = len(docnos), len(vocab)
        tf = sp.csc_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_docs, n_terms))
        tf.sum_duplicates()
        tf.sort_indices()
        self.tf = tf  # CSC, docs x terms, raw term frequencies
        self.N = n_docs
        self.dl = np.asarray(tf.sum(axis=1)).ravel()  # document length in indexed tokens
        self.avgdl = self.dl.mean()
        self.df = np.diff(tf.indptr).astype(np.float64)  # document frequency
        self.cf = np.asarray(tf.sum(axis=0)).ravel()  # collection frequency
        self.p_coll = self.cf / self.cf.sum()  # P(t | C)
        # per stored entry: its document row and its term column
        self.ent_doc = tf.indices
        self.ent_term = np.repeat(np.arange(n_terms), np.diff(tf.indptr))
        # "docno descending" rank of each document: the tie-break key
        self.docno_desc = np.empty(n_docs, dtype=np.int64)
        order = sorted(range(n_docs), key=lambda i: docnos[i].encode(), reverse=True)
        self.docno_desc[np.array(order)] = np.arange(n_docs)

    def with_data(self, values: np.ndarray) -> sp.csc_matrix:
        """A matrix with the sparsity of ``tf`` and the given per-entry values."""
        m = self.tf.copy()
        m.data = np.asarray(values, dtype=np.float64)
        return m

    def query(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Distinct in-vocabulary query term ids and their query frequencies."""
        counts: dict[int, int] = {}
        for t in tokens:
            if t in self.vocab:
                tid = self.vocab[t]
                counts[tid] = counts.get(tid, 0) + 1
        ids = np.array(sorted(counts), dtype=np.int64)
        return ids, np.array([counts[i] for i in ids], dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Ranking models. Each returns (W, query_weight_fn, doc_term_fn or None).
# --------------------------------------------------------------------------------------------


def bm25(ix: Index, k1: float, b: float):
    """BM25: Robertson, Walker, Jones, Hancock-Beaulieu & Gatford, "Okapi at TREC-3" (1994);
    idf = ln(1 + (N - df + 0.5) / (df + 0.5)) as in Lucene/Anserini (never negative);
    w(t,d) = idf * tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)); query weight = qtf."""
    tf = ix.tf.data
    idf = np.log1p((ix.N - ix.df + 0.5) / (ix.df + 0.5))
    norm = k1 * (1 - b + b * ix.dl[ix.ent_doc] / ix.avgdl)
    W = ix.with_data(idf[ix.ent_term] * tf * (k1 + 1) / (tf + norm))
    return W, lambda ids, qtf: qtf, None


def tfidf_lnc_ltc(ix: Index):
    """SMART lnc.ltc cosine (Salton & Buckley, "Term-weighting approaches in automatic text
    retrieval", IP&M 1988; Buckley, Singhal, Mitra & Salton, TREC-4 1995): document
    l,n,c = (1 + ln tf), no idf, cosine-normalised over all the document's terms; query
    l,t,c = (1 + ln qtf) * ln(N / df), cosine-normalised. Score = inner product = cosine."""
    logtf = 1 + np.log(ix.tf.data)
    dnorm = np.sqrt(np.bincount(ix.ent_doc, weights=logtf**2, minlength=ix.N))
    W = ix.with_data(logtf / dnorm[ix.ent_doc])
    idf = np.log(ix.N / ix.df)

    def qw(ids, qtf):
        w = (1 + np.log(qtf)) * idf[ids]
        n = np.sqrt((w**2).sum())
        return w / n if n > 0 else w

    return W, qw, None


def ql_dirichlet(ix: Index, mu: float):
    """Query likelihood, Dirichlet prior smoothing (Zhai & Lafferty, "A study of smoothing
    methods for language models applied to ad hoc IR", SIGIR 2001 / TOIS 2004), in its
    rank-equivalent form: sum_t qtf * ln(1 + tf / (mu P(t|C))) + |q| ln(mu / (dl + mu))."""
    p = ix.p_coll[ix.ent_term]
    W = ix.with_data(np.log1p(ix.tf.data / (mu * p)))
    log_len = np.log(mu / (ix.dl + mu))
    return W, lambda ids, qtf: qtf, lambda ids, qtf: qtf.sum() * log_len


def ql_jelinek_mercer(ix: Index, lam: float):
    """Query likelihood, Jelinek-Mercer smoothing, P(t|d) = (1 - lam) tf/dl + lam P(t|C)
    (Zhai & Lafferty 2001/2004; lam = weight of the collection model, 0.7 being their
    recommendation for longer, verbose queries such as the NPL ones); rank-equivalent form
    sum_t qtf * ln(1 + (1 - lam) tf / (lam dl P(t|C)))."""
    p = ix.p_coll[ix.ent_term]
    dl = ix.dl[ix.ent_doc]
    W = ix.with_data(np.log1p((1 - lam) * ix.tf.data / (lam * dl * p)))
    return W, lambda ids, qtf: qtf, None


def dfr_pl2(ix: Index, c: float):
    """DFR PL2 (Amati & van Rijsbergen, "Probabilistic models of IR based on measuring the
    divergence from randomness", TOIS 2002), as implemented in Terrier with its default c = 1:
    tfn = tf log2(1 + c avgdl / dl) (normalisation 2), lambda = F / N,
    w = 1/(tfn + 1) * (tfn log2(tfn / lambda) + (lambda - tfn) log2 e + 0.5 log2(2 pi tfn));
    query weight qtf / max qtf."""
    tfn = ix.tf.data * np.log2(1 + c * ix.avgdl / ix.dl[ix.ent_doc])
    lam = ix.cf[ix.ent_term] / ix.N
    w = (tfn * np.log2(tfn / lam) + (lam - tfn) * math.log2(math.e)
         + 0.5 * np.log2(2 * math.pi * tfn)) / (tfn + 1)
    return ix.with_data(w), lambda ids, qtf: qtf / qtf.max(), None


def dfr_inexpb2(ix: Index, c: float):
    """DFR In_expB2 (Amati & van Rijsbergen, TOIS 2002; Terrier's In_expB2, c = 1):
    tfn as in PL2, n_exp = N (1 - exp(-F / N)),
    w = (F + 1) / (df (tfn + 1)) * tfn * log2((N + 1) / (n_exp + 0.5)); query weight qtf/max."""
    tfn = ix.tf.data * np.log2(1 + c * ix.avgdl / ix.dl[ix.ent_doc])
    F = ix.cf[ix.ent_term]
    n_exp = ix.N * (1 - np.exp(-F / ix.N))
    w = (F + 1) / (ix.df[ix.ent_term] * (tfn + 1)) * tfn * np.log2((ix.N + 1) / (n_exp + 0.5))
    return ix.with_data(w), lambda ids, qtf: qtf / qtf.max(), None


def coordination(ix: Index):
    """Coordination level matching (the number of distinct query terms a document contains;
    e.g. Salton & McGill, "Introduction to Modern IR", 1983; Cleverdon's NPL/Cranfield
    "co-ordination level"). Ties are broken in favour of shorter documents by adding
    1 / (1 + dl) < 1, which never overtakes a whole extra matched term."""
    W = ix.with_data(np.ones_like(ix.tf.data))
    short = 1.0 / (1.0 + ix.dl)
    return W, lambda ids, qtf: np.ones_like(qtf), lambda ids, qtf: short


def raw_tf(ix: Index):
    """Raw term frequency, no idf and no length normalisation: sum_t qtf * tf(t, d)
    (the unweighted baseline of Salton & Buckley 1988, 'bxx' in SMART terms)."""
    return ix.with_data(ix.tf.data), lambda ids, qtf: qtf, None


# --------------------------------------------------------------------------------------------
# Retrieval
# --------------------------------------------------------------------------------------------


def score_query(ix: Index, model, ids: np.ndarray, qtf: np.ndarray):
    """Scores of the documents that contain at least one query term: (doc indices, scores)."""
    W, qw, doc_term = model
    if len(ids) == 0:
        return np.empty(0, np.int64), np.empty(0)
    sub = W[:, ids]
    s = sub @ qw(ids, qtf)
    matched = np.unique(sub.indices)
    if doc_term is not None:
        s = s + doc_term(ids, qtf)
    return matched, s[matched]


def rank(ix: Index, docs: np.ndarray, scores: np.ndarray, depth: int):
    """Round to 6 decimals, then order by score descending, docno descending; cut at depth."""
    scores = np.round(scores, 6) + 0.0  # + 0.0 turns -0.0 into 0.0
    order = np.lexsort((ix.docno_desc[docs], -scores))[:depth]
    return docs[order], scores[order]


def rm3_query(ix: Index, ids, qtf, fb_docs, fb_scores, fb_terms: int, orig_weight: float):
    """RM3 (Lavrenko & Croft, "Relevance-based language models", SIGIR 2001; RM3 interpolation
    as in Abdul-Jaleel et al., "UMass at TREC 2004", and Anserini's BM25+RM3):
    P(w|R) ~ sum_{d in F} P(w|d) * weight(d), P(w|d) = tf/dl (maximum likelihood), weight(d) =
    the first-pass score normalised to sum 1 over the feedback set F; keep the fb_terms most
    probable terms, renormalise, and mix orig_weight * (qtf / |q|) + (1 - orig_weight) * P(w|R)."""
    dw = fb_scores / fb_scores.sum()
    rows = ix.tf.tocsr()[fb_docs]  # feedback documents x terms
    pwd = sp.diags(1.0 / ix.dl[fb_docs]) @ rows
    rel = np.asarray(pwd.T @ dw).ravel()
    cand = np.flatnonzero(rel)
    top = cand[np.lexsort((cand, -rel[cand]))][:fb_terms]  # ties by term id: deterministic
    fb = np.zeros(len(ix.vocab))
    fb[top] = rel[top] / rel[top].sum()
    orig = np.zeros(len(ix.vocab))
    orig[ids] = qtf / qtf.sum()
    mixed = orig_weight * orig + (1 - orig_weight) * fb
    new_ids = np.flatnonzero(mixed)
    return new_ids, mixed[new_ids]


# --------------------------------------------------------------------------------------------
# Evaluation and output
# --------------------------------------------------------------------------------------------


def average_precision(ranked_docnos, relevant: set[str]) -> float:
    """AP: sum of precision at the rank of each relevant retrieved document, divided by the
    number of relevant documents (retrieved or not)."""
    if not relevant:
        return 0.0
    hits, total = 0, 0.0
    for r, d in enumerate(ranked_docnos, start=1):
        if d in relevant:
            hits += 1
            total += hits / r
    return total / len(relevant)


def write_gzip(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            gz.write(data)


def models(ix: Index):
    """(tag, description, model) in output order."""
    return [
        ("bm25_k1.2_b0.75", "BM25, k1 = 1.2, b = 0.75 (Robertson et al. 1994; common default)",
         bm25(ix, 1.2, 0.75)),
        ("bm25_k0.9_b0.4", "BM25, k1 = 0.9, b = 0.4 (Anserini's default)", bm25(ix, 0.9, 0.4)),
        ("tfidf_lnc.ltc", "SMART lnc.ltc TF-IDF cosine (Salton & Buckley 1988; "
         "Buckley et al. 1995)", tfidf_lnc_ltc(ix)),
        ("ql_dir_mu300", "Query likelihood, Dirichlet smoothing, mu = 300 (short documents; "
         "Zhai & Lafferty 2001)", ql_dirichlet(ix, 300.0)),
        ("ql_dir_mu2000", "Query likelihood, Dirichlet smoothing, mu = 2000 (the usual default)",
         ql_dirichlet(ix, 2000.0)),
        ("ql_jm_l0.7", "Query likelihood, Jelinek-Mercer smoothing, lambda = 0.7 "
         "(collection weight; Zhai & Lafferty 2001)", ql_jelinek_mercer(ix, 0.7)),
        ("dfr_pl2_c1", "DFR PL2, c = 1 (Amati & van Rijsbergen 2002; Terrier default)",
         dfr_pl2(ix, 1.0)),
        ("dfr_inexpb2_c1", "DFR In_expB2, c = 1 (Amati & van Rijsbergen 2002; Terrier)",
         dfr_inexpb2(ix, 1.0)),
        ("coord", "Coordination level match: distinct query terms matched, ties by shorter "
         "document (score = matches + 1/(1 + length))", coordination(ix)),
        ("tf_raw", "Raw term frequency sum, no idf, no length normalisation (weak baseline)",
         raw_tf(ix)),
    ]


RM3 = dict(fb_docs=10, fb_terms=20, orig_weight=0.5)
RM3_TAG = "bm25_rm3"
RM3_BASE = "bm25_k1.2_b0.75"


def make_runs(ix: Index, qids, qtoks, depth: int):
    """{tag: (description, {qid: (docnos, scores)})}."""
    runs = {}
    queries = [ix.query(t) for t in qtoks]
    for tag, desc, model in models(ix):
        per = {}
        for qid, (ids, qtf) in zip(qids, queries):
            d, s = score_query(ix, model, ids, qtf)
            d, s = rank(ix, d, s, depth)
            per[qid] = (ix.docnos[d], s)
        runs[tag] = (desc, per)
        if tag == RM3_BASE:
            base = model
    desc = (f"BM25 (k1 = 1.2, b = 0.75) + RM3 pseudo-relevance feedback: fb_docs = "
            f"{RM3['fb_docs']}, fb_terms = {RM3['fb_terms']}, original query weight = "
            f"{RM3['orig_weight']} (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004)")
    per = {}
    for qid, (ids, qtf) in zip(qids, queries):
        d, s = score_query(ix, base, ids, qtf)
        d, s = rank(ix, d, s, RM3["fb_docs"])
        new_ids, new_w = rm3_query(ix, ids, qtf, d, s, RM3["fb_terms"], RM3["orig_weight"])
        W = base[0]
        second = (W, lambda i, w: w, None)  # expanded query: weights replace qtf
        d, s = score_query(ix, second, new_ids, new_w)
        d, s = rank(ix, d, s, depth)
        per[qid] = (ix.docnos[d], s)
    runs[RM3_TAG] = (desc, per)
    return runs


def run_bytes(tag: str, per: dict) -> bytes:
    buf = io.StringIO()
    for qid in sorted(per, key=int):
        docnos, scores = per[qid]
        for r, (d, s) in enumerate(zip(docnos, scores), start=1):
            buf.write(f"{qid} Q0 {d} {r} {s:.6f} {tag}\n")
    return buf.getvalue().encode()


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


README = """\
# Vaswani (NPL) example data

Bundled example data for `irsample`: the relevance judgments of the Vaswani / NPL test
collection and {n_runs} runs produced by classic ranking models.

## Collection

The NPL collection (National Physical Laboratory, UK; also known as "Vaswani" after
Vaswani & Cameron, 1970) of scientific abstracts in electronics and physics, as distributed
in TREC format with the Terrier IR platform's test collections (terrier's `vaswani` dataset;
original at <http://ir.dcs.gla.ac.uk/resources/test_collections/npl/>):

- documents: {n_docs:,}
- topics: {n_topics}
- relevance judgments: {n_qrels:,} (relevant only, binary)

Licence note: the NPL collection is distributed publicly for research purposes (University of
Glasgow IR group test collections page; Terrier's bundled test collection). Only the
judgments (`qrels.gz`) and the derived runs are included here, not the document text.

## Files

- `qrels.gz` -- the collection's qrels (`qid 0 docno 1`), gzip-compressed, unchanged.
- `runs/<tag>.run.gz` -- TREC runs, `qid Q0 docno rank score tag`, the top {depth} documents
  per topic, scores with 6 decimals, ordered by score descending with ties broken by docno
  descending (trec_eval's order); gzip with mtime 0, so rerunning the script is byte-identical.
  Only documents containing at least one query term are retrieved;
  {fewer}.
{depth_note}
## How the runs were made

    python scripts/make_vaswani_runs.py --data /work/shared/data/vaswani

run from the repository root (numpy + scipy.sparse only; deterministic; about 6 seconds on 2
cores; the script cuts the depth to 500 by itself when the runs would exceed 6 MB).

Text processing for documents and topics: lowercase, split on non-alphanumeric characters,
remove a hard-coded list of {n_stop} English stopwords, stem with Porter's step 1 only (1a
plurals, 1b -eed/-ed/-ing with its clean-up rules, 1c y -> i), a deliberately light,
self-contained stemmer. The index has
{n_terms:,} terms, average document length {avgdl:.1f} indexed tokens.

## Runs and MAP

MAP is computed by the script itself: for each topic, the sum of the precision at the rank of
every relevant retrieved document divided by the number of relevant documents; mean over all
{n_topics} topics. (For comparison, published BM25 MAP on Vaswani with full Porter stemming is
around 0.29-0.31; the step-1-only stemmer leaves forms such as measured/measurement apart,
which costs BM25 about 0.02 MAP here -- a full Porter stemmer tried during development gave
about 0.29.)

| run | model and parameters | MAP |
|---|---|---:|
{table}
"""


def _fewer(runs, qids, depth: int) -> str:
    short = {tag: sum(len(per[q][0]) < depth for q in qids) for tag, (_, per) in runs.items()}
    short = {t: n for t, n in short.items() if n}
    if not short:
        return f"every run has {depth} documents for every topic"
    return "fewer than {} documents for: {}".format(
        depth, ", ".join(f"{n} topics of `{t}`" for t, n in short.items()))


def arguments(argv, doc: str, data: Path, out: Path) -> argparse.Namespace:
    """``--data`` (input folder), ``--out`` (output folder) and ``--depth`` of a runs script."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=data, help="input folder")
    ap.add_argument("--out", type=Path, default=out, help="output folder")
    ap.add_argument("--depth", type=int, default=1000, help="documents per topic (default 1000)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = arguments(argv, __doc__, DEFAULT_DATA, OUT)
    t0 = time.perf_counter()

    docnos, dtoks = read_docs(args.data / "doc-text.trec.gz")
    qids, qtoks = read_topics(args.data / "query-text.trec")
    qrels_raw = (args.data / "qrels").read_bytes()
    qrels = read_qrels(args.data / "qrels")
    assert len(docnos) == 11429 and len(set(docnos)) == len(docnos), len(docnos)
    assert len(qids) == 93 and len(set(qids)) == 93, len(qids)
    ix = Index(docnos, dtoks)

    depth = args.depth
    runs = make_runs(ix, qids, qtoks, depth)
    blobs = {tag: run_bytes(tag, per) for tag, (_, per) in runs.items()}
    est = sum(len(gzip.compress(b, compresslevel=9, mtime=0)) for b in blobs.values())
    depth_note = ""
    if est + len(qrels_raw) > SIZE_LIMIT and depth > 500:
        print(f"runs at depth {depth} take {est / 2**20:.2f} MB > 6 MB: cutting to depth 500",
              file=sys.stderr)
        depth = 500
        runs = make_runs(ix, qids, qtoks, depth)
        blobs = {tag: run_bytes(tag, per) for tag, (_, per) in runs.items()}
        depth_note = ("\nThe runs keep the top 500 (not 1000) documents per topic to keep the "
                      "bundled data under 6 MB.\n")

    out = args.out
    if (out / "runs").exists():
        shutil.rmtree(out / "runs")  # drop runs of models no longer produced
    for tag, blob in blobs.items():
        write_gzip(out / "runs" / f"{tag}.run.gz", blob)
    write_gzip(out / "qrels.gz", qrels_raw)

    rows = []
    for tag, (desc, per) in runs.items():
        ap_ = [average_precision(per[q][0] if q in per else [], qrels.get(q, set())) for q in qids]
        m = float(np.mean(ap_))
        rows.append((tag, desc, m))
        print(f"{tag:18s} MAP {m:.4f}")
    table = "\n".join(f"| `{t}` | {d} | {m:.4f} |" for t, d, m in rows)
    readme = README.format(
        n_runs=len(runs), n_docs=ix.N, n_topics=len(qids),
        n_qrels=sum(len(v) for v in qrels.values()), depth=depth, depth_note=depth_note,
        fewer=_fewer(runs, qids, depth), n_stop=len(STOPWORDS), n_terms=len(ix.vocab),
        avgdl=ix.avgdl, table=table)
    (out / "README.md").write_text(readme, encoding="utf-8")
    print(f"wrote {out} ({dir_size(out) / 2**20:.2f} MB) in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
