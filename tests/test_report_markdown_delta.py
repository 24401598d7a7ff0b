"""Issue 39: the Markdown has an upgrade delta (`report --markdown PATH --compare A B`: "From A to B", the status
changes first, each with its why, printed-only changes counted) and `--site-url URL` makes every link absolute, so
the page pasted into a pull request has no link that breaks. Rendered with cmark-gfm, GitHub's own renderer."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import cmarkgfm
import pytest

from conformance import cli
from conformance.core.case import _REGISTRY, Change, Expect, Observation, Param, Section
from conformance.errors import ConformanceError
from conformance.report.markdown import markdown_summary
from conformance.report.model import build_model
from tests.synthetic_results import cell, files, write

PLATFORM = "linux-x86_64"
SECTION = Section("§D", "Delta tests")


def _probe(which):
    return Observation({})


_probe.__module__ = "conformance.cases.scratch_delta"
SECTION.case(
    claim="A delta case.",
    params=[
        Param("moved", ["setup.environment"], Expect({})),
        Param("still", ["setup.environment"], Expect({}, printed={"shown": "old"})),
    ],
    changes=[
        Change(
            since="0.8.0", params=("moved",), why="It moved in 0.8.0 because of a measured cause.", evidence="measured"
        )
    ],
)(_probe)
DECLARED = _REGISTRY[("conformance.cases", "scratch_delta._probe")]


def printed(status: str, differs: bool) -> dict:
    found = cell("scratch_delta._probe", "still", status, observation={"shown": "new" if differs else "old"})
    found["printed_expected"] = {"shown": "old"}
    found["printed_diff"] = (
        [{"path": "shown", "expected": "old", "observed": "new", "kind": "changed"}] if differs else []
    )
    return found


@pytest.fixture
def model():
    history = {
        "0.7.2": [cell("scratch_delta._probe", "moved", "conforms"), printed("conforms", False)],
        "0.8.0": [cell("scratch_delta._probe", "moved", "differs"), printed("conforms", False)],
        "0.9.0": [cell("scratch_delta._probe", "moved", "differs"), printed("conforms", True)],
    }
    return build_model([files(v, PLATFORM, cells) for v, cells in history.items()], [DECLARED])


def test_from_a_to_b_lists_status_changes_with_their_why_and_counts_printed_only_changes(model):
    page = markdown_summary(model, compare=("0.7.2", "0.9.0"), generated_at="2026-12-02 00:00 UTC")
    delta = page.split("## From 0.7.2 to 0.9.0", 1)[1].split("\n## ", 1)[0]
    assert page.index("## From 0.7.2 to 0.9.0") < page.index("## Overview")  # first: what a pull request wants
    assert "1 cell changes status:" in delta
    assert (
        "- **regressed**: `scratch_delta._probe[moved]` (conforms → differs): It moved in 0.8.0 because of a "
        "measured cause." in delta
    )
    assert "Printed output alone changed in 1 cell; the observation alone (same status) in 0." in delta
    none = markdown_summary(model, compare=("0.8.0", "0.9.0")).split("## From 0.8.0 to 0.9.0", 1)[1]
    assert "No cell changes status." in none.split("\n## ", 1)[0]


def test_a_compare_naming_no_column_is_one_line_naming_the_versions(model):
    with pytest.raises(ConformanceError, match=r"--compare 0.7.2 0.10.0: .* its versions are 0.7.2, 0.8.0, 0.9.0"):
        markdown_summary(model, compare=("0.7.2", "0.10.0"))


def test_site_url_makes_every_link_absolute_and_each_change_opens_its_cell(model):
    page = markdown_summary(model, compare=("0.7.2", "0.9.0"), site_url="https://reports.example/jax")
    html = cmarkgfm.github_flavored_markdown_to_html(page)
    links = [unescape(link) for link in re.findall(r'<a href="([^"]+)"', html)]
    external = [link for link in links if not link.startswith("#")]
    assert external and all(link.startswith("https://reports.example/jax/index.html") for link in external)
    cell_link = next(link for link in external if "#cell=" in link)
    state = parse_qs(urlsplit(cell_link).fragment)
    assert state == {"cell": ["scratch_delta._probe[moved]"], "at": ["0.9.0"]}  # the page's own URL state
    relative = markdown_summary(model, compare=("0.7.2", "0.9.0"))
    assert "](index.html)" in relative and "#cell=" not in relative  # no relative cell link to break when pasted


def test_the_cli_refuses_a_compare_before_writing_anything(tmp_path, capsys):
    results = tmp_path / "r"
    for version in ("0.7.2", "0.8.0"):
        write(results, version, PLATFORM, [cell("scratch_delta._probe", "moved", "conforms")])
    out = tmp_path / "site"
    code = cli.main(
        [
            "report",
            str(results),
            "-o",
            str(out / "index.html"),
            "--markdown",
            str(out / "index.md"),
            "--compare",
            "0.7.2",
            "0.9.9",
        ]
    )
    assert code == 2 and not out.exists()
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert cli.main(["report", str(results), "-o", str(out / "index.html"), "--compare", "0.7.2", "0.8.0"]) == 2
    assert "add --markdown PATH" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "report",
                str(results),
                "-o",
                str(out / "index.html"),
                "--markdown",
                str(out / "index.md"),
                "--site-url",
                "javascript:alert(1)",
            ]
        )
        == 2
    )
    assert "not an http(s) address" in capsys.readouterr().err


@pytest.mark.parametrize(
    "site", ["https://team.example/jax?ref=pr", "https://team.example/jax#top", "https://team.example/jax/index.html"]
)
def test_a_site_url_with_a_query_a_fragment_or_a_page_is_refused(tmp_path, capsys, site):
    """Review: these were accepted and gave links to https://team.example/index.html (the folder lost) or to
    …/jax/index.html/index.html."""
    results = tmp_path / "r"
    write(results, "0.7.2", PLATFORM, [cell("scratch_delta._probe", "moved", "conforms")])
    out = tmp_path / "site"
    assert (
        cli.main(
            [
                "report",
                str(results),
                "-o",
                str(out / "index.html"),
                "--markdown",
                str(out / "index.md"),
                "--site-url",
                site,
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "https://team.example/jax/" in err and not out.exists()


def test_a_column_without_a_cell_in_common_is_nothing_to_compare_never_no_change():
    """A release measured only by another tier (its chapter blocks, its workloads, a downstream suite) has a column
    but no probe cell: from or to it, nothing was compared, and the page must not say that nothing changed."""
    from conformance.report.html import render_html

    history = {
        "0.7.2": [cell("scratch_delta._probe", "moved", "conforms")],
        "0.8.0": [cell("scratch_delta._probe", "moved", "differs")],
        "0.8.1": [],
        "0.9.0": [cell("scratch_delta._probe", "moved", "differs")],
    }
    model = build_model([files(v, PLATFORM, cells) for v, cells in history.items()], [DECLARED])
    assert [(s.before, s.after, s.compared) for s in model.steps] == [
        ("0.7.2", "0.8.0", 1),
        ("0.8.0", "0.8.1", 0),
        ("0.8.1", "0.9.0", 0),
    ]
    empty = markdown_summary(model, compare=("0.8.0", "0.8.1")).split("## From 0.8.0 to 0.8.1", 1)[1]
    empty = empty.split("\n## ", 1)[0]
    assert "nothing to compare" in empty and "No cell changes status." not in empty
    full = markdown_summary(model, compare=("0.8.0", "0.9.0")).split("## From 0.8.0 to 0.9.0", 1)[1]
    assert "No cell changes status." in full.split("\n## ", 1)[0]
    page = unescape(re.sub(r"<[^>]+>", "", render_html(model, "2026-12-06 00:00 UTC")))
    assert "Nothing to compare in 0.8.0 → 0.8.1, 0.8.1 → 0.9.0: no cell has a result in both columns." in page
    assert "No cell changed in 0.8.0 → 0.8.1" not in page and "0.8.1 → 0.9.0." not in page
