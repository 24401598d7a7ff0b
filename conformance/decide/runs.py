"""The I/O side of bisect: build one release's environment and run one cell in it, through objects passed in.

`CellOracle(builder, cell, ...)` is the bisect oracle: for a release it prepares the
environment with the `EnvironmentBuilder` (only for releases the search tests) and runs the
one cell with a `RunSession` (fork or spawn launcher). A release that no interpreter here
accepts, or whose environment does not build, comes back `Untestable` with the reason.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from conformance.decide.bisect import Untestable
from conformance.engine.runner import Target
from conformance.engine.selection import Cell
from conformance.engine.session import RunSession
from conformance.errors import ConformanceError
from conformance.results.schema import CellResult


def _describe_platform(python: str) -> str:
    from conformance.engine.plugin import describe_target  # imports pytest; only needed here

    return describe_target(python)["platform"]


@dataclass
class CellOracle:
    """Runs `cell` against a release's environment; remembers the platform and the time each release took."""

    builder: Any  # EnvironmentBuilder, or a fake with interpreter_for/prepare
    cell: Cell
    launcher: str = "fork"
    package: str = ""
    case_folders: tuple[str, ...] = ()
    session_factory: Callable[..., Any] = RunSession
    platform_of: Callable[[str], str] = _describe_platform
    platform: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    def __call__(self, version: str) -> CellResult | Untestable:
        """The suite's verdict on the cell for jax `version`, or `Untestable` and why."""
        started = time.monotonic()
        try:
            self.builder.interpreter_for(version)
        except ConformanceError as exc:
            return Untestable(version, f"no interpreter here can install it: {exc}")
        try:
            env = self.builder.prepare(version)
        except ConformanceError as exc:
            return Untestable(version, str(exc))
        if not self.platform:
            self.platform = self.platform_of(env.python)
        target = Target(env.python, self.platform, version, self.package or self.cell.case.package,
                        self.case_folders)
        session = self.session_factory(target=target, launcher=self.launcher, workers=1, retries=1)
        result = session.run([self.cell]).results[0]
        self.seconds[version] = round(time.monotonic() - started, 1)
        return result
