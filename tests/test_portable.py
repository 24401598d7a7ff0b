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
    monkeypatch.setattr(portable.subprocess, "run", lambda argv, **kwargs: calls.append(argv))
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


def test_every_child_the_package_starts_goes_through_child_process_options():
    """A new `subprocess.run` or `Popen` that forgets the options would start a child with whatever mask its
    thread has (issue 49): each must pass `**child_process_options(...)` (or `**pytest_process_options()`), or be
    `run_child`."""
    import ast

    root = Path(__file__).resolve().parents[1] / "conformance"
    forgotten = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "subprocess"
                and node.func.attr in ("run", "Popen", "call", "check_call", "check_output")
            ):
                continue
            spread = [k.value for k in node.keywords if k.arg is None]
            if not any(
                isinstance(v, ast.Call)
                and getattr(v.func, "id", "") in ("child_process_options", "pytest_process_options")
                for v in spread
            ):
                forgotten.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert forgotten == []
