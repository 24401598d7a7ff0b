"""Running targets: the selected cells against each target's environment, stored through the results store.

A `RunRequest` states what to run (the cells, shard, workers, retries, launcher, reuse, the results folder and
the case folders). `run_targets(request, builder, targets, on_event)` is the one run path, for `run`, `diff`,
`gate` and `bisect` alike: every target (`engine.targets`: a release on an index, an existing interpreter, a
folder of wheels) is checked first, then each is answered from stored results where the keys allow or prepared
and run, its cells run in a pytest process per case package (the suite's plugin does the work: launching,
retries, reuse) and merged into the target's result file with `results.store.ResultStore`. It prints nothing:
progress goes to `on_event` as `EnvironmentReady`, `AnsweredFromStorage`, `Notice`, `CellsDropped`,
`VersionDone` and `VersionFailed` events; the CLI turns them into lines.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

from conformance.childenv import without_credentials
from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, folder_namespace, load_cases
from conformance.core.casefolders import FOLDERS_VARIABLE, folders_variable
from conformance.child.envinfo import platform_tag
from conformance.child.future import FUTURE_VARIABLE
from conformance.engine.folders import CaseFolder, case_folders, import_folder, refuse_shadowing
from conformance.engine.keys import cell_key
from conformance.engine.runner import SOURCE_ROOT
from conformance.engine.selection import Cell, all_cells, select_cells
from conformance.engine.session import still_answers
from conformance.engine.shards import Shard, check_shard_count, select_shard
from conformance.engine.targets import Target
from conformance.errors import ConformanceError
from conformance.interrupts import interrupts_held
from conformance.portable import child_process_options, pid_alive, start_child
from conformance.results.durations import recorded_durations
from conformance.results.load import ResultsError, load_result_file
from conformance.results.merge import retired_cells
from conformance.results.schema import CellResult, ResultFile
from conformance.results.store import ResultStore

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"

MAX_WORKERS = 1024  # cells run at once: past this a number is a mistake, not a machine
MAX_RETRIES = 100


@dataclass(frozen=True)
class RunRequest:
    """What a run runs, and how (the targets it runs on are given to `run_targets`).

    `versions` are the releases the command named (for the record; the targets decide what runs);
    `cell_ids` are exactly the cells to run (empty: whatever `expression` selects in pytest);
    `sources` are the case packages that hold selected cells (None: the built-in one), each run in
    its own pytest process; `shard` runs only that shard of them, balanced by `shard_durations`.
    """

    versions: tuple[str, ...]
    results: Path
    cell_ids: tuple[str, ...] = ()
    expression: str | None = None
    sources: tuple[CaseFolder | None, ...] = (None,)
    case_folders: tuple[CaseFolder, ...] = ()
    shard: Shard | None = None
    shard_durations: Path | None = None
    workers: int = 1
    retries: int = 1
    retry_differs: bool = False
    launcher: str = "fork"
    rerun: bool = False
    future: bool = False  # run as the `<version>+future` target: see `child.future`

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", Path(self.results).absolute())  # pytest runs in another folder

    def check(self) -> None:
        """Refuse, in one line, a request that cannot run: a results folder that is a file, -j 0 or past
        `MAX_WORKERS`, retries negative or past `MAX_RETRIES`."""
        if self.results.exists() and not self.results.is_dir():
            raise ConformanceError(f"--results {self.results} is a file; name a folder for the result files")
        if self.workers < 1:
            raise ConformanceError(f"-j {self.workers}: the number of cells run at once must be at least 1")
        if self.workers > MAX_WORKERS:
            raise ConformanceError(f"-j {self.workers}: the number of cells run at once must be at most {MAX_WORKERS}")
        if self.retries < 0:
            raise ConformanceError(f"--retries {self.retries}: the number of retries cannot be negative")
        if self.retries > MAX_RETRIES:
            raise ConformanceError(f"--retries {self.retries}: the number of retries must be at most {MAX_RETRIES}")
        ResultStore(self.results).refuse_newer_files()


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How a command asked to run, as given: the selection expression, the case folders (`--cases`), the shard,
    workers, retries, launcher, reuse and the results folder. `plan_run` turns it into a checked `RunRequest`.
    Keyword arguments only: eleven fields, several of one type, are too easy to pass in the wrong order."""

    results: Path
    expression: str | None = None
    cases: tuple[str, ...] = ()
    shard: Shard | None = None
    shard_durations: Path | None = None
    workers: int = 1
    retries: int = 1
    retry_differs: bool = False
    launcher: str = "fork"
    rerun: bool = False
    future: bool = False  # `run --future`: each target's forecast, `<version>+future` (see `child.future`)


