"""Past the releases, through the dev builds (nightlies) between them: the `--pre` step of `bisect`. Pure: the
oracle and the build reader are passed in.

Once the release bisect ends at last good R1 / first bad R2, the dev builds the index (or a `--find-links` place)
lists strictly between them, in PEP 440 order (`envs.nightlies.dev_builds_between`), are searched with the same
binary search, R1 and R2 as its ends (answered from memory, never run again). Each dev build is installed like a
release: jax of that version with the jaxlib of the same night (`envs.nightlies.matching_jaxlib`), else the one its
declared range chooses. The step ends with the narrowest pair, each with the jax and jaxlib commits its result
file records and the compare link between them, like mozregression going from releases to nightlies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.decide.bisect import BisectOutcome, bisect
from conformance.decide.commits import BuildCommits, compare_url, jaxlib_compare_url
from conformance.envs.nightlies import dev_builds_between, left_out_of_nights, nights_out_of_order
from conformance.errors import one_line


@dataclass
class DevStep:
    """The dev-build step: the dev builds between the two releases, the search's outcome (None when there were
    none) and the jax/jaxlib commits of the narrowest pair."""

    last_good: str
    first_bad: str
    candidates: list[str]
    outcome: BisectOutcome | None = None
    good_build: BuildCommits | None = None
    bad_build: BuildCommits | None = None
    find_fix: bool = False  # `--find-fix`: the ends are the last build with the known issue and the first without
    left_out: list[str] = field(default_factory=list)  # second builds of a night already searched

    @property
    def found(self) -> bool:
        """Whether the search ended between two builds (it always does when it ran: the releases differ)."""
        return self.outcome is not None and bool(self.outcome.first_bad)

    def lines(self, observation: Callable[[Any, str], str] = lambda found, version: "") -> list[str]:
        """What the CLI prints and the bug report quotes; `observation(result, version)` says a build's verdict."""
        head = f"dev builds between jax {self.last_good} and jax {self.first_bad}:"
        if not self.candidates:
            return [
                f"{head} none on the index (name a place that holds them with --find-links or --index-url, with --pre)"
            ]
        notes = (
            [f"  not searched, another build of the same night is: {', '.join(self.left_out)}"] if self.left_out else []
        )
        notes += [
            f"  note: jax {a} is dated after jax {b} though PEP 440 puts it before; the search takes PEP 440 "
            f"order as history, so a change between them may be placed wrongly"
            for a, b in nights_out_of_order(self.candidates)
        ]
        if not self.found:
            return [f"{head} none could be searched", *notes]
        found = self.outcome
        lines = [f"{head} {len(self.candidates)}, tested {len([v for v in found.tested if v in self.candidates])}"]
        labels = ("last {} with the bug", "first {} without it") if self.find_fix else ("last good {}", "first bad {}")
        for label, version, result in (
            (labels[0], found.last_good, found.last_good_result),
            (labels[1], found.first_bad, found.first_bad_result),
        ):
            kind = "dev build" if version in self.candidates else "release"
            lines.append(f"  {label.format(kind)}: jax {version}   {observation(result, version)}".rstrip())
        if found.untested_between:
            lines.append(f"  untested dev builds between them: {', '.join(found.untested_between)}")
        lines.extend(f"  skipped jax {s.version}: {one_line(s.why)[:300]}" for s in found.skipped)
        lines.extend(notes)
        if self.good_build is not None and self.bad_build is not None:
            names = ("build with the bug", "build without it") if self.find_fix else ("good build", "bad build")
            lines += [
                f"  last {names[0]}: {self.good_build.line()}",
                f"  first {names[1]}: {self.bad_build.line()}",
                f"  jax commits between them: {compare_url(self.good_build, self.bad_build)}",
            ]
            if jaxlib_compare_url(self.good_build, self.bad_build):
                lines.append(f"  jaxlib commits between them: {jaxlib_compare_url(self.good_build, self.bad_build)}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for `bisect --json`."""
        data: dict[str, Any] = {
            "between": [self.last_good, self.first_bad],
            "candidates": list(self.candidates),
            "found": self.found,
            "left_out": list(self.left_out),
            "out_of_date_order": [list(pair) for pair in nights_out_of_order(self.candidates)],
        }
        if self.found:
            found = self.outcome
            data.update(
                {
                    "tested": [v for v in found.tested if v in self.candidates],
                    "skipped": [{"version": s.version, "why": s.why} for s in found.skipped],
                    "untested_between": list(found.untested_between),
                }
            )
            for key, version, result, build in (
                ("last_good", found.last_good, found.last_good_result, self.good_build),
                ("first_bad", found.first_bad, found.first_bad_result, self.bad_build),
            ):
                data[key] = {
                    "version": version,
                    "dev_build": version in self.candidates,
                    "status": result.status.value,
                    "observation": result.observation,
                    **(_build_json(build) if build is not None else {}),
                }
            if self.good_build is not None and self.bad_build is not None:
                data["compare_url"] = compare_url(self.good_build, self.bad_build)
                data["jaxlib_compare_url"] = jaxlib_compare_url(self.good_build, self.bad_build)
        return data


def _build_json(build: BuildCommits) -> dict[str, str]:
    return {"jax": build.jax, "jaxlib": build.jaxlib, "jax_commit": build.jax_hash, "jaxlib_commit": build.jaxlib_hash}


def search_dev_builds(
    versions: Any,
    releases: BisectOutcome,
    oracle: Callable[[str], Any],
    like: Callable[[Any, Any], bool],
    build_of: Callable[[str], BuildCommits],
    on_step: Callable[[str], None] = lambda line: None,
    find_fix: bool = False,
) -> DevStep:
    """Bisect the dev builds of `versions` (the index's jax versions) between the releases' last good and first bad
    (`oracle` answers a version, remembering those already answered; `build_of` reads a tested build's commits)."""
    step = DevStep(
        releases.last_good,
        releases.first_bad,
        dev_builds_between(versions, releases.last_good, releases.first_bad),
        find_fix=find_fix,
        left_out=left_out_of_nights(versions, releases.last_good, releases.first_bad),
    )
    if not step.candidates:
        return step
    on_step(f"{len(step.candidates)} dev build(s) between jax {releases.last_good} and jax {releases.first_bad}")
    step.outcome = bisect(
        [releases.last_good, *step.candidates, releases.first_bad], oracle, like, on_step, unit="build"
    )
    if step.found:
        step.good_build, step.bad_build = build_of(step.outcome.last_good), build_of(step.outcome.first_bad)
    return step
