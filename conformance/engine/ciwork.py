"""The CI plan of the jobs with work: which (versions, shard, runner) jobs have a selected cell that the restored
results of the last published run do not answer.

`plan_work(request, builder)` splits the versions into jobs as `ciplan.plan_jobs` does (within GitHub's 256 jobs),
splits the selected cells into shards as `run --shard` does (`engine.shards`, durations from the committed
baseline), and keeps a job on a runner only when some cell of its share is not answered, for the runner's
platform, by the stored results (`engine.matrix.answered_cells`: the release's pin file is the one the stored run
installed, the Python is the one the release gets, and the cell's reuse key is unchanged). Nothing is built:
the keys come from the case sources, the shared code, the suite version and the stored environment digest. A release
without a pin file, or without a stored result for the platform, has work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from conformance.ciplan import GITHUB_MATRIX_LIMIT, CiJob, plan_jobs
from conformance.engine.folders import case_folders
from conformance.engine.matrix import answered_cells, select_run, version_files
from conformance.engine.selection import Cell
from conformance.engine.shards import split
from conformance.errors import ConformanceError
from conformance.results.durations import recorded_durations

# The runner kinds of the workflow and the platform name the suite gives each (`child.envinfo.platform_tag`).
RUNNER_PLATFORMS = {
    "ubuntu-24.04": "linux-x86_64",
    "ubuntu-24.04-arm": "linux-arm64",
    "macos-14": "darwin-arm64",
    "windows-2022": "windows-amd64",
}


def runner_platform(runner: str) -> str:
    """The platform a runner kind runs on; a one-line `ConformanceError` naming the known ones otherwise."""
    if runner not in RUNNER_PLATFORMS:
        raise ConformanceError(
            f"--ci-runners: {runner!r} is not a runner kind the plan knows; use "
            f"{', '.join(RUNNER_PLATFORMS)} (conformance/engine/ciwork.py maps them to platforms)"
        )
    return RUNNER_PLATFORMS[runner]


@dataclass(frozen=True)
class WorkRequest:
    """What to plan: the versions (oldest first), the runner kinds, shards per version, the `-k` expression and
    the folder of restored results (None: nothing is stored, every job has work)."""

    versions: tuple[str, ...]
    runners: tuple[str, ...]
    shards: int = 2
    expression: str | None = None
    stored: Path | None = None


@dataclass(frozen=True)
class RunnerJob:
    """One planned job: a job of the plan on one runner kind, with its cells and those it must run."""

    job: CiJob
    runner: str
    cells: int
    to_run: int

    def to_json(self) -> dict[str, Any]:
        """The `include` entry of the workflow's matrix: `os`, `platform`, `job` (as `CiJob.to_json`), the counts."""
        return {
            "os": self.runner,
            "platform": RUNNER_PLATFORMS[self.runner],
            "job": self.job.to_json(),
            "cells": self.cells,
            "to_run": self.to_run,
        }


@dataclass
class WorkPlan:
    """Every (job, runner) of the full plan, and those with work."""

    full: list[CiJob]
    runners: tuple[str, ...]
    planned: list[RunnerJob] = field(default_factory=list)
    cells: int = 0  # cells of the full plan, on every runner
    to_run: int = 0  # of which not answered by the stored results

    def to_json(self) -> dict[str, Any]:
        """The plan as `matrix --ci-runners` prints it: the full plan's `jobs` and `shard_count` (as before), and
        `include` (the jobs with work, each with its `os`) with the counts."""
        return {
            "jobs": [job.to_json() for job in self.full],
            "shard_count": self.full[0].shards,
            "total_jobs": len(self.full) * len(self.runners),
            "include": [j.to_json() for j in self.planned],
            "planned_jobs": len(self.planned),
            "cells": self.cells,
            "to_run": self.to_run,
            "answered": self.cells - self.to_run,
        }

    def summary(self) -> str:
        """One line for the job's log: jobs and cells planned out of the full plan."""
        return (
            f"plan: {len(self.planned)} of {len(self.full) * len(self.runners)} jobs have work; "
            f"{self.to_run} of {self.cells} cells to run, {self.cells - self.to_run} answered by stored results"
        )


def _python_version(builder: Any, version: str) -> str | None:
    """`3.13.1`: the Python the release gets here, which `run` requires a stored result to have run on (the
    workflow's setup-python gives every runner kind the same one); None when no Python here fits it."""
    try:
        return builder.interpreter_for(version).version
    except (ConformanceError, OSError):
        return None


def pending(request: WorkRequest, builder: Any, version: str, platform_name: str, cells: Sequence[Cell]) -> int:
    """How many of `cells` of `version` on `platform_name` the stored results do not answer."""
    if request.stored is None or not request.stored.is_dir():
        return len(cells)
    paths = version_files(request.stored, version, platform_name)
    python = _python_version(builder, version) if paths else None
    if python is None:
        return len(cells)
    try:
        requirements = builder.requirements(version)
    except (ConformanceError, OSError):
        return len(cells)
    return len(cells) - len(answered_cells(paths, cells, requirements, lambda stored: stored == python, {}))


def plan_work(request: WorkRequest, builder: Any, limit: int = GITHUB_MATRIX_LIMIT) -> WorkPlan:
    """The full CI plan and its jobs with work (see the module's docstring); `ConformanceError` on a bad request."""
    platforms = [runner_platform(runner) for runner in request.runners]
    try:
        full = plan_jobs(list(request.versions), len(request.runners), request.shards, limit)
    except ValueError as exc:
        raise ConformanceError(f"--ci-runners {' '.join(request.runners)} --shards {request.shards}: {exc}") from None
    selected = select_run(case_folders(()), request.expression).selected
    by_id = {cell.id: cell for cell in selected}
    shares = {count: split(list(by_id), count, recorded_durations(None)) for count in {j.shards for j in full}}
    plan = WorkPlan(full, tuple(request.runners))
    for job in full:
        cells = [by_id[cell_id] for cell_id in shares[job.shards][job.shard - 1]]
        for runner, platform_name in zip(request.runners, platforms):
            to_run = sum(pending(request, builder, version, platform_name, cells) for version in job.versions)
            total = len(cells) * len(job.versions)
            plan.cells += total
            plan.to_run += to_run
            if to_run:
                plan.planned.append(RunnerJob(job, runner, total, to_run))
    return plan
