"""What an estimate's user should know about judgments and measures that fit together only in
part, besides errors: a measure that reads a stratified sample as uniform or ignores the
relevance level, pooled documents no estimate reaches (inclusion probability 0), thin inclusion
probabilities, runs ranking mostly outside the judged pool, judgments that read as a census,
automatic labels that name no pooled document, runs with no ranking for some of the judged
topics.

Each check returns :class:`Note` objects (a kind, ``warning`` or ``note``, and the text);
:func:`judgment_notes` runs those that apply to an evaluation. The Python API issues them as
:class:`~irsample.errors.JudgmentWarning` (:func:`warn`), the command line prints them on
standard error as ``irsample: warning: ...`` or ``irsample: note: ...``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

from .errors import JudgmentWarning


class Note(NamedTuple):
    """One notice: ``kind`` (``"warning"``: part of the input or of a measure is left out;
    ``"note"``: a caveat on what the numbers mean) and its ``text``."""

    kind: str
    text: str

    def __str__(self) -> str:
        return f"irsample: {self.kind}: {self.text}"


def judgment_notes(measures, judgments, collection, *, level: int = 1,
                   intervals: bool = False) -> list[Note]:
    """The notices of evaluating ``measures`` on ``judgments`` over ``collection`` at relevance
    level ``level``; with ``intervals`` (intervals are printed) also those on what the
    intervals rest on (a census, thin probabilities)."""
    found = []
    if intervals:
        found += census(measures, judgments) + thin_tail(measures, judgments, collection)
    found += outside_pool(measures, judgments, collection)
    found += strata_ignored(measures, judgments) + level_ignored(measures, level)
    found += unsampled_documents(measures, collection.topics, judgments)
    return found


def warn(notes, stacklevel: int = 2) -> None:
    """Issue ``notes`` as :class:`~irsample.errors.JudgmentWarning` (to the caller of the
    function that calls this, with the default ``stacklevel``)."""
    for note in notes:
        warnings.warn(JudgmentWarning(note.text, note.kind), stacklevel=stacklevel + 1)


#: estimators that read a sample as one uniform stratum, and their stratified counterparts
STRATIFIED_COUNTERPART = {"infAP": "xinfAP"}
#: measures that take an incomplete sample as uniform (they drop or reweigh the unjudged
#: documents alike wherever they are), and what estimates from a stratified design instead
UNIFORM_READERS = {"infAP": "ht(AP) or statAP", "induced": "ht(M)", "condensed": "ht(M)"}


def strata_ignored(measures, judgments) -> list[Note]:
    """A warning (once per measure family) when judgments that tell they come from
    a stratified design (stratified qrels with several strata, or unequal inclusion
    probabilities: prels of a stratified or importance sample) meet a measure that takes the
    sample as uniform (infAP, induced and condensed measures), and when prels with unequal
    probabilities, or listing the sampled documents alone, meet sample_eval's estimators
    (``reads_strata``), which read strata and not the probabilities."""
    strata = len(getattr(judgments, "stratum_labels", ()))
    unequal = bool(getattr(judgments, "unequal_probabilities", False))
    prels = getattr(judgments, "inclusion", None) is not None
    listed = getattr(judgments, "pool_listed", True)
    if strata <= 1 and not unequal and listed:
        return []
    warned = []
    strata_readers = {m.family for m in measures if getattr(m, "reads_strata", False)}
    for family in dict.fromkeys(m.family for m in measures):
        if family in strata_readers and prels and (unequal or not listed):
            read_as = ("the whole pool (these prels list the sampled documents alone)"
                       if not listed else "a uniform sample of the pool")
            text = (f"{family} estimates from the strata of stratified "
                    "qrels; these prels give each judged document its own inclusion "
                    f"probability, which it ignores, reading the judged documents as {read_as}; "
                    "statAP" + (" and ht(M) estimate" if listed else " estimates")
                    + " from them")
            warned.append(Note("warning", text))
        if family not in UNIFORM_READERS or (strata <= 1 and not unequal):
            continue
        if family in STRATIFIED_COUNTERPART and strata > 1:
            text = (f"{family} ignores the {strata} strata of these "
                    "stratified qrels (it takes the sample as uniform); "
                    f"{STRATIFIED_COUNTERPART[family]} estimates from stratified samples")
        else:
            how = "unequal inclusion probabilities" if unequal else f"{strata} strata"
            text = (f"{family} takes the sample as uniform, but these "
                    f"judgments come from a stratified design ({how}); "
                    f"{UNIFORM_READERS[family]} estimates from them")
        warned.append(Note("warning", text))
    return warned


#: the reference estimators for sampled judgments that count every grade of 1 or more as
#: relevant, as sample_eval.pl and statAP_MQ_eval do (neither has a relevance level option)
LEVEL_BLIND = ("xinfAP", "iP", "iIPrec", "inum_rel", "inum_rel_ret", "statAP", "statAP_var",
               "statP", "statRprec", "statnum_rel")


def level_ignored(measures, level: int) -> list[Note]:
    """A warning when ``-l`` sets a relevance level above 1 and some of ``measures`` are
    reference estimators that do not read it (:data:`LEVEL_BLIND`)."""
    if level <= 1:
        return []
    blind = [f for f in dict.fromkeys(m.family for m in measures) if f in LEVEL_BLIND]
    if not blind:
        return []
    text = (f"{', '.join(blind)} count every grade of 1 or more as relevant "
            f"whatever -l (as sample_eval.pl and statAP do); -l {level} applies to trec_eval's "
            "measures, infAP and the design-based estimators (ht(M), ppi(M))")
    return [Note("warning", text)]


def unsampled_documents(measures, topics, judgments) -> list[Note]:
    """A warning, with or without intervals, when estimators that read
    inclusion probabilities or the unjudged documents' places (``needs_inclusion``,
    ``reads_unjudged_ranks``) meet judgments where some pooled documents have inclusion
    probability 0 (:mod:`irsample.measures.unsampled`: a stratum with nothing judged, prels
    listing pi = 0): no estimate of their relevance exists; ``topics``: the collection's topic
    ids."""
    from .measures.unsampled import unsampled_summary

    unstated = judgments.probabilities == "none" and judgments.assumed is None
    reading = [m.name for m in measures  # not those the refusal of unstated designs stops
               if (m.needs_inclusion and not unstated)
               or getattr(m, "reads_unjudged_ranks", False)]
    if not reading:
        return []
    count, topics = unsampled_summary(topics, judgments)
    if not count:
        return []
    from .measures.reliability import named_topics

    text = (f"{judgments.source}: {count} pooled document"
            f"{'s' * (count != 1)} {'have' if count != 1 else 'has'} inclusion probability 0 "
            f"(in strata with nothing judged, or listed so) on {len(topics)} topic"
            f"{'s' * (len(topics) != 1)}: {named_topics(topics)}; {', '.join(reading)} cannot "
            "estimate their relevance (with --ci the runs that rank them are flagged); judge "
            "at least one document of each such stratum")
    return [Note("warning", text)]


def thin_tail(measures, judgments, collection) -> list[Note]:
    """A note when design-based estimators (``needs_inclusion``) meet
    judgments that give documents their own inclusion probabilities (prels, a merged design)
    where some pooled document is sampled thinly: pi below 1/11 of its topic's judged share
    n_t / N_t (:func:`~irsample.design.sampling.importance.thinly_sampled`), as statAP's AP
    prior samples a deep pool's tail. The pi of every listed document is read, judged or not
    (prels listing the pool give both; a draw holds few of the thin ones, since it draws them
    thinly: CACM's importance(0.1) at seed 3 has 70 pool documents below the share and none of
    them judged). A few relevant documents there then carry an estimate and its variance
    together, which no rule read from the sample sees (REPRODUCTION.md, "A floor for importance
    samples"); the note says so and names the floored design, which ``irsample sample`` draws.
    ``collection``: the judgments' collection."""
    reading = [m.name for m in measures if m.needs_inclusion]
    if not reading or judgments.inclusion is None or not judgments.unequal_probabilities:
        return []
    import numpy as np

    from .design.sampling.importance import DEFENSIVE_FLOOR, THIN_EVIDENCE, thinly_sampled

    low = thinly_sampled(judgments.listed_inclusion, collection.tdi_topic,
                         judgments.judged_share())
    if not low.any():
        return []
    from .measures.reliability import named_topics

    topics = [collection.topics[t] for t in np.unique(collection.tdi_topic[low])]
    count = int(low.sum())
    verb = "reads" if len(reading) == 1 else "read"
    listed = int(np.isfinite(judgments.listed_inclusion).sum())
    text = (f"{judgments.source}: {count} of {listed} pooled documents "
            f"{'are' if count != 1 else 'is'} sampled with an inclusion probability below 1/11 "
            "of the topic's judged share (the smallest "
            f"{np.nanmin(judgments.listed_inclusion[low]):.4f}; {len(topics)} topic"
            f"{'s' * (len(topics) != 1)}: {named_topics(topics)}): {', '.join(reading)} {verb} "
            "the ones drawn there at weights 1/pi, where a few relevant documents carry an "
            f"estimate and its variance together and no flag sees it ({THIN_EVIDENCE}); "
            f"samples drawn with importance(F,floor={DEFENSIVE_FLOOR:g}) keep every probability "
            "at that share at least")
    return [Note("note", text)]


#: a run is noted when more than this share of its top :data:`OUTSIDE_DEPTH` documents (over
#: the topics with judgments) lies outside the judged pool
OUTSIDE_SHARE, OUTSIDE_DEPTH = 0.5, 10


def outside_pool_share(collection, judgments, depth: int = OUTSIDE_DEPTH):
    """Per run: the share of its top ``depth`` documents, over the topics with any document in
    the judgments, that are absent from them (unpooled); NaN for a run with none there."""
    import numpy as np

    from .model import UNPOOLED

    length = np.minimum(np.diff(collection.rank_offsets), depth)
    seg = np.repeat(np.arange(len(length)), length)
    rank = np.arange(len(seg)) - np.repeat(np.cumsum(length) - length, length)
    tdi = collection.rank_tdi[collection.rank_offsets[seg] + rank]
    pooled = np.bincount(collection.tdi_topic[judgments.state != UNPOOLED],
                         minlength=collection.n_topics) > 0
    keep = pooled[seg % collection.n_topics]
    run = seg[keep] // collection.n_topics
    outside = np.bincount(run, weights=judgments.state[tdi[keep]] == UNPOOLED,
                          minlength=collection.n_runs)
    total = np.bincount(run, minlength=collection.n_runs)
    return np.where(total > 0, outside / np.maximum(total, 1), np.nan)


def outside_pool(measures, judgments, collection) -> list[Note]:
    """A note when design-based estimators (``needs_inclusion``) meet runs
    whose top 10 documents lie mostly (over :data:`OUTSIDE_SHARE`) outside the judged pool:
    they read such documents as not relevant, as trec_eval does, so the run's estimate and its
    interval are of the pool's judgments, not of the run's own documents, and a run that did
    not add to the pool may be rated low there (pool bias: Zobel, SIGIR 1998; Buckley et al.,
    Inf. Retr. 10, 2007) where no interval can see it. Not for complete qrels (a census, which
    lists only the relevant documents of Vaswani and CACM: absent means judged not relevant
    there, 0.66-0.82 of their runs' top 10). On TREC-8's 129 runs and its official
    pool the share is at most 0.38 but for one run at 0.88; a run of another collection whose
    topic ids overlap reads near 1."""
    reading = [m.name for m in measures if m.needs_inclusion]
    if not reading or judgments.probabilities == "census" or not judgments.pool_listed:
        return []  # complete qrels (absent: not relevant by convention), or no pool listed
    import numpy as np

    share = outside_pool_share(collection, judgments)
    noted = np.flatnonzero(share > OUTSIDE_SHARE)
    if not len(noted):
        return []
    names = ", ".join(f"{collection.run_names[r]} ({share[r]:.0%})" for r in noted[:5])
    more = f" and {len(noted) - 5} more" if len(noted) > 5 else ""
    verb = "reads" if len(reading) == 1 else "read"
    text = (f"{judgments.source}: {len(noted)} run"
            f"{'s rank' if len(noted) != 1 else ' ranks'} mostly documents outside the judged "
            f"pool in their top {OUTSIDE_DEPTH} (share unpooled: {names}{more}): "
            f"{', '.join(reading)} {verb} those as not relevant, so these runs' estimates are "
            "of the pool's judgments and may rate them low (pool bias; no interval shows it): "
            "pool them, or check that the runs and judgments are of the same collection")
    return [Note("note", text)]


def census(measures, judgments) -> list[Note]:
    """A note when design-based estimators (``needs_inclusion``) print
    intervals (``eval --ci``, ``compare``) from judgments that are a census: every pooled
    document judged, none marked unjudged (-1), no strata or prels. By the spec's three
    states that is complete judgments of the pool, so their intervals have width 0; a
    sample's judgments written as plain qrels read the same and cannot be told apart, so the
    note says how to give a sample."""
    reading = [m.name for m in measures if m.needs_inclusion]
    if not reading or judgments.probabilities != "census":
        return []
    verb = "reads" if len(reading) == 1 else "read"
    text = (f"{judgments.source} marks no pooled document unjudged (-1) and "
            f"carries no strata or prels: {', '.join(reading)} {verb} it as complete "
            "judgments of the pool (a census: intervals of width 0); judgments of a sample need "
            "their strata (--qrels-format strata), prels, or -1 rows with --assume uniform")
    return [Note("note", text)]


def unlabelled_pool(measures, labels, judgments) -> list[Note]:
    """A warning when measures read automatic labels (``ppi(M)``, ``auto(M)``) and the labels
    name no pooled document (other topic or document ids, an empty file): every pooled
    document then counts as labelled 0, so ppi(M) is ht(M) and auto(M) is 0."""
    if labels is None or not any(m.family in ("ppi", "auto") for m in measures):
        return []
    import numpy as np

    from .model import UNPOOLED

    if np.isfinite(labels.value[judgments.state != UNPOOLED]).any():
        return []
    return [Note("warning", f"{labels.source}: no pooled document has a label (other topic or "
                 "document ids?): every one counts as labelled 0, so ppi(M) is ht(M) and "
                 "auto(M) 0")]


def unanswered_topics(collection, judgments) -> dict[str, list[str]]:
    """Run name -> the topics the judgments name for which the run has no ranking (only runs
    lacking some)."""
    import numpy as np

    answered = collection.segment_lengths() > 0  # (runs, topics)
    lacking = judgments.has_topic[None, :] & ~answered
    topics = collection.topics
    return {collection.run_names[r]: [topics[t] for t in np.flatnonzero(lacking[r])]
            for r in np.flatnonzero(lacking.any(axis=1))}


def unanswered(lacking: dict[str, list[str]]) -> list[Note]:
    """A warning, without ``-c``, for runs that have no ranking for some topics the judgments
    name (:func:`unanswered_topics`): their means are over fewer topics than the judgments
    name, as trec_eval 9 averages them (trec_eval 10 stops with an error; ``-c`` counts such a
    topic as 0)."""
    if not lacking:
        return []
    name, missing = next(iter(lacking.items()))
    shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    more = len(lacking) - 1
    others = f" (and {more} other run{'s' * (more > 1)})" if more else ""
    return [Note("warning", f"run {name!r}{others} has no ranking for {len(missing)} "
                 f"topic{'s' * (len(missing) != 1)} the judgments name ({shown}): its means "
                 "are over the topics it ranks, as trec_eval 9 averages (trec_eval 10 stops "
                 "there); -c counts a topic a run lacks as 0")]
