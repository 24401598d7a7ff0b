"""`api diff`'s logic on synthetic censuses: each kind of change, moves, signatures, dating over a chain, names a
census cannot tell, and the public JSON shape."""

from __future__ import annotations

import json

import pytest

from conformance.api.census import FORMAT_VERSION
from conformance.api.diff import CHANGES, Change, changes_json, changes_named, diff_chain, signature_changes, since_of
from conformance.api.model import census_from
from conformance.errors import ConformanceError
from tests.api_censuses import census, fn, module, removed

P, K = "positional_or_keyword", "keyword_only"
TREE_MAP_MSG = "jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer)"


def by_name(changes):
    return {(c.name, c.change): c for c in changes}


def test_each_state_change_is_found_with_its_kind():
    a = census(
        "1.0",
        {
            "jax.old": fn(("x", P, None)),
            "jax.stays": fn(("x", P, None)),
            "jax.warns": fn(("x", P, None)),
            "jax.was_warned": fn(("x", P, None), state="deprecated", message="jax.was_warned is deprecated"),
        },
    )
    b = census(
        "2.0",
        {
            "jax.new": fn(("x", P, None)),
            "jax.stays": fn(("x", P, None)),
            "jax.warns": fn(("x", P, None), state="deprecated", message="jax.warns is deprecated"),
            "jax.was_warned": fn(("x", P, None)),
        },
    )
    found = by_name(diff_chain([a, b]))
    assert set(found) == {
        ("jax.old", "removed"),
        ("jax.new", "added"),
        ("jax.warns", "deprecated"),
        ("jax.was_warned", "undeprecated"),
    }
    assert found[("jax.warns", "deprecated")].message == "jax.warns is deprecated"
    assert all(c.since == "2.0" for c in found.values())


def test_a_removal_carries_jax_own_words_from_both_releases():
    a = census(
        "0.5.3",
        {"jax.tree_map": fn(("f", P, None), state="deprecated", message=TREE_MAP_MSG, replacement="jax.tree.map")},
    )
    b = census("0.6.2", {"jax.tree_map": removed("jax.tree_map was removed in JAX v0.6.0: use jax.tree.map")})
    (change,) = diff_chain([a, b])
    assert (change.name, change.change) == ("jax.tree_map", "removed")
    assert f"deprecated on 0.5.3: {TREE_MAP_MSG}" in change.message
    assert "AttributeError: jax.tree_map was removed in JAX v0.6.0" in change.message


def test_changes_are_dated_to_the_first_release_of_the_chain_that_shows_them():
    names = {"jax.tree_map": fn(("f", P, None), state="deprecated", message=TREE_MAP_MSG)}
    chain = [
        census("0.5.3", names),
        census("0.5.4", names),
        census("0.6.0", {"jax.tree_map": removed("gone")}),
        census("0.6.1", {"jax.shard_map": fn(("f", P, None))}),
        census("0.6.2", {"jax.shard_map": fn(("f", P, None))}),
    ]
    found = by_name(diff_chain(chain))
    assert found[("jax.tree_map", "removed")].since == "0.6.0"
    assert found[("jax.shard_map", "added")].since == "0.6.1"
    # Only the ends at hand: dated to the newer end.
    assert by_name(diff_chain([chain[0], chain[-1]]))[("jax.tree_map", "removed")].since == "0.6.2"


def test_a_change_that_comes_and_goes_is_dated_from_its_last_arrival():
    chain = [census("1", {}), census("2", {"jax.f": fn()}), census("3", {}), census("4", {"jax.f": fn()})]
    assert by_name(diff_chain(chain))[("jax.f", "added")].since == "4"


def test_a_census_that_cannot_tell_does_not_break_the_dating():
    chain = [
        census("1", {"jax.m": module()}),
        census("2", {"jax.m": module(), "jax.m.f": fn()}),
        census("3", {}, failed=("jax.m",)),
        census("4", {"jax.m": module(), "jax.m.f": fn()}),
    ]
    assert since_of(chain, lambda c: None if c.state("jax.m.f") == "unknown" else c.usable("jax.m.f")) == "2"


