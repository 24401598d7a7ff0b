"""SIGTERM ends a long command as Ctrl-C does: the run under way kills its children and removes its temporaries on
the way out (a `KeyboardInterrupt`), and the exit status says which signal it was (143 for SIGTERM, 130 for
SIGINT). `interrupts_held` keeps SIGINT and SIGTERM waiting through a short critical section (making a file that
the cleanup must know of) without touching the signal mask, so that it works whatever threads exist."""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Iterator

terminated = threading.Event()
interrupted = threading.Event()

HELD_SIGNALS = ("SIGINT", "SIGTERM")


def _interrupt(signum: int, frame: Any) -> None:
    (terminated if signum == signal.SIGTERM else interrupted).set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_interrupts(enabled: bool = True) -> Iterator[None]:
    """Within the block (when `enabled`), SIGTERM raises `KeyboardInterrupt`, and so does Ctrl-C where Python's own
    handler had it; each notes that it came (`interrupt_lost`). The previous handlers are restored."""
    terminated.clear()
    interrupted.clear()
    previous = {}
    if enabled:
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _interrupt)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # an ignored Ctrl-C stays ignored
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def interrupted_status() -> int:
    """The exit status of an interrupted command: 143 after SIGTERM, 130 after Ctrl-C."""
    return 143 if terminated.is_set() else 130


def interrupt_lost(status: int) -> bool:
    """Whether a command that ended with `status` was interrupted without ending as interrupted: its
    `KeyboardInterrupt` was raised where Python prints "Exception ignored" and drops it (an at-fork handler, a
    finalizer). The command then says so and exits as interrupted, late but never as a success."""
    return (terminated.is_set() or interrupted.is_set()) and status not in (130, 143)


class _Hold:
    """The handlers a hold replaced, and the signals noted while it was open."""

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}
        self.noted: list[int] = []
        self.open = True

    def note(self, signum: int, frame: Any) -> None:
        """The handler while the hold is open: note the signal. Once it is closed (a handler not yet put back when
        an interrupt cut the closing short), put this signal's own handler back and deliver the signal to it."""
        if self.open:
            if signum not in self.noted:
                self.noted.append(signum)
            return
        signal.signal(signum, self.previous[signum])
        signal.raise_signal(signum)

    def close(self) -> None:
        """Put every handler back, then deliver the signals noted, in the order they came, to those handlers."""
        self.open = False
        for number, handler in self.previous.items():
            signal.signal(number, handler)
        for number in self.noted:
            signal.raise_signal(number)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are noted instead of handled; on leaving it their previous handlers are
    back and each signal noted is delivered to them (`signal.raise_signal`: Ctrl-C's `KeyboardInterrupt` is raised
    then, where the caller's cleanup is in place; a default SIGTERM ends the process as it would have).

    The signal mask is never changed: a mask holds a signal back from the calling thread only, and the kernel gives a
    process-directed signal to any other thread alive, after which Python raises it in the main thread anyway. Python
    runs handlers in the main thread only, so elsewhere nothing can interrupt the block and it runs as it is. A signal
    that is ignored, or whose handler was set outside Python, is left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    hold = _Hold()
    try:
        for name in HELD_SIGNALS:
            number = getattr(signal, name, None)
            handler = signal.getsignal(number) if number is not None else None
            if handler is None or handler == signal.SIG_IGN:
                continue
            hold.previous[number] = handler  # before replacing it: the closing must find every handler it replaced
            signal.signal(number, hold.note)
        yield
    finally:
        hold.close()
