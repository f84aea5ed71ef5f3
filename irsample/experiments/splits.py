"""Run splits: which runs build a simulated pool and which runs are evaluated on it.

A test collection is only as reusable as it is fair to runs that did not contribute to its pool
(Zobel, "How reliable are the results of large-scale information retrieval experiments?",
SIGIR 1998; Buckley & Voorhees, SIGIR 2004). A :class:`Split` names the runs whose rankings
define the sampling frame (``pool``: best ranks, depth-k pools, rank strata) and the runs whose
estimates are recorded (``evaluate``). The families:

- :class:`PooledRuns` (``pooled``): the pool is the runs that contributed to the original pool
  (``run-pooled-flag.txt`` on TREC-8: 71 of 129); every run is evaluated, so pooled and unpooled
  runs can be compared.
- :class:`LeaveOneGroupOut` (``logo:<group>``): for each participating group with a pooled run,
  the pool is the pooled runs of all other groups and the group's own runs are evaluated
  (Zobel 1998: how would a new group's runs fare?).
- :class:`RandomHalves` (``halves``): per trial, a random half (floor(n/2)) of the pooled runs
  builds the pool and every run is evaluated; all strategies of a trial share the split
  (Voorhees 2014, paper 002: "randomly split the set of judged runs in half ... repeated 50
  times").

Splits hold run indices into the collection (names in :class:`RunInfo`). Random splits are
keyed by (experiment seed, family, trial) only, never by strategy or order of execution.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..stats.random import derived_seed

_POOLED = {"judged", "pooled", "yes", "true", "1"}
_UNPOOLED = {"notjudged", "unjudged", "unpooled", "no", "false", "0"}


@dataclass(frozen=True)
class RunInfo:
    """Per run of a collection: its name, whether it contributed to the original pool, and its
    participating group."""

    names: tuple[str, ...]
    pooled: tuple[bool, ...]
    groups: tuple[str, ...]

    @property
    def pooled_runs(self) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.pooled) if p)

    @property
    def all_runs(self) -> tuple[int, ...]:
        return tuple(range(len(self.names)))


@dataclass(frozen=True)
class Split:
    """Run indices: ``pool`` (the frame's runs) and ``evaluate`` (recorded), both sorted."""

    name: str
    pool: tuple[int, ...]
    evaluate: tuple[int, ...]


class SplitFamily(ABC):
    """A rule producing the splits of every trial."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The family's name (``pooled``, ``logo``, ``halves``)."""

    @abstractmethod
    def splits(self, runs: RunInfo, *, trial: int, seed: int) -> list[Split]:
        """The splits of trial ``trial`` (0-based) under the experiment seed ``seed``."""


@dataclass(frozen=True)
class PooledRuns(SplitFamily):
    """Pool: the originally pooled runs; evaluate: every run."""

    @property
    def name(self) -> str:
        return "pooled"

    def splits(self, runs: RunInfo, *, trial: int, seed: int) -> list[Split]:
        if not runs.pooled_runs:
            raise InputError("no run is marked as pooled")
        return [Split("pooled", runs.pooled_runs, runs.all_runs)]


@dataclass(frozen=True)
class LeaveOneGroupOut(SplitFamily):
    """Per group with at least one pooled run (or the named ``groups``): pool = pooled runs of
    the other groups, evaluate = the group's runs (pooled or not)."""

    groups: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return "logo"

    def splits(self, runs: RunInfo, *, trial: int, seed: int) -> list[Split]:
        pooled = runs.pooled_runs
        contributing = sorted({runs.groups[r] for r in pooled})
        chosen = contributing if self.groups is None else list(self.groups)
        unknown = sorted(set(chosen) - set(runs.groups))
        if unknown:
            raise InputError(f"leave-one-group-out: unknown groups {', '.join(unknown)}")
        out = []
        for group in chosen:
            pool = tuple(r for r in pooled if runs.groups[r] != group)
            members = tuple(r for r, g in enumerate(runs.groups) if g == group)
            if not pool:
                raise InputError(f"leave-one-group-out: no pooled run outside group {group!r}")
            out.append(Split(f"logo:{group}", pool, members))
        return out


@dataclass(frozen=True)
class RandomHalves(SplitFamily):
    """Per trial, a uniformly random floor(n/2) of the n pooled runs as the pool; evaluate all
    runs. The half depends only on (seed, trial)."""

    @property
    def name(self) -> str:
        return "halves"

    def splits(self, runs: RunInfo, *, trial: int, seed: int) -> list[Split]:
        pooled = np.array(runs.pooled_runs, dtype=np.int64)
        if len(pooled) < 2:
            raise InputError("random halves need at least two pooled runs")
        rng = np.random.default_rng(derived_seed(seed, "split", self.name, trial))
        half = np.sort(rng.permutation(pooled)[: len(pooled) // 2])
        return [Split("halves", tuple(int(r) for r in half), runs.all_runs)]


def split_family(spec) -> SplitFamily:
    """A family from its name (``pooled``, ``logo``, ``halves``) or itself."""
    if isinstance(spec, SplitFamily):
        return spec
    families = {"pooled": PooledRuns, "logo": LeaveOneGroupOut, "halves": RandomHalves}
    if spec not in families:
        raise ValueError(f"unknown split {spec!r} (one of {', '.join(families)})")
    return families[spec]()


def read_pooled_flags(path) -> dict[str, bool]:
    """``run flag`` lines (TREC's ``run-pooled-flag.txt``: ``judged`` / ``notjudged``)."""
    flags = {}
    for lineno, fields in _lines(path):
        flag = fields[1].lower() if len(fields) == 2 else None
        if flag not in _POOLED and flag not in _UNPOOLED:
            raise InputError("expected 'run judged|notjudged'", str(path), lineno)
        flags[fields[0]] = flag in _POOLED
    return flags


def read_run_groups(path) -> dict[str, str]:
    """Run -> group from ``run group`` lines (``runs-pids``) or TREC's colon-separated
    ``runs_table`` (``run:group:...``)."""
    groups = {}
    for lineno, fields in _lines(path, colon=True):
        if len(fields) < 2 or not fields[1]:
            raise InputError("expected 'run group' or 'run:group:...'", str(path), lineno)
        groups[fields[0]] = fields[1]
    return groups


def _lines(path, *, colon: bool = False):
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.strip().split(":") if colon and ":" in line else line.split()
        yield lineno, fields


def _first_five(names) -> str:
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")


def run_info(names, *, pooled: dict | None = None, groups: dict | None = None,
             source: str = "") -> RunInfo:
    """RunInfo of the runs ``names``: without ``pooled`` every run counts as pooled, without
    ``groups`` every run is its own group. Raises :class:`InputError` for a run that the given
    flags or groups do not name."""
    names = tuple(names)
    for what, table in (("pooled flags", pooled), ("groups", groups)):
        if table is None:
            continue
        missing = [n for n in names if n not in table]
        if missing:
            known = set(names)
            strangers = [n for n in table if n not in known]
            also = (f"; they name {len(strangers)} that are not among the runs: "
                    f"{_first_five(strangers)}" if strangers else "")
            raise InputError(f"{what} do not name {len(missing)} runs: {_first_five(missing)}"
                             + also, source or None)
    return RunInfo(
        names,
        tuple(True if pooled is None else bool(pooled[n]) for n in names),
        tuple(n if groups is None else groups[n] for n in names),
    )
