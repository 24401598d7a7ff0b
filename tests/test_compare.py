"""Field-level comparison of observations with expectations."""

from conformance.core.compare import diff


def test_equal_nested_facts_have_no_diff():
    facts = {"a": {"b": [1, 2], "c": None}, "d": "x"}
    assert diff(facts, {"a": {"b": [1, 2], "c": None}, "d": "x"}) == []


def test_changed_missing_and_unexpected_fields_are_named_by_path():
    found = diff({"a": {"b": 1, "c": 2}, "d": [1, 2]}, {"a": {"b": 5, "e": 3}, "d": [1, 3]})
    assert [(d.path, d.kind) for d in found] == [
        ("a.b", "changed"),
        ("a.c", "missing"),
        ("a.e", "unexpected"),
        ("d[1]", "changed"),
    ]


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


def test_each_difference_carries_both_sides_and_its_kind():
    from conformance.core.compare import Difference

    found = diff({"a": {"b": 1, "c": 2}, "t": [True]}, {"a": {"b": 5, "e": 3}, "t": [False]})
    assert found == [
        Difference("a.b", 1, 5, "changed"),
        Difference("a.c", 2, None, "missing"),
        Difference("a.e", None, 3, "unexpected"),
        Difference("t[0]", True, False, "changed"),
    ]
    assert [d.to_json() for d in found[1:3]] == [
        {"path": "a.c", "expected": 2, "observed": None, "kind": "missing"},
        {"path": "a.e", "expected": None, "observed": 3, "kind": "unexpected"},
    ]


def test_bools_compare_by_value_as_well_as_by_type():
    assert diff(True, True) == [] and diff({"f": False}, {"f": False}) == []
    assert [(d.path, d.expected, d.observed) for d in diff(True, False)] == [("<observation>", True, False)]
    assert diff(1, True)[0].kind == "changed" and diff(0, False) != []
    assert diff("x", "y", "top") == diff("x", "y", "top") != [] and diff("x", "y", "top")[0].path == "top"


def test_a_path_is_built_from_keys_and_indices_below_the_given_one():
    assert [d.path for d in diff({"a": [{"b": 1}]}, {"a": [{"b": 2}]}, "root")] == ["root.a[0].b"]
    assert [d.path for d in diff([1, 2], [1, 3])] == ["[1]"]
    assert [d.path for d in diff({1: "x"}, {1: "y"})] == ["1"]
