"""Each block's status from what the runner recorded (`conformance.chapter.statuses`), on made-up records: no
process runs, so every rule of the module's docstring is checked as the runner's records would reach it."""

from __future__ import annotations

from conformance.chapter.model import Block, BlockStatus, Heading, Step
from conformance.chapter.supervisor import RawResult
from conformance.chapter.statuses import block_outcomes

HEADING = Heading("1.1", "A")


def block(index: int, code: str = "x = 1", **fields) -> Block:
    """Block `index` of a made-up chapter (its id says its index), its output not stated unless given."""
    fields.setdefault("output_known", "output" in fields)
    return Block(
        index=index,
        id=f"s1_1_{index:08d}",
        hash=f"{index:016d}",
        code=code,
        line=1 + 3 * index,
        end_line=1 + 3 * index,
        heading=HEADING,
        **fields,
    )


def ok(**fields) -> dict:
    return {"outcome": "ok", **fields}


def raised(exception: str, message: str = "", **fields) -> dict:
    return {
        "outcome": "exception",
        "exception": exception,
        "message": message,
        "mro": [exception, "Exception", "BaseException", "object"],
        **fields,
    }


def outcomes(blocks: list[Block], records: dict, skip: dict | None = None, timeout_s: float = 10.0, **kw) -> list:
    raw = {i: r if isinstance(r, RawResult) else RawResult(i, r) for i, r in records.items()}
    found = block_outcomes(tuple(blocks), raw, skip or {}, timeout_s, **kw)
    assert list(found) == [b.id for b in blocks]
    return list(found.values())


def test_skipped_listing_and_unrecorded_blocks_are_said_so_and_a_listing_named_to_run_runs():
    blocks = [
        block(0, skip="the page's skip-execution tag"),
        block(1),
        block(2, listing="a plain fence"),
        block(3, listing="a plain fence"),
        block(4),
    ]
    found = outcomes(blocks, {3: ok()}, skip={blocks[1].id: "needs a terminal"}, run_listings={blocks[3].id})
    assert [o.status for o in found] == [
        BlockStatus.SKIPPED,
        BlockStatus.SKIPPED,
        BlockStatus.LISTING,
        BlockStatus.RAN,
        BlockStatus.CRASH,
    ]
    assert [o.detail for o in found] == [
        "the page's skip-execution tag",
        "needs a terminal",
        "not run: a plain fence",
        "",
        "not run (no record of it)",
    ]
    # the skip list's reason wins over the page's own, and a skipped listing is skipped
    (first, second) = outcomes(
        [block(0, skip="tag", listing="fence"), block(1, listing="fence")], {}, skip={"s1_1_00000000": "the list"}
    )
    assert (first.status, first.reason, second.status) == (BlockStatus.SKIPPED, "the list", BlockStatus.LISTING)


def test_a_killed_block_and_a_timeout_keep_what_the_runner_said_with_the_blocks_own_limit():
    blocks = [block(0), block(1), block(2)]
    found = outcomes(
        blocks,
        {
            0: RawResult(
                0,
                None,
                killed="crash",
                message="its process died (signal 9)",
                stdout="half",
                stderr="oops",
                duration_s=1.5,
                replayed=True,
            ),
            1: {"outcome": "timeout", "duration_s": 2.5, "stdout": "out", "stderr_tail": "err"},
            2: {"outcome": "timeout"},
        },
        timeout_s=30.0,
        limits={blocks[1].id: 2.5},
    )
    assert [o.status for o in found] == [BlockStatus.CRASH, BlockStatus.TIMEOUT, BlockStatus.TIMEOUT]
    assert (found[0].message, found[0].stdout, found[0].stderr, found[0].duration_s, found[0].replayed) == (
        "its process died (signal 9)",
        "half",
        "oops",
        1.5,
        True,
    )
    assert found[1].message == "ran past its time limit of 2.5s" and found[2].message.endswith("limit of 30s")
    assert (found[1].stdout, found[1].stderr, found[1].duration_s) == ("out", "err", 2.5)
    assert not found[1].printed_differs  # a timed-out block's output is not compared


