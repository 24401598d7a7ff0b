"""The parent's side of the perf child (`perf.child`): start it in a release's interpreter, ask it for one workload
at a time, bound each, and turn what came back into a sample or a status of that workload's own.

Each workload gets a pipe of its own, made here; only the record read from it that names the workload asked for is
kept. A workload's time bound (its declared `timeout_s`) starts when the child says it started; a little after it
(`GRACE_S`) the workload's process is killed. What a workload that gave no sample got (`workload_outcome`):
`timeout` (past its bound), `crash` (its process died of a signal or exited without a record: `os._exit`, a
segfault) or `error` (it raised, or its numbers are not finite and at least 0, `perf.numbers`). A crash of the
child itself costs the workload it was measuring; the rest are asked of a fresh child. The child gets SIGKILL when
this process dies (Linux) and ends when its socket closes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from conformance.errors import ConformanceError, one_line
from conformance.perf.numbers import sample_problem
from conformance.portable import child_process_options, fork_unavailable_reason, kill_tree, start_child

GRACE_S = 10.0  # after a workload's bound, before its process is killed; and for a child to answer
MAX_RECORD = 1 << 20  # bytes of a workload's record kept
TAIL = 8192  # bytes of what the child prints kept, to name why it could not start


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def workload_outcome(
    workload_id: str, record: bytes, exit_code: int | None, timed_out: bool, timeout_s: float
) -> dict[str, Any]:
    """A workload's sample (the record's own fields, `metrics` and `info` checked) or `{"status", "error"}` (see the
    module docstring), from the bytes its pipe held, its process's exit code (negative: the signal that ended it;
    None: unknown) and whether it ran past its bound."""
    line = record.split(b"\n", 1)[0] if b"\n" in record else b""
    try:
        found = json.loads(line.decode("utf-8")) if line else None
    except ValueError:
        found = None
    if isinstance(found, dict) and found.get("workload") == workload_id:
        if "metrics" in found:
            problem = sample_problem(found)
            if problem:
                return {"status": "error", "error": f"its record from the perf child is refused: {problem}"}
            return {k: v for k, v in found.items() if k not in ("workload", "status", "error")}
        if isinstance(found.get("error"), str):
            return {"status": "error", "error": one_line(found["error"])[:400]}
    if timed_out or exit_code == -signal.SIGALRM:
        return {"status": "timeout", "error": f"ran past its timeout_s of {timeout_s:g} s and was stopped"}
    if isinstance(found, dict):
        return {"status": "error", "error": "its record from the perf child names another workload; refused"}
    if exit_code is not None and exit_code < 0:
        return {"status": "crash", "error": f"its process died of {_signal_name(-exit_code)}"}
    ended = f"exited with status {exit_code}" if exit_code is not None else "ended"
    return {"status": "crash", "error": f"its process {ended} without writing its record"}


def _drain(stream: Any, into: bytearray, limit: int, keep_head: bool) -> None:
    try:
        for block in iter(lambda: stream.read(65536), b""):
            if keep_head:
                into.extend(block[: max(limit - len(into), 0)])
            else:
                into.extend(block)
                del into[:-limit]
    except (ValueError, OSError):
        # The stream was closed under the reader (Ctrl-C or SIGTERM ending the session while a child wrote): what
        # was read is kept, and the interrupt is said once by the CLI, never as a thread's traceback.
        return


@dataclass
class ChildCommand:
    """How to start the child: the interpreter's command line, its environment and working folder."""

    argv: Sequence[str]
    env: Mapping[str, str]
    cwd: str


