"""Downstream cells in result files: stored through the store, answered by key, never retired by another run; and
the command line's bad input (one line, exit 2)."""

from __future__ import annotations

import json

import pytest

from conformance.cli import main
from conformance.core.casefolders import name_refusal
from conformance.downstream.cells import case_id, judged, node_of, to_cell
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.downstream.store import store_suite, stored_suite, suite_cells
from conformance.results.load import load_result_file
from conformance.results.merge import retired_cells

SP = "/env/site-packages"


def _cells(ident, key, nodes):
    return [
        to_cell(ident, "lib==1", NodeOutcome(n, s, 0.5, exc), key, [SP], {"lib": ("lib",)}, ("lib",))
        for n, s, exc in nodes
    ]


def test_cells_are_stored_answered_by_key_and_a_suites_run_retires_only_its_own(tmp_path):
    exc = {
        "type": "AttributeError",
        "message": "no attribute 'x' at 0x1f",
        "frames": [[f"{SP}/lib/core_test.py", 1, "test_b"], [f"{SP}/lib/core.py", 9, "use_x"]],
    }
    first = _cells(
        "lib_1", "k1", [("lib/core_test.py::test_a", "passed", None), ("lib/core_test.py::test_b", "failed", exc)]
    )
    other = _cells("other_2", "k9", [("o_test.py::test_o", "passed", None)])
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "other_2", other, "3.11.7", 1.0)
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", first, "3.11.7", 1.0)
    assert {node_of(c) for c in suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1")} == {
        "lib/core_test.py::test_a",
        "lib/core_test.py::test_b",
    }
    assert stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k1") is not None
    assert stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k2") is None  # another key: run again
    assert stored_suite(tmp_path, "0.9.0", "linux-x86_64", "lib_1", "k1") is None  # no file
    failed = judged(
        next(c for c in suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1") if node_of(c).endswith("test_b"))
    )
    assert failed.status == "failed" and failed.owner == "lib"
    assert failed.signature == "AttributeError: no attribute 'x' at 0x? @ lib/core.py:use_x"
    cell = next(c for c in suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1") if node_of(c).endswith("test_b"))
    assert judged(cell, {"lib": ("lib",)}) == failed  # computed again from the stored frames when judging
    assert judged(cell, {"other": ("lib",)}).owner == "other"
    # the suite's next run without test_b drops it, and keeps the other suite's cells
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", first[:1], "3.11.7", 1.0)
    assert len(suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1")) == 1
    assert len(suite_cells(tmp_path, "0.8.0", "linux-x86_64", "other_2")) == 1
    stored = load_result_file(tmp_path / "0.8.0-linux-x86_64.json")
    assert all(c.launcher == "downstream" for c in stored.cells)


def test_a_probe_run_never_retires_downstream_cells_and_no_case_folder_takes_the_namespace():
    retired = retired_cells(["values.x"])
    assert not retired(case_id("lib_1", "a.py::t"))
    assert retired("values.gone")
    assert "downstream" in name_refusal("downstream")


def test_an_uninstallable_release_is_one_cell_with_the_resolvers_reason():
    cell = _cells("lib_1", "k", [])[:0] or [
        to_cell(
            "lib_1",
            "lib==1",
            NodeOutcome(UNINSTALLABLE_ID, "uninstallable", reason="uv pip check: lib 1 requires jax<0.9"),
            "k",
            [],
            {},
            (),
        )
    ]
    assert cell[0].case == "downstream/lib_1.install" and node_of(cell[0]) == UNINSTALLABLE_ID
    assert judged(cell[0]).signature == "uninstallable: uv pip check: lib N requires jax<N"
    assert cell[0].status.value == "error"


@pytest.mark.parametrize(
    "argv, said",
    [
        (["downstream", "chex==0.1.90"], "name the releases"),
        (["downstream", "no/such/folder", "--jax", "0.8.0"], "neither a library release"),
        (["downstream", "chex==0.1.90", "--from", "0.8.0"], "give both --from"),
        (["downstream", "chex==0.1.90", "--jax", "0.8.0", "--budget", "0"], "positive number of seconds"),
        (["downstream", "tests", "--jax", "0.8.0", "--resolve", "each"], "--resolve each picks a library's version"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, said, capsys, tmp_path):
    code = main([*argv, "--results", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1


def test_a_shard_index_outside_the_shards_is_bad_input(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "7")
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    code = main(
        ["downstream", "chex==0.1.90", "--jax", "0.8.0", "--jax", "0.9.0", "--shard", "--results", str(tmp_path)]
    )
    assert code == 2 and "outside the 2 shards" in capsys.readouterr().err


class _Options:
    def uv_args(self):
        return []

    def urls(self):
        return []

    def digest(self):
        return "idx"


class _Builder:
    """A builder whose uv answers as told: `fail` names the step that fails (`install` or `check`) and what uv says."""

    def __init__(self, root, fail=None, said=""):
        self.root, self.options, self.fail, self.said, self.steps = root, _Options(), fail, said, []

    def interpreter_for(self, version):
        from conformance.envs.interpreters import Interpreter

        return Interpreter("/usr/bin/python3", "3.11.7")

    def jaxlib_for(self, version):
        return version

    def run(self, argv, **kwargs):
        import subprocess

        step = "venv" if argv[1] == "venv" else argv[2]
        self.steps.append(step)
        if step == "venv":
            import os

            os.makedirs(argv[-1])
        if step == "compile":
            out = argv[argv.index("-o") + 1]
            with open(out, "w") as f:
                f.write("jax==0.8.0\njaxlib==0.8.0\nlib==1\n")
        failed = step == self.fail
        return subprocess.CompletedProcess(
            argv, 1 if failed else 0, self.said if failed else "", self.said if failed else ""
        )


@pytest.mark.parametrize(
    "fail, said, why",
    [
        (
            "install",
            "  x No solution found when resolving dependencies:\n  lib==1 depends on jax<0.9",
            "does not install",
        ),
        ("check", "lib 1 requires jax<0.9, but jax 0.10.0 is installed", "uv pip check"),
    ],
)
def test_a_release_the_lock_cannot_serve_is_uninstallable_with_uvs_reason(tmp_path, fail, said, why):
    from conformance.downstream.lock import Uninstallable, lock_for, prepare_suite_env
    from conformance.downstream.manifest import read_suite

    suite = read_suite("lib==1")
    builder = _Builder(tmp_path, fail, said)
    lock = lock_for(suite, "0.8.0", builder)
    assert "jax==0.8.0" in lock.text and builder.steps == ["compile"]
    lock_for(suite, "0.8.0", builder)
    assert builder.steps == ["compile"]  # resolved once, then read from the cache
    found = prepare_suite_env(suite, lock, "0.10.0", builder)
    assert isinstance(found, Uninstallable) and why in found.reason and "jax<0.9" in found.reason
    assert not list((tmp_path / "downstream" / "envs").glob("lib_1-*-*[!k]"))  # nothing kept but the lock file


def test_a_baseline_the_requirements_do_not_resolve_with_is_one_line(tmp_path):
    from conformance.downstream.lock import lock_for
    from conformance.downstream.manifest import read_suite
    from conformance.errors import ConformanceError

    with pytest.raises(ConformanceError, match="do not resolve with jax 0.8.0: no solution"):
        lock_for(read_suite("lib==1"), "0.8.0", _Builder(tmp_path, "compile", "no solution"))


def test_a_budgets_run_keeps_what_it_left_out_and_is_answered_by_its_own_cells(tmp_path):
    whole = _cells(
        "lib_1", "k1", [("a.py::fast", "passed", None), ("a.py::slow", "passed", None), ("b.py::t", "passed", None)]
    )
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", whole, "3.11.7", 1.0)
    part = _cells("lib_1", "k2", [("a.py::fast", "passed", None), ("b.py", "collection_error", None)])
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", part, "3.11.7", 1.0, whole=False)
    assert {node_of(c) for c in suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1")} == {
        "a.py::fast",
        "a.py::slow",
        "b.py::t",
        "b.py",
    }  # the slow test keeps its recorded duration
    found = stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k2", ["a.py::fast", "b.py::t"])
    assert {node_of(c) for c in found} == {"a.py::fast", "b.py"}  # b.py::t answered by its module's error
    assert stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k2", ["a.py::fast", "a.py::slow"]) is None
    assert stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k1") is None  # the whole run: run again


def test_the_reports_probe_table_leaves_downstream_tests_out(tmp_path):
    from conformance.downstream.cells import without_tests

    store_suite(
        tmp_path, "0.8.0", "linux-x86_64", "lib_1", _cells("lib_1", "k", [("a.py::t", "passed", None)]), "3.11.7", 1.0
    )
    loaded = load_result_file(tmp_path / "0.8.0-linux-x86_64.json")
    assert len(loaded.cells) == 1 and without_tests([loaded])[0].cells == []


def test_a_suites_file_records_when_it_ran_and_a_later_suite_widens_the_span(tmp_path, monkeypatch):
    """The report's column says when its results were measured: a downstream file had no `started_at` or
    `finished_at`, so its column said nothing; a later suite in the same file keeps the first start, moves the end."""
    import conformance.downstream.store as store

    clock = {"now": "", "start": ""}
    monkeypatch.setattr(store, "utc_now", lambda seconds_ago=0.0: clock["start"] if seconds_ago else clock["now"])
    path = tmp_path / "0.8.0-linux-x86_64.json"

    def stored(ident, start, now):
        clock.update(start=start, now=now)
        cells = _cells(ident, "k", [(f"{ident}.py::t", "passed", None)])
        store_suite(tmp_path, "0.8.0", "linux-x86_64", ident, cells, "3.11.7", 300.0)
        header = load_result_file(path).header
        return header.started_at, header.finished_at

    assert stored("lib_1", "2026-12-06T10:00:00+00:00", "2026-12-06T10:05:00+00:00") == (
        "2026-12-06T10:00:00+00:00",
        "2026-12-06T10:05:00+00:00",
    )
    assert stored("other_2", "2026-12-06T10:55:00+00:00", "2026-12-06T11:00:00+00:00") == (
        "2026-12-06T10:00:00+00:00",
        "2026-12-06T11:00:00+00:00",
    )
    # a file whose header has no times (written before they were recorded) takes this suite's
    data = json.loads(path.read_text())
    data["jax_conformance"]["started_at"] = data["jax_conformance"]["finished_at"] = ""
    path.write_text(json.dumps(data))
    assert stored("third_3", "2026-12-06T12:00:00+00:00", "2026-12-06T12:01:00+00:00") == (
        "2026-12-06T12:00:00+00:00",
        "2026-12-06T12:01:00+00:00",
    )
