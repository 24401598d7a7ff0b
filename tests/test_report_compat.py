"""The compat JSON as browser-compat-data readers read it (issue 39): BCD's published format, validated against BCD's
own schemas (tests/bcd/, vendored with their commit) with only the browser names replaced by the platforms; known
issues in a tree of their own, never as support; `version_last` only beside `version_removed`; notes short HTML with
a link to the cell."""

from __future__ import annotations

import copy
import json
import re
import statistics
from pathlib import Path

import jsonschema
import pytest

from conformance.core.case import load_cases
from conformance.report.compat import compat_data, html_note
from conformance.report.model import build_model
from tests.published_report import published_files
from tests.synthetic_results import cell, files

HERE = Path(__file__).resolve().parent
BCD = HERE / "bcd"
COMPAT_SCHEMA = HERE.parent / "conformance" / "report" / "schemas" / "compat.schema.json"
PLATFORM = "linux-x86_64"
STAMP = "2026-12-01T00:00:00+00:00"


def model_of(history: dict[str, list[dict]], platform: str = PLATFORM):
    """A model from `{jax version: [cell metadata]}` on one platform."""
    return build_model([files(v, platform, cells) for v, cells in history.items()], [])


def bcd_public_problems(data: dict) -> list[str]:
    """What BCD's published-data schema says of the file as a BCD reader sees it (`jax_conformance` is not BCD's),
    with its browser names replaced by the file's platforms and its categories by the file's own (`jax`)."""
    schema = json.loads((BCD / "public.schema.json").read_text(encoding="utf-8"))
    schema["definitions"]["browser_name"]["enum"] = sorted(data["browsers"]) or ["none"]
    schema["properties"] = {
        "__meta": schema["properties"]["__meta"],
        "browsers": schema["properties"]["browsers"],
        "api": schema["properties"]["api"],
        "jax": {"$ref": "#/definitions/identifier"},
    }
    schema["required"] = ["__meta", "browsers", "jax"]
    seen = {k: v for k, v in data.items() if k != "jax_conformance"}
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(seen)]


def without_build_keys(node):
    """A feature tree as BCD's source files hold it: without `source_file` and `version_last`, which BCD's own build
    adds to its published data."""
    if isinstance(node, dict):
        return {k: without_build_keys(v) for k, v in node.items() if k not in ("source_file", "version_last")}
    if isinstance(node, list):
        return [without_build_keys(v) for v in node]
    return node


def bcd_source_problems(data: dict) -> list[str]:
    """What BCD's data-file schema (compat-data.schema.json) says of the `jax` feature tree, with its browser names
    replaced by the file's platforms."""
    schema = json.loads((BCD / "compat-data.schema.json").read_text(encoding="utf-8"))
    schema["definitions"]["internal_support_block"]["propertyNames"]["enum"] = sorted(data["browsers"]) or ["none"]
    validator = jsonschema.Draft7Validator(schema)
    found = []
    for category in ("jax", "api"):  # BCD's data files hold one tree each
        if category in data:
            tree = {category: without_build_keys(data[category])}
            found += [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(tree)]
    return found


def own_problems(data: dict) -> list[str]:
    schema = json.loads(COMPAT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]


def every_problem(data: dict) -> list[str]:
    return own_problems(data) + bcd_public_problems(data) + bcd_source_problems(data)


def entry(data, row_id, tree="jax"):
    node = data[tree] if tree == "jax" else data["jax_conformance"]["known_issues"]
    for part in row_id.split("."):
        node = node[part]
    return node["__compat" if tree == "jax" else "__known_issue"]


def test_support_comes_and_goes_as_an_array_newest_first_and_version_last_only_where_it_ends():
    statuses = {"0.4.38": "differs", "0.5.0": "conforms", "0.6.0": "conforms", "0.7.0": "differs", "0.8.0": "conforms"}
    data = compat_data(model_of({v: [cell("a.b", status=s)] for v, s in statuses.items()}), STAMP)
    assert every_problem(data) == []
    assert entry(data, "a.b")["support"][PLATFORM] == [
        {"version_added": "0.8.0"},
        {"version_added": "0.5.0", "version_removed": "0.7.0", "version_last": "0.6.0"},
    ]
    assert data["browsers"][PLATFORM]["releases"] == {
        "0.4.38": {"status": "retired"},
        "0.5.0": {"status": "retired"},
        "0.6.0": {"status": "retired"},
        "0.7.0": {"status": "retired"},
        "0.8.0": {"status": "current"},
    }
    assert data["__meta"]["timestamp"] == STAMP and data["jax_conformance"]["format_version"] == 3


