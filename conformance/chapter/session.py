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

Apart from the CLI: each runner process is started by a supervisor of its own (`supervisor`, a session and process
group of its own), never by the CLI, so a block that signals or kills its parent costs that block only. The plans
and the runner's records are in a private folder (`jaxconf-chapter-<pid>-…`), apart from the blocks' working
folder (`jaxconf-blocks-<pid>-…`): a block that empties or removes its folder reaches neither. This module reads the
runner's records itself (every record checked: `supervisor.check_record`; a forged one costs the running block) and
kills the runner's process group itself when a block runs past its limit and grace, so a supervisor that a block
stopped or killed changes nothing it relies on. A process that ends just after a block (before the next one starts,
with no `end` record and no failure of the harness's) makes that block `crash`; a harness failure (a `harness`
record, a supervisor that died before starting the runner) is a note of the harness's, never a block's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Mapping

from conformance.chapter.model import Block
from conformance.chapter.supervisor import Records, RawResult, check_record, exit_text
from conformance.childenv import SOURCE_ROOT, child_environment
from conformance.engine.launch import read_tail
from conformance.errors import one_line
from conformance.tempfolders import owned_temporary_folder, remove_orphaned_folders
from conformance.portable import child_process_options, kill_tree, pid_alive, start_child

MAX_RESTARTS = 4
POLL_S = 0.1
PRIVATE_PREFIX = "jaxconf-chapter-"  # plans, records, the supervisor's results: never the blocks' working folder
BLOCKS_PREFIX = "jaxconf-blocks-"  # the blocks' working folder (their files, what they print)
REAP_WAIT_S = 40.0  # how long the supervisor may take to kill and reap what a runner left (its own bound: 30 s)
GONE_GRACE_S = 2.0  # a runner gone while its supervisor says nothing (stopped): how long the CLI waits for a word


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


def _plan(
    blocks: list[Block],
    folders: tuple[Path, Path],
    limits: Mapping[int, float],
    run: list[int],
    replay: list[int],
    records: Path,
    argv0: str,
    setup: str = "",
) -> Path:
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
        entries.append(
            {
                "index": block.index,
                "code": code,
                "filename": filename,
                "display": block.display,
                "timeout_s": limits[block.index],
                "steps": [step.to_json() for step in block.steps],
                "cell_magic": block.cell_magic,
                "raises": block.raises,
            }
        )
    plan = private / f"plan-{len(list(private.glob('plan-*.json')))}.json"
    plan.write_text(
        json.dumps(
            {
                "blocks": entries,
                "run": run,
                "replay": replay,
                "records": str(records),
                "workdir": str(workdir),
                "argv0": argv0,
                "setup": setup,
            }
        ),
        encoding="utf-8",
    )
    return plan


def run_blocks(
    blocks: tuple[Block, ...],
    skip: set[int],
    python: str,
    timeout_s: float,
    on_done: Callable[[RawResult], None] = lambda result: None,
    workroot: str | None = None,
    argv0: str = "chapter",
    grace_s: float | None = None,
    limits: Mapping[int, float] | None = None,
    setup: str = "",
) -> ChapterRun:
    """Run every block not in `skip` (indices) in order in `python` (see the module's docstring). Each block's time
    limit is `timeout_s`, or its own in `limits` (by index); it is killed `grace_s` seconds past it (default
    `grace_for` its limit). `setup` runs first in every process (the skip list's `[setup]`)."""
    own = {b.index: float((limits or {}).get(b.index, timeout_s)) for b in blocks}
    graces = {index: grace_for(limit) if grace_s is None else grace_s for index, limit in own.items()}
    started = time.monotonic()
    outcome = ChapterRun()
    pending = [b.index for b in blocks if b.index not in skip]
    replay: list[int] = []
    restarts = 0
    remove_orphaned_folders(workroot)
    with (
        owned_temporary_folder(PRIVATE_PREFIX, workroot) as private,
        owned_temporary_folder(BLOCKS_PREFIX, workroot) as workdir,
    ):
        while pending:
            records = private / f"records-{outcome.processes}.jsonl"
            plan = _plan(list(blocks), (private, workdir), own, pending, replay, records, argv0, setup)
            lost, replay_failed = _one_process(
                python, plan, records, (private, workdir), blocks, (own, graces), outcome, bool(replay), on_done
            )
            pending = [i for i in pending if i not in outcome.results]
            if lost is None or not pending:
                if lost is None and pending:  # the runner ended without running them: say so, never drop them
                    for index in pending:
                        outcome.results[index] = RawResult(
                            index, killed="crash", message="not run: the runner stopped before it"
                        )
                        on_done(outcome.results[index])
                break
            restarts += 1
            if restarts > MAX_RESTARTS:
                for index in pending:
                    outcome.results[index] = RawResult(
                        index,
                        killed="crash",
                        message=f"not run: the runner was started {restarts} times and lost each time",
                    )
                    on_done(outcome.results[index])
                break
            replay = (
                []
                if replay_failed
                else [
                    i
                    for i in sorted(outcome.results)
                    if i < pending[0] and (outcome.results[i].record or {}).get("outcome") in ("ok", "exception")
                ]
            )
            lost_what = (
                ("a replay" if replay_failed else "the runner, between blocks,") if lost < 0 else f"block {lost + 1}"
            )
            outcome.notes.append(
                f"{lost_what} lost its process; the blocks after it ran in a new one"
                + (f", {len(replay)} earlier block(s) replayed first" if replay else ", with nothing replayed")
            )
    outcome.wall_s = round(time.monotonic() - started, 3)
    return outcome


