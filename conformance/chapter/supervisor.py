"""The supervisor of one chapter runner process, in a process of its own apart from the CLI.

    python -m conformance.chapter.supervisor JOB.json

`session.run_blocks` (in the CLI) starts one supervisor per runner process, in a session and process group of its
own; the supervisor starts the runner (`conformance.chapter.runner`, in the target environment, in a session of its
own again), watches each block's time, reads the records the runner appends and passes each block's result on to
the CLI in a file of its own. So the block's parent is the supervisor, never the CLI:

- a block that signals its parent (`os.kill(os.getppid(), SIGTERM)`) reaches the supervisor, which ignores SIGTERM,
  SIGINT and SIGHUP (the CLI stops it with SIGKILL); one that kills it (SIGKILL) or stops it (SIGSTOP) costs that
  block and its process: the CLI sees the supervisor gone (or silent past the block's limit), marks the block
  `crash` (or `timeout`), and runs the rest in a new runner under a new supervisor;
- the supervisor is a subreaper: a process a block forked that outlives the runner is re-parented to it and
  killed with the runner's tree when the runner's process ends;
- the runner's records are in a folder of the CLI's (never the runner's working folder, which a block may empty or
  remove): a block cannot reach them through its working folder, and every record is checked before it counts
  (`check_record`): an unknown event, a block out of order, a record from another process (a forked child) or a
  line that is not a record is *forged*, and costs the block that was running: it is `crash` ("its process wrote a
  record the runner did not"), its process is killed, the rest run in a new one. A harness failure in the runner
  (a `harness` record) is named as the harness's, never a block's.

Standard library and the suite's own modules only: it runs in the suite's interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from conformance.engine.launch import read_tail
from conformance.portable import become_subreaper, kill_descendants, kill_tree, new_group_options, \
    parent_death_signal_options

POLL_S = 0.1
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

    def to_json(self) -> dict[str, Any]:
        """As the supervisor passes it to the CLI."""
        return asdict(self)


def result_from_json(data: Any, indices: set[int]) -> RawResult | None:
    """A `RawResult` from the supervisor's file, or None when the line is not one (forged, or cut short)."""
    fields = {"index": int, "killed": str, "message": str, "replayed": bool, "stdout": str, "stderr": str,
              "duration_s": (int, float)}
    if not isinstance(data, dict) or set(data) != {*fields, "record"}:
        return None
    if any(not isinstance(data[k], kind) or (kind is int and isinstance(data[k], bool)) for k, kind in fields.items()):
        return None
    if data["index"] not in indices or data["killed"] not in ("", "timeout", "crash"):
        return None
    record = data["record"]
    if record is not None and (not isinstance(record, dict) or check_record(record, indices, data["index"],
                                                                              record.get("pid"))):
        return None
    return RawResult(**data)


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


