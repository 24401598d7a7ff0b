"""`chapter --bisect` on a printed-output change (issue 59): a block whose status stays while what it prints changes
(JAX's FAQ's `jit(log(exp(x)))(100.)` prints `inf` from 0.11.1 on, where the page shows `100.0`) is bisected to
the first release whose printed output differs from the good end's, and the lines say which change was bisected.
No JAX, no process: each release's cells are made here."""

from __future__ import annotations

import dataclasses

from conformance.chapter.bisecting import bisect_block
from conformance.chapter.model import BlockStatus
from tests.test_chapter_cells import ASSERTS, CHAPTER, FIRST, cells_for

RELEASES = ["0.8.3", "0.9.0", "0.9.1", "0.10.0", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0.1"]


class Builder:
    """The package index's releases and an interpreter for each (what `bisect_block` asks of a builder)."""

    class index:
        @staticmethod
        def releases(project):
            return {v: None for v in RELEASES}

    @staticmethod
    def interpreter_for(version):
        return None


def releases_printing(printed, status_from=None):
    """A `run_release` whose FIRST block prints `printed(version)`, and whose ASSERTS block fails its assert from
    `status_from` on (never, when None); the versions it ran are kept in its `ran`."""

    def run_release(version):
        run_release.ran.append(version)
        failed = status_from is not None and RELEASES.index(version) >= RELEASES.index(status_from)
        cells = cells_for(
            version,
            BlockStatus.RAN,
            BlockStatus.ASSERT_FAILED if failed else BlockStatus.RAN,
            BlockStatus.RAN,
            BlockStatus.RAN,
        )
        cells[FIRST.id] = dataclasses.replace(cells[FIRST.id], stdout_tail=printed(version))
        return cells

    run_release.ran = []
    return run_release


def from_0_11_1(version):
    return "inf\n" if RELEASES.index(version) >= RELEASES.index("0.11.1") else "100.0\n"


def test_a_change_of_printed_output_alone_is_bisected_to_the_first_release_that_prints_otherwise():
    run = releases_printing(from_0_11_1)
    outcome, lines = bisect_block(CHAPTER, FIRST, "0.8.3", "0.12.0.1", Builder, run, lambda line: None)
    assert (outcome.last_good, outcome.first_bad) == ("0.11.0", "0.11.1")
    assert len(set(run.ran)) < len(RELEASES)  # a search, not every release
    assert lines[0].endswith("bisected a change of its printed output (its status is the same at both ends)")
    assert lines[1].strip() == "last release like jax 0.8.3: 0.11.0 (ran; printed: 100.0)"
    assert lines[2].strip() == "first release unlike it:     0.11.1 (ran; printed: inf)"


def test_printed_output_equal_to_the_pages_tolerance_is_not_a_change_and_the_ends_then_agree():
    run = releases_printing(lambda v: "100.00001\n" if v == "0.12.0.1" else "100.0\n")
    outcome, lines = bisect_block(CHAPTER, FIRST, "0.8.3", "0.12.0.1", Builder, run, lambda line: None)
    assert outcome.ends_agree
    assert lines == [lines[0]] and lines[0].endswith(
        "jax 0.8.3 and jax 0.12.0.1 agree (ran, and print the same); nothing to bisect"
    )


def test_a_status_change_is_bisected_as_before_even_where_the_printed_output_changed_earlier():
    run = releases_printing(lambda v: "x\n" if RELEASES.index(v) >= 2 else "y\n", status_from="0.11.2")
    # the block that changes status prints nothing itself; FIRST's printing changes at 0.9.1, before it
    outcome, lines = bisect_block(CHAPTER, ASSERTS, "0.8.3", "0.12.0.1", Builder, run, lambda line: None)
    assert (outcome.last_good, outcome.first_bad) == ("0.11.1", "0.11.2")
    assert lines[0].endswith("bisected a change of its status")
    assert lines[2].strip().startswith("first release unlike it:     0.11.2 (assert_failed: line 1: assert")
