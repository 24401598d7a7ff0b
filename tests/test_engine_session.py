"""engine/session: which stored results may stand for a cell instead of running it again; a worker building a cell's
environment while pytest's main thread changes os.environ (issue 57)."""

from __future__ import annotations

import sys

import pytest

from conformance.core.status import Status
from conformance.engine.session import reproduced_crash, still_answers
from conformance.results.schema import CellResult


def stored(status: Status, key: str = "k1", attempts: tuple[Status, ...] = ()) -> CellResult:
    return CellResult(
        case="numerics.x", param="p", rows=[], status=status, key=key, attempts=[{"status": a.value} for a in attempts]
    )


@pytest.mark.parametrize("status", [Status.CONFORMS, Status.DIFFERS, Status.UNSUPPORTED, Status.SKIPPED])
def test_a_result_with_the_same_key_answers_and_another_key_or_no_key_does_not(status):
    assert still_answers(stored(status), "k1")
    assert not still_answers(stored(status), "k2")
    assert not still_answers(stored(status, key=""), "")
    assert not still_answers(None, "k1")


@pytest.mark.parametrize("status", [Status.ERROR, Status.TIMEOUT, Status.FLAKY])
def test_a_broken_or_flaky_result_always_runs_again_whatever_its_attempts(status):
    assert not still_answers(stored(status, attempts=(status, status)), "k1")


def test_a_crash_every_attempt_reproduced_is_a_result_and_a_single_or_mixed_crash_runs_again():
    """A known crash (0.5.3-0.7.1 crash at interpreter exit) would otherwise make every scheduled CI run plan a job."""
    assert reproduced_crash(stored(Status.CRASH, attempts=(Status.CRASH, Status.CRASH)))
    assert still_answers(stored(Status.CRASH, attempts=(Status.CRASH, Status.CRASH)), "k1")
    assert not still_answers(stored(Status.CRASH, attempts=(Status.CRASH, Status.CRASH)), "k2")
    assert not still_answers(stored(Status.CRASH), "k1")  # not retried (--retries 0): may be the machine's
    assert not still_answers(stored(Status.CRASH, attempts=(Status.CRASH,)), "k1")
    assert not still_answers(stored(Status.CRASH, attempts=(Status.TIMEOUT, Status.CRASH)), "k1")
    assert not reproduced_crash(stored(Status.ERROR, attempts=(Status.CRASH, Status.CRASH)))


class _Launched(Exception):
    """Stops a cell at its launch: the test only needs the environment its worker built."""


def test_a_worker_building_a_cells_environment_survives_pytest_popping_its_variable(monkeypatch, tmp_path):
    """Issue 57, the harness race, replayed step by step: a run session's worker thread lists os.environ's names to
    build a cell's environment; pytest's main thread then ends an item (`_update_current_test_var(item, None)`, the
    pop of `PYTEST_CURRENT_TEST`); the worker reads the names it listed. Iterating os.environ item by item raised
    KeyError('PYTEST_CURRENT_TEST') in the worker, and the cell became an entry without metadata."""
    import os
    import threading
    from types import SimpleNamespace

    from _pytest.runner import _update_current_test_var

    from conformance.core.case import find_case
    from conformance.engine.runner import Target, run_cell_once
    from tests.conftest import FIXTURE_PACKAGE

    item = SimpleNamespace(nodeid="conformance/cases/setup.py::jax_logger_hierarchy[debug_log]")
    os.environ.pop("PYTEST_CURRENT_TEST", None)
    _update_current_test_var(item, "call")  # set last, as pytest sets it before each phase of an item
    assert next(iter(os.environ)) != "PYTEST_CURRENT_TEST"
    listed, popped = threading.Event(), threading.Event()
    decode = os.environ.decodevalue

    def paused(value):  # the worker's first value read: its names are listed, pytest's main thread moves on
        if threading.current_thread().name == "cell-worker" and not listed.is_set():
            listed.set()
            assert popped.wait(30)
        return decode(value)

    monkeypatch.setattr(os.environ, "decodevalue", paused)
    built, raised = [], []

    def launch(command, fresh):
        built.append(command.env)
        raise _Launched

    def worker():
        try:
            run_cell_once(
                find_case("machinery.conforming", FIXTURE_PACKAGE),
                "",
                Target(sys.executable, "linux-x86_64", "0.4.38", FIXTURE_PACKAGE),
                launch,
                "spawn",
                workroot=str(tmp_path),
            )
        except _Launched:
            pass
        except BaseException as exc:  # noqa: BLE001 - what the race raised is the finding
            raised.append(exc)

    thread = threading.Thread(target=worker, name="cell-worker")
    thread.start()
    assert listed.wait(30)
    _update_current_test_var(item, None)  # pytest's runner, at the end of the item's teardown
    popped.set()
    thread.join(30)
    assert raised == [] and len(built) == 1
    assert built[0]["PATH"] == os.environ["PATH"] and "PYTEST_CURRENT_TEST" not in built[0]
