"""The text of ``irsample demo`` (:mod:`irsample.commands.demo`): the block printed after each
round, the final per-run table, the agreement with the truth, and what is still flagged with the
judging that would resolve it.

Kept apart from the loop so that the story it tells can be read (and tested) on its own: every
number comes from the rounds' states, their evaluations' statuses
(:mod:`irsample.measures.reliability`) and the frame truth; nothing is softened (an interval
still flagged after the last round is printed with its ``!`` and its reason).
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter

import numpy as np

from ..measures.reliability import FEW, MAX_BIAS_SE, SETTLED, named_topics, weak_topics

#: per target measure, the design-based estimator the demo prints with its 95% interval
ESTIMATORS = {"AP": "ht(AP)", "nDCG": "ht(nDCG)", "P@10": "ht(P@10)"}
#: the truth's column heading per target
TRUTH_NAMES = {"AP": "MAP", "nDCG": "nDCG", "P@10": "P@10"}
WIDTH = 100


def wrap(text: str, indent: str = "  ", first: str = "") -> list[str]:
    """``text`` as lines of at most :data:`WIDTH` characters, later lines indented."""
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=indent,
                         break_on_hyphens=False, break_long_words=False)


def merge_reasons(reasons) -> str:
    """One reason for several run means flagged alike: each reason's parts (``; ``), their
    parenthesised topic lists dropped (the advice names topics), grouped by wording; numbers
    that differ between the runs shown as their range (``estimated bias 1.66-1.80 of its
    standard error``), the parts most runs share first."""
    groups: dict[str, list[list[str]]] = {}
    count: Counter = Counter()
    for reason in reasons:
        for part in str(reason).split("; "):
            part = re.sub(r"\s*\([^)]*\)", "", part).strip()
            if not part:
                continue
            key = re.sub(r"\d+(?:\.\d+)?", "#", part)
            groups.setdefault(key, []).append(re.findall(r"\d+(?:\.\d+)?", part))
            count[key] += 1
    out = []
    for key, _ in count.most_common():
        numbers = groups[key]
        text = key
        for values in zip(*numbers):
            low, high = min(values, key=float), max(values, key=float)
            text = text.replace("#", low if low == high else f"{low}-{high}", 1)
        out.append(text)
    return "; ".join(out)


def flag_lines(names, flagged: np.ndarray, reasons: np.ndarray, n_runs: int,
               mark: str = "") -> list[str]:
    """Per estimator (column of ``flagged``/``reasons``, runs x estimators): how many of the run
    means are flagged and why, wrapped."""
    width = max(len(n) for n in names) + 1
    lines = []
    for k, name in enumerate(names):
        rows = np.flatnonzero(flagged[:, k])
        if not len(rows) and mark:
            continue
        if not len(rows):
            lines.append(f"  {mark}{name + ':':{width}s} none of {n_runs} flagged")
            continue
        text = (f"{name + ':':{width}s} {len(rows)} of {n_runs} flagged: "
                f"{merge_reasons(reasons[rows, k])}")
        lines += wrap(text, " " * (3 + len(mark) + width), f"  {mark}")
    return lines


def plan_line(frame, state, take: np.ndarray, number: int, top: int = 0) -> list[str]:
    """What the next round judges: ``take`` (new judgments per cell, the allocation of
    :func:`irsample.design.rounds.allocation`) summed by best-rank band, over how many topics,
    and which topics and top bands (the ``top`` first) it judges whole
    (:func:`irsample.design.rounds.judged_whole_note`)."""
    from ..design.rounds import band_names, judged_whole_note

    names = band_names()
    band = (np.arange(len(take)) % state.n_cells_per_topic) % len(names)
    per_band = np.bincount(band, weights=take, minlength=len(names)).astype(int)
    parts = [f"ranks {n}: {c:,}" for n, c in zip(names, per_band) if c]
    topics = len(np.unique(np.flatnonzero(take) // state.n_cells_per_topic))
    whole = judged_whole_note(frame, state, take, top)
    return wrap(f"-> round {number} judges {int(take.sum()):,} more in {topics} topics "
                f"({', '.join(parts)}){whole}; each half of the {'other ' if whole else ''}"
                "topics is allocated from the other half's judgments, where relevant documents "
                "were found", "     ", "  ")


def round_block(number: int, state, frame_size: int, names, flagged, reasons,
                n_runs: int, final: bool = False) -> list[str]:
    """The block after round ``number``: judged so far, and per estimator what is flagged (after
    the ``final`` round: below the table, with the advice)."""
    new = f", {state.spent[-1]:,} new" if number > 1 else ""
    head = (f"round {number}: {state.judged:,} judged ({state.judged / frame_size:.1%} of the "
            f"pool{new})")
    if final:
        return [head + ("; the last round: its estimates follow" if flagged.any()
                        else "; nothing flagged")]
    return [head, *flag_lines(names, flagged, reasons, n_runs)]


def table(run_names, truth, est, low, high, flagged, targets) -> list[str]:
    """The per-run table, best true MAP first: per target the truth, the estimate and its 95%
    interval, ``!`` after a flagged one (``truth`` runs x targets; the others runs x
    estimators, in the targets' order)."""
    width = min(max(len(n) for n in run_names), 22)
    head = f"{'run':{width}s}"
    for target in targets:
        head += f" {TRUTH_NAMES[target]:>7s} {ESTIMATORS[target]:>8s} {'95% interval':>17s} "
    out = [head]
    for r in np.argsort(-truth[:, 0], kind="stable"):
        line = f"{run_names[r][:width]:{width}s}"
        for k in range(len(targets)):
            line += (f" {truth[r, k]:7.4f} {est[r, k]:8.4f} [{low[r, k]:6.4f}, "
                     f"{high[r, k]:6.4f}]{'!' if flagged[r, k] else ' '}")
        out.append(line.rstrip())
    out[0] = out[0].rstrip()
    return out


def agreement_lines(targets, truth, est, covered, flagged) -> list[str]:
    """Per estimator: Kendall tau and RMS error against the truth, how many intervals cover the
    true value, and how many of the unflagged ones do."""
    from scipy.stats import kendalltau

    n = truth.shape[0]
    lines = []
    for k, target in enumerate(targets):
        name = ESTIMATORS[target]
        tau = float(kendalltau(est[:, k], truth[:, k]).statistic)
        rms = float(np.sqrt(np.mean((est[:, k] - truth[:, k]) ** 2)))
        ok = ~flagged[:, k]
        among = (f"{int(covered[ok, k].sum())}/{int(ok.sum())} unflagged cover it" if ok.any()
                 else "none unflagged")
        lines.append(f"{name:8s} vs truth: Kendall tau {tau:.3f}, RMS error {rms:.4f}; "
                     f"{int(covered[:, k].sum())}/{n} intervals cover the true value, {among}")
    return lines


def advice(frame, state, topics, names, flagged, reasons, causes, covered,
           expected=None) -> list[str]:
    """What is still flagged after the last round, why, whether those intervals covered the
    truth here, and which topics to judge further: the topics the reasons name, most often
    named first; for the weak ones (:data:`~irsample.measures.reliability.FEW` or fewer judged
    relevant documents), what the rule needs to clear them, read from the frame's complete
    judgments (the demo knows the truth). ``expected``: per topic, the relevant documents the
    design is expected to judge, which the rule reads instead of the judged count where the
    sample is a stratified simple random one (``Measure.expected_found``)."""
    n_runs = flagged.shape[0]
    rounds = state.rounds
    lines = [f"still flagged after {rounds} round{'s' if rounds > 1 else ''} "
             f"({state.judged / len(frame):.0%} of the pool judged):",
             *flag_lines(names, flagged, reasons, n_runs, mark="! ")]
    hit = int(covered[flagged].sum())
    lines += wrap(f"Do not trust the flagged intervals: here {hit} of the {int(flagged.sum())} "
                  f"cover{'s' if hit == 1 else ''} the true value.", "  ", "  ")
    mentions = Counter(t for r, k in zip(*np.nonzero(flagged)) for t in causes[r, k])
    index = {str(t): i for i, t in enumerate(topics)}
    order = sorted(mentions, key=lambda t: (-mentions[t], index[t]))
    judged = state.sample.judged
    size = np.bincount(frame.topic, minlength=len(topics))
    done = np.bincount(frame.topic[judged], minlength=len(topics))
    found = np.bincount(frame.topic[judged & (frame.rel > 0)], minlength=len(topics))
    present = np.bincount(frame.topic[frame.rel > 0], minlength=len(topics))
    idx = np.array([index[t] for t in order], dtype=np.int64)
    share = np.where(size > 0, done / np.maximum(size, 1), 1.0)  # as the rule reads it
    weak = idx[weak_topics(found[idx], share[idx],
                           None if expected is None else expected[idx])]
    text = f"To resolve it, judge topics {named_topics(order)} further."
    if len(weak):
        few = weak[present[weak] <= FEW]
        need = sum(int(size[t] - done[t]) for t in few)  # weak until judged whole
        counted = ("are judged" if expected is None else
                   "are expected of the design (each document's sampling rate times its "
                   "fitted probability of relevance, summed)")
        text += (f" A topic stops counting as weak once one of its relevant documents is "
                 f"judged and {FEW + 1} {counted} while less than {SETTLED:.0%} of its pool is "
                 f"judged, once {FEW + 1} are judged, or once all of its pool is.")
        if len(few):
            none = int((present[few] == 0).sum())
            text += (f" {len(few)} of the {len(weak)} weak topics have {FEW} or fewer relevant "
                     f"documents in the whole pool ({f'{none} none; ' if none else ''}the "
                     f"complete judgments show it): no sample finds more, only judging the "
                     f"whole of their pools clears them, {need:,} more judgments.")
        rest = len(weak) - len(few)
        if rest:
            text += (f" The other {rest} hold more relevant documents than judged so far; "
                     "more rounds find them.")
    if any("estimated bias" in str(reasons[r, k]) for r, k in zip(*np.nonzero(flagged))):
        text += (f" The estimated bias (the rule allows {MAX_BIAS_SE} of a standard error) "
                 "shrinks as these topics are judged further, but so does the standard error, "
                 "so it may take many rounds: on the bundled collections, in rounds of 10% "
                 "until nothing was flagged, CACM stopped after 7-9 rounds (100 seeds) and "
                 "Vaswani judged all of its pool (20 seeds; docs/usage.md, \"The demo\").")
    text += " More rounds: --rounds; a larger first round: --fraction."
    return lines + wrap(text, "  ", "  ")
