"""Small text lists naming runs: which runs to pool, and which group each run belongs to.

- Run lists (``--runs-from``): one run name per line, optionally followed by a flag ``judged``
  or ``notjudged`` (TREC's ``run-pooled-flag.txt``); runs flagged ``notjudged`` are left out.
- Group maps (``--groups``): one run per line, either ``run group`` (whitespace separated, e.g.
  TREC's ``runs-pids``) or colon-separated fields whose first two are run and group (TREC's
  ``runs_table.*``). A group is the participant that submitted the run (leave-one-group-out).

Text is UTF-8 (a line that is not is an error). Blank lines and lines starting with ``#`` are
skipped. Every record keeps its line number, so a
name that matches no run can be reported as ``file:line``.
"""

from __future__ import annotations

from ..errors import InputError
from .trec import Source, decode_utf8, read_bytes, source_name

_FLAGS = {"judged": True, "notjudged": False}


def _lines(source: Source):
    name = source_name(source)
    raw = read_bytes(source).tobytes()
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        stripped = decode_utf8(line, name, lineno, "line").strip()
        if stripped and not stripped.startswith("#"):
            yield name, lineno, stripped


def read_run_list(source: Source) -> list[tuple[str, int]]:
    """Run names to use, each with its line number (runs flagged ``notjudged`` dropped)."""
    name = source_name(source)
    out, seen = [], {}
    for _, lineno, line in _lines(source):
        fields = line.split()
        if len(fields) > 2 or (len(fields) == 2 and fields[1] not in _FLAGS):
            raise InputError(
                "expected a run name, optionally followed by 'judged' or 'notjudged', found "
                f"{line[:80]!r}", name, lineno
            )
        if fields[0] in seen:
            raise InputError(f"run {fields[0]!r} listed twice (first at line {seen[fields[0]]})",
                             name, lineno)
        seen[fields[0]] = lineno
        if len(fields) == 1 or _FLAGS[fields[1]]:
            out.append((fields[0], lineno))
    if not seen:
        raise InputError("empty file: no run names", name)
    return out


def read_group_map(source: Source) -> dict[str, tuple[str, int]]:
    """{run name: (group, line number)} from ``run group`` or ``run:group:...`` lines."""
    name = source_name(source)
    out: dict[str, tuple[str, int]] = {}
    for _, lineno, line in _lines(source):
        colons = ":" in line
        fields = line.split(":") if colons else line.split()
        if (len(fields) < 2 or not fields[0].strip() or not fields[1].strip()
                or (not colons and len(fields) > 2)):  # 'run group x': which is the group?
            raise InputError(f"expected 'run group' or 'run:group:...', found {line[:80]!r}",
                             name, lineno)
        run, group = fields[0].strip(), fields[1].strip()
        if run in out:
            raise InputError(
                f"run {run!r} listed twice (first at line {out[run][1]})", name, lineno
            )
        out[run] = (group, lineno)
    if not out:
        raise InputError("empty file: no runs", name)
    return out
