"""`jax-conformance chapter FILE --bisect BLOCK --good VERSION --bad VERSION`: the release where a block changes.

A block's oracle is its whole chapter (blocks run in one process, each after the ones before it), so a block is
bisected here rather than by `bisect CELL`: the releases between the two ends (the package index's, as `bisect`
lists them) are searched with `decide.bisect.bisect`, each release answered from stored results or by running the
chapter on it (`command.run_release`, so every release tested is stored like any run). A block is like the good end
when its status and observation are (`decide.bisect.same_observation`: `raised` with another exception is unlike).
Where the two ends agree on that but print differently (`chapter.printed`'s comparison, the one the page's output is
read with), the change bisected is the printed output's: the first release whose printed output differs from the good
end's, its status the same. The lines say which of the two was bisected.
"""

from __future__ import annotations

from typing import Any, Callable

from conformance.chapter.cells import case_id
from conformance.chapter.model import Block, Chapter
from conformance.chapter.printed import printed_difference
from conformance.decide.bisect import BisectOutcome, bisect, releases_between, same_observation
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult


def find_block(chapter: Chapter, name: str) -> Block:
    """The block `name` names: its id, its cell id, or its hash (8 or more hex digits); one line when none."""
    found = [
        b for b in chapter.blocks if name in (b.id, case_id(chapter, b)) or (len(name) >= 8 and b.hash.startswith(name))
    ]
    if len(found) != 1:
        raise ConformanceError(
            f"{name!r} names {'no' if not found else 'more than one'} block of {chapter.name}; "
            f"name one by its id or hash (see --blocks)"
        )
    return found[0]


def bisect_block(
    chapter: Chapter,
    block: Block,
    good: str,
    bad: str,
    builder: Any,
    run_release: Callable[[str], dict[str, CellResult]],
    on_line: Callable[[str], None],
) -> tuple[BisectOutcome, list[str]]:
    """Search the releases from `good` to `bad` for the first where `block` is unlike `good`; the outcome and the
    lines that say it."""
    releases = releases_between(builder.index.releases("jax"), good, bad)
    for end in (good, bad):
        builder.interpreter_for(end)  # no Python that fits an end: one line before any work
    oracle = lambda version: run_release(version)[block.id]  # noqa: E731 (bisect memoises it)
    outcome = bisect(releases, oracle, on_step=on_line)
    head = f"bisect {block.id} ({block.heading.text}, line {block.line}: {block.first_code[:60]})"
    printed = False
    if (
        outcome.ends_agree
        and isinstance(outcome.start_result, CellResult)
        and not same_printed(outcome.start_result, outcome.end_result)
    ):
        printed = True  # the same status at both ends, printed otherwise: bisect the printed output
        on_line(f"jax {good} and jax {bad} agree on the status; bisecting what the block prints")
        outcome = bisect(releases, oracle, like_start=like_in_print, on_step=on_line)
    if outcome.ends_agree:
        return outcome, [
            f"{head}: jax {good} and jax {bad} agree ({_said(outcome.start_result)}, and print the "
            f"same); nothing to bisect"
        ]
    what = "its printed output (its status is the same at both ends)" if printed else "its status"
    lines = [
        f"{head}: bisected a change of {what}",
        f"  last release like jax {good}: {outcome.last_good} ({_said(outcome.last_good_result, printed)})",
        f"  first release unlike it:     {outcome.first_bad} ({_said(outcome.first_bad_result, printed)})",
    ]
    if outcome.untested_between:
        lines.append(f"  not testable between them: {', '.join(outcome.untested_between)}")
    return outcome, lines


def same_printed(start: CellResult, other: CellResult) -> bool:
    """Whether `other` printed what `start` printed, as a page's output is compared (normalised, numbers to a
    tolerance: `chapter.printed`)."""
    return not printed_difference(start.stdout_tail, other.stdout_tail)


def like_in_print(start: CellResult, other: CellResult) -> bool:
    """The oracle of a printed-output bisect: the start's status and observation, and what it printed."""
    return same_observation(start, other) and same_printed(start, other)


def _said(cell: Any, printed: bool = False) -> str:
    if not isinstance(cell, CellResult):
        return "not testable"
    word = cell.observation.get("block") if isinstance(cell.observation, dict) else cell.status.value
    said = f"{word}: {cell.reason}" if cell.reason else str(word)
    if printed:
        shown = " ⏎ ".join(line.strip() for line in cell.stdout_tail.strip().splitlines()[-3:])
        said += f"; printed: {shown[-120:]}" if shown else "; printed nothing"
    return said
