"""Commits at every answer: version.py's `_git_hash`, the header fields (schema 4), the bisect verdict's lines."""

from __future__ import annotations

import json

from conformance.decide.bisect_session import stored_build
from conformance.decide.commits import (
    BuildCommits,
    compare_url,
    hash_in_version_file,
    jaxlib_compare_url,
    minimum_jaxlib_in_version_file,
)
from conformance.results.load import load_result_file
from conformance.results.schema import SCHEMA_VERSION, RunHeader
from tests.synthetic_results import VMAP, cell, report

GOOD = "2184c1ecb765eb5ab1063c1d59bd491f7f235542"
BAD = "dc4af684446e65ee98eee8090e1ff6f8211473fb"


def test_the_hash_and_minimum_are_read_from_a_version_file_as_wheels_write_them():
    released = f"_version: str = \"0.12.0.1\"\n_git_hash: str = '{BAD}'\n_minimum_jaxlib_version = '0.11.2'\n"
    assert hash_in_version_file(released) == BAD
    assert minimum_jaxlib_in_version_file(released) == "0.11.2"
    assert hash_in_version_file("_git_hash: str | None = None\n") == ""  # jax before 0.8 records none
    # The build script's own template line is not the value.
    assert hash_in_version_file("    old_githash_string = \"_git_hash: str = 'abc1234'\"\n") == ""


def test_header_keeps_both_hashes_and_older_files_read_without_them():
    head = RunHeader.from_json(
        {
            "schema_version": SCHEMA_VERSION,
            "jax": "0.12.0.1",
            "platform": "linux-x86_64",
            "jax_git_hash": BAD,
            "jaxlib_git_hash": BAD,
        }
    )
    assert SCHEMA_VERSION >= 4 and (head.jax_git_hash, head.jaxlib_git_hash) == (BAD, BAD)
    old = RunHeader.from_json({"schema_version": 3, "jax": "0.12.0.1", "platform": "linux-x86_64"})
    assert (old.jax_git_hash, old.jaxlib_git_hash) == ("", "")
    try:
        RunHeader.from_json({"schema_version": 4, "jax": "0.8.3", "platform": "linux-x86_64", "jax_git_hash": 7})
    except ValueError as exc:
        assert "jax_git_hash" in str(exc)
    else:
        raise AssertionError("a non-string hash was read")


def test_compare_links_use_commits_and_fall_back_to_release_tags():
    good, bad = BuildCommits("0.8.3", "0.8.3", GOOD, GOOD), BuildCommits("0.12.0.1", "0.12.0.1", BAD, BAD)
    assert compare_url(good, bad) == f"https://github.com/jax-ml/jax/compare/{GOOD}...{BAD}"
    assert jaxlib_compare_url(good, bad) == ""  # one commit builds both sides
    old = BuildCommits("0.7.2", "0.7.2")
    assert compare_url(old, bad) == f"https://github.com/jax-ml/jax/compare/jax-v0.7.2...{BAD}"
    assert "no commit recorded; tag jax-v0.7.2" in old.line() and f"commit {BAD[:12]}" in bad.line()
    mixed = BuildCommits("0.12.0.1", "0.11.2", BAD, GOOD)
    assert jaxlib_compare_url(good, mixed) == ""  # the same jaxlib on both sides: no jaxlib commit between
    other = BuildCommits("0.12.0.1", "0.12.0", BAD, "f" * 40)
    assert jaxlib_compare_url(good, other) == f"https://github.com/jax-ml/jax/compare/{GOOD}...{'f' * 40}"


