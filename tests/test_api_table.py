"""The report's and the compat JSON's API data, computed from synthetic censuses over several releases and
platforms: per-release changes, each name's history, and BCD-shaped entries valid against their schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import conformance
from conformance.api.table import compat_entries, name_histories, per_release, support_statement
from tests.api_censuses import census, fn, module, removed

SCHEMA = Path(conformance.__file__).parent / "api" / "schemas" / "api-compat.schema.json"
MSG = "jax.tree_map is deprecated: use jax.tree.map"


def releases(platform="linux-x86_64"):
    """tree_map deprecated then removed, shard_map added, fix deprecated, a name that comes and goes, a module that
    fails to import on one release."""
    return [
        census(
            "0.4.38",
            {
                "jax.tree_map": fn(state="deprecated", message=MSG),
                "jax.numpy": module(),
                "jax.numpy.fix": fn(),
                "jax.flaky": fn(),
                "jax.export": module(),
                "jax.export.export": fn(),
            },
            platform=platform,
        ),
        census(
            "0.5.3",
            {"jax.tree_map": fn(state="deprecated", message=MSG), "jax.numpy": module(), "jax.numpy.fix": fn()},
            failed=("jax.export",),
            platform=platform,
        ),
        census(
            "0.6.0",
            {
                "jax.tree_map": removed("jax.tree_map was removed in JAX v0.6.0"),
                "jax.numpy": module(),
                "jax.numpy.fix": fn(),
                "jax.flaky": fn(),
                "jax.export": module(),
                "jax.export.export": fn(),
            },
            platform=platform,
        ),
        census(
            "0.6.1",
            {
                "jax.tree_map": removed("jax.tree_map was removed in JAX v0.6.0"),
                "jax.numpy": module(),
                "jax.numpy.fix": fn(state="deprecated", message="jax.numpy.fix is deprecated"),
                "jax.shard_map": fn(),
                "jax.export": module(),
                "jax.export.export": fn(),
            },
            platform=platform,
        ),
    ]


def test_per_release_lists_what_each_release_added_removed_and_deprecated():
    found = {r.jax: r for r in per_release(releases())}
    assert set(found) == {"0.5.3", "0.6.0", "0.6.1"}  # the oldest release is the baseline
    assert found["0.5.3"].removed == ("jax.flaky",) and found["0.5.3"].added == ()
    assert found["0.6.0"].removed == ("jax.tree_map",) and found["0.6.0"].added == ("jax.flaky",)
    assert found["0.6.1"].added == ("jax.shard_map",) and found["0.6.1"].deprecated == ("jax.numpy.fix",)
    assert found["0.6.1"].removed == ("jax.flaky",)
    assert "jax.export.export" not in found["0.6.0"].added  # 0.5.3 could not tell


def test_each_name_has_its_first_release_removal_and_deprecation():
    table = name_histories(releases())
    tree_map = table["jax.tree_map"]["linux-x86_64"]
    assert (tree_map.added, tree_map.deprecated, tree_map.removed, tree_map.last) == (
        "≤0.4.38",
        "≤0.4.38",
        "0.6.0",
        "0.5.3",
    )
    shard_map = table["jax.shard_map"]["linux-x86_64"]
    assert (shard_map.added, shard_map.removed) == ("0.6.1", "")
    assert table["jax.numpy.fix"]["linux-x86_64"].deprecated == "0.6.1"
    assert table["jax.export.export"]["linux-x86_64"].removed == ""  # unknown on 0.5.3 is not a removal


def test_support_statements_are_spans_newest_first():
    found = sorted(releases(), key=lambda c: c.jax)
    assert support_statement(found, "jax.tree_map") == {
        "version_added": "≤0.4.38",
        "version_removed": "0.6.0",
        "version_last": "0.5.3",
    }
    assert support_statement(found, "jax.shard_map") == {"version_added": "0.6.1"}
    assert support_statement(found, "jax.flaky") == [
        {"version_added": "0.6.0", "version_removed": "0.6.1", "version_last": "0.6.0"},
        {"version_added": "≤0.4.38", "version_removed": "0.5.3", "version_last": "0.4.38"},
    ]
    gone_before = [census("1.0", {"jax.old": removed("gone")}), census("1.1", {"jax.old": removed("gone")})]
    assert support_statement(gone_before, "jax.old") == {"version_added": False}


def test_compat_entries_nest_by_dotted_parts_and_validate_against_the_schema():
    censuses = releases("linux-x86_64") + releases("darwin-arm64")[1:]
    tree = compat_entries(censuses)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(tree)
    fix = tree["jax"]["numpy"]["fix"]["__compat"]
    assert fix["status"] == {"experimental": False, "standard_track": False, "deprecated": True}
    assert fix["support"] == {"linux-x86_64": {"version_added": "≤0.4.38"}, "darwin-arm64": {"version_added": "≤0.5.3"}}
    assert tree["jax"]["numpy"]["__compat"]["description"] == "module jax.numpy"
    assert tree["jax"]["tree_map"]["__compat"]["description"].startswith("function jax.tree_map(")
    assert tree["jax"]["shard_map"]["__compat"]["status"]["deprecated"] is False
    only = compat_entries(censuses, keep=lambda name: name.startswith("jax.numpy"))
    assert set(only["jax"]) == {"numpy"}


def test_experimental_names_are_marked():
    tree = compat_entries([census("1.0", {"jax.experimental": module(), "jax.experimental.f": fn()})])
    assert tree["jax"]["experimental"]["f"]["__compat"]["status"]["experimental"] is True
    assert tree["jax"]["__compat"]["status"]["experimental"] is False


def test_the_schema_check_can_fail():
    tree = compat_entries(releases())
    tree["jax"]["tree_map"]["__compat"]["support"]["linux-x86_64"]["version_removed"] = "soon"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(tree)
