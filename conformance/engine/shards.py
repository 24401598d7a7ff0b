"""Splitting the selected cells into N shards: deterministic, stable across machines, balanced by time. Pure logic.

`split(cell_ids, n, durations)` assigns every cell to one of `n` shards. Cells with a measured
duration are placed first, longest first (ties by cell id), each on the shard with the least
total time so far (ties: the lowest shard) — the greedy longest-processing-time rule. Cells
without a measurement are then placed in the order of a hash of their id, each counted at the
median measured duration (1 s when nothing was measured), by the same rule. The result depends
only on the cell ids, `n` and the durations, never on the machine, the order given or the
Python hash seed, so N jobs that read the same durations split the same cells the same way.
The durations come from `results.durations`.
"""

from __future__ import annotations

import hashlib
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from conformance.errors import ConformanceError

UNMEASURED_DEFAULT_S = 1.0
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @property
    def label(self) -> str:
        """`K/N`, as written on the command line and in the run header."""
        return f"{self.index}/{self.count}"

    @property
    def file_suffix(self) -> str:
        """`-shardKofN`, the part of a result file name that names the shard."""
        return f"-shard{self.index}of{self.count}"


def parse_shard(text: str) -> Shard:
    """A `Shard` from `K/N` with 1 <= K <= N; a one-line `ConformanceError` otherwise."""
    found = _SHARD.match(text or "")
    if not found:
        raise ConformanceError(f"--shard {text!r}: write it as K/N, e.g. 1/4")
    if len(found[2]) > 6:  # int() of a huge N is slow, and no run has a million shards
        raise ConformanceError(f"--shard {text!r}: N is larger than any number of cells; use fewer shards")
    index, count = int(found[1]), int(found[2])
    if count < 1 or not 1 <= index <= count:
        raise ConformanceError(f"--shard {text!r}: K must be between 1 and N, and N at least 1")
    return Shard(index, count)


def check_shard_count(shard: Shard, selected: int) -> None:
    """Refuse, in one line, more shards than selected cells (every shard past that would run nothing)."""
    if shard.count > max(selected, 1):
        raise ConformanceError(
            f"--shard {shard.label}: {shard.count} shards for {selected} selected cell(s); "
            f"use at most {max(selected, 1)} shards"
        )


def _stable_hash(cell_id: str) -> str:
    return hashlib.sha256(cell_id.encode("utf-8")).hexdigest()


def split(cell_ids: Iterable[str], count: int, durations: Mapping[str, float] | None = None) -> list[list[str]]:
    """The cells of each of `count` shards (index 0 is shard 1), each list in the order the ids were given."""
    if count < 1:
        raise ValueError("a split needs at least one shard")
    given = list(dict.fromkeys(cell_ids))
    durations = durations or {}
    measured = {c: float(durations[c]) for c in given if c in durations and durations[c] >= 0}
    estimate = statistics.median(measured.values()) if measured else UNMEASURED_DEFAULT_S
    order = sorted(measured, key=lambda c: (-measured[c], c))
    order += sorted((c for c in given if c not in measured), key=lambda c: (_stable_hash(c), c))
    totals = [0.0] * count
    shard_of: dict[str, int] = {}
    for cell in order:
        # Totals compared to the microsecond: durations are recorded to the millisecond, so 2.99 + 0.757 and
        # 2.177 + 1.57 are the tie they are in decimal (ties: the lowest shard), not whatever float rounding makes.
        target = min(range(count), key=lambda i: (round(totals[i], 6), i))
        shard_of[cell] = target
        totals[target] += measured.get(cell, estimate)
    shards: list[list[str]] = [[] for _ in range(count)]
    for cell in given:
        shards[shard_of[cell]].append(cell)
    return shards


def select_shard(cell_ids: Iterable[str], shard: Shard, durations: Mapping[str, float] | None = None) -> set[str]:
    """The ids of the cells that `shard` runs."""
    return set(split(cell_ids, shard.count, durations)[shard.index - 1])