@dataclass
class Selection:
    """The cells a run selects: every declared case, the cells the expression selects, and those of the shard."""

    declared: list[Case]
    selected: list[Cell]
    chosen: list[Cell]

    @property
    def cell_ids(self) -> tuple[str, ...]:
        """The ids of the cells to run: the shard's share of every selected cell, split once over all case
        packages (each package's pytest then runs exactly its part of that share)."""
        return tuple(c.id for c in self.chosen)


@dataclass
class VersionRun:
    """One version's finished run: its merged result file, and what this run did."""

    file: ResultFile
    path: Path
    wall_s: float
    cells: int
    reused: int
    launcher: str

    @property
    def ran(self) -> int:
        """Cells that ran this time (not reused)."""
        return self.cells - self.reused


@dataclass(frozen=True)
class EnvironmentReady:
    """A version's environment is ready (built now, or reused from the cache)."""

    version: str
    python: str
    built_now: bool
    seconds: float
    origin: str = ""  # "", or how a given build came: "wheels", "python" (an existing interpreter)


@dataclass(frozen=True)
class Notice:
    """Something repaired or set aside on the way, for the user to know (not an error)."""

    text: str


@dataclass(frozen=True)
class CellsDropped:
    """Stored cells of cases this checkout no longer declares, dropped at a version's merge."""

    version: str
    cell_ids: tuple[str, ...]


@dataclass(frozen=True)
class AnsweredFromStorage:
    """Every selected cell of a version was answered by the results folder: nothing was built or run."""

    version: str
    cells: int
    path: Path


@dataclass(frozen=True)
class VersionDone:
    """A version's cells ran and are stored."""

    run: VersionRun


@dataclass(frozen=True)
class VersionFailed:
    """A version produced no results (its environment, pytest or its result file failed)."""

    version: str
    error: str


Event = Union[EnvironmentReady, AnsweredFromStorage, Notice, CellsDropped, VersionDone, VersionFailed]
OnEvent = Callable[[Event], None]


@dataclass
class RunOutcome:
    """The targets that finished (their runs, in order) and those that failed (how each is named)."""

    runs: dict[Target, VersionRun] = field(default_factory=dict)
    failures: dict[Target, str] = field(default_factory=dict)

    @property
    def finished(self) -> list[VersionRun]:
        """The finished runs, in order."""
        return list(self.runs.values())

    @property
    def failed(self) -> list[str]:
        """The targets that failed, named: a release by its version, a given build by its version and option."""
        return list(self.failures.values())


def _ignore(event: Event) -> None:
    pass


def load_all_cases(folders: Sequence[CaseFolder]) -> list[Case]:
    """The built-in cases, then those of each case folder (imported as its package)."""
    cases = load_cases()
    for folder in folders:
        cases += load_cases(import_folder(folder))
    return cases


def run_sources(cells: list[Cell], folders: Sequence[CaseFolder]) -> list[CaseFolder | None]:
    """The case packages with selected cells: None for the built-in one, then each case folder."""
    packages = {cell.case.package for cell in cells}
    chosen: list[CaseFolder | None] = [None] if DEFAULT_CASE_PACKAGE in packages else []
    return chosen + [folder for folder in folders if folder.name in packages]


