"""The pytest plugin: one test item per (case, param), each run in its own child of the target interpreter.

Loaded only where asked for (`-p conformance.engine.plugin`, as the CLI and tox.ini load it; no `pytest11` entry
point, so installing the tool changes no other pytest session), it stays quiet in sessions that are not a
conformance run: it
collects cells, adds the `jax_conformance` header to a JSON report and prints its line only
in a conformance run, that is when `--jax-python` or `--conformance-cases` is given, or a
path on the command line lies in the case package (`pytest conformance/cases --jax-python ENV/bin/python`).
Cells run through a `RunSession` (fork server by default); with pytest-json-report every
test entry's `metadata` is the cell's `CellResult`. That holds when the harness itself fails around a probe
(pytest's runner, another plugin's hook, the run session raising in setup, call or teardown): the entry is an
`error` cell with the fault as its `harness` cause and the cell's full description, never an entry without metadata.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from packaging.version import InvalidVersion, Version

import conformance
from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, CaseDeclarationError, load_module_cases
from conformance.core.casefolders import CaseFolderError, import_declared_folders
from conformance.core.status import LETTER, PYTEST_OUTCOME, Status
from conformance.engine.folders import package_folder, package_folder_entry
from conformance.portable import run_bounded
from conformance.engine.keys import cell_key, environment_digest
from conformance.childenv import child_environment
from conformance.engine.runner import SOURCE_KINDS, Target, harness_fault_result, harness_fault_text
from conformance.engine.selection import Cell
from conformance.engine.shards import Shard, parse_shard, select_shard
from conformance.errors import ConformanceError
from conformance.engine.session import LAUNCHERS, RunSession
from conformance.results.durations import recorded_durations
from conformance.results.schema import CellResult, RunHeader, utc_now
from conformance.results.store import reusable_cells

ENVINFO_TIMEOUT_S = 120


def pytest_addoption(parser: pytest.Parser) -> None:
    """Options of the suite."""
    group = parser.getgroup("jax-conformance")
    group.addoption(
        "--jax-python",
        default=None,
        metavar="PATH",
        help="interpreter of the target environment (default: the current one)",
    )
    group.addoption(
        "--jax-workers",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="cells run at once, each still in its own process (default: the number of cores)",
    )
    group.addoption(
        "--jax-retries",
        type=int,
        default=1,
        metavar="N",
        help="rerun a cell that ends in error, crash or timeout up to N times (default 1); "
        "disagreeing attempts are 'flaky'",
    )
    group.addoption("--jax-retry-differs", action="store_true", help="also rerun cells that differ")
    group.addoption(
        "--jax-launch",
        choices=LAUNCHERS,
        default="fork",
        help="fork cells from a per-environment server that imported jax (default), or spawn each",
    )
    group.addoption(
        "--jax-reuse",
        default=None,
        metavar="FILE",
        help="a previous result file, or a folder of them: cells whose key is unchanged are reused",
    )
    group.addoption("--jax-rerun", action="store_true", help="run every cell even if a stored result matches")
    group.addoption(
        "--jax-shard",
        default=None,
        metavar="K/N",
        help="run only shard K of N of the selected cells (split by recorded durations)",
    )
    group.addoption(
        "--jax-shard-durations",
        default=None,
        metavar="PATH",
        help="result files whose recorded durations balance the shards (default matrix/baseline/)",
    )
    group.addoption(
        "--jax-cells",
        default=None,
        metavar="FILE",
        help="a JSON list of cell ids: run exactly those (the CLI's own selection), not -k's substrings",
    )
    group.addoption(
        "--jax-cells-are-shard",
        action="store_true",
        help="the cells of --jax-cells already are shard K of --jax-shard K/N, split over every case "
        "package of the run: label the results with the shard, split nothing again",
    )
    group.addoption("--jax-pins-hash", default="", metavar="SHA256", help="the target's pin set, for the header")
    group.addoption(
        "--jax-source-kind",
        default="",
        choices=SOURCE_KINDS,
        help="where the target's jax came from (its cells' reproduce lines name a build, not the release)",
    )
    group.addoption(
        "--jax-build-identity",
        action="store_true",
        help="the target is a build of its own (wheel files, an existing interpreter): its reuse keys also "
        "hold the digest of its installed jax and jaxlib files, so a rebuilt wheel with the same "
        "version never reuses the results of the build before it",
    )
    group.addoption(
        "--conformance-cases",
        default=DEFAULT_CASE_PACKAGE,
        metavar="PACKAGE",
        help="the package whose modules declare the cases (default conformance.cases)",
    )


def _read_cell_list(path: str | None) -> set[str] | None:
    """The cell ids listed (one JSON list) in the file of `--jax-cells`, or None without it."""
    if not path:
        return None
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(f"--jax-cells {path}: not a readable JSON list of cell ids ({exc})") from None
    if not isinstance(found, list) or not all(isinstance(c, str) for c in found):
        raise pytest.UsageError(f"--jax-cells {path}: not a JSON list of cell ids")
    return set(found)


def normalized_version(version: Any) -> Any:
    """A version as PEP 440 normalizes it (`0.12.0.1+corp_3` → `0.12.0.1+corp.3`), which result files and their
    names use; anything that does not parse is left as it is (the result header then refuses it by name)."""
    try:
        return str(Version(str(version))) if version else version
    except InvalidVersion:
        return version


def describe_target(python: str) -> dict[str, Any]:
    """Ask the target interpreter for its versions, platform and packages (one child process)."""
    with tempfile.TemporaryDirectory(prefix="jaxconf-env-") as workdir:
        out = os.path.join(workdir, "env.json")
        try:  # bounded: what it prints is kept as a tail, and a hang is stopped with what it started
            done = run_bounded(
                [python, "-m", "conformance.child.envinfo", "--out", out],
                env=child_environment(os.environ, {}),
                timeout=ENVINFO_TIMEOUT_S,
                limit=8192,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise pytest.UsageError(f"--jax-python {python}: cannot run it ({exc})") from None
        if done.timed_out:
            raise pytest.UsageError(f"--jax-python {python}: did not describe itself within {ENVINFO_TIMEOUT_S}s")
        if not os.path.exists(out):
            raise pytest.UsageError(
                f"could not describe the environment of {python}: "
                f"{(done.output.strip().splitlines() or ['no output'])[-1][:300]}"
            )
        return json.loads(Path(out).read_text(encoding="utf-8"))


def _case_dirs(package: str) -> set[Path]:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    locations = spec.submodule_search_locations if spec else None
    if not locations:
        raise pytest.UsageError(f"--conformance-cases {package}: no such importable package")
    return {Path(p).resolve() for p in locations}


def _is_conformance_run(config: pytest.Config, package: str, case_dirs: set[Path]) -> bool:
    if config.getoption("jax_python") or package != DEFAULT_CASE_PACKAGE:
        return True
    for arg in config.args:
        if arg == package:
            return True
        path = Path(arg.split("::")[0]).resolve()
        if path in case_dirs or path.parent in case_dirs:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    """In a conformance run, attach the run state to the config and register its hooks."""
    for name, low in (("jax_workers", 1), ("jax_retries", 0)):
        if config.getoption(name) < low:
            raise pytest.UsageError(f"--{name.replace('_', '-')} must be at least {low}")
    if config.getoption("jax_shard"):
        try:
            parse_shard(config.getoption("jax_shard"))
        except ConformanceError as exc:
            raise pytest.UsageError(str(exc).replace("--shard", "--jax-shard")) from None
    package = config.getoption("conformance_cases")
    try:
        import_declared_folders()  # a case folder named by the CLI, imported from its own path
    except CaseFolderError as exc:
        raise pytest.UsageError(str(exc)) from None
    case_dirs = _case_dirs(package)
    if not _is_conformance_run(config, package, case_dirs):
        return
    run = ConformanceRun(config, package, case_dirs)
    config.stash[_RUN] = run
    config.pluginmanager.register(run, "jax-conformance-run")


class ConformanceRun:
    """State of one conformance pytest session: the target, its description, and the session running the cells."""

    def __init__(self, config: pytest.Config, package: str, case_dirs: set[Path]) -> None:
        self.config = config
        self.package = package
        self.case_dirs = case_dirs
        # Absolute: children start in their own working folders.
        self.python = os.path.abspath(config.getoption("jax_python") or sys.executable)
        self.started_at = utc_now()
        self.target: dict[str, Any] | None = None
        self.session: RunSession | None = None
        shard = config.getoption("jax_shard")
        self.shard: Shard | None = parse_shard(shard) if shard else None
        self.case_folders = package_folder_entry(package)
        # From the start, not only once cells run: a SIGTERM while the target is described or a fork server starts
        # must also end in cleanup (children killed, temporaries removed), then in death by SIGTERM.
        self.terminated = False
        self._previous_sigterm = signal.signal(signal.SIGTERM, self._terminate)

    def _terminate(self, signum: int, frame: Any) -> None:
        # Only unwind here, as Ctrl-C does: pytest's keyboard-interrupt and session-finish hooks then close the
        # session (children and servers killed). Closing from inside the handler could wait on the very start-up
        # or wait that the signal interrupted.
        self.terminated = True
        raise KeyboardInterrupt  # unwinds whatever is under way, its temporaries with it

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Give SIGTERM back; a terminated run, cleaned up, ends by SIGTERM as its caller expects."""
        previous = self._previous_sigterm
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        if self.terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    @property
    def platform(self) -> str:
        """The platform tag of the target environment."""
        return self.describe()["platform"]

    def describe(self) -> dict[str, Any]:
        """The target's description, asked for once."""
        if self.target is None:
            self.target = describe_target(self.python)
            self.target["jax"] = normalized_version(self.target.get("jax"))
        return self.target

    def environment_digest(self) -> str:
        """The digest of the target's installed distributions and Python, as reuse keys hold it."""
        described = self.describe()
        digest = environment_digest(described.get("packages") or {}, described.get("python") or "")
        if self.config.getoption("jax_build_identity"):  # versions alone do not tell two builds of one version apart
            digest = hashlib.sha256(f"{digest}|{described.get('build_digest') or ''}".encode()).hexdigest()
        return digest

    def make_session(self) -> RunSession:
        """The run session for the collected cells."""
        described = self.describe()
        environment = self.environment_digest()
        environment += "".join(f["hash"] for f in self.case_folders)  # a folder's helpers change its cells too
        folder = package_folder(self.package)
        stored = reusable_cells(
            self.config.getoption("jax_reuse"),
            str(described.get("jax")),
            described["platform"],
            self.shard.file_suffix if self.shard else "",
        )
        # What each cell took before: this version's own stored results, else the committed baseline's.
        durations = {
            **recorded_durations(),
            **{cell_id: c.duration_s for cell_id, c in stored.items() if c.duration_s and c.duration_s > 0},
        }
        return RunSession(
            target=Target(
                self.python,
                described["platform"],
                described.get("jax"),
                self.package,
                (folder,) if folder else (),
                source_kind=self.config.getoption("jax_source_kind"),
            ),
            launcher=self.config.getoption("jax_launch"),
            workers=self.config.getoption("jax_workers"),
            retries=self.config.getoption("jax_retries"),
            retry_differs=self.config.getoption("jax_retry_differs"),
            stored=stored,
            key_of=lambda case, param: cell_key(case, param, environment),
            rerun=self.config.getoption("jax_rerun"),
            durations=durations,
        )

    def result_for(self, item: "CaseItem") -> CellResult:
        """The result of an item's cell."""
        if self.session is None:
            self.session = self.make_session()
        return self.session.result(Cell(item.case, item.param))

    def harness_result(self, item: "CaseItem") -> CellResult:
        """The `error` cell of an item whose probe the harness never judged (`item.harness_fault` says why)."""
        described = self.describe()
        target = Target(
            self.python,
            described["platform"],
            described.get("jax"),
            self.package,
            source_kind=self.config.getoption("jax_source_kind"),
        )
        return harness_fault_result(item.case, item.param, target, item.harness_fault or "no result was recorded")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Keep exactly the cells of `--jax-cells` (when given), then, with `--jax-shard K/N`, only shard K of them."""
        wanted = _read_cell_list(config.getoption("jax_cells"))
        if wanted is not None:
            dropped = [
                item for item in items if isinstance(item, CaseItem) and item.case.cell_id(item.param) not in wanted
            ]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
                items[:] = [item for item in items if item not in dropped]
        if self.shard is None or (wanted is not None and config.getoption("jax_cells_are_shard")):
            return
        cells = {item.case.cell_id(item.param): item for item in items if isinstance(item, CaseItem)}
        chosen = select_shard(cells, self.shard, recorded_durations(config.getoption("jax_shard_durations")))
        dropped = [item for cell_id, item in cells.items() if cell_id not in chosen]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [
                item for item in items if not isinstance(item, CaseItem) or item.case.cell_id(item.param) in chosen
            ]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Describe the target once cells are known, and start running them."""
        items = [item for item in session.items if isinstance(item, CaseItem)]
        if items and not session.config.option.collectonly:
            self.session = self.make_session()
            self.session.start(Cell(item.case, item.param) for item in items)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Stop the session; an interrupted run kills its children."""
        if self.session is not None:
            self.session.close(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)

    def pytest_keyboard_interrupt(self) -> None:
        """Ctrl-C: kill every child at once."""
        if self.session is not None:
            self.session.close(interrupted=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_runtest_metadata(self, item: pytest.Item, call: pytest.CallInfo) -> dict[str, Any]:
        """Put the cell's result into its test entry's metadata, after every phase (pytest-json-report keeps the
        last): a phase that raised anything but the item's own verdict is a harness fault, stored with the cell."""
        if not isinstance(item, CaseItem):
            return {}
        if call.excinfo is not None:
            verdict = call.when == "call" and call.excinfo.errisinstance((CellFailure, pytest.skip.Exception))
            if not verdict:  # pytest's runner, another plugin's hook, the session: not the probe
                item.note_harness_fault(harness_fault_text(call.when, call.excinfo.value))
        never_called = call.when == "teardown" and not item.config.getoption("setuponly", False)
        if item.cell_result is None and (item.harness_fault or never_called):
            item.cell_result = self.harness_result(item)
        return item.cell_result.to_json() if item.cell_result is not None else {}

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_modifyreport(self, json_report: dict[str, Any]) -> None:
        """Add the run's description at the top level (pytest-json-report's own environment is empty)."""
        if self.target is not None:
            json_report["jax_conformance"] = self.report_header().to_json()

    def report_header(self) -> RunHeader:
        """The `jax_conformance` object at the top of the JSON report."""
        target = self.target or {}
        session = self.session
        return RunHeader(
            jax=str(target.get("jax")),
            platform=str(target.get("platform")),
            suite_version=conformance.__version__,
            jaxlib=target.get("jaxlib"),
            numpy=target.get("numpy"),
            python=target.get("python"),
            backend=target.get("backend"),
            devices=list(target.get("devices") or []),
            case_package=self.package,
            case_folders=list(self.case_folders),
            launcher=session.launcher_name_used() if session else "",
            pins_hash=self.config.getoption("jax_pins_hash"),
            environment_digest=self.environment_digest() if self.target is not None else "",
            shard=self.shard.label if self.shard else "",
            jax_module_version=(
                str(target.get("jax_module_version") or "")
                if target.get("jax_module_version") != target.get("jax")
                else ""
            ),
            jax_git_hash=str(target.get("jax_git_hash") or ""),
            jaxlib_git_hash=str(target.get("jaxlib_git_hash") or ""),
            started_at=self.started_at,
            finished_at=utc_now(),
        )

    def pytest_report_header(self, config: pytest.Config) -> str:
        """Name the target interpreter in pytest's header."""
        return f"jax-conformance {conformance.__version__}: target {self.python}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_collect_directory(self, path: Path, parent: pytest.Collector) -> "CaseDirectory | None":
        """Collect a case package's folder as a plain folder of case modules, not as a Python package:
        pytest would import its `__init__.py` with the folder's parent put first on `sys.path`, and would
        collect a team's own `test_*.py` files and subfolders."""
        if Path(path).resolve() in self.case_dirs:
            return CaseDirectory.from_parent(parent, path=Path(path))
        return None

    @staticmethod
    def _is_case_module(path: Path) -> bool:
        return path.suffix == ".py" and not path.name.startswith("_") and path.name != "helpers.py"

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> "CaseModule | None":
        """Collect the modules of the case package, and nothing else."""
        if self._is_case_module(file_path) and file_path.resolve().parent in self.case_dirs:
            return CaseModule.from_parent(parent, path=file_path)
        return None

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        """Show a cell's own status word (CONFORMS, DIFFERS, ...) instead of PASSED/FAILED."""
        status = getattr(report, "conformance_status", None)
        if report.when == "call" and status is not None:
            return report.outcome, LETTER[Status(status)], status.upper()
        return None


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
        lines.append(
            f"  {difference['path']}: expected {difference['expected']!r}, "
            f"observed {difference['observed']!r} ({difference['kind']})"
        )
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
        self.harness_fault = ""  # the first fault of the harness around this cell (`<phase>: <exception>`)
        self.extra_keyword_matches.update(case.rows(param))
        self.extra_keyword_matches.update({case.id, case.cell_id(param)})

    def note_harness_fault(self, fault: str) -> None:
        """Keep a harness fault on the cell: the first one is the cause; a judged result keeps its status."""
        if not self.harness_fault:
            self.harness_fault = fault
        if self.cell_result is not None and not self.cell_result.harness:
            self.cell_result.harness = fault

    def runtest(self) -> None:
        """Run the cell and turn its status into a pytest outcome; a harness fault on the way (the run session
        raising instead of answering) is the cell's `error` with that cause, not an entry without metadata."""
        run = self.config.stash[_RUN]
        try:
            result = run.result_for(self)
        except Exception as exc:  # the probe's own failures come back as statuses; this is the harness's
            self.note_harness_fault(harness_fault_text("call", exc))
            result = run.harness_result(self)
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


class CaseDirectory(pytest.Directory):
    """The folder of a case package: its case modules, and nothing else in it."""

    def collect(self):
        """Yield one `CaseModule` per case module of the folder, in file-name order."""
        for path in sorted(self.path.iterdir()):
            if path.is_file() and ConformanceRun._is_case_module(path):
                yield CaseModule.from_parent(self, path=path)


class CaseModule(pytest.File):
    """A case module, collected as one item per (case, param)."""

    def collect(self):
        """Yield one item per cell declared in this module."""
        run = self.config.stash[_RUN]
        try:
            cases = load_module_cases(f"{run.package}.{self.path.stem}")
        except CaseDeclarationError as exc:
            raise pytest.UsageError(str(exc)) from None
        for found in cases:
            for param in found.param_names:
                yield CaseItem.from_parent(self, name=found.cell_id(param).split(".", 1)[1], case=found, param=param)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Carry the cell's status on its report."""
    outcome = yield
    if call.when == "call" and isinstance(item, CaseItem) and item.cell_result is not None:
        report = outcome.get_result()
        report.conformance_status = item.cell_result.status.value
