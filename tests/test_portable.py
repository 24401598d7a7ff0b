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


@pytest.mark.parametrize("system, machine, backend, tag", [
    ("Linux", "x86_64", "cpu", "linux-x86_64"),
    ("Linux", "aarch64", "cpu", "linux-arm64"),
    ("Darwin", "arm64", "cpu", "darwin-arm64"),
    ("Windows", "AMD64", "cpu", "windows-amd64"),
    ("Windows", "ARM64", None, "windows-arm64"),
    ("Linux", "x86_64", "gpu", "linux-x86_64-cuda"),
])
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
    run = RunSession(Target(sys.executable, "linux-x86_64", "0.4.38", "tests.fixture_cases"),
                     launcher="fork").run([cell])
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
