"""The one run path and the Target type (issue 27): every kind of target through `engine.matrix.run_targets`, where
each is stored, and the decisions' sessions answering from stored results (pytest and builds faked)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conformance import cli
from conformance.engine import matrix
from conformance.engine.targets import BUILD_KINDS, ExistingPython, Release, WheelFolder, given_builds, releases
from conformance.envs.builder import JaxEnvironment
from conformance.envs.index import PackageIndex
from conformance.envs.interpreters import Interpreter
from conformance.errors import ConformanceError
from conformance.results.store import ResultStore
from tests.test_decide_bisect import _index_page
from tests.test_engine_matrix import FakePytest, StoredBuilder, stored_setup


def test_each_target_kind_knows_its_label_name_and_options():
    assert Release("0.13.0rc1").label == "0.13.0rc1" and Release("0.8.3").failure_name() == "0.8.3"
    assert ExistingPython("/opt/py").failure_name("0.12.0.1") == "0.12.0.1 (--python /opt/py)"
    assert WheelFolder("dist").failure_name("0.12.0.1+corp.3") == "0.12.0.1+corp.3 (--wheels dist)"
    assert [kind.option for kind in BUILD_KINDS] == ["python", "wheels", "pair"]
    given = given_builds({"wheels": ["dist", "dist"], "python": ["/opt/py"]})
    assert given == [ExistingPython("/opt/py"), WheelFolder("dist")]  # the kinds' order, each once
    assert releases(["0.7.2", "0.8.0"]) == [Release("0.7.2"), Release("0.8.0")]


def test_a_build_without_a_label_of_its_own_is_stored_apart_from_the_release(tmp_path):
    """issue 31: a build is never stored as the release of its version, whether or not the release runs beside it;
    only a build with a local label of its own (`+corp.3`) names its own file beside the releases."""
    store = ResultStore(tmp_path)
    folders = store.target_folders(
        [
            ("0.12.0.1", ""),
            ("0.12.0.1", "wheels-abc"),
            ("0.13.0", "python-def"),
            ("0.12.0.1+corp.3", "wheels-123"),
            ("0.12.0.1+corp.3", "python-456"),
        ]
    )
    assert folders == [
        tmp_path,
        tmp_path / "builds" / "wheels-abc",
        tmp_path / "builds" / "python-def",
        tmp_path,
        tmp_path / "builds" / "python-456",
    ]


class BuildsBuilder:
    """Prepares a release or a given build (`--wheels`, `--python`) of a fixed version; never answers from storage."""

    def __init__(self, build_version: str):
        self.build_version, self.notices, self.prepared = build_version, [], []
        self.index = type("Index", (), {"notices": []})()

    def interpreter_for(self, version):
        return Interpreter("/usr/bin/python3", "3.12.1")

    def prepare(self, version):
        self.prepared.append(version)
        return JaxEnvironment(
            version, Path(f"/envs/{version}"), Interpreter("/usr/bin/python3", "3.12.1"), False, 0.0, "pins"
        )

    def _build(self, kind, where):
        self.prepared.append(f"{kind}:{where}")
        return JaxEnvironment(
            self.build_version,
            Path(f"/envs/{self.build_version}"),
            Interpreter("/usr/bin/python3", "3.12.1"),
            False,
            0.0,
            "f" * 64,
            source={"kind": kind, kind: str(where)},
        )

    def prepare_python(self, python):
        return self._build("python", python)

    def prepare_wheels(self, folder):
        return self._build("wheels", folder)


def test_one_run_path_runs_releases_and_builds_in_order_and_stores_each_where_the_store_says(tmp_path, monkeypatch):
    fake = FakePytest({"config.x": "conforms"})
    monkeypatch.setattr(subprocess, "Popen", fake)
    monkeypatch.setattr(JaxEnvironment, "python", property(lambda env: f"/envs/{env.version}/bin/python"))
    builder = BuildsBuilder("0.8.3")
    request = matrix.RunRequest(versions=("0.8.3",), results=tmp_path)
    targets = [Release("0.8.3"), WheelFolder("dist"), ExistingPython("/opt/py")]
    events = []
    outcome = matrix.run_targets(request, builder, targets, events.append)
    assert builder.prepared == ["wheels:dist", "python:/opt/py", "0.8.3"]  # builds before anything runs
    paths = [outcome.runs[t].path.relative_to(tmp_path).parts for t in targets]
    assert paths[0] == ("0.8.3-linux-x86_64.json",)
    assert paths[1][:2] == ("builds", "wheels-ffffffffff") and paths[2][0] == "builds" and paths[2][1] != paths[1][1]
    ready = [(e.version, e.origin) for e in events if isinstance(e, matrix.EnvironmentReady)]
    assert ready == [("0.8.3", ""), ("0.8.3", "wheels"), ("0.8.3", "python")]


def test_a_failing_build_is_named_by_its_version_and_option_and_the_next_target_runs(tmp_path, monkeypatch):
    fake = FakePytest({"config.x": "conforms"}, code=4)
    monkeypatch.setattr(subprocess, "Popen", fake)
    monkeypatch.setattr(JaxEnvironment, "python", property(lambda env: f"/envs/{env.version}/bin/python"))
    request = matrix.RunRequest(versions=(), results=tmp_path)
    outcome = matrix.run_targets(request, BuildsBuilder("0.9.0"), [WheelFolder("dist")])
    assert outcome.failed == ["0.9.0 (--wheels dist)"] and outcome.finished == []
    with pytest.raises(ConformanceError, match="exit code 4"):
        matrix.run_targets(request, BuildsBuilder("0.9.0"), [WheelFolder("dist")], keep_going=False)


def test_cli_bisect_of_two_stored_releases_builds_and_runs_nothing(tmp_path, monkeypatch, capsys):
    """The bisect session answers both ends from the results folder (the same keys as `run`'s reuse)."""
    stored_setup(tmp_path, version="0.7.2", status="differs", observation={"old_jit": "caught"})
    _, stored, _, _ = stored_setup(tmp_path, version="0.8.0", observation={"old_jit": "missed"})

    class Builder(StoredBuilder):
        def __init__(self):
            super().__init__(stored.pin_file)
            self.index = PackageIndex(tmp_path / "index", fetch={"jax": _index_page(["0.7.2", "0.8.0"])}.__getitem__)
            self.notices = []

    builders = []
    monkeypatch.setattr(cli, "EnvironmentBuilder", lambda: builders.append(Builder()) or builders[-1])
    argv = [
        "bisect",
        "numerics.debug_nans_vmap_miss:vmap",
        "--good",
        "0.7.2",
        "--bad",
        "0.8.0",
        "--results",
        str(tmp_path / "results"),
    ]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("(stored result)") == 2 and "first bad: jax 0.8.0" in out
    assert f"answered from stored results in {tmp_path / 'results'}: 0.7.2, 0.8.0; ran: nothing" in out
    assert builders[0].prepared == []


def test_cli_diff_of_a_local_build_reads_its_stored_file_and_builds_nothing(tmp_path, monkeypatch, capsys):
    """`diff` names a local build by its version: its stored file is read, nothing is built."""
    from tests.synthetic_results import VMAP, cell, write

    monkeypatch.setattr(matrix, "host_platform", lambda: "linux-x86_64")
    results = tmp_path / "results"
    write(results, "0.12.0.1+corp.3", "linux-x86_64", [cell(VMAP, "vmap", "differs", known_issue=True)])
    write(results, "0.12.0.1", "linux-x86_64", [cell(VMAP, "vmap", "conforms", known_issue=True)])
    monkeypatch.setattr(cli, "EnvironmentBuilder", lambda: pytest.fail("a builder was made"))
    base = results / "0.12.0.1-linux-x86_64.json"
    assert cli.main(["diff", str(base), "0.12.0.1+corp.3", "--results", str(results)]) == 0
    assert "(jax 0.12.0.1 -> 0.12.0.1+corp.3)" in capsys.readouterr().out
    assert cli.main(["diff", str(base), "0.12.0.1+corp.4", "--results", str(results)]) == 2
    assert "is a local build, on no package index" in capsys.readouterr().err
