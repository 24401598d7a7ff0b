"""Values that cannot be compared, stored or rendered are refused where written and where read.

Issue 19 item 10: a NaN or Infinity `duration_s` is a schema error; an observation nested
hundreds deep is an error record in the child (not a RecursionError in the parent), and one
in a hand-edited result file is a one-line `SchemaError` naming the field, so `diff` and
`gate` exit 2 instead of crashing.
"""

from __future__ import annotations

import json
import math

import pytest

from conformance import cli
from conformance.child.main import write_record
from conformance.core.case import Expect
from conformance.core.observation import (
    MAX_DEPTH,
    decode_nonfinite,
    encode_nonfinite,
    json_problem,
    observed_record,
    parse_record,
)
from conformance.results.schema import CellResult, SchemaError
from tests.synthetic_results import cell, write


def nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_json_problem_walks_deep_values_without_recursing():
    """issue 19 item 10: a value 5000 deep is described, not a RecursionError."""
    assert json_problem({"a": [1, 2.5, None, True, "x", {"b": (1,)}]}) == ""
    assert "deeper than" in json_problem(nested(5000))
    assert "which is not JSON" in json_problem({"x": [math.nan]})
    assert "bytes" in json_problem({"x": b"raw"})
    assert json_problem({1: 2}) == "" and "keys are strings" in json_problem({1: 2}, string_keys=True)
    shared = [1]
    assert json_problem({"a": shared, "b": shared}) == ""  # shared, not circular


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 500])
def test_the_child_writes_an_error_for_an_observation_nested_too_deep(tmp_path, depth):
    """issue 19 item 10: bounded where it is written: the record is an error saying why."""
    out = tmp_path / "observation.json"
    write_record(str(out), observed_record("fixture.deep", "", {"deep": nested(depth)}, {}))
    record = json.loads(out.read_text())
    assert record["outcome"] == "error" and "deeper than" in record["error"]["message"]
    write_record(str(out), observed_record("fixture.deep", "", {"deep": nested(MAX_DEPTH - 2)}, {}))
    assert json.loads(out.read_text())["outcome"] == "observed"


def test_the_parent_refuses_a_deep_observation_file():
    """issue 19 item 10: an observation file nested 900 deep is unusable, with a reason."""
    text = json.dumps(
        {"schema": 2, "case": "a.b", "param": "", "outcome": "observed", "facts": {"deep": nested(900)}, "details": {}}
    )
    record, why = parse_record(text)
    assert record is None and "deeper than" in why


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_duration_is_a_schema_error(value):
    """issue 19 item 10: `duration_s` NaN/Infinity never reaches JUnit (`time="nan"`) or the report."""
    with pytest.raises(SchemaError, match=r"`metadata.duration_s` should be a finite number"):
        CellResult.from_json(cell("numerics.a", duration_s=value))


def test_a_deep_stored_observation_is_a_schema_error_naming_the_field():
    """issue 19 item 10: refused where it is read, before anything walks it."""
    with pytest.raises(SchemaError, match=r"`metadata.observation` is not a stored value: it nests deeper"):
        CellResult.from_json(cell("numerics.a", observation={"deep": nested(900)}))


@pytest.mark.parametrize("command", ["diff", "gate"])
def test_diff_and_gate_exit_2_on_a_hand_edited_deep_or_nan_file(tmp_path, capsys, command):
    """issue 19 item 10: a result file edited by hand to hold a value 900 deep (or NaN) is one line, exit 2."""
    good = write(tmp_path / "a", "0.8.3", "linux-x86_64", [cell("numerics.a")])
    deep = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("numerics.a", observation={"d": nested(900)})])
    nan = write(tmp_path / "c", "0.8.3", "linux-x86_64", [cell("numerics.a", duration_s=math.nan)])
    for bad, field in ((deep, "observation"), (nan, "duration_s")):
        argv = (
            ["diff", str(good), str(bad)]
            if command == "diff"
            else ["gate", "--baseline", str(good), "--candidate", str(bad)]
        )
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert f"metadata.{field}`" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_nan_and_infinities_have_a_stored_form_that_round_trips():
    """issue 25: NaN and ±inf are observations: accepted before encoding, stored as {"$float": ...}, read back."""
    value = {"a": [math.nan, math.inf, -math.inf, 1.5], "b": (math.nan,)}
    assert "which is not JSON" in json_problem(value) and json_problem(value, nonfinite=True) == ""
    stored = encode_nonfinite(value)
    assert stored == {"a": [{"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}, 1.5], "b": [{"$float": "nan"}]}
    assert json_problem(stored) == "" and json.loads(json.dumps(stored, allow_nan=False)) == stored
    back = decode_nonfinite(stored)
    assert math.isnan(back["a"][0]) and back["a"][1:] == [math.inf, -math.inf, 1.5] and math.isnan(back["b"][0])


def test_a_probe_cannot_forge_the_stored_form():
    """issue 25: a dict whose only key is `$float` would read as a number, so a probe may not return one."""
    assert "reserved" in json_problem({"x": {"$float": "nan"}}, nonfinite=True)
    assert json_problem({"x": {"$float": "nan", "other": 1}}, nonfinite=True) == ""


def test_the_child_writes_nan_as_an_observation(tmp_path):
    """issue 25: the miscompile's NaN used to make the cell an error ("probe result is not plain JSON")."""
    out = tmp_path / "observation.json"
    write_record(str(out), observed_record("fixture.nan", "", {"ok": False}, {"jit_error": math.nan}))
    record, why = parse_record(out.read_text())
    assert why == "" and record["outcome"] == "observed"
    assert record["details"] == {"jit_error": {"$float": "nan"}}
    write_record(str(out), observed_record("fixture.nan", "", {"forged": {"$float": "inf"}}, {}))
    record, _ = parse_record(out.read_text())
    assert record["outcome"] == "error" and "reserved" in record["error"]["message"]


def test_an_expected_nan_is_held_in_the_stored_form():
    """issue 25: an expectation may name NaN; it compares equal to an observed NaN and is storable."""
    expect = Expect({"x": math.nan, "n": 1}, printed={"p": [math.inf]}, platforms={"a-*": {"x": 0.0}})
    assert expect.facts == {"x": {"$float": "nan"}, "n": 1}
    assert expect.printed == {"p": [{"$float": "inf"}]}
    assert expect.on("a-b") == {"x": 0.0, "n": 1}


def test_a_result_file_holding_a_stored_nan_is_read():
    """issue 25: the stored form is plain JSON, so a result file holding it passes the schema."""
    data = cell("program.x", observation={"error": {"$float": "nan"}}, details={"jit_error": {"$float": "nan"}})
    result = CellResult.from_json(json.loads(json.dumps(data, allow_nan=False)), "cell")
    assert result.observation == {"error": {"$float": "nan"}}
