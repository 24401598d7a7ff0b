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
from conformance.engine.launch import ForkLauncher, ForkServer, ForkServerError
from conformance.engine.matrix import PYTEST_PLUGIN
from conformance.engine.runner import Target, child_environment
from conformance.engine.selection import Cell
from conformance.engine.session import RunSession
from conformance.portable import descendants
from tests.waiting import wait_until

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
    # Cut at its time limit, or before it at the cell's file-size limit (issue 31: bounded on disk too), where
    # the write that passes 64 MiB fails in the probe.
    assert result.status is Status.TIMEOUT or (result.status is Status.ERROR and "File too large" in result.reason)
    assert time.monotonic() - started < 120  # the cell's limit is 4 s; a printer left alone never stops
    assert len(result.stdout_tail) < 5000 and result.stdout_tail.startswith("[… truncated]")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 1_000_000  # KiB: far below a gigabyte


@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_limit_holds_when_a_grandchild_in_its_own_session_keeps_the_output_open(launcher):
    session = RunSession(target(), launcher=launcher)
    started = time.monotonic()
    [result] = session.run([Cell(fixture("escaping_grandchild"), "")]).results
    assert result.status is Status.TIMEOUT
    assert time.monotonic() - started < 60  # the cell's limit is 3 s; the grandchild sleeps 607 s
    assert wait_until(lambda: leftover_sleepers(607) == []), "the grandchild outlived its cell"


def test_forked_child_is_a_session_leader_in_a_server_that_imported_the_cases():
    session = RunSession(target(), launcher="fork")
    [result] = session.run([Cell(fixture("own_process"), "")]).results
    assert result.status is Status.CONFORMS
    assert result.launcher == "fork"
    assert result.details["session_leader"] is True


def test_a_lone_cell_with_environment_variables_is_spawned_under_fork():
    session = RunSession(target(), launcher="fork")
    result = session.run([Cell(fixture("echo"), "a"), Cell(fixture("own_process"), "")]).results
    assert [r.launcher for r in result] == ["spawn", "fork"]
    assert result[0].details["env"] == "set-by-case"
    alone = RunSession(target(), launcher="fork")
    assert alone.run([Cell(fixture("echo"), "a")]).results[0].launcher == "spawn"
    assert alone._fork is None and alone.launcher_name_used() == "spawn (no cell to fork)"  # noqa: SLF001


def test_cells_sharing_variables_fork_from_a_server_that_imported_under_them():
    shared = [Cell(fixture("import_time_env"), "x"), Cell(fixture("import_time_env"), "y")]
    for launcher in ("fork", "spawn"):
        run = RunSession(target(), launcher=launcher, workers=2).run(shared + [Cell(fixture("own_process"), "")])
        assert [r.launcher for r in run.results] == [launcher] * 3
        assert [r.status for r in run.results] == [Status.CONFORMS] * 3, [r.observation for r in run.results]
        assert [r.details["now"] for r in run.results[:2]] == ["shared", "shared"]


def test_a_forked_child_reads_the_cells_stdin():
    for launcher in ("fork", "spawn"):
        [result] = RunSession(target(), launcher=launcher).run([Cell(fixture("reading_stdin"), "")]).results
        assert (result.launcher, result.status, result.observation) == (
            launcher,
            Status.CONFORMS,
            {"text": "first\r\nsecond \u00fc\n"},
        )


def leftover_servers() -> list[str]:
    """Pids of fork servers of the fixture package still running."""
    pattern = "conformance[.]child[.]forkserver --package tests[.]fixture_cases"
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


def test_a_server_still_importing_at_its_limit_is_stopped(tmp_path):
    env = {**child_environment(os.environ, {}), "FIXTURE_SLOW_IMPORT": "60"}
    server = ForkServer(sys.executable, FIXTURES, env, str(tmp_path))
    started = time.monotonic()
    with pytest.raises(ForkServerError, match="not ready after 1 s"):
        server.wait_ready(timeout_s=1)
    assert time.monotonic() - started < 45  # its import takes 60 s: stopped, not waited for
    assert server.proc.poll() is not None and leftover_servers() == []


