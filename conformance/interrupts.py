"""SIGTERM ends a long command as Ctrl-C does: the run under way kills its children and removes its temporaries on
the way out (a `KeyboardInterrupt`), and the exit status says which signal it was (143 for SIGTERM, 130 for
SIGINT)."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

terminated = threading.Event()


def _interrupt(signum: int, frame: Any) -> None:
    terminated.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_interrupts(enabled: bool = True) -> Iterator[None]:
    """Within the block (when `enabled`), SIGTERM raises `KeyboardInterrupt`; the previous handler is restored."""
    terminated.clear()
    previous = signal.signal(signal.SIGTERM, _interrupt) if enabled else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def interrupted_status() -> int:
    """The exit status of an interrupted command: 143 after SIGTERM, 130 after Ctrl-C."""
    return 143 if terminated.is_set() else 130
