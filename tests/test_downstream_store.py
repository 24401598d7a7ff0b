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
    return [to_cell(ident, "lib==1", NodeOutcome(n, s, 0.5, exc), key, [SP], {"lib": ("lib",)}, ("lib",))
            for n, s, exc in nodes]


def test_cells_are_stored_answered_by_key_and_a_suites_run_retires_only_its_own(tmp_path):
    exc = {"type": "AttributeError", "message": "no attribute 'x' at 0x1f",
           "frames": [[f"{SP}/lib/core_test.py", 1, "test_b"], [f"{SP}/lib/core.py", 9, "use_x"]]}
    first = _cells("lib_1", "k1", [("lib/core_test.py::test_a", "passed", None),
                                   ("lib/core_test.py::test_b", "failed", exc)])
    other = _cells("other_2", "k9", [("o_test.py::test_o", "passed", None)])
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "other_2", other, "3.11.7", 1.0)
    store_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", first, "3.11.7", 1.0)
    assert {node_of(c) for c in suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1")} == {
        "lib/core_test.py::test_a", "lib/core_test.py::test_b"}
    assert stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k1") is not None
    assert stored_suite(tmp_path, "0.8.0", "linux-x86_64", "lib_1", "k2") is None  # another key: run again
    assert stored_suite(tmp_path, "0.9.0", "linux-x86_64", "lib_1", "k1") is None  # no file
    failed = judged(next(c for c in suite_cells(tmp_path, "0.8.0", "linux-x86_64", "lib_1")
                         if node_of(c).endswith("test_b")))
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
    cell = _cells("lib_1", "k", [])[:0] or [to_cell("lib_1", "lib==1", NodeOutcome(
        UNINSTALLABLE_ID, "uninstallable", reason="uv pip check: lib 1 requires jax<0.9"), "k", [], {}, ())]
    assert cell[0].case == "downstream/lib_1.install" and node_of(cell[0]) == UNINSTALLABLE_ID
    assert judged(cell[0]).signature == "uninstallable: uv pip check: lib N requires jax<N"
    assert cell[0].status.value == "error"


@pytest.mark.parametrize("argv, said", [
    (["downstream", "chex==0.1.90"], "name the releases"),
    (["downstream", "no/such/folder", "--jax", "0.8.0"], "neither a library release"),
    (["downstream", "chex==0.1.90", "--from", "0.8.0"], "give both --from"),
    (["downstream", "chex==0.1.90", "--jax", "0.8.0", "--budget", "0"], "positive number of seconds"),
])
def test_bad_input_is_one_line_and_exit_2(argv, said, capsys, tmp_path):
    code = main([*argv, "--results", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1


def test_a_shard_index_outside_the_shards_is_bad_input(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "7")
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    code = main(["downstream", "chex==0.1.90", "--jax", "0.8.0", "--jax", "0.9.0", "--shard",
                 "--results", str(tmp_path)])
    assert code == 2 and "outside the 2 shards" in capsys.readouterr().err
