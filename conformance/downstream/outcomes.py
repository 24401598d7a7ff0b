"""What one pytest run of a downstream suite did, read from the plugin's event lines. Pure.

Each node id gets one `NodeOutcome` with its downstream status:

| status | meaning |
|---|---|
| `passed` | the test passed |
| `failed` | its call failed (or an xfail test passed under `strict`) |
| `error` | its setup or teardown failed |
| `skipped`, `xfail` | skipped, or failed as marked |
| `collection_error` | its module did not collect (one outcome per module, its node id the module's) |
| `timeout` | it ran past the per-test bound, or was running when the whole-run bound killed pytest |
| `crash` | pytest died before it finished it (the test that was running, and every test it never reached) |
| `uninstallable` | the suite's lock cannot be installed with this release (one outcome for the whole suite) |
| `flaky` | failed, then passed when rerun once in the same environment (never gates) |
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

STATUSES = (
    "passed",
    "failed",
    "error",
    "skipped",
    "xfail",
    "collection_error",
    "timeout",
    "crash",
    "uninstallable",
    "flaky",
)
FAILING = frozenset({"failed", "error", "collection_error", "timeout", "crash", "uninstallable"})
UNINSTALLABLE_ID = "(install)"


@dataclass(frozen=True)
class NodeOutcome:
    """One node id's outcome in one run: its status, seconds, exception (`type`, `message`, `frames`), the
    deprecation warnings it raised, and a reason (why it was skipped, crashed or could not be installed)."""

    nodeid: str
    status: str
    duration: float = 0.0
    exception: dict[str, Any] | None = None
    warnings: tuple[dict[str, Any], ...] = ()
    reason: str = ""
    rerun: str = ""  # the status when rerun once (failing tests only)
    reached: bool = True  # False for a test a dead pytest never started


@dataclass
class RunRead:
    """A run's outcomes by node id, and whether pytest finished its session."""

    outcomes: dict[str, NodeOutcome] = field(default_factory=dict)
    finished: bool = False
    collected: list[str] = field(default_factory=list)


def read_events(text: str, *, killed: bool = False, exit_code: int | None = 0) -> RunRead:
    """The outcomes of a run from the plugin's event lines. `killed`: the whole-run bound ended it (the test then
    running is a timeout); a run that did not finish its session makes its unfinished tests `crash`."""
    run = RunRead()
    started: str | None = None
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut short by a dying process
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "collected":
            run.collected = [str(n) for n in event.get("nodeids") or []]
        elif kind == "collect_error":
            node = str(event.get("nodeid") or "?")
            run.outcomes[node] = NodeOutcome(node, "collection_error", exception=event.get("exception"))
        elif kind == "start":
            started = str(event.get("nodeid"))
        elif kind == "test":
            node = str(event.get("nodeid"))
            status = str(event.get("outcome"))
            run.outcomes[node] = NodeOutcome(
                node,
                status if status in STATUSES else "error",
                float(event.get("duration") or 0.0),
                event.get("exception"),
                tuple(event.get("warnings") or ()),
                str(event.get("message") or ""),
            )
            started = None if started == node else started
        elif kind == "finished":
            run.finished = True
    if not run.finished:
        how = (
            "the run's time bound ended pytest"
            if killed
            else f"pytest died (exit status {exit_code})"
            if exit_code is not None
            else "pytest died"
        )
        if started is not None and started not in run.outcomes:
            run.outcomes[started] = NodeOutcome(
                started, "timeout" if killed else "crash", reason=f"{how} while this test ran"
            )
        for node in run.collected:
            if node not in run.outcomes:
                run.outcomes[node] = NodeOutcome(
                    node, "crash", reason=f"{how} before this test was reached", reached=False
                )
    return run


def with_rerun(first: dict[str, NodeOutcome], rerun: dict[str, NodeOutcome]) -> dict[str, NodeOutcome]:
    """The outcomes with each rerun test's second status: a failed or error test that passed when rerun is `flaky`
    (it never gates); one that failed again keeps its first status, with the rerun's status recorded."""
    merged = dict(first)
    for node, again in rerun.items():
        before = first.get(node)
        if before is None or before.status not in ("failed", "error"):
            continue
        status = "flaky" if again.status == "passed" else before.status
        merged[node] = NodeOutcome(
            node, status, before.duration, before.exception, before.warnings, before.reason, again.status
        )
    return merged


def rerun_candidates(outcomes: dict[str, NodeOutcome]) -> list[str]:
    """The tests rerun once in the same environment: those that failed or errored (a crash or a timeout is never
    retried, as PkgEval does not retry crashes; a collection error is the module's, not a test's)."""
    return sorted(n for n, o in outcomes.items() if o.status in ("failed", "error"))
