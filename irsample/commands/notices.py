"""What the command line tells the user on standard error besides errors: a one-line notice when
numba compiles kernels (first use after install, or after the sources changed), with the time
that command's compilation takes, progress bars for long commands, and warnings about measures
that ignore part of the input.

Progress bars (tqdm) are shown by default when standard error is a terminal, and never when it
is not (pipes, files, tests); ``--no-progress`` turns them off, ``--progress`` forces them on.
"""

from __future__ import annotations

import os
import sys

#: shown once per process, on standard error (a terminal or not), when a command starts
#: compiling a kernel of irsample that numba's cache (:func:`irsample.numba_cache_dir`) lacks
COMPILE_NOTICE = "irsample: compiling kernels on first use (once, about {seconds} s)..."

#: seconds the first use of a command spends compiling its kernels: CPU seconds (what one of 2
#: cores takes when nothing else runs) of runs with an empty kernel cache (issue 27), rounded.
#: ``eval``: one of trec_eval's measures (``-m map`` on trec_eval's test file: 8.0-8.3 s, 8.6-9.0 s
#: in a fresh venv and cache on a quiet machine, wall 9.1 s), 0.05 s per further family of
#: trec_eval's (the default ``official``, 12 families: 9.6 s) and 1.2 s per family of estimators
#: (``--ci 0.95`` with xinfAP, infAP, ht(AP), ht(nDCG), infNDCG: 14.1-14.7 s; ``all_trec``, 32
#: families and 2 of estimators: 11.1 s). ``demo`` (in rounds): 15.2 s wall on a fresh venv and
#: cache. ``pool``: 7.2 s. Commands not listed compile the readers and the collection's kernels and
#: a few of their own.
FIRST_USE_SECONDS = {"eval": 9, "demo": 15, "pool": 7}
SECONDS_PER_FAMILY = 0.05
SECONDS_PER_ESTIMATOR = 1.2
DEFAULT_FIRST_USE_SECONDS = 10


def first_use_seconds(args=None) -> int:
    """The compilation time :data:`COMPILE_NOTICE` announces for the command of ``args`` (the
    parsed command line; None: the default)."""
    command = getattr(args, "command", None)
    seconds = FIRST_USE_SECONDS.get(command, DEFAULT_FIRST_USE_SECONDS)
    if command == "eval":
        families, estimators = _kinds(getattr(args, "measure", None))
        seconds += SECONDS_PER_FAMILY * max(families - 1, 0) + SECONDS_PER_ESTIMATOR * estimators
    return round(seconds)


def _kinds(names) -> tuple[int, int]:
    """Of the measures named (default: ``official``): how many families are trec_eval's, and
    how many are not (estimators)."""
    from ..measures import parse

    try:
        measures = [m for name in (names or ["official"]) for m in _as_list(parse(name))]
    except Exception:  # noqa: BLE001 - a bad name is reported by the command itself
        return 1, 0
    ours = [type(m).__module__.startswith("irsample.measures.trec_eval") for m in measures]
    families = {m.family for m, trec in zip(measures, ours) if trec}
    return len(families), len({m.family for m, trec in zip(measures, ours) if not trec})


def _as_list(parsed):
    return list(parsed) if isinstance(parsed, (list, tuple)) else [parsed]


def compile_notice(args=None) -> str:
    """:data:`COMPILE_NOTICE` with the estimate for the command of ``args``."""
    return COMPILE_NOTICE.format(seconds=first_use_seconds(args))


_announced = False


def announce_compilation(stream=None, args=None) -> None:
    """Print :func:`compile_notice` when numba starts compiling a kernel of irsample, once per
    process, to ``stream`` (default: standard error, a terminal, pipe or log alike). numba
    fires its ``numba:compile`` event only on a cache miss, after trying the on-disk cache,
    and before it compiles, so the notice comes before the wait and warm runs stay silent;
    only the kernels a command calls are compiled (none is compiled eagerly at import)."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            global _announced
            dispatcher = (ev.data or {}).get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if _announced or not module.startswith("irsample"):
                return
            _announced = True
            print(compile_notice(args), file=stream or sys.stderr, flush=True)

        def on_end(self, ev):
            pass

    if not getattr(announce_compilation, "installed", False):
        event.register("numba:compile", Listener())
        announce_compilation.installed = True


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


def add_progress_option(parser) -> None:
    """``--progress`` / ``--no-progress`` (default: a bar when standard error is a terminal)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show progress bars on standard error (default: when it is a "
                       "terminal)")
    group.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bars")


