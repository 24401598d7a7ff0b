"""`downstream SUITE...` (a typed request to lines and an exit status) and the one gate's downstream tier
(`gate --from A --to B --downstream SUITE`, `gate_tiers`).

For each suite: its lock is resolved once against the baseline (the first release), then each release is answered
from the stored cells when every one carries the run's reuse key, or its suite environment is prepared, the tests
run (failures rerun once) and the cells stored in the release's result file. Each later release is then judged
against the baseline (`judge`): `downstream` exits 1 on a regressed test no `[[downstream]]` entry acknowledges, and
`gate` makes the judgements its `downstream` tier (`gating`), judged in its one verdict with the other tiers.
`--budget` plans a subset from the durations recorded on the baseline (`budget`); `--shard` takes the one
(suite, release) pair a Kubernetes Indexed Job or SLURM array task names (`shards`). The CPU seconds of each run are
the children's (`resource.getrusage`), said per release.
"""

from __future__ import annotations

import datetime
import json
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from conformance.decide.expectations import utc_today
from conformance.decide.tiers import Tier
from conformance.downstream.acks import DownstreamAcks, acks_of, load_acks
from conformance.downstream.budget import plan_budget
from conformance.downstream.cells import durations, judged, node_of, run_key, to_cell
from conformance.downstream.gating import downstream_tier
from conformance.downstream.judge import Judgement, judge
from conformance.downstream.lock import Lock, Uninstallable, lock_for, prepare_suite_env, suite_env_digest
from conformance.downstream.manifest import Suite, folder_digest, read_suite
from conformance.downstream.picks import across_line, each_release, pick_lines, picked_version
from conformance.downstream.sdist import sdist_tests
from conformance.downstream.sourcescan import library_files, scan_lines, scan_source
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.downstream.runner import run_suite, where_it_runs
from conformance.downstream.shards import shard_file_suffix, shard_for, shard_index
from conformance.downstream.store import store_suite, stored_suite, suite_cells
from conformance.engine.matrix import host_platform
from conformance.engine.targets import Release
from conformance.errors import ConformanceError
from conformance.jsonout import write_json
from conformance.results.outputs import check_outputs
from conformance.results.schema import CellResult

try:
    import resource
except ImportError:  # Windows: no CPU seconds of children
    resource = None  # type: ignore[assignment]


@dataclass(frozen=True)
class DownstreamRequest:
    """The suites, the releases (the baseline first), the results folder, a manifest for a single suite, the budget
    in seconds, the JSON output, whether to run again where stored cells would answer, and whether to run only the
    shard the task index names."""

    suites: tuple[str, ...]
    versions: tuple[str, ...]
    results: Path
    manifest: Path | None = None
    budget_s: float | None = None
    json_path: Path | None = None
    rerun: bool = False
    shard: bool = False
    expectations: Path | None = None
    today: datetime.date | None = None
    read: Any = None  # the expectations file as the gate read it (`ExpectationsFile`): not read a second time
    resolve: str = "baseline"  # "each": each release's own resolver pick of the library (`picks`)
    api_scan: bool = True  # scan the library's installed source against each candidate (`sourcescan`)


@dataclass
class DownstreamOutcome:
    """The lines to print, each suite's judgements, and the exit status."""

    lines: list[str] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)
    exit_code: int = 0


def _cpu() -> float:
    if resource is None:
        return 0.0
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _counts(cells: Sequence[CellResult]) -> str:
    found: dict[str, int] = {}
    for cell in cells:
        word = judged(cell).status
        found[word] = found.get(word, 0) + 1
    return ", ".join(f"{n} {w}" for w, n in sorted(found.items(), key=lambda kv: -kv[1]))


def _libraries(suite: Suite) -> dict[str, tuple[str, ...]]:
    return {suite.name or suite.ident: suite.manifest.packages}


