"""`supported`: the PEP 440 range of stored JAX releases on which every selected cell behaves, per platform. Pure.

A selected cell *behaves* on a release when its stored status there is `conforms` (what the chapter documents,
a documented bug included), or when an expectations entry applies to it and accepts that status (it is
acknowledged). A cell `skipped` on a platform (the chapter's claim is about another one) is not applicable there
and counts for nothing. A release on which a selected cell misbehaves, or has no stored result, is excluded, and
the cells that exclude it are named. The specifier bounds the range by the oldest and newest behaving releases
stored and excludes every stored release between them that misbehaves (`jax>=0.8.1,!=0.9.0,<=0.12.0.1`): it speaks
for stored releases only, so a release the results folder does not hold is neither excluded nor vouched for. Builds
with a local label (`0.12.0.1+corp.3`, `+future`) are not releases and are left out.

A known issue that no longer shows is not a reason to cap: a known-issue cell that `differs` on a release newer than
the documented one (the bug the chapter documents is maybe fixed, what `gate` calls good news) behaves, and each such
cell is named as allowed. `fixes_exclude` restores the old reading (it excludes the release). The rule is written
once, for `gate` and `supported`, in docs/decisions.md ("A known issue that is fixed").

With the specifier a team uses now (`jax<0.10`), `cap_verdict` says whether every stored release above the newest
one it allows behaves (the cap can be lifted) or which cells keep it, and which releases it allows that misbehave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.core.status import KNOWN_ISSUE_CHANGED, Status
from conformance.core.versions import NEWER, direction
from conformance.decide.expectations import Expectation
from conformance.errors import ConformanceError
from conformance.results.merge import MergedRun

NOT_STORED = "not stored"


@dataclass(frozen=True)
class CapVerdict:
    """What the stored results say about the specifier in use now."""

    current: str
    liftable: bool
    line: str
    allowed_misbehaving: tuple[str, ...] = ()


@dataclass
class PlatformRange:
    """The supported range on one platform and the cells that exclude each excluded release."""

    platform: str
    releases: list[str]  # stored releases, oldest first
    cells: int  # selected cells
    excluded: dict[str, list[str]] = field(default_factory=dict)  # release -> ["cell (status)", ...]
    left_out: list[str] = field(default_factory=list)  # stored builds that are not releases
    fixed: dict[str, list[str]] = field(default_factory=dict)  # release -> known issues maybe fixed there
    cap: CapVerdict | None = None

    @property
    def behaving(self) -> list[str]:
        """The stored releases on which every selected cell behaves."""
        return [v for v in self.releases if v not in self.excluded]

    @property
    def specifier(self) -> str:
        """`>=OLDEST,!=BAD...,<=NEWEST` over the behaving releases; empty when none behaves."""
        good = self.behaving
        if not good:
            return ""
        low, high = Version(good[0]), Version(good[-1])
        holes = [v for v in self.releases if v in self.excluded and low < Version(v) < high]
        return ",".join([f">={good[0]}", *(f"!={v}" for v in holes), f"<={good[-1]}"])


def parse_current(text: str) -> SpecifierSet:
    """`jax<0.10` or `<0.10` as a specifier set; anything else is one line saying what is expected."""
    stripped = text.strip()
    try:
        if stripped[:1].isalpha():
            requirement = Requirement(stripped)
            if requirement.name.lower() != "jax":
                raise ConformanceError(
                    f"--current {text!r} is about {requirement.name}; give a specifier on jax such as 'jax<0.10'"
                )
            return requirement.specifier
        return SpecifierSet(stripped)
    except (InvalidRequirement, InvalidSpecifier):
        raise ConformanceError(
            f"--current {text!r} is not a specifier on jax such as 'jax<0.10' or 'jax>=0.8,<0.10'"
        ) from None


def behaves(
    status: Status, platform: str, case: str, param: str, jax: str, expectations: Sequence[Expectation]
) -> bool:
    """Whether a cell with `status` conforms (or is not applicable: `skipped`), or an expectations entry applies to it
    and accepts the status."""
    return status in (Status.CONFORMS, Status.SKIPPED) or any(
        entry.applies_to(platform, case, param, jax) and entry.accepts(status) for entry in expectations
    )


def maybe_fixed(status: Status, known_issue: bool, jax: str) -> bool:
    """Whether a cell's status is a known issue that no longer shows on a release after the documented one: what
    `gate` calls good news ("changed: maybe fixed"), so it is allowed rather than a reason to cap."""
    return known_issue and status is Status.DIFFERS and direction(jax) == NEWER


def _release(version: str) -> Version | None:
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    return None if parsed.local else parsed


def supported_ranges(
    runs: Sequence[MergedRun],
    selected: Sequence[tuple[str, str]],
    expectations: Sequence[Expectation] = (),
    current: SpecifierSet | None = None,
    current_text: str = "",
    fixes_exclude: bool = False,
) -> list[PlatformRange]:
    """The range of each platform the runs hold, over the selected cells (`(case, param)` pairs, in order).

    A known issue maybe fixed on a release after the documented one (`maybe_fixed`) is allowed there and named in
    `fixed`; with `fixes_exclude` (the old reading) it excludes the release like any other `differs`."""
    by_platform: dict[str, list[MergedRun]] = {}
    for run in runs:
        by_platform.setdefault(run.platform, []).append(run)
    ranges = []
    for platform in sorted(by_platform):
        releases = sorted((r for r in by_platform[platform] if _release(r.jax)), key=lambda r: Version(r.jax))
        found = PlatformRange(
            platform,
            [r.jax for r in releases],
            len(selected),
            left_out=sorted(r.jax for r in by_platform[platform] if not _release(r.jax)),
        )
        for run in releases:
            against = []
            for case, param in selected:
                cell = run.cells.get(f"{case}[{param}]" if param else case)
                if cell is None:
                    against.append(f"{case}[{param}] ({NOT_STORED})" if param else f"{case} ({NOT_STORED})")
                elif behaves(cell.status, platform, case, param, run.jax, expectations):
                    continue
                elif not fixes_exclude and maybe_fixed(cell.status, cell.known_issue, run.jax):
                    found.fixed.setdefault(run.jax, []).append(cell.cell_id)
                else:
                    against.append(f"{cell.cell_id} ({cell.status.value})")
            if against:
                found.excluded[run.jax] = against
        if current is not None:
            found.cap = cap_verdict(found, current, current_text or str(current))
        ranges.append(found)
    return ranges


def spans(versions: Sequence[str], releases: Sequence[str]) -> str:
    """`versions` as runs of consecutive stored releases: `0.10.0–0.12.0.1, 0.4.38`."""
    runs: list[list[str]] = []
    for version in releases:
        if version in versions:
            if runs and releases.index(runs[-1][-1]) == releases.index(version) - 1:
                runs[-1].append(version)
            else:
                runs.append([version])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


def cap_verdict(found: PlatformRange, current: SpecifierSet, text: str) -> CapVerdict:
    """Whether the cap of `current` can be lifted: every stored release above the newest one it allows behaves; or
    which cells keep it (and on which releases above it every selected cell behaves all the same). Also named: the
    stored releases it allows that misbehave, and those its lower bound excludes that behave."""
    allowed = [v for v in found.releases if current.contains(v, prereleases=True)]
    outside = [v for v in found.releases if v not in allowed]
    above = [v for v in outside if not allowed or Version(v) > Version(allowed[-1])]
    below_fine = [v for v in outside if v not in above and v not in found.excluded]
    allowed_bad = tuple(v for v in allowed if v in found.excluded)
    notes = "".join(
        [
            f"; note: {text} allows {spans(allowed_bad, found.releases)}, excluded above" if allowed_bad else "",
            f"; note: {text} also excludes {spans(below_fine, found.releases)}, on which every selected cell behaves"
            if below_fine
            else "",
        ]
    )
    if not above:
        return CapVerdict(text, False, f"{text} caps no stored release: nothing to lift{notes}", allowed_bad)
    bad = [v for v in above if v in found.excluded]
    fine = [v for v in above if v not in found.excluded]
    if not bad:
        return CapVerdict(
            text,
            True,
            f"{text} can be lifted: every selected cell behaves on {spans(above, found.releases)}{notes}",
            allowed_bad,
        )
    why = "; ".join(f"jax {v} is excluded by {', '.join(found.excluded[v])}" for v in bad)
    also = f"; every selected cell behaves on {spans(fine, found.releases)}" if fine else ""
    return CapVerdict(text, False, f"{text} cannot be lifted: {why}{also}{notes}", allowed_bad)


_MARKERS = {
    "linux": ("linux", {"arm64": "aarch64"}),
    "darwin": ("darwin", {}),
    "windows": ("win32", {"amd64": "AMD64", "arm64": "ARM64"}),
}


def marker(platform: str) -> str:
    """The PEP 508 environment marker of a platform tag (`linux-x86_64` → `sys_platform == "linux" and
    platform_machine == "x86_64"`); an accelerator suffix (`-cuda`) has no marker and is dropped."""
    system, _, rest = platform.partition("-")
    machine = rest.split("-", 1)[0]
    sys_platform, machines = _MARKERS.get(system, (system, {}))
    return f'sys_platform == "{sys_platform}" and platform_machine == "{machines.get(machine, machine)}"'


def constraints(ranges: Sequence[PlatformRange]) -> list[str]:
    """Constraint lines (`pip -c`): one plain line for one platform, one line with a marker per platform otherwise.
    A platform with no behaving release gets `jax<0` (nothing installs), so the line is never silently permissive."""
    lines = []
    for found in ranges:
        spec = found.specifier or "<0"
        lines.append(f"jax{spec}" if len(ranges) == 1 else f"jax{spec}; {marker(found.platform)}")
    return lines


SUPPORTED_FORMAT, SUPPORTED_VERSION = "jax-conformance-supported", 1


def ranges_json(ranges: Sequence[PlatformRange]) -> dict[str, Any]:
    """`supported --json`: per platform the specifier ("" when no stored release behaves), the stored releases,
    those that behave, the cells that exclude each excluded release, the known issues maybe fixed, the builds left
    out, and the verdict on `--current`'s cap (null without it)."""
    platforms = []
    for found in ranges:
        cap = (
            None
            if found.cap is None
            else {
                "current": found.cap.current,
                "liftable": found.cap.liftable,
                "line": found.cap.line,
                "allowed_misbehaving": list(found.cap.allowed_misbehaving),
            }
        )
        platforms.append(
            {
                "platform": found.platform,
                "specifier": found.specifier,
                "cells": found.cells,
                "releases": list(found.releases),
                "behaving": found.behaving,
                "excluded": {v: list(c) for v, c in found.excluded.items()},
                "fixed": {v: list(c) for v, c in found.fixed.items()},
                "left_out": list(found.left_out),
                "cap": cap,
            }
        )
    return {"format": SUPPORTED_FORMAT, "version": SUPPORTED_VERSION, "platforms": platforms}


def range_text(ranges: Sequence[PlatformRange]) -> list[str]:
    """The `supported` command's lines: per platform the specifier, what it was read from, each excluded release
    with the cells that exclude it, and the cap verdict."""
    lines = []
    for found in ranges:
        spec = f"jax{found.specifier}" if found.specifier else "no stored release on which every selected cell behaves"
        lines.append(f"{found.platform}: {spec}")
        first, last = (found.releases[0], found.releases[-1]) if found.releases else ("-", "-")
        lines.append(f"  {found.cells} selected cell(s) on {len(found.releases)} stored release(s), {first} to {last}")
        for version in found.releases:
            if version in found.excluded:
                lines.append(f"  excluded jax {version}: {', '.join(found.excluded[version])}")
            if version in found.fixed:
                lines.append(
                    f"  allowed jax {version}: known issue {KNOWN_ISSUE_CHANGED} (a fix is no reason to cap; "
                    f"--fixes-exclude excludes it): {', '.join(found.fixed[version])}"
                )
        if found.left_out:
            lines.append(f"  left out (not releases): {', '.join(found.left_out)}")
        if found.cap is not None:
            lines.append(f"  current {found.cap.line}")
    return lines