def select_run(
    folders: Sequence[CaseFolder],
    expression: str | None,
    shard: Shard | None = None,
    shard_durations: Path | None = None,
) -> Selection:
    """The declared cases, the cells `expression` selects, and the shard's share of them."""
    declared = load_all_cases(folders)
    selected = select_cells(all_cells(declared), expression)
    chosen = selected
    if shard:
        check_shard_count(shard, len(selected))
        in_shard = select_shard([c.id for c in selected], shard, recorded_durations(shard_durations))
        chosen = [c for c in selected if c.id in in_shard]
    return Selection(declared, selected, chosen)


def plan_run(settings: RunSettings, versions: Sequence[str] = ()) -> tuple[Selection, RunRequest]:
    """The cells the settings select (and the shard's share) and the request that runs them; the request is
    checked (`RunRequest.check`) unless a shard holds none of the selected cells (nothing will run)."""
    folders = case_folders(settings.cases)
    selection = select_run(folders, settings.expression, settings.shard, settings.shard_durations)
    request = RunRequest(
        versions=tuple(versions),
        results=settings.results,
        cell_ids=selection.cell_ids,
        expression=settings.expression,
        sources=tuple(run_sources(selection.chosen, folders)),
        case_folders=tuple(folders),
        shard=settings.shard,
        shard_durations=settings.shard_durations,
        workers=settings.workers,
        retries=settings.retries,
        retry_differs=settings.retry_differs,
        launcher=settings.launcher,
        rerun=settings.rerun,
        future=settings.future,
    )
    if selection.chosen or not settings.shard:
        request.check()
    return selection, request


def run_for_answers(
    settings: RunSettings, builder: Any, targets: Sequence[Target], on_event: OnEvent = _ignore
) -> list[Path]:
    """The result file of each target (in order) after running its selected cells through `run_targets`, stopping
    at the first failure: what `diff` and `gate` compare. A release whose stored results answer every selected
    cell is neither built nor run."""
    selection, request = plan_run(settings, [t.label for t in targets if t.release])
    outcome = run_targets(request, builder, targets, on_event, keep_going=False, cells=selection.chosen)
    return [outcome.runs[target].path for target in targets]


def take_notices(builder: Any) -> list[str]:
    """What the builder and its package index repaired since last asked (each said once)."""
    notices = list(builder.index.notices) + list(builder.notices)
    builder.index.notices.clear()
    builder.notices.clear()
    return notices


def host_platform() -> str:
    """The platform tag of the environments the builder makes here (CPU jax on this machine)."""
    return platform_tag(platform.system(), platform.machine(), "cpu")


def stored_cells(
    request: RunRequest, builder: Any, version: str, cells: Sequence[Cell], *, shard_files: bool = True
) -> dict[str, CellResult]:
    """The cells of `cells` that the results folder already answers for jax `version`, without building it.

    A stored cell answers when its run recorded the environment's digest, the release's pin file is the one
    that run installed (so the same environment would be built again), the Python chosen for the release
    is the one it ran on, the cell's reuse key computed with that environment is the one stored (the case,
    the shared probe code and the suite are unchanged), and it did not end broken or flaky. Nothing else
    is trusted: a release without a pin file, a `--rerun` and a `--future` run answer nothing from storage.
    A sharded run is answered like any other (its cells are the shard's share; a CI shard job reads the
    restored results of the last published run this way). The version's file is read, and with `shard_files`
    also its shard files (`-shardKofN.json`, as a sharded CI run leaves them), the unsharded file first.
    """
    paths = version_files(request.results, version, host_platform(), shard_files)
    if request.rerun or request.future or not cells or not paths:
        return {}
    try:
        requirements = builder.requirements(version)
        python = builder.interpreter_for(version).version
    except (ConformanceError, OSError):
        return {}
    folder_hashes = {f.name: f.digest() for f in request.case_folders}
    return answered_cells(paths, cells, requirements, lambda stored: stored == python, folder_hashes)