def _tests_of(suite: Suite, library_version: str, builder: Any) -> tuple[Suite, str]:
    """The suite as the runner runs it and its test files' digest: a folder as it is; a `tests = "sdist"` library as
    the folder its sdist's tests are extracted to (run there, so they import the installed library); else as it is."""
    if suite.kind == "folder" and suite.folder is not None:
        return suite, folder_digest(suite.folder)
    if suite.manifest.tests == "sdist":
        folder = sdist_tests(suite.name, library_version, suite.manifest.sdist_tests, suite.manifest.packages, builder)
        runs_as = replace(suite, kind="folder", folder=folder, manifest=replace(suite.manifest, tests="folder"))
        return runs_as, folder_digest(folder)
    return suite, ""


def _release(
    suite: Suite,
    lock: Lock | Uninstallable,
    version: str,
    selected: Sequence[str] | None,
    request: DownstreamRequest,
    builder: Any,
    say: Callable[[str], None],
    shard_suffix: str = "",
) -> list[CellResult]:
    platform = host_platform()
    if isinstance(lock, Uninstallable):  # `--resolve each`: the library does not resolve with this release
        outcome = NodeOutcome(UNINSTALLABLE_ID, "uninstallable", reason=lock.reason)
        cells = [to_cell(suite.ident, suite.label, outcome, lock.lock_digest, [], {}, ())]
        store_suite(
            request.results,
            version,
            platform,
            suite.ident,
            cells,
            "",
            0.0,
            whole=selected is None,
            shard_suffix=shard_suffix,
        )
        say(f"  jax {version}: uninstallable: {lock.reason}")
        return cells
    library = picked_version(lock.text, suite.name) or suite.version
    label = f"{suite.name}=={library}" if request.resolve == "each" else suite.label
    runs_as, files = _tests_of(suite, library, builder)
    key = run_key(suite.spec, suite.manifest.text, files, suite_env_digest(lock, version, builder), selected)
    stored = (
        None
        if request.rerun
        else stored_suite(request.results, version, platform, suite.ident, key, selected, shard_suffix)
    )
    pick = f" ({label}, the resolver's pick)" if request.resolve == "each" else ""
    if stored is not None:
        say(f"  jax {version}{pick}: {_counts(stored)} (stored results)")
        return stored
    started, cpu = time.monotonic(), _cpu()
    say(f"  jax {version}{pick}: preparing the suite's environment and running its tests...")
    env = prepare_suite_env(suite, lock, version, builder)
    built = time.monotonic() - started
    if isinstance(env, Uninstallable):
        outcome = NodeOutcome(UNINSTALLABLE_ID, "uninstallable", reason=env.reason)
        cells = [to_cell(suite.ident, suite.label, outcome, key, [], {}, ())]
        python = ""
    else:
        cpu = _cpu()
        ran = run_suite(runs_as, env, selected)
        roots = [str(where_it_runs(runs_as, env)), str(env.site_packages())]
        cells = [
            to_cell(
                suite.ident,
                suite.label,
                o,
                key,
                roots,
                _libraries(suite),
                suite.manifest.packages,
                suite.manifest.pytest_args,
            )
            for o in ran.outcomes.values()
        ]
        python = env.python_version
    for cell in cells:  # the heading stays the suite's; each cell records the library version that ran
        cell.details["suite"] = label
    stored_as = store_suite(
        request.results,
        version,
        platform,
        suite.ident,
        cells,
        python,
        time.monotonic() - started,
        whole=selected is None,
        shard_suffix=shard_suffix,
    )
    say(
        f"  jax {version}{pick}: {_counts(cells)} ({time.monotonic() - started:.0f} s wall, {_cpu() - cpu:.0f} CPU s, "
        f"environment {built:.0f} s; stored in {stored_as.path})"
    )
    return cells


