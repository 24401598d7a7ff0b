"""The matrix run below the CLI: the request, the pytest command line, events, the merge through the store.

pytest itself is replaced by a fake `Popen` that writes the report a real run would, so these
tests need no JAX environment (the e2e tests run the real thing).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conformance.engine import matrix
from conformance.engine.matrix import RunRequest
from conformance.engine.shards import parse_shard
from conformance.engine.targets import releases
from conformance.envs.builder import JaxEnvironment
from conformance.envs.interpreters import Interpreter
from conformance.errors import ConformanceError
from tests.synthetic_results import cell, report, write

PLATFORM = "linux-x86_64"


def environment(version: str) -> JaxEnvironment:
    return JaxEnvironment(version, Path("/nowhere"), Interpreter("/usr/bin/python3", "3.12.1"), False, 0.0, "pins")


class FakePytest:
    """Stands in for `subprocess.Popen` of the pytest run: writes the report of the cells it is asked for
    (`statuses`: cell id -> status, or a function of the JAX version giving them)."""

    def __init__(self, statuses, reports_jax: str | None = None, code: int = 0):
        self.statuses, self.reports_jax, self.code, self.argvs = statuses, reports_jax, code, []

    def __call__(self, argv, cwd, env, **options):
        self.argvs.append(argv)
        version = argv[argv.index("--jax-python") + 1].split("/")[2]
        out = Path(argv[argv.index("--json-report-file") + 1])
        statuses = self.statuses(version) if callable(self.statuses) else self.statuses
        cells = [
            cell(
                cell_id.split("[")[0],
                cell_id.partition("[")[2].rstrip("]"),
                status,
                reused=status == "reused",
                known_issue=True,
            )
            for cell_id, status in statuses.items()
        ]
        for entry in cells:
            if entry["status"] == "reused":
                entry["status"] = "conforms"
        out.write_text(json.dumps(report(self.reports_jax or version, PLATFORM, cells)))
        return type("Child", (), {"wait": lambda child: self.code})()


def env_for(version: str) -> JaxEnvironment:
    env = environment(version)
    object.__setattr__(env, "path", Path(f"/envs/{version}"))
    return env


@pytest.fixture
def fake_pytest(monkeypatch):
    def install(statuses, **kwargs):
        fake = FakePytest(statuses, **kwargs)
        monkeypatch.setattr(subprocess, "Popen", fake)
        monkeypatch.setattr(JaxEnvironment, "python", property(lambda env: f"/envs/{env.version}/bin/python"))
        return fake

    return install


def test_a_version_run_is_merged_through_the_store_and_counted(tmp_path, fake_pytest):
    write(tmp_path, "0.8.3", PLATFORM, [cell("numerics.kept_before")])
    fake = fake_pytest({"numerics.debug_nans_vmap_miss[vmap]": "reused", "config.x": "differs"})
    request = RunRequest(versions=("0.8.3",), results=tmp_path, cell_ids=("config.x",), workers=2, retries=0)
    events = []
    done = matrix.run_version(env_for("0.8.3"), request, events.append)
    assert done.path == tmp_path / "0.8.3-linux-x86_64.json"
    assert (done.cells, done.reused, done.ran) == (2, 1, 1)
    ids = sorted(c.cell_id for c in done.file.cells)
    assert ids == ["config.x", "numerics.debug_nans_vmap_miss[vmap]"]  # the stored cell was retired: not declared
    assert events == [matrix.CellsDropped("0.8.3", ("numerics.kept_before",))]
    argv = fake.argvs[0]
    assert argv[argv.index("--jax-cells") + 1].endswith(".cells") and argv[-2:] == ["--jax-pins-hash", "pins"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".running-")] == []


def test_an_unreadable_stored_file_is_set_aside_with_a_notice(tmp_path, fake_pytest):
    (tmp_path / "0.8.3-linux-x86_64.json").write_text("{")
    fake_pytest({"config.x": "conforms"})
    events = []
    matrix.run_version(env_for("0.8.3"), RunRequest(versions=("0.8.3",), results=tmp_path), events.append)
    (notice,) = events
    assert isinstance(notice, matrix.Notice) and "could not be merged into" in notice.text
    assert any(p.name.startswith(".0.8.3-linux-x86_64.json.unreadable-") for p in tmp_path.iterdir())


def test_a_pytest_that_fails_or_reports_another_version_is_one_error(tmp_path, fake_pytest):
    fake_pytest({"config.x": "conforms"}, code=4)
    with pytest.raises(ConformanceError, match="pytest stopped with exit code 4 for jax 0.8.3"):
        matrix.run_version(env_for("0.8.3"), RunRequest(versions=("0.8.3",), results=tmp_path))
    fake_pytest({"config.x": "conforms"}, reports_jax="0.9.0")
    with pytest.raises(ConformanceError, match="reports jax 0.9.0; delete /envs/0.8.3"):
        matrix.run_version(env_for("0.8.3"), RunRequest(versions=("0.8.3",), results=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_version_leaves_no_temporary_file(monkeypatch, tmp_path):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess, "Popen", interrupted)
    with pytest.raises(KeyboardInterrupt):
        matrix.run_version(environment("0.12.0.1"), RunRequest(versions=("0.12.0.1",), results=tmp_path, retries=0))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_sigmask"), reason="signals are held where POSIX can")
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_an_interrupt_as_the_running_file_is_made_leaves_no_temporary_file(monkeypatch, tmp_path, signum):
    """Found by the e2e interrupt test, once it interrupted the moment the `.running-*` file appeared: a signal
    that lands just after the file is made is held until the cleanup is in place."""
    import os
    import signal
    import tempfile

    made = tempfile.mkstemp

    def made_then_interrupted(*args, **kwargs):
        found = made(*args, **kwargs)
        os.kill(os.getpid(), getattr(signal, signum))
        return found

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    monkeypatch.setattr(matrix.tempfile, "mkstemp", made_then_interrupted)
    # Python's own SIGINT handler raises KeyboardInterrupt too, but a runner (mutmut) may have replaced it.
    previous = signal.signal(getattr(signal, signum), interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            matrix.run_version(environment("0.12.0.1"), RunRequest(versions=("0.12.0.1",), results=tmp_path, retries=0))
    finally:
        signal.signal(getattr(signal, signum), previous)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_sigmask"), reason="a POSIX signal mask")
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_an_interrupt_taken_by_another_thread_as_the_running_file_is_made_is_held(
    monkeypatch, tmp_path, fake_pytest, signum
):
    """Issue 49, deterministically: with another thread alive, a signal sent to the process the moment the
    `.running-*` file exists is taken by that thread (a mask blocks it for the calling thread only), and Python
    raises it in the main thread at its next instruction. The hold must keep it until the cleanup is in place,
    then let it surface, and leave the signal mask and the handlers as they were."""
    import signal

    from conformance.interrupts import sigterm_interrupts
    from tests.test_interrupts import signalled_by_another_thread_after

    fake_pytest({"config.x": "conforms"})
    sender, go = signalled_by_another_thread_after(monkeypatch, matrix, getattr(signal, signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a runner (mutmut) may have replaced it
    try:
        with sigterm_interrupts():  # SIGTERM raises KeyboardInterrupt, as under the CLI
            handlers = {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)}
            with pytest.raises(KeyboardInterrupt):
                matrix.run_version(
                    environment("0.12.0.1"), RunRequest(versions=("0.12.0.1",), results=tmp_path, retries=0)
                )
            assert {n: signal.getsignal(n) for n in (signal.SIGINT, signal.SIGTERM)} == handlers
        mask_after = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        go.set()
        sender.join()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a regression must not poison the tests after this one
        signal.signal(signal.SIGINT, previous)
    assert ([p.name for p in tmp_path.iterdir()], mask_after) == ([], mask)


class FakeBuilder:
    def __init__(self, broken=()):
        self.broken, self.notices = broken, []
        self.index = type("Index", (), {"notices": ["index repaired"]})()

    def interpreter_for(self, version):
        return Interpreter("/usr/bin/python3", "3.12.1")

    def prepare(self, version):
        if version in self.broken:
            raise ConformanceError(f"could not build jax {version}")
        return env_for(version)


def test_a_matrix_reports_each_version_and_goes_on_after_a_failure(tmp_path, fake_pytest):
    fake_pytest({"config.x": "conforms"})
    request = RunRequest(versions=("0.7.2", "0.8.3", "0.9.0"), results=tmp_path)
    events = []
    outcome = matrix.run_targets(request, FakeBuilder(broken={"0.8.3"}), releases(request.versions), events.append)
    assert outcome.failed == ["0.8.3"] and [r.path.name for r in outcome.finished] == [
        "0.7.2-linux-x86_64.json",
        "0.9.0-linux-x86_64.json",
    ]
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["Notice", "EnvironmentReady", "VersionDone", "VersionFailed", "EnvironmentReady", "VersionDone"]
    assert events[0].text == "index repaired" and events[3].error == "could not build jax 0.8.3"
    with pytest.raises(ConformanceError, match="could not build jax 0.8.3"):
        matrix.run_targets(request, FakeBuilder(broken={"0.8.3"}), releases(request.versions), keep_going=False)


def test_the_pytest_command_carries_the_request(tmp_path):
    request = RunRequest(
        versions=("0.8.3",),
        results=tmp_path,
        expression="vmap",
        workers=3,
        retries=2,
        retry_differs=True,
        launcher="spawn",
        rerun=True,
        shard=parse_shard("2/3"),
        shard_durations=tmp_path / "durations",
    )
    argv = matrix.pytest_argv(type("Env", (), {"python": "/env/bin/python"})(), tmp_path / "out.json", request)
    assert argv[3] == str(matrix.CASES_DIR)
    pairs = {argv[i]: argv[i + 1] for i in range(len(argv) - 1)}
    assert (pairs["--jax-workers"], pairs["--jax-retries"], pairs["--jax-launch"]) == ("3", "2", "spawn")
    assert (pairs["--jax-reuse"], pairs["-k"], pairs["--jax-shard"]) == (str(tmp_path), "vmap", "2/3")
    assert pairs["--jax-shard-durations"] == str(tmp_path / "durations")
    assert "--jax-retry-differs" in argv and "--jax-rerun" in argv


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"workers": 0}, "-j 0: the number of cells run at once must be at least 1"),
        ({"retries": -1}, "--retries -1: the number of retries cannot be negative"),
        ({"results": "FILE"}, "is a file; name a folder"),
    ],
)
def test_a_request_that_cannot_run_is_one_line(changes, message, tmp_path):
    if changes.get("results") == "FILE":
        (tmp_path / "file").write_text("")
        changes = {"results": tmp_path / "file"}
    fields = {"versions": ("0.8.3",), "results": tmp_path, **changes}
    with pytest.raises(ConformanceError, match=message):
        RunRequest(**fields).check()


def test_relative_results_folders_become_absolute():
    assert RunRequest(versions=(), results=Path("results")).results.is_absolute()


def test_a_selection_splits_into_its_shard():
    selection = matrix.select_run([], "numerics", parse_shard("1/2"))
    assert 0 < len(selection.chosen) < len(selection.selected)
    assert selection.cell_ids == tuple(c.id for c in selection.chosen)


def test_shards_together_hold_every_selected_cell_once_team_cases_included(tmp_path):
    """issue 19 item 3: one split over every case package; each package's pytest gets its exact share and does not
    split it again."""
    from conformance.engine.folders import case_folders

    examples = Path(__file__).resolve().parents[1] / "examples" / "teamcases"
    folders = case_folders([str(examples)])
    everything = matrix.select_run(folders, "teamcases or numerics")
    assert any(c.case.package == "teamcases" for c in everything.selected)
    shares = [matrix.select_run(folders, "teamcases or numerics", parse_shard(f"{k}/3")).cell_ids for k in (1, 2, 3)]
    flat = [cell for share in shares for cell in share]
    assert sorted(flat) == sorted(c.id for c in everything.selected) and len(flat) == len(set(flat))
    request = RunRequest(versions=("0.12.0.1",), results=tmp_path, cell_ids=shares[0], shard=parse_shard("1/3"))
    argv = matrix.pytest_argv(type("Env", (), {"python": "python"})(), tmp_path / "x.json", request)
    assert "--jax-cells-are-shard" in argv and argv[argv.index("--jax-shard") + 1] == "1/3"


# ---------------------------------------------------------------- answers from stored results


class StoredBuilder:
    """A builder that says which pins and Python a release would get, and fails the test if asked to build."""

    def __init__(self, pin_file: Path, python: str = "3.13.0"):
        self.pin_file, self.python, self.prepared = pin_file, python, []

    def requirements(self, version):
        from conformance.envs.builder import Requirements

        return Requirements((), self.pin_file)

    def interpreter_for(self, version):
        return Interpreter("/usr/bin/python3", self.python)

    def prepare(self, version):
        self.prepared.append(version)
        raise AssertionError(f"jax {version} was built although its stored results answer")


def stored_setup(
    tmp_path,
    *,
    environment="env-digest",
    status="conforms",
    python="3.13.0",
    key=None,
    version="0.8.0",
    observation=None,
):
    """A results folder holding one real cell of `version`, stored with the key a run would have given it."""
    from conformance.core.case import load_cases
    from conformance.engine.keys import cell_key
    from conformance.engine.selection import all_cells

    target = next(c for c in all_cells(load_cases()) if c.id == "numerics.debug_nans_vmap_miss[vmap]")
    pins = tmp_path / "jax-0.8.0.txt"
    pins.write_text("jax==0.8.0 --hash=sha256:00\n")
    builder = StoredBuilder(pins)
    digest = builder.requirements(version).digest
    entry = cell(
        "numerics.debug_nans_vmap_miss",
        "vmap",
        status,
        observation,
        key=key if key is not None else cell_key(target.case, target.param, environment),
    )
    path = write(tmp_path / "results", version, matrix.host_platform(), [entry])
    data = json.loads(path.read_text())
    data["jax_conformance"].update(environment_digest=environment, pins_hash=digest, python=python, schema=3)
    path.write_text(json.dumps(data))
    request = RunRequest(versions=(version,), results=tmp_path / "results", cell_ids=(target.id,))
    return request, builder, target, path


def test_a_stored_cell_answers_without_building_and_run_matrix_skips_the_release(tmp_path):
    request, builder, target, path = stored_setup(tmp_path)
    assert list(matrix.stored_cells(request, builder, "0.8.0", [target])) == [target.id]
    events = []
    outcome = matrix.run_targets(request, builder, releases(request.versions), events.append, cells=[target])
    assert builder.prepared == [] and [done.path for done in outcome.finished] == [path]
    assert isinstance(events[0], matrix.AnsweredFromStorage) and events[0].cells == 1
    assert outcome.finished[0].launcher == "stored" and outcome.finished[0].ran == 0


@pytest.mark.parametrize("change", ["other key", "no digest", "other python", "other pins", "broken", "rerun"])
def test_a_stored_cell_answers_only_when_nothing_it_depends_on_changed(tmp_path, change):
    request, builder, target, path = stored_setup(
        tmp_path,
        key="0" * 32 if change == "other key" else None,
        environment="" if change == "no digest" else "env-digest",
        python="3.12.1" if change == "other python" else "3.13.0",
        status="crash" if change == "broken" else "conforms",
    )
    if change == "other pins":
        builder.pin_file.write_text("jax==0.8.0 --hash=sha256:11\n")
    if change == "rerun":
        request = RunRequest(versions=("0.8.0",), results=request.results, cell_ids=request.cell_ids, rerun=True)
    assert matrix.stored_cells(request, builder, "0.8.0", [target]) == {}
    with pytest.raises(AssertionError, match="was built"):
        matrix.run_targets(request, builder, releases(request.versions), cells=[target], keep_going=False)


def test_cli_diff_and_gate_of_two_stored_releases_build_and_run_nothing(tmp_path, monkeypatch, capsys):
    from conformance import cli

    stored_setup(tmp_path, version="0.7.2", status="differs", observation={"old_jit": "caught"})
    _, builder, _, _ = stored_setup(tmp_path, version="0.8.0", observation={"old_jit": "missed"})
    monkeypatch.setattr(cli, "EnvironmentBuilder", lambda: builder)
    selected = ["--results", str(tmp_path / "results"), "-k", "numerics.debug_nans_vmap_miss[vmap]"]
    assert cli.main(["diff", "0.7.2", "0.8.0", *selected]) == 0
    out = capsys.readouterr().out
    assert out.count("answered by stored results") == 2 and "numerics.debug_nans_vmap_miss[vmap]" in out
    assert "differs -> conforms" in out
    assert cli.main(["gate", "--from", "0.7.2", "--to", "0.8.0", *selected]) == 0
    assert capsys.readouterr().out.count("nothing built or run") == 2
    assert builder.prepared == []


def test_a_shard_file_of_a_ci_run_answers_bisect_but_not_a_whole_version_run(tmp_path):
    request, builder, target, path = stored_setup(tmp_path)
    path.rename(path.with_name(path.stem + "-shard2of2.json"))
    assert list(matrix.stored_cells(request, builder, "0.8.0", [target])) == [target.id]
    assert matrix.stored_run(request, builder, "0.8.0", [target]) is None  # gate and diff need the version's file


def test_a_file_holding_a_deleted_cases_cell_is_run_so_the_merge_drops_it(tmp_path):
    request, builder, target, path = stored_setup(tmp_path)
    assert matrix.stored_run(request, builder, "0.8.0", [target]) is not None
    data = json.loads(path.read_text())
    ghost = json.loads(json.dumps(data["tests"][0]))
    ghost["metadata"].update({"case": "numerics.deleted_case", "param": ""})
    data["tests"].append(ghost)
    path.write_text(json.dumps(data))
    assert list(matrix.stored_cells(request, builder, "0.8.0", [target])) == [target.id]  # bisect: still answers
    assert matrix.stored_run(request, builder, "0.8.0", [target]) is None


def test_a_run_answered_from_storage_removes_what_killed_runs_left(tmp_path, monkeypatch):
    """N03: after `kill -9`, `.running-*` files stayed until a later run ran a cell, and `jaxconf-run-*` work folders
    stayed for good; a run answered from storage alone now removes both (never those of a live process)."""
    import os
    import tempfile

    request, builder, target, path = stored_setup(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    dead = [request.results / ".running-999999999-x1.json", request.results / ".running-999999999-x1.json.cells"]
    live = request.results / f".running-{os.getpid()}-y2.json"
    for leftover in dead + [live]:
        leftover.write_text("{}")
    (scratch / "jaxconf-run-999999999-abc" / "cell1").mkdir(parents=True)
    (scratch / f"jaxconf-run-{os.getpid()}-def").mkdir()
    events = []
    matrix.run_targets(request, builder, releases(request.versions), events.append, cells=[target])
    assert isinstance(events[0], matrix.AnsweredFromStorage) and builder.prepared == []
    assert not any(p.exists() for p in dead) and live.exists() and path.exists()
    assert sorted(p.name for p in scratch.iterdir()) == [f"jaxconf-run-{os.getpid()}-def"]


def test_the_running_files_of_a_builds_folder_are_removed_too(tmp_path):
    """Review of N03: `builds/*/.running-*` stayed unless that build ran again; a bisect answered from storage removed
    nothing."""
    from conformance.engine.matrix import remove_orphans

    build = tmp_path / "results" / "builds" / "python-0123456789"
    build.mkdir(parents=True)
    dead = build / ".running-999999999-x1.json"
    dead.write_text("{}")
    remove_orphans(tmp_path / "results")
    assert not dead.exists()


def test_run_settings_take_keywords_only_and_the_cli_maps_each_option_to_its_field(tmp_path):
    """Eleven fields, several of one type: a positional call could swap `-j` and `--retries` unseen, so it is refused,
    and each option of `run` lands in its own field (distinct values, so a swap shows)."""
    from conformance import cli
    from conformance.cli_parser import build_parser

    with pytest.raises(TypeError):
        matrix.RunSettings(tmp_path)  # type: ignore[misc]
    args = build_parser().parse_args(
        [
            "run",
            "-k",
            "a or b",
            "-j",
            "3",
            "--retries",
            "2",
            "--retry-differs",
            "--launch",
            "spawn",
            "--rerun",
            "--results",
            str(tmp_path),
            "--cases",
            "team",
        ]
    )
    got = cli.settings(args, shard="S")
    assert got == matrix.RunSettings(
        results=tmp_path,
        expression="a or b",
        cases=("team",),
        shard="S",
        shard_durations=None,
        workers=3,
        retries=2,
        retry_differs=True,
        launcher="spawn",
        rerun=True,
        future=False,
    )
