"""The interrupt hold (`conformance.interrupts.interrupts_held`): signals noted, then delivered to the handlers that
were there before; the mask never changed; a no-op outside the main thread."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from conformance.interrupts import interrupt_lost, interrupted_status, interrupts_held, sigterm_interrupts, terminated

posix = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="a POSIX signal mask")


@pytest.fixture
def sigint_raises():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a runner may have replaced it
    yield
    signal.signal(signal.SIGINT, previous)


@posix
def test_a_signal_in_the_hold_is_raised_when_it_closes_and_nothing_is_left_changed(sigint_raises):
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    handlers = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            signal.raise_signal(signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # twice: delivered once
            reached.append("end of the block")
    assert reached == ["end of the block"]
    assert {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)} == handlers
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask


def test_sigterm_held_reaches_the_commands_handler_and_says_143(sigint_raises):
    with sigterm_interrupts():
        with pytest.raises(KeyboardInterrupt):
            with interrupts_held():
                signal.raise_signal(signal.SIGTERM)
        assert terminated.is_set()


def test_an_ignored_signal_stays_ignored(sigint_raises):
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with interrupts_held():
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
            signal.raise_signal(signal.SIGTERM)
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_error_in_the_block_puts_the_handlers_back(sigint_raises):
    with pytest.raises(ValueError):
        with interrupts_held():
            raise ValueError("disk full")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_outside_the_main_thread_the_hold_runs_the_block_as_it_is():
    seen = []

    def body() -> None:
        with interrupts_held():
            seen.append(signal.getsignal(signal.SIGINT))

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    assert seen == [signal.getsignal(signal.SIGINT)]


def signalled_by_another_thread_after(monkeypatch, module, number: int):
    """Replace `module.tempfile.mkstemp` by one that, once the file is made, has a thread alive before the call send
    `number` to the process, and waits until it is sent (issue 49's race, made certain); the thread to join."""
    import tempfile

    made = tempfile.mkstemp
    go, sent = threading.Event(), threading.Event()

    def send() -> None:
        if go.wait(timeout=60):
            os.kill(os.getpid(), number)
        sent.set()

    def made_then_signalled(*args, **kwargs):
        found = made(*args, **kwargs)
        go.set()
        sent.wait(timeout=60)
        return found

    sender = threading.Thread(target=send)
    sender.start()
    monkeypatch.setattr(module.tempfile, "mkstemp", made_then_signalled)
    return sender, go


@posix
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_an_interrupt_as_an_atomic_write_makes_its_temporary_file_leaves_none(
    monkeypatch, tmp_path, sigint_raises, signum
):
    from conformance import atomic

    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    sender, go = signalled_by_another_thread_after(monkeypatch, atomic, getattr(signal, signum))
    try:
        with sigterm_interrupts(), pytest.raises(KeyboardInterrupt):
            atomic.write_text_atomically(tmp_path / "out.json", "{}")
    finally:
        go.set()
        sender.join()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert list(tmp_path.iterdir()) == []


@posix
def test_an_interrupt_as_a_shared_file_is_unshared_leaves_no_copy(monkeypatch, tmp_path, sigint_raises):
    from conformance.envs import integrity

    target = tmp_path / "lib.so"
    target.write_bytes(b"x")
    sender, go = signalled_by_another_thread_after(monkeypatch, integrity, signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt):
            integrity._unshare(target)
    finally:
        go.set()
        sender.join()
    assert [p.name for p in tmp_path.iterdir()] == ["lib.so"]


def _swallowed(signum: int) -> None:
    """Deliver `signum` where Python drops the exception its handler raises (as in an at-fork handler)."""

    class Finalized:
        def __del__(self) -> None:
            signal.raise_signal(signum)

    Finalized()  # its __del__ runs at once; the KeyboardInterrupt raised there is printed and dropped


DROPPED = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the drop is the point


@DROPPED
@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_an_interrupt_dropped_where_python_ignores_exceptions_is_still_noted(sigint_raises, name, code):
    """A SIGTERM or Ctrl-C whose KeyboardInterrupt was dropped (seen in CI: in logging's at-fork handler) still
    makes the command end as interrupted, with its own status; one that ended as interrupted is not noted twice."""
    with sigterm_interrupts():
        assert not interrupt_lost(0)
        _swallowed(getattr(signal, name))
        assert interrupt_lost(0) and interrupt_lost(1) and interrupt_lost(2)
        assert not interrupt_lost(130) and not interrupt_lost(143)
        assert interrupted_status() == code
    with sigterm_interrupts():  # a new command starts with nothing noted
        assert not interrupt_lost(0)


def test_sigint_ignored_stays_ignored_in_a_long_command():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with sigterm_interrupts():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            signal.raise_signal(signal.SIGINT)
            assert not interrupt_lost(0)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


@DROPPED
def test_a_command_whose_interrupt_was_dropped_exits_as_interrupted(monkeypatch, capsys, sigint_raises):
    """The CLI's side: the command returned 0, but a SIGTERM came and was dropped: exit 143, said on stderr."""
    from conformance import cli

    def command(args) -> int:
        _swallowed(signal.SIGTERM)
        return 0

    monkeypatch.setitem(cli.COMMANDS, "diff", command)
    assert cli.main(["diff", "a.json", "b.json"]) == 143
    assert "interrupted" in capsys.readouterr().err
    monkeypatch.setitem(cli.COMMANDS, "diff", lambda args: 0)
    assert cli.main(["diff", "a.json", "b.json"]) == 0


def test_a_long_command_gives_back_python_s_ctrl_c_handler(sigint_raises):
    """The block replaces Python's own Ctrl-C handler (to note the interrupt) and puts it back on leaving, as it
    does SIGTERM's, also when the block ends by an interrupt."""
    sigterm = signal.getsignal(signal.SIGTERM)
    with sigterm_interrupts():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt), sigterm_interrupts():
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == sigterm