def _judgement_lines(judgement: Judgement, base: str, cand: str) -> list[str]:
    counts = judgement.counts()
    order = (
        "regressed",
        "uninstallable",
        "flaky",
        "spurious",
        "fixed",
        "broken_same",
        "broken_changed",
        "appeared",
        "vanished",
    )
    said = ", ".join(f"{counts[k]} {k.replace('_', ' ')}" for k in order if counts.get(k)) or "no change"
    lines = [f"  {base} -> {cand}: {said}"]
    for kind in ("regressed", "uninstallable"):
        for cause in judgement.causes(kind):
            lines.append(f"    {kind}: {cause.line()}")
        for cause in judgement.causes(kind, acknowledged=True):
            lines.append(f"    acknowledged: {cause.line()}")
    for change in judgement.of("flaky"):
        lines.append(f"    flaky (never gates): {change.node} ({change.before} -> {change.after})")
    for change in judgement.of("spurious"):
        lines.append(f"    spurious (never gates): {change.node} ({change.after})")
    for warned in judgement.new_warnings[:10]:
        lines.append(f"    new deprecation warning from the library's code: {warned}")
    return lines


def _selection(suite: Suite, request: DownstreamRequest, say: Callable[[str], None]) -> list[str] | None:
    if request.budget_s is None:
        return None
    recorded: dict[str, float] = {}
    for version in request.versions:
        recorded = durations(suite_cells(request.results, version, host_platform(), suite.ident))
        if recorded:
            break
    if not recorded:
        say(
            f"  budget {request.budget_s:g} s: no recorded durations yet, the whole suite runs (the next run plans "
            f"from this one)"
        )
        return None
    planned = plan_budget(list(recorded), recorded, request.budget_s, suite.manifest.time_multiplier)
    say(f"  {planned.line(request.budget_s)}")
    return list(planned.kept)


@dataclass
class SuitesJudged:
    """What `judge_suites` found: each suite's judgement of each later release against the first (label, baseline,
    candidate, judgement), the lines naming the expired `[[downstream]]` entries, and every release's cells as JSON
    per suite."""

    judged: list[tuple[str, str, str, Judgement]] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    cells: dict[str, Any] = field(default_factory=dict)
    picks: dict[str, dict[str, str]] = field(default_factory=dict)  # `--resolve each`: label -> release -> version
    locks: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> release -> Lock or Uninstallable
    suites: dict[str, Suite] = field(default_factory=dict)  # label -> the suite


def judge_suites(request: DownstreamRequest, builder: Any, say: Callable[[str], None]) -> SuitesJudged:
    """Run or answer each suite on each release (stored cells answer while their key holds), store the cells and
    judge each release against the first; progress goes to `say`. What `downstream` prints and `gate --downstream`
    turns into its tier."""
    if not request.versions:
        raise ConformanceError("name the releases: --from A --to B, --jax V (repeatable) or --matrix NAME")
    if request.manifest is not None and len(request.suites) != 1:
        raise ConformanceError("--manifest describes one suite; name one suite with it")
    if request.resolve not in ("baseline", "each"):
        raise ConformanceError(
            f"--resolve is {request.resolve!r}; give baseline (one lock) or each (each release's own pick)"
        )
    if request.budget_s is not None and not request.budget_s > 0:
        raise ConformanceError(f"--budget is {request.budget_s:g}; give a positive number of seconds")
    check_outputs(
        [("--json", request.json_path)], results=request.results, reads=[request.expectations, request.manifest]
    )
    suites, versions, suffix = list(request.suites), list(request.versions), ""
    if request.shard:
        index = shard_index(os.environ)
        if index is None:
            raise ConformanceError(
                "--shard reads JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (SLURM); neither is set"
            )
        chosen = shard_for(suites, versions, index)
        suffix = shard_file_suffix(index, len(suites) * len(versions))  # a name of its own: one folder holds them all
        suites, versions = [chosen.suite], [chosen.release]
        say(f"shard {index}: {chosen.suite} on jax {chosen.release} (lock resolved against jax {request.versions[0]})")
    found = SuitesJudged()
    named = [read_suite(spec, request.manifest) for spec in suites]
    if request.resolve == "each":
        if any(suite.kind != "index" for suite in named):
            raise ConformanceError("--resolve each picks a library's version per release; name libraries (NAME==V)")
        named = [replace(suite, resolve="each") for suite in named]
    libraries = {k: v for suite in named for k, v in _libraries(suite).items()}
    acks = {cand: acks_for(request, request.today or datetime.date.today(), cand) for cand in versions[1:]}
    found.expired = sorted({line for read in acks.values() for line in read.expired})
    for suite in named:
        locks: dict[str, Lock | Uninstallable]
        if suite.resolve == "each":
            say(f"downstream {suite.label}: {suite.name} resolved afresh with each release ({suite.spec}: pin dropped)")
            locks = each_release(suite, versions, builder)
            found.picks[suite.label] = {
                v: picked_version(lock.text, suite.name) if isinstance(lock, Lock) else "" for v, lock in locks.items()
            }
        else:
            say(f"downstream {suite.label}: lock resolved against jax {request.versions[0]}")
            lock = lock_for(suite, request.versions[0], builder)
            locks = {v: lock for v in versions}
        found.locks[suite.label], found.suites[suite.label] = locks, suite
        selected = _selection(suite, request, say)
        cells = {v: _release(suite, locks[v], v, selected, request, builder, say, suffix) for v in versions}
        base = versions[0]
        for cand in versions[1:]:
            judgement = judge(
                suite.spec,
                {node_of(c): judged(c, libraries) for c in cells[base]},
                {node_of(c): judged(c, libraries) for c in cells[cand]},
                acks[cand].acks,
                [node for node, _ in suite.manifest.flaky],
            )
            found.judged.append((suite.label, base, cand, judgement))
        found.cells[suite.spec] = {v: [c.to_json() for c in cs] for v, cs in cells.items()}
    return found