def test_a_stated_error_raised_as_stated_by_class_or_subclass_and_one_not_raised_or_raised_otherwise():
    steps = (Step(1, 1, "ValueError", "bad"), Step(2, 3, "KeyError"), Step(4, 4))
    blocks = [block(i, steps=steps) for i in range(4)]
    as_stated = [
        {"step": 0, **raised("ValueError", "bad", line=1, matches=True)},
        {"step": 1, **raised("MyKeyError", line=3, matches=None, mro=["MyKeyError", "KeyError"])},
        {"step": 2, "outcome": "ok"},
    ]
    found = outcomes(
        blocks,
        {
            0: ok(steps=as_stated),
            1: ok(steps=[as_stated[0], {"step": 1, "outcome": "ok"}, {"step": 2, "outcome": "ok"}]),
            2: ok(
                steps=[
                    {"step": 0, **raised("TypeError", "no", line=0, matches=False, text="no such type")},
                    {"step": 1, "outcome": "ok"},
                ]
            ),
            3: ok(
                steps=[{"step": 0, **raised("TypeError", "no", matches=None, mro=["TypeError"], line=1)}, as_stated[1]]
            ),
        },
    )
    assert [o.status for o in found] == [
        BlockStatus.RAISED_AS_DOCUMENTED,
        BlockStatus.DID_NOT_RAISE,
        BlockStatus.RAISED_OTHERWISE,
        BlockStatus.RAISED_OTHERWISE,
    ]
    assert found[0].detail == "raised as the page states: line 1: ValueError, line 3: MyKeyError"
    assert found[1].detail == "line 3: raised nothing; the page states KeyError"
    # the first statement not as stated decides, its line the step's when the record has none; the others counted
    assert found[2].detail == (
        "line 1: raised TypeError: no; the page states ValueError: bad; 1 more statement(s) not as the page states"
    )
    assert (found[3].exception, found[3].message, found[3].line, found[3].stated) == (
        "TypeError",
        "no",
        1,
        "ValueError: bad",
    )
    assert found[3].notes == ()


def test_a_step_that_ended_the_block_or_was_never_reached_is_not_judged_as_a_stated_one():
    steps = (Step(1, 1, "ValueError"), Step(2, 2, "KeyError"))
    ended = {"step": 0, **raised("ValueError", ended=True)}
    found = outcomes(
        [block(0, steps=steps), block(1, steps=steps), block(2, steps=steps)],
        {
            0: raised("ValueError", steps=[ended]),  # not the stated step's to judge: the block's own raise decides
            1: ok(steps=[{"step": 0, **raised("ValueError", matches=True)}, "not a record", {"outcome": "ok"}]),
            2: ok(steps=[{"step": 0, "outcome": "weird"}, {"step": 1, **raised("KeyError", matches=True)}]),
        },
    )
    assert found[0].status is BlockStatus.RAISED and found[0].exception == "ValueError"
    assert found[1].status is BlockStatus.RAISED_AS_DOCUMENTED and found[1].raised_as_stated == ("line 1: ValueError",)
    assert found[2].raised_as_stated == ("line 2: KeyError",)


def test_the_blocks_own_stated_raise_any_or_a_class_matches_by_the_runners_word_or_the_mro():
    blocks = [
        block(0, raises="*"),
        block(1, raises="errors.PageError"),
        block(2, raises="KeyError"),
        block(3, raises="KeyError"),
        block(4, raises="*"),
        block(5, raises="KeyError"),
        block(6, raises="KeyError"),
    ]
    found = outcomes(
        blocks,
        {
            0: raised("ZeroDivisionError", "division by zero", line=2),
            1: raised("DeepError", "deep", mro=["DeepError", "PageError", "Exception"]),
            2: raised("ValueError", "v", line=4, matches=False, mro=["ValueError", "KeyError"]),
            3: raised("OSError", "o", matches=True, mro=["OSError"]),
            4: ok(),
            5: ok(),
            6: raised("IndexError", "i", matches=None, mro=None),
        },
    )
    assert [o.status for o in found] == [
        BlockStatus.RAISED_AS_DOCUMENTED,
        BlockStatus.RAISED_AS_DOCUMENTED,
        BlockStatus.RAISED_OTHERWISE,
        BlockStatus.RAISED_AS_DOCUMENTED,
        BlockStatus.DID_NOT_RAISE,
        BlockStatus.DID_NOT_RAISE,
        BlockStatus.RAISED_OTHERWISE,
    ]
    assert found[0].detail == "raised as the page states: line 2: ZeroDivisionError"
    assert found[1].detail == "raised as the page states: DeepError"
    assert found[2].detail == "line 4: raised ValueError: v; the page states KeyError"
    assert (found[4].detail, found[5].detail) == (
        "raised nothing; the page states an exception",
        "raised nothing; the page states KeyError",
    )
    assert (found[6].exception, found[6].stated) == ("IndexError", "KeyError")


