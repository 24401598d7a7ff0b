"""`results.schema`: every field of a cell and of a run header checked as it is read, with a message naming the field;
the defaults of a field left out; cells of tests without metadata; build identities; whole result files."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from conformance.core.status import Status
from conformance.results.schema import (
    OLDEST_READABLE_SCHEMA,
    SCHEMA_VERSION,
    STORED_DEPTH,
    CellResult,
    RunHeader,
    SchemaError,
    build_identity,
    is_version,
    result_file_from_json,
    unjudged_cell,
    utc_now,
)

MINIMAL = {"case": "mod.probe", "status": "conforms"}
HEADER = {"schema_version": SCHEMA_VERSION, "jax": "0.8.3", "platform": "linux-x86_64"}


def refusal(data, where="metadata"):
    with pytest.raises(SchemaError) as caught:
        CellResult.from_json(data, where)
    return str(caught.value)


def header_refusal(data):
    with pytest.raises(SchemaError) as caught:
        RunHeader.from_json(data)
    return str(caught.value)


def test_a_minimal_cell_takes_every_default():
    found = CellResult.from_json(MINIMAL)
    assert found == CellResult(case="mod.probe", param="", rows=[], status=Status.CONFORMS)
    assert found.to_json()["status"] == "conforms" and found.cell_id == "mod.probe"
    assert not found.printed_differs
    assert CellResult.from_json({**MINIMAL, "param": "p1"}).cell_id == "mod.probe[p1]"


def test_every_field_round_trips():
    full = {
        "case": "team/mod.probe",
        "param": "a-1.b",
        "rows": ["r.one"],
        "status": "differs",
        "known_issue": True,
        "expected": {"x": 1},
        "observation": {"x": 2},
        "diff": [{"path": "x", "expected": 1, "observed": 2, "kind": "changed"}],
        "details": {"d": [1]},
        "reason": "why",
        "observation_verdict": "differs",
        "duration_s": 2,
        "stdout_tail": "out",
        "stderr_tail": "err",
        "command": "cmd",
        "launcher": "fork",
        "key": "k",
        "reused": True,
        "attempts": [{"status": "differs"}],
        "printed_expected": {"m": "w"},
        "printed_diff": [{"path": "m"}],
        "section": "§1",
        "heading": "§1 H",
        "claim": "c",
        "discrepancy": "q",
        "suite_version": "0.2.0",
        "build": "wheel-1",
        "warnings": [{"category": "DeprecationWarning", "message": "m"}],
        "harness": "teardown: KeyError: 'X'",
    }
    found = CellResult.from_json(full)
    assert found.to_json() == {
        **full,
        "duration_s": 2.0,
        "warnings": [{"category": "DeprecationWarning", "message": "m", "module": "", "deprecation": ""}],
    }
    assert isinstance(found.duration_s, float) and found.printed_differs


@pytest.mark.parametrize(
    "name, value, kind",
    [
        ("rows", "r", "list"),
        ("diff", {}, "list"),
        ("printed_diff", 1, "list"),
        ("printed_expected", [1], "null or dict"),
        ("attempts", {}, "list"),
        ("warnings", "w", "list"),
        ("case", 1, "str"),
        ("param", 1, "str"),
        ("known_issue", 1, "bool"),
        ("reason", 1, "str"),
        ("observation_verdict", 1, "null or str"),
        ("duration_s", "1", "float"),
        ("duration_s", True, "float"),
        ("stdout_tail", 1, "str"),
        ("stderr_tail", 1, "str"),
        ("command", 1, "str"),
        ("launcher", 1, "str"),
        ("key", 1, "str"),
        ("reused", "yes", "bool"),
        ("section", 1, "str"),
        ("heading", 1, "str"),
        ("claim", 1, "str"),
        ("discrepancy", 1, "str"),
        ("suite_version", 1, "str"),
        ("build", 1, "str"),
        ("status", 1, "str"),
        ("harness", None, "str"),
    ],
)
def test_each_cell_field_of_the_wrong_type_is_named(name, value, kind):
    assert refusal({**MINIMAL, name: value}, "tests[3].metadata") == (
        f"`tests[3].metadata.{name}` should be {kind}, not {type(value).__name__}"
    )


@pytest.mark.parametrize(
    "name, value, where, kind, got",
    [
        ("rows", ["a", 2], "rows[1]", "str", "int"),
        ("diff", [[]], "diff[0]", "dict", "list"),
        ("diff", [{"path": 1}], "diff[0].path", "str", "int"),
        ("printed_diff", [1], "printed_diff[0]", "dict", "int"),
        ("printed_diff", [{"path": None}], "printed_diff[0].path", "str", "NoneType"),
        ("attempts", [{}, "a"], "attempts[1]", "dict", "str"),
        ("warnings", [[]], "warnings[0]", "dict", "list"),
        ("warnings", [{"module": 3}], "warnings[0].module", "str", "int"),
        ("warnings", [{"category": None}], "warnings[0].category", "str", "NoneType"),
        ("warnings", [{"message": 1}], "warnings[0].message", "str", "int"),
        ("warnings", [{}, {"deprecation": []}], "warnings[1].deprecation", "str", "list"),
    ],
)
def test_each_entry_of_a_list_field_is_named_by_its_index(name, value, where, kind, got):
    assert refusal({**MINIMAL, name: value}) == f"`metadata.{where}` should be {kind}, not {got}"


def test_missing_and_unknown_required_fields():
    assert refusal({"status": "conforms"}) == "`metadata.case` is missing"
    assert refusal({"case": "m.p"}) == "`metadata.status` is missing"
    assert refusal({**MINIMAL, "status": "great"}) == (
        "`metadata.status` is 'great', not one of conforms, differs, unsupported, error, crash, timeout, skipped, flaky"
    )
    assert refusal([]) == "`metadata` should be dict, not list"
    assert refusal({**MINIMAL, "case": "nodot"}) == (
        "`metadata.case` is 'nodot', not a case id such as numerics.debug_nans_vmap_miss"
    )
    assert refusal({**MINIMAL, "case": "x" * 100}) == (
        f"`metadata.case` is {'x' * 80!r}, not a case id such as numerics.debug_nans_vmap_miss"
    )
    assert refusal({**MINIMAL, "param": "a b" + "c" * 100}) == (
        f"`metadata.param` is {('a b' + 'c' * 100)[:80]!r}, not a parameter name"
    )
    assert refusal({**MINIMAL, "duration_s": math.inf}) == "`metadata.duration_s` should be a finite number, not inf"
    assert CellResult.from_json({**MINIMAL, "duration_s": 3}).duration_s == 3.0
    assert CellResult.from_json({**MINIMAL, "printed_expected": None}).printed_expected is None


@pytest.mark.parametrize(
    "name", ["expected", "observation", "details", "diff", "printed_expected", "printed_diff", "attempts"]
)
def test_a_stored_value_nested_too_deep_is_refused_by_name(name):
    deep = current = []
    for _ in range(STORED_DEPTH + 5):
        current.append([])
        current = current[0]
    text = refusal({**MINIMAL, name: deep})
    assert text.startswith(f"`metadata.{name}` is not a stored value: it nests deeper than {STORED_DEPTH} levels")
    ok = current = []
    for _ in range(STORED_DEPTH - 1):
        current.append([])
        current = current[0]
    if name not in ("diff", "printed_diff", "attempts", "printed_expected"):
        assert getattr(CellResult.from_json({**MINIMAL, name: ok}), name) == ok


def test_a_minimal_header_takes_every_default():
    found = RunHeader.from_json(HEADER)
    assert found == RunHeader(jax="0.8.3", platform="linux-x86_64")
    assert found.to_json()["schema_version"] == SCHEMA_VERSION and found.wall_s == 0.0 and found.devices == []
    assert RunHeader.from_json({**HEADER, "devices": ["cpu:0", 1], "wall_s": 3}).devices == ["cpu:0", "1"]
    assert RunHeader.from_json({**HEADER, "wall_s": 3}).wall_s == 3.0
    assert RunHeader.from_json({**HEADER, "devices": None}).devices == []
    assert RunHeader.from_json({**HEADER, "unknown": 1, "jaxlib": None}).jaxlib is None


@pytest.mark.parametrize(
    "name, value, kind",
    [
        ("suite_version", 1, "str"),
        ("case_package", 1, "str"),
        ("launcher", 1, "str"),
        ("pins_hash", 1, "str"),
        ("environment_digest", 1, "str"),
        ("shard", 1, "str"),
        ("started_at", 1, "str"),
        ("finished_at", 1, "str"),
        ("jax_module_version", 1, "str"),
        ("jax_git_hash", 1, "str"),
        ("jaxlib_git_hash", 1, "str"),
        ("jaxlib", 1, "null or str"),
        ("numpy", 1, "null or str"),
        ("python", 1, "null or str"),
        ("backend", 1, "null or str"),
        ("devices", "cpu", "list"),
        ("case_folders", {}, "list"),
        ("source", [1], "dict"),
        ("wall_s", "1", "float"),
    ],
)
def test_each_header_field_of_the_wrong_type_is_named(name, value, kind):
    assert header_refusal({**HEADER, name: value}) == (
        f"`jax_conformance.{name}` should be {kind}, not {type(value).__name__}"
    )


def test_header_versions_and_names_are_checked():
    assert header_refusal({**HEADER, "source": {"kind": 1}}) == "`jax_conformance.source.kind` should be str, not int"
    assert header_refusal({**HEADER, "schema_version": True}) == (
        "`jax_conformance.schema_version` is missing or not an integer"
    )
    assert header_refusal({"jax": "0.8.3"}) == "`jax_conformance.schema_version` is missing or not an integer"
    assert header_refusal({**HEADER, "schema_version": OLDEST_READABLE_SCHEMA - 1}) == (
        f"`jax_conformance.schema_version` is {OLDEST_READABLE_SCHEMA - 1}; the oldest this reads is "
        f"{OLDEST_READABLE_SCHEMA}"
    )
    assert RunHeader.from_json({**HEADER, "schema_version": OLDEST_READABLE_SCHEMA}).schema_version == 1
    assert header_refusal({**HEADER, "schema_version": SCHEMA_VERSION + 1}) == (
        f"`jax_conformance.schema_version` is {SCHEMA_VERSION + 1}, newer than the {SCHEMA_VERSION} this "
        f"jax-conformance reads; upgrade jax-conformance"
    )
    assert header_refusal({**HEADER, "jax": "latest"}) == (
        "`jax_conformance.jax` should be a JAX version such as 0.4.38, not 'latest'"
    )
    assert header_refusal({**HEADER, "platform": "linux x86"}) == (
        "`jax_conformance.platform` should be a platform name such as linux-x86_64, not 'linux x86'"
    )
    assert header_refusal({**HEADER, "platform": None}).endswith("not None")
    assert RunHeader.from_json({**HEADER, "platform": "Linux-X86_64.v2"}).platform == "Linux-X86_64.v2"
    assert header_refusal([]) == "`jax_conformance` should be dict, not list"


@pytest.mark.parametrize(
    "text, ok",
    [
        ("0.4.38", True),
        ("0.12.0.1", True),
        ("0.13.0rc1", True),
        ("0.13.0.dev20261201", True),
        ("0.12.0.1+corp.3", True),
        ("1.0.post2", True),
        ("latest", False),
        ("1.0+", False),
        (1, False),
        (None, False),
        ("1.0\n", False),
        (" 0.4.38", False),
        ("0.4.38/results", False),
        # what packaging (and pip) read as versions, that a regex of its own refused (issue 60)
        ("0.4.38+corp_3", True),
        ("v0.4.38", True),
        ("v1.0", True),
        ("0.5.0-rc1", True),
        ("0.4.38+CORP-3", True),
    ],
)
def test_jax_versions(text, ok):
    assert is_version(text) is ok


def test_a_test_without_metadata_is_an_error_cell_named_by_its_node_id():
    found = unjudged_cell(
        {
            "nodeid": "conformance/cases/numerics.py::vmap_miss[p1]",
            "outcome": "failed",
            "call": {"crash": {"message": "boom\n  at   line 3"}},
        }
    )
    assert (found.case, found.param, found.status, found.rows) == ("numerics.vmap_miss", "p1", Status.ERROR, [])
    assert found.reason == "no cell result was recorded (boom at line 3)"
    setup = unjudged_cell({"nodeid": "x.py::probe", "outcome": "error", "setup": {"crash": {"message": "s"}}}, "team")
    assert (setup.case, setup.param, setup.reason) == ("team/x.probe", "", "no cell result was recorded (s)")
    bare = unjudged_cell({"nodeid": "x.py::probe", "outcome": "failed", "call": {}})
    assert bare.reason == "no cell result was recorded (pytest outcome: failed)"
    assert unjudged_cell({"nodeid": "x.py::probe"}).reason == "no cell result was recorded (pytest outcome: ?)"
    long = unjudged_cell({"nodeid": "x.py::probe", "call": {"crash": {"message": "w " * 400}}})
    assert len(long.reason) == len("no cell result was recorded ()") + 300
    assert unjudged_cell({"nodeid": "not a node id"}) is None and unjudged_cell({}) is None


def test_build_identities():
    assert build_identity(None) == build_identity({}) == build_identity({"kind": "index", "index_url": "u"}) == ""
    assert build_identity({"index_url": "u"}) == ""
    wheel = build_identity({"kind": "wheels", "wheels": ["a.whl"], "index_url": "one", "pre": True})
    assert wheel.startswith("wheels-") and len(wheel) == len("wheels-") + 10
    assert wheel == build_identity(
        {"kind": "wheels", "wheels": ["a.whl"], "index_url": "two", "extra_index_urls": ["x"], "find_links": ["y"]}
    )
    assert wheel != build_identity({"kind": "wheels", "wheels": ["b.whl"]})
    import hashlib
    import json

    assert (
        wheel
        == "wheels-"
        + hashlib.sha256(json.dumps({"kind": "wheels", "wheels": ["a.whl"]}, sort_keys=True).encode()).hexdigest()[:10]
    )


def test_a_result_file_reads_its_cells_and_unjudged_tests():
    report = {
        "jax_conformance": {**HEADER, "case_package": "teamcases"},
        "duration": 2,
        "tests": [
            {"nodeid": "x.py::a", "metadata": MINIMAL},
            {"nodeid": "teamcases/m.py::p", "outcome": "failed"},
            {"nodeid": "garbage"},
        ],
    }
    found = result_file_from_json(report, "here.json")
    assert [c.cell_id for c in found.cells] == ["mod.probe", "teamcases/m.p"]
    assert (found.source, found.duration, found.header.jax) == ("here.json", 2.0, "0.8.3")
    assert found.by_cell() == {("mod.probe", ""): found.cells[0], ("teamcases/m.p", ""): found.cells[1]}
    for duration in (math.nan, math.inf, "2", None):
        assert result_file_from_json({**report, "duration": duration}).duration == 0.0
    assert result_file_from_json({k: v for k, v in report.items() if k != "duration"}).duration == 0.0
    assert result_file_from_json(report).source == ""
    # a test without metadata does not end the reading: the cells after it are read too
    first = {
        **report,
        "tests": [
            {"nodeid": "x.py::lost", "outcome": "failed"},
            {"nodeid": "garbage"},
            {"nodeid": "x.py::a", "metadata": MINIMAL},
        ],
    }
    assert [c.cell_id for c in result_file_from_json(first).cells] == ["teamcases/x.lost", "mod.probe"]


def test_a_result_file_of_the_wrong_shape_says_what_is_wrong():
    cases = [
        ([], "the top level is not an object, so this is not a result file"),
        ({"tests": []}, "there is no `jax_conformance` object: not a result file of the suite's pytest plugin"),
        ({"jax_conformance": HEADER}, "`tests` is missing or not a list"),
        ({"jax_conformance": HEADER, "tests": ["x"]}, "`tests[0]` is not an object"),
        (
            {"jax_conformance": HEADER, "tests": [{"metadata": MINIMAL}, {"metadata": {"case": "m.p"}}]},
            "`tests[1].metadata.status` is missing",
        ),
    ]
    for report, message in cases:
        with pytest.raises(SchemaError) as caught:
            result_file_from_json(report)
        assert str(caught.value) == message


def test_a_build_identity_ignores_key_order_and_reads_any_value_as_text():
    from pathlib import Path

    one = build_identity({"kind": "wheels", "wheels": ["a.whl"], "python": "/x"})
    assert one == build_identity({"python": "/x", "wheels": ["a.whl"], "kind": "wheels"})
    assert build_identity({"kind": "python", "python": Path("/env/bin/python")}) == build_identity(
        {"kind": "python", "python": "/env/bin/python"}
    )


def test_diff_entries_without_a_path_are_read_and_whole_numbers_are_checked_as_such():
    from conformance.results.schema import _check

    found = CellResult.from_json({**MINIMAL, "diff": [{"expected": 1}], "printed_diff": [{"observed": 2}]})
    assert found.diff == [{"expected": 1}] and found.printed_diff == [{"observed": 2}]
    assert _check(3, int, "n") == 3
    for value in (True, 3.0, "3"):
        with pytest.raises(SchemaError) as caught:
            _check(value, int, "n")
        assert str(caught.value) == f"`n` should be int, not {type(value).__name__}"


def test_a_kind_without_a_name_is_named_by_its_text():
    from conformance.results.schema import _check

    with pytest.raises(SchemaError) as caught:
        _check("x", (int, float), "n")
    assert str(caught.value) == f"`n` should be {(int, float)}, not str"


def test_utc_now_is_utc_to_the_second_and_seconds_ago_goes_back():
    """A downstream suite's `started_at` is `utc_now(seconds_ago=wall_s)`: earlier than `finished_at`, by the wall
    time, and in UTC with its offset written (the report and merges compare these strings)."""
    earlier, now = utc_now(seconds_ago=3600), utc_now()
    assert now.endswith("+00:00") and earlier.endswith("+00:00") and "." not in now
    gap = (dt.datetime.fromisoformat(now) - dt.datetime.fromisoformat(earlier)).total_seconds()
    assert 3599 <= gap <= 3601  # to the second: a second may turn between the two calls
