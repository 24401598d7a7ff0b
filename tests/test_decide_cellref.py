"""`cellref`: naming one cell as `case[param]`, `case:param`, `case`, or by a row ID."""

from __future__ import annotations

import pytest

from conformance.core.case import load_cases
from conformance.decide.cellref import CellRef, parse_cell_ref, resolve_cell
from conformance.errors import ConformanceError


@pytest.mark.parametrize(
    "text, ref",
    [
        ("numerics.vmap_miss[vmap]", CellRef("numerics.vmap_miss", "vmap")),
        ("numerics.vmap_miss:vmap", CellRef("numerics.vmap_miss", "vmap")),
        ("  numerics.vmap_miss  ", CellRef("numerics.vmap_miss", "")),
        ("team/sub.case[a=1.b-c_d]", CellRef("team/sub.case", "a=1.b-c_d")),
        ("numerics.vmap_miss[]", CellRef("numerics.vmap_miss", "")),
        ("nodot", None),  # a case id always has a module
        ("numerics.x[vmap", None),
        ("numerics.x[a b]", None),
        ("numerics.x:a:b", None),
        ("x numerics.y", None),
        ("", None),
        (None, None),
        (3, None),
    ],
)
def test_a_cell_is_named_by_brackets_or_a_colon(text, ref):
    assert parse_cell_ref(text) == ref


def test_cell_id_names_the_parameter_only_when_there_is_one():
    assert CellRef("a.b", "p").cell_id == "a.b[p]" and CellRef("a.b").cell_id == "a.b"


@pytest.fixture(scope="module")
def cases():
    return load_cases("tests.fixture_cases")


def test_a_cell_resolves_by_its_id_or_its_row(cases):
    assert resolve_cell("machinery.echo:a", cases).id == "machinery.echo[a]"
    assert resolve_cell("machinery.echo[b]", cases).id == "machinery.echo[b]"
    assert resolve_cell("machinery.conforming", cases).id == "machinery.conforming"
    assert resolve_cell("fixture.param.b", cases).id == "machinery.echo[b]"
    assert resolve_cell("fixture.conforms", cases).id == "machinery.conforming"


def test_a_case_with_parameters_named_without_one_lists_them(cases):
    with pytest.raises(ConformanceError) as raised:
        resolve_cell("machinery.echo", cases)
    assert str(raised.value) == "machinery.echo has parameters a, b; name one as machinery.echo:PARAM"
    with pytest.raises(ConformanceError, match="machinery.echo has parameters a, b"):
        resolve_cell("machinery.echo:zz", cases)


def test_a_name_of_no_cell_is_one_line(cases):
    with pytest.raises(ConformanceError) as raised:
        resolve_cell("machinery.nothing", cases)
    assert str(raised.value) == (
        "'machinery.nothing' names no cell (a case id such as "
        "numerics.debug_nans_vmap_miss:vmap, or a row ID); `jax-conformance list` shows them"
    )
    with pytest.raises(ConformanceError, match="names no cell"):
        resolve_cell("fixture", cases)
