"""The runner and its plugin on a small folder suite, in this interpreter (pytest is installed here; no JAX needed):
the per-test bound, a test that kills pytest, the whole-run bound, a module that does not collect, and the rerun."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from conformance.downstream.lock import SuiteEnv
from conformance.downstream.manifest import read_suite
from conformance.downstream.runner import run_suite

TESTS = {
    "test_a.py": """
        import os, signal, time

        def test_passes():
            pass

        def test_sleeps_past_its_bound():
            time.sleep(30)

        def test_fails():
            assert 1 == 2

        def test_fails_once(tmp_path_factory):
            mark = os.path.join(os.environ["MARKS"], "once")
            first = not os.path.exists(mark)
            open(mark, "w").close()
            assert not first
    """,
    "test_b.py": """
        import missing_module_of_nobody
    """,
    "test_c.py": """
        import os, signal

        def test_kills_pytest():
            os.kill(os.getpid(), signal.SIGKILL)

        def test_never_reached():
            pass
    """,
}


def _folder(root: Path, files: dict) -> Path:
    folder = root / "suite"
    (folder / "tests").mkdir(parents=True)
    for name, text in files.items():
        (folder / "tests" / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder


def _env() -> SuiteEnv:
    return SuiteEnv("0", Path(sys.prefix), "3", "lock", False)


def test_the_runner_gives_each_node_its_status(tmp_path, monkeypatch):
    monkeypatch.setenv("MARKS", str(tmp_path))
    suite = read_suite(str(_folder(tmp_path, TESTS)))
    suite = replace(suite, manifest=replace(suite.manifest, test_timeout_s=2.0))
    ran = run_suite(suite, _env())
    status = {node: o.status for node, o in ran.outcomes.items()}
    assert status["tests/test_a.py::test_passes"] == "passed"
    assert status["tests/test_a.py::test_sleeps_past_its_bound"] == "timeout"
    assert status["tests/test_a.py::test_fails"] == "failed"
    assert ran.outcomes["tests/test_a.py::test_fails"].rerun == "failed"
    assert status["tests/test_a.py::test_fails_once"] == "flaky"
    assert status["tests/test_b.py"] == "collection_error"
    assert ran.outcomes["tests/test_b.py"].exception["type"] in ("ModuleNotFoundError", "ImportError")
    assert status["tests/test_c.py::test_kills_pytest"] == "crash"
    assert ran.outcomes["tests/test_c.py::test_kills_pytest"].reached
    assert status["tests/test_c.py::test_never_reached"] == "crash"
    assert not ran.outcomes["tests/test_c.py::test_never_reached"].reached


def test_the_whole_run_bound_ends_pytest_and_the_running_test_is_a_timeout(tmp_path):
    hang = {
        "test_h.py": """
        import signal, time

        def test_hangs_with_the_alarm_blocked():
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(120)

        def test_after():
            pass
    """
    }
    suite = read_suite(str(_folder(tmp_path, hang)))
    suite = replace(suite, manifest=replace(suite.manifest, test_timeout_s=1.0, run_timeout_s=20.0))
    ran = run_suite(suite, _env())
    assert ran.outcomes["tests/test_h.py::test_hangs_with_the_alarm_blocked"].status == "timeout"
    assert ran.outcomes["tests/test_h.py::test_after"].status == "crash"
    assert ran.wall_s < 110  # ended by the bound, long before the test's own sleep
