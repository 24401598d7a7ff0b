"""The CI job plan: which JAX versions and which shard each job of the workflow's matrix runs. Pure.

GitHub refuses a job matrix of more than 256 jobs. The workflow's matrix is runners x jobs, so the plan
keeps `runners * len(jobs)` within that limit: every version gets the shards asked for while they fit;
then fewer shards per version; and when even one job per version would not fit (more versions than
`limit // runners`), consecutive versions share a job, run one after the other in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.errors import ConformanceError

GITHUB_MATRIX_LIMIT = 256


@dataclass(frozen=True)
class CiJob:
    """One job of the plan (on every runner): the versions it runs, in order, and its shard K of N."""

    versions: tuple[str, ...]
    shard: int
    shards: int

    @property
    def name(self) -> str:
        """A short name without spaces (cache keys, artifact names): the version, or first..last."""
        return self.versions[0] if len(self.versions) == 1 else f"{self.versions[0]}..{self.versions[-1]}"

    def to_json(self) -> dict[str, object]:
        """The object the workflow reads as `matrix.job`: `jax` (space-separated), `shard` (K/N), `name`."""
        return {"jax": " ".join(self.versions), "shard": f"{self.shard}/{self.shards}", "name": self.name}


def _chunks(versions: list[str], count: int) -> list[tuple[str, ...]]:
    """`versions` split into `count` consecutive groups whose sizes differ by at most one."""
    size, extra = divmod(len(versions), count)
    groups, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        groups.append(tuple(versions[start:end]))
        start = end
    return groups


def plan_jobs(versions: list[str], runners: int, shards: int, limit: int = GITHUB_MATRIX_LIMIT) -> list[CiJob]:
    """The jobs that run every version on each of `runners` runners, `shards` shards each where they fit,
    with `runners * len(jobs) <= limit`. Raises ValueError on a plan that cannot exist."""
    if runners < 1 or shards < 1 or not versions:
        raise ValueError("a plan needs at least one version, one runner and one shard")
    per_runner = limit // runners
    if per_runner < 1:
        raise ValueError(f"{runners} runners leave no room in a matrix of {limit} jobs")
    if len(versions) > per_runner:
        return [CiJob(group, 1, 1) for group in _chunks(versions, per_runner)]
    shards = min(shards, per_runner // len(versions))
    return [CiJob((version,), k, shards) for version in versions for k in range(1, shards + 1)]


def plan_json(versions: list[str], runners: int, shards: int) -> dict[str, object]:
    """The CI job plan as `matrix --ci-jobs` prints it; `ConformanceError` naming the options when none fits."""
    try:
        jobs = plan_jobs(versions, runners, shards)
    except ValueError as exc:
        raise ConformanceError(f"--ci-jobs {runners} --shards {shards}: {exc}") from None
    return {"jobs": [job.to_json() for job in jobs], "shard_count": jobs[0].shards, "total_jobs": len(jobs) * runners}
