"""Each (suite, release) pair is a shard that runs anywhere: the index of a Kubernetes Indexed Job or a SLURM array
task mapped to its shard. Pure.

The shards are the suites × releases, suites outermost, in the order given: index `i` is suite `i // R` on release
`i % R` (R releases). `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job, 0-based) and `SLURM_ARRAY_TASK_ID` (a SLURM
array, `--array=0-N`) are read from the environment; an index outside the shards is one line naming the count.
Each shard writes its release's result file under a name of its own, `<jax>-<platform>-shard<K>of<N>.json` (K the
index plus one, N the shards: `shard_file_suffix`, the suffix `run --shard K/N` gives its files), so the files of every
task can be copied into one folder without one overwriting another: `report` merges them as it merges `run`'s shards,
and `downstream` and `gate --downstream` read a suite's cells from whichever file of the release holds them
(`store.suite_cells`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from conformance.engine.shards import Shard as CellShard
from conformance.errors import ConformanceError

INDEX_VARIABLES = ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID")


@dataclass(frozen=True)
class Shard:
    """One (suite, release) pair."""

    index: int
    suite: str
    release: str


def all_shards(suites: Sequence[str], releases: Sequence[str]) -> list[Shard]:
    """Every shard, in index order."""
    return [
        Shard(i * len(releases) + j, suite, release)
        for i, suite in enumerate(suites)
        for j, release in enumerate(releases)
    ]


def shard_index(environ: Mapping[str, str]) -> int | None:
    """The index a Kubernetes Indexed Job or a SLURM array gave this task (None when neither did)."""
    for name in INDEX_VARIABLES:
        text = environ.get(name, "").strip()
        if text:
            if not text.isdigit():
                raise ConformanceError(f"{name} is {text[:40]!r}, not a task index (0, 1, 2, ...)")
            return int(text)
    return None


def shard_for(suites: Sequence[str], releases: Sequence[str], index: int) -> Shard:
    """The shard of `index`; one line when there is no such shard."""
    shards = all_shards(suites, releases)
    if not 0 <= index < len(shards):
        raise ConformanceError(
            f"task index {index} is outside the {len(shards)} shards ({len(suites)} suites x "
            f"{len(releases)} releases: indexes 0-{len(shards) - 1}); size the job or array to "
            f"{len(shards)} tasks"
        )
    return shards[index]


def shard_file_suffix(index: int, count: int) -> str:
    """`-shard<K>of<N>` for shard `index` (0-based) of `count`: the part of its result file's name that names it."""
    return CellShard(index + 1, count).file_suffix