class _Supervision:
    """One runner process watched to its end (see the module's docstring)."""

    def __init__(self, job: dict[str, Any], say: Callable[[dict[str, Any]], None]) -> None:
        self.job, self.say = job, say
        self.limits = {int(k): (float(v[0]), float(v[1])) for k, v in job["limits"].items()}
        self.indices = set(self.limits)
        self.workdir = Path(job["workdir"])
        self.current: int | None = None
        self.since = 0.0
        self.in_replay = False

    def lost(self, how: str, message: str) -> None:
        """The running block, killed or lost with its process, with what it had printed."""
        index = self.current
        assert index is not None
        out, err = self.workdir / f"block-{index}.out", self.workdir / f"block-{index}.err"
        self.say({"event": "result", "result": RawResult(
            index, None, how, message, bool(self.job["replayed"]), read_tail(out, 8192), read_tail(err, 8192),
            round(time.monotonic() - self.since, 3)).to_json()})

    def take(self, record: Any, pid: int) -> str:
        """Act on one record; why it is forged ('' when it is not)."""
        why = check_record(record, self.indices, self.current, pid)
        if why:
            return why
        event = record["event"]
        self.in_replay = event == "replay"
        if event == "start":
            if self.current is not None:
                return f"a start record of block {record['index'] + 1} while block {self.current + 1} ran"
            self.current, self.since = int(record["index"]), time.monotonic()
            self.say({"event": "start", "index": self.current, "pid": pid})
        elif event == "done":
            self.say({"event": "result", "result": RawResult(
                self.current, record, replayed=bool(self.job["replayed"]),
                duration_s=float(record.get("duration_s") or 0.0)).to_json()})
            self.current = None
        elif event == "harness":
            self.say({"event": "harness", "message": str(record.get("message") or "")[:300]})
        return ""

    def run(self) -> dict[str, Any]:
        """Start the runner and watch it to its end; the `end` event: the block lost (or -1: a replay), if any."""
        job = self.job
        with open(job["log_out"], "wb") as out, open(job["log_err"], "wb") as err:
            child = subprocess.Popen([job["python"], "-m", "conformance.chapter.runner", job["plan"]],
                                     cwd=job["source_root"], env=job["env"], stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=err, **new_group_options(), **parent_death_signal_options(signal.SIGKILL))
        reader = Records(Path(job["records"]))
        try:
            return self._watch(child, reader)
        finally:
            kill_tree(child.pid)  # what a block left behind in the process group
            if child.poll() is None:
                child.kill()
                child.wait()
            kill_descendants(os.getpid(), rounds=20)  # escapees, re-parented to this subreaper

    def _watch(self, child: subprocess.Popen, reader: Records) -> dict[str, Any]:
        while True:
            code = child.poll()
            for record in reader.new():
                why = self.take(record, child.pid)
                if why and self.current is not None:
                    kill_tree(child.pid)
                    child.wait()
                    self.lost("crash", f"its process wrote a record the runner did not ({why}); it was killed")
                    return {"event": "end", "lost": self.current, "replay_failed": False}
                if why:
                    self.say({"event": "note", "note": f"a forged line in the runner's records was ignored ({why})"})
            if self.current is not None:
                own, grace = self.limits[self.current]
                if time.monotonic() - self.since > own + grace:
                    kill_tree(child.pid)
                    child.wait()
                    self.lost("timeout", f"killed {grace:.0f}s after its time limit of {own:g}s (it did not stop "
                                         f"at the limit)")
                    return {"event": "end", "lost": self.current, "replay_failed": False}
            if code is not None:
                return self._ended(code, reader, child.pid)
            time.sleep(POLL_S)

    def _ended(self, code: int, reader: Records, pid: int) -> dict[str, Any]:
        for record in reader.new():  # what it wrote just before it ended
            if self.take(record, pid) and self.current is not None:
                break
        if self.current is not None:
            tail = read_tail(self.job["log_err"], 600).strip().splitlines()
            self.lost("crash", f"the process {exit_text(code)}" + (f": {tail[-1][:200]}" if tail else ""))
            return {"event": "end", "lost": self.current, "replay_failed": False}
        if self.in_replay:
            return {"event": "end", "lost": -1, "replay_failed": True}
        return {"event": "end", "lost": None, "replay_failed": False}


def _writer(path: str) -> Callable[[dict[str, Any]], None]:
    handle = open(path, "a", encoding="utf-8")

    def say(event: dict[str, Any]) -> None:
        handle.write(json.dumps(event, ensure_ascii=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())

    return say


def main(argv: list[str] | None = None) -> int:
    """Supervise the runner the job file names (see the module's docstring)."""
    args = sys.argv[1:] if argv is None else argv
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # a block's signal to its parent: ignored
        signal.signal(signum, signal.SIG_IGN)
    with open(args[0], encoding="utf-8") as handle:
        job = json.load(handle)
    become_subreaper()
    say = _writer(job["results"])
    say(_Supervision(job, say).run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