def test_a_stated_statement_and_the_blocks_own_raise_both_count():
    found = outcomes(
        [block(0, raises="KeyError", steps=(Step(1, 1, "ValueError"), Step(2, 2)))],
        {0: raised("KeyError", "k", line=2, steps=[{"step": 0, **raised("ValueError", line=1, matches=True)}])},
    )
    assert found[0].raised_as_stated == ("line 1: ValueError", "line 2: KeyError")
    passed = outcomes(
        [block(0, raises="KeyError", steps=(Step(1, 1, "ValueError"),))],
        {0: ok(steps=[{"step": 0, **raised("ValueError", matches=True)}])},
    )
    assert passed[0].status is BlockStatus.RAISED_AS_DOCUMENTED  # its statement's raise is the one stated


def test_a_name_error_for_a_name_an_unfinished_earlier_block_binds_is_after_failure_even_where_a_raise_is_stated():
    blocks = [
        block(0, defines=("a",)),
        block(1, defines=("b",)),
        block(2, defines=("a",)),
        block(3, raises="*"),
        block(4),
        block(5),
    ]
    missing = {
        "a": raised("NameError", "name 'a' is not defined", name="a"),
        "b": raised("NameError", "name 'b' is not defined", name="b"),
    }
    found = outcomes(
        blocks,
        {
            0: raised("ValueError"),
            1: ok(),
            2: ok(),
            3: missing["a"],
            4: missing["b"],
            5: raised("NameError", "name 'c' is not defined", name=""),
        },
    )
    # the latest block binding `a` finished, but block 0 did not: block 3 misses block 0's name
    assert found[3].status is BlockStatus.AFTER_FAILURE and found[3].because == blocks[0].id
    assert found[3].detail == (f"NameError: name 'a' is not defined (block {blocks[0].id} should have defined it)")
    assert found[4].status is BlockStatus.RAISED  # block 1 binds `b` and ran to its end
    assert found[5].status is BlockStatus.RAISED
    # the nearest earlier unfinished block that binds it is named; a later block is never blamed
    blocks = [block(0, defines=("a",)), block(1, defines=("a",)), block(2), block(3, defines=("a",))]
    found = outcomes(blocks, {0: raised("OSError"), 1: raised("OSError"), 2: missing["a"], 3: raised("OSError")})
    assert found[2].because == blocks[1].id


def test_a_failed_assert_says_its_line_text_and_the_block_it_sits_in():
    blocks = [block(0), block(1), block(2), block(3)]
    found = outcomes(
        blocks,
        {
            0: raised("AssertionError", "", assert_={}),
            1: raised(
                "AssertionError", "x should be 2", **{"assert": {"block": 1, "line": 2, "text": "assert x == 2"}}
            ),
            2: raised("AssertionError", "", **{"assert": {"block": 0, "line": 3, "text": "assert v > 0"}}),
            3: raised("AssertionError", "", **{"assert": {"block": 9, "text": "assert w"}}),
        },
    )
    assert found[0].status is BlockStatus.RAISED  # no assert of the chapter: a raise like another
    assert [o.status for o in found[1:]] == [BlockStatus.ASSERT_FAILED] * 3
    assert found[1].detail == "line 2: assert x == 2 (x should be 2)"
    assert found[2].detail == f"line 3: in block {blocks[0].id}: assert v > 0"
    assert (found[3].detail, found[3].exception) == ("in block ?: assert w", "AssertionError")


def test_an_error_raised_in_a_callback_names_the_callbacks_own_error_and_the_tail_of_what_it_wrote():
    log = "ERROR:2026-12-03 08:47:28,267:jax._src.debugging:95: jax.debug.callback failed"
    found = outcomes(
        [block(0), block(1), block(2), block(3, steps=(Step(1, 1, "KeyError"),))],
        {
            0: raised(
                "XlaRuntimeError",
                "INTERNAL: CpuCallback error",
                callback="ZeroDivisionError: division by zero",
                stdout_tail="one\n\n two \nthree\nfour\nTraceback (most recent call last):\n  File x",
                stderr_tail=log + "\n",
            ),
            1: raised("XlaRuntimeError", "INTERNAL", callback="ValueError: v"),
            2: RawResult(2, raised("XlaRuntimeError", "", callback="E: e"), stdout="p" * 150 + " and " + "q" * 150),
            3: ok(
                steps=[{"step": 0, **raised("ValueError", callback="KeyError: inner", matches=False)}],
                stdout_tail="said",
            ),
        },
    )
    assert found[0].cause == (
        "raised in a callback: ZeroDivisionError: division by zero (its output ended: two ⏎ "
        "three ⏎ four; stderr: jax.debug.callback failed)"
    )
    assert found[0].detail == "XlaRuntimeError: INTERNAL: CpuCallback error; " + found[0].cause
    assert found[1].cause == "raised in a callback: ValueError: v"
    assert found[2].cause == "raised in a callback: E: e (its output ended: … and " + "q" * 150 + ")"
    assert found[3].cause == "raised in a callback: KeyError: inner"  # a statement's: its own record's words only


