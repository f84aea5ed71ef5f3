"""Runs and qrels from pandas DataFrames and parquet files, and back.

Column names follow TREC and the common Python tools: a run needs a topic column (``qid``,
``query_id`` or ``query``), a document column (``docno``, ``doc_id`` or ``docid``) and ``score``;
a tag column (``tag``, ``run`` or ``name``) is optional. Qrels need topic, document and a grade
(``rel``, ``relevance``, ``label`` or ``grade``), and stratified qrels a ``stratum`` column. A
DataFrame with several tags holds several runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .trec import INT32_MAX, INT32_MIN, QrelsTable, RunTable, check_unique_pairs

TOPIC = ("qid", "query_id", "query", "topic")
DOC = ("docno", "doc_id", "docid", "document")
SCORE = ("score", "sim")
TAG = ("tag", "run", "name", "run_id")
GRADE = ("rel", "relevance", "label", "grade", "judgment")


def _column(df: pd.DataFrame, names, what: str, source: str, required=True):
    for n in names:
        if n in df.columns:
            return df[n]
    if required:
        raise InputError(
            f"no {what} column (expected one of {', '.join(names)}; "
            f"found {', '.join(map(str, df.columns))})",
            source,
        )
    return None


def _binary(series: pd.Series, what: str, source: str) -> pa.Array:
    """The column as Arrow binary (its values' text); a missing value is an error naming its
    row."""
    missing = series.isna().to_numpy()
    if missing.any():
        raise InputError(f"{what} is missing", source, int(np.flatnonzero(missing)[0]) + 2)
    text = pa.array(series.astype(str).to_numpy(dtype=object), pa.string())
    # as the text readers split them: no id is empty or holds white space (C isspace), which
    # no run or qrels line could carry (a topic '1 ' was silently another topic than '1')
    bad = pc.or_(pc.equal(pc.utf8_length(text), 0),
                 pc.match_substring_regex(text, "[ \t\n\v\f\r]"))
    if pc.any(bad).as_py():
        row = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
        raise InputError(f"{what} {text[row].as_py()!r} is empty or holds white space, which "
                         "TREC files separate fields with", source, row + 2)
    return text.cast(pa.binary())


def _shown(value) -> str:
    """A cell's value as its Python repr (numpy scalars as the plain number)."""
    return repr(value.item() if hasattr(value, "item") else value)


def _rows(df: pd.DataFrame) -> np.ndarray:
    # 1-based row numbers (+1 for a header line) locate problems in a DataFrame or parquet file
    return np.arange(2, len(df) + 2, dtype=np.int64)


def runs_from_frame(df: pd.DataFrame, source: str = "<DataFrame>", name: str | None = None):
    """Split a run DataFrame into :class:`RunTable` objects, one per tag."""
    if len(df) == 0:
        raise InputError("empty run table", source)
    qid = _column(df, TOPIC, "topic", source)
    doc = _column(df, DOC, "document", source)
    score_col = _column(df, SCORE, "score", source)
    try:
        score = pd.to_numeric(score_col, errors="raise").to_numpy(dtype=np.float64)
    except (ValueError, TypeError) as err:
        bad = int(np.flatnonzero(pd.to_numeric(score_col, errors="coerce").isna())[0])
        raise InputError(f"score is not a number: {_shown(score_col.iloc[bad])}", source,
                         bad + 2) from err
    if np.isnan(score).any():
        raise InputError("score is missing", source, int(np.flatnonzero(np.isnan(score))[0]) + 2)
    if not np.isfinite(score).all():
        bad = int(np.flatnonzero(~np.isfinite(score))[0])
        raise InputError(f"score is not a finite number: {_shown(score[bad])}", source, bad + 2)
    tags = _column(df, TAG, "tag", source, required=False)
    lineno = _rows(df)
    if tags is None:
        tags = pd.Series(name or Path(source).stem, index=df.index)
    missing = tags.isna().to_numpy()
    if missing.any():  # pandas 3 keeps a missing tag missing through astype(str): no run's rows
        raise InputError("tag is missing", source, int(np.flatnonzero(missing)[0]) + 2)
    out = []
    tag_values = tags.astype(str).to_numpy(dtype=object)
    for tag in pd.unique(tag_values):
        sel = np.flatnonzero(tag_values == tag)
        out.append(
            RunTable(
                str(tag),
                source,
                _binary(qid.iloc[sel], "topic", source),
                _binary(doc.iloc[sel], "document", source),
                score[sel],
                lineno[sel],
            )
        )
    return out


STRATUM = ("stratum",)


def qrels_from_frame(df: pd.DataFrame, source: str = "<DataFrame>",
                     fmt: str | None = None) -> QrelsTable:
    """A :class:`QrelsTable` from a DataFrame (grades must be integers): TREC qrels, or
    stratified qrels when ``fmt`` is ``strata`` or (``fmt`` not given) the frame has a
    ``stratum`` column. prels are read from text files only."""
    if fmt == "prels":
        raise InputError("prels are read from text files only ('topic docno rel method prob' "
                         "lines), not from a DataFrame or parquet file", source)
    if len(df) == 0:
        raise InputError("empty qrels table", source)
    stratum = None
    if fmt == "strata" or (fmt is None and STRATUM[0] in df.columns):
        stratum = _binary(_column(df, STRATUM, "stratum", source), "stratum", source)
    qid = _column(df, TOPIC, "topic", source)
    doc = _column(df, DOC, "document", source)
    grade = _column(df, GRADE, "relevance", source)
    numeric = pd.to_numeric(grade, errors="coerce")
    if numeric.isna().any():
        bad = int(np.flatnonzero(numeric.isna())[0])
        if pd.isna(grade.iloc[bad]):
            raise InputError("relevance is missing (a judgment needs a grade; -1: pooled, not "
                             "judged)", source, bad + 2)
        raise InputError(f"relevance is not an integer: {_shown(grade.iloc[bad])}", source, bad + 2)
    values = numeric.to_numpy(dtype=np.float64)
    whole = np.isfinite(values) & (values == np.trunc(values))
    if not whole.all():  # as the text readers: trec_eval would truncate 1.5 to 1
        bad = int(np.flatnonzero(~whole)[0])
        raise InputError(f"relevance must be a whole number, not {_shown(grade.iloc[bad])} "
                         "(trec_eval would truncate it)", source, bad + 2)
    outside = (values < INT32_MIN) | (values > INT32_MAX)
    if outside.any():
        bad = int(np.flatnonzero(outside)[0])
        raise InputError(f"relevance {_shown(grade.iloc[bad])} does not fit in 32 bits (allowed: "
                         f"{INT32_MIN} to {INT32_MAX})", source, bad + 2)
    table = QrelsTable(
        source,
        _binary(qid, "topic", source),
        _binary(doc, "document", source),
        values.astype(np.int64),
        _rows(df),
        stratum=stratum,
    )
    check_unique_pairs(table.qid, table.docno, table.lineno, source, "judgment")
    return table


def read_parquet(path) -> pd.DataFrame:
    """Read a parquet file into a DataFrame, reporting a bad file by name."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pandas()
    except FileNotFoundError:
        raise InputError("no such file", str(path)) from None
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a readable parquet file ({exc})", str(path)) from None


def run_to_frame(run: RunTable) -> pd.DataFrame:
    """A RunTable as a DataFrame ``qid, docno, score, tag``."""
    return pd.DataFrame(
        {
            "qid": [b.decode() for b in run.qid.to_pylist()],
            "docno": [b.decode() for b in run.docno.to_pylist()],
            "score": run.score,
            "tag": run.name,
        }
    )