def test_names_under_a_module_that_failed_to_import_are_left_out():
    a = census("1", {}, failed=("jax.export",))
    b = census("2", {"jax.export": module(), "jax.export.export": fn()})
    assert diff_chain([a, b]) == []


def test_a_whole_module_added_or_removed_is_one_change():
    a = census("1", {"jax.gone": module(), "jax.gone.f": fn(), "jax.gone.g": fn()})
    b = census("2", {"jax.fresh": module(), "jax.fresh.h": fn()})
    assert {(c.name, c.change) for c in diff_chain([a, b])} == {("jax.gone", "removed"), ("jax.fresh", "added")}


def test_signature_changes_name_each_parameter():
    before = [["a", P, None], ["newshape", P, "None"], ["order", P, "'C'"], ["old", P, None]]
    after = [["a", P, None], ["shape", P, "None"], ["order", P, "'F'"], ["out_sharding", K, "None"]]
    words = signature_changes(before, after)
    assert "parameter newshape renamed shape" in words
    assert "parameter old removed" in words
    assert "parameter out_sharding added (default None)" in words
    assert "default of order: 'C' → 'F'" in words
    assert signature_changes([["x", P, None]], [["x", K, None]]) == [f"parameter x: {P} → {K}"]


def test_a_keyword_only_parameter_replaced_at_its_place_is_removed_and_added_not_renamed():
    words = signature_changes([["a", P, None], ["newshape", K, "None"]], [["a", P, None], ["shape", K, "None"]])
    assert words == ["parameter newshape removed", "parameter shape added (default None)"]


def test_a_module_removed_through_a_deprecation_table_is_one_change():
    a = census("1", {"jax.foo": module(), "jax.foo.bar": fn(), "jax.foo.baz": fn()})
    b = census("2", {"jax.foo": removed("jax.foo was removed in JAX v2")})
    assert [(c.name, c.change) for c in diff_chain([a, b])] == [("jax.foo", "removed")]


def test_a_signature_change_is_reported_and_dated_an_unchanged_one_is_not():
    old = fn(("a", P, None), ("newshape", K, "None"))
    new = fn(("a", P, None), ("shape", P, None), ("out_sharding", K, "None"))
    chain = [
        census("1", {"jax.numpy": module(), "jax.numpy.reshape": old, "jax.same": fn(("x", P, None))}),
        census("2", {"jax.numpy": module(), "jax.numpy.reshape": new, "jax.same": fn(("x", P, None))}),
        census("3", {"jax.numpy": module(), "jax.numpy.reshape": new, "jax.same": fn(("x", P, None))}),
    ]
    (change,) = diff_chain(chain)
    assert (change.name, change.change, change.since) == ("jax.numpy.reshape", "signature", "2")
    assert change.message == (
        "parameter newshape removed; parameter shape added; parameter out_sharding added (default None)"
    )  # another kind at its place: not a rename


def test_a_move_by_the_replacement_jax_names():
    a = census(
        "0.5.3",
        {
            "jax.experimental": module(),
            "jax.experimental.shard_map": module(),
            "jax.experimental.shard_map.shard_map": fn(origin="jax.experimental.shard_map.shard_map"),
        },
    )
    b = census(
        "0.8.0",
        {
            "jax.experimental": module(),
            "jax.experimental.shard_map": module(),
            "jax.experimental.shard_map.shard_map": fn(
                origin="jax.experimental.shard_map.shard_map",
                state="deprecated",
                message="jax.experimental.shard_map is deprecated. Use jax.shard_map instead.",
                replacement="jax.shard_map",
            ),
            "jax.shard_map": fn(origin="jax._src.shard_map.shard_map"),
        },
    )
    found = by_name(diff_chain([a, b]))
    move = found[("jax.experimental.shard_map.shard_map", "moved")]
    assert move.message.startswith("now jax.shard_map: its replacement")
    assert ("jax.shard_map", "added") in found and ("jax.experimental.shard_map.shard_map", "deprecated") in found


