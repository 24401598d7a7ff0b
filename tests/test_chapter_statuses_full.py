"""Each block's whole outcome from what the runner recorded (`conformance.chapter.statuses`), field by field: what
every status keeps of the block's run, the lines and names a stated error is judged by, the printed comparison and
the settings an earlier block left set. Made-up records, as in tests/test_chapter_statuses.py: no process runs."""

from __future__ import annotations

from conformance.chapter.model import BlockStatus, Outcome, Step
from conformance.chapter.supervisor import RawResult
from tests.test_chapter_statuses import block, ok, outcomes, raised

S = BlockStatus
RUN = {"stdout": "out\n", "stderr_tail": "err", "duration_s": 1.25}  # what a block's record says of its run
KEPT = {"stdout": "out\n", "stderr": "err", "duration_s": 1.25, "notes": ("the page says: n",)}  # ...as kept


def test_every_status_from_a_record_keeps_what_the_block_printed_its_time_and_the_pages_notes():
    notes = ("the page says: n",)
    steps = (Step(1, 1, "ValueError"),)
    blocks = [
        block(0, raises="KeyError", notes=notes),
        block(1, steps=steps, notes=notes),
        block(2, raises="KeyError", notes=notes),
        block(3, raises="KeyError", defines=("a",), notes=notes),
        block(4, notes=notes),
        block(5, notes=notes),
    ]
    found = outcomes(
        blocks,
        {
            0: ok(**RUN),
            1: ok(steps=[{"step": 0, **raised("ValueError", "v", line=1, matches=True)}], **RUN),
            2: raised("KeyError", "'k'", line=2, matches=True, **RUN),
            3: raised("ValueError", "v", line=3, matches=False, **RUN),
            4: raised("AssertionError", "m", **{"assert": {"block": 4, "line": 5, "text": "assert x"}}, **RUN),
            5: raised("NameError", "name 'a' is not defined", name="a", line=6, **RUN),
        },
    )
    assert found == [
        Outcome(S.DID_NOT_RAISE, stated="KeyError", **KEPT),
        Outcome(S.RAISED_AS_DOCUMENTED, raised_as_stated=("line 1: ValueError",), **KEPT),
        Outcome(
            S.RAISED_AS_DOCUMENTED,
            exception="KeyError",
            message="'k'",
            line=2,
            raised_as_stated=("line 2: KeyError",),
            **KEPT,
        ),
        Outcome(S.RAISED_OTHERWISE, exception="ValueError", message="v", line=3, stated="KeyError", **KEPT),
        Outcome(
            S.ASSERT_FAILED, exception="AssertionError", message="m", assert_line=5, assert_text="assert x", **KEPT
        ),
        Outcome(
            S.AFTER_FAILURE,
            exception="NameError",
            message="name 'a' is not defined",
            line=6,
            name="a",
            because=blocks[3].id,
            **KEPT,
        ),
    ]
    assert found[5].detail == (
        f"NameError: name 'a' is not defined (block {blocks[3].id} should have defined it); the page says: n"
    )


def test_a_record_without_a_time_reads_as_no_time_and_one_without_an_exceptions_name_as_none():
    found = outcomes(
        [block(0), block(1), block(2)],
        {
            0: ok(),
            1: {"outcome": "exception", "message": "boom"},
            2: RawResult(2, None),  # no record, though not killed
        },
    )
    assert found == [
        Outcome(S.RAN, stdout="", stderr="", duration_s=0.0),
        Outcome(S.RAISED, message="boom", stdout="", stderr=""),
        Outcome(S.RAISED, stdout="", stderr=""),
    ]


def test_a_name_error_without_a_name_or_a_name_on_another_error_is_a_raise_with_nothing_to_explain():
    blocks = [block(0, defines=("a",)), block(1), block(2)]
    found = outcomes(
        blocks,
        {
            0: raised("ValueError"),
            1: raised("NameError", "name 'a' is not defined", line=1),  # the runner found no name
            2: raised("AttributeError", "module has no attribute 'a'", name="a", line=2),  # not a NameError
        },
    )
    assert [(o.status, o.cause, o.name, o.because) for o in found[1:]] == [
        (S.RAISED, "", "", ""),
        (S.RAISED, "", "", ""),
    ]
    assert found[1].detail == "line 1: NameError: name 'a' is not defined"
    assert found[2].detail == "line 2: AttributeError: module has no attribute 'a'"