def test_conforming_from_the_oldest_release_is_ranged_and_never_is_false_with_a_note():
    data = compat_data(
        model_of(
            {
                "0.4.38": [cell("a.b"), cell("a.c", status="differs")],
                "0.5.0": [cell("a.b"), cell("a.c", status="unsupported")],
            }
        ),
        STAMP,
    )
    assert entry(data, "a.b")["support"][PLATFORM] == {"version_added": "≤0.4.38"}
    assert entry(data, "a.c")["support"][PLATFORM]["version_added"] is False
    assert every_problem(data) == []


def test_a_partial_note_tells_an_unsupported_cell_from_a_differing_one():
    both = {"rows": ["a.shared"]}
    data = compat_data(
        model_of(
            {
                "0.4.38": [cell("a.p", "x", **both), cell("a.p", "y", status="unsupported", **both)],
                "0.5.0": [cell("a.p", "x", **both), cell("a.p", "y", status="unsupported", **both)],
                "0.6.0": [cell("a.p", "x", **both), cell("a.p", "y", status="differs", **both)],
            }
        ),
        STAMP,
    )
    statement = entry(data, "a.shared")["support"][PLATFORM]
    assert statement["partial_implementation"] is True
    assert statement["notes"] == (
        "In 0.4.38–0.6.0, 1 of this row's 2 cells behaves as the chapter says; "
        "<code>a.p[y]</code> is unsupported in 0.4.38–0.5.0 and differs in 0.6.0."
    )
    assert data["jax_conformance"]["cells"]["a.shared"] == ["a.p[x]", "a.p[y]"]
    assert every_problem(data) == []


def test_a_known_issue_is_a_feature_whose_support_reads_as_the_bug_present_and_has_its_state_per_release():
    """Issue 47: a BCD reader never saw the known issue; now it is a feature named as the bug, so "yes since" reads as
    "present since", and its state per release stays in the project's own tree."""
    bug = {"known_issue": True}
    data = compat_data(
        model_of(
            {
                "0.4.38": [cell("n.vm", "vmap", **bug), cell("n.ok")],
                "0.5.0": [cell("n.vm", "vmap", status="differs", **bug), cell("n.ok")],
            }
        ),
        STAMP,
    )
    feature = entry(data, "n.vm.vmap")
    assert feature["description"].startswith(
        "Known issue, a JAX bug (where this reads as supported, the bug is present): "
    )
    assert feature["support"][PLATFORM] == {
        "version_added": "≤0.4.38",
        "version_removed": "0.5.0",
        "version_last": "0.4.38",
    }
    issue = entry(data, "n.vm.vmap", tree="known_issues")
    assert issue["bug"] == {PLATFORM: {"0.4.38": "bug still present", "0.5.0": "bug absent"}}
    assert issue["cells"] == ["n.vm[vmap]"]
    assert every_problem(data) == []


def test_a_build_column_is_a_nightly_release_and_never_a_bcd_version():
    data = compat_data(
        model_of(
            {
                "0.8.0": [cell("a.b", status="differs")],
                "0.9.0": [cell("a.b")],
                "0.9.1.dev20260101": [cell("a.b", status="differs")],
            }
        ),
        STAMP,
    )
    assert data["browsers"][PLATFORM]["releases"]["0.9.1.dev20260101"] == {"status": "nightly"}
    assert data["browsers"][PLATFORM]["releases"]["0.9.0"] == {"status": "current"}
    assert entry(data, "a.b")["support"][PLATFORM] == {"version_added": "0.9.0"}
    assert every_problem(data) == []


def python_build(jax: str, cells: list[dict]):
    """A `--python` build of release `jax`: its own column, labelled by where it came from."""
    from conformance.results.schema import result_file_from_json
    from tests.synthetic_results import report

    data = report(jax, PLATFORM, cells)
    data["jax_conformance"]["source"] = {"kind": "python", "python": "/opt/corp/bin/python"}
    return result_file_from_json(data, f"builds/python-abc/{jax}-{PLATFORM}.json")