def version_files(folder: Path, version: str, platform_name: str, shard_files: bool = True) -> list[Path]:
    """The result files of `version` on `platform_name` in `folder`: the unsharded one first, then (with
    `shard_files`) its shard files."""
    unsharded = ResultStore(folder).path_for(version, platform_name)
    paths = [unsharded] if unsharded.is_file() else []
    if shard_files:
        paths += sorted(folder.glob(glob.escape(unsharded.stem) + "-shard*of*.json"))
    return paths


def answered_cells(
    paths: Sequence[Path],
    cells: Sequence[Cell],
    requirements: Any,
    python_fits: Callable[[str], bool],
    folder_hashes: Mapping[str, str],
) -> dict[str, CellResult]:
    """The cells of `cells` that the result files at `paths` answer (see `stored_cells`), by cell id, read without
    building anything: `requirements` are the release's (a pin file is needed), `python_fits(header_python)` says
    whether the Python a file's run used is the one the release would get now. Unreadable files answer nothing."""
    if requirements.pin_file is None or not cells:
        return {}
    answered: dict[str, CellResult] = {}
    for path in paths:
        try:
            stored = load_result_file(path)
        except (ResultsError, OSError):
            continue
        head = stored.header
        if not head.environment_digest or head.pins_hash != requirements.digest or not python_fits(head.python or ""):
            continue
        by_id = {c.cell_id: c for c in stored.cells}
        for cell in cells:
            found = by_id.get(cell.id)
            if cell.id in answered or found is None:
                continue
            environment = head.environment_digest + folder_hashes.get(cell.case.package, "")
            if still_answers(found, cell_key(cell.case, cell.param, environment)):
                answered[cell.id] = found
    return answered


def stored_run(request: RunRequest, builder: Any, version: str, cells: Sequence[Cell]) -> VersionRun | None:
    """The version's run when its result file answers every one of `cells` (see `stored_cells`) and holds no cell
    of a case this checkout no longer declares, else None."""
    answered = stored_cells(request, builder, version, cells, shard_files=False)
    if not cells or len(answered) != len(cells):
        return None
    path = ResultStore(request.results).path_for(version, host_platform())
    stored = load_result_file(path)
    retired = [retired_in(folder) for folder in request.sources or (None,)]
    if any(any(is_retired(c.cell_id) for is_retired in retired) for c in stored.cells):
        return None  # the file holds cells of cases no longer declared: a run's merge drops them, and says so
    return VersionRun(file=stored, path=path, wall_s=0.0, cells=len(cells), reused=len(cells), launcher="stored")


def prepare_targets(
    builder: Any, targets: Sequence[Target], on_event: OnEvent = _ignore, prepared: Mapping[Target, Any] | None = None
) -> dict[Target, Any]:
    """Check every target before any long work, in order: a release's version is known and a Python here fits it
    (nothing built yet); a given build is prepared now (bad input is one error before anything is stored). The
    environment of each target by target: None for a release not prepared yet (it may be answered from storage)."""
    ready: dict[Target, Any] = dict(prepared or {})
    for target in dict.fromkeys(targets):
        if target in ready:
            continue
        target.check(builder)
        ready[target] = None  # a release is prepared when its turn comes, unless storage answers for it
        if not target.release:
            ready[target] = target.prepare(builder)
            for text in take_notices(builder):
                on_event(Notice(text))
    return ready


