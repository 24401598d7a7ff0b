"""Waiting on an observable event (a file, a line, a process state) with a generous deadline, never a fixed sleep."""

from __future__ import annotations

import time
from typing import Callable

GENEROUS_S = 60.0  # far beyond what the event takes on an idle machine: a busy one is slow, never wrong


def wait_until(happened: Callable[[], object], timeout_s: float = GENEROUS_S, poll_s: float = 0.05) -> bool:
    """Poll `happened` until it returns something true (True) or `timeout_s` passes (False, after one last look)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if happened():
            return True
        time.sleep(poll_s)
    return bool(happened())
