"""The page's section "Everything that changes from A to B": the data its script reads beside what the page
already holds (the cells per column, the API section's name histories). Pure.

`upgrade_data` gives the releases the two selects offer (every release with cells, a census or workload samples,
oldest first) and the performance list's data, in one of two forms:

- when the pairs of releases times the workloads are few (at most `MAX_JUDGED`), every pair's verdicts by
  `perf.stats`' rules, computed here from the stored samples (`PerfOutcome.verdicts`, the rules `perf` and
  `upgrade` apply): a pair `i-j` (i older) keeps its verdicts other than `same`, `[workload, metric, verdict,
  ratio, p, band]`. Each rank test over 9 + 9 samples enumerates the exact distribution, so 27 releases' 351 pairs
  of 13 workloads (13,689 tests) would take minutes to render;
- else each release's median of every metric and the noise band of each timed metric within it (`stats.noise_band`
  of its samples), from which the page shows the ratio of the medians of A and B against the wider of the two
  bands (at least ×1.25), and says it is not a rank-test verdict (`jax-conformance upgrade` gives that).

Either way each workload that failed on a release is listed by release.

`downstream_pairs` gives the downstream tier: for each suite (its label, as the section "Downstream test suites"
names it) and each ordered pair of the releases it has tests on, what `jax-conformance upgrade --downstream`
lists, by the same functions (`downstream.judge.judge` of the two releases' stored tests, then
`decide.upgrade_tiers.downstream_review_tier`): its items `[weight, subject, change, detail]` and its notes. The
pairs are few (a suite is run on the default matrix's releases), so every one is judged here; a suite without tests
on A or on B is named by the page, never counted as 0.

`probed` gives, per platform, the releases whose column holds a probe cell (`probed_releases`): a release whose
result files hold only chapter blocks or downstream cells has a column but no behaviour to compare, and the page
then says the behaviours are not on it for that release, never "0 change".
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

from conformance.decide.upgrade_tiers import downstream_review_tier
from conformance.downstream.judge import judge
from conformance.perf import stats
from conformance.perf.session import PerfOutcome, medians
from conformance.results.versions import version_order

MAX_JUDGED = 400  # pairs x workloads judged by the rank test while rendering the page


def pair_verdicts(outcome: PerfOutcome) -> dict[str, list[list[Any]]]:
    """Every pair of sides' verdicts other than `same` (module docstring)."""
    found: dict[str, list[list[Any]]] = {}
    for old, new in combinations(range(len(outcome.request.sides)), 2):
        flagged = [
            [w.id, metric, *(v.to_json()[k] for k in ("verdict", "ratio", "p", "band"))]
            for w in outcome.request.workloads
            for metric, v in outcome.verdicts(w.id, old, new).items()
            if v.verdict != "same"
        ]
        if flagged:
            found[f"{old}-{new}"] = flagged
    return found


def release_medians(outcome: PerfOutcome) -> dict[str, list[Any]]:
    """Workload → per side `{metric: median}` and `{timed metric: its band within the side}` (None: no samples)."""
    found: dict[str, list[Any]] = {}
    for workload in outcome.request.workloads:
        per_side: list[Any] = []
        for side in range(len(outcome.request.sides)):
            middle = medians(outcome, workload.id, side)
            bands = {
                m: float(f"{stats.noise_band({'side': outcome.values(workload.id, side, m)}):.4g}")
                for m in stats.TIMED_METRICS
                if m in middle
            }
            per_side.append([{m: float(f"{v:.6g}") for m, v in middle.items()}, bands] if middle else None)
        found[workload.id] = per_side
    return found


def downstream_pairs(view: Any) -> dict[str, Any] | None:
    """The downstream tier's data of a `DownstreamView` (None: no section): `suites`, each `{label, releases (those
    it has tests on, oldest first), pairs: {"A>B": [[weight, subject, change, detail], ...], notes]}}` for every
    ordered pair of its releases, by the review's own rules (module docstring). A build's column (`0.10.0
    (python-…)`) is no release the selects offer and is left out."""
    if view is None:
        return None
    suites = []
    for suite in view.suites:
        releases = sorted((r for r in suite.tests if " " not in r), key=version_order)
        pairs: dict[str, list[Any]] = {}
        for before in releases:
            for after in releases:
                if before == after:
                    continue
                judgement = judge(suite.label, suite.tests[before], suite.tests[after])
                tier = downstream_review_tier([(suite.label, before, after, judgement)])
                items = [[f.weight, f.subject, f.reason, f.detail] for f in tier.findings]
                pairs[f"{before}>{after}"] = [items, list(tier.notes)]
        suites.append({"label": suite.label, "releases": releases, "pairs": pairs})
    return {"suites": suites}


def probed_releases(model: Any) -> dict[str, list[str]]:
    """Platform → the releases (oldest first) whose column holds at least one probe cell, of a `ReportModel`."""
    rows = model.param_rows
    found: dict[str, list[str]] = {}
    for index, column in enumerate(model.columns):
        if any(row.cells[index].result for row in rows):
            found.setdefault(column.platform, []).append(column.jax)
    return {platform: sorted(set(jax), key=version_order) for platform, jax in found.items()}


def upgrade_data(
    versions: Sequence[str],
    outcome: PerfOutcome | None,
    judged: int | None = None,
    probed: dict[str, list[str]] | None = None,
    downstream: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The section's data block: `releases` for the selects, `probed` (platform → the releases with a probe cell,
    `probed_releases`; none given: none), and `perf` (None without samples): its `releases` (the sides, oldest
    first), `workloads`, `errors` (workload → the releases it failed on), and either `pairs` (rank-test verdicts of
    every pair, when at most `judged` tests, `MAX_JUDGED` by default) or `medians` (module docstring), with the
    threshold; `downstream` the downstream tier's data (`downstream_pairs`, None: no suite on the page), whose
    releases the selects offer too."""
    perf = None
    if outcome is not None:
        count, workloads = len(outcome.request.sides), outcome.request.workloads
        labels = [s.label for s in outcome.request.sides]
        errors: dict[str, list[str]] = {}
        for (wid, side), _ in sorted(outcome.errors.items()):
            errors.setdefault(wid, []).append(labels[side])
        perf = {
            "releases": labels,
            "workloads": [w.id for w in workloads],
            "errors": errors,
            "threshold": outcome.request.threshold,
            "exact": list(stats.EXACT_METRICS),
        }
        if count * (count - 1) // 2 * len(workloads) <= (MAX_JUDGED if judged is None else judged):
            perf["pairs"] = pair_verdicts(outcome)
        else:
            perf["medians"] = release_medians(outcome)
        versions = [*versions, *labels]
    if downstream:
        versions = [*versions, *(r for suite in downstream["suites"] for r in suite["releases"])]
    return {
        "releases": sorted(set(versions), key=version_order),
        "probed": dict(probed or {}),
        "perf": perf,
        "downstream": downstream,
    }
