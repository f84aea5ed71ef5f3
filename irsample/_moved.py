"""Import paths of modules that moved, kept working: the 35 flat modules of
:mod:`irsample.measures` became the rooms ``trec_eval``, ``incomplete``, ``ht`` and ``ppi``.

Importing an old path (``irsample.measures.design_based``) gives a module whose names are looked
up, on first use, in the modules its code now lives in (:data:`MOVED`), and warns once with a
:class:`DeprecationWarning` naming them. Like ``irsample._EXPORTS`` this table imports by
string and points up the layers by design (``residual``'s ``interval_outcomes`` went up to the
results layer); nothing of irsample imports an old path.
"""

from __future__ import annotations

import sys

_M = "irsample.measures."

#: old module -> the modules its public names are in now, searched in order
MOVED: dict[str, tuple[str, ...]] = {
    **{_M + old: (_M + "trec_eval." + old,) for old in (
        "average_precision", "counts", "gain", "gain_tables", "interpolated", "judged",
        "precision")},
    **{_M + old: (_M + "incomplete." + old,) for old in (
        "ap_variance", "condensed", "subcollection")},
    _M + "inferred": (_M + "incomplete.inferred_ap",),
    _M + "sampled": (_M + "incomplete.sample_eval",),
    _M + "sampled_variance": (_M + "incomplete.sample_eval_variance",),
    _M + "stat": (_M + "incomplete.statap",),
    _M + "stratified": (_M + "incomplete.strata_walk", _M + "pool_layout"),
    _M + "residual": (_M + "incomplete.score_intervals", _M + "trec_eval.gain_tables",
                      "irsample.comparison"),
    _M + "design_based": (_M + "ht.estimator", _M + "ht.measure", _M + "ht.imputation"),
    _M + "ht_design": (_M + "ht.inclusion",),
    _M + "ht_ideal": (_M + "ht.ideal_dcg",),
    _M + "ht_jackknife": (_M + "ht.jackknife",),
    _M + "ht_kernels": (_M + "ht.walks",),
    _M + "ht_pairs": (_M + "ht.pairs",),
    _M + "ppi_ap": (_M + "ppi.ap_ratio",),
    _M + "ppi_control": (_M + "ppi.control_variate",),
    _M + "ppi_difference": (_M + "ppi.difference",),
    _M + "ppi_judgments": (_M + "ppi.label_judgments",),
    _M + "ppi_kernels": (_M + "ppi.influence",),
    _M + "ppi_measures": (_M + "ppi.measures",),
}


def _old_module(name: str):
    from importlib import import_module
    from types import ModuleType

    class OldPath(ModuleType):
        """An old import path: names come from the modules the code moved to."""

        def __getattr__(self, attr: str):
            for new in MOVED[name]:
                module = import_module(new)
                if hasattr(module, attr):
                    return getattr(module, attr)
            raise AttributeError(f"{name} (now {', '.join(MOVED[name])}) has no {attr!r}")

    return OldPath(name)


class _Finder:
    """A meta path finder and loader for the paths in :data:`MOVED` alone."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        from importlib.util import spec_from_loader

        return spec_from_loader(fullname, self)

    def create_module(self, spec):
        return _old_module(spec.name)

    def exec_module(self, module):
        import warnings

        warnings.warn(f"{module.__name__} moved to {' and '.join(MOVED[module.__name__])}; "
                      "import from there", DeprecationWarning, stacklevel=2)


def install() -> None:
    """Let the old paths import (once per process)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
