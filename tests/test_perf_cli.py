"""Bad input to the performance tier's commands is one line and exit 2, before any environment is built; the
`[[perf]]` acknowledgements read and refused."""

from __future__ import annotations


import pytest

from conformance import cli
from conformance.errors import ConformanceError
from conformance.decide.expectations import load_expectations_file, parse_expectations_file
from conformance.perf.decisions import acknowledging


@pytest.mark.parametrize(
    "argv, message",
    [
        (["perf", "--jax", "0.8.3", "-k", "no_such_workload"], "-k 'no_such_workload' selects no workload"),
        (["perf", "--jax", "0.8.3", "--threshold", "0.9"], "--threshold must be a finite ratio above 1"),
        (["perf", "--jax", "0.8.3", "--threshold", "nan"], "--threshold must be a finite ratio above 1"),
        (
            ["gate", "--from", "0.8.3", "--to", "0.9.2", "--perf-threshold", "nan"],
            "--perf-threshold must be a finite ratio above 1 (such as 1.25), not nan",
        ),
        (["gate", "--from", "0.8.3", "--to", "0.9.2", "--perf-threshold", "inf"], "--perf-threshold must be a finite"),
        (["gate", "--from", "0.8.3", "--to", "0.9.2", "--perf", "--perf-threshold", "1"], "--perf-threshold must be"),
        (["gate", "--from", "0.8.3", "--to", "0.9.2", "--perf-rounds", "0"], "--perf-rounds must be at least 1"),
        (["gate", "--perf", "--from", "0.8.3"], "the workloads are judged with --from VERSION and --to VERSION"),
        (
            ["bisect", "performance.nope", "--metric", "run_s", "--good", "0.8.3", "--bad", "0.9.2"],
            "no workload 'performance.nope'",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path):
    assert cli.main([*argv, "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_an_unknown_metric_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as raised:
        cli.main(["bisect", "performance.fft", "--metric", "speed", "--good", "0.8.3", "--bad", "0.9.2"])
    assert raised.value.code == 2 and "invalid choice: 'speed'" in capsys.readouterr().err


ACKS = """
[[expect]]
cell = "a.b"
status = ["differs"]
reason = "cells are the cell gate's"

[[perf]]
workload = "performance.sort_*"
metric = "run_s"
jax = ">=0.9"
reason = "sort is slower"

[[perf]]
workload = "performance.fft"
reason = "expired"
expires = 2026-01-01
"""


def test_perf_entries_acknowledge_by_pattern_metric_and_version(tmp_path):
    path = tmp_path / "expect.toml"
    path.write_text(ACKS, encoding="utf-8")
    acks = load_expectations_file(path).perf
    assert acknowledging(acks, "performance.sort_top_k", "run_s", "0.9.2").reason == "sort is slower"
    assert acknowledging(acks, "performance.sort_top_k", "run_cpu_s", "0.9.2") is None
    assert acknowledging(acks, "performance.sort_top_k", "run_s", "0.8.3") is None


@pytest.mark.parametrize(
    "entry, message",
    [
        ('workload = "x"\n', "needs `reason"),
        ('workload = "x"\nreason = "r"\nmetric = ["speed"]\n', "`metric` takes names"),
        ('workload = "x"\nreason = "r"\njax = "0.9"\n', "not a version specifier"),
        ('workload = "x"\nreason = "r"\nowner2 = "me"\n', "unknown key `owner2`"),
    ],
)
def test_a_malformed_perf_entry_is_one_line_naming_it(tmp_path, entry, message):
    path = tmp_path / "expect.toml"
    path.write_text("[[perf]]\n" + entry, encoding="utf-8")
    with pytest.raises(ConformanceError, match=message) as raised:
        load_expectations_file(path)
    assert "[[perf]] entry 1" in str(raised.value)


def test_the_cell_gate_reads_a_file_with_perf_entries_as_its_own_kind():
    read = parse_expectations_file(ACKS, "expect.toml")
    assert [e.cell.case for e in read.entries] == ["a.b"] and [a.pattern for a in read.perf] == [
        "performance.sort_*",
        "performance.fft",
    ]
