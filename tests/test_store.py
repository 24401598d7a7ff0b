"""The results store: the locked merge of a run into a version's file, the set-aside, headers, reuse reading."""

from __future__ import annotations

import json
import threading

from conformance.results.load import load_result_file
from conformance.results.store import REUSED_ONLY, ResultStore, merged_header, result_name, reusable_cells
from tests.synthetic_results import cell, report, write

PLATFORM = "linux-x86_64"


def run(cells, jax="0.8.3", **head):
    data = report(jax, PLATFORM, cells)
    data["jax_conformance"].update(head)
    return data


def stored_ids(path):
    return sorted(c.cell_id for c in load_result_file(path).cells)


def test_a_first_run_is_stored_under_its_version_and_platform(tmp_path):
    store = ResultStore(tmp_path / "results")
    stored = store.merge_run(run([cell("a.one"), cell("a.two", "p", "differs")]))
    assert stored.path == tmp_path / "results" / "0.8.3-linux-x86_64.json"
    assert stored.dropped == [] and stored.set_aside is None
    assert stored_ids(stored.path) == ["a.one", "a.two[p]"]
    assert json.loads(stored.path.read_text())["summary"]["total"] == 2


def test_a_subset_run_keeps_the_other_cells_and_drops_retired_ones(tmp_path):
    store = ResultStore(tmp_path)
    store.merge_run(run([cell("a.one"), cell("a.two"), cell("a.gone")]))
    stored = store.merge_run(run([cell("a.one", status="differs")]), retired=lambda cell_id: cell_id == "a.gone")
    assert stored.dropped == ["a.gone"]
    assert stored_ids(stored.path) == ["a.one", "a.two"]
    assert {c.cell_id: c.status.value for c in load_result_file(stored.path).cells}["a.one"] == "differs"


def test_a_shard_is_stored_in_its_own_file(tmp_path):
    stored = ResultStore(tmp_path).merge_run(run([cell("a.one")]), shard_suffix="-shard1of2")
    assert stored.path.name == "0.8.3-linux-x86_64-shard1of2.json" == result_name("0.8.3", PLATFORM, "-shard1of2")


def test_an_unreadable_stored_file_is_set_aside_and_said_so(tmp_path):
    path = tmp_path / "0.8.3-linux-x86_64.json"
    path.write_text('{"tests": [', encoding="utf-8")
    stored = ResultStore(tmp_path).merge_run(run([cell("a.one")]))
    assert stored.set_aside is not None and stored.set_aside.path == path
    assert stored.set_aside.kept_as.read_text() == '{"tests": ['  # kept, never lost
    assert stored.set_aside.kept_as.name.startswith(".0.8.3-linux-x86_64.json.unreadable-")
    assert "could not be merged into" in stored.set_aside.describe()
    assert stored.set_aside.kept_as.name in stored.set_aside.describe()
    assert stored_ids(path) == ["a.one"]


def test_a_stored_cell_of_the_wrong_shape_is_dropped_and_named_not_the_file(tmp_path):
    path = write(tmp_path, "0.8.3", PLATFORM, [cell("a.one")])
    data = json.loads(path.read_text())
    data["tests"][0]["metadata"]["status"] = "no-such-status"
    path.write_text(json.dumps(data))
    stored = ResultStore(tmp_path).merge_run(run([cell("a.two")]))
    assert stored.set_aside is None and "no-such-status" in stored.unreadable_cells[0]
    assert stored_ids(path) == ["a.two"]


def test_merged_headers_keep_the_launcher_of_the_run_that_started_children():
    head = merged_header({"launcher": "fork"}, {"launcher": REUSED_ONLY, "case_package": "conformance.cases"})
    assert head["launcher"] == "fork"
    assert merged_header({"launcher": "fork"}, {"launcher": "spawn"})["launcher"] == "spawn"
    assert merged_header(None, {"launcher": REUSED_ONLY})["launcher"] == REUSED_ONLY


def test_the_stored_header_is_merged_into_the_file(tmp_path):
    store = ResultStore(tmp_path)
    store.merge_run(run([cell("a.one")], launcher="fork", case_folders=[{"name": "team", "hash": "1"}]))
    stored = store.merge_run(run([cell("a.one")], launcher=REUSED_ONLY))
    head = json.loads(stored.path.read_text())["jax_conformance"]
    assert head["launcher"] == "fork" and head["case_folders"] == [{"name": "team", "hash": "1"}]


