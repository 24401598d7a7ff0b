"""The suite's check of itself (`tests.suite_checks`) fails a test that leaves a thread or a signal changed, by name,
and passes one that puts everything back."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])

LEAKY = """
import signal, threading
import tests.suite_checks
tests.suite_checks.THREAD_GRACE_S = 0.2
# Python's own SIGINT handler, whatever this run was started with (a background job starts with SIGINT ignored).
signal.signal(signal.SIGINT, signal.default_int_handler)
stop = threading.Event()

def test_leaves_a_thread():
    threading.Thread(target=stop.wait, args=(10,), name="left-behind").start()

def test_blocks_sigterm():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})

def test_ignores_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)

def test_replaces_the_sigterm_handler():
    signal.signal(signal.SIGTERM, lambda *a: None)

def test_after_them_everything_is_back():
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    stop.set()

def test_puts_everything_back():
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, previous)
    worker = threading.Thread(target=lambda: None)
    worker.start()
    worker.join()
"""


def test_a_test_that_leaves_a_thread_or_a_signal_changed_fails_by_name(pytester, monkeypatch):
    pytester.makepyfile(test_leaky=LEAKY)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    result = pytester.runpytest_subprocess("-p", "tests.suite_checks", "-p", "no:cacheprovider", "-o", "addopts=", "-q")
    result.assert_outcomes(passed=6, errors=4)
    text = result.stdout.str()
    assert "test_leaky.py::test_leaves_a_thread left thread 'left-behind' still running" in text
    assert "test_leaky.py::test_blocks_sigterm left signals blocked: ['SIGTERM']" in text
    assert "test_leaky.py::test_ignores_sigint left signals ignored: ['SIGINT']" in text
    assert "test_leaky.py::test_replaces_the_sigterm_handler left SIGTERM handler changed" in text
    assert "test_puts_everything_back left" not in text and "test_after_them_everything_is_back left" not in text
