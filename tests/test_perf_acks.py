"""`[[perf]]` entries of an expectations file (`conformance.perf.acks`): each refusal in its one line, expiry from its
day on, pre-releases inside a specifier (issue 48: written against the survivors of a mutation run). No JAX."""

from __future__ import annotations

import datetime

import pytest

from conformance.errors import ConformanceError
from conformance.perf.acks import KEYS, acknowledging, load_acks
from conformance.perf.stats import METRICS

TODAY = datetime.date(2026, 12, 3)


def acks_of(tmp_path, text, today=TODAY):
    path = tmp_path / "expect.toml"
    path.write_text(text, encoding="utf-8")
    return load_acks(path, today) if today else load_acks(path)


def refusal(tmp_path, text) -> str:
    with pytest.raises(ConformanceError) as raised:
        acks_of(tmp_path, text)
    return str(raised.value).replace(str(tmp_path / "expect.toml"), "F")


ENTRY = '[[perf]]\nworkload = "performance.sort_*"\nreason = "slower sort"\n'


@pytest.mark.parametrize("extra, said", [
    ('jax = 5\n', "F: [[perf]] entry 1: jax takes a PEP 440 specifier string"),
    ('jax = "~~1"\n', "F: [[perf]] entry 1: jax = '~~1' is not a PEP 440 specifier such as '>=0.9'"),
    ('expires = "soon"\n', "F: [[perf]] entry 1: expires = 'soon' is not a date such as 2027-06-30"),
    ('expires = 5\n', "F: [[perf]] entry 1: expires takes a date such as 2027-06-30"),
    ('metric = ["speed"]\n', f"F: [[perf]] entry 1: metric takes names of {', '.join(METRICS)}"),
    ('colour = "red"\n', f"F: [[perf]] entry 1: unknown key `colour` (known keys: {', '.join(KEYS)})"),
])
def test_a_bad_entry_is_refused_in_one_line_naming_the_file_and_entry(tmp_path, extra, said):
    assert refusal(tmp_path, ENTRY + extra) == said


def test_a_bad_file_or_table_is_refused_in_one_line(tmp_path):
    assert refusal(tmp_path, "perf = [1]\n") == "F: [[perf]] entry 1 is not a table"
    assert refusal(tmp_path, "perf = 1\n") == "F: `perf` should be a list of [[perf]] tables"
    assert refusal(tmp_path, '[[perf]]\nworkload = ""\nreason = "r"\n') == \
        'F: [[perf]] entry 1: needs workload = "PATTERN" and reason = "..."'
    assert refusal(tmp_path, "perf = [\n").startswith("F: does not parse as TOML: ")
    (tmp_path / "dir").mkdir()
    with pytest.raises(ConformanceError) as raised:
        load_acks(tmp_path / "dir")
    assert str(raised.value).startswith(f"{tmp_path / 'dir'}: cannot read the expectations file (")


def test_an_entry_expires_from_its_day_on_and_a_file_without_entries_has_none(tmp_path):
    assert acks_of(tmp_path, ENTRY + 'expires = "2026-12-03"\n') == []
    assert acks_of(tmp_path, ENTRY + 'expires = "2000-01-01"\n') == []
    assert len(acks_of(tmp_path, ENTRY + 'expires = "2026-12-04"\n')) == 1
    assert len(acks_of(tmp_path, ENTRY + "expires = 2999-01-01\n", today=None)) == 1  # today by default
    assert acks_of(tmp_path, "[[expect]]\nid = 'x'\n") == []


def test_a_specifier_takes_in_the_pre_releases_inside_it(tmp_path):
    acks = acks_of(tmp_path, ENTRY + 'jax = ">=0.8"\nmetric = "run_s"\n')
    assert acknowledging(acks, "performance.sort_big", "run_s", "0.9.0rc1") == "slower sort"
    assert acknowledging(acks, "performance.sort_big", "run_cpu_s", "0.9.0") is None
    assert acknowledging(acks, "performance.sort_big", "run_s", "0.7.2") is None
