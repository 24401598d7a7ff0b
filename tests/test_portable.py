"""What differs between Linux, macOS and Windows: interpreters, platform names, process groups, fork."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.child.envinfo import platform_tag
from conformance.engine.session import RunSession
from conformance.portable import fork_unavailable_reason, new_group_options, pid_alive, venv_python


@pytest.mark.parametrize(
    "system, machine, backend, tag",
    [
        ("Linux", "x86_64", "cpu", "linux-x86_64"),
        ("Linux", "aarch64", "cpu", "linux-arm64"),
        ("Darwin", "arm64", "cpu", "darwin-arm64"),
        ("Windows", "AMD64", "cpu", "windows-amd64"),
        ("Windows", "ARM64", None, "windows-arm64"),
        ("Linux", "x86_64", "gpu", "linux-x86_64-cuda"),
    ],
)
def test_platform_names_are_system_and_machine(system, machine, backend, tag):
    assert platform_tag(system, machine, backend) == tag


def test_a_gpu_backend_is_named_after_its_runtime():
    assert platform_tag("Linux", "x86_64", "gpu", "cuda 12080") == "linux-x86_64-cuda"
    assert platform_tag("Linux", "x86_64", "gpu", "rocm 60342") == "linux-x86_64-rocm"


def test_environment_interpreter_per_platform():
    assert venv_python("/envs/jax", windows=True) == Path("/envs/jax/Scripts/python.exe")
    assert venv_python("/envs/jax", windows=False) == Path("/envs/jax/bin/python")


def test_process_group_options_per_platform():
    assert new_group_options(windows=False) == {"start_new_session": True}
    assert set(new_group_options(windows=True)) == {"creationflags"}


def test_fork_is_used_only_where_it_exists_and_is_safe():
    assert fork_unavailable_reason("linux", has_fork=True) == ""
    assert "not available on win32" in fork_unavailable_reason("win32", has_fork=False)
    assert "macOS" in fork_unavailable_reason("darwin", has_fork=True)


def test_a_run_without_a_fork_server_says_so_in_its_header(monkeypatch):
    from conformance.engine import launch
    from conformance.engine.runner import Target
    from conformance.engine.selection import Cell
    from conformance.core.case import find_case

    monkeypatch.setattr(launch, "fork_unavailable_reason", lambda: "os.fork is not available on win32")
    cell = Cell(find_case("machinery.own_process", "tests.fixture_cases"), "")
    run = RunSession(Target(sys.executable, "linux-x86_64", "0.4.38", "tests.fixture_cases"), launcher="fork").run(
        [cell]
    )
    assert run.launcher == "spawn (fork unavailable)" and "win32" in run.launcher_note
    assert run.results[0].status.value in ("conforms", "differs")


def test_pid_alive_never_signals_and_sees_a_dead_process():
    assert pid_alive(os.getpid())
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    assert not pid_alive(done.pid)


def test_on_windows_a_tree_is_killed_with_taskkill(monkeypatch):
    from conformance import portable

    calls = []
    monkeypatch.setattr(portable, "WINDOWS", True)
    monkeypatch.setattr(portable, "run_child", lambda argv, **kwargs: calls.append(argv))
    portable.kill_tree(4321)
    portable.kill_pid(4322)
    assert calls == [["taskkill", "/F", "/T", "/PID", "4321"], ["taskkill", "/F", "/PID", "4322"]]


def test_marked_processes_are_found_on_linux():
    marker = "JAXCONF_PORTABLE_TEST=yes-" + str(os.getpid())
    name, value = marker.split("=", 1)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env={**os.environ, name: value})
    try:
        from conformance.portable import processes_with_variable

        if not Path("/proc").is_dir():
            pytest.skip("no /proc here")
        assert child.pid in processes_with_variable(marker)
    finally:
        child.kill()
        child.wait()


SIGNAL_STATUS = (
    "import re, sys; s = open('/proc/self/status').read(); "
    "print(re.search(r'SigBlk:\\s*(\\w+)', s)[1], re.search(r'SigIgn:\\s*(\\w+)', s)[1])"
)


def _masks_of_a_child_started(start) -> tuple[int, int]:
    """The blocked and ignored signal sets (as numbers) of a child that `start()` runs from a thread blocking
    SIGINT and SIGTERM while this process ignores SIGINT (a background job's state)."""
    import signal
    import threading

    found: list[str] = []

    def body() -> None:  # a thread of its own: the main thread's mask is never touched
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        found.append(start())

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = threading.Thread(target=body)
        worker.start()
        worker.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    blocked, ignored = found[0].split()
    return int(blocked, 16), int(ignored, 16)


def _without_pythons_own(ignored: int) -> int:
    """The ignored set less SIGPIPE and SIGXFSZ, which a Python interpreter ignores itself at start-up."""
    import signal

    return ignored & ~(1 << (signal.SIGPIPE - 1)) & ~(1 << (signal.SIGXFSZ - 1))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/status")
@pytest.mark.parametrize("way", ["run_child", "run_bounded", "pytest_process_options", "spawn launcher"])
def test_every_child_starts_with_an_empty_mask_and_interrupts_at_their_defaults(way, tmp_path):
    """Issue 49: a child inherits the mask of the thread that starts it and the ignored dispositions of its
    parent; one started by a process whose SIGTERM is blocked never gets the SIGTERM that should stop it."""
    import signal

    from conformance.engine.launch import SpawnLauncher
    from conformance.engine.matrix import pytest_process_options
    from conformance.portable import run_bounded

    argv = [sys.executable, "-c", SIGNAL_STATUS]

    def start() -> str:
        if way == "run_child":
            from conformance.portable import run_child

            return run_child(argv, capture_output=True, text=True, timeout=60).stdout
        if way == "run_bounded":
            return run_bounded(argv, timeout=60).output
        if way == "pytest_process_options":
            return subprocess.run(argv, capture_output=True, text=True, timeout=60, **pytest_process_options()).stdout
        from conformance.engine.launch import CellCommand  # the way a cell is spawned

        command = CellCommand(
            argv=tuple(argv),
            env=dict(os.environ),
            workdir=str(tmp_path),
            timeout_s=60,
            python=sys.executable,
            case_id="x",
            param="",
            out_path=str(tmp_path / "out.json"),
            package="tests.fixture_cases",
        )
        SpawnLauncher()(command)
        return (tmp_path / "stdout.txt").read_text()

    blocked, ignored = _masks_of_a_child_started(start)
    assert blocked == 0, f"{way}: the child starts with signals blocked ({blocked:#x})"
    assert _without_pythons_own(ignored) & (1 << (signal.SIGINT - 1) | 1 << (signal.SIGTERM - 1)) == 0, (
        f"{way}: the child starts with SIGINT or SIGTERM ignored ({ignored:#x})"
    )


def test_a_child_needs_no_reset_when_nothing_is_blocked_or_ignored(monkeypatch):
    import signal

    from conformance import portable

    monkeypatch.setattr(portable, "_signals_to_reset", lambda: (False, []))
    assert portable.child_process_options() == {"restore_signals": True}
    assert portable.child_process_options(new_group=True) == {"restore_signals": True, "start_new_session": True}
    assert "preexec_fn" in portable.child_process_options(parent_death_signal=signal.SIGTERM, platform="linux")
    assert "preexec_fn" not in portable.child_process_options(parent_death_signal=signal.SIGTERM, platform="darwin")
    assert portable.child_process_options(new_group=True, windows=True) == portable.new_group_options(windows=True)
    monkeypatch.setattr(portable, "_signals_to_reset", lambda: (True, []))
    assert "preexec_fn" in portable.child_process_options()


# Where `subprocess` may be called directly, and why: everywhere else a child is started by `start_child` (or
# `run_child`, `run_bounded`), whose fork is safe from an interrupt.
DIRECT_SUBPROCESS_CALLS = {
    "conformance/portable.py": "start_child itself",
    "conformance/chapter/supervisor.py": "the supervisor ignores SIGINT and SIGTERM, so no handler runs in its fork",
}


def test_every_child_the_package_starts_goes_through_child_process_options():
    """A new `subprocess.run` or `Popen` that forgets the options would start a child with whatever mask its
    thread has (issue 49): each `start_child` or `subprocess` call must pass `**child_process_options(...)` (or
    `**pytest_process_options()`), or be `run_child`. And a `subprocess` call outside `DIRECT_SUBPROCESS_CALLS`
    would fork where an interrupt can be lost in an at-fork handler (`start_child`)."""
    import ast

    root = Path(__file__).resolve().parents[1] / "conformance"
    forgotten, direct = [], []
    for path in sorted(root.rglob("*.py")):
        where = str(path.relative_to(root.parent))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            is_subprocess = (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id == "subprocess"
                and func.attr in ("run", "Popen", "call", "check_call", "check_output")
            )
            is_start = isinstance(func, ast.Name) and func.id == "start_child"
            if is_subprocess and where not in DIRECT_SUBPROCESS_CALLS:
                direct.append(f"{where}:{node.lineno}")
            if not (is_subprocess or is_start) or where == "conformance/portable.py":
                continue
            spread = [k.value for k in node.keywords if k.arg is None]
            if not any(
                isinstance(v, ast.Call)
                and getattr(v.func, "id", "") in ("child_process_options", "pytest_process_options")
                for v in spread
            ):
                forgotten.append(f"{where}:{node.lineno}")
    assert forgotten == []
    assert direct == []


# A fork interrupted: a script that sends itself SIGINT from one of Python's at-fork handlers (where a real Ctrl-C
# once landed, seen in CI) and starts a child through `start_child` with a `preexec_fn`, as every child that arms a
# death signal is started. Python runs at-fork handlers only for a fork with a `preexec_fn`.
_FORK_INTERRUPTED = r"""
import json, logging, os, signal, subprocess, sys
from conformance.portable import start_child

signal.signal(signal.SIGINT, signal.default_int_handler)
fired = []

def interrupt_once():
    if not fired:
        fired.append(1)
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(2000):  # bytecodes: Python runs a pending handler here, inside the fork
            pass

os.register_at_fork(**{sys.argv[1]: interrupt_once})


class Recording(subprocess.Popen):
    made = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        Recording.made.append(self)


subprocess.Popen = Recording
seen = "none"
try:
    start_child([sys.executable, "-c", "import time; time.sleep(60)"], preexec_fn=lambda: None)
except KeyboardInterrupt:
    seen = "KeyboardInterrupt"
logging.getLogger("after").warning("logged after the fork")  # hangs if logging's lock was left held
child = Recording.made[0]
print(json.dumps({"seen": seen, "child_returncode": child.returncode}))
"""


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="Python's at-fork handlers")
@pytest.mark.parametrize("when", ["before", "after_in_parent"])
def test_an_interrupt_during_a_fork_reaches_the_caller_and_the_child_is_killed(when):
    """A Ctrl-C that lands in an at-fork handler (logging's among them) is raised once the child is started, never
    printed as "Exception ignored" and lost, never leaving logging's lock held; the child the caller never got is
    killed and reaped."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", _FORK_INTERRUPTED, when],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr and "logged after the fork" in done.stderr
    outcome = json.loads(done.stdout)
    assert outcome == {"seen": "KeyboardInterrupt", "child_returncode": -9}


@pytest.fixture(params=["plain", "held"])
def fork_way(request, monkeypatch):
    """`run_child` the usual way, and the way it goes when a `preexec_fn` is needed (its fork held)."""
    from conformance import portable

    if request.param == "held":
        plain = portable.child_process_options
        monkeypatch.setattr(portable, "child_process_options", lambda **kw: {**plain(**kw), "preexec_fn": lambda: None})
    return request.param


def test_run_child_returns_what_subprocess_run_would(fork_way):
    from conformance.portable import run_child

    done = run_child(["cat"], input="fed\n", capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "fed\n", "")
    assert done.args == ["cat"]
    failed = run_child(["sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, text=True)
    assert (failed.returncode, failed.stdout, failed.stderr) == (3, "out\n", "err\n")
    with pytest.raises(subprocess.CalledProcessError) as raised:
        run_child(["sh", "-c", "echo out; exit 4"], capture_output=True, text=True, check=True)
    assert (raised.value.returncode, raised.value.stdout) == (4, "out\n")
    assert run_child(["true"], check=True).returncode == 0


def test_run_child_past_its_timeout_kills_the_child_and_raises(fork_way, tmp_path):
    from conformance.portable import run_child

    pid_file = tmp_path / "pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run_child(["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"], capture_output=True, timeout=10)
    assert pid_file.read_text().strip().isdigit()
    assert not pid_alive(int(pid_file.read_text()))


def test_an_interrupt_as_a_plain_child_starts_reaches_the_caller_and_the_child_is_killed(monkeypatch):
    """Without a `preexec_fn` too (the usual child): a Ctrl-C that lands after the fork, before `Popen` returns
    (while it waits for the exec), used to unwind out of `Popen` with the child left running and no one holding
    it (a whole pytest run, in a session of its own). Now it is raised once the child is started, and the child is
    killed and reaped."""
    import signal

    from conformance.portable import start_child

    made = []

    class InterruptedAtExec(subprocess.Popen):
        def _execute_child(self, *args, **kwargs):
            super()._execute_child(*args, **kwargs)
            made.append(self)
            signal.raise_signal(signal.SIGINT)  # where a real one lands: Popen waiting for the exec to report

    monkeypatch.setattr(subprocess, "Popen", InterruptedAtExec)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            start_child([sys.executable, "-c", "import time; time.sleep(60)"])
    finally:
        signal.signal(signal.SIGINT, previous)
        for child in made:
            if child.poll() is None:  # the fault: kill it here so that the suite goes on
                child.kill()
                child.wait()
                child.returncode = None
    (child,) = made
    assert child.returncode == -9


def test_run_child_past_its_timeout_does_not_wait_for_a_grandchild_holding_its_pipes(fork_way, tmp_path):
    """As `subprocess.run`: at the timeout the child is killed and reaped, its pipes not read to their end, which a
    grandchild still holds open: the call raises before the grandchild ends (it writes `end` as it does)."""
    from conformance.portable import run_child

    end = tmp_path / "end"
    script = f"sleep 30 && echo done > {end} & exec sleep 60"
    with pytest.raises(subprocess.TimeoutExpired):
        run_child(["sh", "-c", script], capture_output=True, timeout=5)
    assert not end.exists()
