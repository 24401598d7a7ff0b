"""Starting child processes: the default launch strategy, with a time limit on the whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from conformance.core.observation import ProcessOutcome
from typing import Callable, Mapping, Sequence

TAIL_CHARS = 4000


@dataclass(frozen=True)
class CellCommand:
    """Everything needed to start one child: argv, full environment, stdin text and time limit."""

    argv: Sequence[str]
    env: Mapping[str, str]
    timeout_s: float
    stdin: str | None = None
    cwd: str | None = None


Launcher = Callable[[CellCommand], ProcessOutcome]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def subprocess_launcher(command: CellCommand) -> ProcessOutcome:
    """Run the command in a new session; on timeout kill its whole process group (grandchildren too)."""
    started = time.monotonic()
    proc = subprocess.Popen(
        list(command.argv),
        env=dict(command.env),
        cwd=command.cwd,
        stdin=subprocess.PIPE if command.stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    timed_out = False
    try:
        stdout, stderr = proc.communicate(command.stdin.encode() if command.stdin is not None else None,
                                          timeout=command.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        stdout, stderr = proc.communicate()
    finally:
        if proc.poll() is None:
            _kill_group(proc)
            proc.wait()
    # Orphans the child left behind in its group are not ours to keep either.
    _kill_group(proc)
    code = proc.returncode
    return ProcessOutcome(
        returncode=code,
        timed_out=timed_out,
        stdout=tail(stdout.decode("utf-8", "replace")),
        stderr=tail(stderr.decode("utf-8", "replace")),
        duration_s=round(time.monotonic() - started, 3),
        signal=-code if code is not None and code < 0 else None,
    )


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The last `limit` characters of `text`."""
    return text[-limit:]
