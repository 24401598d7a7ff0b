"""The API tables (`conformance.api.table`) in full: censuses grouped per platform, each release's changes, a name's
history, its BCD support statements, description and status. Synthetic censuses, no JAX."""

from __future__ import annotations

from conformance.api.table import (
    ReleaseChanges,
    by_platform,
    compat_entries,
    compat_entry,
    description,
    name_histories,
    name_history,
    per_release,
    release_changes,
    support_statement,
)
from tests.api_censuses import census, config, fn, module, removed

P = "positional_or_keyword"


def test_censuses_are_grouped_per_platform_in_release_order_the_last_given_winning():
    first, second = census("0.10.0", {"jax.a": fn()}), census("0.10.0", {"jax.b": fn()})
    mac = census("0.9.0", {}, platform="darwin-arm64")
    grouped = by_platform([first, census("0.9.2", {}), second, mac])
    assert list(grouped) == ["darwin-arm64", "linux-x86_64"]
    assert [c.jax for c in grouped["linux-x86_64"]] == ["0.9.2", "0.10.0"] and grouped["linux-x86_64"][1] is second


def test_a_releases_changes_leave_out_what_neither_can_tell():
    before = census(
        "1",
        {
            "jax.m": module(),
            "jax.gone": fn(),
            "jax.dep": fn(),
            "jax.stays": fn(state="deprecated"),
            "jax.back": fn(state="deprecated"),
            "jax.m2.f": fn(),
        },
    )
    now = census(
        "2",
        {
            "jax.m": module(),
            "jax.new": fn(),
            "jax.dep": fn(state="deprecated"),
            "jax.stays": fn(state="deprecated"),
            "jax.back": fn(),
            "jax.gone": removed("x"),
        },
        failed=("jax.m2",),
    )
    changes = release_changes(before, now)
    assert changes == ReleaseChanges("2", "linux-x86_64", ("jax.new",), ("jax.gone",), ("jax.dep",))
    assert changes.to_json() == {
        "jax": "2",
        "platform": "linux-x86_64",
        "added": ["jax.new"],
        "removed": ["jax.gone"],
        "deprecated": ["jax.dep"],
    }
    assert [c.jax for c in per_release([now, before, census("1", {}, platform="other")])] == ["2"]


def test_a_names_history_over_releases():
    found = [
        census("1", {"jax.f": fn()}),
        census("2", {"jax.f": fn(state="deprecated")}),
        census("3", {}),
        census("4", {"jax.f": fn()}),
        census("5", {}),
    ]
    history = name_history(found, "jax.f")
    assert (history.added, history.deprecated, history.removed, history.last) == ("≤1", "2", "5", "4")
    assert history.to_json() == {"added": "≤1", "deprecated": "2", "removed": "5", "last": "4"}
    late = name_history(found[2:4], "jax.f")
    assert (late.added, late.deprecated, late.removed, late.last) == ("4", "", "", "4")
    assert late.to_json() == {"added": "4", "deprecated": None, "removed": None, "last": "4"}
    never = name_history(found[2:3], "jax.f")
    assert (never.added, never.removed, never.last, never.platform) == ("", "", "", "linux-x86_64")
    assert name_history([], "jax.f").platform == ""
    histories = name_histories([*found, census("1", {"jax.g": fn()}, platform="mac")])
    assert list(histories) == ["jax", "jax.f", "jax.g"] and list(histories["jax.g"]) == ["mac"]
    assert histories["jax.f"]["linux-x86_64"] == history


def test_support_statements_skip_the_censuses_that_cannot_tell():
    found = [
        census("1", {"jax.m": module(), "jax.m.f": fn()}),
        census("2", {"jax.m": module()}, failed=("jax.m",)),
        census("3", {"jax.m": module(), "jax.m.f": fn()}),
        census("4", {"jax.m": module()}),
        census("5", {"jax.m": module(), "jax.m.f": fn()}),
    ]
    assert support_statement(found, "jax.m.f") == [
        {"version_added": "5"},
        {"version_added": "≤1", "version_removed": "4", "version_last": "3"},
    ]
    assert support_statement(found[:3], "jax.m.f") == {"version_added": "≤1"}
    assert support_statement(found[3:4], "jax.m.f") == {"version_added": False}
    assert support_statement(found[1:4], "jax.m.f") == {
        "version_added": "≤3",
        "version_removed": "4",
        "version_last": "3",
    }


