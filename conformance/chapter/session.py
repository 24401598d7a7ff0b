"""Running a chapter's blocks on one environment: the parent side of `conformance.chapter.runner`.

All the blocks of a release run in order in ONE fresh process (notebook semantics: later blocks see earlier names),
with no per-block start: that is what makes a whole chapter cost less than its probes. A block that fails (an
assert, an exception) costs nothing more: the runner records it and goes on with the next block in the same process.

What if a block hangs or kills the process? Two watchdogs, and a restart that replays:

1. The runner's own time limit (`SIGALRM`) interrupts a block stuck in Python code: it is marked `timeout` and the
   run goes on in the same process, its names intact. This is the common case (a loop that never ends, a `sleep`).
2. A block stuck where Python cannot interrupt it (in C, or one that ignores the alarm) is killed from here once it
   runs `grace` seconds past its limit, with its whole process group: `timeout`. A process that dies while a block
   runs (a signal, `os._exit`) makes that block `crash`.
3. Then a new process runs the remaining blocks, after *replaying* (quietly, each under its time limit) the blocks
   that had finished before, so that later blocks find the names they need, as in a notebook after "restart and run
   all above". The killed block is not replayed: names only it defines are missing, and a later block that needs
   one is `after_failure`. A process that dies again while replaying starts once more without replay; after
   `MAX_RESTARTS` restarts, the blocks left are marked `crash` (not run).

Why replay rather than a new process with nothing in it: in a chapter the first block defines what every later
block uses (the seed's common setup), so without replay one crash would turn every later block into
`after_failure`; replaying costs the time of the blocks before, and only when a process was lost. Forking a
process that holds the state before each block (a checkpoint) was not chosen: forking after JAX has started its
threads is unsafe (JAX warns that it will likely deadlock).

Every record reaches the disk before the next block starts, so a lost process never loses the blocks before it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from conformance.chapter.model import Block
from conformance.engine.launch import read_tail
from conformance.engine.runner import SOURCE_ROOT, child_environment
from conformance.portable import child_process_options, kill_tree

MAX_RESTARTS = 4
POLL_S = 0.1


def grace_for(timeout_s: float) -> float:
    """How long past its limit a block may run before it is killed from outside (its own alarm comes first)."""
    return 10.0 + 0.1 * timeout_s


@dataclass
class RawResult:
    """What one block's run gave: the runner's `done` record (None when the block was killed or its process died),
    `killed` (`timeout`, `crash` or ''), a message for a killed block, and whether earlier blocks were replayed in its
    process (it ran after a restart)."""

    index: int
    record: dict[str, Any] | None = None
    killed: str = ""
    message: str = ""
    replayed: bool = False
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0


@dataclass
class ChapterRun:
    """The raw results of one chapter on one environment, by block index, and what happened to its processes."""

    results: dict[int, RawResult] = field(default_factory=dict)
    processes: int = 0
    notes: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def _block_file(workdir: Path, block: Block) -> str:
    return str(workdir / f"block_{block.index + 1:03d}_{block.id}.py")


def _plan(blocks: list[Block], workdir: Path, limits: Mapping[int, float], run: list[int], replay: list[int],
          records: Path, argv0: str) -> Path:
    entries = []
    for block in blocks:
        filename = _block_file(workdir, block)
        code = block.code_as_run
        Path(filename).write_text(code + "\n", encoding="utf-8")  # inspect and tracebacks read the block's lines
        entries.append({"index": block.index, "code": code, "filename": filename, "display": block.display,
                        "timeout_s": limits[block.index], "steps": [step.to_json() for step in block.steps],
                        "cell_magic": block.cell_magic, "raises": block.raises})
    plan = workdir / f"plan-{len(list(workdir.glob('plan-*.json')))}.json"
    plan.write_text(json.dumps({"blocks": entries, "run": run, "replay": replay, "records": str(records),
                                "workdir": str(workdir), "argv0": argv0}), encoding="utf-8")
    return plan


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class _Records:
    """Reads the records a runner appends, as they come."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.partial = path, 0, ""

    def new(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                handle.seek(self.offset)
                text = handle.read()
                self.offset = handle.tell()
        except FileNotFoundError:
            return []
        text = self.partial + text
        lines = text.split("\n")
        self.partial = lines.pop()
        found = []
        for line in lines:
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found


def run_blocks(blocks: tuple[Block, ...], skip: set[int], python: str, timeout_s: float,
               on_done: Callable[[RawResult], None] = lambda result: None, workroot: str | None = None,
               argv0: str = "chapter", grace_s: float | None = None,
               limits: Mapping[int, float] | None = None) -> ChapterRun:
    """Run every block not in `skip` (indices) in order in `python` (see the module's docstring). Each block's time
    limit is `timeout_s`, or its own in `limits` (by index); it is killed `grace_s` seconds past it (default
    `grace_for` its limit)."""
    own = {b.index: float((limits or {}).get(b.index, timeout_s)) for b in blocks}
    graces = {index: grace_for(limit) if grace_s is None else grace_s for index, limit in own.items()}
    started = time.monotonic()
    outcome = ChapterRun()
    pending = [b.index for b in blocks if b.index not in skip]
    replay: list[int] = []
    restarts = 0
    with tempfile.TemporaryDirectory(prefix="jaxconf-chapter-", dir=workroot) as folder:
        workdir = Path(folder)
        while pending:
            records = workdir / f"records-{outcome.processes}.jsonl"
            plan = _plan(list(blocks), workdir, own, pending, replay, records, argv0)
            lost, replay_failed = _one_process(python, plan, records, workdir, blocks, (own, graces), outcome,
                                               bool(replay), on_done)
            pending = [i for i in pending if i not in outcome.results]
            if lost is None or not pending:
                if lost is None and pending:  # the runner ended without running them: say so, never drop them
                    for index in pending:
                        outcome.results[index] = RawResult(index, killed="crash",
                                                           message="not run: the runner stopped before it")
                        on_done(outcome.results[index])
                break
            restarts += 1
            if restarts > MAX_RESTARTS:
                for index in pending:
                    outcome.results[index] = RawResult(index, killed="crash", message=f"not run: the runner was "
                                                       f"started {restarts} times and lost each time")
                    on_done(outcome.results[index])
                break
            replay = [] if replay_failed else [i for i in sorted(outcome.results) if i < pending[0]
                                                and (outcome.results[i].record or {}).get("outcome") in
                                                ("ok", "exception")]
            lost_what = "a replay" if lost < 0 else f"block {lost + 1}"
            outcome.notes.append(f"{lost_what} lost its process; the blocks after it ran in a new one"
                                 + (f", {len(replay)} earlier block(s) replayed first" if replay else
                                    ", with nothing replayed"))
    outcome.wall_s = round(time.monotonic() - started, 3)
    return outcome


def _one_process(python: str, plan: Path, records: Path, workdir: Path, blocks: tuple[Block, ...],
                 limits: tuple[Mapping[int, float], Mapping[int, float]], outcome: ChapterRun, replayed: bool,
                 on_done: Callable[[RawResult], None]) -> tuple[int | None, bool]:
    """Run one runner process to its end; the index of the block it lost (killed or died in), or None, and whether it
    died while replaying. `limits`: each block's time limit and the grace after it, by index."""
    own, graces = limits
    outcome.processes += 1
    log_out, log_err = workdir / f"runner-{outcome.processes}.out", workdir / f"runner-{outcome.processes}.err"
    env = child_environment(os.environ, {})
    with open(log_out, "wb") as out, open(log_err, "wb") as err:
        child = subprocess.Popen([python, "-m", "conformance.chapter.runner", str(plan)], cwd=SOURCE_ROOT, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=err, **child_process_options(new_group=True, parent_death_signal=signal.SIGKILL))
    reader = _Records(records)
    current: int | None = None
    current_since = 0.0
    in_replay = False
    try:
        while True:
            code = child.poll()
            for record in reader.new():
                event = record.get("event")
                in_replay = event == "replay"
                if event == "start":
                    current, current_since = int(record["index"]), time.monotonic()
                elif event == "done":
                    index = int(record["index"])
                    outcome.results[index] = RawResult(index, record, replayed=replayed,
                                                       duration_s=float(record.get("duration_s") or 0.0))
                    on_done(outcome.results[index])
                    current = None
                elif event == "end":
                    current = None
            if current is not None and time.monotonic() - current_since > own[current] + graces[current]:
                kill_tree(child.pid)
                child.wait()
                _lost(outcome, current, "timeout", f"killed {graces[current]:.0f}s after its time limit of "
                      f"{own[current]:g}s (it did not stop at the limit)", workdir, blocks, replayed, current_since,
                      on_done)
                return current, False
            if code is not None:
                for record in reader.new():  # what it wrote just before it ended
                    if record.get("event") == "done":
                        index = int(record["index"])
                        outcome.results[index] = RawResult(index, record, replayed=replayed)
                        on_done(outcome.results[index])
                        current = None
                if current is not None:
                    tail = read_tail(log_err, 600).strip().splitlines()
                    _lost(outcome, current, "crash", f"the process {_exit_text(code)}"
                          + (f": {tail[-1][:200]}" if tail else ""), workdir, blocks, replayed, current_since, on_done)
                    return current, False
                if in_replay:
                    return -1, True
                return None, False
            time.sleep(POLL_S)
    finally:
        kill_tree(child.pid)  # what a block left behind in the process group
        if child.poll() is None:
            child.kill()
            child.wait()


def _lost(outcome: ChapterRun, index: int, how: str, message: str, workdir: Path, blocks: tuple[Block, ...],
          replayed: bool, since: float, on_done: Callable[[RawResult], None]) -> None:
    """Record a block whose process was killed or died while it ran, with what it had printed."""
    out, err = workdir / f"block-{index}.out", workdir / f"block-{index}.err"
    outcome.results[index] = RawResult(index, None, how, message, replayed,
                                       read_tail(out, 8192) if out.exists() else "",
                                       read_tail(err, 8192) if err.exists() else "",
                                       round(time.monotonic() - since, 3))
    on_done(outcome.results[index])