def run_targets(
    request: RunRequest,
    builder: Any,
    targets: Sequence[Target],
    on_event: OnEvent = _ignore,
    *,
    keep_going: bool = True,
    cells: Sequence[Cell] = (),
    prepared: Mapping[Target, Any] | None = None,
) -> RunOutcome:
    """The one run path: run the request's cells on every target in turn (each once), stored through the results
    store, saying each step to `on_event`.

    Every target is checked, and the given builds prepared, before any runs (`prepare_targets`; `prepared` are
    environments already made, such as bisect's). A release whose stored results answer all of `cells`
    (`stored_run`) is neither built nor run (`AnsweredFromStorage`); otherwise its environment is prepared now.
    A given build is always run, its stored cells reused by key, and stored where `ResultStore.target_folders`
    says. With `keep_going`, a target that fails is reported (`VersionFailed`) and the next one runs; without it
    the error propagates. An interrupt propagates after the target's temporaries are gone; the targets finished
    before it were reported as `VersionDone`.
    """
    targets = list(dict.fromkeys(targets))
    ready = prepare_targets(builder, targets, on_event, prepared)
    labels = [
        (target.label or ready[target].version, "" if target.release else target.storage_name(ready[target]))
        for target in targets
    ]
    folders = ResultStore(request.results).target_folders(labels)
    folders = [
        request.results / "builds" / own if getattr(target, "apart", False) else folder  # a jax/jaxlib pair
        for target, (_, own), folder in zip(targets, labels, folders)
    ]
    remove_orphans(request.results, folders)  # what runs killed with -9 left (a run answered from storage cleans too)
    outcome = RunOutcome()
    for target, (version, _), folder in zip(targets, labels, folders):
        try:
            done = run_target(
                dataclasses.replace(request, results=folder) if folder != request.results else request,
                builder,
                target,
                ready.get(target),
                on_event,
                cells,
            )
            outcome.runs[target] = done
            on_event(VersionDone(done))
        except (ConformanceError, ResultsError) as exc:
            if not keep_going:
                raise
            outcome.failures[target] = target.failure_name(version)
            on_event(VersionFailed(version, str(exc)))
    return outcome


def run_target(
    request: RunRequest, builder: Any, target: Target, env: Any, on_event: OnEvent, cells: Sequence[Cell]
) -> VersionRun:
    """One target's run: answered from storage (a release only), or its environment prepared and its cells run."""
    if env is None:
        done = stored_run(request, builder, target.label, cells) if cells and target.release else None
        if done is not None:
            on_event(AnsweredFromStorage(target.label, done.cells, done.path))
            return done
        env = target.prepare(builder)
        for text in take_notices(builder):
            on_event(Notice(text))
    origin = "" if target.release else str((getattr(env, "source", None) or {}).get("kind", ""))
    on_event(EnvironmentReady(env.version, env.interpreter.version, env.built_now, env.seconds, origin))
    return run_version(env, request, on_event)


def run_version(env: Any, request: RunRequest, on_event: OnEvent = _ignore) -> VersionRun:
    """Run the request's cells against one environment and merge them into its result file.

    Cells not selected this time keep their stored results; see `results.store.ResultStore.merge_run`.
    """
    request.results.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    final, ran, launchers = None, [], []
    for folder in request.sources or (None,):
        final, data = run_package(env, request, folder, on_event)
        ran += [t.get("metadata") or {} for t in data.get("tests", [])]
        launchers.append(str((data.get("jax_conformance") or {}).get("launcher") or ""))
    wall = time.monotonic() - started
    return VersionRun(
        file=load_result_file(final),
        path=final,
        wall_s=wall,
        cells=len(ran),
        reused=sum(bool(m.get("reused")) for m in ran),
        launcher=" + ".join(dict.fromkeys(launchers)),
    )


# The pytest plugin, loaded by name (it has no `pytest11` entry point, so other pytest sessions never see it); the
# entry point an older install left behind is blocked, so that the plugin is not registered twice.
PYTEST_PLUGIN = ("-p", "no:jax_conformance", "-p", "conformance.engine.plugin")


