"""Differences between two result sets, cell by cell: status and field-level observation differences. Pure.

A result set is one or more result files (platforms, shards, reruns), merged with
`results.merge.merge_files`. Cells are keyed by (platform, case, param), and on each
platform the candidate's JAX version is compared with the baseline's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from conformance.core.compare import Difference, diff
from conformance.results.versions import version_order
from conformance.errors import ConformanceError
from conformance.results.merge import Conflict, MergedRun, merge_files
from conformance.results.schema import CellResult, ResultFile


@dataclass
class ResultSet:
    """The cells of one side of a comparison, one merged run per platform."""

    label: str
    runs: dict[str, MergedRun]
    conflicts: list[Conflict] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # older versions of a platform that `newest` set aside

    @property
    def suite_versions(self) -> set[str]:
        """The suite versions that wrote this set's cells (each cell's own, else its file's header's): a file merged
        from runs of two suite versions holds both."""
        found = set()
        for run in self.runs.values():
            for result_file in run.files:
                found |= {
                    cell.suite_version or result_file.header.suite_version or "?"
                    for cell in result_file.cells
                    if run.cells.get(cell.cell_id) is cell
                }
        return found or {f.header.suite_version or "?" for run in self.runs.values() for f in run.files}

    @property
    def schema_versions(self) -> set[int]:
        """The schema versions of this set's files."""
        return {f.header.schema_version for run in self.runs.values() for f in run.files}

    def jax(self, platform: str) -> str:
        """The JAX version this set holds for `platform`."""
        return self.runs[platform].jax

    def cells(self) -> Iterable[tuple[str, CellResult]]:
        """Every (platform, cell) of the set."""
        for platform, run in self.runs.items():
            for cell in run.cells.values():
                yield platform, cell


def result_set(files: Iterable[ResultFile], label: str, newest: bool = False) -> ResultSet:
    """Merge files into one set; a set with two JAX versions on one platform is refused in one line.

    With `newest`, such a set keeps the newest JAX version of each platform instead (`left_out` names the others).
    """
    by_platform: dict[str, list[MergedRun]] = {}
    for run in merge_files(files):
        by_platform.setdefault(run.platform, []).append(run)
    runs: dict[str, MergedRun] = {}
    conflicts: list[Conflict] = []
    left_out: list[str] = []
    for platform, found in by_platform.items():
        if len(found) > 1 and not newest:
            versions = sorted({run.label.removeprefix("jax ") for run in found}, key=_version_order)
            raise ConformanceError(
                f"the {label} holds jax {' and '.join(versions)} for {platform}; "
                f"give one JAX version per platform (name the files rather than the folder), "
                f"or pass --newest to take the newest"
            )
        found.sort(key=lambda run: _version_order(run.jax))
        runs[platform] = found[-1]
        conflicts.extend(found[-1].conflicts)
        left_out += [f"jax {run.jax} {platform}" for run in found[:-1]]
    if not runs:
        raise ConformanceError(f"the {label} holds no result files")
    return ResultSet(label, runs, conflicts, left_out)


def _version_order(version: str) -> tuple:
    return version_order(version)


def version_mismatch(baseline: ResultSet, candidate: ResultSet) -> str | None:
    """Why the two sets should not be compared (different suite or schema versions), or None."""
    problems = []
    if baseline.suite_versions != candidate.suite_versions:
        problems.append(
            f"suite {', '.join(sorted(baseline.suite_versions))} in the baseline but "
            f"{', '.join(sorted(candidate.suite_versions))} in the candidate (cases and expectations "
            f"may have changed between them)"
        )
    if baseline.schema_versions != candidate.schema_versions:
        problems.append(
            f"schema {', '.join(map(str, sorted(baseline.schema_versions)))} in the baseline but "
            f"{', '.join(map(str, sorted(candidate.schema_versions)))} in the candidate"
        )
    return "; ".join(problems) or None


@dataclass(frozen=True)
class CellChange:
    """One cell whose status or observation differs between the baseline and the candidate (or that only one has)."""

    platform: str
    case: str
    param: str
    baseline: CellResult | None
    candidate: CellResult | None
    baseline_jax: str
    candidate_jax: str
    differences: tuple[Difference, ...] = ()
    printed_differences: tuple[Difference, ...] = ()

    @property
    def printed_only(self) -> bool:
        """Whether only what the chapter prints changed: same status, same asserted facts on both sides."""
        return (
            self.baseline is not None
            and self.candidate is not None
            and self.baseline.status is self.candidate.status
            and not self.differences
        )

    @property
    def cell_id(self) -> str:
        """`case[param]`."""
        return f"{self.case}[{self.param}]" if self.param else self.case

    @property
    def known_issue(self) -> bool:
        """Whether the cell documents a known issue (the candidate's declaration wins)."""
        side = self.candidate or self.baseline
        return bool(side and side.known_issue)

    @property
    def statuses(self) -> str:
        """`differs -> conforms`, with `absent` for a side without the cell."""
        before = self.baseline.status.value if self.baseline else "absent"
        after = self.candidate.status.value if self.candidate else "absent"
        return f"{before} -> {after}"


