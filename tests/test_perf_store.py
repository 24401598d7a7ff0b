"""Workload samples in the release's result file (schema 5 `perf`), merged like cells and reused by key."""

from __future__ import annotations

import json

from conformance.core.case import load_workloads
from conformance.perf.store import measured_source, reusable, store_perf, stored_perf, workload_key
from conformance.results.load import load_result_file
from conformance.results.schema import SCHEMA_VERSION
from conformance.results.store import ResultStore
from tests.synthetic_results import cell, report

PLATFORM = "linux-x86_64"
HOST = {"cores": 2, "cpu_model": "AMD EPYC"}


def entry(key="k1", run_s=1.0):
    return {"key": key, "claim": "c", "samples": [{"round": 0, "metrics": {"run_s": run_s, "compiles": 1}}]}


def test_samples_go_into_a_new_result_file_that_the_loader_reads(tmp_path):
    path = store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.a": entry()}, {"python": "3.13.1"})
    assert path == tmp_path / "0.8.3-linux-x86_64.json"
    loaded = load_result_file(path)
    assert loaded.header.schema_version == SCHEMA_VERSION and loaded.cells == []
    assert stored_perf(tmp_path, "0.8.3", PLATFORM)["performance.a"]["samples"][0]["metrics"]["run_s"] == 1.0


def test_storing_workloads_keeps_the_cells_and_the_other_workloads(tmp_path):
    ResultStore(tmp_path).merge_run(report("0.8.3", PLATFORM, [cell("a.one")], schema=SCHEMA_VERSION))
    store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.a": entry()})
    store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.b": entry(run_s=2.0)})
    store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.a": entry("k2", 3.0)})
    stored = stored_perf(tmp_path, "0.8.3", PLATFORM)
    assert sorted(stored) == ["performance.a", "performance.b"]
    assert stored["performance.a"]["key"] == "k2" and stored["performance.b"]["samples"][0]["metrics"]["run_s"] == 2
    assert [c.cell_id for c in load_result_file(tmp_path / "0.8.3-linux-x86_64.json").cells] == ["a.one"]


def test_a_run_of_cells_keeps_the_stored_workloads(tmp_path):
    store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.a": entry()})
    ResultStore(tmp_path).merge_run(report("0.8.3", PLATFORM, [cell("a.one")], schema=SCHEMA_VERSION))
    data = json.loads((tmp_path / "0.8.3-linux-x86_64.json").read_text())
    assert list(data["perf"]["workloads"]) == ["performance.a"] and data["perf"]["format"] == 1


def test_samples_are_reused_only_under_the_same_key():
    key = workload_key("def w(): ...", "pins-abc|3.13.1", "", HOST)
    assert key == workload_key("def w(): ...", "pins-abc|3.13.1", "", HOST)
    for other in (
        workload_key("def w(): 1", "pins-abc|3.13.1", "", HOST),
        workload_key("def w(): ...", "pins-abc|3.13.1", "--xla_cpu_use_thunk_runtime=false", HOST),
        workload_key("def w(): ...", "pins-abc|3.13.1", "", {**HOST, "cores": 16}),
    ):
        assert other != key
    assert len(reusable(entry(key), key)) == 1
    assert reusable(entry("old"), key) == [] and reusable({"key": key, "error": "boom", "samples": []}, key) == []


HELPED_MODULE = """
from conformance.core.case import Section
SECTION = Section("§9", "Ours")


def shared_inputs(n):
    return tuple(range(n))


@SECTION.workload(rows=["ours.helped"], claim="Uses the shared inputs.")
def helped():
    return (lambda *xs: sum(xs)), shared_inputs(3)


@SECTION.workload(rows=["ours.alone"], claim="Uses nothing of the module.")
def alone():
    return (lambda x: x.shared_inputs), (1,)
"""


def _helped_workloads(tmp_path, monkeypatch, forget, name, body):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "mine.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget.append(name)
    return {w.id.rsplit(".", 1)[1]: w for w in load_workloads(name)}


def test_the_key_covers_a_module_function_the_builder_calls(tmp_path, monkeypatch, forget):
    before = _helped_workloads(tmp_path, monkeypatch, forget, "wlpkg_helped_a", HELPED_MODULE)
    after = _helped_workloads(
        tmp_path, monkeypatch, forget, "wlpkg_helped_b", HELPED_MODULE.replace("tuple(range(n))", "tuple(range(n + 1))")
    )
    assert before["helped"].source() == after["helped"].source()  # the builder's own text is the same
    assert "def shared_inputs" in measured_source(before["helped"])
    assert measured_source(before["helped"]) != measured_source(after["helped"])
    assert measured_source(before["alone"]) == before["alone"].source()  # an attribute named like it is not a call