def test_a_move_by_the_same_object_picks_its_canonical_new_path():
    origin = "jax._src.core.check_jaxpr"
    a = census("1", {"jax.core": module(), "jax.core.check_jaxpr": fn(origin=origin)})
    b = census(
        "2",
        {
            "jax.core": module(),
            "jax.extend": module(),
            "jax.extend.core": module(),
            "jax.extend.core.check_jaxpr": fn(origin=origin),
            "jax.extend.core.helpers": module(),
            "jax.extend.core.helpers.check_jaxpr": fn(origin=origin, alias_of="jax.extend.core.check_jaxpr"),
        },
    )
    found = by_name(diff_chain([a, b]))
    assert found[("jax.core.check_jaxpr", "moved")].message.startswith("now jax.extend.core.check_jaxpr: the same")


def test_no_move_for_a_name_still_present_or_an_object_from_outside_jax():
    a = census("1", {"jax.kept": fn(origin="jax._src.x.kept"), "jax.gone_any": fn(origin="typing.Any", kind="class")})
    b = census(
        "2",
        {
            "jax.kept": fn(origin="jax._src.x.kept"),
            "jax.also_kept": fn(origin="jax._src.x.kept"),
            "jax.some_any": fn(origin="typing.Any", kind="class"),
        },
    )
    assert not [c for c in diff_chain([a, b]) if c.change == "moved"]


def test_the_json_shape_is_the_public_one():
    a = census("1", {"jax.old": fn()})
    b = census("2", {"jax.new": fn()})
    data = json.loads(json.dumps(changes_json(diff_chain([a, b]))))
    assert set(data) == {"format", "changes"} and data["format"] == 1
    assert all(set(c) == {"name", "change", "since", "message"} and c["change"] in CHANGES for c in data["changes"])
    assert {(c["name"], c["change"]) for c in data["changes"]} == {("jax.old", "removed"), ("jax.new", "added")}


@pytest.mark.parametrize(
    "data, words",
    [
        ({"format": "something else"}, "not a census file"),
        ({"format": "jax-conformance api census", "format_version": 99}, "format_version 99"),
        ({"format": "jax-conformance api census", "format_version": 3, "names": [], "modules": {}}, "objects"),
        (
            {"format": "jax-conformance api census", "format_version": 1, "jax": "0.6.0"},
            "take it again: jax-conformance api census --jax 0.6.0 --rerun",
        ),
    ],
)
def test_a_file_that_is_not_a_census_is_one_error(data, words):
    with pytest.raises(ConformanceError, match=words):
        census_from(data, "x.json")


def test_no_move_to_a_path_that_is_itself_deprecated():
    origin = "jax._src.dlpack.to_dlpack"
    a = census("1", {"jax.dlpack": module(), "jax.dlpack.to_dlpack": fn(origin=origin)})
    b = census(
        "2",
        {
            "jax.dlpack": module(),
            "jax.util": module(),
            "jax.dlpack.to_dlpack": fn(origin=origin, state="deprecated", message="deprecated"),
            "jax.util.to_dlpack": fn(origin=origin, state="deprecated", message="deprecated"),
        },
    )
    assert not [c for c in diff_chain([a, b]) if c.change == "moved"]


def _census_data(jax: str = "0.6.2", **entries) -> dict:
    """A census file's data with the `entries` (names) and a walked `jax` module."""
    return {
        "format": "jax-conformance api census",
        "format_version": FORMAT_VERSION,
        "jax": jax,
        "platform": "linux-x86_64",
        "modules": {"jax": {"status": "ok"}},
        "names": {"jax": module(), **entries},
    }


@pytest.mark.parametrize(
    "data, words",
    [
        (_census_data("not-a-version"), "not a version"),
        (_census_data(**{"jax.f": {**fn(), "state": ["x"]}}), "name 'jax.f': state"),
        (_census_data(**{"jax.f": {**fn(), "kind": "gadget"}}), "name 'jax.f': kind"),
        (_census_data(**{"jax.f": {**fn(), "replacement": 5}}), "replacement should be text"),
        (_census_data(**{"jax.f": {**fn(), "params": [["a"], 5]}}), "params should be a list of"),
        (_census_data(**{"jax.f": {**fn(), "params": ["a"]}}), "params should be a list of"),
        (_census_data(**{"jax.f": {**fn(), "params": [["a", "sideways", None]]}}), "params should be a list of"),
        ({**_census_data(), "modules": {"jax": {"status": "fine"}}}, "module 'jax': status"),
    ],
)
def test_a_census_with_a_malformed_value_is_one_error_on_load(data, words):
    with pytest.raises(ConformanceError, match=words):
        census_from(data, "x.json")


