"""The pytest plugin: one test item per (case, param), each run in a fresh child of the target interpreter.

Registered through the `pytest11` entry point. It collects the modules of the case
package (`conformance/cases/*.py`, or `--conformance-cases PACKAGE`), so
`pytest conformance/cases --jax-python ENV/bin/python` runs the suite against ENV.
With pytest-json-report, every test entry's `metadata` is the cell's result and
the report's top level gains a `jax_conformance` object describing the run.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, load_module_cases
from conformance.engine.runner import child_environment, run_cell
from conformance.core.status import PYTEST_OUTCOME, Status
from conformance.core.verdict import CellResult

SCHEMA_VERSION = 1
ENVINFO_TIMEOUT_S = 300


def pytest_addoption(parser: pytest.Parser) -> None:
    """Options of the suite."""
    group = parser.getgroup("jax-conformance")
    group.addoption("--jax-python", default=None, metavar="PATH",
                    help="interpreter of the target environment (default: the current one)")
    group.addoption("--jax-workers", type=int, default=1, metavar="N",
                    help="cells run at once, each still in its own process (default 1)")
    group.addoption("--jax-retries", type=int, default=0, metavar="N",
                    help="rerun a cell that does not conform up to N times; disagreeing attempts are 'flaky'")
    group.addoption("--conformance-cases", default=DEFAULT_CASE_PACKAGE, metavar="PACKAGE",
                    help="the package whose modules declare the cases (default conformance.cases)")


def pytest_configure(config: pytest.Config) -> None:
    """Attach the run state to the config and register its hooks."""
    run = ConformanceRun(config)
    config.stash[_RUN] = run
    config.pluginmanager.register(run, "jax-conformance-run")


def _utc_now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def describe_target(python: str) -> dict[str, Any]:
    """Ask the target interpreter for its versions and platform (one child process)."""
    with tempfile.TemporaryDirectory(prefix="jaxconf-env-") as workdir:
        out = os.path.join(workdir, "env.json")
        try:
            done = subprocess.run([python, "-m", "conformance.child.envinfo", "--out", out],
                                  env=child_environment(os.environ, {}), capture_output=True, text=True,
                                  timeout=ENVINFO_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise pytest.UsageError(f"--jax-python {python}: cannot run it ({exc})") from None
        if not os.path.exists(out):
            raise pytest.UsageError(f"could not describe the environment of {python}: "
                                    f"{(done.stderr.strip().splitlines() or ['no output'])[-1]}")
        return json.loads(Path(out).read_text(encoding="utf-8"))


class ConformanceRun:
    """State of one pytest session: the target, its description, and the cells being run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.python = config.getoption("jax_python") or sys.executable
        self.package = config.getoption("conformance_cases")
        self.workers = max(1, config.getoption("jax_workers"))
        self.retries = max(0, config.getoption("jax_retries"))
        self.started_at = _utc_now()
        self.target: dict[str, Any] | None = None
        self.futures: dict[str, Future] = {}
        self.pool: ThreadPoolExecutor | None = None
        try:
            spec = importlib.util.find_spec(self.package)
        except ImportError:
            spec = None
        locations = spec.submodule_search_locations if spec else None
        if not locations:
            raise pytest.UsageError(f"--conformance-cases {self.package}: no such importable package")
        self.case_dirs = {Path(p).resolve() for p in (locations or [])}

    @property
    def platform(self) -> str:
        """The platform tag of the target environment."""
        return self.describe()["platform"]

    def describe(self) -> dict[str, Any]:
        """The target's description, asked for once."""
        if self.target is None:
            self.target = describe_target(self.python)
        return self.target

    def start(self, items: list[CaseItem]) -> None:
        """Start running the cells ahead of pytest when more than one worker is asked for."""
        if self.workers == 1 or not items:
            return
        platform = self.platform
        self.pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="jaxconf")
        for item in items:
            self.futures[item.nodeid] = self.pool.submit(
                run_cell, item.case, item.param, self.python, platform, package=self.package, retries=self.retries)

    def result_for(self, item: CaseItem) -> CellResult:
        """The result of an item's cell, run now or taken from the pool."""
        future = self.futures.pop(item.nodeid, None)
        if future is not None:
            return future.result()
        return run_cell(item.case, item.param, self.python, self.platform, package=self.package,
                        retries=self.retries)

    def stop(self) -> None:
        """Cancel cells that were queued but not started (for an interrupted session)."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Describe the target once cells are known, and start the worker pool if asked for."""
        items = [item for item in session.items if isinstance(item, CaseItem)]
        if items and not session.config.option.collectonly:
            self.describe()
            self.start(items)

    def pytest_sessionfinish(self) -> None:
        """Drop cells still queued (an interrupted or failing-fast session)."""
        self.stop()

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_runtest_metadata(self, item: pytest.Item, call: pytest.CallInfo) -> dict[str, Any]:
        """Put the cell's result into its test entry's metadata."""
        if call.when != "call" or not isinstance(item, CaseItem) or item.cell_result is None:
            return {}
        return item.cell_result.to_json()

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """Add the run's description at the top level (pytest-json-report's own environment is empty)."""
        json_report["jax_conformance"] = self.report_header()

    def report_header(self) -> dict[str, Any]:
        """The `jax_conformance` object at the top of the JSON report."""
        target = self.target or {}
        return {
            "schema_version": SCHEMA_VERSION,
            "suite_version": conformance.__version__,
            "jax": target.get("jax"),
            "jaxlib": target.get("jaxlib"),
            "numpy": target.get("numpy"),
            "python": target.get("python"),
            "platform": target.get("platform"),
            "backend": target.get("backend"),
            "devices": target.get("devices"),
            "python_executable": self.python,
            "case_package": self.package,
            "started_at": self.started_at,
            "finished_at": _utc_now(),
        }


