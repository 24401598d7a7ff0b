"""The suite checks itself (a pytest plugin, loaded by `tests/conftest.py`): a test that leaves a non-daemon thread
running, a signal blocked or ignored that was not before, or SIGINT or SIGTERM handled otherwise, fails at its
teardown, named. A leak like that once made every later test's children deaf to SIGTERM (issue 49)."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import pytest


THREAD_GRACE_S = 5.0
WATCHED_HANDLERS = ("SIGINT", "SIGTERM")


def _signal_state() -> tuple[frozenset, frozenset, dict[str, Any]]:
    """The main thread's blocked signals, the signals ignored, and the handlers of SIGINT and SIGTERM."""
    blocked = (
        frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, [])) if hasattr(signal, "pthread_sigmask") else frozenset()
    )
    ignored = set()
    for number in signal.valid_signals():
        try:
            if signal.getsignal(number) == signal.SIG_IGN:
                ignored.add(signal.Signals(number).name)
        except (OSError, ValueError):
            continue
    handlers = {name: signal.getsignal(getattr(signal, name)) for name in WATCHED_HANDLERS if hasattr(signal, name)}
    return blocked, frozenset(ignored), handlers


def _threads_left(before: set[threading.Thread]) -> list[threading.Thread]:
    """Non-daemon threads started since `before` that are still running after a short grace."""
    deadline = time.monotonic() + THREAD_GRACE_S
    while True:
        left = [t for t in threading.enumerate() if t not in before and not t.daemon and t.is_alive()]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _put_back(blocked: frozenset, handlers: dict[str, Any]) -> None:
    """Restore the mask and the SIGINT/SIGTERM handlers, so that one test's leak does not fail the tests after it."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    for name, handler in handlers.items():
        if handler is not None:
            signal.signal(getattr(signal, name), handler)


@pytest.fixture(autouse=True)
def leaves_no_thread_or_signal_changed(request):
    """Fail (at teardown, naming the test) a test that leaves a non-daemon thread running, a signal blocked or
    ignored that was not before, or SIGINT or SIGTERM handled otherwise: a leak like that made later tests'
    children deaf to SIGTERM (issue 49). Fixtures of a wider scope are set up before this one, so their threads
    count as already there."""
    threads = set(threading.enumerate())
    blocked, ignored, handlers = _signal_state()
    yield
    problems = [f"thread {t.name!r} still running" for t in _threads_left(threads)]
    now_blocked, now_ignored, now_handlers = _signal_state()
    if now_blocked - blocked:
        problems.append(f"signals blocked: {sorted(signal.Signals(n).name for n in now_blocked - blocked)}")
    if now_ignored - ignored:
        problems.append(f"signals ignored: {sorted(now_ignored - ignored)}")
    problems += [
        f"{name} handler changed: {handlers.get(name)!r} -> {handler!r}"
        for name, handler in now_handlers.items()
        if handler != handlers.get(name)
    ]
    if problems:
        _put_back(blocked, handlers)
        pytest.fail(f"{request.node.nodeid} left {'; '.join(problems)}", pytrace=False)