def test_compare_links_run_from_the_older_build_whichever_end_the_search_started_from():
    """--find-fix (and a good end newer than the bad one) ends with the newer build as `good`: GitHub's compare
    page lists nothing from newer to older, so the link must still run older...newer."""
    newer, older = BuildCommits("0.8.0", "0.8.0", BAD, BAD), BuildCommits("0.7.2", "0.7.2")
    assert compare_url(newer, older) == f"https://github.com/jax-ml/jax/compare/jax-v0.7.2...{BAD}"
    assert compare_url(older, newer) == compare_url(newer, older)
    mixed_new, mixed_old = BuildCommits("0.8.0", "0.8.0", BAD, GOOD), BuildCommits("0.7.2", "0.7.2", GOOD, BAD)
    assert jaxlib_compare_url(mixed_new, mixed_old) == f"https://github.com/jax-ml/jax/compare/{BAD}...{GOOD}"


def test_a_dev_build_without_a_recorded_commit_is_named_by_its_label_not_by_a_tag_that_does_not_exist():
    night = BuildCommits("0.13.0.dev20260102+gabc1234", "0.13.0.dev20260102+gdef5678")
    assert (night.jax_ref, night.jaxlib_ref) == ("abc1234", "def5678")
    assert compare_url(BuildCommits("0.12.0.1", "0.12.0.1", GOOD, GOOD), night).endswith(f"{GOOD}...abc1234")
    assert "tag jax-v0.13.0.dev" not in night.line() and "abc1234" in night.line()


def test_a_stored_result_file_names_its_build_and_an_old_one_names_versions_only(tmp_path):
    data = report("0.8.3", "linux-x86_64", [cell(VMAP, "vmap")], schema=4)
    data["jax_conformance"].update(jaxlib="0.8.3", jax_git_hash=GOOD, jaxlib_git_hash=GOOD)
    (tmp_path / "0.8.3-linux-x86_64.json").write_text(json.dumps(data))
    assert load_result_file(tmp_path / "0.8.3-linux-x86_64.json").header.jax_git_hash == GOOD
    from conformance.engine import matrix

    if matrix.host_platform() == "linux-x86_64":
        assert stored_build(tmp_path, "0.8.3") == BuildCommits("0.8.3", "0.8.3", GOOD, GOOD)
    assert stored_build(tmp_path, "0.9.0") == BuildCommits("0.9.0", "0.9.0")


def stored(jax, status, commit):
    """A result file of one known-issue cell whose build records `commit` for jax and jaxlib."""
    from conformance.results.schema import result_file_from_json

    data = report(jax, "linux-x86_64", [cell("demo.known_bug", status=status, known_issue=True)], schema=4)
    data["jax_conformance"].update(jaxlib=jax, jax_git_hash=commit, jaxlib_git_hash=commit)
    return result_file_from_json(data, f"{jax}-linux-x86_64.json")


def test_the_report_model_links_the_commits_where_a_known_issue_appears_between_adjacent_releases():
    from conformance.report.model import build_model
    from tests.test_report import make_case

    runs = [stored("0.8.3", "differs", GOOD), stored("0.9.0", "conforms", BAD)]
    cases = [make_case("demo.known_bug", "§0 Known issues", known_issue=True)]
    [timeline] = build_model(runs, cases, releases=["0.8.3", "0.9.0"]).timelines
    assert timeline.text.startswith("appears in 0.9.0")
    assert timeline.compare_url == f"https://github.com/jax-ml/jax/compare/{GOOD}...{BAD}"
    [gap] = build_model(runs, cases, releases=["0.8.3", "0.8.4", "0.9.0"]).timelines  # a release between: no link
    assert gap.compare_url == ""


def test_the_page_links_the_commits_where_a_known_issue_appears(tmp_path):
    from conformance.report.html import write_report
    from tests.test_report import make_case

    runs = [stored("0.8.3", "differs", GOOD), stored("0.9.0", "conforms", BAD)]
    cases = [make_case("demo.known_bug", "§0 Known issues", known_issue=True)]
    page = write_report(runs, tmp_path / "index.html", cases=cases, releases=["0.8.3", "0.9.0"])
    html = page.read_text(encoding="utf-8")
    assert f'<a href="https://github.com/jax-ml/jax/compare/{GOOD}...{BAD}">the jax commits between them</a>' in html
