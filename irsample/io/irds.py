"""Judgments named by ir_datasets ids: ``irds:<id>`` wherever a qrels path is accepted
(``irds:vaswani``, ``irds:msmarco-passage/trec-dl-2019/judged``).

The qrels come from the ir_datasets package (the optional extra ``irsample[irds]``;
MacAvaney et al., SIGIR 2021), which downloads a dataset's files once into
``$IR_DATASETS_HOME`` (default ``~/.ir_datasets``) and reads them from there afterwards.
Each qrel's ``query_id``, ``doc_id`` and ``relevance`` become a row of a
:class:`~irsample.io.trec.QrelsTable`, in the dataset's order; the line number of a row in
messages is its position in that order. A document judged twice for a topic is an error, as in
a qrels file. This module imports nothing heavy until an id is read.
"""

from __future__ import annotations

import os

#: the prefix of an ir_datasets id
PREFIX = "irds:"


def is_irds(source) -> bool:
    """Whether ``source`` names an ir_datasets id rather than a file."""
    return isinstance(source, (str, os.PathLike)) and os.fspath(source).startswith(PREFIX)


def read_irds_qrels(source):
    """The qrels of the ir_datasets id ``source`` (``irds:<id>``) as a QrelsTable."""
    import numpy as np
    import pyarrow as pa

    from ..errors import InputError
    from .trec import QrelsTable, check_unique_pairs

    name = os.fspath(source)
    dataset_id = name[len(PREFIX):]
    try:
        import ir_datasets
    except ImportError:
        raise InputError("reading ir_datasets ids needs the ir_datasets package: "
                         "pip install 'irsample[irds]'", name) from None
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise InputError(f"ir_datasets has no dataset {dataset_id!r}", name) from None
    if not dataset.has_qrels():
        raise InputError(f"ir_datasets dataset {dataset_id!r} has no qrels", name)
    qid, docno, rel = [], [], []
    try:
        for qrel in dataset.qrels_iter():
            qid.append(qrel.query_id.encode())
            docno.append(qrel.doc_id.encode())
            rel.append(int(qrel.relevance))
    except Exception as exc:  # a download or a file ir_datasets could not read
        raise InputError(f"ir_datasets could not read the qrels of {dataset_id!r} "
                         f"({type(exc).__name__}: {str(exc)[:300]})", name) from None
    if not rel:
        raise InputError("empty qrels: no records", name)
    table = QrelsTable(name, pa.array(qid, pa.binary()), pa.array(docno, pa.binary()),
                       np.asarray(rel, dtype=np.int64), np.arange(1, len(rel) + 1))
    check_unique_pairs(table.qid, table.docno, table.lineno, name, "judgment")
    return table
