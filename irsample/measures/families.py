"""Which module of :mod:`irsample.measures`' packages defines which measure names, to import only
those a command asks for.

Importing every family module costs a short ``irsample eval -m map`` about a tenth of its time
(module code and the dataclass machinery of some fifty families). :func:`load_for` imports the
modules that define a name that ``text`` can start with (as :func:`~irsample.measures.base.parse`
reads names: the name, then the end or one of ``. _ @ (``); :func:`load_all` imports every one.
Names are irsample family names, trec_eval names and aliases; aliases match whatever their case.
``tests/test_measure_families.py`` checks this table against what importing every module
registers: a new family module, or a new name, is added here too.
"""

from __future__ import annotations

from importlib import import_module

#: module -> the names its families register, lower-cased (space-separated)
FAMILY_MODULES: dict[str, str] = {
    # trec_eval's measures
    "trec_eval.average_precision": "ap bpref gm_bpref gm_map gmap gmbpref map map_cut yaap",
    "trec_eval.counts": (
        "num_nonrel_judged_ret num_q num_rel num_rel_ret num_ret numnonreljudgedret numq numrel "
        "numrelret numret runid"
    ),
    "trec_eval.gain": "bing dcg g idcg ideal_dcg idealdcg ndcg ndcg_cut ndcg_rel rndcg",
    "trec_eval.interpolated": "11pt_avg elevenptap iprec iprec_at_recall rprec_mult",
    "trec_eval.judged": "judged relstring unj",
    "trec_eval.precision": (
        "mrr p precision r r-prec recall recip_rank relative_p relativep rprec rr set_f set_map "
        "set_p set_recall set_relative_p setap setf setp setr setrelativep success utility"
    ),
    # the seed papers' estimators for incomplete and sampled judgments
    "incomplete.condensed": "condensed induced",
    "incomplete.inferred_ap": "infap",
    "incomplete.sample_eval": "iiprec infndcg inum_rel inum_rel_ret ip iprec_rec xinfap",
    "incomplete.score_intervals": "pinterval rbp rbp_resid sdcg",
    "incomplete.statap": "statap statap_var statnum_rel statp statrprec",
    "incomplete.subcollection": "subap",
    # design-based and prediction-powered estimators
    "ht.measure": "ht",
    "ppi.measures": "auto ppi",
}

_NAMES = [(name.lower(), module) for module, names in FAMILY_MODULES.items()
          for name in names.split()]
_loaded: set[str] = set()


def _load(module: str) -> None:
    if module not in _loaded:
        import_module(f"{__package__}.{module}")
        _loaded.add(module)


def load_for(text: str) -> None:
    """Import the family modules defining a name ``text`` may be written with."""
    low = text.strip().lower()
    for name, module in _NAMES:
        if low.startswith(name) and (len(low) == len(name) or low[len(name)] in "._@("):
            _load(module)


def load_all() -> None:
    """Import every family module (listings and tests want the whole registry)."""
    for module in FAMILY_MODULES:
        _load(module)