@dataclass
class SetDiff:
    """Every changed cell of two result sets, and the platforms only one side has."""

    baseline: ResultSet
    candidate: ResultSet
    changes: list[CellChange]
    unchanged: int
    only_in_baseline: list[str]
    only_in_candidate: list[str]
    not_gated: list[str] = field(default_factory=list)  # candidate platforms set aside: the baseline has none

    @property
    def compared(self) -> int:
        """How many cells both sides hold (on the platforms both ran): what a verdict can rest on."""
        return self.unchanged + sum(c.baseline is not None and c.candidate is not None for c in self.changes)

    @property
    def missing(self) -> list[CellChange]:
        """Baseline cells that the candidate lacks (on a platform both ran)."""
        return [c for c in self.changes if c.candidate is None]


def printed_keys(*cells: CellResult | None) -> set[str]:
    """The observation keys that either side's expectation puts in the printed tier."""
    return {
        str(k)
        for cell in cells
        if cell is not None and isinstance(cell.printed_expected, dict)
        for k in cell.printed_expected
    }


def _tier(observation: Any, keys: set[str], printed: bool) -> Any:
    if not isinstance(observation, dict) or not keys:
        return observation if not printed else {}
    return {k: v for k, v in observation.items() if (k in keys) == printed}


def warning_line(warning: dict[str, str]) -> str:
    """`DeprecationWarning: message [jax-deprecation-id] (module)` for one recorded warning."""
    deprecation = f" [{warning.get('deprecation')}]" if warning.get("deprecation") else ""
    module = f" ({warning.get('module')})" if warning.get("module") else ""
    return f"{warning.get('category', '?')}: {warning.get('message', '')}{deprecation}{module}"


def warning_differences(baseline: CellResult, candidate: CellResult) -> tuple[Difference, ...]:
    """The deprecation warnings one side recorded and the other did not, as printed-tier differences
    (`<warnings>`): like printed facts they mark a change, never decide a status."""
    before = [warning_line(w) for w in baseline.warnings]
    after = [warning_line(w) for w in candidate.warnings]
    return tuple(
        [Difference("<warnings>", line, None, "missing") for line in before if line not in after]
        + [Difference("<warnings>", None, line, "unexpected") for line in after if line not in before]
    )


def cell_change(
    platform: str, baseline: CellResult | None, candidate: CellResult | None, baseline_jax: str, candidate_jax: str
) -> CellChange | None:
    """The change of one cell, or None when its status and both tiers of its observation are the same on both sides.

    Differences of the asserted facts and of the printed facts are kept apart: a change of
    printed facts alone (`printed_only`) is wording, reprs or counts the chapter only shows. The deprecation
    warnings the probe triggered are compared with the printed facts.
    """
    side = candidate or baseline
    assert side is not None
    differences: tuple[Difference, ...] = ()
    printed: tuple[Difference, ...] = ()
    if baseline is not None and candidate is not None:
        keys = printed_keys(baseline, candidate)
        differences = tuple(diff(_tier(baseline.observation, keys, False), _tier(candidate.observation, keys, False)))
        printed = tuple(diff(_tier(baseline.observation, keys, True), _tier(candidate.observation, keys, True)))
        printed += warning_differences(baseline, candidate)
        same_mark = baseline.printed_differs == candidate.printed_differs
        if baseline.status is candidate.status and not differences and not printed and same_mark:
            return None
    return CellChange(
        platform, side.case, side.param, baseline, candidate, baseline_jax, candidate_jax, differences, printed
    )


def diff_sets(baseline: ResultSet, candidate: ResultSet, baseline_platforms_only: bool = False) -> SetDiff:
    """Compare the candidate with the baseline on every platform both hold.

    With `baseline_platforms_only`, the candidate's platforms that the baseline lacks are set aside
    (`not_gated`) rather than counted as one-sided.
    """
    changes: list[CellChange] = []
    unchanged = 0
    shared = [p for p in baseline.runs if p in candidate.runs]
    for platform in sorted(shared):
        before, after = baseline.runs[platform], candidate.runs[platform]
        for cell_id in list(before.cells) + [c for c in after.cells if c not in before.cells]:
            change = cell_change(platform, before.cells.get(cell_id), after.cells.get(cell_id), before.jax, after.jax)
            if change is None:
                unchanged += 1
            else:
                changes.append(change)
    extra = sorted(p for p in candidate.runs if p not in baseline.runs)
    return SetDiff(
        baseline,
        candidate,
        changes,
        unchanged,
        sorted(p for p in baseline.runs if p not in candidate.runs),
        [] if baseline_platforms_only else extra,
        extra if baseline_platforms_only else [],
    )
