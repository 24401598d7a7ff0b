"""The expectations file: entries, conditions on platform and JAX version, intermittent results, and errors."""

from __future__ import annotations

import pytest

from conformance.core.status import Status
from conformance.decide.expectations import load_expectations, parse_expectations
from conformance.errors import ConformanceError

GOOD = """
# acknowledged upgrade changes
[[expect]]
cell = "numerics.debug_nans_vmap_miss[vmap]"
status = ["conforms"]
intermittent = ["flaky"]
platform = "linux-*"
jax = ">=0.8"
reason = "debug_nans misses NaNs after vmap"
bug = "https://github.com/jax-ml/jax/issues/1"

[[expect]]
cell = "values.repr:short"
status = "differs"
"""


def test_a_well_formed_file_reads_every_field():
    first, second = parse_expectations(GOOD, "exp.toml")
    assert first.line == 3 and first.cell.case == "numerics.debug_nans_vmap_miss" and first.cell.param == "vmap"
    assert first.statuses == {Status.CONFORMS} and first.intermittent == {Status.FLAKY}
    assert first.platforms == ("linux-*",) and first.jax == ">=0.8" and first.bug.endswith("/1")
    assert (second.cell.param, second.statuses, second.line) == ("short", {Status.DIFFERS}, 12)


@pytest.mark.parametrize(
    "platform, jax, applies",
    [
        ("linux-x86_64", "0.12.0.1", True),
        ("linux-arm64", "0.8.0", True),
        ("darwin-arm64", "0.12.0.1", False),  # platform condition
        ("linux-x86_64", "0.7.2", False),  # version condition
    ],
)
def test_conditions_on_platform_and_version(platform, jax, applies):
    entry = parse_expectations(GOOD)[0]
    assert entry.applies_to(platform, "numerics.debug_nans_vmap_miss", "vmap", jax) is applies
    assert not entry.applies_to("linux-x86_64", "numerics.debug_nans_vmap_miss", "none", "0.12.0.1")


def test_intermittent_statuses_are_accepted_and_said_to_be_intermittent():
    entry = parse_expectations(GOOD)[0]
    assert entry.accepts(Status.CONFORMS) == "expected"
    assert entry.accepts(Status.FLAKY) == "intermittent"
    assert entry.accepts(Status.CRASH) is None


def test_a_case_without_a_parameter_covers_every_parameter():
    (entry,) = parse_expectations('[[expect]]\ncell = "a.b"\nstatus = ["differs"]\n')
    assert entry.applies_to("linux-x86_64", "a.b", "p1", "0.8.0") and entry.applies_to("x", "a.b", "", "0.8.0")


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[[expect]]\ncell = "a.b"\nstatus = ["conforms"]\n\n[[expect]]\ncell = "a.c"\nstauts = ["differs"]\n',
            "exp.toml:7: expectation entry 2: unknown key `stauts`",
        ),
        ('[[expect]]\ncell = "a.b"\nstatus = ["passes"]\n', "exp.toml:3: expectation entry 1: `status` has 'passes'"),
        (
            '[[expect]]\ncell = "a.b"\nstatus = "conforms"\njax = "0.8 or newer"\n',
            "exp.toml:4: expectation entry 1: `jax` is '0.8 or newer', not a version specifier",
        ),
        ('[[expect]]\ncell = "no dots here"\nstatus = "conforms"\n', "exp.toml:2: expectation entry 1: `cell` should"),
        ('\n[[expect]]\ncell = "a.b"\nreason = "x"\n', "exp.toml:2: expectation entry 1: needs `status"),
        ('[[expect]]\nstatus = "conforms"\n', "exp.toml:1: expectation entry 1: needs `cell"),
        (
            '[[expect]]\ncell = "a.b"\nstatus = "conforms"\nplatform = 3\n',
            "exp.toml:4: expectation entry 1: `platform`",
        ),
        ('[[expect]]\ncell = "a.b"\nstatus = "conforms"\nbug = 3\n', "exp.toml:4: expectation entry 1: `bug`"),
        ('[[expect]]\ncell = "a.b"\nstatus = [\n', "exp.toml: does not parse as TOML"),
        ('cell = "a.b"\n', "exp.toml:1: unknown top-level key `cell`"),
    ],
)
def test_a_malformed_entry_is_one_line_naming_its_line(text, message):
    with pytest.raises(ConformanceError) as raised:
        parse_expectations(text, "exp.toml")
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_an_unreadable_file_is_one_line(tmp_path):
    with pytest.raises(ConformanceError, match="cannot read the expectations file"):
        load_expectations(tmp_path / "missing.toml")