def pytest_argv(env: Any, json_path: Path, request: RunRequest, folder: CaseFolder | None = None) -> list[str]:
    """The pytest command that runs the selected cells of the built-in cases (or of one case folder)."""
    where = [str(folder.path), "--conformance-cases", folder.name] if folder else [str(CASES_DIR)]
    # --noconftest: a team's conftest.py files (in or above its folder) are not part of a conformance run.
    argv = [
        sys.executable,
        "-m",
        "pytest",
        *where,
        "--rootdir",
        SOURCE_ROOT,
        "--noconftest",
        "-p",
        "no:cacheprovider",
        *PYTEST_PLUGIN,
        "-o",
        "addopts=",
        "-qq",
        "--no-header",
        "--tb=no",
        "-rN",
        "--jax-python",
        env.python,
        "--jax-workers",
        str(request.workers),
        "--jax-retries",
        str(request.retries),
        "--jax-launch",
        request.launcher,
        "--jax-reuse",
        str(request.results),
        "--json-report",
        "--json-report-file",
        str(json_path),
        "--json-report-omit",
        "keywords",
        "collectors",
    ]
    if request.retry_differs:
        argv.append("--jax-retry-differs")
    if request.rerun or request.future:  # a +future cell is never answered by the release's stored one
        argv.append("--jax-rerun")
    if request.expression:
        argv += ["-k", request.expression]
    if request.shard:
        argv += ["--jax-shard", request.shard.label]
        if request.cell_ids:
            argv.append("--jax-cells-are-shard")
        if request.shard_durations:
            argv += ["--jax-shard-durations", str(request.shard_durations)]
    return argv


def future_label(version: str) -> str:
    """The `run --future` target of a version: `0.12.0.1+future` (`0.12.0.1+corp.3.future` for a local build)."""
    return f"{version}{'.' if '+' in version else '+'}future"


def retired_in(folder: CaseFolder | None) -> Callable[[str], bool]:
    """Which stored cells of this package (built-in or a case folder) no longer exist in it."""
    package = import_folder(folder) if folder is not None else DEFAULT_CASE_PACKAGE
    declared = [cell.id for cell in all_cells(load_cases(package))]
    return retired_cells(declared, folder_namespace(package))


def pytest_process_options() -> dict[str, Any]:
    """How a run's pytest is started: it gets SIGTERM (and so cleans up) when the CLI that started it dies, even by
    `kill -9`, instead of going on alone (Linux), and starts with an empty signal mask and SIGINT and SIGTERM at
    their defaults (`child_process_options`)."""
    return child_process_options(parent_death_signal=signal.SIGTERM)


def _orphaned(name: str) -> bool:
    """Whether `name` (`<prefix>-<pid>-<rest>`) was made by a process that is gone, not this one."""
    pid = name.split("-")[1] if name.count("-") >= 2 else ""
    return pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid))


def remove_orphaned_running_files(folder: Path) -> list[Path]:
    """Remove the `.running-<pid>-*` files of runs whose process is gone (killed with -9: nothing of theirs could
    clean up); return them."""
    removed = []
    for path in folder.glob(".running-*") if folder.is_dir() else ():
        if _orphaned(path.name):
            try:
                path.unlink()
                removed.append(path)
            except OSError:
                continue
    return removed


def remove_orphaned_workroots(temporary: Path | None = None) -> list[Path]:
    """Remove the `jaxconf-run-<pid>-*` folders (a run's cell work folders, under the system's temporary folder) of
    runs whose process is gone; return them."""
    removed = []
    for path in Path(temporary or tempfile.gettempdir()).glob("jaxconf-run-*"):
        if path.is_dir() and not path.is_symlink() and _orphaned(path.name[len("jaxconf-") :]):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def remove_orphans(results: Path, folders: Sequence[Path] = ()) -> None:
    """Remove what runs killed with -9 left: the `jaxconf-run-*` work folders of processes that are gone, and their
    `.running-*` files in the results folder, its builds' folders (`builds/*/`) and `folders`."""
    remove_orphaned_workroots()
    builds = sorted(results.glob("builds/*")) if results.is_dir() else []
    for folder in dict.fromkeys([results, *folders, *builds]):
        remove_orphaned_running_files(folder)