def test_two_runs_merging_into_one_file_at_once_lose_no_cell(tmp_path):
    store = ResultStore(tmp_path)

    def merge(name):
        for i in range(10):
            store.merge_run(run([cell(f"{name}.c{i}")]))

    threads = [threading.Thread(target=merge, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(stored_ids(tmp_path / "0.8.3-linux-x86_64.json")) == 20


def test_reusable_cells_come_from_the_version_file_the_shard_file_first(tmp_path):
    write(tmp_path, "0.8.3", PLATFORM, [cell("a.one")])
    write(tmp_path, "0.8.3", PLATFORM, [cell("a.two")], name="0.8.3-linux-x86_64-shard1of2.json")
    assert set(ResultStore(tmp_path).reusable_cells("0.8.3", PLATFORM)) == {"a.one"}
    assert set(reusable_cells(tmp_path, "0.8.3", PLATFORM, "-shard1of2")) == {"a.two"}
    assert set(ResultStore(tmp_path).reusable_cells("0.8.3", PLATFORM, "-shard1of2")) == {"a.two"}
    assert set(reusable_cells(tmp_path, "0.8.3", PLATFORM, "-shard2of2")) == {"a.one"}
    assert set(reusable_cells(tmp_path / "0.8.3-linux-x86_64.json", "0.8.3", PLATFORM)) == {"a.one"}
    assert reusable_cells(tmp_path, "0.4.38", PLATFORM) == {} and reusable_cells(None, "0.8.3", PLATFORM) == {}
    (tmp_path / "0.9.0-linux-x86_64.json").write_text("not json")
    assert reusable_cells(tmp_path, "0.9.0", PLATFORM) == {}


def test_a_stored_file_of_another_version_or_platform_is_set_aside(tmp_path):
    """issue 19 item 6: a copied or linked file of 0.11.2 never makes its cells 0.12.0.1 results."""
    store = ResultStore(tmp_path)
    other = ResultStore(tmp_path / "other").merge_run(run([cell("a.one"), cell("a.two")], jax="0.11.2")).path
    (tmp_path / "0.12.0.1-linux-x86_64.json").symlink_to(other)
    stored = store.merge_run(run([cell("a.one")], jax="0.12.0.1"))
    assert stored.set_aside is not None and "jax 0.11.2" in stored.set_aside.why
    assert stored_ids(stored.path) == ["a.one"]  # a.two of 0.11.2 did not become a 0.12.0.1 result
    assert stored_ids(other) == ["a.one", "a.two"]  # and the other run's own file is untouched


def test_a_file_of_a_newer_schema_is_refused_before_any_work_and_kept(tmp_path):
    """issue 19 item 8: two versions of the tool sharing a folder never destroy each other's results."""
    import pytest

    from conformance.engine.matrix import RunRequest
    from conformance.errors import ConformanceError

    newer = write(tmp_path, "0.12.0.1", PLATFORM, [cell("a.one")], schema=99)
    before = newer.read_text()
    with pytest.raises(ConformanceError, match="newer jax-conformance .*schema 99"):
        RunRequest(versions=("0.12.0.1",), results=tmp_path).check()
    with pytest.raises(ConformanceError, match="newer jax-conformance"):
        ResultStore(tmp_path).merge_run(run([cell("a.two")], jax="0.12.0.1"))
    assert newer.read_text() == before and not list(tmp_path.glob(".*unreadable*"))


def test_one_unreadable_cell_is_dropped_and_named_and_the_others_kept(tmp_path):
    """issue 19 item 9: never set a file aside for one cell; non-ASCII ids of a team's folder are valid cells."""
    store = ResultStore(tmp_path)
    path = store.merge_run(run([cell("équipe/prüfung.größe"), cell("a.keep"), cell("a.bad")])).path
    data = json.loads(path.read_text())
    data["tests"][2]["metadata"]["status"] = "exploded"
    path.write_text(json.dumps(data))
    stored = store.merge_run(run([cell("a.new")]))
    assert stored.set_aside is None
    assert len(stored.unreadable_cells) == 1 and "exploded" in stored.unreadable_cells[0]
    assert stored_ids(stored.path) == ["a.keep", "a.new", "équipe/prüfung.größe"]


def test_a_release_and_a_build_of_one_version_never_share_a_file_either_way(tmp_path, monkeypatch):
    """A release's file met by a build's run, and a build's file met by the release's run, are each set aside (kept,
    named, and why); one build's runs merge into its own file. Two set aside in one second both stay (the second
    once replaced the first, losing the release's results)."""
    from types import SimpleNamespace

    from conformance.results import store as store_module
    from conformance.results.schema import build_identity

    monkeypatch.setattr(store_module, "time", SimpleNamespace(time=lambda: 1700000000.5))

    wheel = {"kind": "wheel", "wheels": ["jax-0.8.3-py3-none-any.whl"]}
    built = build_identity(wheel)
    store = ResultStore(tmp_path)
    path = store.merge_run(run([cell("a.release")])).path
    stored = store.merge_run(run([cell("a.build")], source=wheel))
    assert stored.set_aside is not None and stored.set_aside.path == path == stored.path
    assert stored.set_aside.why == f"it holds the results of the release, not of another build ({built})"
    assert stored.set_aside.kept_as.name == ".0.8.3-linux-x86_64.json.other-build-1700000000"
    assert stored_ids(stored.set_aside.kept_as) == ["a.release"] and stored_ids(path) == ["a.build"]
    again = store.merge_run(run([cell("a.second")], source=wheel))
    assert again.set_aside is None and stored_ids(path) == ["a.build", "a.second"]
    back = store.merge_run(run([cell("a.release")], source={"kind": "index"}))
    assert back.set_aside is not None and back.set_aside.path == path
    assert back.set_aside.why == f"it holds the results of another build ({built}), not of another build (the release)"
    assert stored_ids(back.set_aside.kept_as) == ["a.build", "a.second"] and stored_ids(path) == ["a.release"]
    assert back.set_aside.kept_as.name == ".0.8.3-linux-x86_64.json.other-build-1700000000-2"
    assert stored_ids(stored.set_aside.kept_as) == ["a.release"]  # the first one set aside is still there
    assert back.set_aside.describe() == (
        f"{path} could not be merged into ({back.set_aside.why}); kept it as "
        f"{back.set_aside.kept_as.name} and wrote a new one"
    )


def test_unreadable_files_set_aside_in_one_second_are_all_kept(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from conformance.results import store as store_module

    monkeypatch.setattr(store_module, "time", SimpleNamespace(time=lambda: 1700000000.0))
    path = tmp_path / "0.8.3-linux-x86_64.json"
    kept = []
    for text in ("{ first", "{ second", "{ third"):
        path.write_text(text, encoding="utf-8")
        kept.append(ResultStore(tmp_path).merge_run(run([cell("a.one")])).set_aside.kept_as)
    assert [p.name for p in kept] == [
        ".0.8.3-linux-x86_64.json.unreadable-1700000000",
        ".0.8.3-linux-x86_64.json.unreadable-1700000000-2",
        ".0.8.3-linux-x86_64.json.unreadable-1700000000-3",
    ]
    assert [p.read_text() for p in kept] == ["{ first", "{ second", "{ third"]


def test_merged_headers_sort_case_folders_by_name_and_keep_a_team_package_only_when_this_run_names_none():
    head = merged_header(
        {"case_folders": [{"name": "zeta", "hash": "1"}, {"name": "beta", "hash": "1"}]},
        {"case_folders": [{"name": "alpha", "hash": "2"}, {"name": "zeta", "hash": "2"}]},
    )
    assert head["case_folders"] == [
        {"name": "alpha", "hash": "2"},
        {"name": "beta", "hash": "1"},
        {"name": "zeta", "hash": "2"},
    ]
    team = {"case_package": "teamcases"}
    assert merged_header(team, {"case_package": "conformance.cases"})["case_package"] == "conformance.cases"
    assert merged_header(team, {})["case_package"] == "teamcases"
    assert "case_package" not in merged_header({}, {})


def test_a_store_folder_is_made_with_its_parents_and_its_files_are_written_with_one_space_indents(tmp_path):
    folder = tmp_path / "a" / "b" / "results"
    stored = ResultStore(folder).merge_run(run([cell("a.one")]))
    text = stored.path.read_text(encoding="utf-8")
    assert text.startswith('{\n "') and '\n  "' in text and json.loads(text)["tests"]
    assert (folder / ".0.8.3-linux-x86_64.json.lock").exists()  # the lock lives beside the file it guards


def _set_aside_why(tmp_path, text):
    path = tmp_path / "0.8.3-linux-x86_64.json"
    path.write_text(text, encoding="utf-8")
    stored = ResultStore(tmp_path).merge_run(run([cell("a.one")]))
    assert stored.set_aside is not None and stored.set_aside.kept_as.read_text(encoding="utf-8") == text
    assert stored_ids(path) == ["a.one"]
    return stored.set_aside.why


def test_a_stored_file_that_is_no_result_file_is_set_aside_with_why(tmp_path):
    not_ours = "not a result file of the suite (no header or no tests)"
    header = json.dumps(run([])["jax_conformance"])
    assert _set_aside_why(tmp_path, "[1, 2]") == not_ours
    assert _set_aside_why(tmp_path, '{"jax_conformance": "x", "tests": []}') == not_ours
    assert _set_aside_why(tmp_path, '{"jax_conformance": ' + header + ', "tests": {}}') == not_ours
    assert _set_aside_why(tmp_path, '{"tests": []}') == not_ours


def test_a_long_reason_to_set_a_file_aside_is_cut_to_200_characters(tmp_path):
    data = run([cell("a.one")], jax="0.8.3" + "1" * 300)
    path = tmp_path / "0.8.3-linux-x86_64.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    why = ResultStore(tmp_path).merge_run(run([cell("a.two")])).set_aside.why
    assert len(why) == 200 and why.startswith("its header says jax 0.8.3111")


def test_a_file_of_the_current_schema_is_merged_and_an_unreadable_one_does_not_hide_a_newer_one(tmp_path):
    import pytest

    from conformance.errors import ConformanceError
    from conformance.results.schema import SCHEMA_VERSION

    write(tmp_path, "0.8.3", PLATFORM, [cell("a.one")], schema=SCHEMA_VERSION)
    ResultStore(tmp_path).refuse_newer_files()
    stored = ResultStore(tmp_path).merge_run(run([cell("a.two")], schema_version=SCHEMA_VERSION))
    assert stored.set_aside is None and stored_ids(stored.path) == ["a.one", "a.two"]
    (tmp_path / "0.1.0-linux-x86_64.json").write_text("{ unreadable")  # sorted first
    newer = write(tmp_path, "0.9.0", PLATFORM, [cell("a.one")], schema=SCHEMA_VERSION + 1)
    with pytest.raises(ConformanceError) as caught:
        ResultStore(tmp_path).refuse_newer_files()
    assert str(caught.value) == (
        f"{newer} was written by a newer jax-conformance (result schema "
        f"{SCHEMA_VERSION + 1}; this one writes {SCHEMA_VERSION}); upgrade "
        f"jax-conformance, or give this run another --results folder"
    )
    ResultStore(tmp_path / "missing").refuse_newer_files()


def test_unreadable_cells_are_named_exactly_and_entries_without_metadata_kept_by_node_id():
    from conformance.results.store import _drop_unreadable_cells

    long_status = "no-such-status " + "x " * 100
    data = {
        "tests": [
            "a string",
            {"nodeid": "x.py::bad", "outcome": "passed", "metadata": {**cell("a.bad"), "status": long_status}},
            {"outcome": "failed"},
            {"nodeid": "x.py::lost[p]", "outcome": "failed"},
            {"nodeid": "x.py::good", "outcome": "passed", "metadata": cell("a.good")},
            {"metadata": {**cell("a.nameless"), "status": "exploded"}},
        ]
    }
    kept = [data["tests"][3], data["tests"][4]]
    bad = _drop_unreadable_cells(data)
    assert data["tests"] == kept
    assert bad[0] == "tests[0] (not an object)"
    assert bad[1].startswith("x.py::bad (") and "tests[1].metadata" in bad[1] and "no-such-status x x" in bad[1]
    assert len(bad[1]) == len("x.py::bad (") + 120 + 1 and bad[1].endswith(")")
    assert bad[2] == "tests[2] (no cell metadata and no node id)"
    assert bad[3].startswith("tests[5] (") and "tests[5].metadata" in bad[3] and "exploded" in bad[3]
    assert len(bad) == 4