def progress_enabled(args) -> bool:
    """Whether to draw progress bars: ``--progress``/``--no-progress``, else whether standard
    error is a terminal."""
    chosen = getattr(args, "progress", None)
    return bool(chosen) if chosen is not None else _isatty(sys.stderr)


def bar(enabled: bool, **kwargs):
    """A tqdm bar on standard error (disabled: a no-op bar, tqdm not even imported)."""
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    try:  # a terminal that reports no size (0 x 0) gets 80 x 24 (tqdm hides bars below row 0)
        sized = os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (AttributeError, OSError, ValueError):
        sized = False
    size = {"dynamic_ncols": True} if sized else {"ncols": 80, "nrows": 24}
    return tqdm(file=sys.stderr, leave=False, **size, **kwargs)


class Steps:
    """Progress through the named stages of a command: ``with Steps([...], enabled) as s:``,
    then ``s.next()`` before each stage (the bar shows the stage and the elapsed time)."""

    def __init__(self, names, enabled: bool):
        self.names = list(names)
        self.enabled = enabled
        self._bar = None
        self._i = -1

    def __enter__(self):
        self._bar = bar(self.enabled, total=len(self.names), unit="step",
                        bar_format="{desc} [{n_fmt}/{total_fmt}, {elapsed}]")
        return self

    def next(self) -> None:
        if self._i >= 0:
            self._bar.update(1)
        self._i += 1
        self._bar.set_description_str(self.names[self._i])

    def __exit__(self, *exc):
        self._bar.close()
        return False


class _NoBar:
    def update(self, n=1):
        pass

    def set_description_str(self, text):
        pass

    def set_postfix_str(self, text):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


#: estimators that read a sample as one uniform stratum, and their stratified counterparts
STRATIFIED_COUNTERPART = {"infAP": "xinfAP"}
#: measures that take an incomplete sample as uniform (they drop or reweigh the unjudged
#: documents alike wherever they are), and what estimates from a stratified design instead
UNIFORM_READERS = {"infAP": "ht(AP) or statAP", "induced": "ht(M)", "condensed": "ht(M)"}


def warn_ignored_strata(measures, judgments, stream=None) -> list[str]:
    """Warn (once per measure family) on standard error when judgments that tell they come from
    a stratified design (stratified qrels with several strata, or unequal inclusion
    probabilities: prels of a stratified or importance sample) meet a measure that takes the
    sample as uniform (infAP, induced and condensed measures), and when prels with unequal
    probabilities, or listing the sampled documents alone, meet sample_eval's estimators
    (``reads_strata``), which read strata and not the probabilities; returns the
    warnings."""
    strata = len(getattr(judgments, "stratum_labels", ()))
    unequal = bool(getattr(judgments, "unequal_probabilities", False))
    prels = getattr(judgments, "inclusion", None) is not None
    listed = getattr(judgments, "pool_listed", True)
    if strata <= 1 and not unequal and listed:
        return []
    out = stream or sys.stderr
    warned = []
    strata_readers = {m.family for m in measures if getattr(m, "reads_strata", False)}
    for family in dict.fromkeys(m.family for m in measures):
        if family in strata_readers and prels and (unequal or not listed):
            read_as = ("the whole pool (these prels list the sampled documents alone)"
                       if not listed else "a uniform sample of the pool")
            text = (f"irsample: warning: {family} estimates from the strata of stratified "
                    "qrels; these prels give each judged document its own inclusion "
                    f"probability, which it ignores, reading the judged documents as {read_as}; "
                    "statAP" + (" and ht(M) estimate" if listed else " estimates")
                    + " from them")
            print(text, file=out)
            warned.append(text)
        if family not in UNIFORM_READERS or (strata <= 1 and not unequal):
            continue
        if family in STRATIFIED_COUNTERPART and strata > 1:
            text = (f"irsample: warning: {family} ignores the {strata} strata of these "
                    "stratified qrels (it takes the sample as uniform); "
                    f"{STRATIFIED_COUNTERPART[family]} estimates from stratified samples")
        else:
            how = "unequal inclusion probabilities" if unequal else f"{strata} strata"
            text = (f"irsample: warning: {family} takes the sample as uniform, but these "
                    f"judgments come from a stratified design ({how}); "
                    f"{UNIFORM_READERS[family]} estimates from them")
        print(text, file=out)
        warned.append(text)
    return warned