def test_an_entry_listing_several_platforms_applies_on_each_of_them_and_no_other():
    (entry,) = parse_expectations(
        '[[expect]]\ncell = "a.b"\nstatus = ["differs"]\nplatform = ["linux-*", "darwin-arm64"]\n'
    )
    assert entry.platforms == ("linux-*", "darwin-arm64")
    assert entry.applies_to("linux-x86_64", "a.b", "", "0.8.0")
    assert entry.applies_to("darwin-arm64", "a.b", "", "0.8.0")
    assert not entry.applies_to("windows-amd64", "a.b", "", "0.8.0")


STATUS_WORDS = "conforms, differs, unsupported, error, crash, timeout, skipped, flaky"
ENTRY = '[[expect]]\ncell = "a.b"\nstatus = "conforms"\n'


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[[expect]]\ncell = "a.b"\nstatus = ["conforms"]\n\n[[expect]]\ncell = "a.c"\nstauts = ["differs"]\n',
            "exp.toml:7: expectation entry 2: unknown key `stauts` (known keys: cell, status, "
            "intermittent, platform, jax, "
            "reason, bug, owner, added, expires)",
        ),
        (
            '[[expect]]\ncell = "a.b"\nstatus = ["passes"]\n',
            f"exp.toml:3: expectation entry 1: `status` has 'passes', not one of {STATUS_WORDS}",
        ),
        (
            ENTRY + 'intermittent = ["sometimes"]\n',
            f"exp.toml:4: expectation entry 1: `intermittent` has 'sometimes', not one of {STATUS_WORDS}",
        ),
        (
            '[[expect]]\ncell = "a.b"\nstatus = 3\n',
            "exp.toml:3: expectation entry 1: `status` should be a status or a list of statuses",
        ),
        (
            ENTRY + 'jax = "0.8 or newer"\n',
            "exp.toml:4: expectation entry 1: `jax` is '0.8 or newer', not a version "
            'specifier such as ">=0.8" or ">=0.7,<0.9"',
        ),
        (
            ENTRY + "jax = 8\n",
            'exp.toml:4: expectation entry 1: `jax` should be a version specifier string such as ">=0.8"',
        ),
        (
            ENTRY + '[[expect]]\ncell = "a.c"\nstatus = "conforms"\n"jax" = 3\n',
            'exp.toml:7: expectation entry 2: `jax` should be a version specifier string such as ">=0.8"',
        ),
        (
            '[[expect]]\ncell = "no dots here"\nstatus = "conforms"\n',
            "exp.toml:2: expectation entry 1: `cell` should name "
            "a cell such as numerics.debug_nans_vmap_miss[vmap], not 'no dots here'",
        ),
        (
            '\n[[expect]]\ncell = "a.b"\nreason = "x"\n',
            "exp.toml:2: expectation entry 1: needs `status = [...]` (the statuses it expects)",
        ),
        ('[[expect]]\nstatus = "conforms"\n', 'exp.toml:1: expectation entry 1: needs `cell = "case[param]"`'),
        (
            ENTRY + 'platform = ["linux-*", ""]\n',
            'exp.toml:4: expectation entry 1: `platform` should be a pattern such as "linux-*" or a list of them',
        ),
        (ENTRY + "reason = 1\n", "exp.toml:4: expectation entry 1: `reason` should be a string"),
        (ENTRY + "bug = 3\n", "exp.toml:4: expectation entry 1: `bug` should be a string"),
        ("expect = [1]\n", "exp.toml: expectation entry 1: is not a table"),
        (
            'cell = "a.b"\n',
            "exp.toml:1: unknown top-level key `cell`; entries are [[expect]], [[perf]] and [[name]] tables "
            "(top-level keys: "
            "expect, perf, name, downstream, fail_on_printed, allow_missing)",
        ),
    ],
)
def test_each_refusal_says_exactly_where_and_what(text, message):
    with pytest.raises(ConformanceError) as raised:
        parse_expectations(text, "exp.toml")
    assert str(raised.value) == message


def test_reason_and_bug_default_to_empty_text():
    (entry,) = parse_expectations(ENTRY)
    assert (entry.reason, entry.bug, entry.platforms, entry.jax, entry.intermittent) == ("", "", (), "", frozenset())
