"""Designs register themselves by kind: names parse back through the registry, a class's own
attributes drive merging, budgets and design files, and the depth-k pool design."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from irsample.design import DESIGNS, Design, DesignRecord, Pool, SamplingFrame, merge, parse_design
from irsample.design.sampling.cells import allocate, draw, spec_number
from irsample.design.sampling.depth import DepthPool
from irsample.errors import DesignError, InputError
from irsample.io import read_qrels

from .synthetic import pooled_collection

NAMES = {
    "uniform": "uniform(0.3)@40", "stratified": "stratified(1-10:1,11-:0.2)@5/topic",
    "terabyte": "terabyte(4)", "importance": "importance(0.2)@30", "depth": "depth(7)",
    "plan": "plan(xinfAP,pilot=30,batches=2)@120", "systematic": "systematic(1-5:0.5,6-:0.1)",
    "active": "active(0.1,mix=0.2,budget=50)",
}


def test_every_named_kind_parses_its_own_name_back():
    named = {kind for kind, cls in DESIGNS.items() if cls.syntax}
    assert named == set(NAMES)
    for kind, name in NAMES.items():
        design = parse_design(name)
        assert type(design) is DESIGNS[kind] and design.name == name
        again = parse_design(design.name)
        # a design holding arrays (active: its labels) compares by identity; its name must agree
        assert again == design if type(design).__eq__ is not object.__eq__ else again.name == name
    assert DESIGNS["planned"].syntax == ""  # read from its design file only


def test_a_kind_registers_once():
    with pytest.raises(RuntimeError, match="registered twice"):
        type("Other", (Design,), {"kind": "uniform", "name": "x", "select": None})
    with pytest.raises(TypeError, match="lowercase word"):
        type("Bad", (Design,), {"kind": "Bad-Kind", "name": "x", "select": None})


def test_a_new_design_class_is_parsed_merged_and_budgeted_by_its_own_attributes(tmp_path):
    """A design defined here (one class, nothing else edited) is found by parse_design, refuses
    the merge formats it does not list and takes a budget."""

    @dataclass(frozen=True)
    class Halves(Design):
        kind = "halvestest"
        syntax = "halvestest(F)"
        merge_formats = ("prels",)
        merge_note = "a test design: prels only"

        fraction: float
        budget: object = None

        @classmethod
        def from_spec(cls, spec, budget):
            return cls(spec_number(spec, cls.kind), budget)

        @property
        def name(self):
            suffix = "" if self.budget is None else f"@{self.budget.label}"
            return f"halvestest({self.fraction:g}){suffix}"

        def select(self, units, *, rng):
            stratum = np.zeros(len(units.topic), np.int64)
            return draw(units.memo(self, lambda: allocate(
                units, stratum, ("all",), lambda n: self.fraction * n, self.budget)), rng)

    try:
        design = parse_design("halvestest(0.5)@12")
        assert isinstance(design, Halves) and design.budget.total == 12
        assert design.with_budget(None).name == "halvestest(0.5)"
        collection, table = pooled_collection(3, n_topics=2, n_runs=3)
        pool = Pool.from_runs(collection, depth=20)
        record = DesignRecord.from_sample(pool, design, design.select(pool, rng=1), seed=1)
        path = tmp_path / "design.json"
        path.write_bytes(record.to_json())
        again = DesignRecord.read(path)
        assert again.design == design and again.selected.sum() == 12
        truth = dict(zip(zip(table.qid.to_pylist(), table.docno.to_pylist()), table.rel.tolist()))
        judged = tmp_path / "judged"
        judged.write_text("".join(
            f"{q} 0 {d} {truth[q.encode(), d.encode()]}\n"
            for q, d, s in zip(again.qid, again.docno, again.selected) if s))
        merged = merge(again, read_qrels(judged))
        rows = [line.split() for line in merged.render("prels").decode().splitlines()]
        assert len(rows) == len(again.qid) and sum(int(r[2]) >= 0 for r in rows) == 12
        with pytest.raises(InputError, match="cannot be merged as strata: a test design"):
            merged.render("strata")
    finally:
        DESIGNS.pop("halvestest", None)


def test_depth_pool_judges_exactly_the_top_k_and_takes_no_budget():
    collection, table = pooled_collection(5, n_topics=3, n_runs=4)
    frame = SamplingFrame.from_qrels(collection, table)
    design = parse_design("depth(5)")
    assert isinstance(design, DepthPool)
    a, b = design.select(frame, rng=1), design.select(frame, rng=2)
    top = frame.best_rank <= 5
    assert np.array_equal(a.judged, top) and np.array_equal(b.judged, top)
    assert np.array_equal(a.inclusion, top.astype(float)) and a.labels == ("1-5", "6-")
    with pytest.raises(DesignError, match="fixed by the design"):
        design.with_budget(10)
    with pytest.raises(DesignError, match="takes no budget"):
        parse_design("depth(5)@10")
    with pytest.raises(DesignError, match="integer"):
        parse_design("depth(2.5)")
