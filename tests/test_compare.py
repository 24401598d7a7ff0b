"""Field-level comparison of observations with expectations."""

from conformance.core.compare import diff


def test_equal_nested_facts_have_no_diff():
    facts = {"a": {"b": [1, 2], "c": None}, "d": "x"}
    assert diff(facts, {"a": {"b": [1, 2], "c": None}, "d": "x"}) == []


def test_changed_missing_and_unexpected_fields_are_named_by_path():
    found = diff({"a": {"b": 1, "c": 2}, "d": [1, 2]}, {"a": {"b": 5, "e": 3}, "d": [1, 3]})
    assert [(d.path, d.kind) for d in found] == [
        ("a.b", "changed"), ("a.c", "missing"), ("a.e", "unexpected"), ("d[1]", "changed")]


def test_bool_and_number_are_not_confused():
    assert diff({"flag": True}, {"flag": 1})[0].kind == "changed"
    assert diff({"n": 1}, {"n": 1.0}) == []


def test_lists_of_other_length_differ_as_a_whole():
    found = diff({"l": [1, 2]}, {"l": [1, 2, 3]})
    assert [(d.path, d.expected, d.observed) for d in found] == [("l", [1, 2], [1, 2, 3])]


def test_tuples_in_expectations_compare_with_json_lists():
    assert diff({"t": ("a", "b")}, {"t": ["a", "b"]}) == []


def test_non_mapping_observation_is_one_difference():
    found = diff({"a": 1}, None)
    assert len(found) == 1 and found[0].path == "<observation>"
