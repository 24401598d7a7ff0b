"""The perf child in real processes (issue 57): a workload that hangs, exits, segfaults, plants a NaN, forges a
samples file or changes JAX's configuration, the environment or the working folder costs only itself; the child
dies with the process that started it. JAX is a small fake package (`jax/__init__.py` with the few calls the child
makes), put on the path of a wrapper interpreter, so these run in seconds without a release's environment; the
same workloads on a real release are checked by hand (docs/performance.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conformance.core.workload import Workload
from conformance.perf import childrun
from conformance.perf.childrun import workload_outcome
from conformance.perf.session import PerfRequest, Side, child_sampler
from conformance.portable import descendants, pid_alive
from conformance.tempfolders import remove_orphaned_folders

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork, signals and /proc: Linux")

FAKE_JAX = '''
"""A fake jax: what the perf child calls, and a configuration a workload can change."""
__version__ = "0.0.0"

class _Config:
    def __init__(self):
        self.values = {"jax_enable_x64": False}
    def update(self, name, value):
        self.values[name] = value

config = _Config()

def clear_caches():
    pass

def block_until_ready(x):
    return x
'''
FAKE_MONITORING = """
def register_event_duration_secs_listener(listener):
    pass
"""

WORKLOADS = """
import os
from conformance.core.case import Section

SECTION = Section("§H", "Hostile")


def leaked():
    import jax
    return jax.config.values["jax_enable_x64"] or "LEAKED" in os.environ or os.getcwd() == "/"


@SECTION.workload(rows=["perf.h"], claim="A normal one.", jit=False)
def normal():
    return (lambda: 1), ()


@SECTION.workload(rows=["perf.h"], claim="Sleeps past its bound.", jit=False, timeout_s=1)
def hang():
    import time
    time.sleep(600)


@SECTION.workload(rows=["perf.h"], claim="Calls os._exit.", jit=False)
def exits():
    os._exit(3)


@SECTION.workload(rows=["perf.h"], claim="Segfaults.", jit=False)
def segv():
    import ctypes
    ctypes.string_at(0)


@SECTION.workload(rows=["perf.h"], claim="Plants a NaN in the clock.", jit=False)
def nan():
    import time
    time.perf_counter = lambda: float("nan")
    return (lambda: 1), ()


@SECTION.workload(rows=["perf.h"], claim="Forges a samples file for another workload.", jit=False)
def forger():
    import json
    forged = {"metrics": {"run_s": 999.0, "compiles": 7}}
    for name in ("samples.json", "out.json"):
        with open(name, "w") as out:
            json.dump({"workloads": {"perfhostile/wl.normal": forged, "perfhostile/wl.z_after": forged}}, out)
    os._exit(0)


@SECTION.workload(rows=["perf.h"], claim="Changes the configuration, environment and folder.", jit=False)
def x64():
    import jax
    jax.config.update("jax_enable_x64", True)
    os.environ["LEAKED"] = "1"
    os.chdir("/")
    return (lambda: 1), ()


@SECTION.workload(rows=["perf.h"], claim="Runs after the one that changed them.", jit=False)
def z_after():
    assert not leaked(), "the configuration, environment or folder of a workload before it leaked"
    return (lambda: 1), ()
