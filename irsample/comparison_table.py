r"""A comparison of runs ready for a paper: runs x measures, each cell the run's estimate, its
interval, its reliability status and superscripts naming the runs it is significantly better
than, rendered as Markdown, LaTeX or HTML.

Each run gets a letter (a, b, c, ... in input order; ranx's comparison report, Bassani 2022,
does the same; past z, two: aa, ab, ..., and the superscripts then separate their letters with
commas, since "uvwxyzaaaj" could be read as aa, aj or a, a, a, j). For measure M, run x
carries the letter of run y when the paired comparison of
:func:`irsample.comparison.compare_collection` decides the pair at level 1 - ci after the
correction over all pairs of M (Holm 1979 by default, or Benjamini & Hochberg 1995) and x's mean
is the larger:

    y in sup(x, M)  <=>  p_adjusted(x, y; M) < 1 - ci  and  mean_M(x) - mean_M(y) > 0

The estimate is the run's mean over topics with its ``ci`` interval (value -/+ z sqrt(var),
:mod:`irsample.evaluation`); the best estimate of each measure is bold. The status of an
interval is read by :func:`interval_status` from the estimates' ``status`` column, which the
evaluation provides (``ok``, or ``unreliable`` with a reason: :mod:`irsample.measures.reliability`;
``ok`` for a table without one); a cell whose interval is not ``ok`` carries a dagger, and the
table's last column lists the reasons, and the superscripts that rest on a pair whose difference
is unreliable (``ht(AP) over b: unreliable difference``; the pair's reason is in ``pairs``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from string import ascii_lowercase

import pandas as pd

from .comparison import compare_collection, comparison_measure
from .evaluation import evaluate_collection
from .formats import _latex_escape
from .model import Collection, Judgments

FORMATS = ("markdown", "latex", "html")
#: how each correction is named under the tables
CORRECTIONS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}


def interval_status(row) -> tuple[str, str]:
    """(status, reason) of one estimate: the ``status`` and ``reason`` columns of the
    evaluation's frame where it has them, ``("ok", "")`` otherwise."""
    status = row.get("status", "ok")
    return ("ok", "") if pd.isna(status) else (str(status), str(row.get("reason", "") or ""))


@dataclass(frozen=True)
class ComparisonTable:
    """The estimates (``run, measure, value, low, high, status, reason``), the pairs of
    :func:`~irsample.comparison.compare_collection` for every measure, and the settings."""

    runs: tuple[str, ...]
    measures: tuple[str, ...]
    estimates: pd.DataFrame
    pairs: pd.DataFrame
    ci: float
    correction: str
    #: the design assumed for judgments without inclusion probabilities (``None``: none)
    assumed: str | None = None
    #: per run, the judged topics it answers (a pair is compared on those both answer), the
    #: judged topics of the collection, and whether every run answers the same ones
    answered: tuple[int, ...] = ()
    judged_topics: int = 0
    same_topics: bool = True

    def letter(self, run: str) -> str:
        """The run's letter (a, b, ..., z, aa, ab, ...)."""
        i = self.runs.index(run)
        return ascii_lowercase[i] if i < 26 else _letters(i)

    def better_than(self, run: str, measure: str) -> list[str]:
        """Letters of the runs ``run`` is significantly better than on ``measure``."""
        p = self.pairs[(self.pairs.measure == measure) & self.pairs.decided]
        wins = list(p.run_b[(p.run_a == run) & (p["diff"] > 0)])
        wins += list(p.run_a[(p.run_b == run) & (p["diff"] < 0)])
        return sorted((self.letter(r) for r in wins), key=lambda s: (len(s), s))

    def superscript(self, letters: list[str]) -> str:
        """``letters`` as a superscript: run together while every run has one letter, joined
        by commas once some have two (module docstring)."""
        return ("" if len(self.runs) <= len(ascii_lowercase) else ",").join(letters)

    def render(self, fmt: str, *, places: int = 4) -> str:
        """The table in one of :data:`FORMATS`."""
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
        return {"markdown": _markdown, "latex": _latex, "html": _html}[fmt](self, places)

    def unreliable(self, *, runs: bool = True) -> list[tuple[str, str, str]]:
        """(run or ``run_a - run_b``, measure, reason) of every unreliable interval: the runs'
        means (with ``runs``), then the pairs' differences."""
        out = []
        if runs:
            for row in self.estimates.itertuples(index=False):
                status, reason = interval_status(row._asdict())
                if status != "ok":
                    out.append((row.run, row.measure, reason))
        if "status" in self.pairs.columns:
            for p in self.pairs[self.pairs.status != "ok"].itertuples(index=False):
                out.append((f"{p.run_a} - {p.run_b}", p.measure, p.reason))
        return out

    def _unreliable_wins(self, run: str, measure: str) -> list[str]:
        """Letters of the runs ``run`` is significantly better than on ``measure`` by a pair
        whose difference is unreliable."""
        if "status" not in self.pairs.columns:
            return []
        p = self.pairs[(self.pairs.measure == measure) & self.pairs.decided
                       & (self.pairs.status != "ok")]
        wins = list(p.run_b[(p.run_a == run) & (p["diff"] > 0)])
        wins += list(p.run_a[(p.run_b == run) & (p["diff"] < 0)])
        return sorted((self.letter(r) for r in wins), key=lambda s: (len(s), s))

    def cells(self, places: int):
        """Rows of (run label, [(value, interval, superscript, best, status)], status text)."""
        index = self.estimates.set_index(["run", "measure"])
        best = {m: self.estimates[self.estimates.measure == m].value.max()
                for m in self.measures}
        rows = []
        for run in self.runs:
            cells, notes = [], []
            for m in self.measures:
                row = index.loc[(run, m)]
                status, reason = interval_status(row)
                if status != "ok":
                    notes.append(f"{m}: {status}" + (f" ({reason})" if reason else ""))
                shaky = self._unreliable_wins(run, m)
                if shaky:
                    notes.append(f"{m} over {', '.join(shaky)}: unreliable difference")
                interval = (f"[{row.low:.{places}f}, {row.high:.{places}f}]"
                            if pd.notna(row.low) else "")
                cells.append((f"{row.value:.{places}f}", interval,
                              self.superscript(self.better_than(run, m)),
                              row.value == best[m], status))
            rows.append((f"({self.letter(run)}) {run}", cells, "; ".join(notes) or "ok"))
        return rows

    def caption(self) -> str:
        return (f"Mean over topics with its {self.ci:.0%} interval. Superscripts: the runs "
                f"(letters) a run is significantly better than, paired tests at "
                f"{1 - self.ci:.2g} with {CORRECTIONS[self.correction]} correction over all "
                f"pairs of each measure. Best estimate in bold; a dagger marks an interval "
                f"whose status is not ok." + (
                    f" Inclusion probabilities assumed {self.assumed}: the judgments do not "
                    "carry them." if self.assumed else ""))


