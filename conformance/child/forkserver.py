"""The fork server: imports jax once, then forks one child per cell on request. Runs in the target environment.

    python -m conformance.child.forkserver [--package conformance.cases]

It imports jax, jax.numpy, numpy and every case module, checks that no backend has been
initialised (so no client, device or thread pool is shared with the children), then says
`{"event": "ready", ...}` on stdout and reads JSON requests from stdin, one per line:
`{"id", "case", "param", "out", "cwd", "token", "stdin"}`. For each it forks a child that
starts its own session, reads its stdin from the file `stdin` names (or /dev/null), sends
its stdout and stderr to files in `cwd`, runs the probe exactly as a spawned child does and
writes the observation to `out`. Besides the plain server, the parent starts one per set of
case variables that several cells share, with those variables in its environment, so jax and
its backend see them as a spawned child's would. The server answers
`{"id", "event": "started", "pid"}` at once and `{"id", "event": "exited", "returncode"}`
when the child ends (negative: killed by that signal). When its input closes (its parent is done, or was
killed), it kills the cells still running, since nobody would enforce their time limits. Standard library only.

Case modules are foreign code imported into the server: the signal dispositions and mask the
server started with are put back after they are imported and before every fork (a module that
ignores SIGCHLD would otherwise make every forked cell a timeout). The server and each forked
child are subreapers (Linux): a process a probe starts stays below its cell, which kills it as
it ends; one left by a cell that died is killed by the server when it reaps that cell.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import select
import signal
import sys
from typing import Any

from conformance.child.main import end_descendants, observe, write_record
from conformance.portable import (
    SignalState,
    become_subreaper,
    bound_cell_processes,
    kill_descendants,
    limit_cell_resources,
)
from conformance.core.case import DEFAULT_CASE_PACKAGE, load_cases
from conformance.core.casefolders import import_declared_folders

MARKER_VARIABLE = "JAXCONF_CELL_TOKEN"


def backend_initialised() -> list[str]:
    """Names of JAX backends already initialised in this process (must be empty before any fork)."""
    try:
        from jax._src import xla_bridge
    except ImportError:
        return []
    backends = getattr(xla_bridge, "_backends", None)
    return sorted(backends) if backends else []


def preload(package: str) -> dict[str, Any]:
    """Import what every cell needs, and describe the server for its `ready` line.

    An environment without jax (the suite's own tests use one) still gets a server: its cells
    then fail exactly as spawned ones would.
    """
    try:
        import jax
        import jax.numpy  # noqa: F401
        import numpy  # noqa: F401
    except ImportError:
        jax = None
    import_declared_folders()
    cases = load_cases(package)
    return {"jax": getattr(jax, "__version__", None), "cases": len(cases), "backends": backend_initialised()}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _text_stream(fd: int, mode: str, like: Any) -> io.TextIOWrapper:
    """A standard stream on `fd` made as the interpreter makes its own: the server's encoding and error
    handler (PYTHONIOENCODING) and no newline translation, so a forked child reads and writes what a
    spawned one would."""
    binary = io.open(fd, mode + "b", closefd=False)
    return io.TextIOWrapper(
        binary,
        encoding=getattr(like, "encoding", None) or "utf-8",
        errors=getattr(like, "errors", None) or "strict",
        newline="\n",
        line_buffering=mode == "w",
    )


def run_child(request: dict[str, Any], package: str) -> None:
    """In the forked child: a session of its own, output to files, the probe, the observation; never returns."""
    code = 0
    try:
        os.setsid()
        bound_cell_processes(limit_cell_resources())
        os.environ[MARKER_VARIABLE] = str(request["token"])
        os.chdir(request["cwd"])
        for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
            target = os.open(os.path.join(request["cwd"], name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        feed = os.open(request.get("stdin") or os.devnull, os.O_RDONLY)
        os.dup2(feed, 0)
        os.close(feed)
        sys.stdin = _text_stream(0, "r", sys.__stdin__)
        sys.stdout = _text_stream(1, "w", sys.__stdout__)
        sys.stderr = _text_stream(2, "w", sys.__stderr__)
        become_subreaper()
        write_record(request["out"], observe(request["case"], request.get("param", ""), package))
        sys.stdout.flush()
        sys.stderr.flush()
        end_descendants()
    except BaseException:  # noqa: BLE001 - nothing may escape into the server's loop; say why on the cell's stderr
        code = 70
        try:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(code)


def _reap(children: dict[int, int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        request_id = children.pop(pid, None)
        if request_id is not None:
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            # What the cell left behind was re-parented to this server (a subreaper) as it died: kill it,
            # sparing the cells still running. Those processes are reaped by this loop in turn.
            kill_descendants(os.getpid(), skip=set(children))
            _send({"id": request_id, "event": "exited", "returncode": code})


def end_children(children: dict[int, int]) -> None:
    """Kill every running cell (each in a session of its own) and whatever it left below this server."""
    for pid in list(children):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    kill_descendants(os.getpid())


def serve(package: str, signals: SignalState | None = None) -> int:
    """Answer requests until stdin closes, then kill the children still running (nobody would enforce their time
    limits) and reap them. Before each fork the
    signal state is put back to `signals` (the server's own, from before the case modules were imported)."""
    children: dict[int, int] = {}
    buffered = b""
    stdin_fd = sys.stdin.fileno()
    open_input = True
    while open_input or children:
        readable, _, _ = select.select([stdin_fd] if open_input else [], [], [], 0.02)
        if readable:
            chunk = os.read(stdin_fd, 65536)
            if not chunk:
                open_input = False
                # Its parent is gone (or done): nobody enforces a cell's time limit any more, so none may go on.
                end_children(children)
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                if not line.strip():
                    continue
                request = json.loads(line)
                if signals is not None:
                    signals.restore()
                pid = os.fork()
                if pid == 0:
                    run_child(request, package)
                children[pid] = request["id"]
                _send({"id": request["id"], "event": "started", "pid": pid})
        _reap(children)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Preload, check that no backend is initialised, say ready, serve."""
    parser = argparse.ArgumentParser(prog="python -m conformance.child.forkserver")
    parser.add_argument("--package", default=DEFAULT_CASE_PACKAGE)
    args = parser.parse_args(argv)
    signals = SignalState()
    become_subreaper()
    try:
        hello = preload(args.package)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which falls back to spawning
        _send({"event": "refused", "reason": f"preloading failed: {type(exc).__name__}: {exc}"})
        return 1
    if hello["backends"]:
        _send({"event": "refused", "reason": f"a backend is already initialised: {hello['backends']}"})
        return 1
    hello["signals_restored"] = signals.restore()  # a case module may have changed them at import
    _send({"event": "ready", "pid": os.getpid(), **hello})
    return serve(args.package, signals)


if __name__ == "__main__":
    sys.exit(main())
