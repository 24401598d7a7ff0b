"""The pytest plugin loaded into a downstream suite's own pytest run (`-p conformance.downstream.plugin`).

Runs inside the suite's environment: standard library and pytest only. It streams one JSON line per event to the
file named by `JAXCONF_DOWNSTREAM_OUT`, flushed as it goes, so a pytest that dies still leaves what it did:

- `{"event": "collected", "nodeids": [...]}` once collection is done (after deselection);
- `{"event": "collect_error", "nodeid": MODULE, "exception": {...}}` for each module that failed to collect;
- `{"event": "start", "nodeid": ...}` as a test starts (the one a dead pytest was running is the last start);
- `{"event": "test", "nodeid", "outcome", "phase", "duration", "exception", "warnings"}` as a test ends, where
  `outcome` is passed, failed, error (setup or teardown), skipped, xfail or timeout;
- `{"event": "finished"}` at the end of the session.

A selection of node ids is read from the file `JAXCONF_DOWNSTREAM_SELECT` names (one a line); the tests not in it
are deselected.

pytest-json-report writes its report when the session finishes, so a pytest killed or crashed mid-run leaves
nothing; streaming is what lets a dead run name the tests it never reached. The per-test bound
(`JAXCONF_DOWNSTREAM_TEST_TIMEOUT`, seconds) is a SIGALRM timer around each test's setup, call and teardown that
raises `DownstreamTimeout` (a BaseException, so a test's `except Exception` does not swallow it).
"""

from __future__ import annotations

import json
import os
import signal

import pytest

MESSAGE_CHARS = 2000
FRAMES = 40


class DownstreamTimeout(BaseException):
    """Raised in a test that ran past the per-test bound."""


def _write(event: dict) -> None:
    path = os.environ.get("JAXCONF_DOWNSTREAM_OUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(event, default=str) + "\n")
        out.flush()


def _exception(excinfo) -> dict:
    """The exception's class, message (bounded) and frames (path, line, function), outermost first."""
    frames = []
    for entry in list(excinfo.traceback)[-FRAMES:]:
        try:
            frames.append([str(entry.path), entry.lineno + 1, entry.name])
        except Exception:  # a frame without a file (a C extension's): skipped
            continue
    value = excinfo.value
    try:
        message = str(value)
    except Exception:
        message = "<unprintable>"
    return {"type": type(value).__name__, "message": message[:MESSAGE_CHARS], "frames": frames}


_STATE: dict = {}


def pytest_collection_modifyitems(session, config, items) -> None:
    # A selection (a budget's subset, the rerun of failures) is given as a file of node ids, not as arguments: pytest
    # stops the whole session at a node id whose module no longer collects, and it runs the files instead.
    path = os.environ.get("JAXCONF_DOWNSTREAM_SELECT")
    if not path:
        return
    with open(path, encoding="utf-8") as given:
        wanted = set(given.read().splitlines())
    kept = [item for item in items if item.nodeid in wanted]
    dropped = [item for item in items if item.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


def pytest_collection_finish(session) -> None:
    _write({"event": "collected", "nodeids": [item.nodeid for item in session.items]})


def pytest_collectreport(report) -> None:
    if report.failed:
        longrepr = str(report.longrepr)
        exc = _STATE.pop("collect_exc", None) or {
            "type": "CollectionError",
            "message": longrepr[-MESSAGE_CHARS:],
            "frames": [],
        }
        _write({"event": "collect_error", "nodeid": report.nodeid, "exception": exc})


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.failed and getattr(report, "longrepr", None) is not None:
        try:  # the module's import error as a class and message, when pytest kept it
            excinfo = getattr(report.longrepr, "reprcrash", None)
            text = str(report.longrepr)
            last = [line for line in text.splitlines() if line.startswith("E   ")]
            kind, _, message = (last[-1][4:] if last else text.splitlines()[-1]).partition(": ")
            frames = (
                [[str(excinfo.path), excinfo.lineno, ""]]
                if excinfo is not None
                else [[str(collector.path), 1, "<module>"]]
            )
            _STATE["collect_exc"] = {
                "type": kind.strip().rsplit(".", 1)[-1][:200],
                "message": message[:MESSAGE_CHARS],
                "frames": frames,
            }
        except Exception:
            pass


def pytest_runtest_logstart(nodeid, location) -> None:
    _write({"event": "start", "nodeid": nodeid})
    _STATE["test"] = {
        "nodeid": nodeid,
        "outcome": "passed",
        "phase": "call",
        "duration": 0.0,
        "exception": None,
        "warnings": [],
    }


def _on_alarm(signum, frame):
    raise DownstreamTimeout(f"the test ran past its bound of {os.environ.get('JAXCONF_DOWNSTREAM_TEST_TIMEOUT')} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    bound = float(os.environ.get("JAXCONF_DOWNSTREAM_TEST_TIMEOUT") or 0)
    if bound > 0 and hasattr(signal, "setitimer"):
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, bound)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    else:
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    test = _STATE.get("test")
    if test is None:
        return
    test["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
    if call.excinfo is not None and test["exception"] is None and not report.skipped:
        test["exception"] = _exception(call.excinfo)
        if call.excinfo.errisinstance(DownstreamTimeout):
            test["outcome"], test["phase"] = "timeout", call.when
            return
    if test["outcome"] in ("failed", "error", "timeout"):
        return
    if hasattr(report, "wasxfail"):
        test["outcome"] = "xfail" if report.skipped else "failed"
    elif report.skipped and test["outcome"] == "passed":
        test["outcome"], test["phase"] = "skipped", call.when
        test["message"] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
    elif report.failed:
        test["outcome"] = "failed" if call.when == "call" else "error"
        test["phase"] = call.when


def pytest_warning_recorded(warning_message, when, nodeid, location) -> None:
    test = _STATE.get("test")
    if test is None or not issubclass(warning_message.category, (DeprecationWarning, FutureWarning)):
        return
    if len(test["warnings"]) < 20:
        test["warnings"].append(
            {
                "category": warning_message.category.__name__,
                "message": str(warning_message.message)[:500],
                "filename": str(warning_message.filename),
                "lineno": warning_message.lineno,
            }
        )


def pytest_runtest_logfinish(nodeid, location) -> None:
    test = _STATE.pop("test", None)
    if test is not None:
        test["duration"] = round(test["duration"], 4)
        _write({"event": "test", **test})


def pytest_sessionfinish(session, exitstatus) -> None:
    _write({"event": "finished", "exitstatus": int(exitstatus)})
