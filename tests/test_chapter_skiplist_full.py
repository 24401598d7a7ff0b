"""A chapter's skip list (`conformance.chapter.skiplist`), entry by entry: every field each parsed entry keeps, the
defaults, the boundaries, each refusal's whole one-line message and what `describe()` says (issue 48: written
against the survivors of a mutation run). Pure: text in, entries or a `ConformanceError` out."""

from __future__ import annotations

import warnings

import pytest

from conformance.chapter.model import Block, Heading
from conformance.chapter.skiplist import (
    LimitEntry,
    RunEntry,
    SkipEntry,
    block_limits,
    parse_limits,
    parse_runs,
    parse_setup,
    parse_skip_list,
    skip_reasons,
)
from conformance.errors import ConformanceError

HASH = "4c1d0e9a2b7f3e11"


def refusal(parse, text: str, *source: str) -> str:
    """The one-line message `parse` refuses `text` with (`source` as given, else the parser's default)."""
    with pytest.raises(ConformanceError) as caught:
        parse(text, *source)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- what each parser keeps ---


def test_a_skip_entry_keeps_its_hash_or_its_stripped_heading_and_index_and_its_stripped_reason():
    text = (
        f'[[skip]]\nhash = "{HASH}"\nreason = "  needs a terminal  "\n'
        '[[skip]]\nheading = "  1.3  "\nindex = 2\nreason = "needs macOS arm64"\n'
    )
    assert parse_skip_list(text) == (
        SkipEntry("needs a terminal", hash=HASH),
        SkipEntry("needs macOS arm64", heading="1.3", index=2),
    )
    assert parse_skip_list("") == ()


def test_a_limit_entry_keeps_its_block_and_its_seconds_as_a_float_and_may_say_why():
    text = (
        f'[[limit]]\nhash = "{HASH[:8]}"\nseconds = 900\nreason = "a long training loop"\n'
        '[[limit]]\nheading = "4.1"\nindex = 1\nseconds = 0.5\n'
    )
    found = parse_limits(text)
    assert found == (LimitEntry(900.0, hash=HASH[:8]), LimitEntry(0.5, heading="4.1", index=1))
    assert type(found[0].seconds) is float


def test_a_limit_just_under_a_day_is_kept_and_a_day_or_more_or_nothing_is_refused():
    assert parse_limits('[[limit]]\nhash = "abcdef12"\nseconds = 86399.5\n') == (LimitEntry(86399.5, "abcdef12"),)
    for seconds, shown in [
        ("86400", "86400"),
        ("86400.5", "86400.5"),
        ("0", "0"),
        ("-1", "-1"),
        ("true", "True"),
        ('"5"', "'5'"),
    ]:
        assert refusal(parse_limits, f'[[limit]]\nhash = "abcdef12"\nseconds = {seconds}\n') == (
            f"the skip list: [[limit]] 1: seconds should be a number above 0 (and under a day), not {shown}"
        )
    assert refusal(parse_limits, '[[limit]]\nhash = "abcdef12"\n', "S") == (
        "S: [[limit]] 1: seconds should be a number above 0 (and under a day), not None"
    )


def test_a_run_entry_keeps_its_stripped_reason_and_has_none_without_one():
    text = (
        f'[[run]]\nhash = "{HASH}"\nreason = "  a doctest job runs it  "\n'
        '[[run]]\nheading = "Miscellaneous"\nindex = 3\n'
    )
    found = parse_runs(text)
    assert found == (RunEntry("a doctest job runs it", hash=HASH), RunEntry("", heading="Miscellaneous", index=3))
    assert found[1].reason == ""  # no reason: the empty string, not None


def test_a_run_entries_reason_must_be_a_string():
    assert refusal(parse_runs, f'[[run]]\nhash = "{HASH}"\nreason = 5\n') == (
        "the skip list: [[run]] 1: reason should be a string"
    )
    assert refusal(parse_runs, f'[[run]]\nhash = "{HASH}"\n[[run]]\nhash = "{HASH}"\nreason = []\n', "S") == (
        "S: [[run]] 2: reason should be a string"
    )


def test_a_setup_is_its_stripped_code_and_reason_and_none_is_two_empty_strings():
    text = '[setup]\ncode = "\\nimport math as m\\n"\nreason = "  the harness gives m  "\n'
    assert parse_setup(text) == ("import math as m", "the harness gives m")
    assert parse_setup("") == ("", "")
    assert parse_setup('[setup]\nreason = "nothing to run yet"\n') == ("", "nothing to run yet")


def test_a_setups_syntax_warning_names_the_setup_as_its_file():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert parse_setup('[setup]\ncode = "x = 1 is 1"\nreason = "r"\n') == ("x = 1 is 1", "r")
    assert [(w.category, w.filename) for w in caught] == [(SyntaxWarning, "<setup>")]


