"""Selecting cells with a pytest-style `-k` expression, without starting pytest. Pure logic.

The names a cell answers to are the ones the pytest plugin gives its items (the
cell name, its module file, the case id and its row IDs), matched the same way:
case-insensitive substrings combined with `and`, `or`, `not` and parentheses.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.core.case import Case
from conformance.errors import ConformanceError


@dataclass(frozen=True)
class Cell:
    """One case parameter, before it runs anywhere."""

    case: Case
    param: str

    @property
    def id(self) -> str:
        """The cell id, e.g. `numerics.debug_nans_vmap_miss[vmap]`."""
        return self.case.cell_id(self.param)

    def names(self) -> list[str]:
        """Every name `-k` can match for this cell."""
        module, _, rest = self.id.partition(".")
        return [self.id, rest, f"{module}.py", "cases", "conformance", self.case.id, *self.case.rows(self.param)]


def all_cells(cases: list[Case]) -> list[Cell]:
    """Every cell of `cases`, in declaration order."""
    return [Cell(c, p) for c in cases for p in c.param_names]


def _compile(expression: str):
    try:
        from _pytest.mark.expression import Expression
    except ImportError as exc:  # pragma: no cover - pytest is a dependency
        raise ConformanceError(f"pytest is needed to read -k expressions: {exc}") from None
    try:
        return Expression.compile(expression)
    except Exception as exc:  # noqa: BLE001 - pytest's ParseError, whose home module moved over time
        raise ConformanceError(f"-k expression {expression!r} does not parse: {exc}") from None


def _matcher(names: list[str]):
    lowered = [n.lower() for n in names]

    def matches(word: str, /, **_kwargs) -> bool:
        return any(word.lower() in name for name in lowered)

    return matches


def select_cells(cells: list[Cell], expression: str | None) -> list[Cell]:
    """The cells that `expression` selects; all of them when it is empty. Raises when none match."""
    if not expression:
        return list(cells)
    compiled = _compile(expression)
    chosen = [cell for cell in cells if compiled.evaluate(_matcher(cell.names()))]
    if not chosen:
        raise ConformanceError(
            f"-k {expression!r} selects no cell; `jax-conformance list` shows the case ids and row IDs to match"
        )
    return chosen