def test_api_scan_and_diff_refuse_a_malformed_census_with_exit_2_never_1(tmp_path, capsys):
    from conformance import cli

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_census_data(**{"jax.f": {**fn(), "params": [["a"], 5]}})), encoding="utf-8")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_census_data(**{"jax.f": fn(("a", "positional_or_keyword", None))})), encoding="utf-8")
    (tmp_path / "a.py").write_text("import jax\njax.f(a=1)\n", encoding="utf-8")
    results = ["--results", str(tmp_path / "results")]
    assert cli.main(["api", "scan", str(tmp_path / "a.py"), "--to", str(bad), *results]) == 2
    assert cli.main(["api", "diff", str(good), str(bad), *results]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("params should be a list of" in line for line in err)


def _callback(keyword: dict | None, *params):
    entry = fn(("callback", "positional_or_keyword", None), *params)
    if keyword is not None:
        entry["keywords"] = {"vectorized": keyword}
    return entry


VEC = ("vectorized", "keyword_only", "Deprecated")
WARNS = {"state": "deprecated", "effect": "warns", "message": "The vectorized argument is deprecated."}
RAISES = {
    "state": "removed",
    "effect": "raises ValueError",
    "message": "The 'vectorized' argument of jax.pure_callback was removed in JAX v0.6.0.",
}


def test_a_keyword_jax_keeps_as_a_deprecated_arg_is_dated_when_passing_it_warns_and_raises():
    chain = [
        census("0.4.38", {"jax.pure_callback": _callback(None, ("vectorized", "keyword_only", "False"))}),
        census("0.5.3", {"jax.pure_callback": _callback(WARNS, VEC)}),
        census("0.6.0", {"jax.pure_callback": _callback(RAISES, VEC)}),
        census("0.10.0", {"jax.pure_callback": _callback(None, ("kwargs", "var_keyword", None))}),
    ]
    found = {(c.name, c.change): c for c in diff_chain(chain)}
    removed = found[("jax.pure_callback(vectorized=)", "removed")]
    assert removed.since == "0.6.0" and "raises ValueError" in removed.message and "v0.6.0" in removed.message
    assert found[("jax.pure_callback", "signature")].since == "0.10.0"  # the parameter leaves the signature later
    early = {(c.name, c.change) for c in diff_chain(chain[:2])}
    assert ("jax.pure_callback(vectorized=)", "deprecated") in early


def test_every_change_of_a_name_is_listed_not_only_the_first():
    before = fn(("f", "positional_or_keyword", None), ("auto", "keyword_only", "frozenset()"))
    after = fn(("f", "positional_or_keyword", None), state="deprecated", message="use jax.shard_map")
    changes = diff_chain([census("0.7.2", {"jax.sm": before}), census("0.8.0", {"jax.sm": after})])
    assert {c.change for c in changes if c.name == "jax.sm"} == {"deprecated", "signature"}


def test_a_name_given_to_diff_also_selects_its_keywords_and_the_names_under_it():
    """`api diff 0.5.3 0.12.0.1 --name jax.pure_callback` left out `jax.pure_callback(vectorized=)`."""
    changes = [
        Change("jax.pure_callback(vectorized=)", "removed", "0.6.0", ""),
        Change("jax.pure_callback", "signature", "0.10.0", ""),
        Change("jax.pure_callbacks", "added", "1", ""),
        Change("jax.lax.dot", "signature", "0.7.1", ""),
        Change("jax.lax", "deprecated", "1", ""),
    ]
    assert [c.name for c in changes_named(changes, ["jax.pure_callback"])] == [
        "jax.pure_callback(vectorized=)",
        "jax.pure_callback",
    ]
    assert [c.name for c in changes_named(changes, ["jax.lax"])] == ["jax.lax.dot", "jax.lax"]