class ChildServer:
    """One running perf child (see the module docstring)."""

    def __init__(self, command: ChildCommand, forking: bool) -> None:
        ours, theirs = socket.socketpair()
        argv = [*command.argv, "--socket-fd", str(theirs.fileno()), *([] if forking else ["--no-fork"])]
        self.forking = forking
        self.output = bytearray()
        self.process = start_child(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(command.env),
            cwd=command.cwd,
            pass_fds=(theirs.fileno(),),
            **child_process_options(new_group=True, parent_death_signal=signal.SIGKILL),
        )
        theirs.close()
        self.sock, self.buffer = ours, b""
        self.reader = threading.Thread(target=_drain, args=(self.process.stdout, self.output, TAIL, False), daemon=True)
        self.reader.start()

    def message(self, deadline: float) -> dict[str, Any] | None:
        """The child's next message by `deadline` (monotonic); None when it closed its end or said nothing."""
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(min(left, 1.0))
            try:
                block = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return None
            if not block:
                return None
            self.buffer += block
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            found = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    def last_output(self) -> str:
        """The last line the child printed."""
        return (bytes(self.output).decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]

    def stop(self) -> None:
        """End the child and whatever it left in its group."""
        try:
            self.sock.close()
        finally:
            kill_tree(self.process.pid)
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.reader.join(timeout=5)

    def ask(self, workload_id: str, timeout_s: float) -> tuple[dict[str, Any], bool]:
        """Measure one workload: its sample or status (`workload_outcome`), and whether this child can go on."""
        read_end, write_end = os.pipe()
        record = bytearray()
        try:
            socket.send_fds(
                self.sock, [json.dumps({"id": workload_id, "timeout_s": timeout_s}).encode() + b"\n"], [write_end]
            )
        except OSError:
            os.close(read_end)
            return workload_outcome(workload_id, b"", self.process.poll(), False, timeout_s), False
        finally:
            os.close(write_end)
        with os.fdopen(read_end, "rb") as stream:
            reader = threading.Thread(target=_drain, args=(stream, record, MAX_RECORD, True), daemon=True)
            reader.start()
            exit_code, timed_out, alive = self._wait(timeout_s)
            reader.join(timeout=5)
            return workload_outcome(workload_id, bytes(record), exit_code, timed_out, timeout_s), alive

    def _wait(self, timeout_s: float) -> tuple[int | None, bool, bool]:
        """Wait for the workload asked to end: its exit code, whether it ran past its bound, whether the child can
        go on."""
        started = self.message(time.monotonic() + GRACE_S)
        if not started or not isinstance(started.get("started"), int):
            return self.process.poll(), False, False
        deadline = time.monotonic() + timeout_s + GRACE_S
        if not self.forking:  # the child measures it itself, then exits
            try:
                return self.process.wait(timeout=max(deadline - time.monotonic(), 0)), False, False
            except subprocess.TimeoutExpired:
                kill_tree(self.process.pid)
                return None, True, False
        ended = self.message(deadline)
        if ended is not None and isinstance(ended.get("exit"), int):
            return ended["exit"], False, True
        if time.monotonic() < deadline or self.process.poll() is not None:
            return None, False, False  # the child itself ended while the workload ran (the workload killed it?)
        try:
            os.kill(started["started"], signal.SIGKILL)  # unreaped until the child says `exit`: not a reused pid
        except (ProcessLookupError, PermissionError):
            pass
        ended = self.message(time.monotonic() + GRACE_S)
        return None, True, ended is not None and isinstance(ended.get("exit"), int)


def start_child_server(command: ChildCommand, label: str, bound_s: float) -> ChildServer:
    """A started child that said `ready` within `bound_s`; `ConformanceError` naming the side when it did not."""
    server = ChildServer(command, forking=not fork_unavailable_reason())
    ready = server.message(time.monotonic() + bound_s)
    if ready is not None and "ready" in ready:
        return server
    server.stop()
    why = (
        ready.get("failed")
        if ready is not None and isinstance(ready.get("failed"), str)
        else f"exit {server.process.returncode}: {server.last_output()}"
    )
    raise ConformanceError(f"the perf child of {label} could not start ({one_line(str(why))[:300]})")


def measure_workloads(
    command: ChildCommand, label: str, workloads: Sequence[tuple[str, float]], bound_s: float
) -> dict[str, dict[str, Any]]:
    """Each workload's sample or status (see the module docstring), by id, asked of as few children as the
    workloads' fates allow."""
    found: dict[str, dict[str, Any]] = {}
    pending = list(workloads)
    while pending:
        server = start_child_server(command, label, bound_s)
        try:
            while pending:
                workload_id, timeout_s = pending.pop(0)
                found[workload_id], alive = server.ask(workload_id, timeout_s)
                if not alive:
                    break
        finally:
            server.stop()
    return found