# --- describe() ---


@pytest.mark.parametrize("kind, first", [(SkipEntry, "r"), (LimitEntry, 5.0), (RunEntry, "r")])
def test_each_entry_describes_its_block_by_hash_or_by_heading_and_index(kind, first):
    assert kind(first, hash="4c1d0e9a").describe() == "hash 4c1d0e9a"
    assert kind(first, heading="1.3", index=2).describe() == "heading '1.3' index 2"
    assert kind(first, hash="4c1d0e9a", heading="1.3", index=2).describe() == "hash 4c1d0e9a"


def test_the_entries_parsed_describe_themselves_as_the_file_names_them():
    text = f'[[skip]]\nhash = "{HASH[:8]}"\nreason = "r"\n[[skip]]\nheading = "Intro"\nindex = 1\nreason = "r"\n'
    assert [e.describe() for e in parse_skip_list(text)] == ["hash 4c1d0e9a", "heading 'Intro' index 1"]
    text = text.replace("[[skip]]", "[[limit]]").replace('reason = "r"', "seconds = 3")
    assert [e.describe() for e in parse_limits(text)] == ["hash 4c1d0e9a", "heading 'Intro' index 1"]


# --- the file as a whole ---


@pytest.mark.parametrize("parse", [parse_skip_list, parse_limits, parse_runs, parse_setup])
def test_each_parser_names_the_skip_list_by_default_and_the_source_given(parse):
    assert refusal(parse, "x = ").startswith("the skip list is not valid TOML: ")
    assert refusal(parse, "x = ", "S.toml").startswith("S.toml is not valid TOML: ")


@pytest.mark.parametrize("parse", [parse_skip_list, parse_limits, parse_runs, parse_setup])
def test_unknown_tables_are_listed_sorted_and_alone_beside_the_four_known_ones(parse):
    text = (
        'zeta = 1\nalpha = 2\n[setup]\ncode = ""\n[[skip]]\nhash = "abcdef12"\nreason = "r"\n'
        '[[limit]]\nhash = "abcdef12"\nseconds = 1\n[[run]]\nhash = "abcdef12"\n'
    )
    assert refusal(parse, text, "S") == (
        "S: unknown table(s) alpha, zeta; it takes [[skip]], [[limit]] and [[run]] entries and a [setup]"
    )


# --- a bad entry, one line each ---


@pytest.mark.parametrize(
    "parse, table, rest",
    [(parse_skip_list, "skip", 'reason = "r"\n'), (parse_limits, "limit", "seconds = 1\n"), (parse_runs, "run", "")],
)
def test_a_bad_entry_is_named_by_its_table_and_number_from_1(parse, table, rest):
    good = f'[[{table}]]\nhash = "{HASH}"\n{rest}'
    assert refusal(parse, f"{table} = [1]\n") == f"the skip list: [[{table}]] 1 is not a table"
    assert refusal(parse, f'{good}[[{table}]]\nhash = "abc"\n{rest}', "S") == (
        f"S: [[{table}]] 2: hash should be 8 to 64 lower-case hex digits, alone (no heading or index beside it), "
        f"not 'abc'"
    )
    assert refusal(parse, f'{good}{good}[[{table}]]\nheading = "1.3"\n{rest}', "S") == (
        f"S: [[{table}]] 3 should name its block by hash, or by heading (a string) and index (a number from 1)"
    )
    assert refusal(parse, f'[[{table}]]\nhash = "{HASH}"\nwhy = 1\nalso = 2\n{rest}', "S") == (
        f"S: [[{table}]] 1: unknown key(s) also, why"
    )


@pytest.mark.parametrize("beside", ['heading = "1.3"', "index = 1", 'heading = "1.3"\nindex = 1'])
def test_a_hash_with_a_heading_or_index_beside_it_is_refused(beside):
    assert refusal(parse_skip_list, f'[[skip]]\nhash = "{HASH}"\n{beside}\nreason = "r"\n') == (
        f"the skip list: [[skip]] 1: hash should be 8 to 64 lower-case hex digits, alone (no heading or index beside "
        f"it), not '{HASH}'"
    )


@pytest.mark.parametrize(
    "digest, shown",
    [
        ('"ABCDEF12"', "'ABCDEF12'"),
        ('"abcdef1"', "'abcdef1'"),
        ('"' + "a" * 65 + '"', repr("a" * 65)),
        ("12345678", "12345678"),
    ],
)
def test_a_hash_that_is_not_8_to_64_lower_case_hex_digits_is_refused(digest, shown):
    assert refusal(parse_skip_list, f'[[skip]]\nhash = {digest}\nreason = "r"\n').endswith(f", not {shown}")