def run_package(
    env: Any, request: RunRequest, folder: CaseFolder | None, on_event: OnEvent = _ignore
) -> tuple[Path, dict]:
    """Run the selected cells of one case package in pytest and merge them into the version's result file."""
    if folder is not None:  # before any file is made: a refused folder leaves nothing behind
        refuse_shadowing([folder], env.python)
    remove_orphaned_running_files(request.results)
    tmp: Path | None = None
    try:  # whatever fails from the first instruction on (a full disk included) leaves no `.running-*` file behind
        with interrupts_held():  # Ctrl-C or SIGTERM as the file is made waits until `tmp` names it
            fd, tmp_name = tempfile.mkstemp(dir=request.results, prefix=f".running-{os.getpid()}-", suffix=".json")
            os.close(fd)
            tmp = Path(tmp_name)
        selection = tmp.with_name(tmp.name + ".cells")
        selection.write_text(json.dumps(sorted(request.cell_ids)), encoding="utf-8")
        environ = without_credentials(os.environ)  # the probes' parent: no index credential, no token
        retired = retired_in(folder)  # before the run: a case file edited meanwhile must not cost its results
        environ.pop(FOLDERS_VARIABLE, None)
        if folder is not None:  # imported from its own path, never with its parent on PYTHONPATH
            environ[FOLDERS_VARIABLE] = folders_variable([folder.path])
        environ.pop(FUTURE_VARIABLE, None)
        if request.future:
            environ[FUTURE_VARIABLE] = "1"
        started = time.monotonic()
        argv = pytest_argv(env, tmp, request, folder)
        if request.cell_ids:
            argv += ["--jax-cells", str(selection)]
        if not getattr(env, "release", True):  # a build of its own: its files, not only its version, key its cells
            argv += ["--jax-build-identity", "--jax-source-kind", str((env.source or {}).get("kind") or "")]
        child = start_child(
            argv + ["--jax-pins-hash", env.pins_hash], cwd=SOURCE_ROOT, env=environ, **pytest_process_options()
        )
        try:
            code = child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGTERM)
            child.wait()
            raise
        if code not in (0, 1) or tmp.stat().st_size == 0:
            raise ConformanceError(f"pytest stopped with exit code {code} for jax {env.version}; its output is above")
        data = json.loads(tmp.read_text(encoding="utf-8"))
        head = data.get("jax_conformance") or {}
        if head.get("jax") != env.version:
            raise ConformanceError(
                f"the environment for jax {env.version} reports jax {head.get('jax')}"
                + (f"; delete {env.path} and run again" if getattr(env, "release", True) else "")
            )
        if request.future:  # stored as a target of its own, next to the release's
            head["jax"] = future_label(env.version)
        head["wall_s"] = round(time.monotonic() - started, 3)
        source = getattr(env, "source", None)
        if source:
            head["source"] = dict(source)
        stored = ResultStore(request.results).merge_run(
            data, retired=retired, shard_suffix=request.shard.file_suffix if request.shard else ""
        )
        if stored.set_aside is not None:
            on_event(Notice(stored.set_aside.describe()))
        if stored.unreadable_cells:
            on_event(
                Notice(
                    f"{stored.path}: dropped {len(stored.unreadable_cells)} stored cell(s) that could not "
                    f"be read, kept the others: {'; '.join(stored.unreadable_cells[:3])}"
                    f"{' …' if len(stored.unreadable_cells) > 3 else ''}"
                )
            )
        if stored.dropped:
            on_event(CellsDropped(env.version, tuple(stored.dropped)))
        return stored.path, data
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
            tmp.with_name(tmp.name + ".cells").unlink(missing_ok=True)