def test_a_build_of_a_release_never_stands_in_for_the_release():
    """Review: a `--python` build of 0.9.0 replaced the release 0.9.0 in the statements (`{c.jax: i}`), so the
    release's regression vanished and a known issue read the build's state."""
    bug = {"known_issue": True}
    releases = [
        files("0.8.0", PLATFORM, [cell("a.b"), cell("n.vm", "vmap", **bug)]),
        files("0.9.0", PLATFORM, [cell("a.b", status="differs"), cell("n.vm", "vmap", **bug)]),
    ]
    build = python_build("0.9.0", [cell("a.b"), cell("n.vm", "vmap", status="differs", **bug)])
    model = build_model([*releases, build], [])
    assert [c.label for c in model.columns][-1].startswith("0.9.0 (")
    data = compat_data(model, STAMP)
    assert entry(data, "a.b")["support"][PLATFORM] == {
        "version_added": "≤0.8.0",
        "version_removed": "0.9.0",
        "version_last": "0.8.0",
    }
    assert entry(data, "n.vm.vmap", tree="known_issues")["bug"] == {
        PLATFORM: {"0.8.0": "bug still present", "0.9.0": "bug still present"}
    }
    assert list(data["browsers"][PLATFORM]["releases"]) == ["0.8.0", "0.9.0"]
    assert [step.total for step in model.compare("0.8.0", "0.9.0")] == [1]  # the release's regression
    build_label = model.columns[-1].label
    assert [step.total for step in model.compare("0.8.0", build_label)] == [1]  # the known issue's state changed
    assert every_problem(data) == []


def test_bcds_schemas_refuse_what_the_old_format_did():
    data = compat_data(model_of({"0.4.38": [cell("a.b", status="differs")], "0.5.0": [cell("a.b")]}), STAMP)
    assert every_problem(data) == []
    alone = copy.deepcopy(data)  # BCD's data never has it, though its schema lets it pass: the project's refuses it
    alone["jax"]["a"]["b"]["__compat"]["support"][PLATFORM]["version_last"] = "0.5.0"
    assert own_problems(alone)
    for path, bad in (
        (("jax", "a", "b", "__compat", "support", PLATFORM, "notes"), ["only one"]),
        (("jax", "a", "b", "__compat", "support", PLATFORM, "partial_implementation"), False),
        (("jax", "a", "b", "__compat", "cells"), ["a.b"]),
        (("jax", "a", "b", "__compat", "known_issue"), {}),
        (("__meta", "format"), "jax-conformance compat"),
    ):
        broken = copy.deepcopy(data)
        node = broken
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = bad
        assert bcd_public_problems(broken) and own_problems(broken), path


def test_notes_are_short_html_with_code_and_links():
    assert html_note("Use `jax.tree.map` <now>.") == "Use <code>jax.tree.map</code> &lt;now&gt;."
    long = "First sentence is short. Then " + "x " * 400
    assert html_note(long) == "First sentence is short."
    assert html_note("y " * 400).endswith(" …") and len(html_note("y " * 400)) <= 302


@pytest.fixture(scope="module")
def published():
    return compat_data(build_model(published_files(), load_cases()), STAMP, site_url="https://reports.example/jax/")


def _walk(node, path, found, leaf):
    for key, value in node.items():
        if key == leaf:
            found.append(".".join(path))
        elif isinstance(value, dict) and not key.startswith("__"):
            _walk(value, path + [key], found, leaf)


def _statements(node):
    if isinstance(node, dict):
        if "version_added" in node:
            yield node
        for value in node.values():
            yield from _statements(value)
    elif isinstance(node, list):
        for value in node:
            yield from _statements(value)