#: the reference estimators for sampled judgments that count every grade of 1 or more as
#: relevant, as sample_eval.pl and statAP_MQ_eval do (neither has a relevance level option)
LEVEL_BLIND = ("xinfAP", "iP", "iIPrec", "inum_rel", "inum_rel_ret", "statAP", "statAP_var",
               "statP", "statRprec", "statnum_rel")


def warn_ignored_level(measures, level: int, stream=None) -> list[str]:
    """Warn once on standard error when ``-l`` sets a relevance level above 1 and some of
    ``measures`` are reference estimators that do not read it (:data:`LEVEL_BLIND`); returns
    the warnings (none or one)."""
    if level <= 1:
        return []
    blind = [f for f in dict.fromkeys(m.family for m in measures) if f in LEVEL_BLIND]
    if not blind:
        return []
    text = (f"irsample: warning: {', '.join(blind)} count every grade of 1 or more as relevant "
            f"whatever -l (as sample_eval.pl and statAP do); -l {level} applies to trec_eval's "
            "measures, infAP and the design-based estimators (ht(M), ppi(M))")
    print(text, file=stream or sys.stderr)
    return [text]


def warn_unsampled(measures, topics, judgments, stream=None) -> list[str]:
    """Warn once on standard error, with or without intervals, when estimators that read
    inclusion probabilities or the unjudged documents' places (``needs_inclusion``,
    ``reads_unjudged_ranks``) meet judgments where some pooled documents have inclusion
    probability 0 (:mod:`irsample.measures.unsampled`: a stratum with nothing judged, prels
    listing pi = 0): no estimate of their relevance exists; ``topics``: the collection's topic
    ids; returns the warnings."""
    from ..measures.unsampled import unsampled_summary

    unstated = judgments.probabilities == "none" and judgments.assumed is None
    reading = [m.name for m in measures  # not those the refusal of unstated designs stops
               if (m.needs_inclusion and not unstated)
               or getattr(m, "reads_unjudged_ranks", False)]
    if not reading:
        return []
    count, topics = unsampled_summary(topics, judgments)
    if not count:
        return []
    from ..measures.reliability import named_topics

    text = (f"irsample: warning: {judgments.source}: {count} pooled document"
            f"{'s' * (count != 1)} {'have' if count != 1 else 'has'} inclusion probability 0 "
            f"(in strata with nothing judged, or listed so) on {len(topics)} topic"
            f"{'s' * (len(topics) != 1)}: {named_topics(topics)}; {', '.join(reading)} cannot "
            "estimate their relevance (with --ci the runs that rank them are flagged); judge "
            "at least one document of each such stratum")
    print(text, file=stream or sys.stderr)
    return [text]


def note_thin_tail(measures, judgments, collection, stream=None) -> list[str]:
    """One line on standard error when design-based estimators (``needs_inclusion``) meet
    judgments that give documents their own inclusion probabilities (prels, a merged design)
    where some pooled document is sampled thinly: pi below 1/11 of its topic's judged share
    n_t / N_t (:func:`~irsample.design.sampling.importance.thinly_sampled`), as statAP's AP
    prior samples a deep pool's tail. The pi of every listed document is read, judged or not
    (prels listing the pool give both; a draw holds few of the thin ones, since it draws them
    thinly: CACM's importance(0.1) at seed 3 has 70 pool documents below the share and none of
    them judged). A few relevant documents there then carry an estimate and its variance
    together, which no rule read from the sample sees (REPRODUCTION.md, "A floor for importance
    samples"); the note says so and names the floored design, which ``irsample sample`` draws.
    ``collection``: the judgments' collection. Returns the notes."""
    reading = [m.name for m in measures if m.needs_inclusion]
    if not reading or judgments.inclusion is None or not judgments.unequal_probabilities:
        return []
    import numpy as np

    from ..design.sampling.importance import DEFENSIVE_FLOOR, THIN_EVIDENCE, thinly_sampled

    low = thinly_sampled(judgments.listed_inclusion, collection.tdi_topic,
                         judgments.judged_share())
    if not low.any():
        return []
    from ..measures.reliability import named_topics

    topics = [collection.topics[t] for t in np.unique(collection.tdi_topic[low])]
    count = int(low.sum())
    verb = "reads" if len(reading) == 1 else "read"
    listed = int(np.isfinite(judgments.listed_inclusion).sum())
    text = (f"irsample: note: {judgments.source}: {count} of {listed} pooled documents "
            f"{'are' if count != 1 else 'is'} sampled with an inclusion probability below 1/11 "
            "of the topic's judged share (the smallest "
            f"{np.nanmin(judgments.listed_inclusion[low]):.4f}; {len(topics)} topic"
            f"{'s' * (len(topics) != 1)}: {named_topics(topics)}): {', '.join(reading)} {verb} "
            "the ones drawn there at weights 1/pi, where a few relevant documents carry an "
            f"estimate and its variance together and no flag sees it ({THIN_EVIDENCE}); "
            f"samples drawn with importance(F,floor={DEFENSIVE_FLOOR:g}) keep every probability "
            "at that share at least")
    print(text, file=stream or sys.stderr)
    return [text]