_RUN = pytest.StashKey[ConformanceRun]()


class CellFailure(Exception):
    """Raised by an item whose cell did not conform, carrying the result for the failure text."""

    def __init__(self, result: CellResult) -> None:
        super().__init__(result.status.value)
        self.result = result


def failure_text(result: CellResult) -> str:
    """What pytest prints for a cell that did not conform."""
    lines = [f"{result.status.value}: {result.reason}" if result.reason else result.status.value]
    for difference in result.diff:
        lines.append(f"  {difference['path']}: expected {difference['expected']!r}, "
                     f"observed {difference['observed']!r} ({difference['kind']})")
    if result.status is not Status.DIFFERS and result.stderr_tail:
        lines.append("stderr (tail):")
        lines.extend("  " + line for line in result.stderr_tail.strip().splitlines()[-15:])
    lines.append(f"reproduce: {result.command}")
    return "\n".join(lines)


class CaseItem(pytest.Item):
    """One cell: a case parameter against the target interpreter."""

    def __init__(self, *, case: Case, param: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.param = param
        self.cell_result: CellResult | None = None
        self.extra_keyword_matches.update(case.rows(param))
        self.extra_keyword_matches.add(case.id)

    def runtest(self) -> None:
        """Run the cell and turn its status into a pytest outcome."""
        result = self.config.stash[_RUN].result_for(self)
        self.cell_result = result
        outcome = PYTEST_OUTCOME[result.status]
        if outcome == "skipped":
            pytest.skip(f"{result.status.value}: {result.reason}")
        if outcome == "failed":
            raise CellFailure(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """Show the diff or the reason instead of a Python traceback."""
        if isinstance(excinfo.value, CellFailure):
            return failure_text(excinfo.value.result)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, None, str]:
        """Location shown by pytest: the case module and the cell id."""
        return self.path, None, self.case.cell_id(self.param)


class CaseModule(pytest.File):
    """A case module, collected as one item per (case, param)."""

    def collect(self):
        """Yield one item per cell declared in this module."""
        run = self.config.stash[_RUN]
        for found in load_module_cases(f"{run.package}.{self.path.stem}"):
            for param in found.param_names:
                yield CaseItem.from_parent(self, name=found.cell_id(param).split(".", 1)[1],
                                           case=found, param=param)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseModule | None:
    """Collect the modules of the case package, and nothing else."""
    run = parent.config.stash[_RUN]
    if (file_path.suffix == ".py" and not file_path.name.startswith("_")
            and file_path.resolve().parent in run.case_dirs):
        return CaseModule.from_parent(parent, path=file_path)
    return None


_LETTER = {Status.CONFORMS: ".", Status.DIFFERS: "D", Status.UNSUPPORTED: "u", Status.ERROR: "E",
           Status.CRASH: "C", Status.TIMEOUT: "T", Status.SKIPPED: "s", Status.FLAKY: "F"}


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config):
    """Show a cell's own status word (CONFORMS, DIFFERS, ...) instead of PASSED/FAILED."""
    status = getattr(report, "conformance_status", None)
    if report.when == "call" and status is not None:
        return report.outcome, _LETTER[Status(status)], status.upper()
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Carry the cell's status on its report (it travels to pytest-xdist controllers too)."""
    outcome = yield
    if call.when == "call" and isinstance(item, CaseItem) and item.cell_result is not None:
        report = outcome.get_result()
        report.conformance_status = item.cell_result.status.value


def pytest_report_header(config: pytest.Config) -> str:
    """Name the target interpreter in pytest's header."""
    return f"jax-conformance {conformance.__version__}: target {config.stash[_RUN].python}"
