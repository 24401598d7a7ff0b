"""Bad input to the performance tier's commands is one line and exit 2, before any environment is built; the
`[[perf]]` acknowledgements read and refused."""

from __future__ import annotations

import datetime

import pytest

from conformance import cli
from conformance.errors import ConformanceError
from conformance.perf.acks import acknowledging, load_acks


@pytest.mark.parametrize("argv, message", [
    (["perf", "--jax", "0.8.3", "-k", "no_such_workload"], "-k 'no_such_workload' selects no workload"),
    (["perf", "--jax", "0.8.3", "--threshold", "0.9"], "--threshold must be a ratio above 1"),
    (["gate", "--perf", "--from", "0.8.3"], "gate --perf needs --from VERSION and --to VERSION"),
    (["bisect", "performance.nope", "--metric", "run_s", "--good", "0.8.3", "--bad", "0.9.2"],
     "no workload 'performance.nope'"),
])
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


def test_perf_entries_acknowledge_by_pattern_metric_and_version_until_they_expire(tmp_path):
    path = tmp_path / "expect.toml"
    path.write_text(ACKS, encoding="utf-8")
    acks = load_acks(path, datetime.date(2026, 12, 3))
    assert acknowledging(acks, "performance.sort_top_k", "run_s", "0.9.2") == "sort is slower"
    assert acknowledging(acks, "performance.sort_top_k", "run_cpu_s", "0.9.2") is None
    assert acknowledging(acks, "performance.sort_top_k", "run_s", "0.8.3") is None
    assert acknowledging(acks, "performance.fft", "run_s", "0.9.2") is None  # expired


@pytest.mark.parametrize("entry, message", [
    ('workload = "x"\n', "needs workload"),
    ('workload = "x"\nreason = "r"\nmetric = ["speed"]\n', "metric takes names"),
    ('workload = "x"\nreason = "r"\njax = "0.9"\n', "not a PEP 440 specifier"),
    ('workload = "x"\nreason = "r"\nowner2 = "me"\n', "unknown key `owner2`"),
])
def test_a_malformed_perf_entry_is_one_line_naming_it(tmp_path, entry, message):
    path = tmp_path / "expect.toml"
    path.write_text("[[perf]]\n" + entry, encoding="utf-8")
    with pytest.raises(ConformanceError, match=message) as raised:
        load_acks(path)
    assert "[[perf]] entry 1" in str(raised.value)


def test_the_cell_gate_reads_a_file_with_perf_entries_and_ignores_them():
    from conformance.decide.expectations import parse_expectations_file

    assert [e.cell.case for e in parse_expectations_file(ACKS, "expect.toml").entries] == ["a.b"]