def test_a_description_reads_the_newest_census_where_the_name_is_usable():
    long = [(f"p{k}", P, None) for k in range(60)]
    older = census("1", {"jax.f": fn(("a", P, None))})
    newer = census("2", {"jax.f": removed("gone")})
    assert description([newer, older], "jax.f") == "function jax.f(a)"
    assert description([newer], "jax.f") == "name jax.f"
    assert description([], "jax.f") == "name jax.f"
    text = description([census("1", {"jax.g": fn(*long)})], "jax.g")
    assert text == "function jax.g" + ("(" + ", ".join(p[0] for p in long) + ")")[:199] + "…"
    exact = [(f"q{k}", P, None) for k in range(1)]
    assert description([census("1", {"jax.h": fn(*exact)})], "jax.h") == "function jax.h(q0)"
    name, entry = config("jax_enable_x64")
    assert (
        description([census("1", {name: entry})], name)
        == "config option jax_enable_x64 (environment variable JAX_ENABLE_X64)"
    )
    newest_usable = [census("1", {"jax.k": fn(("a", P, None))}), census("2", {"jax.k": fn(("b", P, None))})]
    assert description(newest_usable, "jax.k") == "function jax.k(b)"


def test_the_status_of_a_name():
    censuses = [
        census(
            "1",
            {
                "jax.experimental": module(),
                "jax.experimental.x": fn(),
                "jax.experimentalish": fn(),
                "jax.d": fn(state="deprecated"),
                "jax.r": fn(),
            },
        ),
        census("2", {"jax.r": removed("gone"), "jax.d": fn()}, platform="mac"),
    ]
    status = {
        n: compat_entry(censuses, n)["status"]
        for n in ("jax.experimental", "jax.experimental.x", "jax.experimentalish", "jax.d", "jax.r")
    }
    assert status == {
        "jax.experimental": {"experimental": True, "standard_track": False, "deprecated": False},
        "jax.experimental.x": {"experimental": True, "standard_track": False, "deprecated": False},
        "jax.experimentalish": {"experimental": False, "standard_track": False, "deprecated": False},
        "jax.d": {"experimental": False, "standard_track": False, "deprecated": True},
        "jax.r": {"experimental": False, "standard_track": False, "deprecated": True},
    }
    assert compat_entry(censuses, "jax.r")["support"] == {
        "linux-x86_64": {"version_added": "≤1"},
        "mac": {"version_added": False},
    }
    tree = compat_entries(censuses, keep=lambda n: n != "jax.d")
    assert sorted(tree["jax"]) == ["__compat", "experimental", "experimentalish", "r"]
    assert sorted(tree["jax"]["experimental"]) == ["__compat", "x"]
    assert "d" in compat_entries(censuses)["jax"]


def test_the_description_is_the_newest_usable_censuss_whatever_order_they_come_in():
    newer = census("0.6.2", {"jax.f": fn(("a", P, None), ("b", P, None))})
    older = census("0.5.3", {"jax.f": fn(("a", P, None))})
    assert description([newer, older], "jax.f") == "function jax.f(a, b)"
    assert description([older, newer], "jax.f") == "function jax.f(a, b)"


def test_a_signature_of_exactly_the_limit_is_kept_whole():
    exact = "(" + "a" * 198 + ")"
    assert len(exact) == 200
    entry = fn()
    entry["signature"] = exact
    assert description([census("0.6.2", {"jax.f": entry})], "jax.f") == f"function jax.f{exact}"
    entry["signature"] = exact + "b"
    assert description([census("0.6.2", {"jax.f": entry})], "jax.f") == f"function jax.f{exact[:199]}…"


def test_a_name_history_names_its_name_and_platform():
    history = name_history([census("0.6.2", {"jax.f": fn()})], "jax.f")
    assert (history.name, history.platform, history.added) == ("jax.f", "linux-x86_64", "≤0.6.2")
