"""A `>>>` transcript's examples (`conformance.chapter.transcript`): only the newline doctest ends each example's
source and shown output with is dropped, never the example's own last characters (issue 48: written against the
survivors of a mutation run). No JAX."""

from __future__ import annotations

from conformance.chapter.model import Step
from conformance.chapter.transcript import transcript_steps


def test_an_examples_source_ending_in_any_character_keeps_it_at_its_own_line():
    runnable, steps, notes = transcript_steps(">>> X = \"X\"\n>>> X\n'X'\n>>> XX\n")
    assert runnable.split("\n") == ['X = "X"', "X", "", "XX", ""]
    assert [(s.first, s.last) for s in steps] == [(1, 1), (2, 2), (4, 4)]
    assert notes == ()


def test_an_examples_shown_output_ending_in_any_character_is_kept_whole():
    runnable, steps, _ = transcript_steps('>>> print("a\\nX")\na\nX\n>>> print("XX")\nXX\n\n>>> None\n')
    assert steps == (
        Step(1, 1, shown="a\nX", mode="single"),
        Step(4, 4, shown="XX", mode="single"),
        Step(7, 7, shown="", mode="single"),
    )
    assert runnable.split("\n") == ['print("a\\nX")', "", "", 'print("XX")', "", "", "None", ""]


def test_a_multi_line_example_ends_at_its_last_continuation_line():
    runnable, (step,), _ = transcript_steps(">>> for X in 'ab':\n...     print(X)\na\nb\n")
    assert step == Step(1, 2, shown="a\nb", mode="single")
    assert runnable.split("\n") == ["for X in 'ab':", "    print(X)", "", "", ""]
