"""`bisect NODEID --downstream SUITE --good A --bad B`: the first release where one test of a downstream suite changed.

The search is `decide.bisect.bisect` (the one bisection loop) over the releases `decide.bisect.releases_between`
lists, and the session's outcome is `decide.bisect_session.BisectReport` (printed and written as `bisect CELL`'s is).
Only the oracle is the suite's: for a release it answers from the suite's stored cells where a cell of that node id
carries a key this run would give (the one node's selection, or a whole `downstream` run's), otherwise it prepares
the (suite, release) environment from the suite's lock (resolved once against the good end, only jax and jaxlib
swapped, as `downstream` does), runs that one node id, and stores its cell through the same store.

The decisions are pure functions here, apart from the I/O:

- `pick_cell`: the node id's own cell; else its module's collection error; else the suite's install cell.
- `node_verdict`: a release the test cannot judge (`uninstallable`, `crash`, `timeout`) is `Untestable` with its
  reason: skipped and named at a midpoint, one line at an end (never a crash of the tool). A node id the run did not
  report is `absent`: a verdict of its own (unlike a test that ran), except at the good end, where it is an error.
- `like_test`: like the good end when the test's word is the same (`flaky`, which passed when rerun, reads as
  `passed`) and, when both fail, the signature is the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from conformance.decide.bisect import BisectOutcome, Memo, Untestable, bisect, releases_between
from conformance.decide.bisect_session import (
    BisectReport,
    BisectRequest,
    BisectStarted,
    BisectStep,
    ReleaseTested,
    run_bisect,
    stored_build,
    stored_header,
    write_bisect_files,  # noqa: F401 - the CLI's, with `run_any_bisect`
)
from conformance.downstream.cells import judged, node_of, run_key, to_cell
from conformance.downstream.lock import Uninstallable, lock_for, prepare_suite_env, suite_env_digest
from conformance.downstream.manifest import folder_digest, read_suite
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.downstream.runner import run_suite, where_it_runs
from conformance.downstream.store import store_suite, suite_cells
from conformance.engine.matrix import host_platform
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult

# Words that say nothing about the test itself: the release is skipped (as `bisect CELL` skips a build that fails).
UNTESTABLE_WORDS = frozenset({"uninstallable", "crash", "timeout"})
ABSENT = "absent"
PASSING_AFTER_RERUN = {"flaky": "passed"}  # a failure that passed when rerun never gates: it reads as passed
FAILING_WORDS = frozenset({"failed", "error", "collection_error"})


def word_of(cell: CellResult) -> str:
    """The downstream word a cell holds (`passed`, `failed`, ..., or `absent`)."""
    return judged(cell).status


def pick_cell(cells: Sequence[CellResult], node: str) -> CellResult | None:
    """The cell that answers for `node` among one run's cells: its own; else its module's collection error; else the
    suite's install cell (the lock could not serve the release); None when the run did not report it."""
    by_node = {node_of(c): c for c in cells}
    module = node.split("::", 1)[0]
    if node in by_node:
        return by_node[node]
    if module in by_node and word_of(by_node[module]) == "collection_error":
        return by_node[module]
    return by_node.get(UNINSTALLABLE_ID)


def stored_answer(cells: Sequence[CellResult], node: str, keys: Sequence[str]) -> CellResult | None:
    """The stored cell that answers for `node` (as `pick_cell` picks) among those carrying one of `keys`, else None."""
    return pick_cell([c for c in cells if c.key in keys], node)


def absent_cell(ident: str, label: str, node: str, key: str = "") -> CellResult:
    """The verdict of a release whose run did not report `node` (never stored: nothing ran for it)."""
    outcome = NodeOutcome(node, ABSENT, reason="the run did not report this node id (not collected)")
    return to_cell(ident, label, outcome, key, [], {}, ())  # its word kept in the observation: `absent`