def test_a_name_error_for_a_name_the_block_itself_binds_later_names_no_block_that_binds_it():
    # `print(total); total = 0`: the block binds the name after using it; only a block after it is named as later
    blocks = [block(0), block(1, defines=("total",)), block(2)]
    found = outcomes(
        blocks, {0: ok(), 1: raised("NameError", "name 'total' is not defined", name="total", line=1), 2: ok()}
    )
    assert found[1].cause == "no block of the page binds 'total' before it"
    blocks = [block(0), block(1, defines=("total",)), block(2, defines=("total",))]
    found = outcomes(blocks, {0: ok(), 1: raised("NameError", "name 'total' is not defined", name="total"), 2: ok()})
    assert found[1].cause == f"no block of the page binds 'total' before it (block {blocks[2].id}, later, does)"


def test_a_dotted_stated_class_is_matched_by_its_last_name_in_the_mro():
    mro = ["TracerBoolConversionError", "ConcretizationTypeError", "TypeError", "Exception"]
    stated = "jax.errors.ConcretizationTypeError"
    blocks = [
        block(0, raises=stated),
        block(1, steps=(Step(1, 1, stated),)),
        block(2, raises="errors.TypeError"),
        block(3, steps=(Step(1, 1, "errors.KeyError"),)),
    ]
    found = outcomes(
        blocks,
        {
            0: raised("TracerBoolConversionError", "t", line=1, matches=None, mro=mro),
            1: ok(steps=[{"step": 0, **raised("TracerBoolConversionError", "t", line=1, matches=None, mro=mro)}]),
            2: raised("TracerBoolConversionError", "t", matches=None, mro=mro),
            3: ok(steps=[{"step": 0, **raised("TracerBoolConversionError", "t", line=1, matches=None, mro=mro)}]),
        },
    )
    assert [o.status for o in found] == [
        S.RAISED_AS_DOCUMENTED,
        S.RAISED_AS_DOCUMENTED,
        S.RAISED_AS_DOCUMENTED,
        S.RAISED_OTHERWISE,
    ]
    assert found[1].raised_as_stated == ("line 1: TracerBoolConversionError",)
    assert found[3].detail == "line 1: raised TracerBoolConversionError: t; the page states errors.KeyError"


def test_the_runners_word_that_a_raise_does_not_match_wins_over_the_mro():
    steps = (Step(1, 1, "ValueError"),)
    found = outcomes(
        [block(0, steps=steps), block(1, raises="ValueError")],
        {
            0: ok(steps=[{"step": 0, **raised("ValueError", "v", line=1, matches=False)}]),
            1: raised("ValueError", "v", line=1, matches=False),
        },
    )
    assert [o.status for o in found] == [S.RAISED_OTHERWISE, S.RAISED_OTHERWISE]
    assert found[0].detail == "line 1: raised ValueError: v; the page states ValueError"


def test_a_failed_assert_without_its_text_says_only_its_line():
    found = outcomes([block(0)], {0: raised("AssertionError", **{"assert": {"block": 0, "line": 2}})})
    assert found == [Outcome(S.ASSERT_FAILED, exception="AssertionError", assert_line=2)]
    assert found[0].detail == "line 2: "


def test_a_statement_is_judged_past_a_statement_the_page_says_nothing_of_or_one_never_reached():
    blocks = [
        block(0, steps=(Step(1, 1), Step(2, 2, "ValueError"))),
        block(1, steps=(Step(1, 1, "KeyError"), Step(2, 2, "ValueError"))),
    ]
    found = outcomes(
        blocks,
        {
            0: ok(steps=[{"step": 0, "outcome": "ok"}, {"step": 1, **raised("ValueError", line=2, matches=True)}]),
            1: ok(steps=[{"step": 1, **raised("ValueError", line=2, matches=True)}]),  # no record of step 0
        },
    )
    assert [(o.status, o.raised_as_stated) for o in found] == [
        (S.RAISED_AS_DOCUMENTED, ("line 2: ValueError",)),
        (S.RAISED_AS_DOCUMENTED, ("line 2: ValueError",)),
    ]


