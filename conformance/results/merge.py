"""Merging result files. Pure logic on parsed pytest-json-report objects and `ResultFile`s.

`merge_report_json` folds a new run of some cells into the stored file of the same JAX
version and platform, so rerunning one cell keeps every other cell (but not the cells of
cases the suite no longer declares). `merge_files` combines
files of one (version, platform) — shards, reruns — and reports cells whose statuses conflict.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from conformance.core.casefolders import DOWNSTREAM_NAMESPACE
from conformance.results.schema import (
    CHAPTER_NAMESPACE,
    PERF_FORMAT,
    CellResult,
    ResultFile,
    build_identity,
    unjudged_cell,
)


def _cell_id(test: Mapping[str, Any]) -> str | None:
    """The cell a test entry is about: from its metadata, or from its node id when the plugin failed to judge it."""
    metadata = test.get("metadata")
    if not isinstance(metadata, Mapping) or "case" not in metadata:
        lost = unjudged_cell(test)
        return lost.cell_id if lost is not None else None
    param = metadata.get("param") or ""
    return f"{metadata['case']}[{param}]" if param else str(metadata["case"])


def _stored_not_rerun(
    stored: Mapping[str, Any] | None, new: Mapping[str, Any], retired: Callable[[str], bool]
) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The stored test entries that `new` did not run, split into those kept and the ids of retired ones."""
    ran = {_cell_id(t) for t in new.get("tests", [])}
    kept, dropped = [], []
    for test in (stored or {}).get("tests", []):
        cell_id = _cell_id(test)
        if cell_id is None or cell_id in ran:
            continue
        if retired(cell_id):
            dropped.append(cell_id)
        else:
            kept.append(test)
    return kept, dropped


def merge_report_json(
    stored: Mapping[str, Any] | None, new: Mapping[str, Any], retired: Callable[[str], bool] = lambda cell_id: False
) -> dict[str, Any]:
    """`new` with every cell of `stored` that `new` did not run appended; summary counts recomputed.

    A stored cell for which `retired(cell_id)` holds (its case or parameter was deleted or renamed)
    is dropped, so the report does not keep showing a cell that no longer exists.
    """
    merged = dict(new)
    merged["tests"] = _stamped(new.get("tests", []), new)
    if stored:
        merged["tests"] += _stamped(_stored_not_rerun(stored, new, retired)[0], stored)
    if stored and isinstance(stored.get("perf"), Mapping) or isinstance(new.get("perf"), Mapping):
        merged["perf"] = merge_perf_sections((stored or {}).get("perf"), new.get("perf"))
    outcomes = Counter(str(t.get("outcome", "unknown")) for t in merged.get("tests", []))
    merged["summary"] = {**dict(outcomes), "total": sum(outcomes.values()), "collected": sum(outcomes.values())}
    return merged


def merge_perf_sections(stored: Any, new: Any) -> dict[str, Any]:
    """The `perf` object of a merged result file (schema 5): the new run's workloads, and every stored workload
    the new run did not measure, kept as it is (as cells are)."""
    workloads = {}
    for section in (stored, new):
        if isinstance(section, Mapping) and isinstance(section.get("workloads"), Mapping):
            workloads.update({str(k): v for k, v in section["workloads"].items() if isinstance(v, Mapping)})
    return {"format": PERF_FORMAT, "workloads": dict(sorted(workloads.items()))}


def _stamped(tests: Any, report: Mapping[str, Any]) -> list[Any]:
    """`tests`, each cell carrying the suite version that wrote it and the build that ran it (its own, else its
    report's header's), so a file merged from runs of two suite versions, or of two builds with one label, still
    says which cell came from which."""
    head = report.get("jax_conformance") or {}
    stamps = {
        "suite_version": str(head.get("suite_version") or ""),
        "build": build_identity(head.get("source") if isinstance(head.get("source"), dict) else None),
    }
    stamped = []
    for test in tests if isinstance(tests, list) else []:
        meta = test.get("metadata") if isinstance(test, dict) else None
        if isinstance(meta, dict) and "case" in meta:
            missing = {k: v for k, v in stamps.items() if v and not meta.get(k)}
            if missing:
                test = {**test, "metadata": {**meta, **missing}}
        stamped.append(test)
    return stamped