def node_verdict(cell: CellResult, version: str) -> CellResult | Untestable:
    """The oracle's answer for one release: the cell, or `Untestable` when its word says nothing about the test."""
    word = word_of(cell)
    if word in UNTESTABLE_WORDS:
        reason = f": {' '.join(cell.reason.split())[:300]}" if cell.reason else ""
        return Untestable(version, f"{word}{reason}")
    return cell


def _reading(cell: CellResult) -> tuple[str, str]:
    word = word_of(cell)
    word = PASSING_AFTER_RERUN.get(word, word)
    return word, judged(cell).signature if word in FAILING_WORDS else ""


def like_test(start: CellResult, other: CellResult) -> bool:
    """Whether `other` reads as the good end does: the same word (`flaky` read as `passed`) and, both failing, the
    same signature (a test that fails for another reason has changed)."""
    return _reading(start) == _reading(other)


def node_line(cell: CellResult) -> str:
    """A release's verdict on the test, on one line: its word, and its signature when it fails."""
    word, signature = _reading(cell)
    said = f"{word_of(cell)}: {signature}" if signature else word_of(cell)
    return said if len(said) <= 300 else said[:299] + "…"


def search_test(node: str, releases: Sequence[str], memo: Memo, on_step: Callable[[str], None]) -> BisectOutcome:
    """Check the ends, then search `releases` (good end first) with `decide.bisect.bisect` and `like_test`.

    Refused in one line: the same release at both ends, and a node id the good end does not report (a typo, or a
    test that does not exist there: there is nothing to compare with)."""
    if len(releases) < 2:
        raise ConformanceError("--good and --bad name the same release; bisect needs two different releases")
    start = memo(releases[0])
    if isinstance(start, CellResult) and word_of(start) == ABSENT:
        raise ConformanceError(
            f"{node} is not a test of the suite on jax {releases[0]} (the good end): give a node id pytest collects "
            f"there (`pytest --collect-only -q` in the suite's environment)"
        )
    return bisect(list(releases), memo, like_test, on_step=on_step, unit="release")


@dataclass
class NodeOracle:
    """The bisect oracle of one node id: `stored(version)` (the stored cell that answers, or None) first, else
    `run(version)` (the one node run and stored: that run's cells; a `ConformanceError` when it cannot run)."""

    node: str
    stored: Callable[[str], CellResult | None]
    run: Callable[[str], Sequence[CellResult]]
    absent: Callable[[str], CellResult]
    seconds: dict[str, float] = field(default_factory=dict)
    from_storage: set[str] = field(default_factory=set)

    def __call__(self, version: str) -> CellResult | Untestable:
        """The release's verdict on the test (`node_verdict`), or `Untestable` and why."""
        started = time.monotonic()
        found = self.stored(version)
        if found is not None:
            self.from_storage.add(version)
        else:
            try:
                found = pick_cell(self.run(version), self.node) or self.absent(version)
            except ConformanceError as exc:  # no interpreter, an environment that does not build, pytest not started
                return Untestable(version, str(exc))
        self.seconds[version] = round(time.monotonic() - started, 1)
        return node_verdict(found, version)


def _refused(request: BisectRequest) -> str:
    said = [
        flag
        for flag, given in (
            ("--find-fix", request.find_fix),
            ("--attribute", request.attribute),
            ("--jax-source", request.jax_source),
            ("--pre", request.pre),
        )
        if given
    ]
    return ", ".join(said)


