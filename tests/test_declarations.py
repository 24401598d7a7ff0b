"""Case declarations: API v2 rules enforced at import, the project's row list, and row coverage."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conformance.core import rowlist
from conformance.core.case import (
    CaseDeclarationError,
    Expect,
    Observation,
    Param,
    Section,
    Skip,
    find_case,
    load_cases,
    validate,
)
from conformance.engine.runner import SOURCE_ROOT

BEHAVIOURS = Path(SOURCE_ROOT).parent / "shared" / "behaviours.md"
NOT_ENCODED = Path(SOURCE_ROOT) / "conformance" / "cases" / "not_encoded.toml"
MAX_NOT_ENCODED = 5
SECTION = Section("§T", "Declaration tests")


def declare(**kwargs):
    """Declare a throwaway case in the default package namespace (so rows are checked)."""
    probe = kwargs.pop("probe", None)

    def default_probe():
        return Observation({})

    function = probe or default_probe
    function.__module__ = "conformance.cases.scratch_declarations"
    return SECTION.case(**kwargs)(function)


def test_unknown_row_id_is_refused_naming_the_case():
    with pytest.raises(
        CaseDeclarationError,
        match=r"scratch_declarations.default_probe: row 'no.such.row' "
        r"is not in the project's row list",
    ):
        declare(rows=["no.such.row"], claim="x.", expect=Expect({}))


def test_duplicate_parameter_is_refused():
    with pytest.raises(CaseDeclarationError, match="declared twice"):

        def probe(p):
            return Observation({})

        declare(
            claim="x.",
            probe=probe,
            params=[Param("a", ["setup.environment"], Expect({})), Param("a", ["setup.environment"], Expect({}))],
        )


def test_probe_signature_must_take_its_parameter():
    with pytest.raises(CaseDeclarationError, match="should take one argument, the parameter"):
        declare(claim="x.", params=[Param("a", ["setup.environment"], Expect({}))])
    with pytest.raises(CaseDeclarationError, match="should take no argument"):

        def probe(p):
            return Observation({})

        declare(claim="x.", probe=probe, rows=["setup.environment"], expect=Expect({}))


def test_rows_and_expect_belong_inside_params():
    with pytest.raises(CaseDeclarationError, match="inside each Param"):

        def probe(p):
            return Observation({})

        declare(
            claim="x.", probe=probe, rows=["setup.environment"], params=[Param("a", ["setup.environment"], Expect({}))]
        )


def test_overlapping_platform_patterns_are_refused():
    with pytest.raises(CaseDeclarationError, match=r"platform patterns 'darwin-\*' and '\*-arm64' overlap"):
        declare(
            claim="x.",
            rows=["setup.environment"],
            expect=Expect({}, platforms={"darwin-*": {"a": 1}, "*-arm64": Skip("no")}),
        )


def test_platform_override_changes_some_facts_and_keeps_the_rest():
    expect = Expect({"a": 1, "b": 2}, platforms={"darwin-arm64": {"b": 3}, "*-cuda": Skip("gpu")})
    assert expect.on("linux-x86_64") == {"a": 1, "b": 2}
    assert expect.on("darwin-arm64") == {"a": 1, "b": 3}
    assert expect.on("linux-x86_64-cuda") == Skip("gpu")


def test_only_a_stated_reason_asks_for_a_fresh_interpreter():
    cases = {c.id: c for c in load_cases("tests.fixture_cases")}
    assert not cases["machinery.echo"].needs_fresh_interpreter("a")  # env= is served by a fork server of its own
    assert not cases["machinery.reading_stdin"].needs_fresh_interpreter("")
    assert not cases["machinery.conforming"].needs_fresh_interpreter("")
    params = (
        Param("a", rows=["fixture.param.a"], expect=Expect({})),
        Param("b", rows=["fixture.param.b"], expect=Expect({}), fresh_interpreter="global state"),
    )
    one = replace(cases["machinery.echo"], params=params)
    assert [one.needs_fresh_interpreter(p) for p in ("a", "b")] == [False, True]
    assert one.fresh_interpreter_reason("b") == "global state"
    whole = replace(cases["machinery.echo"], fresh_interpreter="all of it")
    assert whole.needs_fresh_interpreter("a") and whole.fresh_interpreter_reason("b") == "all of it"


def test_fresh_interpreter_takes_a_reason_not_a_flag():
    echo = find_case("machinery.echo", "tests.fixture_cases")
    flagged = replace(echo, params=(Param("a", rows=["fixture.param.a"], expect=Expect({}), fresh_interpreter=True),))
    with pytest.raises(CaseDeclarationError, match="takes the reason"):
        validate(flagged)


def _scratch_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(
        Path(SOURCE_ROOT) / "conformance", copy / "conformance", ignore=shutil.ignore_patterns("__pycache__")
    )
    return copy


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("duplicate", "declared twice"),
        ("unknown_row", "is not in the project's row list"),
    ],
)
def test_list_fails_with_one_line_for_a_wrong_declaration_in_a_scratch_copy(tmp_path, mistake, message):
    copy = _scratch_copy(tmp_path)
    module = copy / "conformance" / "cases" / "tracers.py"
    text = module.read_text(encoding="utf-8")
    if mistake == "duplicate":
        decorated = text[text.index("@SECTION.case(") :]
        text += "\n\n" + decorated
    else:
        text = text.replace('"tracers.hierarchy"', '"tracers.no_such_row"', 1)
    module.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "list"],
        cwd=copy,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(copy)},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "tracers." in lines[0], done.stderr


def test_core_and_child_need_only_the_standard_library(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    for name in ("pytest", "jinja2", "packaging", "filelock", "_pytest"):
        (blocker / f"{name}.py").write_text(f"raise ImportError('{name} is blocked')\n")
    script = textwrap.dedent("""
        import sys
        sys.path[:0] = [sys.argv[1], sys.argv[2]]
        import conformance.core.case, conformance.core.verdict, conformance.core.compare
        import conformance.core.observation, conformance.core.status, conformance.core.rowlist
        import conformance.child.main, conformance.child.forkserver, conformance.child.envinfo
        import conformance.cases.helpers
        conformance.core.case.load_cases()
        print("ok")
    """)
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(blocker), SOURCE_ROOT], capture_output=True, text=True
    )
    assert done.stdout.strip() == "ok", done.stderr


def test_stdlib_check_can_fail(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "jinja2.py").write_text("raise ImportError('jinja2 is blocked')\n")
    script = "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import conformance.report.html"
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(blocker), SOURCE_ROOT], capture_output=True, text=True
    )
    assert done.returncode != 0 and "jinja2 is blocked" in done.stderr


def test_row_list_matches_behaviours_md():
    if not BEHAVIOURS.exists():
        pytest.skip(
            f"{BEHAVIOURS} is not beside this checkout, so the row list cannot be compared with it (put the "
            f"project's shared/ folder beside it)"
        )
    expected = rowlist.render_tsv(rowlist.parse_behaviours(BEHAVIOURS.read_text(encoding="utf-8")))
    assert rowlist.ROWS_FILE.read_text(encoding="utf-8") == expected, (
        "rows.tsv is out of date: python tools/import_rows.py ../shared/behaviours.md"
    )


def test_row_list_parser_reads_table_rows_only():
    text = "| ID | § |\n|---|---|\n| `a.b` | 1.2 | Does a thing. More. | x | y |\nprose `c.d`\n"
    assert rowlist.parse_behaviours(text) == [rowlist.Row("a.b", "1.2", "Does a thing.")]


def not_encoded_rows() -> dict[str, str]:
    data = tomllib.loads(NOT_ENCODED.read_text(encoding="utf-8"))
    entries = data.get("row", [])
    assert all(
        isinstance(e.get("id"), str) and isinstance(e.get("reason"), str) and e["reason"].strip() for e in entries
    ), "every entry needs an id and a reason"
    return {e["id"]: e["reason"] for e in entries}


def test_every_row_is_checked_by_exactly_one_case_or_listed_as_not_encoded():
    named: dict[str, list[str]] = {}
    for case in load_cases():
        for row in case.all_rows:
            named.setdefault(row, []).append(case.id)
    twice = {row: ids for row, ids in named.items() if len(ids) > 1}
    assert twice == {}, "a row is named by more than one case"
    skipped = not_encoded_rows()
    assert len(skipped) <= MAX_NOT_ENCODED
    assert set(skipped) & set(named) == set(), "a row is both encoded and listed as not encoded"
    rows = {r.id for r in rowlist.load_rows() if not r.id.startswith("quiz.")}
    assert set(skipped) <= rows
    missing = sorted(rows - set(named) - set(skipped))
    assert missing == [], f"{len(missing)} rows are neither checked nor listed: {missing[:10]}"


def test_platform_overrides_go_to_the_tier_that_declares_each_fact():
    from conformance.core.case import Expect, Skip

    expect = Expect(
        {"raises": "TypeError"},
        printed={"count": 3},
        platforms={"darwin-*": {"count": 4, "raises": "ValueError"}, "*-cuda": Skip("cpu only")},
    )
    assert expect.on("linux-x86_64") == {"raises": "TypeError"}
    assert expect.printed_on("linux-x86_64") == {"count": 3}
    assert expect.on("darwin-arm64") == {"raises": "ValueError"}
    assert expect.printed_on("darwin-arm64") == {"count": 4}
    assert isinstance(expect.on("linux-x86_64-cuda"), Skip) and expect.printed_on("linux-x86_64-cuda") == {}


def test_a_fact_declared_in_both_tiers_is_refused():
    with pytest.raises(CaseDeclarationError, match="message is declared both asserted"):
        declare(claim="x.", rows=["setup.environment"], expect=Expect({"message": "a"}, printed={"message": "a"}))