def test_a_long_tail_is_cut_at_a_word_and_one_without_spaces_is_cut_as_it_is():
    found = outcomes(
        [block(0), block(1)],
        {
            0: raised("E", callback="c", stderr_tail="word " * 60),
            1: raised("E", callback="c", stderr_tail="w" * 250),
        },
    )
    said = found[0].cause.split("stderr: ")[1][:-1]
    assert said.startswith("… word") and said.endswith("word") and len(said) <= 202
    assert found[1].cause == "raised in a callback: c (stderr: … " + "w" * 200 + ")"
    exact = outcomes([block(0)], {0: raised("E", callback="c", stderr_tail="v" * 200)})
    assert exact[0].cause == "raised in a callback: c (stderr: " + "v" * 200 + ")"


def test_a_failure_names_a_flag_an_earlier_block_left_set_until_it_is_set_back():
    blocks = [block(i) for i in range(7)]
    found = outcomes(
        blocks,
        {
            0: ok(
                config={"jax_enable_x64": ["False", "True"], "jax_debug_nans": ["False", "True"]},
                environ={"XLA_FLAGS": [None, "--xla_x"]},
            ),
            1: raised("TypeError", "dtype int64 needs enable_x64"),  # the short name of the flag
            2: raised("FloatingPointError", "invalid value (nan) encountered"),  # the flag JAX raises it for
            3: raised("ValueError", "nothing named", traceback="see XLA_FLAGS"),
            4: ok(config={"jax_enable_x64": ["True", "False"], "bad": ["one"]}, environ={"XLA_FLAGS": "--x"}),
            5: raised("TypeError", "jax_enable_x64 and my_enable_x64_thing"),
            6: raised("ValueError", "XLA_FLAGSX and jax_debug_nans_more"),
        },
    )
    by = f"(set by block {blocks[0].id})"
    assert found[1].settings == (f"jax_enable_x64=True {by}",)
    assert found[2].settings == (f"jax_debug_nans=True {by}",)
    assert found[3].settings == (f"XLA_FLAGS='--xla_x' {by}",)
    assert found[5].settings == ()  # set back to the value before the first change
    assert found[6].settings == ()  # a longer word is not the name
    assert found[1].detail == f"TypeError: dtype int64 needs enable_x64; jax_enable_x64=True {by}"


def test_settings_are_read_from_every_part_of_a_failures_record_and_only_for_a_failure():
    blocks = [block(i, steps=(Step(1, 1, "KeyError"),)) for i in range(6)]
    found = outcomes(
        blocks,
        {
            0: ok(environ={"A_VAR": ["1", "2"], "B_VAR": ["1", "3"], "C_VAR": ["1", "4"], "D_VAR": ["1", "5"]}),
            1: raised("E", steps=[{"step": 0, **raised("KeyError", text="A_VAR", matches=True)}]),
            2: raised("E", stderr_tail="B_VAR was odd"),
            3: raised("E", callback="C_VAR: bad"),
            4: ok(steps=[{"step": 0, **raised("KeyError", text="D_VAR", matches=True)}]),
            5: ok(environ={"A_VAR": ["9", "1"]}),
        },
    )
    assert [len(o.settings) for o in found] == [0, 1, 1, 1, 0, 0]
    assert found[1].settings[0].startswith("A_VAR='2'") and found[2].settings[0].startswith("B_VAR='3'")
    assert found[3].settings[0].startswith("C_VAR='4'")


