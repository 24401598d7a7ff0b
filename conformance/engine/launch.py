"""Launch strategies: how one cell's child process is started, bounded in time and cleaned up.

Two strategies share one contract (`CellCommand` in, `ProcessOutcome` out):
- `SpawnLauncher` starts `python -m conformance.child ...` afresh for every cell;
- `ForkLauncher` asks a per-environment fork server (`conformance.child.forkserver`), which
  has already imported jax, to fork a child for the cell.

For both, the child starts its own session; its stdout and stderr go to files (the parent
keeps only their tails, so a runaway printer costs disk, not memory); at the time limit the
whole process group is killed, and so is any process that carries the cell's marker variable
in its environment (a grandchild that started a session of its own). Every live child is
registered, so an interrupted run can kill them all (`kill_all`).

Where the platform lacks these (`conformance.portable`): on Windows a child starts in a new
process group and its tree is killed with `taskkill /T`; marked processes are found through
`/proc` on Linux and `ps -E` on macOS; the fork server is not used where `os.fork` is missing
(Windows) or unsafe after importing jax (macOS), and every cell is spawned, which the run
header records as `spawn (fork unavailable)`.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Mapping, Sequence

from conformance.core.observation import ProcessOutcome
from conformance.portable import fork_unavailable_reason, kill_pid, kill_tree, new_group_options, \
    processes_with_variable

TAIL_CHARS = 4000
MARKER_VARIABLE = "JAXCONF_CELL_TOKEN"
_POLL_S = 0.02


@dataclass(frozen=True)
class CellCommand:
    """Everything needed to start one child: what to run, where, with which environment, input and limit."""

    case_id: str
    param: str
    out_path: str
    workdir: str
    python: str
    package: str
    env: Mapping[str, str]
    timeout_s: float
    stdin: str | None = None
    argv: Sequence[str] = field(default_factory=tuple)


def read_tail(path: str | os.PathLike, limit: int = TAIL_CHARS) -> str:
    """The last `limit` characters (about) of a text file, without reading all of it; '' if it is missing."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit * 4))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")[-limit:]
    return ("[… truncated]\n" + text) if size > len(data) or len(text) == limit else text


# ---------------------------------------------------------------- the registry of live children

_LIVE: dict[int, str] = {}  # process group id -> marker token
_LIVE_LOCK = threading.Lock()


def _register(pgid: int, token: str) -> None:
    with _LIVE_LOCK:
        _LIVE[pgid] = token


def _unregister(pgid: int) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(pgid, None)


def _processes_with_marker(token: str) -> list[int]:
    """Pids of processes whose environment carries `MARKER_VARIABLE=token` (see `portable`)."""
    return processes_with_variable(f"{MARKER_VARIABLE}={token}")


def kill_cell(pgid: int, token: str) -> None:
    """Kill a cell's process group (its process tree on Windows), then every process still marked with its token."""
    kill_tree(pgid)
    for pid in _processes_with_marker(token):
        kill_pid(pid)


def kill_marked(token: str) -> None:
    """Kill every process still carrying a cell's marker token."""
    for pid in _processes_with_marker(token):
        kill_pid(pid)


def kill_all() -> int:
    """Kill every child this process started and that is still registered; return how many groups."""
    with _LIVE_LOCK:
        live = list(_LIVE.items())
    for pgid, token in live:
        kill_cell(pgid, token)
    return len(live)


def child_argv(python: str, case_id: str, param: str, out_path: str, package: str) -> list[str]:
    """The command line of a spawned child for one cell."""
    from conformance.core.case import DEFAULT_CASE_PACKAGE

    argv = [python, "-m", "conformance.child", case_id]
    if param:
        argv.append(param)
    argv += ["--out", out_path]
    if package != DEFAULT_CASE_PACKAGE:
        argv += ["--package", package]
    return argv


def _outcome(code: int | None, timed_out: bool, workdir: str, started: float, launcher: str) -> ProcessOutcome:
    return ProcessOutcome(
        launcher=launcher,
        returncode=code,
        timed_out=timed_out,
        stdout=read_tail(os.path.join(workdir, "stdout.txt")),
        stderr=read_tail(os.path.join(workdir, "stderr.txt")),
        duration_s=round(time.monotonic() - started, 3),
        signal=-code if code is not None and code < 0 else None,
    )