def suite_oracle(request: BisectRequest, builder: Any) -> NodeOracle:
    """The oracle of `request.cell` (a node id) in `request.downstream`'s suite: the lock resolved against the good
    end, each release answered from storage where a key holds, else run (that one node id) and stored."""
    suite = read_suite(request.downstream, request.manifest)
    lock = lock_for(suite, request.good, builder)
    platform, node, folder = host_platform(), request.cell, Path(request.results)
    files = folder_digest(suite.folder) if suite.kind == "folder" and suite.folder is not None else ""

    def keys(version: str) -> tuple[str, str]:  # the one node's run, and a whole `downstream` run's
        environment = suite_env_digest(lock, version, builder)
        return (
            run_key(suite.spec, suite.manifest.text, files, environment, [node]),
            run_key(suite.spec, suite.manifest.text, files, environment, None),
        )

    def stored(version: str) -> CellResult | None:
        try:
            wanted = keys(version)
        except ConformanceError:
            return None  # no interpreter for it: the run says why
        return stored_answer(suite_cells(folder, version, platform, suite.ident), node, wanted)

    def run(version: str) -> list[CellResult]:
        key, started = keys(version)[0], time.monotonic()
        env = prepare_suite_env(suite, lock, version, builder)
        if isinstance(env, Uninstallable):
            cells = [
                to_cell(
                    suite.ident,
                    suite.label,
                    NodeOutcome(UNINSTALLABLE_ID, "uninstallable", reason=env.reason),
                    key,
                    [],
                    {},
                    (),
                )
            ]
            python = ""
        else:
            ran = run_suite(suite, env, [node])
            roots = [str(where_it_runs(suite, env)), str(env.site_packages())]
            libraries = {suite.name or suite.ident: suite.manifest.packages}
            cells = [
                to_cell(
                    suite.ident,
                    suite.label,
                    o,
                    key,
                    roots,
                    libraries,
                    suite.manifest.packages,
                    suite.manifest.pytest_args,
                )
                for o in ran.outcomes.values()
            ]
            python = env.python_version
        store_suite(folder, version, platform, suite.ident, cells, python, time.monotonic() - started, whole=False)
        return cells

    return NodeOracle(node, stored, run, lambda version: absent_cell(suite.ident, suite.label, node))


def bisect_test(
    request: BisectRequest,
    builder: Any,
    on_event: Callable[[Any], None] = lambda event: None,
    oracle: NodeOracle | None = None,
) -> BisectReport:
    """`bisect NODEID --downstream SUITE --good A --bad B`: the release where the test changed, as a `BisectReport`
    (`oracle` given by tests; by default `suite_oracle`'s)."""
    if _refused(request):
        raise ConformanceError(f"{_refused(request)} bisect a case's cell; a downstream test is bisected without them")
    started = time.monotonic()
    releases = releases_between(builder.index.releases("jax"), request.good, request.bad)
    if len(releases) < 2:
        raise ConformanceError("--good and --bad name the same release; bisect needs two different releases")
    oracle = oracle if oracle is not None else suite_oracle(request, builder)

    def announced(version: str) -> CellResult | Untestable:
        found = oracle(version)
        if isinstance(found, CellResult):
            how = "stored result" if version in oracle.from_storage else f"{oracle.seconds.get(version, 0):.0f}s"
            on_event(ReleaseTested(version, node_line(found), how))
        return found

    on_event(BisectStarted(request.cell, tuple(releases)))
    report = BisectReport(request.cell, False, releases, Path(request.results).absolute())
    report.outcome = search_test(request.cell, releases, Memo(announced), lambda line: on_event(BisectStep(line)))
    if report.outcome.first_bad:
        report.good_build = stored_build(request.results, report.outcome.last_good)
        report.bad_build = stored_build(request.results, report.outcome.first_bad)
        header = stored_header(request.results, report.outcome.first_bad)
        if header is not None:
            report.environment = {"platform": header.platform, "python": header.python or "?"}
    report.ran = [v for v in releases if v in oracle.seconds and v not in oracle.from_storage]
    report.from_storage = [v for v in releases if v in oracle.from_storage]
    report.wall_s = time.monotonic() - started
    return report


def run_any_bisect(
    request: BisectRequest, builder: Any, on_event: Callable[[Any], None] = lambda event: None
) -> BisectReport:
    """`bisect`: a downstream test's (`--downstream SUITE`: `bisect_test`), else a case's cell (`run_bisect`)."""
    return (bisect_test if request.downstream else run_bisect)(request, builder, on_event)