def test_the_published_compat_json_is_read_by_bcds_rules_and_holds_every_row_once(published):
    assert every_problem(published) == []
    features, issues = [], []
    _walk(published["jax"], [], features, "__compat")
    _walk(published["jax_conformance"]["known_issues"], [], issues, "__known_issue")
    rows = set(published["jax_conformance"]["cells"])
    assert set(features) | set(issues) == rows and len(rows) > 180
    assert set(issues) <= set(features)  # a known issue is a feature too, named as the bug
    vmap = entry(published, "numerics.debug_nans.vmap_miss.vmap", tree="known_issues")
    # where BCD readers look: the bug present from 0.8.0; its siblings described by their own rows, not the bug
    shown = entry(published, "numerics.debug_nans.vmap_miss.vmap")
    assert (
        shown["description"].startswith("Known issue")
        and shown["support"][PLATFORM]["version_added"] == "0.8.0"
        and "version_removed" not in shown["support"][PLATFORM]
    )
    for sibling in ("none", "clear", "with"):
        described = entry(published, f"numerics.debug_nans.vmap_miss.{sibling}")["description"]
        assert described != vmap["description"] and "stops the NaN checks" not in described
    assert vmap["bug"][PLATFORM]["0.12.0.1"] == "bug still present" and vmap["bug"][PLATFORM]["0.4.38"] == "bug absent"
    statements = list(_statements(published["jax"]))
    assert all("version_removed" in s for s in statements if "version_last" in s)
    assert sum("version_removed" in s for s in statements) == sum("version_last" in s for s in statements)
    assert len(published["browsers"][PLATFORM]["releases"]) >= 27


def test_the_published_notes_are_short_html_linking_absolutely_to_their_cell(published):
    notes = [
        n
        for s in _statements(published["jax"])
        for n in ([s["notes"]] if isinstance(s.get("notes"), str) else s.get("notes", []))
    ]
    assert notes and statistics.median(len(n) for n in notes) < 400 and max(len(n) for n in notes) < 800
    assert not any("`" in n for n in notes)  # HTML, never Markdown
    links = [href for n in notes for href in re.findall(r'href="([^"]+)"', n)]
    assert links and all(href.startswith("https://reports.example/jax/index.html#cell=") for href in links)


def test_the_api_category_is_every_censused_name_computed_per_release():
    from conformance.api.table import compat_entries
    from tests.api_censuses import census, fn, module, removed

    censuses = [
        census(
            "0.5.3",
            {
                "jax.tree_map": fn(
                    ("f", "positional_or_keyword", None),
                    state="deprecated",
                    message="jax.tree_map is deprecated: use jax.tree.map",
                ),
                "jax.numpy": module(),
                "jax.numpy.fix": fn(("x", "positional_or_keyword", None)),
            },
        ),
        census(
            "0.6.0",
            {
                "jax.tree_map": removed("jax.tree_map was removed in JAX v0.6.0"),
                "jax.numpy": module(),
                "jax.numpy.fix": fn(("x", "positional_or_keyword", None)),
                "jax.shard_map": fn(("f", "positional_or_keyword", None)),
            },
        ),
    ]
    model = model_of({"0.5.3": [cell("a.b")], "0.6.0": [cell("a.b")]})
    data = compat_data(model, STAMP, api=compat_entries(censuses))
    assert every_problem(data) == []
    tree_map = data["api"]["jax"]["tree_map"]["__compat"]
    assert tree_map["support"][PLATFORM] == {
        "version_added": "≤0.5.3",
        "version_removed": "0.6.0",
        "version_last": "0.5.3",
    }
    assert tree_map["status"]["deprecated"] is True and tree_map["source_file"] == "conformance/api/census.py"
    assert data["api"]["jax"]["shard_map"]["__compat"]["support"][PLATFORM] == {"version_added": "0.6.0"}


def test_a_bcd_rendering_shows_the_known_issue_as_the_bug_present_and_its_siblings_as_their_own_rows(published):
    """Issue 47, as a BCD reader sees it (tests/bcd_render.py follows MDN's table rules): the known issue is a row of
    its own whose "Yes 0.8.0" reads as the bug present from 0.8.0; no sibling row carries the bug's words."""
    from tests.bcd_render import features, render, statement_text

    table = render(published, "jax.numerics.debug_nans.vmap_miss")
    rows = dict(features(published["jax"]["numerics"]["debug_nans"]["vmap_miss"], "vmap_miss"))
    shown = rows["vmap_miss.vmap"]
    assert "Known issue, a JAX bug" in table and statement_text(shown["support"][PLATFORM]) == "Yes 0.8.0"
    assert sum("stops the NaN checks" in compat["description"] for compat in rows.values()) == 1