def retired_cells(declared: Iterable[str], namespace: str = "") -> Callable[[str], bool]:
    """A `retired` test for `merge_report_json`: a cell of the package just run (ids `<namespace>/...`, or
    ids without a namespace for the built-in cases) that the package no longer declares. A chapter's block
    (`chapter/...`) or a downstream suite's test (`downstream/...`) is never a case package's: a chapter's or a suite's
    own run retires its cells."""
    current = set(declared)

    def retired(cell_id: str) -> bool:
        ours = cell_id.startswith(f"{namespace}/") if namespace else "/" not in cell_id.split("[", 1)[0]
        return (
            ours
            and cell_id not in current
            and not cell_id.startswith((f"{CHAPTER_NAMESPACE}/", f"{DOWNSTREAM_NAMESPACE}/"))
        )

    return retired


def retired_stored_cells(
    stored: Mapping[str, Any] | None, new: Mapping[str, Any], retired: Callable[[str], bool]
) -> list[str]:
    """The stored cells that `merge_report_json` drops as retired (to tell the user)."""
    return _stored_not_rerun(stored, new, retired)[1]


@dataclass
class Conflict:
    """A cell that two files of the same version and platform report with different statuses, or that one file lists
    more than once (each entry is named: `x.json`, `x.json (entry 2)`)."""

    jax: str
    platform: str
    cell_id: str
    statuses: dict[str, str] = field(default_factory=dict)  # source -> status

    def describe(self) -> str:
        """One line for a person (file names only, no folders)."""
        seen = ", ".join(
            f"{status} in {source.replace(chr(92), '/').rsplit('/', 1)[-1]}" for source, status in self.statuses.items()
        )
        return f"jax {self.jax} {self.platform} {self.cell_id}: {seen}"


@dataclass
class MergedRun:
    """The cells of one (JAX version, platform), merged from one or more files."""

    jax: str
    platform: str
    files: list[ResultFile]
    cells: dict[str, CellResult]
    conflicts: list[Conflict]
    build: str = ""  # `results.schema.build_identity` of its files: "" for a release, else the build's own

    @property
    def label(self) -> str:
        """`jax 0.12.0.1`, or `jax 0.12.0.1 (python-1a2b3c4d5e)` for a build of its own."""
        return f"jax {self.jax}" + (f" ({self.build})" if self.build else "")


def merge_files(files: Iterable[ResultFile]) -> list[MergedRun]:
    """Group files by (version, platform, build); the file finished last wins a cell, and status conflicts are listed.
    A build of its own (`--python`, `--wheels`) is never merged with the release of its version, nor with another
    build: each is a run of its own (`MergedRun.build`)."""
    groups: dict[tuple[str, str, str], list[ResultFile]] = {}
    for result_file in files:
        head = result_file.header
        groups.setdefault((head.jax, head.platform, build_identity(head.source)), []).append(result_file)
    merged = []
    for (jax, platform, build), members in groups.items():
        members.sort(key=lambda f: f.header.finished_at)
        cells: dict[str, CellResult] = {}
        seen: dict[str, dict[str, str]] = {}
        for member in members:
            for cell in member.cells:
                cells[cell.cell_id] = cell
                entries = seen.setdefault(cell.cell_id, {})
                source = member.source
                if source in entries:  # one file lists the cell twice: name each entry, never keep one silently
                    source = f"{member.source} (entry {sum(k.startswith(member.source) for k in entries) + 1})"
                entries[source] = cell.status.value
        conflicts = [
            Conflict(jax, platform, cell_id, statuses)
            for cell_id, statuses in seen.items()
            if len(set(statuses.values())) > 1 or any(" (entry " in source for source in statuses)
        ]
        merged.append(MergedRun(jax, platform, members, cells, conflicts, build))
    return merged