def _letters(i: int) -> str:
    out = ""
    i += 1
    while i:
        i, rem = divmod(i - 1, 26)
        out = ascii_lowercase[rem] + out
    return out


def comparison_table(collection: Collection, judgments: Judgments, measures, *,
                     ci: float = 0.95, correction: str = "holm", variance: str = "design",
                     rel_level: int = 1) -> ComparisonTable:
    """The :class:`ComparisonTable` of ``measures`` (design-based, ``ht(M)``) on one judged
    sample (module docstring)."""
    chosen = [comparison_measure(m) for m in measures]
    ev = evaluate_collection(collection, judgments, chosen, rel_level=rel_level, ci=ci)
    frame = ev.frame(per_topic=False)
    names = {m.trec_name: m.name for m in chosen}
    frame = frame.assign(measure=frame.measure.map(lambda n: names.get(n, n)))
    keep = [c for c in ("run", "measure", "value", "low", "high", "status", "reason")
            if c in frame.columns]
    pairs = pd.concat([compare_collection(collection, judgments, m, ci=ci, correction=correction,
                                          variance=variance, rel_level=rel_level)
                       for m in chosen], ignore_index=True)
    answered = (collection.segment_lengths() > 0) & judgments.has_topic
    return ComparisonTable(tuple(collection.run_names), tuple(m.name for m in chosen),
                           frame[keep].reset_index(drop=True), pairs, ci, correction,
                           ev.assumed, tuple(int(n) for n in answered.sum(axis=1)),
                           int(judgments.has_topic.sum()), bool((answered == answered[0]).all()))


def _markdown(table: ComparisonTable, places: int) -> str:
    def cell(value, interval, sup, best, status):
        value = f"**{value}**" if best else value
        return (f"{value} {interval}".strip() + (f"<sup>{sup}</sup>" if sup else "")
                + ("†" if status != "ok" else ""))

    def md(text):
        return text.replace("|", "\\|").replace("_", "\\_")

    head = ["run", *map(md, table.measures), "status"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" + "---:|" * len(table.measures)
             + "---|"]
    for label, cells, notes in table.cells(places):
        lines.append("| " + " | ".join([md(label), *(cell(*c) for c in cells), md(notes)]) + " |")
    return "\n".join(lines) + "\n\n" + table.caption() + "\n"


def _latex(table: ComparisonTable, places: int) -> str:
    def cell(value, interval, sup, best, status):
        value = rf"\textbf{{{value}}}" if best else value
        text = f"{value} {interval}".strip() + (f"$^{{{sup}}}$" if sup else "")
        return text + (r"$^\dagger$" if status != "ok" else "")

    lines = [r"\begin{table}", r"\centering",
             r"\begin{tabular}{l" + "r" * len(table.measures) + "l}", r"\toprule",
             " & ".join(["Run", *map(_latex_escape, table.measures), "Status"]) + r" \\",
             r"\midrule"]
    for label, cells, notes in table.cells(places):
        lines.append(" & ".join([_latex_escape(label), *(cell(*c) for c in cells),
                                 _latex_escape(notes)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\caption{" + _latex_escape(table.caption()) + "}",
              r"\end{table}"]
    return "\n".join(lines) + "\n"


def _html(table: ComparisonTable, places: int) -> str:
    def cell(value, interval, sup, best, status):
        value = f"<b>{value}</b>" if best else value
        return (f"{value} {interval}".strip() + (f"<sup>{sup}</sup>" if sup else "")
                + ("&dagger;" if status != "ok" else ""))

    esc = html.escape
    head = "".join(f"<th>{esc(h)}</th>" for h in ["run", *table.measures, "status"])
    rows = [f"<tr><td>{esc(label)}</td>" + "".join(f"<td>{cell(*c)}</td>" for c in cells)
            + f"<td>{esc(notes)}</td></tr>" for label, cells, notes in table.cells(places)]
    return ("<table>\n<caption>" + esc(table.caption()) + "</caption>\n<thead><tr>" + head
            + "</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>\n")