def test_every_statement_not_as_stated_after_the_first_is_counted_whatever_the_first_was():
    blocks = [
        block(
            0,
            steps=(Step(1, 1, "ValueError"), Step(2, 2, "KeyError"), Step(3, 3, "OSError")),
            notes=("the page says: n",),
        )
    ]
    found = outcomes(
        blocks,
        {
            0: ok(
                steps=[
                    {"step": 0, "outcome": "ok"},
                    {"step": 1, "outcome": "ok"},
                    {"step": 2, **raised("TypeError", line=3, matches=False)},
                ]
            )
        },
    )
    assert found == [
        Outcome(
            S.DID_NOT_RAISE,
            stated="ValueError",
            line=1,
            stdout="",
            stderr="",
            notes=("the page says: n", "2 more statement(s) not as the page states"),
        )
    ]


def test_a_stated_statements_record_that_ended_the_block_is_not_judged_the_blocks_raise_is():
    steps = (Step(1, 1, "ValueError"),)
    found = outcomes(
        [block(0, steps=steps)],
        {
            0: raised(
                "TypeError",
                "t",
                line=1,
                steps=[{"step": 0, **raised("TypeError", "t", line=1, matches=False, ended=True)}],
            ),
        },
    )
    assert found == [Outcome(S.RAISED, exception="TypeError", message="t", line=1, stdout="", stderr="")]


def test_a_statement_raised_as_stated_or_otherwise_is_said_at_the_line_that_raised_not_its_steps_last():
    steps = (Step(1, 3, "ValueError"),)
    found = outcomes(
        [block(0, steps=steps), block(1, steps=steps), block(2, steps=steps)],
        {
            0: ok(steps=[{"step": 0, **raised("ValueError", line=2, matches=True)}]),
            1: ok(steps=[{"step": 0, **raised("TypeError", "t", line=2, matches=False)}]),
            2: ok(steps=[{"step": 0, **raised("TypeError", "t", matches=False)}]),  # no line: the step's last
        },
    )
    assert found[0].raised_as_stated == ("line 2: ValueError",)
    assert found[1] == Outcome(
        S.RAISED_OTHERWISE, exception="TypeError", message="t", line=2, stated="ValueError", stdout="", stderr=""
    )
    assert found[2].line == 3


def test_a_statement_record_without_the_exceptions_name_is_said_without_one():
    found = outcomes(
        [block(0, steps=(Step(1, 1, "ValueError"),))],
        {0: ok(steps=[{"step": 0, "outcome": "exception", "line": 1, "matches": True}])},
    )
    assert found[0].status is S.RAISED_AS_DOCUMENTED and found[0].raised_as_stated == ("line 1: ",)


def test_the_messages_of_every_stated_error_are_compared_after_the_blocks_own_printed_output():
    steps = (Step(1, 1, "ValueError", "the page's words"), Step(2, 2, "KeyError", "'k'"), Step(3, 3, "OSError", "gone"))
    found = outcomes(
        [block(0, output="x", steps=steps)],
        {
            0: ok(
                stdout="y\n",
                steps=[
                    {"step": 0, **raised("MyValueError", text="other words", matches=True)},
                    {"step": 1, **raised("KeyError", "'k'", matches=True)},
                    {"step": 2, "outcome": "exception", "exception": "OSError", "matches": True},
                ],
            ),
        },
    )
    assert found[0].status is S.RAISED_AS_DOCUMENTED
    assert found[0].printed_diff == (
        "-x",
        "+y",
        "-ValueError: the page's words",
        "+MyValueError: other words",
        "-OSError: gone",
        "+OSError: ",
    )


