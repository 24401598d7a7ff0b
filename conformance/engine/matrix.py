"""Running a matrix: the selected cells against each JAX version's environment, stored through the results store.

A `RunRequest` states what to run (versions, the cells, shard, workers, retries, launcher, reuse,
the results folder and the case folders). `run_matrix(request, builder, on_event)` prepares each
version's environment, runs the cells in a pytest process per case package (the suite's plugin
does the work: launching, retries, reuse) and merges the run into the version's result file with
`results.store.ResultStore`. It prints nothing: progress goes to `on_event` as `EnvironmentReady`,
`Notice`, `CellsDropped`, `VersionDone` and `VersionFailed` events; the CLI turns them into lines.
`run_environment(request, env, on_event)` runs the same cells against an environment prepared outside the matrix
(built from wheel files, or an interpreter the suite did not build); its cells are reused by key like any run's.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence, Union

from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, folder_namespace, load_cases
from conformance.core.casefolders import FOLDERS_VARIABLE, folders_variable
from conformance.child.envinfo import platform_tag
from conformance.child.future import FUTURE_VARIABLE
from conformance.engine.folders import CaseFolder, import_folder, refuse_shadowing
from conformance.engine.keys import cell_key
from conformance.engine.runner import SOURCE_ROOT
from conformance.engine.selection import Cell, all_cells, select_cells
from conformance.engine.session import still_answers
from conformance.engine.shards import Shard, check_shard_count, select_shard
from conformance.errors import ConformanceError
from conformance.results.durations import recorded_durations
from conformance.results.load import ResultsError, load_result_file
from conformance.results.merge import retired_cells
from conformance.results.schema import CellResult, ResultFile
from conformance.results.store import ResultStore

CASES_DIR = Path(__file__).resolve().parent.parent / "cases"


@dataclass(frozen=True)
class RunRequest:
    """What a matrix run runs, and how.

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
        """Refuse, in one line, a request that cannot run: a results folder that is a file, -j 0, negative retries."""
        if self.results.exists() and not self.results.is_dir():
            raise ConformanceError(f"--results {self.results} is a file; name a folder for the result files")
        if self.workers < 1:
            raise ConformanceError(f"-j {self.workers}: the number of cells run at once must be at least 1")
        if self.retries < 0:
            raise ConformanceError(f"--retries {self.retries}: the number of retries cannot be negative")
        ResultStore(self.results).refuse_newer_files()


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
class MatrixOutcome:
    """The versions that finished, in order, and those that failed."""

    finished: list[VersionRun] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


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


def select_run(folders: Sequence[CaseFolder], expression: str | None, shard: Shard | None = None,
               shard_durations: Path | None = None) -> Selection:
    """The declared cases, the cells `expression` selects, and the shard's share of them."""
    declared = load_all_cases(folders)
    selected = select_cells(all_cells(declared), expression)
    chosen = selected
    if shard:
        check_shard_count(shard, len(selected))
        in_shard = select_shard([c.id for c in selected], shard, recorded_durations(shard_durations))
        chosen = [c for c in selected if c.id in in_shard]
    return Selection(declared, selected, chosen)


def take_notices(builder: Any) -> list[str]:
    """What the builder and its package index repaired since last asked (each said once)."""
    notices = list(builder.index.notices) + list(builder.notices)
    builder.index.notices.clear()
    builder.notices.clear()
    return notices


def check_interpreters(builder: Any, versions: Sequence[str]) -> None:
    """Fail before any long work when a version is unknown or no installed Python fits it."""
    for version in versions:
        builder.interpreter_for(version)


def host_platform() -> str:
    """The platform tag of the environments the builder makes here (CPU jax on this machine)."""
    return platform_tag(platform.system(), platform.machine(), "cpu")


