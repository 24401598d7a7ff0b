"""Both launchers, through real processes: bounded output, time limits that hold, the fork server's contract."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conformance.core.case import find_case
from conformance.core.status import Status
from conformance.engine.launch import ForkLauncher
from conformance.engine.runner import Target, child_environment, run_cell
from conformance.engine.selection import Cell
from conformance.engine.session import RunSession

FIXTURES = "tests.fixture_cases"


def target() -> Target:
    return Target(sys.executable, "linux-x86_64", "0.4.38", FIXTURES)


def fixture(name: str):
    return find_case(f"machinery.{name}", FIXTURES)


def leftover_sleepers(seconds: int = 606) -> list[str]:
    """Pids of processes sleeping for the fixture's own duration (brackets keep pgrep from matching itself)."""
    pattern = f"time[.]sleep[(]{seconds}[)]"
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


def test_leftover_check_can_fail():
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(606)"])
    try:
        assert leftover_sleepers(606)
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_runaway_printer_is_cut_at_its_limit_with_a_bounded_tail(launcher):
    session = RunSession(target(), launcher=launcher)
    started = time.monotonic()
    [result] = session.run([Cell(fixture("printing_forever"), "")]).results
    assert result.status is Status.TIMEOUT
    assert time.monotonic() - started < 30
    assert len(result.stdout_tail) < 5000 and result.stdout_tail.startswith("[… truncated]")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 1_000_000  # KiB: far below a gigabyte


@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_limit_holds_when_a_grandchild_in_its_own_session_keeps_the_output_open(launcher):
    session = RunSession(target(), launcher=launcher)
    started = time.monotonic()
    [result] = session.run([Cell(fixture("escaping_grandchild"), "")]).results
    assert result.status is Status.TIMEOUT
    assert time.monotonic() - started < 20
    time.sleep(0.2)
    assert leftover_sleepers(607) == []


def test_forked_child_is_a_session_leader_in_a_server_that_imported_the_cases():
    session = RunSession(target(), launcher="fork")
    [result] = session.run([Cell(fixture("own_process"), "")]).results
    assert result.status is Status.CONFORMS
    assert result.launcher == "fork"
    assert result.details["session_leader"] is True


def test_cells_with_environment_variables_are_spawned_even_under_fork():
    session = RunSession(target(), launcher="fork")
    result = session.run([Cell(fixture("echo"), "a"), Cell(fixture("own_process"), "")]).results
    assert [r.launcher for r in result] == ["spawn", "fork"]
    assert result[0].details["env"] == "set-by-case"


@pytest.mark.parametrize("name", ["segfaulting", "exiting", "raising", "unsupported", "not_json", "differing"])
def test_fork_and_spawn_give_the_same_status(name):
    statuses = {}
    for launcher in ("spawn", "fork"):
        [result] = RunSession(target(), launcher=launcher).run([Cell(fixture(name), "")]).results
        statuses[launcher] = (result.status, result.observation)
    assert statuses["spawn"] == statuses["fork"]


def test_fork_server_that_cannot_start_falls_back_to_spawning(tmp_path):
    fork = ForkLauncher(str(tmp_path / "no-python"), FIXTURES, child_environment(os.environ, {}), str(tmp_path))
    assert fork.server is None and fork.fallback_reason
    assert fork.launcher_for(fresh_interpreter=False) == "spawn"


def test_stored_results_with_the_same_key_are_reused():
    cell = Cell(fixture("own_process"), "")
    first = RunSession(target(), launcher="spawn", key_of=lambda case, param: "k1").run([cell])
    stored = {r.cell_id: r for r in first.results}
    again = RunSession(target(), launcher="spawn", key_of=lambda case, param: "k1", stored=stored).run([cell])
    assert (again.ran, again.reused) == (0, 1) and again.results[0].reused
    changed = RunSession(target(), launcher="spawn", key_of=lambda case, param: "k2", stored=stored).run([cell])
    assert (changed.ran, changed.reused) == (1, 0)
    forced = RunSession(target(), launcher="spawn", key_of=lambda case, param: "k1", stored=stored,
                        rerun=True).run([cell])
    assert forced.ran == 1


@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_sigterm_to_a_conformance_pytest_kills_every_child(launcher, tmp_path):
    env = {**os.environ, "PYTHONPATH": child_environment(os.environ, {})["PYTHONPATH"]}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--pyargs", "tests.fixture_cases", "--conformance-cases", FIXTURES,
         "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-k", "sleeping", "--jax-launch", launcher],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not leftover_sleepers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftover_sleepers(), "the cell never started"
    proc.terminate()
    assert proc.wait(timeout=30) == -15
    time.sleep(0.3)
    assert leftover_sleepers() == []
    assert not [p for p in Path(tempfile.gettempdir()).glob(f"jaxconf-run-{proc.pid}-*")]