#: a run is noted when more than this share of its top :data:`OUTSIDE_DEPTH` documents (over
#: the topics with judgments) lies outside the judged pool
OUTSIDE_SHARE, OUTSIDE_DEPTH = 0.5, 10


def outside_pool_share(collection, judgments, depth: int = OUTSIDE_DEPTH):
    """Per run: the share of its top ``depth`` documents, over the topics with any document in
    the judgments, that are absent from them (unpooled); NaN for a run with none there."""
    import numpy as np

    from ..model import UNPOOLED

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


def note_outside_pool(measures, judgments, collection, stream=None) -> list[str]:
    """One line on standard error when design-based estimators (``needs_inclusion``) meet runs
    whose top 10 documents lie mostly (over :data:`OUTSIDE_SHARE`) outside the judged pool:
    they read such documents as not relevant, as trec_eval does, so the run's estimate and its
    interval are of the pool's judgments, not of the run's own documents, and a run that did
    not add to the pool may be rated low there (pool bias: Zobel, SIGIR 1998; Buckley et al.,
    Inf. Retr. 10, 2007) where no interval can see it. Not for complete qrels (a census, which
    lists only the relevant documents of Vaswani and CACM: absent means judged not relevant
    there, 0.66-0.82 of their runs' top 10). On TREC-8's 129 runs and its official
    pool the share is at most 0.38 but for one run at 0.88; a run of another collection whose
    topic ids overlap reads near 1. Returns the notes."""
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
    text = (f"irsample: note: {judgments.source}: {len(noted)} run"
            f"{'s rank' if len(noted) != 1 else ' ranks'} mostly documents outside the judged "
            f"pool in their top {OUTSIDE_DEPTH} (share unpooled: {names}{more}): "
            f"{', '.join(reading)} {verb} those as not relevant, so these runs' estimates are "
            "of the pool's judgments and may rate them low (pool bias; no interval shows it): "
            "pool them, or check that the runs and judgments are of the same collection")
    print(text, file=stream or sys.stderr)
    return [text]


def note_census(measures, judgments, stream=None) -> list[str]:
    """One line on standard error when design-based estimators (``needs_inclusion``) print
    intervals (``eval --ci``, ``compare``) from judgments that are a census: every pooled
    document judged, none marked unjudged (-1), no strata or prels. By the spec's three
    states that is complete judgments of the pool, so their intervals have width 0; a
    sample's judgments written as plain qrels read the same and cannot be told apart, so the
    note says how to give a sample. Returns the notes."""
    reading = [m.name for m in measures if m.needs_inclusion]
    if not reading or judgments.probabilities != "census":
        return []
    verb = "reads" if len(reading) == 1 else "read"
    text = (f"irsample: note: {judgments.source} marks no pooled document unjudged (-1) and "
            f"carries no strata or prels: {', '.join(reading)} {verb} it as complete "
            "judgments of the pool (a census: intervals of width 0); judgments of a sample need "
            "their strata (--qrels-format strata), prels, or -1 rows with --assume uniform")
    print(text, file=stream or sys.stderr)
    return [text]
