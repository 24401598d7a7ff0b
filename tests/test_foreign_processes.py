"""What a case module or probe does to processes and signals does not outlive or break its cell.

Issue 19 item 14: a case module that ignores SIGCHLD at import must not turn forked cells into
timeouts (the fork server restores signal dispositions after importing cases and before each fork).
Issue 19 item 15: a grandchild started in its own session with an empty environment (so neither
the group kill nor the marker variable finds it) is killed at its cell's end or timeout.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conformance.core.case import load_cases
from conformance.engine.folders import case_folder, import_folder
from conformance.engine.runner import Target
from conformance.engine.selection import all_cells
from conformance.engine.session import RunSession
from conformance.portable import become_subreaper, descendants
from tests.waiting import wait_until

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and prctl")

SIGNAL_MODULE = """
import signal

from conformance.core.case import Expect, Observation, Section

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # foreign code, run when the module is imported
SECTION = Section("Team §9", "Signals")


@SECTION.case(rows=["sig.plain"], claim="A plain probe conforms.", expect=Expect({"ok": True}), timeout_s=15)
def plain_after_sigchld_ignored():
    return Observation({"ok": True})
"""

REAPER_MODULE = """
import subprocess
import sys
import time

from conformance.core.case import Expect, Observation, Param, Section

SECTION = Section("Team §9", "Leftovers")
PIDS = {pids!r}


@SECTION.case(claim="A probe leaves a detached grandchild behind.", timeout_s=6, params=[
    Param("returns", rows=["left.returns"], expect=Expect({{"started": True}})),
    Param("hangs", rows=["left.hangs"], expect=Expect({{"started": True}})),
    Param("crashes", rows=["left.crashes"], expect=Expect({{"started": True}})),
])
def leaves_grandchild(mode):
    # sh puts a sleeper in the background and exits: the sleeper is an orphan, in its own session,
    # with an empty environment (no marker variable).
    line = f"{{sys.executable}} -c 'import time; time.sleep(300)' & echo $! > {{PIDS}}/{{mode}}-$$.pid"
    subprocess.Popen(["/bin/sh", "-c", line], env={{}}, start_new_session=True).wait()
    if mode == "hangs":
        time.sleep(60)
    if mode == "crashes":  # no cleanup of its own can run
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)
    return Observation({{"started": True}})
"""


def write_folder(parent: Path, name: str, source: str) -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "cases.py").write_text(textwrap.dedent(source))
    return folder


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for its reaper is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@linux_only
def test_a_case_module_that_ignores_sigchld_does_not_make_forked_cells_time_out(tmp_path, forget):
    """issue 19 item 14: the fork server puts SIGCHLD back before forking; the cell conforms, forked."""
    saved = signal.getsignal(signal.SIGCHLD)
    folder = case_folder(write_folder(tmp_path, "sigcases", SIGNAL_MODULE))
    forget.append("sigcases")
    try:
        cells = all_cells(load_cases(import_folder(folder)))
    finally:
        signal.signal(signal.SIGCHLD, saved)  # the import above ran the module here too
    target = Target(sys.executable, "linux-x86_64", "0.8.0", "sigcases", (str(folder.path),))
    started = time.monotonic()
    (found,) = RunSession(target, launcher="fork").run(cells).results
    assert (found.status.value, found.launcher) == ("conforms", "fork"), found.reason
    assert time.monotonic() - started < 60  # a forked cell that waited for SIGCHLD would hit its limit only


@linux_only
@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_a_detached_grandchild_is_killed_at_its_cells_end_and_at_its_timeout(tmp_path, forget, launcher):
    """issue 19 item 15: neither the cell that returns, nor the one that times out, nor the one whose process is
    killed before any cleanup of its own, leaves its grandchild."""
    pids = tmp_path / "pids"
    pids.mkdir()
    folder = case_folder(write_folder(tmp_path, f"reap{launcher}cases", REAPER_MODULE.format(pids=str(pids))))
    forget.append(folder.name)
    cells = all_cells(load_cases(import_folder(folder)))
    target = Target(sys.executable, "linux-x86_64", "0.8.0", folder.name, (str(folder.path),))
    results = RunSession(target, launcher=launcher, workers=3).run(cells).results
    assert [r.status.value for r in results] == ["conforms", "timeout", "crash"], [r.reason for r in results]
    started = sorted(pids.glob("*.pid"))
    assert [p.name.split("-")[0] for p in started] == ["crashes", "hangs", "returns"]
    grandchildren = [int(p.read_text()) for p in started]
    wait_until(lambda: not any(running(pid) for pid in grandchildren))  # each sleeps 300 s if not killed
    alive = [pid for pid in grandchildren if running(pid)]
    for pid in alive:  # do not leave them behind even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert alive == []


@linux_only
def test_descendants_walks_the_tree_and_spares_skipped_subtrees():
    """issue 19 item 15: the tree walk that finds re-parented orphans (the helper the kills rely on)."""
    import subprocess

    assert become_subreaper("darwin") is False
    outer = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        wait_until(lambda: len(descendants(outer.pid)) >= 2)
        below = descendants(outer.pid)
        assert len(below) == 2
        mine = descendants(os.getpid())
        assert outer.pid in mine and set(below) <= set(mine)
        assert outer.pid not in descendants(os.getpid(), skip={outer.pid})
    finally:
        for pid in descendants(outer.pid):
            os.kill(pid, signal.SIGKILL)
        outer.kill()
        outer.wait()
