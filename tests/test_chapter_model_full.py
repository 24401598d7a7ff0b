"""A chapter's model (`conformance.chapter.model`), field by field: the step as the runner's plan holds it and the
one line an outcome's detail says of what raised (issue 48: written against the survivors of a mutation run). Pure."""

from __future__ import annotations

import pytest

from conformance.chapter.model import BlockStatus, Outcome, Step


def test_a_step_as_the_runners_plan_holds_it_keeps_every_field_under_its_own_key():
    step = Step(2, 4, "ValueError", "bad value", "comment", shown="3\n", magic="%timeit f()", mode="single")
    assert step.to_json() == {
        "first": 2,
        "last": 4,
        "stated": "ValueError",
        "message": "bad value",
        "form": "comment",
        "shown": "3\n",
        "magic": "%timeit f()",
        "mode": "single",
    }
    assert Step(1, 1).to_json() == {
        "first": 1,
        "last": 1,
        "stated": "",
        "message": "",
        "form": "",
        "shown": None,
        "magic": "",
        "mode": "exec",
    }


@pytest.mark.parametrize(
    "exception, message, said",
    [
        ("ValueError", "", "ValueError"),  # no message: no dangling colon, no trailing space
        ("", "lost its type", ": lost its type"),  # only the end is trimmed
        ("KeyError", "MAX", "KeyError: MAX"),  # a message ending in a letter keeps it
        ("ValueError", "ends with a colon:", "ValueError: ends with a colon"),
        ("", "", ""),
    ],
)
def test_what_raised_is_its_type_and_message_trimmed_only_of_a_trailing_colon_or_space(exception, message, said):
    assert Outcome(BlockStatus.RAISED, exception=exception, message=message).detail == said
    assert Outcome(BlockStatus.RAISED, exception=exception, message=message, line=3).detail == (f"line 3: {said}")


def test_what_raised_otherwise_says_the_type_alone_when_it_has_no_message():
    assert Outcome(BlockStatus.RAISED_OTHERWISE, exception="TypeError", stated="ValueError", line=2).detail == (
        "line 2: raised TypeError; the page states ValueError"
    )
