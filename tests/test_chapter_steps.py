"""A page's status changes between adjacent releases (issue 59: the report said "0 between adjacent columns" where two
blocks had changed): `chapter.grid.block_steps`, each pair of adjacent releases with its blocks' status changes and
its printed changes alone. Pure: the grid is made here."""

from __future__ import annotations

from conformance.chapter.grid import BlockChange, BlockStep, ChapterGrid, GridCell, GridRow, block_steps


def cell(status: str, printed: bool = False) -> GridCell:
    return GridCell(status, "", printed, (), "", 0.0, None)  # type: ignore[arg-type]


def row(block: str, cells: dict[str, GridCell]) -> GridRow:
    return GridRow(block, block, 1, 1, "", "", "x = 1", "0" * 16, cells)


def test_each_adjacent_pair_says_its_status_changes_and_its_printed_changes_alone():
    grid = ChapterGrid(
        "p",
        "linux-x86_64",
        ("0.4.38", "0.8.3", "0.12.0.1"),
        (
            row("a", {"0.4.38": cell("ran"), "0.8.3": cell("raised"), "0.12.0.1": cell("raised")}),
            row("b", {"0.4.38": cell("ran"), "0.8.3": cell("ran", printed=True), "0.12.0.1": cell("ran")}),
            row("c", {"0.4.38": cell("ran"), "0.12.0.1": cell("assert_failed")}),  # not measured on 0.8.3
            row("d", {"0.4.38": cell("ran"), "0.8.3": cell("assert_failed", True), "0.12.0.1": cell("ran", True)}),
        ),
    )
    assert block_steps(grid) == (
        BlockStep(
            "0.4.38",
            "0.8.3",
            (BlockChange("a", "ran", "raised"), BlockChange("d", "ran", "assert_failed", True)),
            (BlockChange("b", "ran", "ran", True),),
        ),
        BlockStep(
            "0.8.3",
            "0.12.0.1",
            (BlockChange("d", "assert_failed", "ran", True),),
            (BlockChange("b", "ran", "ran", False),),
        ),
    )


def test_one_release_has_no_step_and_an_unchanged_pair_has_none_to_say():
    one = ChapterGrid("p", "linux-x86_64", ("0.4.38",), (row("a", {"0.4.38": cell("ran")}),))
    assert block_steps(one) == ()
    two = ChapterGrid(
        "p", "linux-x86_64", ("0.4.38", "0.8.3"), (row("a", {"0.4.38": cell("ran", True), "0.8.3": cell("ran", True)}),)
    )
    assert block_steps(two) == (BlockStep("0.4.38", "0.8.3", (), ()),)