"""
ORDER = ("exits", "hang", "forger", "nan", "normal", "segv", "x64", "z_after")


@pytest.fixture
def hostile(tmp_path):
    """A wrapper interpreter that sees the fake jax, and a case folder of hostile workloads."""
    fake = tmp_path / "fake"
    (fake / "jax").mkdir(parents=True)
    (fake / "jax" / "__init__.py").write_text(FAKE_JAX)
    (fake / "jax" / "monitoring.py").write_text(FAKE_MONITORING)
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="$PYTHONPATH:{fake}" exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    folder = tmp_path / "perfhostile"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "wl.py").write_text(textwrap.dedent(WORKLOADS))
    workloads = tuple(
        Workload(
            f"perfhostile/wl.{name}",
            "§H",
            "Hostile",
            "c",
            ("perf.h",),
            lambda: None,
            timeout_s=1.0 if name == "hang" else 60.0,
        )
        for name in ORDER
    )
    side = Side("fake", str(python), "0.0.0", "linux-x86_64", "env")
    request = PerfRequest((side,), workloads, "conformance.cases", case_folders=(str(folder),), min_time=0.01)
    return side, request


@pytest.mark.parametrize("forking", [True, False], ids=["forked", "a-child-per-workload"])
def test_each_hostile_workload_costs_only_itself_and_the_others_are_measured(hostile, forking, monkeypatch):
    """Before: one process measured them all; `exits` lost every sample of the round ("failed (exit 3): no
    output"), a `timeout_s=1` workload sleeping was measured as normal, x64 leaked into the next workload. Where
    forking after importing jax is not safe (macOS), each workload gets a child of its own: the same statuses."""
    side, request = hostile
    if not forking:
        monkeypatch.setattr(childrun, "fork_unavailable_reason", lambda: "no fork here")
    found = child_sampler(request, "s1")(side, [w.id for w in request.workloads], 0)
    status = {wid.rpartition(".")[2]: (entry.get("status"), entry.get("error", "")) for wid, entry in found.items()}
    assert status["exits"][0] == "crash" and "exited with status 3" in status["exits"][1]
    assert status["hang"][0] == "timeout" and "timeout_s of 1 s" in status["hang"][1]
    assert status["segv"][0] == "crash" and "SIGSEGV" in status["segv"][1]
    assert status["nan"][0] == "error" and "nan, not a finite number" in status["nan"][1]
    assert status["forger"][0] == "crash"  # exited 0 without a record of its own
    for name in ("normal", "x64", "z_after"):
        entry = found[f"perfhostile/wl.{name}"]
        assert "error" not in entry, (name, entry.get("error"))
        assert entry["metrics"]["run_s"] != 999.0 and entry["metrics"]["compiles"] == 0  # not the forged samples
        assert entry["round"] == 0 and entry["session"] == "s1"


def test_a_record_is_taken_only_for_the_workload_asked_and_only_with_sound_numbers():
    good = b'{"workload": "m.a", "metrics": {"run_s": 0.5}, "host": {}}\n'
    assert workload_outcome("m.a", good, 0, False, 5)["metrics"] == {"run_s": 0.5}
    assert workload_outcome("m.b", good, 0, False, 5)["status"] == "error"  # a record naming another workload
    assert "names another workload" in workload_outcome("m.b", good, 0, False, 5)["error"]
    assert workload_outcome("m.a", good[:-1], 0, False, 5)["status"] == "crash"  # an unfinished record
    for bad in (b"NaN", b"-1", b"Infinity", b'"1"', b"true"):
        found = workload_outcome("m.a", b'{"workload": "m.a", "metrics": {"run_s": ' + bad + b"}}\n", 0, False, 5)
        assert found["status"] == "error" and "run_s" in found["error"], bad
    assert workload_outcome("m.a", b"", -signal.SIGALRM, False, 2)["status"] == "timeout"
    assert workload_outcome("m.a", b"", None, True, 2)["status"] == "timeout"
    assert "SIGSEGV" in workload_outcome("m.a", b"", -11, False, 2)["error"]
    assert "status 3" in workload_outcome("m.a", b"", 3, False, 2)["error"]
    raised = workload_outcome("m.a", b'{"workload": "m.a", "error": "ValueError: no\\u001b[2J"}\n', 1, False, 2)
    assert raised["status"] == "error" and "\x1b" not in raised["error"]


PARENT = """
import sys
from conformance.core.workload import Workload
from conformance.perf.session import PerfRequest, Side, child_sampler
side = Side("fake", sys.argv[1], "0.0.0", "linux-x86_64", "env")
workload = Workload("perfhostile/wl.hang", "§H", "Hostile", "c", ("perf.h",), lambda: None, timeout_s=600.0)
request = PerfRequest((side,), (workload,), "conformance.cases", case_folders=(sys.argv[2],))
child_sampler(request, "s")(side, [workload.id], 0)
"""


def test_the_child_and_its_workload_die_with_the_parent_and_its_folder_goes_at_the_next_start(hostile, tmp_path):
    """Before: after `kill -9` of the CLI the perf child went on with no bound and its folder stayed."""
    side, request = hostile
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, side.python, request.case_folders[0]], env=env)
    below: list[int] = []
    try:
        for _ in range(600):  # the child, and the workload's own process forked from it
            below = descendants(parent.pid)
            if len(below) >= 2 and any(temp.iterdir()):
                break
            time.sleep(0.1)
        assert below and any(temp.iterdir())
        parent.kill()
        parent.wait()
        for _ in range(300):
            if not any(pid_alive(pid) for pid in below):
                break
            time.sleep(0.1)
        assert [pid for pid in below if pid_alive(pid)] == []
    finally:
        for pid in [parent.pid, *below]:  # what a failure left running
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        parent.wait()
    (left,) = list(temp.iterdir())
    assert left.name.startswith(f"jaxconf-perf-{parent.pid}-")
    assert remove_orphaned_folders(temp) == [left] and not left.exists()


def test_a_stream_closed_under_its_reader_ends_the_reader_quietly():
    """SIGTERM ending `perf` while a child wrote closed the pipe under the reader thread, which printed a
    `ValueError: I/O operation on closed file` traceback on the terminal (seen ending a real two-release run)."""
    import threading

    from conformance.perf.childrun import _drain

    read_end, write_end = os.pipe()
    stream = os.fdopen(read_end, "rb")
    os.write(write_end, b"kept")
    os.close(write_end)
    stream.close()
    into = bytearray()
    problems: list[BaseException] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: problems.append(args.exc_value)
    try:
        reader = threading.Thread(target=_drain, args=(stream, into, 100, True))
        reader.start()
        reader.join(10)
    finally:
        threading.excepthook = previous
    assert problems == [] and not reader.is_alive()
