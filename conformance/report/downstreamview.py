"""The report's section "Downstream test suites": one part per suite (`chex==0.1.90`, a team's folder) from the
`downstream/` cells of the result files (`jax-conformance downstream`). Pure.

Per suite and release: how many of its tests ended in each status; the compatibility answer (the releases on which
the suite is clean, the release from which it regresses, those it cannot be installed with, those it was not run
on); and for each release with regressed tests, those tests grouped by signature against the first release the
suite was installed on (its baseline), with a count, three examples and a command that reproduces one. The
classification is `downstream.judge`'s and the signatures those stored in the cells (`downstream.cells.judged`):
this module only arranges them.

A release is clean only when the suite ran there (at least one test passed) and no test failed, errored, timed out,
crashed or failed to collect: a release with no test of the suite is "not run", never clean.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from typing import Sequence

from conformance.downstream.cells import is_downstream, judged, node_of
from conformance.downstream.judge import EXAMPLES, Cause, Judged, Judgement, judge
from conformance.downstream.lock import env_folder_name
from conformance.downstream.outcomes import FAILING, UNINSTALLABLE_ID
from conformance.results.merge import MergedRun
from conformance.results.versions import version_order
from conformance.safetext import terminal_text

# The table's rows: a label and the downstream statuses it counts (`downstream.outcomes.STATUSES`).
STATUS_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("passed", ("passed",)),
    ("failed", ("failed",)),
    ("error", ("error",)),
    ("skipped", ("skipped", "xfail")),
    ("flaky", ("flaky",)),
    ("collection error", ("collection_error",)),
    ("timeout", ("timeout",)),
    ("crash", ("crash",)),
    ("uninstallable", ("uninstallable",)),
)
# Where `envs.builder.cache_root` keeps environments, as a shell word.
CACHE = "${JAX_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jax-conformance}"
MAX_NAMED = 6  # releases a suite was not run on, named in the answer; more are counted
# The classes of a judgement that never gate, in the words the section uses.
OTHER_CLASSES = (
    ("flaky", "flaky"),
    ("spurious", "spurious (timeout or never reached)"),
    ("fixed", "fixed"),
    ("broken_same", "broken on both, same cause"),
    ("broken_changed", "broken on both, cause changed"),
    ("appeared", "appeared"),
    ("vanished", "vanished"),
)


@dataclass(frozen=True)
class ReleaseCounts:
    """One release of a suite: its tests counted per status row (`STATUS_ROWS`), the total, its verdict word
    (`clean`, `regresses`, `fails`, `uninstallable`, `not run`) and the install failure's reason ('' unless
    uninstallable)."""

    release: str
    counts: tuple[int, ...]
    total: int
    verdict: str
    reason: str = ""


@dataclass(frozen=True)
class CauseView:
    """One cause of a release's regressions: its signature, the library it is filed under, how many tests, up to
    three examples, the release it first regressed on, and the commands that reproduce the first example."""

    signature: str
    owner: str
    count: int
    examples: tuple[str, ...]
    first_seen: str
    reproduce: str


@dataclass(frozen=True)
class Regression:
    """A release's regressions against the baseline (grouped by cause), how many it has against the release before,
    the other classes' counts (`fixed 2`, ...), the install failure's reason when the lock cannot serve it, and the
    causes of tests that regressed against the release before only (they failed on the baseline too)."""

    release: str
    baseline: str
    previous: str
    regressed: int
    against_previous: int | None
    causes: tuple[CauseView, ...]
    others: tuple[tuple[str, int], ...]
    uninstallable: str = ""
    previous_only: tuple[CauseView, ...] = ()


@dataclass(frozen=True)
class SuiteView:
    """One suite on one platform: its label, id, kind (`index` or `folder`), the releases (columns, in version
    order), each release's counts, the baseline, the compatibility answer in words, and the releases with
    regressions."""

    label: str
    ident: str
    platform: str
    kind: str
    releases: tuple[ReleaseCounts, ...]
    baseline: str
    answer: str
    regressions: tuple[Regression, ...]
    anchor: str = ""
    # release -> node id -> its result as the judge reads it (the releases the suite has tests on): what the
    # upgrade view judges any two releases from (report.upgradeview.downstream_pairs)
    tests: dict[str, dict[str, Judged]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def columns(self) -> tuple[ReleaseCounts, ...]:
        """The releases the suite has tests on (the table's columns)."""
        return tuple(r for r in self.releases if r.total)

    @property
    def rows(self) -> list[tuple[str, list[int]]]:
        """The table's rows: a status and its count on each of `columns`."""
        return [(label, [r.counts[i] for r in self.columns]) for i, (label, _) in enumerate(STATUS_ROWS)]


@dataclass(frozen=True)
class DownstreamView:
    """The section: one `SuiteView` per suite and platform."""

    suites: tuple[SuiteView, ...]


def suite_of(case: str) -> str:
    """The suite's id in a downstream cell id (`downstream/chex_0_1_90.t3f...` -> `chex_0_1_90`)."""
    return case.split("/", 1)[1].rsplit(".", 1)[0]


def _label(cells: Sequence) -> str:
    for cell in cells:
        details = cell.details if isinstance(cell.details, dict) else {}
        if details.get("suite"):
            return str(details["suite"])
    return ""


def environment(label: str, ident: str, release: str, baseline: str) -> str:
    """Where a suite's tests ran on `release` and how to get that environment again: the `downstream` command line
    that builds it (its lock resolved against `baseline`, as the run's was; `--rerun`, since stored results would
    answer without building it), and the shell lines that enter it (the cache's `downstream/envs/` folder of the
    suite and release). A library's tests run in its installed package (`--pyargs`), a folder's in the folder."""
    folder = label.startswith("folder ")
    spec = label[len("folder ") :] if folder else label
    versions = " ".join(f"--jax {shlex.quote(v)}" for v in dict.fromkeys((baseline, release)))
    env = f"{CACHE}/downstream/envs/{env_folder_name(ident, release, '*', '*')}"
    lines = [
        # one line whatever the suite's label holds (a result file's text): a line break would end the comment
        terminal_text(
            f"# the environment of {spec} on jax {release} (its lock resolved against jax {baseline}): build it"
        ),
        f"jax-conformance downstream {shlex.quote(spec)} {versions} --rerun",
        "# then run the test there",
    ]
    if folder:
        return "\n".join(
            lines + [f"ENV=$(ls -d {env} | tail -n 1)", f"cd {shlex.quote(spec)}", '"$ENV/bin/python" -m pytest']
        )
    return "\n".join(
        lines + [f'cd "$(ls -d {env} | tail -n 1)"/lib/python3*/site-packages', "../../../bin/python -m pytest"]
    )


def reproduce(label: str, ident: str, release: str, baseline: str, node: str, pytest_args: Sequence[str] = ()) -> str:
    """The lines that run one node id again in the suite's environment of `release` (`environment`, then `pytest
    ARGS NODEID`, ARGS the manifest's own `pytest_args` that the run passed, from the cell's details)."""
    args = "".join(f" {shlex.quote(a)}" for a in pytest_args)
    return f"{environment(label, ident, release, baseline)}{args} {shlex.quote(node)}"


def _pytest_args(cells: Sequence) -> tuple[str, ...]:
    """The manifest's `pytest_args` a release's run passed, as its cells record them (none in cells stored before
    they were recorded)."""
    for cell in cells:
        details = cell.details if isinstance(cell.details, dict) else {}
        if isinstance(details.get("pytest_args"), list):
            return tuple(str(a) for a in details["pytest_args"])
    return ()


def _verdict(statuses: Sequence[str], regressed: int) -> str:
    if not statuses:
        return "not run"
    if "uninstallable" in statuses:
        return "uninstallable"
    if regressed:
        return "regresses"
    if any(s in FAILING for s in statuses):
        return "fails"
    return "clean" if "passed" in statuses or "flaky" in statuses else "not run"


def _span(releases: Sequence[str]) -> str:
    return ", ".join(releases)


def answer(releases: Sequence[ReleaseCounts], baseline: str) -> str:
    """The compatibility answer in one sentence: clean on which releases, from which release it regresses, which it
    fails on without a regression, cannot be installed with, or was not run on."""
    by: dict[str, list[str]] = {}
    for found in releases:
        by.setdefault(found.verdict, []).append(found.release)
    parts = []
    if by.get("clean"):
        parts.append(f"clean on {_span(by['clean'])}")
    if by.get("regresses"):
        regresses = by["regresses"]
        parts.append(
            f"regresses against {baseline} from {regresses[0]}"
            + (f" (on {_span(regresses)})" if len(regresses) > 1 else "")
        )
    if by.get("fails"):
        parts.append(f"fails without a regression on {_span(by['fails'])}")
    if by.get("uninstallable"):
        parts.append(f"cannot be installed with {_span(by['uninstallable'])}")
    if by.get("not run"):
        missing = by["not run"]
        parts.append(
            f"not run on {_span(missing)}"
            if len(missing) <= MAX_NAMED
            else f"not run on {len(missing)} other releases of this report"
        )
    return "; ".join(parts) or "no test ran"


def _order(release: str) -> tuple:
    """A column's place: its version's (a build's column, `0.10.0 (python-1a2b)`, after its release)."""
    version, _, build = release.partition(" ")
    return (*version_order(version), build)


def _judged(cells: Sequence) -> dict[str, Judged]:
    return {node_of(c): judged(c) for c in cells}


def _views(
    causes: Sequence[Cause], where: tuple[str, str, str, str, tuple[str, ...]], first_seen: dict[str, str]
) -> tuple[CauseView, ...]:
    """The causes as the page shows them; `where` is (label, ident, release, baseline, the run's pytest_args);
    `first_seen` (signature -> the release it first regressed on) is filled as releases are visited in order."""
    label, ident, release, baseline, args = where
    return tuple(
        CauseView(
            c.signature,
            c.owner,
            len(c.nodes),
            c.nodes[:EXAMPLES],
            first_seen.setdefault(c.signature, release),
            reproduce(label, ident, release, baseline, c.nodes[0], args),
        )
        for c in causes
        if c.nodes
    )


def suite_view(
    label: str, ident: str, platform: str, by_release: dict[str, list], releases: Sequence[str]
) -> SuiteView:
    """One suite's part: `by_release` maps a release to the suite's cells on it; `releases` are the report's releases
    on this platform, in version order (a release without cells of the suite is `not run`). The baseline is the
    first release the suite was installed on; each later release is judged against it and against the release
    before it that the suite ran on."""
    tests = {r: _judged(by_release.get(r, [])) for r in releases}
    installed = [r for r in releases if tests[r] and UNINSTALLABLE_ID not in tests[r]]
    baseline = installed[0] if installed else ""
    judgements: dict[str, Judgement] = {}
    stepwise: dict[str, Judgement] = {}
    previous = baseline
    for release in releases:
        if not baseline or _order(release) <= _order(baseline) or not tests[release]:
            continue
        judgements[release] = judge(label, tests[baseline], tests[release])
        if previous != baseline:
            stepwise[release] = judge(label, tests[previous], tests[release])
        if release in installed:
            previous = release
    counted = []
    for release in releases:
        statuses = [j.status for j in tests[release].values()]
        regressed = len(judgements[release].of("regressed")) if release in judgements else 0
        counts = tuple(sum(1 for s in statuses if s in words) for _, words in STATUS_ROWS)
        reason = next(
            (c.reason or "no reason given" for c in by_release.get(release, []) if node_of(c) == UNINSTALLABLE_ID), ""
        )
        counted.append(ReleaseCounts(release, counts, len(statuses), _verdict(statuses, regressed), reason))
    first_seen: dict[str, str] = {}
    regressions = []
    before = baseline
    for release in releases:
        judgement = judgements.get(release)
        if judgement is None:
            continue
        where = (label, ident, release, baseline, _pytest_args(by_release.get(release, [])))
        causes = _views(judgement.causes("regressed"), where, first_seen)
        step = stepwise.get(release)
        regressed = {c.node for c in judgement.of("regressed")}
        # A test can pass on the release before and fail here while it failed on the baseline too (broken on both
        # against the baseline): a regression of this step all the same, listed apart.
        apart = _views(
            [
                Cause(c.signature, c.owner, tuple(n for n in c.nodes if n not in regressed))
                for c in step.causes("regressed")
            ]
            if step is not None
            else [],
            where,
            first_seen,
        )
        counts = judgement.counts()
        uninstallable = next((c.signature for c in judgement.of("uninstallable")), "")
        if causes or uninstallable or apart:
            regressions.append(
                Regression(
                    release,
                    baseline,
                    before if step is not None else "",
                    counts.get("regressed", 0),
                    len(step.of("regressed")) if step is not None else None,
                    causes,
                    tuple((word, counts[kind]) for kind, word in OTHER_CLASSES if counts.get(kind)),
                    uninstallable,
                    apart,
                )
            )
        if release in installed:
            before = release
    return SuiteView(
        label,
        ident,
        platform,
        "folder" if label.startswith("folder ") else "index",
        tuple(counted),
        baseline,
        answer(counted, baseline),
        tuple(regressions),
        tests={r: found for r, found in tests.items() if found},
    )


def downstream_view(runs: Sequence[MergedRun]) -> DownstreamView | None:
    """The section of every suite in the merged runs (`results.merge.merge_files`), one part per suite and platform,
    suites in the order of their labels; None when no run holds a downstream cell. A build of its own (`--python`,
    `--wheels`) is a column of its own, named as the report names it."""
    found: dict[tuple[str, str], dict[str, list]] = {}
    columns: dict[str, list[str]] = {}
    for run in runs:
        release = run.jax if not run.build else f"{run.jax} ({run.build})"
        columns.setdefault(run.platform, [])
        if release not in columns[run.platform]:
            columns[run.platform].append(release)
        for cell_id, cell in run.cells.items():
            if is_downstream(cell_id):
                found.setdefault((suite_of(cell_id), run.platform), {}).setdefault(release, []).append(cell)
    if not found:
        return None
    several = len({platform for _, platform in found}) > 1
    suites = []
    for (ident, platform), by_release in found.items():
        label = _label([c for cells in by_release.values() for c in cells]) or ident
        releases = sorted(columns[platform], key=_order)
        view = suite_view(label, ident, platform, by_release, releases)
        suites.append((label, platform, view))
    suites.sort(key=lambda s: (s[0], s[1]))
    return DownstreamView(
        tuple(
            replace(view, anchor=f"downstream-{i}", label=f"{label} on {platform}" if several else label)
            for i, (label, platform, view) in enumerate(suites)
        )
    )