def test_a_hash_of_64_hex_digits_is_kept_whole():
    assert parse_skip_list(f'[[skip]]\nhash = "{"a" * 64}"\nreason = "r"\n') == (SkipEntry("r", hash="a" * 64),)


@pytest.mark.parametrize(
    "heading, index",
    [
        ('"  "', "1"),
        ('""', "1"),
        ("5", "1"),
        ('"1.3"', "0"),
        ('"1.3"', "-1"),
        ('"1.3"', "true"),
        ('"1.3"', '"1"'),
        ('"1.3"', "1.0"),
    ],
)
def test_a_heading_must_be_a_non_blank_string_and_its_index_a_whole_number_from_1(heading, index):
    assert refusal(parse_skip_list, f'[[skip]]\nheading = {heading}\nindex = {index}\nreason = "r"\n') == (
        "the skip list: [[skip]] 1 should name its block by hash, or by heading (a string) and index (a number from 1)"
    )


@pytest.mark.parametrize("reason", ["", 'reason = ""', 'reason = "   "', "reason = 5"])
def test_a_skip_entry_without_a_reason_says_to_give_one(reason):
    good = f'[[skip]]\nhash = "{HASH}"\nreason = "r"\n'
    assert refusal(parse_skip_list, f'{good}[[skip]]\nhash = "{HASH}"\n{reason}\n', "S") == (
        'S: [[skip]] 2 has no reason: say why the block cannot run (reason = "...")'
    )


def test_the_skip_list_is_the_default_source_of_a_bad_skip_entry():
    assert refusal(parse_skip_list, f'[[skip]]\nhash = "{HASH}"\n') == (
        'the skip list: [[skip]] 1 has no reason: say why the block cannot run (reason = "...")'
    )
    assert refusal(parse_runs, "[[run]]\nreason = 1\n") == (
        "the skip list: [[run]] 1 should name its block by hash, or by heading (a string) and index (a number from 1)"
    )


def test_a_limit_takes_a_reason_but_no_other_key():
    assert refusal(parse_limits, f'[[limit]]\nhash = "{HASH}"\nseconds = 1\nreason = "r"\nwhy = "w"\n') == (
        "the skip list: [[limit]] 1: unknown key(s) why"
    )
    assert refusal(parse_skip_list, f'[[skip]]\nhash = "{HASH}"\nreason = "r"\nseconds = 1\n') == (
        "the skip list: [[skip]] 1: unknown key(s) seconds"
    )


# --- [setup] ---


def test_a_setup_lists_its_unknown_keys_sorted_and_only_those():
    assert refusal(parse_setup, '[setup]\ncode = "x = 1"\nreason = "r"\nzeta = 1\nalpha = 2\n') == (
        "the skip list: [setup] takes code and reason, not alpha, zeta"
    )


def test_each_refusal_of_a_setup_is_one_line_naming_the_source():
    assert refusal(parse_setup, 'setup = "import m"\n') == (
        "the skip list: setup should be a [setup] table, not setup = 'import m'"
    )
    assert refusal(parse_setup, '[setup]\ncode = 5\nreason = "r"\n', "S") == (
        "S: [setup] code and reason should be strings"
    )
    assert refusal(parse_setup, '[setup]\ncode = "x"\nreason = 5\n', "S") == (
        "S: [setup] code and reason should be strings"
    )
    assert refusal(parse_setup, '[setup]\ncode = "import m"\nreason = "  "\n', "S") == (
        "S: [setup] needs a reason (whose names it provides, and why)"
    )
    assert refusal(parse_setup, '[setup]\ncode = "x = 1\\ndef"\nreason = "r"\n', "S") == (
        "S: [setup] code is not Python: invalid syntax (line 2)"
    )


# --- what the entries name ---


def _block(index: int, digest: str, heading: Heading) -> Block:
    return Block(index, f"b{index}", digest, "x = 1", index, index, heading)


def test_an_index_past_the_blocks_under_a_heading_names_none():
    blocks = (_block(1, "aaaaaaaa11", Heading("1.3", "Breakpoints")), _block(2, "bbbbbbbb22", Heading("1.3")))
    entries = (SkipEntry("two", heading="1.3", index=2), SkipEntry("three", heading="1.3", index=3))
    reasons, unmatched = skip_reasons(blocks, entries)
    assert reasons == {"b2": "two"} and unmatched == [entries[1]]
    limits, unmatched = block_limits(blocks, (LimitEntry(5.0, heading="1.3", index=3),))
    assert limits == {} and [e.describe() for e in unmatched] == ["heading '1.3' index 3"]


@pytest.mark.parametrize("parse", [parse_skip_list, parse_limits, parse_runs])
def test_a_skip_list_without_a_parsers_table_gives_no_entries_of_it(parse):
    assert parse("") == ()
    assert parse('[setup]\ncode = "x = 1"\n') == ()
