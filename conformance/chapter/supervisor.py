"""The supervisor of one chapter runner process: the runner's parent, in a process of its own apart from the CLI.

    python -m conformance.chapter.supervisor JOB.json

`session.run_blocks` (in the CLI) starts one supervisor per runner process, in a session and process group of its
own; the supervisor starts the runner (`conformance.chapter.runner`, in the target environment, in a session of its
own again), says its pid and, when it ends, how (in a file of the CLI's private folder), then kills what the
runner left behind. So a block's parent is the supervisor, never the CLI:

- a block that signals its parent (`os.kill(os.getppid(), SIGTERM)`) reaches the supervisor, which ignores SIGTERM,
  SIGINT and SIGHUP (the CLI stops it with SIGKILL); one that kills it (SIGKILL) takes its own process with it (the
  runner gets SIGKILL when its parent dies) and costs that block only: the CLI, which reads the runner's records
  itself, marks it `crash` and runs the rest in a new runner under a new supervisor; one that stops it (SIGSTOP)
  changes nothing the CLI relies on (the CLI watches the block's time and kills the runner's group itself);
- the supervisor is a subreaper: a process a block forked that outlives the runner is re-parented to it and
  killed when the runner's process ends.

`check_record` is the one check of the runner's records (the CLI reads them from its private folder, never the
blocks' working folder): an unknown event, a block out of order, a record of another process (a forked child) or a
line that is not a record is forged, and costs the block that was running.

Standard library and the suite's own standard-library modules only: it runs in the suite's interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from conformance.portable import become_subreaper, child_process_options, kill_descendants, kill_tree

EVENTS = ("replay", "start", "done", "end", "harness")


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


def check_record(record: Any, indices: set[int], current: int | None, pid: Any) -> str:
    """Why a record the runner's file holds is not one the runner wrote ('' when it is): an unknown event, a block
    not in the plan, a `done` of a block that is not the running one, or a record of another process."""
    if not isinstance(record, dict) or record.get("event") not in EVENTS:
        return "a line that is no runner record"
    event = record["event"]
    if event in ("end", "harness"):
        return "" if record.get("pid") == pid else "an end record of another process"
    index = record.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index not in indices:
        return f"a {event} record of no block of the plan"
    if record.get("pid") != pid:
        return f"a {event} record of another process"
    if event == "done" and index != current:
        return f"a done record of block {index + 1}, which was not running"
    if event == "done" and record.get("outcome") not in ("ok", "exception", "timeout"):
        return "a done record with no outcome"
    return ""


class Records:
    """Reads the JSON lines a process appends to a file, as they come (a line not yet ended waits)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.partial = path, 0, ""

    def new(self) -> list[Any]:
        """The lines appended since the last call, each parsed (None for a line that is not JSON)."""
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                handle.seek(self.offset)
                text = handle.read()
                self.offset = handle.tell()
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            return []
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        found: list[Any] = []
        for line in lines:
            try:
                found.append(json.loads(line))
            except (ValueError, RecursionError):
                found.append(None)
        return found


def exit_text(code: int | None) -> str:
    """How a process ended, in words."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _writer(path: str) -> Callable[[dict[str, Any]], None]:
    handle = open(path, "a", encoding="utf-8")

    def say(event: dict[str, Any]) -> None:
        handle.write(json.dumps(event, ensure_ascii=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())

    return say


def supervise(job: dict[str, Any], say: Callable[[dict[str, Any]], None]) -> int:
    """Start the runner, say its pid, wait for it, say how it ended, and kill what it left behind."""
    with open(job["log_out"], "wb") as out, open(job["log_err"], "wb") as err:
        child = subprocess.Popen(
            [job["python"], "-m", "conformance.chapter.runner", job["plan"]],
            cwd=job["source_root"],
            env=job["env"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            **child_process_options(new_group=True, parent_death_signal=signal.SIGKILL),
        )
    try:
        say({"event": "runner", "pid": child.pid})
        code = child.wait()
        kill_tree(child.pid)  # what the blocks left behind in the process group, at once (a fork bomb included)
        say({"event": "exit", "code": code})
    finally:
        kill_tree(child.pid)
        kill_descendants(os.getpid(), rounds=20)  # escapees from the group, re-parented to this subreaper
        _reap()
    return 0


REAP_S = 30.0


def _reap() -> None:
    """Wait for every child this subreaper has (the orphans it killed), so that none is left a zombie holding a
    process slot of the user's (the CLI's next process would find none free); at most `REAP_S` seconds."""
    deadline = time.monotonic() + REAP_S
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    """Supervise the runner the job file names (see the module's docstring)."""
    args = sys.argv[1:] if argv is None else argv
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # a block's signal to its parent: ignored
        signal.signal(signum, signal.SIG_IGN)
    with open(args[0], encoding="utf-8") as handle:
        job = json.load(handle)
    become_subreaper()
    return supervise(job, _writer(job["results"]))


if __name__ == "__main__":
    sys.exit(main())
