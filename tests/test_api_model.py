"""A census file read back (`conformance.api.model`): every way a file is refused, each with its one line, and the
states a census reports (issue 48: written against the survivors of a mutation run). No JAX."""

from __future__ import annotations

import json

import pytest

from conformance.api.census import FORMAT, FORMAT_VERSION
from conformance.api.model import MAX_CENSUS_NAMES, Census, census_from, load_census
from conformance.errors import ConformanceError


def data(names=None, modules=None, **header):
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "jax": "0.6.2",
        "platform": "linux-x86_64",
        "modules": {"jax": {"status": "ok"}} if modules is None else modules,
        "names": {"jax": {"kind": "module", "state": "present"}} if names is None else names,
        **header,
    }


def refusal(found, source="c.json") -> str:
    with pytest.raises(ConformanceError) as raised:
        census_from(found, source)
    return str(raised.value)


POSITIONAL = "positional should be {after, state: deprecated, effect, message}, not "
RERUN = "; take the census again (api census --rerun)"
BAD_ENTRIES = [
    ({"state": "gone"}, "state 'gone' is not one of present, deprecated, removed"),
    (
        {"state": "present", "kind": "thing"},
        "kind 'thing' is not one of module, function, class, constant, config (or null)",
    ),
    *[
        ({"state": "present", key: 1}, f"{key} should be text, not 1")
        for key in ("message", "replacement", "signature", "origin", "alias_of", "env", "effect", "condition")
    ],
    (
        {"state": "present", "keywords": {"a": {"state": "removed", "effect": 1}}},
        "keywords should map a parameter to {state, effect, message}, not {'a': {'state': 'removed', 'effect': 1}}",
    ),
    (
        {"state": "present", "keywords": {"a": {"state": "removed", "message": 2}}},
        "keywords should map a parameter to {state, effect, message}, not {'a': {'state': 'removed', 'message': 2}}",
    ),
    (
        {"state": "present", "keywords": {"a": {"state": "present"}}},
        "keywords should map a parameter to {state, effect, message}, not {'a': {'state': 'present'}}",
    ),
    ({"state": "present", "keywords": ["a"]}, "keywords should map a parameter to {state, effect, message}, not ['a']"),
    *[
        ({"state": "present", "positional": value}, POSITIONAL + repr(value))
        for value in (
            ["x"],
            {"after": "1", "state": "deprecated"},
            {"after": 1, "state": "removed"},
            {"after": 1, "state": "deprecated", "effect": 2},
            {"after": 1, "state": "deprecated", "message": 3},
        )
    ],
]


@pytest.mark.parametrize("entry, problem", BAD_ENTRIES)
def test_a_bad_name_entry_is_refused_naming_the_file_the_name_and_the_field(entry, problem):
    assert refusal(data({"jax.f": entry})) == f"c.json: name 'jax.f': {problem}{RERUN}"


def test_a_long_bad_field_is_cut_at_300_characters():
    message = refusal(data({"jax.f": {"state": "present", "params": "x" * 500}}))
    assert (
        message
        == "c.json: name 'jax.f': "
        + ("params should be a list of [name, kind, default] (default text or null), not '" + "x" * 500)[:300]
        + RERUN
    )
    message = refusal(data({"jax.f": {"state": "present", "positional": {"p" * 400: 1}}}))
    assert message == "c.json: name 'jax.f': " + (POSITIONAL + "{'" + "p" * 400)[:300] + RERUN
    message = refusal(data({"jax.f": {"state": "present", "keywords": {"k" * 400: 1}}}))
    assert (
        message
        == "c.json: name 'jax.f': "
        + ("keywords should map a parameter to {state, effect, message}, not {'" + "k" * 400)[:300]
        + RERUN
    )


def test_a_census_file_is_refused_for_its_header_or_shape_in_one_line():
    stale = dict(data(), format_version=1)
    assert refusal(stale, "") == (
        f"census: census format_version 1, this checkout reads {FORMAT_VERSION} (public "
        "names only, keywords and config options JAX deprecated); take it again: "
        "jax-conformance api census --jax 0.6.2 --rerun"
    )
    assert refusal(dict(stale, jax=3)).endswith("api census --jax VERSION --rerun")
    assert refusal(data(modules={"jax": {"status": "walked"}})) == (
        f"c.json: module 'jax': status 'walked' is not one of ok, failed, skipped{RERUN}"
    )
    assert refusal(data(names={"jax": 1})) == "c.json: every name and module of a census maps to an object"
    assert refusal(data(modules={1: {}})) == "c.json: every name and module of a census maps to an object"
    assert refusal(dict(data(), platform="")) == 'c.json: a census names its "jax" version and "platform"'
    assert refusal(dict(data(), platform=None)) == 'c.json: a census names its "jax" version and "platform"'
    assert refusal(dict(data(), jax=None)) == 'c.json: a census names its "jax" version and "platform"'


