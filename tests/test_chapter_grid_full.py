"""The report's chapter data (`conformance.chapter.grid`) on the edges the other grid tests leave out: how many facts
a probe's side names before "and N more", a probe that says nothing, and a block judged on a later release after one
no probe judged. No JAX, no process."""

from __future__ import annotations

from conformance.chapter.grid import _observed
from conformance.chapter.model import BlockStatus
from conformance.core.status import Status
from conformance.results.schema import CellResult
from tests.test_chapter_cells import ASSERTS, cells_for, probe, result_file
from tests.test_chapter_grid import _views

S = BlockStatus


def test_a_probe_with_four_facts_that_differ_names_three_and_one_more():
    diff = [{"path": p, "expected": 1, "observed": 2} for p in "abcd"]
    cell = CellResult(case="numerics.d", param="", rows=[], status=Status.DIFFERS, diff=diff)
    assert _observed(cell) == (
        "a is 2 where the chapter says 1; b is 2 where the chapter says 1; c is 2 where the chapter says 1 and 1 more"
    )
    assert _observed(CellResult(case="numerics.d", param="", rows=[], status=Status.DIFFERS, diff=diff[:3])) == (
        "a is 2 where the chapter says 1; b is 2 where the chapter says 1; c is 2 where the chapter says 1"
    )


def test_a_probe_that_differs_with_no_diff_reason_or_observation_says_nothing_it_observed():
    silent = CellResult(case="numerics.s", param="", rows=["numerics.x"], status=Status.UNSUPPORTED, section="§3.1")
    assert _observed(silent) == ""
    files = [result_file("0.4.38", [*cells_for("0.4.38", S.RAN, S.RAN, S.RAN, S.RAN).values(), silent])]
    (view,) = _views(files)
    first = view.disagreements[0]
    assert first.probes[0].observed == ""
    assert first.text.endswith("while every probe differs of its subsection: numerics.s unsupported.")


def test_a_block_is_judged_on_every_release_after_one_where_no_probe_of_its_subsection_is_judged():
    files = [
        result_file(
            "0.4.38",
            [
                *cells_for("0.4.38", S.RAN, S.ASSERT_FAILED, S.RAN, S.RAN).values(),
                probe("numerics.a", "§3.1", Status.ERROR),
            ],
        ),
        result_file(
            "0.5.3",
            [
                *cells_for("0.5.3", S.RAN, S.ASSERT_FAILED, S.RAN, S.RAN).values(),
                probe("numerics.a", "§3.1", Status.CONFORMS),
            ],
        ),
    ]
    (view,) = _views(files)
    assert [(d.block, d.version, d.probes_say) for d in view.disagreements] == [
        (ASSERTS.id, "0.5.3", "every probe conforms")
    ]
