"""`jax-conformance chapter FILE --bisect BLOCK --good VERSION --bad VERSION`: the release where a block changes.

A block's oracle is its whole chapter (blocks run in one process, each after the ones before it), so a block is
bisected here rather than by `bisect CELL`: the releases between the two ends (the package index's, as `bisect`
lists them) are searched with `decide.bisect.bisect`, each release answered from stored results or by running the
chapter on it (`command.run_release`, so every release tested is stored like any run). A block is like the good end
when its status and observation are (`decide.bisect.same_observation`: `raised` with another exception is unlike).
"""

from __future__ import annotations

from typing import Any, Callable

from conformance.chapter.cells import case_id
from conformance.chapter.model import Block, Chapter
from conformance.decide.bisect import BisectOutcome, bisect, releases_between
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult


def find_block(chapter: Chapter, name: str) -> Block:
    """The block `name` names: its id, its cell id, or its hash (8 or more hex digits); one line when none."""
    found = [b for b in chapter.blocks if name in (b.id, case_id(chapter, b))
             or (len(name) >= 8 and b.hash.startswith(name))]
    if len(found) != 1:
        raise ConformanceError(f"{name!r} names {'no' if not found else 'more than one'} block of {chapter.name}; "
                               f"name one by its id or hash (see --blocks)")
    return found[0]


def bisect_block(chapter: Chapter, block: Block, good: str, bad: str, builder: Any,
                 run_release: Callable[[str], dict[str, CellResult]],
                 on_line: Callable[[str], None]) -> tuple[BisectOutcome, list[str]]:
    """Search the releases from `good` to `bad` for the first where `block` is unlike `good`; the outcome and the
    lines that say it."""
    releases = releases_between(builder.index.releases("jax"), good, bad)
    for end in (good, bad):
        builder.interpreter_for(end)  # no Python that fits an end: one line before any work
    outcome = bisect(releases, lambda version: run_release(version)[block.id], on_step=on_line)
    head = f"bisect {block.id} ({block.heading.text}, line {block.line}: {block.first_code[:60]})"
    if outcome.ends_agree:
        return outcome, [f"{head}: jax {good} and jax {bad} agree ({_said(outcome.start)}); nothing to bisect"]
    lines = [f"{head}:",
             f"  last release like jax {good}: {outcome.last_good} ({_said(outcome.last_good_result)})",
             f"  first release unlike it:     {outcome.first_bad} ({_said(outcome.first_bad_result)})"]
    if outcome.untested_between:
        lines.append(f"  not testable between them: {', '.join(outcome.untested_between)}")
    return outcome, lines


def _said(cell: Any) -> str:
    if not isinstance(cell, CellResult):
        return "not testable"
    word = cell.observation.get("block") if isinstance(cell.observation, dict) else cell.status.value
    return f"{word}: {cell.reason}" if cell.reason else str(word)