def test_printed_output_is_compared_for_a_block_with_output_stated_and_carried_over_joined_blocks():
    blocks = [
        block(0, output="1\n2", joined=True),
        block(1, output="1\n2"),
        block(2, output="3"),
        block(3, output="4", joined=True),
        block(4, skip="no"),
        block(5, output="5"),
        block(6),
    ]
    found = outcomes(
        blocks,
        {
            0: ok(stdout="1\n"),
            1: ok(stdout="2\n"),
            2: ok(stdout="three\n"),
            3: ok(stdout="4\n"),
            5: ok(stdout="5\n"),
            6: ok(stdout="anything\n"),
        },
    )
    assert [o.printed_differs for o in found] == [False, False, True, False, False, False, False]
    assert found[2].printed_diff == ("-3", "+three")
    assert found[0].stdout == "1\n" and found[1].stdout == "2\n"
    # a block with no record between a joined block and the next drops what was carried
    found = outcomes(
        [block(0, output="x", joined=True), block(1), block(2, output="y")], {0: ok(stdout="x\n"), 2: ok(stdout="y\n")}
    )
    assert not found[2].printed_differs


def test_a_crashed_or_timed_out_blocks_output_is_not_compared_and_what_it_carried_is_dropped():
    blocks = [block(0, output="a", joined=True), block(1, output="b"), block(2, output="c")]
    found = outcomes(
        blocks, {0: ok(stdout="a\n"), 1: RawResult(1, None, killed="crash", stdout="zz"), 2: ok(stdout="c\n")}
    )
    assert [o.printed_differs for o in found] == [False, False, False]
    found = outcomes(
        [block(0, output="a", joined=True), block(1, output="b")],
        {0: ok(stdout="a\n"), 1: {"outcome": "timeout", "stdout": "zz"}},
    )
    assert found[1].status is BlockStatus.TIMEOUT and not found[1].printed_differs


def test_a_raised_blocks_output_and_a_stated_errors_message_are_compared():
    steps = (Step(1, 1, "ValueError", "the page's words"),)
    found = outcomes(
        [block(0, output="x"), block(1, output="", steps=steps), block(2, raises="KeyError"), block(3, steps=steps)],
        {
            0: raised("E", stdout="y\n"),
            1: ok(steps=[{"step": 0, **raised("ValueError", text="other words", matches=True)}]),
            2: raised("KeyError", "'k'", matches=True),
            3: ok(steps=[{"step": 0, **raised("TypeError", text="other words", matches=False)}]),
        },
    )
    assert found[0].status is BlockStatus.RAISED and found[0].printed_diff == ("-x", "+y")
    assert found[1].status is BlockStatus.RAISED_AS_DOCUMENTED and found[1].printed_differs
    assert any("other words" in line for line in found[1].printed_diff)
    assert not found[2].printed_differs
    assert found[3].status is BlockStatus.RAISED_OTHERWISE and found[3].printed_differs


def test_a_message_is_compared_with_the_records_message_where_it_has_no_whole_text():
    steps = (Step(1, 1, "ValueError", "the page's words"),)
    found = outcomes(
        [block(0, steps=steps), block(1, steps=steps)],
        {
            0: ok(steps=[{"step": 0, **raised("ValueError", "other words", matches=True)}]),
            1: ok(steps=[{"step": 0, **raised("ValueError", "the page's words", matches=True)}]),
        },
    )
    assert found[0].printed_differs and not found[1].printed_differs


def test_statement_by_statement_output_is_compared_per_step_and_cut_after_twelve_lines():
    steps = (Step(1, 1, shown="a"), Step(2, 2), Step(3, 3, shown="c <...>"), Step(4, 4, shown="never run"))
    blocks = [
        block(0, output="a\nc", step_output=True, steps=steps),
        block(1, output="x", step_output=True, steps=tuple(Step(n, n, shown=str(n)) for n in range(7))),
    ]
    found = outcomes(
        blocks,
        {
            0: ok(
                stdout="a\nb\nc d\n",
                steps=[
                    {"step": 0, "outcome": "ok", "stdout": "a\n"},
                    {"step": 1, "outcome": "ok", "stdout": "b\n"},
                    {"step": 2, "outcome": "ok", "stdout": "c d\n"},
                ],
            ),
            1: ok(steps=[{"step": n, "outcome": "ok", "stdout": f"{n + 100}\n"} for n in range(7)]),
        },
    )
    assert not found[0].printed_differs  # `<...>` is a wildcard, a step never run is not compared
    assert len(found[1].printed_diff) == 13 and found[1].printed_diff[-1] == "… 2 more line(s)"
    assert found[1].printed_diff[:3] == ("-0", "+100", "-1")
    found = outcomes(
        [block(0, output="a", step_output=True, steps=(Step(1, 1, shown="a"),))],
        {0: ok(stdout="a\n", steps=[{"step": 0, "outcome": "ok"}])},
    )
    assert found[0].printed_diff == ("-a",)


