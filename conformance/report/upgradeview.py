"""The page's section "Everything that changes from A to B": the data its script reads beside what the page
already holds (the cells per column, the API section's name histories). Pure.

`upgrade_data` gives the releases the two selects offer (every release with cells, a census or workload samples,
oldest first) and, for the performance list, every pair of releases' verdicts by `perf.stats`' rules, computed
here from the stored samples (`PerfOutcome.verdicts`, the same rules `perf` and `upgrade` apply), not by the page's
script: a pair `i-j` (i older) keeps only its verdicts other than `same`, `[workload, metric, verdict, ratio, p,
band]`, and each workload that failed on a release is listed by release. For 27 releases and 13 workloads this is
351 pairs; a page with more pairs than `MAX_PAIRS` keeps the neighbours' verdicts only and says so.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

from conformance.perf.session import PerfOutcome
from conformance.results.versions import version_order

MAX_PAIRS = 1200  # 50 releases; beyond, the data block would outweigh the page


def pair_verdicts(outcome: PerfOutcome) -> tuple[dict[str, list[list[Any]]], bool]:
    """Each pair of sides' verdicts other than `same` (module docstring), and whether every pair is there."""
    count = len(outcome.request.sides)
    every = count * (count - 1) // 2 <= MAX_PAIRS
    pairs = combinations(range(count), 2) if every else ((i, i + 1) for i in range(count - 1))
    found: dict[str, list[list[Any]]] = {}
    for old, new in pairs:
        flagged = [[w.id, metric, *(v.to_json()[k] for k in ("verdict", "ratio", "p", "band"))]
                   for w in outcome.request.workloads
                   for metric, v in outcome.verdicts(w.id, old, new).items() if v.verdict != "same"]
        if flagged:
            found[f"{old}-{new}"] = flagged
    return found, every


def upgrade_data(versions: Sequence[str], outcome: PerfOutcome | None) -> dict[str, Any]:
    """The section's data block: `releases` for the selects, and `perf` (None without samples): its `releases`
    (the sides, oldest first), `workloads`, `pairs`, `every` (all pairs, or neighbours only) and `errors`
    (workload → the releases it failed on)."""
    perf = None
    if outcome is not None:
        pairs, every = pair_verdicts(outcome)
        labels = [s.label for s in outcome.request.sides]
        errors: dict[str, list[str]] = {}
        for (wid, side), _ in sorted(outcome.errors.items()):
            errors.setdefault(wid, []).append(labels[side])
        perf = {"releases": labels, "workloads": [w.id for w in outcome.request.workloads], "pairs": pairs,
                "every": every, "errors": errors}
        versions = [*versions, *labels]
    return {"releases": sorted(set(versions), key=version_order), "perf": perf}