@dataclass
class _Watch:
    """What the CLI knows of one runner process while it watches its records: the block running and since when,
    whether it is replaying, whether it said `end` or a harness failure, and the last block done."""

    current: int | None = None
    since: float = 0.0
    in_replay: bool = False
    saw_end: bool = False
    harness: bool = False
    last_done: int | None = None


def _one_process(
    python: str,
    plan: Path,
    records: Path,
    folders: tuple[Path, Path],
    blocks: tuple[Block, ...],
    limits: tuple[Mapping[int, float], Mapping[int, float]],
    outcome: ChapterRun,
    replayed: bool,
    on_done: Callable[[RawResult], None],
) -> tuple[int | None, bool]:
    """Run one runner process to its end under a supervisor of its own (`supervisor`); the index of the block it
    lost (killed or died in), or None, and whether it died while replaying. `folders`: the CLI's private folder
    (plans, records, what the supervisor says) and the blocks' working folder; `limits`: each block's time limit
    and the grace after it, by index."""
    private, workdir = folders
    own, graces = limits
    outcome.processes += 1
    process = _Supervised(python, plan, records, private, outcome.processes)
    reader, watch = Records(records), _Watch()
    lose = partial(_lost, outcome, workdir=workdir, replayed=replayed, on_done=on_done)
    try:
        while True:
            ended = process.ended()
            if process.pid is not None and _take_records(
                reader.new(), watch, process, own, outcome, replayed, lose, on_done
            ):
                return watch.current, False
            current = watch.current
            if current is not None and time.monotonic() - watch.since > own[current] + graces[current]:
                process.kill()
                lose(
                    current,
                    "timeout",
                    f"killed {graces[current]:.0f}s after its time limit of {own[current]:g}s "
                    f"(it did not stop at the limit)",
                    since=watch.since,
                )
                return current, False
            if ended is not None:
                return _after_end(ended, reader, watch, process, own, outcome, replayed, lose, on_done)
            time.sleep(POLL_S)
    finally:
        process.kill()


def _take_records(
    new: Iterable[dict],
    watch: _Watch,
    process: "_Supervised",
    own: Mapping[int, float],
    outcome: ChapterRun,
    replayed: bool,
    lose: Callable[..., None],
    on_done: Callable[[RawResult], None],
) -> bool:
    """Read the runner's new records into `watch` and `outcome`; True when a forged record written while a block
    ran got the block killed (it is `watch.current`, recorded lost)."""
    for record in new:
        why = check_record(record, set(own), watch.current, process.pid)
        if why and watch.current is not None:
            process.kill()
            lose(
                watch.current,
                "crash",
                f"its process wrote a record the runner did not ({why}); it was killed",
                since=watch.since,
            )
            return True
        if why:
            outcome.notes.append(f"harness: a forged line in the runner's records was ignored ({why})")
            continue
        event = record["event"]
        watch.in_replay = event == "replay"
        if event == "start":
            watch.current, watch.since = int(record["index"]), time.monotonic()
        elif event == "done":
            index = int(record["index"])
            outcome.results[index] = RawResult(
                index, record, replayed=replayed, duration_s=float(record.get("duration_s") or 0.0)
            )
            on_done(outcome.results[index])
            watch.current, watch.last_done = None, index
        elif event == "harness":
            watch.harness = True
            outcome.notes.append(f"harness: the runner failed: {one_line(str(record.get('message')))[:300]}")
        elif event == "end":
            watch.current, watch.saw_end = None, True
    return False


def _after_end(
    ended: str,
    reader: Records,
    watch: _Watch,
    process: "_Supervised",
    own: Mapping[int, float],
    outcome: ChapterRun,
    replayed: bool,
    lose: Callable[..., None],
    on_done: Callable[[RawResult], None],
) -> tuple[int | None, bool]:
    """What one runner process's end means, once it has ended (`ended`, in words): `_one_process`'s answer."""
    if process.pid is not None:
        for record in reader.new():  # what it wrote just before it ended
            if check_record(record, set(own), watch.current, process.pid):
                continue
            if record["event"] == "done":
                index = int(record["index"])
                outcome.results[index] = RawResult(index, record, replayed=replayed)
                on_done(outcome.results[index])
                watch.current = None
    if watch.current is not None:
        tail = read_tail(process.log_err, 600).strip().splitlines()
        lose(
            watch.current, "crash", f"the process {ended}" + (f": {tail[-1][:200]}" if tail else ""), since=watch.since
        )
        return watch.current, False
    if process.pid is None:
        outcome.notes.append(f"harness: the supervisor of the blocks {ended} before it started them")
        return -1, True
    if watch.in_replay:
        return -1, True
    if watch.saw_end or watch.harness or watch.last_done is None:
        return (None, False) if watch.saw_end else (-1, False)
    return _ended_after(outcome, watch.last_done, ended, on_done), False