def test_the_pages_notes_and_magics_not_run_are_kept_with_every_status():
    blocks = [block(0, notes=("Pauses during execution",), magics_not_run=("%xmode",)), block(1, notes=("n",))]
    found = outcomes(blocks, {0: ok(), 1: raised("E", "m")})
    assert found[0].notes == ("Pauses during execution", "magic not run: %xmode")
    assert found[0].detail == "Pauses during execution; magic not run: %xmode"
    assert found[1].detail == "E: m; n"


def test_a_name_error_for_a_name_no_earlier_block_binds_says_so_and_names_a_later_block_that_binds_it():
    # a page of `>>>` transcripts that uses `jnp` none of its blocks imports (a doctest harness may provide it), and a
    # block that uses a name only a later block binds (the page's order is off)
    blocks = [block(0, defines=("jax",)), block(1), block(2), block(3, defines=("helper",)), block(4)]
    found = outcomes(
        blocks,
        {
            0: ok(),
            1: raised("NameError", "name 'jnp' is not defined", name="jnp", line=3),
            2: raised("NameError", "name 'helper' is not defined", name="helper", line=1),
            3: ok(),
            4: raised("NameError", "name 'jax' is not defined", name="jax"),
        },
    )
    assert found[1].status is BlockStatus.RAISED
    assert found[1].detail == (
        "line 3: NameError: name 'jnp' is not defined; no block of the page binds 'jnp' before it"
    )
    assert found[2].detail == (
        "line 1: NameError: name 'helper' is not defined; no block of the page binds "
        f"'helper' before it (block {blocks[3].id}, later, does)"
    )
    # a name an earlier block binds and that ran is not explained (the block deleted it, say)
    assert found[4].detail == "NameError: name 'jax' is not defined"


def test_a_stated_failure_keeps_what_the_block_printed_and_edge_cases_of_tails_ids_names_and_steps():
    steps = (Step(1, 1, "ValueError"), Step(2, 2, "KeyError"))
    found = outcomes(
        [block(0, steps=steps), block(1, steps=steps), block(2)],
        {
            0: ok(stdout="out\n", duration_s=1.5, steps=[{"step": 0, "outcome": "ok"}, {"step": 1, "outcome": "ok"}]),
            1: ok(stdout="out\n", steps=[{"step": 0, "outcome": "ok"}]),
            2: raised("AssertionError", **{"assert": {"block": 3, "line": 1, "text": "assert w"}}),
        },
    )
    assert (found[0].status, found[0].stdout, found[0].duration_s) == (BlockStatus.DID_NOT_RAISE, "out\n", 1.5)
    assert found[1].stdout == "out\n"
    assert found[2].assert_text == "in block ?: assert w"  # one past the last block
    cut = outcomes([block(0)], {0: raised("E", callback="c", stderr_tail="v" * 201)})
    assert cut[0].cause == "raised in a callback: c (stderr: … " + "v" * 200 + ")"
    flags = outcomes(
        [block(0), block(1)], {0: ok(environ={"XLA_FLAGS": [None, "--x"]}), 1: raised("E", "bad FLAGS given")}
    )
    assert flags[1].settings == ()  # only a jax_ flag is also found by its short name


def test_statement_output_is_compared_past_a_step_that_shows_none_and_twelve_lines_are_not_cut():
    steps = (Step(1, 1), Step(2, 2, shown="b"))
    found = outcomes(
        [block(0, output="b", step_output=True, steps=steps), block(1, output="b", step_output=True, steps=steps)],
        {
            0: ok(steps=[{"step": 0, "outcome": "ok"}, {"step": 1, "outcome": "ok", "stdout": "c\n"}]),
            1: ok(steps=[{"outcome": "ok", "stdout": "c\n"}]),
        },
    )  # a record without its step number
    assert found[0].printed_diff == ("-b", "+c") and found[1].printed_diff == ()
    six = tuple(Step(n, n, shown=str(n)) for n in range(6))
    found = outcomes(
        [block(0, output="x", step_output=True, steps=six)],
        {0: ok(steps=[{"step": n, "outcome": "ok", "stdout": f"{n + 100}\n"} for n in range(6)])},
    )
    assert len(found[0].printed_diff) == 12 and not found[0].printed_diff[-1].startswith("…")
