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
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from conformance.chapter.model import Block
from conformance.chapter.supervisor import Records, RawResult, check_record, exit_text, result_from_json
from conformance.childenv import SOURCE_ROOT, child_environment
from conformance.engine.launch import read_tail
from conformance.errors import one_line
from conformance.tempfolders import owned_temporary_folder, remove_orphaned_folders
from conformance.portable import kill_tree, new_group_options, parent_death_signal_options

MAX_RESTARTS = 4
POLL_S = 0.1
PRIVATE_PREFIX = "jaxconf-chapter-"  # plans, records, the supervisor's results: never the blocks' working folder
BLOCKS_PREFIX = "jaxconf-blocks-"  # the blocks' working folder (their files, what they print)
SUPERVISOR_SLACK_S = 30.0  # past a block's limit and grace: the supervisor did not stop it (it was stopped itself)


def grace_for(timeout_s: float) -> float:
    """How long past its limit a block may run before it is killed from outside (its own alarm comes first)."""
    return 10.0 + 0.1 * timeout_s


@dataclass
class ChapterRun:
    """The raw results of one chapter on one environment, by block index, and what happened to its processes."""

    results: dict[int, RawResult] = field(default_factory=dict)
    processes: int = 0
    notes: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def _block_file(workdir: Path, block: Block) -> str:
    return str(workdir / f"block_{block.index + 1:03d}_{block.id}.py")


def _plan(blocks: list[Block], folders: tuple[Path, Path], limits: Mapping[int, float], run: list[int],
          replay: list[int], records: Path, argv0: str) -> Path:
    """The runner's plan, written to the private folder; the blocks' files, to their working folder (both made again
    when a block removed them)."""
    private, workdir = folders
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for block in blocks:
        filename = _block_file(workdir, block)
        code = block.code_as_run
        Path(filename).write_text(code + "\n", encoding="utf-8")  # inspect and tracebacks read the block's lines
        entries.append({"index": block.index, "code": code, "filename": filename, "display": block.display,
                        "timeout_s": limits[block.index], "steps": [step.to_json() for step in block.steps],
                        "cell_magic": block.cell_magic, "raises": block.raises})
    plan = private / f"plan-{len(list(private.glob('plan-*.json')))}.json"
    plan.write_text(json.dumps({"blocks": entries, "run": run, "replay": replay, "records": str(records),
                                "workdir": str(workdir), "argv0": argv0}), encoding="utf-8")
    return plan


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
    remove_orphaned_folders(workroot)
    with owned_temporary_folder(PRIVATE_PREFIX, workroot) as private, \
            owned_temporary_folder(BLOCKS_PREFIX, workroot) as workdir:
        while pending:
            records = private / f"records-{outcome.processes}.jsonl"
            plan = _plan(list(blocks), (private, workdir), own, pending, replay, records, argv0)
            lost, replay_failed = _one_process(python, plan, records, (private, workdir), blocks, (own, graces),
                                               outcome, bool(replay), on_done)
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


def _one_process(python: str, plan: Path, records: Path, folders: tuple[Path, Path], blocks: tuple[Block, ...],
                 limits: tuple[Mapping[int, float], Mapping[int, float]], outcome: ChapterRun, replayed: bool,
                 on_done: Callable[[RawResult], None]) -> tuple[int | None, bool]:
    """Run one runner process to its end under a supervisor of its own (`supervisor`); the index of the block it
    lost (killed or died in), or None, and whether it died while replaying. `folders`: the CLI's private folder
    (plans, records, the supervisor's results) and the blocks' working folder; `limits`: each block's time limit
    and the grace after it, by index."""
    private, workdir = folders
    own, graces = limits
    outcome.processes += 1
    number = outcome.processes
    job = {"python": python, "plan": str(plan), "records": str(records), "workdir": str(workdir),
           "results": str(private / f"supervised-{number}.jsonl"), "replayed": replayed, "source_root": SOURCE_ROOT,
           "log_out": str(private / f"runner-{number}.out"), "log_err": str(private / f"runner-{number}.err"),
           "limits": {str(i): [own[i], graces[i]] for i in own}, "env": child_environment(os.environ, {})}
    job_path = private / f"job-{number}.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    watch = _Watch(outcome, set(own), on_done, replayed)
    with open(private / f"supervisor-{number}.err", "wb") as err:
        supervisor = subprocess.Popen([sys.executable, "-m", "conformance.chapter.supervisor", str(job_path)],
                                      cwd=str(private), env=child_environment(os.environ, {}),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                      **new_group_options(), **parent_death_signal_options(signal.SIGKILL))
    reader = Records(Path(job["results"]))
    try:
        while True:
            code = supervisor.poll()
            for event in reader.new():
                ended = watch.take(event)
                if ended is not None:
                    return ended
            if watch.current is not None and time.monotonic() - watch.since > (
                    own[watch.current] + graces[watch.current] + SUPERVISOR_SLACK_S):
                _stop(supervisor, watch.runner_pid)  # a supervisor stopped or stuck: both go
                return watch.lost(workdir, "timeout", f"killed {graces[watch.current] + SUPERVISOR_SLACK_S:.0f}s "
                                  f"after its time limit of {own[watch.current]:g}s (its supervisor did not stop it)")
            if code is not None:
                for event in reader.new():
                    ended = watch.take(event)
                    if ended is not None:
                        return ended
                return watch.supervisor_gone(code, records, workdir, private / f"supervisor-{number}.err")
            time.sleep(POLL_S)
    finally:
        _stop(supervisor, watch.runner_pid)


