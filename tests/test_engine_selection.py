"""`selection`: the names `-k` matches for a cell, and the pytest-style expressions over them."""

from __future__ import annotations

import pytest

from conformance.core.case import find_case, load_cases
from conformance.engine.selection import Cell, all_cells, select_cells
from conformance.errors import ConformanceError

FIXTURES = "tests.fixture_cases"


@pytest.fixture(scope="module")
def cells():
    return all_cells(load_cases(FIXTURES))


def test_a_cell_answers_to_its_id_module_file_case_id_and_rows():
    echo = Cell(find_case("machinery.echo", FIXTURES), "a")
    assert echo.id == "machinery.echo[a]"
    assert echo.names() == [
        "machinery.echo[a]",
        "echo[a]",
        "machinery.py",
        "cases",
        "conformance",
        "machinery.echo",
        "fixture.param.a",
    ]
    plain = Cell(find_case("machinery.conforming", FIXTURES), "")
    assert plain.id == "machinery.conforming" and plain.names()[-1] == "fixture.conforms"


def test_every_parameter_of_every_case_is_a_cell_in_declaration_order(cells):
    ids = [c.id for c in cells]
    assert ids[:3] == ["machinery.conforming", "machinery.differing", "machinery.raising"]
    assert ids.index("machinery.echo[a]") + 1 == ids.index("machinery.echo[b]")
    assert len(ids) == len(set(ids)) == sum(len(c.param_names) for c in load_cases(FIXTURES))


def test_no_expression_selects_everything(cells):
    assert select_cells(cells, None) == cells and select_cells(cells, "") == cells
    assert select_cells(cells, "") is not cells  # a copy


@pytest.mark.parametrize(
    "expression, chosen",
    [
        ("echo", ["machinery.echo[a]", "machinery.echo[b]"]),
        ("ECHO and not b", ["machinery.echo[a]"]),  # case-insensitive; `b` is in no other name
        ("fixture.param.b", ["machinery.echo[b]"]),  # a row ID
        ("echo[a] or conforming", ["machinery.conforming", "machinery.echo[a]"]),
        ("(slow_import or unimportable) and [x]", ["machinery.unimportable_under_env[x]", "machinery.slow_import[x]"]),
    ],
)
def test_expressions_combine_case_insensitive_substrings(cells, expression, chosen):
    assert [c.id for c in select_cells(cells, expression)] == chosen


def test_an_expression_that_selects_nothing_or_does_not_parse_is_one_line(cells):
    with pytest.raises(ConformanceError) as caught:
        select_cells(cells, "no_such_thing")
    assert str(caught.value) == (
        "-k 'no_such_thing' selects no cell; `jax-conformance list` shows the case ids and row IDs to match"
    )
    with pytest.raises(ConformanceError, match=r"^-k expression 'echo and \(' does not parse: "):
        select_cells(cells, "echo and (")
