"""Launch strategies: how one cell's child process is started, bounded in time and cleaned up.

Two strategies share one contract (`CellCommand` in, `ProcessOutcome` out):
- `SpawnLauncher` starts `python -m conformance.child ...` afresh for every cell;
- `ForkLauncher` asks a per-environment fork server (`conformance.child.forkserver`), which
  has already imported jax, to fork a child for the cell. Cells whose case sets environment
  variables are forked from a server of their own, started with those variables (so jax and
  its backend see them as a spawned child's would), when at least two cells of the run share
  the same set; a lone such cell is spawned.

For both, the child starts its own session; its stdout and stderr go to files (the parent
keeps only their tails, so a runaway printer costs disk, not memory); at the time limit the
whole process group is killed, and so is any process that carries the cell's marker variable
in its environment (a grandchild that started a session of its own). On Linux the child is
also the subreaper of everything its probe starts, so at the limit every descendant is found
and killed even without the marker; a child that ends kills its descendants itself. Every live child is
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
import select
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Mapping, Sequence

from conformance.core.observation import TAIL_CHARS, ProcessOutcome
from conformance.portable import (
    child_process_options,
    fork_unavailable_reason,
    kill_descendants,
    kill_pid,
    kill_tree,
    processes_with_variable,
    start_child,
)

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
    case_env: Mapping[str, str] = field(default_factory=dict)


def env_group(case_env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The fork server a cell with these case variables needs: `()` is the plain one."""
    return tuple(sorted(case_env.items()))


def stdin_file(command: CellCommand) -> str | None:
    """Write the cell's stdin text to a file in its workdir and return the path (None without stdin)."""
    if command.stdin is None:
        return None
    path = os.path.join(command.workdir, "stdin.txt")
    Path(path).write_text(command.stdin, encoding="utf-8", newline="")
    return path


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