def _mine(command: str, variable: str = "") -> list[int]:
    """This test's own descendants whose command line holds `command` (and whose environment holds `variable`)."""
    found = []
    for pid in descendants(os.getpid()):
        try:
            line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if variable else []
        except OSError:
            continue
        if command in line and (not variable or variable.encode() in env):
            found.append(pid)
    return found


def test_an_interrupt_while_a_variable_server_imports_leaves_nothing_running():
    cells = [Cell(fixture("slow_import"), "x"), Cell(fixture("slow_import"), "y"), Cell(fixture("sleeping"), "")]
    session = RunSession(target(), launcher="fork", workers=3)
    session.start(cells)
    # The plain server's cell sleeps and the variable server (a second server) is importing, for 60 s.
    assert wait_until(lambda: _mine("time.sleep(606)") and _mine("forkserver", "FIXTURE_SLOW_IMPORT=60")), (
        "the cells never started"
    )
    stopped = time.monotonic()
    session.close(interrupted=True)
    assert time.monotonic() - stopped < 45  # the variable server's import takes 60 s: stopped, not waited for
    # Every worker has ended: a worker that slipped through would have spawned its cell by then.
    assert wait_until(lambda: not any(t.is_alive() for t in session._pool._threads)), "a worker never ended"  # noqa: SLF001
    spawned = subprocess.run(
        ["pgrep", "-f", "conformance[.]child machinery[.]slow_import"], capture_output=True, text=True
    ).stdout.split()
    assert leftover_servers() == [] and leftover_sleepers(606) == [] and spawned == []


def test_a_variable_server_that_refuses_leaves_its_cells_to_be_spawned():
    cells = [
        Cell(fixture("unimportable_under_env"), "x"),
        Cell(fixture("unimportable_under_env"), "y"),
        Cell(fixture("own_process"), ""),
    ]
    outcomes = {}
    for launcher in ("fork", "spawn"):
        session = RunSession(target(), launcher=launcher)
        run = session.run(cells)
        outcomes[launcher] = [(r.status, r.launcher) for r in run.results]
        if launcher == "fork":
            assert "FIXTURE_BREAK_IMPORT=1" in session.launcher_name_used()
            assert "some cells spawned" in session.launcher_name_used()
    assert outcomes["fork"] == [(Status.ERROR, "spawn"), (Status.ERROR, "spawn"), (Status.CONFORMS, "fork")]
    assert [s for s, _ in outcomes["spawn"]] == [Status.ERROR, Status.ERROR, Status.CONFORMS]
    assert leftover_servers() == []


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
    assert again.launcher == "none (every cell reused)"
    changed = RunSession(target(), launcher="spawn", key_of=lambda case, param: "k2", stored=stored).run([cell])
    assert (changed.ran, changed.reused) == (1, 0)
    forced = RunSession(target(), launcher="spawn", key_of=lambda case, param: "k1", stored=stored, rerun=True).run(
        [cell]
    )
    assert forced.ran == 1


@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_sigterm_to_a_conformance_pytest_kills_every_child(launcher, tmp_path):
    env = {**os.environ, "PYTHONPATH": child_environment(os.environ, {})["PYTHONPATH"]}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "--pyargs",
            "tests.fixture_cases",
            "--conformance-cases",
            FIXTURES,
            *PYTEST_PLUGIN,
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-q",
            "-k",
            "sleeping",
            "--jax-launch",
            launcher,
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert wait_until(leftover_sleepers, timeout_s=120), "the cell never started"
    proc.terminate()
    assert proc.wait(timeout=60) == -15
    assert wait_until(lambda: leftover_sleepers() == []), "the cell's child outlived the run"
    assert not [p for p in Path(tempfile.gettempdir()).glob(f"jaxconf-run-{proc.pid}-*")]


def test_cells_start_longest_recorded_first_within_their_launcher_group():
    cells = [Cell(fixture(name), "") for name in ("conforming", "differing", "raising")]
    durations = {cells[0].id: 1.0, cells[1].id: 30.0}  # the third was never timed: it goes last
    session = RunSession(target(), launcher="spawn", durations=durations)
    assert [c.id for c in sorted(cells, key=session._start_order)] == [cells[1].id, cells[0].id, cells[2].id]
    assert [c.id for c in sorted(cells, key=RunSession(target(), launcher="spawn")._start_order)] == [
        c.id for c in cells
    ]  # without durations the declared order stands
