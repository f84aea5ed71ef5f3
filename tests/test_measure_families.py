"""The index of measure names by module (irsample/measures/families.py), which lets `parse`
import only the family modules a name can refer to."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import irsample.measures as measures
from irsample.measures import base
from irsample.measures.families import FAMILY_MODULES

ROOT = Path(measures.__file__).resolve().parents[2]

NAMES = [
    "official", "all_trec", "sample_eval", "map", "P.5,10", "P_10", "ndcg_cut.10", "ndcg.1=3,2=9",
    "iprec_at_recall.0.1", "map_cut.100", "gm_map", "Rprec_mult.0.5", "relstring.20", "AP",
    "P@10", "nDCG@10", "nDCG(gains={1:3,2:9})", "R@100", "RR", "infAP", "xinfAP", "statAP",
    "ht(AP)", "ppi(AP)", "condensed(AP)", "subAP", "RBP(p=0.8)", "Judged@10", "SetP", "gmap",
    "bpref", "recip_rank", "num_rel_ret", "success.1,5", "11pt_avg", "iP@10", "infNDCG",
]


def test_table_matches_what_the_modules_register():
    """Every name a family registers (irsample, trec_eval, alias) is listed under its module."""
    registered: dict[str, set[str]] = {}
    for table in (measures.REGISTRY, measures.TREC_REGISTRY, base.ALIASES):
        for name, cls in table.items():
            module = cls.__module__.removeprefix("irsample.measures.")
            registered.setdefault(module, set()).add(name.lower())
    listed = {module: set(names.split()) for module, names in FAMILY_MODULES.items()}
    assert listed == registered


def test_lazy_parse_gives_what_the_full_registry_gives():
    """A fresh process that imports only what each name needs parses every name as a process
    holding every family does, and `-m map` leaves the other families unimported."""
    code = (
        "import json, sys\n"
        "from irsample.measures import parse_all\n"
        "mods = lambda: sorted(m for m in sys.modules if m.startswith('irsample.measures.'))\n"
        "parse_all(['map'])\n"
        "after_map = mods()\n"
        f"names = {NAMES!r}\n"
        "out = [[m.name for m in parse_all([n])] for n in names]\n"
        "print(json.dumps([after_map, out]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    after_map, lazy = json.loads(done.stdout)
    full = [[m.name for m in measures.parse_all([n])] for n in NAMES]
    assert lazy == full
    loaded = {m.removeprefix("irsample.measures.") for m in after_map} & set(FAMILY_MODULES)
    assert loaded == {"trec_eval.average_precision"}


def test_trec_parameters_replace_the_default_expansion_and_irsample_names_replace_nothing():
    """trec_eval's habit: a family named with trec_eval parameters replaces the bare name's
    default expansion (``-m rbp -m rbp.p=0.8``: rbp_p=0.8 alone); a name in irsample's own
    syntax is one more measure (``-m rbp -m 'RBP(p=0.8)'``: both; it dropped rbp)."""
    from irsample.measures.names import parse_all

    def names(*given):
        return [m.trec_name for m in parse_all(given)]

    assert names("rbp", "rbp.p=0.8") == ["rbp_p=0.8"]
    assert sorted(names("rbp", "RBP(p=0.8)")) == ["rbp", "rbp_p=0.8"]
    assert names("P", "P.10") == ["P_10"]
    assert "P_5" in names("P", "P@10") and names("P", "P@10").count("P_10") == 1