def kill_cell(pgid: int, token: str, tree: bool = False) -> None:
    """Kill a cell's process group (its process tree on Windows), then every process still marked with its token.

    With `tree` (only while the cell's process is alive or not yet reaped, so its pid cannot name another
    process), first every descendant of it: the cell's process is their subreaper, so this finds what
    left its group and session and dropped the marker too (Linux).
    """
    if tree:
        kill_descendants(pgid)
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
        kill_cell(pgid, token, tree=True)
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
        argv = list(command.argv) or child_argv(
            command.python, command.case_id, command.param, command.out_path, command.package
        )
        started = time.monotonic()
        stdin_path = stdin_file(command)
        with (
            open(os.path.join(command.workdir, "stdout.txt"), "wb") as out,
            open(os.path.join(command.workdir, "stderr.txt"), "wb") as err,
            open(stdin_path or os.devnull, "rb") as feed,
        ):
            proc = start_child(
                argv,
                env=env,
                cwd=command.workdir,
                stdin=feed,
                stdout=out,
                stderr=err,
                **child_process_options(new_group=True),
            )
        _register(proc.pid, token)
        timed_out = False
        try:
            try:
                proc.wait(timeout=command.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_cell(proc.pid, token, tree=True)  # not reaped yet: its pid is still its own
        finally:
            kill_cell(proc.pid, token)  # orphans it left in its group, or the whole group on timeout
            proc.wait()
            _unregister(proc.pid)
        return _outcome(proc.returncode, timed_out, command.workdir, started, "spawn")


READY_TIMEOUT_S = 180.0


class ForkServerError(RuntimeError):
    """The fork server could not start, or died."""


class LaunchCancelled(RuntimeError):
    """The run is being stopped: no new child may start."""


class ForkServer:
    """A `conformance.child.forkserver` process for one environment, and the client side of its protocol.

    Requests and replies are JSON lines over its stdin and stdout. Each request gets a
    `started` reply with the child's pid, then an `exited` reply with its wait status.
    """

    def __init__(self, python: str, package: str, env: Mapping[str, str], cwd: str, name: str = "forkserver") -> None:
        """Start the server process; `wait_ready` (called by `run` too) waits for its ready line."""
        self.python = python
        self.package = package
        self._ids = itertools.count(1)
        self._waiting: dict[int, dict[str, object]] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._starting = threading.Lock()
        self._closing = threading.Lock()
        self._closed = False
        self.hello: dict | None = None
        self.refused = ""
        self.dead_reason = ""
        self._stderr_path = os.path.join(cwd, f"{name}-stderr.txt")
        self._stderr: IO[bytes] = open(self._stderr_path, "wb")
        self.proc = start_child(
            [python, "-m", "conformance.child.forkserver", "--package", package],
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            **child_process_options(new_group=True),
        )

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> dict:
        """Wait (once, at most `timeout_s`) for the server's ready line and return it; raise `ForkServerError`
        if it refused, died or hung while importing (it is then stopped)."""
        with self._starting:
            if self.hello is not None:
                return self.hello
            if self.refused:
                raise ForkServerError(self.refused)
            if self._closed:
                raise ForkServerError("the fork server was stopped")
            readable, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
            ready = self.proc.stdout.readline() if readable else b""
            try:
                hello = json.loads(ready)
            except ValueError:
                hello = None
            if not isinstance(hello, dict) or hello.get("event") != "ready":
                if isinstance(hello, dict):
                    self.refused = f"the fork server refused: {hello.get('reason', hello)}"
                elif not readable:
                    self.refused = f"the fork server was not ready after {timeout_s:.0f} s"
                else:
                    self.refused = f"the fork server did not start: {read_tail(self._stderr_path, 400).strip()}"
                self.close()
                raise ForkServerError(self.refused)
            self.hello = hello
            self._reader = threading.Thread(target=self._read_replies, name="forkserver-reader", daemon=True)
            self._reader.start()
            return hello

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
        self.wait_ready()
        request_id = next(self._ids)
        token = uuid.uuid4().hex
        with self._lock:
            self._waiting[request_id] = {}
        started = time.monotonic()
        request = {
            "id": request_id,
            "case": command.case_id,
            "param": command.param,
            "out": command.out_path,
            "cwd": command.workdir,
            "token": token,
            "stdin": stdin_file(command),
        }
        try:
            with self._lock:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
        except (OSError, ValueError):  # ValueError: another thread closed the pipe
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
                kill_cell(pid, token, tree=True)
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
        """Stop the server (its children are killed by their own cells); safe to call more than once, from any
        thread."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
        if self.hello is None:  # still importing (or refused): nothing to wait for
            kill_tree(self.proc.pid)
        try:
            with self._lock:
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
    """Fork cells from per-environment servers that have imported jax; spawn the cells that need a fresh interpreter.

    The plain server (no case variables) starts with the launcher. `shared_envs` names the
    case-variable sets that more than one cell of the run uses; each gets its own server,
    started at once so that it imports while other cells run. A cell whose variables have no
    server is spawned. If the plain server cannot start or dies, its remaining cells are
    spawned, and `fallback_reason` says why; a variable server that refuses (jax may not even
    import under those variables) or dies leaves its cells to be spawned, as `env_notes` records.
    Once `close` has begun, no new child starts (`LaunchCancelled`).
    """

    name = "fork"

    def __init__(
        self,
        python: str,
        package: str,
        env: Mapping[str, str],
        workdir: str,
        shared_envs: Sequence[Mapping[str, str]] = (),
    ) -> None:
        self.spawn = SpawnLauncher()
        self.fallback_reason = ""
        self.env_notes: list[str] = []
        self.server: ForkServer | None = None
        self._env_servers: dict[tuple[tuple[str, str], ...], ForkServer] = {}
        self._lock = threading.Lock()
        self._closed = False
        unavailable = fork_unavailable_reason()
        if unavailable:
            self.fallback_reason = unavailable
            return
        try:
            self.server = ForkServer(python, package, env, workdir)
            for number, case_env in enumerate(shared_envs, 1):
                group = env_group(case_env)
                if group and group not in self._env_servers:
                    try:
                        self._env_servers[group] = ForkServer(
                            python, package, {**env, **case_env}, workdir, name=f"forkserver-env{number}"
                        )
                    except OSError as exc:
                        self.env_notes.append(
                            f"{_group_text(group)}: its server did not start ({exc}); its cells were spawned"
                        )
            self.server.wait_ready()
        except (ForkServerError, OSError) as exc:
            self.fallback_reason = str(exc)
            self._stop_servers()
        except BaseException:  # an interrupt while the server imports: leave nothing running
            self._stop_servers()
            raise

    def _drop(self, server: ForkServer, why: str) -> None:
        """Stop using `server` (it refused or died) and say so; its cells are spawned from now on."""
        with self._lock:
            if server is self.server:
                self.server = None
                self.fallback_reason = f"the fork server failed ({why}); its later cells were spawned"
            for group, candidate in list(self._env_servers.items()):
                if candidate is server:
                    del self._env_servers[group]
                    self.env_notes.append(f"{_group_text(group)}: {why}; its cells were spawned")
        server.close()

    def _server_for(self, command: CellCommand) -> ForkServer | None:
        group = env_group(command.case_env)
        with self._lock:
            server = self._env_servers.get(group) if group else self.server
        if server is None:
            return None
        try:
            server.wait_ready()
        except ForkServerError as exc:
            self._drop(server, str(exc))
            return None
        return server

    def launcher_for(self, fresh_interpreter: bool, case_env: Mapping[str, str] | None = None) -> str:
        """Which strategy a cell gets: `spawn` when it needs a fresh interpreter or no server serves its variables."""
        if fresh_interpreter:
            return "spawn"
        group = env_group(case_env or {})
        with self._lock:
            served = (group in self._env_servers) if group else self.server is not None
        return "fork" if served else "spawn"

    def _check_open(self) -> None:
        if self._closed:
            raise LaunchCancelled("the run is stopping")

    def __call__(self, command: CellCommand, fresh_interpreter: bool = False) -> ProcessOutcome:
        """Run the cell by fork when it may be forked, otherwise spawn it."""
        self._check_open()
        server = None if fresh_interpreter else self._server_for(command)
        self._check_open()  # waiting for a server can outlast the run
        if server is None:
            return self.spawn(command)
        try:
            return server.run(command)
        except ForkServerError as exc:
            self._check_open()
            self._drop(server, str(exc))
            for leftover in ("observation.json", "stdout.txt", "stderr.txt"):
                Path(command.workdir, leftover).unlink(missing_ok=True)
            return self.spawn(command)

    def _stop_servers(self) -> None:
        with self._lock:
            servers = [self.server, *self._env_servers.values()]
            self.server = None
            self._env_servers = {}
        for server in servers:
            if server is not None:
                server.close()

    def close(self) -> None:
        """Stop every server; from now on no cell starts."""
        self._closed = True
        self._stop_servers()


def _group_text(group: tuple[tuple[str, str], ...]) -> str:
    return " ".join(f"{name}={value}" for name, value in group)