def acks_for(request: DownstreamRequest, today: datetime.date, candidate: str) -> DownstreamAcks:
    """The `[[downstream]]` entries that apply to `candidate` on `today`: from the expectations file the gate already
    read (`request.read`), else read from `request.expectations` (none without one)."""
    if request.read is not None:
        return acks_of(request.read.downstream, request.read.source, today, candidate)
    return load_acks(request.expectations, today, candidate)


def run_downstream(request: DownstreamRequest, builder: Any, say: Callable[[str], None]) -> DownstreamOutcome:
    """`downstream SUITE...`: each suite on each release, judged against the first (`judge_suites`); exit 1 on a
    regressed test no `[[downstream]]` entry acknowledges."""
    found = judge_suites(request, builder, say)
    outcome = DownstreamOutcome(judgements=[judgement for *_, judgement in found.judged])
    for line in found.expired:
        say(f"  note: {line}")
    several = len(request.suites) > 1
    scans: dict[str, Any] = {}
    for label, base, cand, judgement in found.judged:
        say(f"downstream {label}:") if several else None
        for line in _judgement_lines(judgement, base, cand):
            say(line)
        suite = found.suites[label]
        if label in found.picks:
            note = across_line(suite.name, found.picks[label], base, cand)
            say(note) if note else None
        if request.api_scan:
            scans.setdefault(label, {})[cand] = _scan(suite, found.locks[label][cand], cand, request, builder, say)
        if judgement.gating:
            outcome.exit_code = 1
    for label, picks in found.picks.items():
        say(f"downstream {label}: the resolver's pick per release")
        for line in pick_lines(found.suites[label].name, picks):
            say(line)
    if outcome.judgements:
        gating = sum(len(j.gating) for j in outcome.judgements)
        say(
            f"downstream: {'FAIL' if gating else 'pass'}: {gating} regressed test{'s' if gating != 1 else ''} no "
            f"[[downstream]] entry acknowledges" + (" (exit 1)" if gating else "")
        )
    if request.json_path is not None:
        written = public_json(found.cells, outcome.judgements)
        written["picks"], written["api_scans"] = found.picks, scans
        say(write_json(request.json_path, json.dumps(written, indent=1)))
    return outcome


