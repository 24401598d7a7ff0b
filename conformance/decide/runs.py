"""The I/O side of bisect: build one release's environment and run one cell in it, through objects passed in.

`CellOracle(builder, cell, run_cell, stored)` is the bisect oracle: for a release it first asks
`stored(version)` for a stored result that still answers (the results folder of an earlier run; then
nothing is built or run), and otherwise prepares the
environment with the `EnvironmentBuilder` (only for releases the search tests) and runs the
one cell with `run_cell(env)`, which returns the version's result file (the bisect session,
`decide.bisect_session`, passes the engine's run path for that one cell, so the cell is stored in
the results folder like any run's). A release that no interpreter here accepts, or whose environment does not build,
or whose run fails, comes back `Untestable` with the reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.decide.bisect import Untestable
from conformance.engine.selection import Cell
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult, ResultFile


@dataclass
class CellOracle:
    """Runs `cell` against a release's environment; remembers the platform and the time each release took."""

    builder: Any  # EnvironmentBuilder, or a fake with interpreter_for/prepare
    cell: Cell
    run_cell: Callable[[Any], ResultFile]  # runs the cell against an environment; the version's result file
    # The stored result that still answers for a release (nothing built or run), or None.
    stored: Callable[[str], CellResult | None] = lambda version: None
    platform: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    from_storage: set[str] = field(default_factory=set)

    def __call__(self, version: str) -> CellResult | Untestable:
        """The suite's verdict on the cell for jax `version`, or `Untestable` and why."""
        started = time.monotonic()
        answered = self.stored(version)
        if answered is not None:
            self.from_storage.add(version)
            self.seconds[version] = round(time.monotonic() - started, 1)
            return answered
        try:
            self.builder.interpreter_for(version)
        except ConformanceError as exc:
            return Untestable(version, f"no interpreter here can install it: {exc}")
        try:
            env = self.builder.prepare(version)
        except ConformanceError as exc:
            return Untestable(version, str(exc))
        try:
            stored = self.run_cell(env)
        except ConformanceError as exc:  # one build that cannot run is skipped, as one that does not install
            return Untestable(version, f"its run failed: {exc}")
        found = [c for c in stored.cells if c.cell_id == self.cell.id]
        if not found:
            raise ConformanceError(f"the run of jax {version} stored no result for {self.cell.id} in {stored.source}")
        self.platform = self.platform or stored.header.platform
        self.seconds[version] = round(time.monotonic() - started, 1)
        return found[0]