def _stop(supervisor: subprocess.Popen, runner_pid: int | None) -> None:
    """The supervisor's process group and the runner's, killed (what is gone already is left as it is)."""
    kill_tree(supervisor.pid)
    if runner_pid is not None:
        kill_tree(runner_pid)
    if supervisor.poll() is None:
        supervisor.kill()
    supervisor.wait()


class _Watch:
    """What the CLI knows of one supervised runner process: the block running, the results so far."""

    def __init__(self, outcome: ChapterRun, indices: set[int], on_done: Callable[[RawResult], None],
                 replayed: bool) -> None:
        self.outcome, self.indices, self.on_done, self.replayed = outcome, indices, on_done, replayed
        self.current: int | None = None
        self.since = 0.0
        self.runner_pid: int | None = None

    def take(self, event: Any) -> tuple[int | None, bool] | None:
        """Act on one of the supervisor's events; the process's end when it is the `end` event. A line that is not
        one, or a result of a block not running, is ignored (the supervisor never writes one: it is forged)."""
        kind = event.get("event") if isinstance(event, dict) else None
        if kind == "start" and isinstance(event.get("index"), int) and event["index"] in self.indices:
            self.current, self.since = event["index"], time.monotonic()
            pid = event.get("pid")
            self.runner_pid = pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 1 else None
        elif kind == "result":
            result = result_from_json(event.get("result"), self.indices)
            if result is not None and result.index == self.current:
                self.outcome.results[result.index] = result
                self.on_done(result)
                self.current = None
        elif kind in ("note", "harness") and isinstance(event.get(kind if kind == "note" else "message"), str):
            said = event.get("note") if kind == "note" else f"the runner failed: {event.get('message')}"
            self.outcome.notes.append(f"harness: {one_line(str(said))[:300]}")
        elif kind == "end":
            lost = event.get("lost")
            if lost is None or (isinstance(lost, int) and (lost == -1 or lost in self.outcome.results)):
                return lost, bool(event.get("replay_failed"))
        return None

    def lost(self, workdir: Path, how: str, message: str) -> tuple[int | None, bool]:
        """The running block, lost with its process: `how` (`crash`, `timeout`), with what it had printed."""
        index = self.current
        assert index is not None
        out, err = workdir / f"block-{index}.out", workdir / f"block-{index}.err"
        self.outcome.results[index] = RawResult(index, None, how, message, self.replayed, read_tail(out, 8192),
                                                read_tail(err, 8192), round(time.monotonic() - self.since, 3))
        self.on_done(self.outcome.results[index])
        return index, False

    def supervisor_gone(self, code: int, records: Path, workdir: Path, log: Path) -> tuple[int | None, bool]:
        """The supervisor ended without its `end` event: killed by the block that ran (the runner was killed with
        it), or a failure of its own, named as the harness's."""
        if self.current is None:
            self.current = _running_in(records, self.indices, self.outcome.results)
        if self.current is not None:
            return self.lost(workdir, "crash", f"the process it ran in and its supervisor ended (the supervisor "
                                               f"{exit_text(code)})")
        tail = read_tail(log, 600).strip().splitlines()
        self.outcome.notes.append(f"harness: the supervisor of the blocks {exit_text(code)} between blocks"
                                  + (f": {one_line(tail[-1])[:200]}" if tail else ""))
        return -1, True


def _running_in(records: Path, indices: set[int], finished: Mapping[int, RawResult]) -> int | None:
    """The block the runner's records say was running (started, not done), read by the CLI when the supervisor
    died before it said so; None when none was."""
    running: int | None = None
    pid = None
    for record in Records(records).new():
        if not isinstance(record, dict):
            continue
        if record.get("event") == "start" and pid is None:
            pid = record.get("pid")
        if check_record(record, indices, running, pid):
            continue
        if record["event"] == "start":
            running = record["index"]
        elif record["event"] == "done":
            running = None
    return running if running is not None and running not in finished else None