def test_a_census_may_hold_up_to_its_limit_of_names():
    many = {f"jax.n{i}": {"state": "present"} for i in range(MAX_CENSUS_NAMES)}
    assert len(census_from(data(many)).names) == MAX_CENSUS_NAMES
    many["jax.one_more"] = {"state": "present"}
    assert refusal(data(many)) == (
        f"c.json: {MAX_CENSUS_NAMES + 1} names, more than the {MAX_CENSUS_NAMES} a census may hold"
    )


def test_a_census_keeps_its_header_and_where_it_came_from(tmp_path):
    census = census_from(data(taken="2026-12-03"), "c.json")
    assert census.header == {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "jax": "0.6.2",
        "platform": "linux-x86_64",
        "taken": "2026-12-03",
    }
    assert census.source == "c.json" and census_from(data()).source == ""
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data()), encoding="utf-8")
    assert load_census(path).source == str(path)
    path.write_text("{" + "x" * 400, encoding="utf-8")
    with pytest.raises(ConformanceError) as raised:
        load_census(path)
    assert (
        str(raised.value) == f"{path}: not a readable census file (Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1))"
    )
    with pytest.raises(ConformanceError) as raised:
        load_census(tmp_path / "none.json")
    assert str(raised.value).startswith(f"{tmp_path / 'none.json'}: not a readable census file ([Errno 2]")
    long_name = tmp_path / ("n" * 240 + ".json")
    with pytest.raises(ConformanceError) as raised:
        load_census(long_name)
    said = str(raised.value).split(": not a readable census file (", 1)[1]
    assert len(said) == 201 and said.endswith(")") and said.startswith("[Errno 2]")  # cut at 200, then `)`


def test_states_keywords_and_params_read_back():
    good = census_from(
        data(
            {
                "jax.f": {
                    "kind": "function",
                    "state": "present",
                    "keywords": {"a": {"state": "removed", "effect": "raises", "message": "m"}},
                }
            },
            {"jax": {"status": "ok"}, "jax.x": {"status": "failed"}},
        )
    )
    assert good.state("jax.h") == "absent" and good.state("jax.x.y") == "unknown"
    assert good.failed_under("jax.x.y.z") == "jax.x" and good.failed_under("jax.x") == "jax.x"
    assert good.failed_under("jax.h") == ""
    assert good.keyword("jax.f", "a") == {"state": "removed", "effect": "raises", "message": "m"}
    assert good.keyword("jax.f", "b") is None and good.params("jax.f") is None
    warned = {"after": 1, "state": "deprecated", "effect": "warns", "message": "m"}
    positional = census_from(data({"jax.p": {"state": "present", "positional": warned}}))
    assert positional.positional("jax.p") == warned and positional.positional("jax.q") is None
    # built in memory (no file): an entry without a state is present; fields of the wrong type read as none
    loose = Census(
        "0.6.2",
        "linux-x86_64",
        {"jax.g": {"kind": None, "params": "no list", "keywords": {"a": "x"}}},
        {"jax": {"status": "ok"}},
    )
    assert Census("0.6.2", "p", {"jax.g": {"positional": "x"}}, {}).positional("jax.g") is None
    assert loose.state("jax.g") == "present" and loose.params("jax.g") is None and loose.keyword("jax.g", "a") is None
    failed_root = Census("0.6.2", "linux-x86_64", {}, {"jax": {"status": "failed"}})
    assert failed_root.failed_under("jax.numpy") == "jax"


def test_a_census_counts_its_names_by_state_and_its_modules_walked_and_failed():
    census = census_from(
        data(
            {
                "jax": {"kind": "module", "state": "present"},
                "jax.f": {"state": "deprecated"},
                "jax.g": {"state": "removed"},
                "jax.h": {"state": "removed"},
            },
            {
                "jax": {"status": "ok"},
                "jax.a": {"status": "failed"},
                "jax.b": {"status": "failed"},
                "jax.c": {"status": "skipped"},
                "jax.d": {"status": "failed"},
            },
        )
    )
    assert census.counts() == {
        "present": 1,
        "deprecated": 1,
        "removed": 2,
        "names": 4,
        "modules": 1,
        "failed_modules": 3,
    }
    assert census.walked("jax") and not census.walked("jax.a") and not census.walked("jax.c")
    assert not census.walked("jax.nope")
    empty = census_from(data({}, {}))
    assert empty.counts() == {
        "present": 0,
        "deprecated": 0,
        "removed": 0,
        "names": 0,
        "modules": 0,
        "failed_modules": 0,
    }