def test_a_raised_otherwise_blocks_printed_output_and_its_statements_messages_are_both_compared():
    steps = (Step(1, 1, "ValueError", "page"),)
    found = outcomes(
        [block(0, output="x", steps=steps)],
        {0: ok(stdout="y\n", steps=[{"step": 0, **raised("TypeError", "raised", matches=False)}])},
    )
    assert found[0].status is S.RAISED_OTHERWISE
    assert found[0].printed_diff == ("-x", "+y", "-ValueError: page", "+TypeError: raised")


def test_every_joined_blocks_output_is_carried_to_the_block_whose_output_the_page_shows():
    blocks = [
        block(0, output="1\n2\n3", joined=True),
        block(1, output="1\n2\n3", joined=True),
        block(2, output="1\n2\n3"),
    ]
    found = outcomes(blocks, {0: ok(stdout="1\n"), 1: ok(stdout="2\n"), 2: ok(stdout="3\n")})
    assert [o.printed_diff for o in found] == [(), (), ()]
    found = outcomes(blocks, {0: ok(stdout="0\n"), 1: ok(stdout="2\n"), 2: ok(stdout="3\n")})
    assert found[2].printed_diff == ("-1", "+0")


def test_statement_output_of_thirteen_lines_that_differ_is_cut_after_twelve():
    steps = (Step(1, 1, shown="a"),) + tuple(Step(n, n, shown=str(n)) for n in range(2, 8))
    found = outcomes(
        [block(0, output="x", step_output=True, steps=steps)],
        {
            0: ok(
                steps=[{"step": 0, "outcome": "ok"}]
                + [{"step": n, "outcome": "ok", "stdout": f"{n + 100}\n"} for n in range(1, 7)]
            )
        },
    )
    assert found[0].printed_diff == (
        "-a",
        "-2",
        "+101",
        "-3",
        "+102",
        "-4",
        "+103",
        "-5",
        "+104",
        "-6",
        "+105",
        "-7",
        "… 1 more line(s)",
    )


def test_a_callbacks_error_is_explained_by_the_stderr_the_run_gave_where_the_record_has_none():
    found = outcomes(
        [block(0)],
        {0: RawResult(0, raised("XlaRuntimeError", "INTERNAL", callback="KeyError: k"), stderr="said on stderr")},
    )
    assert found[0].cause == "raised in a callback: KeyError: k (stderr: said on stderr)"
    assert found[0].stderr == "said on stderr"


def test_a_flag_is_found_at_the_end_of_one_part_of_a_failures_record_or_the_start_of_the_next():
    blocks = [block(i) for i in range(4)]
    found = outcomes(
        blocks,
        {
            0: ok(environ={"XLA_FLAGS": [None, "--x"]}),
            1: raised("ValueError", "bad XLA_FLAGS", traceback="Traceback ..."),
            2: raised("ValueError", "bad", traceback="XLA_FLAGS was read"),
            3: raised("ValueError", "bad", traceback="nothing"),
        },
    )
    by = f"XLA_FLAGS='--x' (set by block {blocks[0].id})"
    assert [o.settings for o in found] == [(), (by,), (by,), ()]


def test_a_malformed_change_is_passed_over_and_the_changes_after_it_are_read():
    blocks = [block(0), block(1)]
    found = outcomes(
        blocks,
        {
            0: ok(
                config={"jax_bad": ["one"], "jax_enable_x64": ["False", "True"]},
                environ={"A_VAR": "2", "B_VAR": [None, "3"]},
            ),
            1: raised("TypeError", "enable_x64 and B_VAR"),
        },
    )
    assert found[1].settings == (
        f"jax_enable_x64=True (set by block {blocks[0].id})",
        f"B_VAR='3' (set by block {blocks[0].id})",
    )


def test_a_flag_set_to_the_value_it_had_is_not_left_set_and_breaks_nothing():
    blocks = [block(0), block(1), block(2)]
    found = outcomes(
        blocks,
        {
            0: ok(config={"jax_enable_x64": ["False", "False"]}),
            1: ok(config={"jax_enable_x64": ["False", "False"]}),
            2: raised("TypeError", "needs jax_enable_x64"),
        },
    )
    assert [o.status for o in found] == [S.RAN, S.RAN, S.RAISED] and found[2].settings == ()
