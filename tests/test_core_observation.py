"""`observation`: the records a child writes (every key and its bounds), read back by `parse_record`."""

from __future__ import annotations

import json
import math

from conformance.core.observation import (
    MESSAGE_CHARS,
    OBSERVATION_SCHEMA,
    TRACEBACK_CHARS,
    error_record,
    observed_record,
    parse_record,
    unsupported_record,
)


def test_each_record_has_exactly_its_keys():
    assert observed_record("m.c", "p", {"x": 1}, {"raw": 2}) == {
        "schema": OBSERVATION_SCHEMA,
        "case": "m.c",
        "param": "p",
        "outcome": "observed",
        "facts": {"x": 1},
        "details": {"raw": 2},
    }
    assert unsupported_record("m.c", "", "jax.debug.log") == {
        "schema": OBSERVATION_SCHEMA,
        "case": "m.c",
        "param": "",
        "outcome": "unsupported",
        "reason": "jax.debug.log",
    }
    assert error_record("m.c", "p", "ValueError", "boom", "Traceback ...") == {
        "schema": OBSERVATION_SCHEMA,
        "case": "m.c",
        "param": "p",
        "outcome": "error",
        "error": {"type": "ValueError", "message": "boom", "traceback": "Traceback ..."},
    }
    assert error_record("m.c", "", "E", "m")["error"]["traceback"] == ""


def test_an_error_keeps_the_start_of_its_message_and_the_end_of_its_traceback():
    message = "m" * MESSAGE_CHARS + "LOST"
    traceback = "LOST" + "t" * (TRACEBACK_CHARS - 4) + "LAST"
    error = error_record("m.c", "", "E", message, traceback)["error"]
    assert error["message"] == "m" * MESSAGE_CHARS
    assert len(error["traceback"]) == TRACEBACK_CHARS and error["traceback"].endswith("LAST")
    assert not error["traceback"].startswith("LOST")


def test_records_read_back_as_written():
    for record in (
        observed_record("m.c", "", {"x": [1]}, None),
        unsupported_record("m.c", "", "api"),
        error_record("m.c", "", "E", "m", "t"),
    ):
        assert parse_record(json.dumps(record)) == (record, "")


# ------------------------------------------------------------------ reading a record back, exactly


def test_each_unusable_record_says_why_exactly():
    from conformance.core.observation import MAX_DEPTH

    assert parse_record(None) == (None, "the child wrote no observation")
    record, why = parse_record("{not json")
    assert record is None and why.startswith("the observation file is not JSON: Expecting property name")
    assert parse_record("[1]") == (None, "the observation file has no known outcome")
    assert parse_record('{"outcome": "vanished", "schema": 2}') == (None, "the observation file has no known outcome")
    assert parse_record('{"outcome": "observed", "schema": 1}') == (
        None,
        f"the observation file has schema 1, not {OBSERVATION_SCHEMA}",
    )
    assert parse_record('{"outcome": "observed"}') == (
        None,
        f"the observation file has schema None, not {OBSERVATION_SCHEMA}",
    )
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    for part in ("facts", "details"):
        text = f'{{"outcome": "observed", "schema": {OBSERVATION_SCHEMA}, "{part}": {deep}}}'
        assert parse_record(text) == (
            None,
            f"the observation's {part} cannot be used: it nests deeper than {MAX_DEPTH} levels at {'[0]' * MAX_DEPTH}",
        )


def test_warnings_are_read_with_exactly_their_four_keys_and_malformed_ones_left_out():
    from conformance.core.observation import warnings_of

    good = {"category": "DeprecationWarning", "message": "old", "module": "jax", "deprecation": "jax-1"}
    assert warnings_of({"warnings": [good, {"message": "only"}, "text", {"message": 3}, {**good, "extra": 1}]}) == [
        good,
        {"category": "", "message": "only", "module": "", "deprecation": ""},
        good,
    ]
    assert warnings_of(None) == [] and warnings_of({}) == [] and warnings_of({"warnings": "x"}) == []
    assert len(warnings_of({"warnings": [good] * 250})) == 200


# ------------------------------------------------------------------ bounds and non-finite floats