class SpawnLauncher:
    """Start a fresh interpreter for every cell."""

    name = "spawn"

    def __call__(self, command: CellCommand) -> ProcessOutcome:
        """Run the cell; on timeout kill its whole process group and its marked descendants."""
        token = uuid.uuid4().hex
        env = {**command.env, MARKER_VARIABLE: token}
        argv = list(command.argv) or child_argv(command.python, command.case_id, command.param,
                                                command.out_path, command.package)
        started = time.monotonic()
        stdin_path = os.path.join(command.workdir, "stdin.txt")
        if command.stdin is not None:
            Path(stdin_path).write_text(command.stdin, encoding="utf-8")
        with open(os.path.join(command.workdir, "stdout.txt"), "wb") as out, \
                open(os.path.join(command.workdir, "stderr.txt"), "wb") as err, \
                (open(stdin_path, "rb") if command.stdin is not None else open(os.devnull, "rb")) as feed:
            proc = subprocess.Popen(argv, env=env, cwd=command.workdir, stdin=feed, stdout=out, stderr=err,
                                    **new_group_options())
        _register(proc.pid, token)
        timed_out = False
        try:
            try:
                proc.wait(timeout=command.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
        finally:
            kill_cell(proc.pid, token)  # orphans it left in its group, or the whole group on timeout
            proc.wait()
            _unregister(proc.pid)
        return _outcome(proc.returncode, timed_out, command.workdir, started, "spawn")


class ForkServerError(RuntimeError):
    """The fork server could not start, or died."""


class ForkServer:
    """A `conformance.child.forkserver` process for one environment, and the client side of its protocol.

    Requests and replies are JSON lines over its stdin and stdout. Each request gets a
    `started` reply with the child's pid, then an `exited` reply with its wait status.
    """

    def __init__(self, python: str, package: str, env: Mapping[str, str], cwd: str) -> None:
        self.python = python
        self.package = package
        self._ids = itertools.count(1)
        self._waiting: dict[int, dict[str, object]] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.dead_reason = ""
        self._stderr_path = os.path.join(cwd, "forkserver-stderr.txt")
        self._stderr: IO[bytes] = open(self._stderr_path, "wb")
        self.proc = subprocess.Popen(
            [python, "-m", "conformance.child.forkserver", "--package", package],
            env=dict(env), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            **new_group_options())
        ready = self.proc.stdout.readline()
        try:
            hello = json.loads(ready)
        except ValueError:
            self.close()
            raise ForkServerError(f"the fork server did not start: {read_tail(self._stderr_path, 400).strip()}")
        if hello.get("event") != "ready":
            self.close()
            raise ForkServerError(f"the fork server refused: {hello.get('reason', hello)}")
        self.hello = hello
        self._reader = threading.Thread(target=self._read_replies, name="forkserver-reader", daemon=True)
        self._reader.start()

    def _read_replies(self) -> None:
        for line in self.proc.stdout:
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            with self._changed:
                slot = self._waiting.get(reply.get("id"))
                if slot is not None:
                    slot.update({reply["event"]: reply})
                self._changed.notify_all()
        with self._changed:
            self.dead_reason = self.dead_reason or "the fork server exited"
            self._changed.notify_all()

    def _await(self, request_id: int, event: str, deadline: float | None) -> dict | None:
        with self._changed:
            while event not in self._waiting[request_id]:
                if self.dead_reason:
                    raise ForkServerError(self.dead_reason)
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._changed.wait(timeout=remaining if remaining is not None else 1.0)
            return self._waiting[request_id][event]  # type: ignore[return-value]

    def run(self, command: CellCommand) -> ProcessOutcome:
        """Fork a child for the cell, wait for it within its limit, and describe how it ended."""
        request_id = next(self._ids)
        token = uuid.uuid4().hex
        with self._lock:
            self._waiting[request_id] = {}
        request = {"id": request_id, "case": command.case_id, "param": command.param, "out": command.out_path,
                   "cwd": command.workdir, "token": token}
        started = time.monotonic()
        try:
            with self._lock:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ForkServerError("the fork server is gone") from None
        pid = None
        try:
            started_reply = self._await(request_id, "started", time.monotonic() + 60)
            if started_reply is None:
                raise ForkServerError("the fork server did not answer within 60 s")
            pid = int(started_reply["pid"])
            _register(pid, token)
            exited = self._await(request_id, "exited", started + command.timeout_s)
            timed_out = exited is None
            if timed_out:
                kill_cell(pid, token)
                exited = self._await(request_id, "exited", time.monotonic() + 30)
        finally:
            # Whatever happens (the server dying included), no child of this cell outlives it.
            if pid is not None:
                kill_cell(pid, token)
                _unregister(pid)
            else:
                kill_marked(token)
            with self._lock:
                self._waiting.pop(request_id, None)
        code = (exited or {}).get("returncode")
        return _outcome(code if isinstance(code, int) else None, timed_out, command.workdir, started, "fork")

    def close(self) -> None:
        """Stop the server (its children are killed by their own cells)."""
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_tree(self.proc.pid)
            self.proc.wait()
        self._stderr.close()


class ForkLauncher:
    """Fork cells from a per-environment server that has imported jax; spawn the cells that need a fresh interpreter.

    If the server cannot start or dies, the remaining cells are spawned, and `fallback_reason` says why.
    """

    name = "fork"

    def __init__(self, python: str, package: str, env: Mapping[str, str], workdir: str) -> None:
        self.spawn = SpawnLauncher()
        self.fallback_reason = ""
        self.server: ForkServer | None = None
        unavailable = fork_unavailable_reason()
        if unavailable:
            self.fallback_reason = unavailable
            return
        try:
            self.server = ForkServer(python, package, env, workdir)
        except (ForkServerError, OSError) as exc:
            self.fallback_reason = str(exc)

    def launcher_for(self, fresh_interpreter: bool) -> str:
        """Which strategy a cell gets: `spawn` when it needs a fresh interpreter or the server is unavailable."""
        return "fork" if self.server is not None and not fresh_interpreter else "spawn"

    def __call__(self, command: CellCommand, fresh_interpreter: bool = False) -> ProcessOutcome:
        """Run the cell by fork when it may be forked, otherwise spawn it."""
        if self.launcher_for(fresh_interpreter) == "spawn":
            return self.spawn(command)
        try:
            return self.server.run(command)  # type: ignore[union-attr]
        except ForkServerError as exc:
            self.fallback_reason = f"the fork server failed ({exc}); this cell and later ones were spawned"
            server, self.server = self.server, None
            if server is not None:
                server.close()
            for leftover in ("observation.json", "stdout.txt", "stderr.txt"):
                Path(command.workdir, leftover).unlink(missing_ok=True)
            return self.spawn(command)

    def close(self) -> None:
        """Stop the server."""
        if self.server is not None:
            self.server.close()
            self.server = None
