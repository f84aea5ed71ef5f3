"""The data model: a :class:`Collection` of ranked runs and :class:`Judgments` over it.

Everything after parsing works on integer arrays:

- :class:`~irsample.model.collection.Collection`: topics (byte-wise order), the per-topic
  document index space ``tdi``, and every run's rankings in trec_eval order.
- :class:`~irsample.model.judgments.Judgments`: arrays over ``tdi``: the qrels value
  (``grade``) and the document's state (unpooled / pooled-but-unjudged / judged), plus per-topic
  facts from the whole qrels.
"""

from .collection import Collection
from .judgments import JUDGED, POOLED, UNPOOLED, Judgments, check_common_topics

__all__ = ["JUDGED", "POOLED", "UNPOOLED", "Collection", "Judgments", "check_common_topics"]
