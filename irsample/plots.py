"""Figures (matplotlib, Agg backend: no display needed).

- :func:`new_figure` / :func:`save_figure`: a row of panels on the Agg backend, and writing it
  (every figure of the package is made with them);
- :func:`estimate_vs_truth`: per-run estimates of a mean measure against the truth, with
  confidence-interval bars and the line y = x (Yilmaz, Kanoulas & Aslam, SIGIR 2008, Fig. 1).
- :func:`metric_lines`: an agreement statistic (Kendall's tau, RMS error, Pearson's rho) against
  the share of the pool judged, one line per estimator (Yilmaz & Aslam, IR 2008, Figs. 16, 18,
  23; Yilmaz, Kanoulas & Aslam, SIGIR 2008, Figs. 3-4).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: most panels in a row: more are wrapped into further rows, so a report's figure stays
#: readable at page width (six in one row made a 3024 x 480 pixel strip)
PANELS_PER_ROW = 3


def new_figure(n: int, width: float, height: float):
    """A figure of ``n`` panels (``width`` x ``height`` inches each), :data:`PANELS_PER_ROW`
    to a row, on matplotlib's Agg backend (no display needed): (figure, list of the ``n``
    axes; the unused cells of the last row are hidden)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = max(1, min(n, PANELS_PER_ROW))
    rows = max(1, -(-n // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    cells = list(axes.ravel())
    for ax in cells[n:]:
        ax.set_visible(False)
    return fig, cells[:max(n, 1)]


#: figure formats by file suffix (matplotlib writes each without extra packages)
FIGURE_FORMATS = ("png", "pdf", "svg", "eps", "ps", "jpg", "jpeg")


def figure_format(path: str | Path) -> str:
    """The format a figure path asks for by its suffix (``.pdf`` -> ``pdf``); ``png`` without
    one; :class:`~irsample.errors.InputError` for a suffix that is not a figure format (a
    ``.pdf`` path once received PNG bytes)."""
    from .errors import InputError

    suffix = Path(path).suffix.lower().lstrip(".")
    if not suffix:
        return "png"
    if suffix not in FIGURE_FORMATS:
        raise InputError(f"a figure is written as {', '.join(FIGURE_FORMATS)} (by the "
                         f"file's suffix), not .{suffix}", str(path))
    return "jpeg" if suffix == "jpg" else suffix


def save_figure(fig, path: str | Path, *, title: str = "", dpi: int = 120) -> Path:
    """Lay out ``fig`` (with ``title`` above its panels), write it in the format its suffix
    names (:func:`figure_format`; all or nothing, see :func:`irsample.io.output.write_atomic`),
    close it; its path."""
    import io

    import matplotlib.pyplot as plt

    from .io.output import write_atomic

    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=dpi, format=figure_format(path))
    plt.close(fig)
    write_atomic(path, buffer.getvalue())
    return path


def estimate_vs_truth(
    panels: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]],
    path: str | Path,
    *,
    title: str = "",
    flagged: Sequence[np.ndarray | None] | None = None,
) -> Path:
    """One panel per ``(label, truth, estimate, low, high)`` (arrays over runs); writes a PNG.

    Points are (truth, estimate); vertical bars span [low, high]; a run whose interval misses
    the truth is drawn in red. A panel whose ``low`` and ``high`` are None shows point estimates
    only (no interval is reported for them). ``flagged`` (per panel, a mask over runs or None):
    the intervals whose status is unreliable, drawn grey and dashed with hollow markers (blue
    or red as above), so a reader does not take them for trusted ones; a legend then names the
    kinds drawn. Returns the path written.
    """
    fig, axes = new_figure(len(panels), 4.2, 4.0)
    for p, (ax, (label, truth, estimate, low, high)) in enumerate(zip(axes, panels)):
        truth, estimate = np.asarray(truth), np.asarray(estimate)
        points = low is None
        low = estimate if points else np.asarray(low)
        high = estimate if points else np.asarray(high)
        covered = (low <= truth) & (truth <= high) if not points else np.ones(len(truth), bool)
        marked = flagged[p] if flagged is not None and flagged[p] is not None else None
        marked = np.zeros(len(truth), bool) if marked is None else np.asarray(marked, bool)
        top = float(max(truth.max(), np.max(high), 1e-9)) * 1.05
        ax.plot([0, top], [0, top], color="0.6", linestyle="--", linewidth=1)
        kinds = ((covered & ~marked, "tab:blue", False, "covers the truth"),
                 (~covered & ~marked, "tab:red", False, "misses the truth"),
                 (covered & marked, "tab:blue", True, "flagged, covers"),
                 (~covered & marked, "tab:red", True, "flagged, misses"))
        for mask, color, dashed, name in kinds:
            if mask.any():
                drawn = ax.errorbar(
                    truth[mask], estimate[mask],
                    yerr=None if points else [estimate[mask] - low[mask],
                                              high[mask] - estimate[mask]],
                    fmt="o", markersize=4 if dashed else 3, color=color,
                    ecolor="0.55" if dashed else color, capsize=2, linewidth=1,
                    markerfacecolor="none" if dashed else color, label=name)
                if dashed and not points:
                    for bars in drawn[2]:
                        bars.set_linestyle("--")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel(f"true {label.split(' ')[-1]}")
        ax.set_ylabel(label.rsplit(" vs ", 1)[0])
        shown = ("point estimates (no calibrated interval)" if points
                 else f"{covered.sum()}/{len(covered)} intervals cover")
        if marked.any():
            shown += f", {marked.sum()} flagged"
            ax.legend(fontsize=7, loc="upper left")
        ax.set_title(textwrap.fill(f"{label}: {shown}", 52), fontsize=9)  # within the panel
    return save_figure(fig, path, title=title)


def metric_lines(
    panels: Sequence[tuple[str, dict]],
    path: str | Path,
    *,
    xlabel: str = "% of the pool judged",
    title: str = "",
    references: dict | None = None,
) -> Path:
    """One panel per ``(ylabel, {line label: (x, y)})``; ``references`` maps a panel's ylabel to
    ``{label: (x, y)}`` points drawn as crosses (a paper's published values). Writes a PNG and
    returns its path."""
    fig, axes = new_figure(len(panels), 4.4, 3.8)
    for ax, (ylabel, lines) in zip(axes, panels):
        for label, (x, y) in lines.items():
            ax.plot(np.asarray(x, dtype=float), np.asarray(y, dtype=float), marker="o",
                    markersize=3, linewidth=1.2, label=label)
        for label, (x, y) in (references or {}).get(ylabel, {}).items():
            ax.plot(np.atleast_1d(x), np.atleast_1d(y), "x", markersize=7, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_figure(fig, path, title=title)
