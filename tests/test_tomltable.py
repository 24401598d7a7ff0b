"""The one reader of a TOML table with known keys (`conformance.tomltable`), and its three users: the expectations
file (every kind of entry), a downstream suite's manifest and the `[[downstream]]` entries. Each refusal is the one
line it was before the reader was shared (the wording is pinned here); the expectations file is read once per gate;
`Expectation` and `Acknowledgement` share their common keys (`Terms`) with the one check of them."""

from __future__ import annotations

import dataclasses
import datetime
import os

import pytest

from conformance import tomltable
from conformance.decide import onegate
from conformance.decide.expectations import (
    Acknowledgement,
    Expectation,
    ExpectationsFile,
    Terms,
    common_fields,
    parse_expectations_file,
)
from conformance.decide.sides import GateRequest
from conformance.downstream.acks import parse_acks
from conformance.downstream.command import DownstreamRequest, acks_for
from conformance.downstream.manifest import parse_manifest, read_suite
from conformance.engine.matrix import RunSettings
from conformance.errors import ConformanceError
from conformance.tomltable import failing, known_table, parse_toml, read_toml_file

TODAY = datetime.date(2027, 1, 1)


def refusal(call, *args) -> str:
    with pytest.raises(ConformanceError) as raised:
        call(*args)
    text = str(raised.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_a_table_with_an_unknown_key_names_the_first_and_the_known_ones():
    assert known_table({"a": 1}, ("a", "b"), failing("f")) == {"a": 1}
    assert (
        refusal(known_table, {"a": 1, "zz": 2, "yy": 3}, ("a", "b"), failing("f.toml"))
        == "f.toml: unknown key `zz` (known keys: a, b)"
    )
    assert refusal(known_table, [1], ("a",), failing("f.toml: entry 2")) == "f.toml: entry 2: is not a table"
    assert refusal(parse_toml, "a = ", "f.toml").startswith("f.toml: does not parse as TOML: ")


def test_a_file_that_cannot_be_read_is_one_line_naming_what_it_was_read_as(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text("a = 1\n" * 100)
    assert read_toml_file(big, 1000, "the manifest") == "a = 1\n" * 100
    assert refusal(read_toml_file, big, 10, "the manifest").startswith(f"{big}: cannot read the manifest (")
    assert (
        refusal(read_toml_file, tmp_path, 10, "the expectations file")
        == f"{tmp_path}: cannot read the expectations file ({tmp_path} is a folder, not a regular file)"
    )
    if hasattr(os, "mkfifo"):  # a FIFO is refused, never waited on
        fifo = tmp_path / "fifo.toml"
        os.mkfifo(fifo)
        assert "is a FIFO (named pipe), not a regular file" in refusal(read_toml_file, fifo, 10, "the manifest")


@pytest.mark.parametrize(
    "text, said",
    [
        (
            '[[expect]]\ncell = "a.b"\nstatus = "differs"\ncolour = 1\n',
            "e.toml:4: expectation entry 1: unknown key `colour` (known keys: cell, status, "
            "intermittent, platform, jax, "
            "reason, bug, owner, added, expires)",
        ),
        (
            '[[perf]]\nworkload = "w"\nreason = "r"\nspeed = 1\n',
            "e.toml:4: [[perf]] entry 1: unknown key `speed` (known keys: workload, metric, "
            "jax, reason, bug, owner, added, "
            "expires)",
        ),
        ("expect = [1]\n", "e.toml: expectation entry 1: is not a table"),
        (
            "colour = 1\n",
            "e.toml:1: unknown top-level key `colour`; entries are [[expect]], [[perf]] and [[name]] tables "
            "(top-level keys: expect, perf, name, downstream, fail_on_printed, allow_missing)",
        ),
        ("[[expect]\n", "e.toml: does not parse as TOML: "),
    ],
)
def test_the_expectations_file_keeps_its_messages(text, said):
    assert refusal(parse_expectations_file, text, "e.toml").startswith(said)


def test_downstream_entries_and_manifests_keep_their_messages(tmp_path):
    assert refusal(parse_acks, '[[downstream]]\nnode = "a"\nreason = "r"\nwhy = 1\n', "e.toml", TODAY, "0.10.0") == (
        "e.toml: [[downstream]] entry 1: unknown key `why` (known keys: suite, signature, node, jax, reason, bug, "
        "owner, added, expires)"
    )
    assert (
        refusal(parse_acks, "downstream = [3]\n", "e.toml", TODAY, "0.10.0")
        == "e.toml: [[downstream]] entry 1: is not a table"
    )
    assert (
        refusal(parse_acks, "downstream = 3\n", "e.toml", TODAY, "0.10.0")
        == "e.toml: `downstream` should be a list of [[downstream]] tables"
    )
    assert refusal(parse_manifest, 'tests = "pyargs"\nspeed = 2\n', "m.toml") == (
        "m.toml: unknown key `speed` (known keys: tests, sdist_tests, packages, extras, requires, pytest_args, "
        "device_count, time_multiplier, test_timeout_s, run_timeout_s, deselect, flaky)"
    )
    assert refusal(parse_manifest, "tests = \n", "m.toml").startswith("m.toml: does not parse as TOML: ")
    manifest = tmp_path / "manifest.toml"
    manifest.mkdir()  # `--manifest` naming a folder
    assert (
        refusal(read_suite, "chex==0.1.90", manifest)
        == f"{manifest}: cannot read the manifest ({manifest} is a folder, not a regular file)"
    )


def test_expectation_and_acknowledgement_share_the_common_keys_the_one_check_gives():
    shared = [f.name for f in dataclasses.fields(Terms)]
    assert sorted(shared) == sorted(common_fields({}, failing("x")))  # the one check builds exactly the shared keys
    for kind in (Expectation, Acknowledgement):
        assert issubclass(kind, Terms) and [f.name for f in dataclasses.fields(kind)][: len(shared)] == shared
    read = parse_expectations_file(
        '[[expect]]\ncell = "a.b"\nstatus = "differs"\nowner = "o"\nexpires = 2027-01-05\n'
        '[[perf]]\nworkload = "w"\nreason = "r"\nowner = "o"\nexpires = 2027-01-05\n',
        "e",
    )
    for entry in (read.entries[0], read.perf[0]):
        assert (entry.who, entry.days_left(TODAY)) == ("owner o, no bug", 4)


def test_the_gate_reads_the_expectations_file_once(tmp_path, monkeypatch):
    from tests.synthetic_results import cell, write

    before = write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.x")])
    after = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x", status="differs")])
    expect = tmp_path / "expect.toml"
    expect.write_text(
        '[[expect]]\ncell = "a.x"\nstatus = "differs"\nreason = "known"\n'
        '[[downstream]]\nnode = "t::*"\nreason = "flaky upstream"\n',
        encoding="utf-8",
    )
    reads = []
    real = tomltable.read_regular_text
    monkeypatch.setattr(tomltable, "read_regular_text", lambda path, limit: reads.append(path) or real(path, limit))
    seen = []

    def downstream(request, expectations, builder, say):  # the plug `gate --downstream` uses
        seen.append(
            acks_for(
                DownstreamRequest(
                    (), ("0.7.2", "0.8.3"), tmp_path / "r", read=expectations, expectations=request.cells.expectations
                ),
                TODAY,
                "0.8.3",
            )
        )
        return None

    cells = GateRequest(RunSettings(results=tmp_path / "r"), (before,), (after,), expectations=expect)
    done = onegate.run_one_gate(
        onegate.OneGateRequest(cells=cells, more=(downstream,)), lambda: None, lambda event: None, lambda line: None
    )
    assert done.exit_code == 0 and done.verdict.tiers[0].count("acknowledged") == 1  # the cells used the entry
    assert [a.node for a in seen[0].acks] == ["t::*"]  # the downstream tier used the gate's reading
    assert reads == [expect]


def test_downstream_acks_come_from_the_gates_reading_without_a_second_read(tmp_path):
    read = parse_expectations_file('[[downstream]]\nsignature = "E: *"\nreason = "known"\n', "e.toml")
    gone = tmp_path / "no-such-file.toml"  # a second read would fail on it
    found = acks_for(DownstreamRequest((), ("0.8.0", "0.9.0"), tmp_path, expectations=gone, read=read), TODAY, "0.9.0")
    assert [a.signature for a in found.acks] == ["E: *"]
    assert (
        acks_for(DownstreamRequest((), ("0.8.0", "0.9.0"), tmp_path, read=ExpectationsFile([])), TODAY, "0.9.0").acks
        == []
    )


@pytest.mark.parametrize("nested", ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 5000 + "1" + "}" * 5000])
def test_a_file_nested_too_deeply_is_one_line_not_a_recursion_error(nested):
    # tomllib recurses once per level; a file within the reading bound can exceed Python's recursion limit
    with pytest.raises(ConformanceError, match="m.toml: does not parse as TOML: .*nested too deeply"):
        parse_toml(nested, "m.toml")
    with pytest.raises(ConformanceError, match="manifest.toml: does not parse as TOML"):
        parse_manifest(nested, "manifest.toml")