def _scan(
    suite: Suite, lock: Any, cand: str, request: DownstreamRequest, builder: Any, say: Callable[[str], None]
) -> list[dict[str, Any]] | None:
    """`api scan` of the library's own source as installed in the candidate's environment (a team folder's packages
    where they lie) against the candidate; its lines said, its findings returned as JSON (None when nothing was
    scanned: no environment, or no library source)."""
    if suite.kind == "folder" and suite.folder is not None:
        root, what = suite.folder, f"the folder's packages ({', '.join(suite.manifest.packages)})"
    else:
        if isinstance(lock, Uninstallable):
            return None
        env = prepare_suite_env(suite, lock, cand, builder)
        if isinstance(env, Uninstallable):
            return None
        root, what = env.site_packages(), f"{suite.name}'s installed source"
    files = library_files(root, suite.manifest.packages)
    if not files:
        return None
    findings = scan_source(files, cand, request.results, lambda: builder, say)
    for line in scan_lines(findings, root, what, cand, len(files)):
        say(line)
    return [f.to_json() for f in findings if f.state in ("removed", "missing", "guarded", "deprecated")]


def gate_tiers(suites: Sequence[str], budget_s: float | None = None) -> tuple[Callable[..., Tier], ...]:
    """`gate --from A --to B --downstream SUITE`: the one gate's downstream tier, as a `decide.onegate.TierJudge`
    (none without a suite). The gate's request gives the releases, the results folder, `--rerun`, the expectations
    file (its `[[downstream]]` entries) and `--today`; the baseline side is answered from storage where it can be."""
    if not suites:
        return ()

    def downstream(request: Any, expectations: Any, builder: Callable[[], Any], say: Callable[[str], None]) -> Tier:
        cells, target = request.cells, request.cells.to[0] if request.cells.to else None
        if not cells.from_version or not isinstance(target, Release):
            raise ConformanceError("--downstream judges two releases: give --from VERSION and --to VERSION")
        found = judge_pair(
            DownstreamRequest(
                tuple(suites),
                (cells.from_version, target.label),
                cells.settings.results,
                budget_s=budget_s,
                rerun=cells.settings.rerun,
                expectations=cells.expectations,
                today=cells.today,
                read=expectations,  # the gate's one reading of the file
            ),
            builder,
            say,
        )
        return downstream_tier(found.judged, found.expired)

    return (downstream,)


def judge_pair(request: DownstreamRequest, builder: Callable[[], Any], say: Callable[[str], None]) -> SuitesJudged:
    """The suites judged from one release to another, as `gate --downstream` and `upgrade --downstream` judge them:
    `judge_suites` (stored cells answer while their key holds, else the suite runs), today the UTC date unless the
    request names one; the builder is made only here, once."""
    if len(request.versions) != 2:
        raise ConformanceError("--downstream judges two releases: give --from VERSION and --to VERSION")
    return judge_suites(replace(request, today=request.today or utc_today()), builder(), say)


def public_json(cells: dict[str, Any], judgements: Sequence[Judgement]) -> dict[str, Any]:
    """`--json`: format 1; per suite and release the status of each node id, and each judgement's changes."""
    return {
        "format": 1,
        "suites": {
            spec: {
                version: {
                    c["details"]["nodeid"]
                    if isinstance(c.get("details"), dict) and "nodeid" in c["details"]
                    else c["case"]: (c.get("observation") or {}).get("test")
                    for c in found
                }
                for version, found in by_version.items()
            }
            for spec, by_version in cells.items()
        },
        "judgements": [
            {
                "suite": j.suite,
                "counts": j.counts(),
                "new_warnings": j.new_warnings,
                "changes": [
                    {
                        "node": c.node,
                        "kind": c.kind,
                        "before": c.before,
                        "after": c.after,
                        "signature": c.signature,
                        "owner": c.owner,
                        "acknowledged": c.acknowledged,
                    }
                    for c in j.changes
                ],
            }
            for j in judgements
        ],
    }