def stored_cells(request: RunRequest, builder: Any, version: str, cells: Sequence[Cell], *,
                 shard_files: bool = True) -> dict[str, CellResult]:
    """The cells of `cells` that the results folder already answers for jax `version`, without building it.

    A stored cell answers when its run recorded the environment's digest, the release's pin file is the one
    that run installed (so the same environment would be built again), the Python chosen for the release
    is the one it ran on, the cell's reuse key computed with that environment is the one stored (the case,
    the shared probe code and the suite are unchanged), and it did not end broken or flaky. Nothing else
    is trusted: a release without a pin file, a `--rerun` and a sharded run answer nothing from storage.
    The version's file is read, and with `shard_files` also its shard files (`-shardKofN.json`, as a sharded
    CI run leaves them), the unsharded file first.
    """
    if request.rerun or request.shard or request.future or not cells:
        return {}
    store = ResultStore(request.results)
    unsharded = store.path_for(version, host_platform())
    paths = [unsharded] if unsharded.is_file() else []
    if shard_files:
        paths += sorted(request.results.glob(glob.escape(unsharded.stem) + "-shard*of*.json"))
    if not paths:
        return {}
    try:
        requirements = builder.requirements(version)
        python = builder.interpreter_for(version).version
    except (ConformanceError, OSError):
        return {}
    if requirements.pin_file is None:
        return {}
    folder_hashes = {f.name: f.digest() for f in request.case_folders}
    answered: dict[str, CellResult] = {}
    for path in paths:
        try:
            stored = load_result_file(path)
        except (ResultsError, OSError):
            continue
        head = stored.header
        if not head.environment_digest or head.pins_hash != requirements.digest or head.python != python:
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


def run_matrix(request: RunRequest, builder: Any, on_event: OnEvent = _ignore, *,
               keep_going: bool = True, cells: Sequence[Cell] = ()) -> MatrixOutcome:
    """Run the request's cells on every version in turn, each prepared by `builder` and stored in the results folder.

    With `keep_going`, a version that fails is reported (`VersionFailed`) and the next one runs;
    without it the error propagates. An interrupt propagates after the version's temporaries are gone;
    the versions finished before it were reported as `VersionDone`. `cells` are the selected cells: a
    version whose stored results answer all of them (`stored_run`) is neither built nor run.
    """
    outcome = MatrixOutcome()
    for version in request.versions:
        try:
            done = stored_run(request, builder, version, cells) if cells else None
            if done is not None:
                on_event(AnsweredFromStorage(version, done.cells, done.path))
                outcome.finished.append(done)
                on_event(VersionDone(done))
                continue
            env = builder.prepare(version)
            for text in take_notices(builder):
                on_event(Notice(text))
            on_event(EnvironmentReady(version, env.interpreter.version, env.built_now, env.seconds))
            done = run_version(env, request, on_event)
            outcome.finished.append(done)
            on_event(VersionDone(done))
        except (ConformanceError, ResultsError) as exc:
            if not keep_going:
                raise
            outcome.failed.append(version)
            on_event(VersionFailed(version, str(exc)))
    return outcome


def run_environment(request: RunRequest, env: Any, on_event: OnEvent = _ignore) -> VersionRun:
    """Run the request's cells against one prepared environment (`--wheels`, `--python`) and store them like a
    version's run. Nothing answers from storage before it runs (the pins say nothing about such a build); the plugin
    still reuses every stored cell whose key (the environment's packages included) is unchanged."""
    origin = str((getattr(env, "source", None) or {}).get("kind", ""))
    on_event(EnvironmentReady(env.version, env.interpreter.version, env.built_now, env.seconds, origin))
    done = run_version(env, request, on_event)
    on_event(VersionDone(done))
    return done


def build_requests(request: RunRequest, builds: Mapping[Hashable, Any]) -> dict[Hashable, RunRequest]:
    """The request each given build (`--python`, `--wheels`) runs under. Results are stored per (JAX version,
    platform), so a build whose version is also run as a release in the same request (an image's jax 0.12.0.1 gated
    against the release 0.12.0.1), or by an earlier build of it, is stored in a folder of its own,
    `DIR/builds/<kind>-<hash>/`, instead of into the other's file. `builds` maps `(kind, where)` to its environment."""
    taken = set(request.versions)
    own = {}
    for (kind, where), env in builds.items():
        if env.version in taken:
            name = env.pins_hash if kind == "wheels" else hashlib.sha256(env.python.encode()).hexdigest()
            own[(kind, where)] = dataclasses.replace(request, results=request.results / "builds" / f"{kind}-{name[:10]}")
        else:
            own[(kind, where)] = request
        taken.add(env.version)
    return own


