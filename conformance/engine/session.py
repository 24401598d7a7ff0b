"""A run session: a set of cells against one environment, with a launcher, workers, retries and reuse.

`RunSession.start(cells)` schedules every cell on a thread pool (each cell is still its own
child process) and returns at once; `result(cell)` waits for one; `run(cells)` does both and
returns a `RunResult`. The pytest plugin, the CLI's bisect and the tests all go through it.
Cells whose stored result has the same key (`engine.keys`) are reused instead of run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from conformance.tempfolders import remove_orphaned_folders
from conformance.core.case import Case, Skip
from conformance.core.status import Status
from conformance.engine.launch import ForkLauncher, LaunchCancelled, SpawnLauncher, env_group, kill_all
from conformance.engine.runner import Target, child_environment, run_cell
from conformance.engine.selection import Cell
from conformance.results.schema import CellResult
from conformance.results.store import REUSED_ONLY  # the header's launcher when no child started

LAUNCHERS = ("fork", "spawn")
# Statuses a stored result may be reused with; error, timeout and flaky always run again, and so does a crash
# unless every one of at least two attempts crashed (`reproduced_crash`).
REUSABLE = frozenset({Status.CONFORMS, Status.DIFFERS, Status.UNSUPPORTED, Status.SKIPPED})


def shared_case_envs(cells: Iterable[Cell], platform: str, at_least: int = 2) -> list[dict[str, str]]:
    """The case-variable sets that at least `at_least` forkable cells that run on `platform` use: each is worth
    a fork server of its own (a server costs one `import jax`, like one spawned cell)."""
    counts: dict[tuple[tuple[str, str], ...], int] = {}
    for cell in cells:
        case_env = cell.case.env_for(cell.param)
        if (
            case_env
            and not cell.case.needs_fresh_interpreter(cell.param)
            and not isinstance(cell.case.expected(cell.param, platform), Skip)
        ):
            group = env_group(case_env)
            counts[group] = counts.get(group, 0) + 1
    return [dict(group) for group, count in counts.items() if count >= at_least]


@dataclass
class RunResult:
    """What a session produced: one result per cell, in the order asked, and how it ran."""

    results: list[CellResult]
    launcher: str
    launcher_note: str = ""
    wall_s: float = 0.0
    ran: int = 0
    reused: int = 0


def reproduced_crash(stored: CellResult) -> bool:
    """Whether a stored `crash` is a result rather than an accident: its run retried it and every attempt (two at
    least) crashed too, like a release's known crash at interpreter exit. A single crash may be the machine's."""
    return (
        stored.status is Status.CRASH
        and len(stored.attempts) >= 2
        and all(a.get("status") == Status.CRASH.value for a in stored.attempts)
    )


def still_answers(stored: CellResult | None, key: str) -> bool:
    """Whether a stored result may stand for a cell whose reuse key is now `key`: the same non-empty key, and a
    status that a new run would not try again (never error, timeout, flaky or a crash that was not reproduced)."""
    return (
        stored is not None
        and bool(key)
        and stored.key == key
        and (stored.status in REUSABLE or reproduced_crash(stored))
    )


@dataclass
class RunSession:
    """Runs cells against one `Target`.

    `launcher` is `fork` (the default: a fork server, with fresh-interpreter cells spawned) or
    `spawn`. `stored` maps a cell id to a previous result; it is reused when its `key` equals
    the cell's key from `key_of` (unless `rerun`). `durations` (cell id -> seconds recorded before)
    order the cells of each launcher group longest first, so that no long probe starts last and
    leaves the other workers idle at the end of the run.
    """

    target: Target
    launcher: str = "fork"
    workers: int = 1
    retries: int = 0
    retry_differs: bool = False
    stored: Mapping[str, CellResult] = field(default_factory=dict)
    key_of: Callable[[Case, str], str] | None = None
    rerun: bool = False
    on_result: Callable[[CellResult], None] | None = None
    durations: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.launcher not in LAUNCHERS:
            raise ValueError(f"launcher must be one of {', '.join(LAUNCHERS)}, not {self.launcher!r}")
        self._futures: dict[str, Future] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._fork: ForkLauncher | None = None
        self._spawn = SpawnLauncher()
        remove_orphaned_folders()  # those of a run killed with SIGKILL (its pytest removes nothing then)
        self._workroot = tempfile.mkdtemp(prefix=f"jaxconf-run-{os.getpid()}-")
        self.launcher_note = ""
        self._ran_any = False
        self.started = time.monotonic()
        self._stopping = False

    # -------------------------------------------------------------- launching

    def _launch(self, command, fresh: bool):
        if self._stopping:
            raise LaunchCancelled("the run is stopping")
        if self._fork is not None:
            return self._fork(command, fresh)
        return self._spawn(command)

    def _open_launcher(self, cells: list[Cell]) -> None:
        """Start the fork servers, unless no cell would be forked (then a server's `import jax` is wasted)."""
        if self.launcher != "fork":
            return
        shared = shared_case_envs(cells, self.target.platform)
        served = {env_group(case_env) for case_env in shared} | {()}  # () is the plain server
        forked = [
            c
            for c in cells
            if not c.case.needs_fresh_interpreter(c.param) and env_group(c.case.env_for(c.param)) in served
        ]
        if not forked:
            return
        self._fork = ForkLauncher(
            self.target.python,
            self.target.package,
            child_environment(os.environ, {}, case_folders=self.target.case_folders),
            self._workroot,
            shared_envs=shared,
        )
        if self._fork.fallback_reason:
            self.launcher_note = f"spawned every cell: {self._fork.fallback_reason}"

    def _start_order(self, cell: Cell) -> tuple[int, tuple[tuple[str, str], ...], float]:
        """Sort key: cells that will be spawned (an `import jax` each) start first, so they do not trail the
        run; then the plain server's cells, while the variable servers import; then each variable server's
        cells, together. Within each, the longest recorded first (longest-processing-time scheduling)."""
        group = env_group(cell.case.env_for(cell.param))
        fresh = cell.case.needs_fresh_interpreter(cell.param)
        longest_first = -float(self.durations.get(cell.id, 0.0))
        if self._fork is None or self._fork.launcher_for(fresh, dict(group)) == "spawn":
            return (0, (), longest_first)
        return (2, group, longest_first) if group else (1, (), longest_first)

    @property
    def launcher_name(self) -> str:
        """`fork` when a fork server serves this session, else `spawn`."""
        return "fork" if self._fork is not None and self._fork.server is not None else "spawn"

    # -------------------------------------------------------------- running

    def key(self, cell: Cell) -> str:
        """The cell's reuse key ('' when keys are not in use)."""
        return self.key_of(cell.case, cell.param) if self.key_of else ""

    def _reusable(self, cell: Cell, key: str) -> CellResult | None:
        """A stored result with the same key; never one that ended broken or flaky (the next run may differ)."""
        if self.rerun:
            return None
        stored = self.stored.get(cell.id)
        if not still_answers(stored, key):
            return None
        return CellResult.from_json({**stored.to_json(), "reused": True})

    def _run_one(self, cell: Cell) -> CellResult:
        key = self.key(cell)
        result = self._reusable(cell, key)
        if result is None:
            result = run_cell(
                cell.case,
                cell.param,
                self.target,
                self._launch,
                self.launcher_name,
                retries=self.retries,
                retry_differs=self.retry_differs,
                workroot=self._workroot,
                stopping=lambda: self._stopping,
            )
            result.key = key
        if self.on_result is not None:
            self.on_result(result)
        return result

    def start(self, cells: Iterable[Cell]) -> None:
        """Schedule every cell; returns at once."""
        cells = list(cells)
        needs_running = [c for c in cells if self._reusable(c, self.key(c)) is None]
        self._ran_any = self._ran_any or bool(needs_running)
        if needs_running:
            self._open_launcher(needs_running)
        self._pool = ThreadPoolExecutor(max_workers=max(1, self.workers), thread_name_prefix="jaxconf-cell")
        for cell in sorted(cells, key=self._start_order):
            self._futures[cell.id] = self._pool.submit(self._run_one, cell)

    def result(self, cell: Cell) -> CellResult:
        """The result of a scheduled cell (waits for it), or runs it now if it was not scheduled."""
        future = self._futures.pop(cell.id, None)
        if future is None:
            return self._run_one(cell)
        while True:  # short waits, so the main thread keeps running signal handlers (SIGTERM, Ctrl-C)
            try:
                return future.result(timeout=0.25)
            except FuturesTimeout:
                continue

    def close(self, interrupted: bool = False) -> None:
        """Stop: cancel queued cells, kill running children when interrupted, stop the server, remove temporaries."""
        self._stopping = interrupted or self._stopping  # no retry starts after an interruption
        if self._pool is not None:
            self._pool.shutdown(wait=not interrupted, cancel_futures=True)
        if interrupted:
            kill_all()
        if self._fork is not None:
            self._fork.close()
        if interrupted:
            kill_all()  # a cell that was starting while the servers stopped
        shutil.rmtree(self._workroot, ignore_errors=True)

    def run(self, cells: Iterable[Cell]) -> RunResult:
        """Run every cell and return their results in order."""
        cells = list(cells)
        try:
            self.start(cells)
            results = [self.result(c) for c in cells]
        except BaseException:
            self.close(interrupted=True)
            raise
        self.close()
        return RunResult(
            results=results,
            launcher=self.launcher_name_used(),
            launcher_note=self.launcher_note,
            wall_s=round(time.monotonic() - self.started, 3),
            ran=sum(not r.reused for r in results),
            reused=sum(r.reused for r in results),
        )

    def launcher_name_used(self) -> str:
        """How this session launched cells, for the run header."""
        if not self._ran_any:
            return REUSED_ONLY
        if self.launcher == "spawn":
            return "spawn"
        if self._fork is None:
            return "spawn (no cell to fork)"
        if self.launcher_note:
            return "spawn (fork unavailable)"
        if self._fork.fallback_reason:
            return f"fork, then spawn ({self._fork.fallback_reason})"
        if self._fork.env_notes:
            return f"fork (some cells spawned: {'; '.join(self._fork.env_notes)})"
        return "fork"
