"""The lines a run's and a decision session's events are said as, on the terminal. Pure: the CLI prints them.

`event_lines(event, gap)` gives `(stream, text)` pairs: `stderr` for notices, conflicts and failures, `stdout` for
progress. `gap` goes before the first line of each target's run (a blank line between targets in `run`).
"""

from __future__ import annotations

from typing import Any

from conformance.config import VERBOSITY
from conformance.decide.bisect_session import BisectStarted, BisectStep, ReleaseTested
from conformance.decide.sides import SidesRead
from conformance.engine import matrix


def ready_how(event: matrix.EnvironmentReady) -> str:
    """How an environment came to be ready: built or reused, from wheel files, or an existing interpreter."""
    made = "built" if event.built_now else "reused"
    return {
        "python": "an existing interpreter (nothing built), described",
        "wheels": f"environment from wheel files {made}",
    }.get(event.origin, f"environment {made}")


def conflict_line(conflict: Any) -> str:
    """A conflict of merged result files (the entry finished last is the one used)."""
    return f"jax-conformance: conflict: {conflict.describe()} (the file finished last is reported)"


def _dropped(event: matrix.CellsDropped) -> str:
    ids = event.cell_ids
    return (
        f"jax {event.version}: dropped {len(ids)} stored cell(s) of cases this checkout no longer declares: "
        f"{', '.join(ids[:3])}{' …' if len(ids) > 3 else ''}"
    )


def event_lines(event: Any, gap: str = "") -> list[tuple[str, str]]:
    """What to print for one event, as `(stream, text)` pairs (none for an event that says nothing); under `-q`
    only its warnings and errors (stderr)."""
    lines = _event_lines(event, gap)
    return [line for line in lines if line[0] == "stderr"] if VERBOSITY[0] < 0 else lines


def _event_lines(event: Any, gap: str = "") -> list[tuple[str, str]]:
    if isinstance(event, matrix.Notice):
        return [("stderr", f"jax-conformance: {event.text}")]
    if isinstance(event, matrix.VersionFailed):
        return [("stderr", f"jax-conformance: error: {event.error}")]
    if isinstance(event, SidesRead):
        return (
            [("stderr", conflict_line(c)) for c in event.conflicts]
            + [("stdout", f"note: --newest left out the candidate's {entry}") for entry in event.left_out]
            + [("stdout", note) for note in event.notes]
        )
    if isinstance(event, matrix.AnsweredFromStorage):
        text = (
            f"{gap}jax {event.version}: all {event.cells} selected cells answered by stored results "
            f"({event.path}); nothing built or run"
        )
    elif isinstance(event, matrix.EnvironmentReady):
        text = f"{gap}jax {event.version}: Python {event.python}, {ready_how(event)} in {event.seconds:.1f}s"
    elif isinstance(event, matrix.CellsDropped):
        text = _dropped(event)
    elif isinstance(event, matrix.VersionDone):
        done = event.run
        text = f"  {done.cells} cells ({done.ran} ran, {done.reused} reused) in {done.wall_s:.1f}s; wrote {done.path}"
    elif isinstance(event, BisectStarted):
        text = (
            f"bisect {event.cell_id}: {len(event.releases)} releases from {event.releases[0]} to "
            f"{event.releases[-1]}; testing both ends first"
        )
    elif isinstance(event, ReleaseTested):
        text = f"  jax {event.version}: {event.line}  ({event.how})"
    elif isinstance(event, BisectStep):
        text = event.text
    else:
        return []
    return [("stdout", text)]