class _Supervised:
    """A runner process started by a supervisor of its own: its pid and how it ended, as the supervisor says, or as
    the CLI finds when the supervisor is gone or stopped."""

    def __init__(self, python: str, plan: Path, records: Path, private: Path, number: int) -> None:
        self.log_err = private / f"runner-{number}.err"
        said = private / f"supervisor-{number}.jsonl"
        job = {
            "python": python,
            "plan": str(plan),
            "records": str(records),
            "results": str(said),
            "source_root": SOURCE_ROOT,
            "log_out": str(private / f"runner-{number}.out"),
            "log_err": str(self.log_err),
            "env": child_environment(os.environ, {}),
        }
        job_path = private / f"job-{number}.json"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        with open(private / f"supervisor-{number}.err", "wb") as err:
            self.supervisor = start_child(
                [sys.executable, "-m", "conformance.chapter.supervisor", str(job_path)],
                cwd=str(private),
                env=child_environment(os.environ, {}),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                **child_process_options(new_group=True, parent_death_signal=signal.SIGKILL),
            )
        self.said = Records(said)
        self.pid: int | None = None
        self.code: int | None = None
        self.gone_since: float | None = None

    def _read(self) -> None:
        for event in self.said.new():
            if not isinstance(event, dict):
                continue
            value = event.get("pid") if event.get("event") == "runner" else event.get("code")
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            if event["event"] == "runner" and self.pid is None and value > 1:
                self.pid = value
            elif event["event"] == "exit" and self.code is None:
                self.code = value

    def ended(self) -> str | None:
        """How the runner ended, in words, once it has; None while it runs."""
        self._read()
        if self.code is not None:
            return exit_text(self.code)
        if self.supervisor.poll() is not None:
            self._read()
            if self.code is not None:
                return exit_text(self.code)
            if self.pid is not None:
                kill_tree(self.pid)  # it got SIGKILL as its parent died; its group too
            return f"ended with its supervisor (the supervisor {exit_text(self.supervisor.returncode)})"
        if self.pid is not None and not _running(self.pid):  # the supervisor is alive and silent: stopped
            self.gone_since = self.gone_since or time.monotonic()
            if time.monotonic() - self.gone_since > GONE_GRACE_S:
                return "ended (its supervisor, stopped, did not say how)"
        return None

    def kill(self) -> None:
        """The runner's process group killed, then the supervisor let end (it kills the orphans and reaps them: a
        zombie left to init would hold one of the user's process slots), woken when it was stopped; killed with
        its group when it does not end within `REAP_WAIT_S`."""
        if self.pid is not None:
            kill_tree(self.pid)
        if self.supervisor.poll() is None and self.pid is not None:
            try:
                os.kill(self.supervisor.pid, signal.SIGCONT)
                self.supervisor.wait(timeout=REAP_WAIT_S)
            except (OSError, subprocess.TimeoutExpired):
                pass
        kill_tree(self.supervisor.pid)
        if self.supervisor.poll() is None:
            self.supervisor.kill()
        self.supervisor.wait()


def _running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie, not yet reaped by its stopped parent, has)."""
    if not pid_alive(pid):
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _ended_after(outcome: ChapterRun, index: int, ended: str, on_done: Callable[[RawResult], None]) -> int:
    """The runner's process ended between blocks, by no failure of the harness's (no `harness` record): the block
    that had just finished is taken for its cause (it killed its supervisor, or left a thread that ended the
    process) and is `crash`, what it printed kept; the rest run in a new process."""
    record = outcome.results[index].record or {}
    outcome.results[index] = RawResult(
        index,
        None,
        "crash",
        f"its process ended just after it ran (the process {ended})",
        outcome.results[index].replayed,
        str(record.get("stdout") or ""),
        str(record.get("stderr") or ""),
        outcome.results[index].duration_s,
    )
    on_done(outcome.results[index])
    return index


def _lost(
    outcome: ChapterRun,
    index: int,
    how: str,
    message: str,
    *,
    workdir: Path,
    replayed: bool,
    since: float,
    on_done: Callable[[RawResult], None],
) -> None:
    """Record a block whose process was killed or died while it ran, with what it had printed."""
    out, err = workdir / f"block-{index}.out", workdir / f"block-{index}.err"
    outcome.results[index] = RawResult(
        index,
        None,
        how,
        message,
        replayed,
        read_tail(out, 8192) if out.exists() else "",
        read_tail(err, 8192) if err.exists() else "",
        round(time.monotonic() - since, 3),
    )
    on_done(outcome.results[index])