def test_a_value_over_its_bound_is_replaced_visibly():
    from conformance.core.observation import TRUNCATED, bounded

    assert bounded({"a": "é"}, 10) == {"a": "é"}  # 10 characters of JSON, non-ASCII counted once
    assert bounded({"a": "é"}, 9) == {TRUNCATED: "10 characters of JSON, the first 9 kept", "head": '{"a": "é"'}
    assert bounded("abcdef", 8) == "abcdef" and bounded("abcdefg", 8) == {
        TRUNCATED: "9 characters of JSON, the first 8 kept",
        "head": '"abcdefg',
    }
    assert bounded({1, 2}, 100) == {1, 2}  # not JSON: measured by its repr
    loop = []
    loop.append(loop)
    assert bounded(loop, 3) == {TRUNCATED: f"{len(repr(loop))} characters of JSON, the first 3 kept", "head": "[[."}


def test_non_finite_floats_are_stored_as_one_key_objects_and_read_back():
    from conformance.core.observation import decode_nonfinite, encode_nonfinite, is_encoded_nonfinite

    value = {"a": [math.nan, math.inf, -math.inf, 1.5, (2.0, -math.inf)], "b": {"c": math.inf}, "d": "x"}
    stored = encode_nonfinite(value)
    assert stored == {
        "a": [{"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}, 1.5, [2.0, {"$float": "-inf"}]],
        "b": {"c": {"$float": "inf"}},
        "d": "x",
    }
    back = decode_nonfinite(stored)
    assert math.isnan(back["a"][0]) and back["a"][1:4] == [math.inf, -math.inf, 1.5]
    assert back["a"][4] == [2.0, -math.inf] and back["b"] == {"c": math.inf} and back["d"] == "x"
    assert encode_nonfinite(-0.5) == -0.5 and encode_nonfinite(0.0) == 0.0
    assert is_encoded_nonfinite({"$float": "inf"}) and not is_encoded_nonfinite({"$float": "INF"})
    assert not is_encoded_nonfinite({"$float": "nan", "b": 1}) and not is_encoded_nonfinite({"x": "nan"})
    assert not is_encoded_nonfinite(["$float"]) and not is_encoded_nonfinite({})
    assert decode_nonfinite({"$float": "other"}) == {"$float": "other"}


# ------------------------------------------------------------------ what keeps a value from being JSON


def test_each_json_problem_is_named_with_where_it_is():
    from conformance.core.observation import json_problem

    assert json_problem({"a": [1, 2.5, None, True, "x", {"b": (1,)}], 3: 1, None: 2, 1.5: 3, False: 4}) == ""
    assert json_problem({"a": [1, {"b": math.nan}]}) == "it holds nan at a[1].b, which is not JSON"
    assert json_problem(math.inf) == "it holds inf, which is not JSON"
    assert json_problem([math.inf], nonfinite=True) == ""
    assert json_problem({"k": {"$float": "nan"}}, nonfinite=True) == (
        "it holds a dict whose only key is '$float' at k, the reserved stored form of a non-finite float; "
        "return the float itself or another key"
    )
    assert json_problem({"k": {"$float": "nan"}}) == "" and json_problem({"$float": 1, "b": 2}, nonfinite=True) == ""
    assert json_problem({"a": {(1, 2): 1}}) == "it has the key (1, 2) at a; JSON keys are strings"
    assert json_problem({math.nan: 1}) == "it has the key nan; JSON keys are strings"
    assert json_problem({1: 1}, string_keys=True) == "it has the key 1; JSON keys are strings"
    assert json_problem({None: 1}, string_keys=True) == "it has the key None; JSON keys are strings"
    assert json_problem({"a": [b"x"]}) == "it holds a bytes at a[0], which is not JSON"
    assert json_problem(object()) == "it holds a object, which is not JSON"
    assert json_problem([1], max_depth=2) == "" and json_problem([[1]], max_depth=2) == (
        "it nests deeper than 2 levels at [0][0]"
    )
    assert json_problem({"a": {"b": 1}}, max_depth=2) == "it nests deeper than 2 levels at a.b"


def test_a_value_with_too_many_values_is_refused(monkeypatch):
    from conformance.core import observation

    monkeypatch.setattr(observation, "MAX_VALUES", 5)
    assert observation.json_problem([1, 2, 3, 4]) == ""  # five values with the list itself
    assert observation.json_problem([1, 2, 3, 4, 5]) == "it holds more than 5 values"


def test_the_walk_goes_on_past_every_plain_value():
    from conformance.core.observation import json_problem

    for last in (1, "s", None, True, 1.5, [], {}, [1]):
        assert json_problem([math.nan, last]) == "it holds nan at [0], which is not JSON"
