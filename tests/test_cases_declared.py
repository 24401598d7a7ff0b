"""The shipped cases: well formed, and every row ID they name exists in the behaviours list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.core.case import Expect, Skip, load_cases

BEHAVIOURS = Path(__file__).resolve().parents[2] / "shared" / "behaviours.md"
HEADLINE_ROWS = [
    "program.closure_constant_miscompile",
    "numerics.debug_nans.vmap_miss.none",
    "numerics.debug_nans.vmap_miss.vmap",
    "numerics.debug_nans.vmap_miss.clear",
    "numerics.debug_nans.vmap_miss.with",
    "quiz.q3.debug_nans_after_vmap",
    "tracers.hierarchy",
    "tracers.hierarchy.subclassing",
    "compile.cache_size.count",
    "compile.cache_size.shared",
    "compile.cache_size.shared_across_options",
    "compile.cache_size.clear",
    "config.traceback_filtering.modes",
    "config.traceback_filtering.runtime_switch",
    "config.traceback_filtering.script_auto",
    "config.traceback_filtering.env_off",
    "config.traceback_filtering.invalid_value",
    "compile.transfer_guard.cpu",
]

CASES = load_cases()


def declared_rows() -> set[str]:
    return {row for case in CASES for row in case.all_rows}


def test_headline_rows_are_all_covered():
    assert set(HEADLINE_ROWS) <= declared_rows()


@pytest.mark.skipif(
    not BEHAVIOURS.exists(),
    reason="../shared/behaviours.md is not beside this checkout (put the project's shared/ folder there)",
)
def test_every_named_row_exists_in_behaviours_md():
    documented = set(re.findall(r"^\| `([a-z0-9_.]+)`", BEHAVIOURS.read_text(encoding="utf-8"), re.M))
    assert declared_rows() - documented == set()


@pytest.mark.skipif(
    not BEHAVIOURS.exists(),
    reason="../shared/behaviours.md is not beside this checkout (put the project's shared/ folder there)",
)
def test_the_chapter_the_probes_encode_is_the_one_behaviours_md_names():
    """Only that chapter's blocks are linked to the probes in the report (`chapter.grid.chapter_views`)."""
    from conformance.core.versions import DOCUMENTED_CHAPTER

    named = re.search(r"The chapter `seeds/([^`]+)\.txt`", BEHAVIOURS.read_text(encoding="utf-8"))
    assert named and named.group(1) == DOCUMENTED_CHAPTER


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_is_well_formed(case):
    assert case.claim.endswith(".") and case.section.startswith("§")
    assert case.source().lstrip().startswith(("@SECTION.case", "def "))
    for param in case.param_names:
        assert case.rows(param), f"{case.cell_id(param)} names no row"
        expectation = case.param(param).expect
        assert isinstance(expectation, Expect)
        for platform in ["linux-x86_64", "darwin-arm64", "linux-x86_64-cuda"]:
            expected = expectation.on(platform)
            if isinstance(expected, Skip) or dict(expected):
                continue
            # issue 25: a row the chapter only prints has no asserted fact; it must say so where the report
            # shows it (the claim, or the parameter's label), and still compare something in the printed tier.
            assert expectation.printed_on(platform), f"{case.cell_id(param)} compares nothing"
            assert "printed-only row" in (case.claim + " " + case.param(param).label).lower(), (
                f"{case.cell_id(param)} asserts nothing but does not say it is a printed-only row"
            )


def test_platform_dependent_expectations():
    by_id = {c.id: c for c in CASES}
    miscompile = by_id["program.closure_constant_miscompile"]
    assert miscompile.expected("", "linux-x86_64")["jit_error_above_1"] is False
    assert miscompile.expected("", "darwin-arm64")["jit_error_above_1"] is True
    guard = by_id["compilation.transfer_guard_disallow"]
    assert guard.expected("cpu", "linux-x86_64")["float_of_result"] == "allowed"
    assert guard.expected("cpu", "linux-x86_64-cuda")["float_of_result"] == "blocked"


def test_quiz_rows_need_no_case_but_a_checked_one_is_checked_once():
    quiz_cases = {row: case.id for case in CASES for row in case.all_rows if row.startswith("quiz.")}
    assert quiz_cases == {
        "quiz.q3.debug_nans_after_vmap": "numerics.debug_nans_flag_after_vmap",
        "quiz.q6.auto_mode": "config.traceback_filtering_auto_under_ipython",
    }


def test_known_issue_is_per_parameter():
    nans = next(c for c in CASES if c.id == "numerics.debug_nans_vmap_miss")
    assert [p for p in nans.param_names if nans.is_known_issue(p)] == ["vmap"]


def test_miscompile_is_a_known_issue_only_where_it_reproduces():
    miscompile = next(c for c in CASES if c.id == "program.closure_constant_miscompile")
    assert miscompile.is_known_issue("", "darwin-arm64")
    assert not miscompile.is_known_issue("", "linux-x86_64")
