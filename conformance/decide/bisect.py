"""Bisecting JAX releases for the first one whose verdict on one cell changes. Pure: the oracle is passed in.

Like mozregression: the releases between the two ends come from the package index, the
suite's own verdict on one cell is the oracle, the steps left are reported as it goes,
and it ends with the last release that behaves like the start and the first that does
not, with both observations. A release that cannot be tested (no interpreter here
accepts it, or its environment does not build) is skipped and named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable

from packaging.version import InvalidVersion, Version

from conformance.core.compare import diff
from conformance.core.status import Status
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult


@dataclass(frozen=True)
class Untestable:
    """A release the oracle could not test, and why."""

    version: str
    why: str


def releases_between(versions: Iterable[str], first: str, last: str) -> list[str]:
    """Every release from `first` to `last` inclusive, in that direction (either may be the newer one).

    Final releases only (patch releases included); a pre-release, or a build with a local label (`0.12.0.1+corp.3`,
    which a `--find-links` folder may hold: a build of that release, not one after it), appears only as an end.
    Both ends must be among `versions`, the releases the package index lists (yanked ones excluded).
    """
    parsed: dict[str, Version] = {}
    for text in versions:
        try:
            parsed[text] = Version(text)
        except InvalidVersion:
            continue
    for end in (first, last):
        if end not in parsed:
            raise ConformanceError(f"jax {end} is not a release on the package index (yanked releases are excluded)")
    low, high = sorted((parsed[first], parsed[last]))
    chosen = sorted(
        (v for t, v in parsed.items() if low <= v <= high and (not (v.is_prerelease or v.local) or t in (first, last)))
    )
    texts = {v: t for t, v in parsed.items()}
    ordered = [texts[v] for v in chosen]
    return ordered if parsed[first] <= parsed[last] else ordered[::-1]


def steps_left(candidates: int) -> int:
    """How many more tests a binary search over `candidates` untested releases needs at most."""
    return math.ceil(math.log2(candidates + 1)) if candidates > 0 else 0


def same_observation(start: CellResult, other: CellResult) -> bool:
    """Whether `other` has the start's status and observation (the plain bisect's oracle)."""
    return other.status is start.status and not diff(start.observation, other.observation)


def bug_reproduces(cell: CellResult) -> bool:
    """Whether a known-issue cell shows its documented bug (`conforms` on a known-issue row)."""
    return cell.status is Status.CONFORMS


def same_bug_state(start: CellResult, other: CellResult) -> bool:
    """Whether `other` shows the known issue exactly when the start does (the --find-fix oracle)."""
    return bug_reproduces(other) == bug_reproduces(start)


@dataclass
class BisectOutcome:
    """Where the verdict changes: the last release like the start and the first one that is not."""

    releases: list[str]
    start: str
    end: str
    start_result: CellResult
    end_result: CellResult
    ends_agree: bool = False
    last_good: str = ""
    first_bad: str = ""
    last_good_result: CellResult | None = None
    first_bad_result: CellResult | None = None
    skipped: list[Untestable] = field(default_factory=list)
    tested: list[str] = field(default_factory=list)
    untested_between: list[str] = field(default_factory=list)


class Memo:
    """The oracle, asked at most once per release, remembering the order in which releases were tested."""

    def __init__(self, oracle: Callable[[str], "CellResult | Untestable"]) -> None:
        self.oracle = oracle
        self.answers: dict[str, CellResult | Untestable] = {}
        self.order: list[str] = []

    def __call__(self, version: str) -> "CellResult | Untestable":
        if version not in self.answers:
            self.answers[version] = self.oracle(version)
            self.order.append(version)
        return self.answers[version]


def _end(memo: Memo, version: str, which: str) -> CellResult:
    found = memo(version)
    if isinstance(found, Untestable):
        raise ConformanceError(f"the {which} end, jax {version}, cannot be tested here: {found.why}")
    return found


def bisect(
    releases: list[str],
    oracle: Callable[[str], "CellResult | Untestable"],
    like_start: Callable[[CellResult, CellResult], bool] = same_observation,
    on_step: Callable[[str], None] = lambda line: None,
    unit: str = "release",
) -> BisectOutcome:
    """Binary-search `releases` (ordered from the start end) for the first whose verdict is not like the start's.

    The two ends are tested first; when they agree, the outcome says so (`ends_agree`). `unit` names what is
    searched in the step lines: releases, the dev builds between two releases (`build`), or commits (`commit`).
    """
    if len(releases) < 2:
        raise ConformanceError("bisect needs two different releases")
    memo = oracle if isinstance(oracle, Memo) else Memo(oracle)
    start, end = _end(memo, releases[0], "start"), _end(memo, releases[-1], "end")
    outcome = BisectOutcome(releases, releases[0], releases[-1], start, end)
    if like_start(start, end):
        outcome.ends_agree = True
    else:
        low, high, untestable = 0, len(releases) - 1, set()
        while True:
            middle = [i for i in range(low + 1, high) if i not in untestable]
            if not middle:
                break
            index = middle[len(middle) // 2]
            on_step(
                f"{len(middle)} {unit}(s) left between {releases[low]} and {releases[high]} "
                f"(about {steps_left(len(middle))} step(s)): testing jax {releases[index]}"
            )
            found = memo(releases[index])
            if isinstance(found, Untestable):
                untestable.add(index)
                on_step(f"  jax {releases[index]}: skipped ({found.why})")
                continue
            like = like_start(start, found)
            on_step(f"  -> {'like' if like else 'unlike'} jax {releases[0]}")
            if like:
                low = index
            else:
                high = index
        outcome.last_good, outcome.first_bad = releases[low], releases[high]
        outcome.last_good_result = memo.answers[releases[low]]  # type: ignore[assignment]
        outcome.first_bad_result = memo.answers[releases[high]]  # type: ignore[assignment]
        outcome.untested_between = [releases[i] for i in range(low + 1, high)]
    outcome.skipped = [a for a in memo.answers.values() if isinstance(a, Untestable)]
    outcome.tested = [v for v in memo.order if not isinstance(memo.answers[v], Untestable)]
    return outcome