def run_builds(request: RunRequest, builds: Mapping[Hashable, Any], on_event: OnEvent = _ignore, *,
               keep_going: bool = True) -> tuple[dict[Hashable, VersionRun], list[Hashable]]:
    """Run the request's cells on each given build, each stored under `build_requests`' results folder: the runs
    that finished, and the builds that failed (each said as `VersionFailed`; without `keep_going` the error
    propagates)."""
    requests = build_requests(request, builds)
    finished, failed = {}, []
    for target, env in builds.items():
        try:
            finished[target] = run_environment(requests[target], env, on_event)
        except (ConformanceError, ResultsError) as exc:
            if not keep_going:
                raise
            failed.append(target)
            on_event(VersionFailed(env.version, str(exc)))
    return finished, failed


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
    return VersionRun(file=load_result_file(final), path=final, wall_s=wall, cells=len(ran),
                      reused=sum(bool(m.get("reused")) for m in ran), launcher=" + ".join(dict.fromkeys(launchers)))


def pytest_argv(env: Any, json_path: Path, request: RunRequest, folder: CaseFolder | None = None) -> list[str]:
    """The pytest command that runs the selected cells of the built-in cases (or of one case folder)."""
    where = [str(folder.path), "--conformance-cases", folder.name] if folder else [str(CASES_DIR)]
    # --noconftest: a team's conftest.py files (in or above its folder) are not part of a conformance run.
    argv = [sys.executable, "-m", "pytest", *where, "--rootdir", SOURCE_ROOT, "--noconftest",
            "-p", "no:cacheprovider", "-o", "addopts=", "-qq", "--no-header", "--tb=no", "-rN",
            "--jax-python", env.python, "--jax-workers", str(request.workers),
            "--jax-retries", str(request.retries), "--jax-launch", request.launcher,
            "--jax-reuse", str(request.results),
            "--json-report", "--json-report-file", str(json_path), "--json-report-omit", "keywords", "collectors"]
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


def run_package(env: Any, request: RunRequest, folder: CaseFolder | None,
                on_event: OnEvent = _ignore) -> tuple[Path, dict]:
    """Run the selected cells of one case package in pytest and merge them into the version's result file."""
    if folder is not None:  # before any file is made: a refused folder leaves nothing behind
        refuse_shadowing([folder], env.python)
    fd, tmp_name = tempfile.mkstemp(dir=request.results, prefix=".running-", suffix=".json")
    os.close(fd)
    tmp = Path(tmp_name)
    selection = tmp.with_name(tmp.name + ".cells")
    try:  # from here on, whatever fails (a full disk included) leaves no `.running-*` file behind
        selection.write_text(json.dumps(sorted(request.cell_ids)), encoding="utf-8")
        environ = dict(os.environ)
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
            argv.append("--jax-build-identity")
        child = subprocess.Popen(argv + ["--jax-pins-hash", env.pins_hash], cwd=SOURCE_ROOT, env=environ)
        try:
            code = child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGTERM)
            child.wait()
            raise
        if code not in (0, 1) or tmp.stat().st_size == 0:
            raise ConformanceError(f"pytest stopped with exit code {code} for jax {env.version}; "
                                   f"its output is above")
        data = json.loads(tmp.read_text(encoding="utf-8"))
        head = data.get("jax_conformance") or {}
        if head.get("jax") != env.version:
            raise ConformanceError(f"the environment for jax {env.version} reports jax {head.get('jax')}"
                                   + (f"; delete {env.path} and run again" if getattr(env, "release", True) else ""))
        if request.future:  # stored as a target of its own, next to the release's
            head["jax"] = future_label(env.version)
        head["wall_s"] = round(time.monotonic() - started, 3)
        source = getattr(env, "source", None)
        if source:
            head["source"] = dict(source)
        stored = ResultStore(request.results).merge_run(
            data, retired=retired, shard_suffix=request.shard.file_suffix if request.shard else "")
        if stored.set_aside is not None:
            on_event(Notice(stored.set_aside.describe()))
        if stored.unreadable_cells:
            on_event(Notice(f"{stored.path}: dropped {len(stored.unreadable_cells)} stored cell(s) that could not "
                            f"be read, kept the others: {'; '.join(stored.unreadable_cells[:3])}"
                            f"{' …' if len(stored.unreadable_cells) > 3 else ''}"))
        if stored.dropped:
            on_event(CellsDropped(env.version, tuple(stored.dropped)))
        return stored.path, data
    finally:
        tmp.unlink(missing_ok=True)
        selection.unlink(missing_ok=True)
