"""Part of a recipe's grid, on the whole grid's draws: the ``cells`` and ``labels`` parameters of
``model-assisted`` (``model_assisted.Setup.trial`` seeds each cell by its place in the grid,
so a chosen cell draws what it draws in the full run)."""

from __future__ import annotations


def chosen_cells(text: str, strategies, percents) -> set[int] | None:
    """The indices into the grid (``Setup.cells``: ``strategies`` x ``percents``, in that
    order) of the cells ``text`` names (``strategy:percent``, comma-separated; empty: all,
    None). A cell's draws are seeded by its place in the whole grid (``Setup.trial``), so the
    chosen cells of a run with the same ``strategies`` and ``percents`` draw what the whole
    grid's do: a cell can be re-run alone, or over more trials, on the same draws."""
    if not text.strip():
        return None
    names = [f"{s}:{float(p):g}" for s in strategies for p in percents]
    chosen = set()
    for part in (t.strip() for t in text.split(",") if t.strip()):
        strategy, _, percent = part.partition(":")
        try:
            name = f"{strategy}:{float(percent):g}"
        except ValueError:
            name = None
        if name not in names:
            raise ValueError(f"--param cells={text}: {part!r} is not a cell of the grid "
                             f"(strategies x percents: {', '.join(names)})")
        chosen.add(names.index(name))
    return chosen


def chosen_sources(text: str, kappas) -> set[str]:
    """The label sources ``text`` names (comma-separated; empty: all of them)."""
    known = [f"kappa{k:g}" for k in kappas] + ["adversarial", "fusion"]
    if not text.strip():
        return set(known)
    chosen = {t.strip() for t in text.split(",") if t.strip()}
    unknown = sorted(chosen - set(known))
    if unknown:
        raise ValueError(f"--param labels={text}: no label source {', '.join(unknown)} "
                         f"(with these kappas: {', '.join(known)})")
    return chosen
