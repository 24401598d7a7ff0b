"""`[[perf]]` entries, read by the expectations file's one reader (`decide.expectations`): each refusal in its one
line naming the file, line and entry, the shared rules (reason, bug, expiry, a TOML datetime refused), pre-releases
inside a specifier, and the bounded reader (a FIFO and /dev/zero refused). No JAX."""

from __future__ import annotations

import datetime
import os

import pytest

from conformance.decide.expectations import PERF_KEYS, lifecycle, load_expectations_file
from conformance.errors import ConformanceError
from conformance.perf.decisions import acknowledging
from conformance.perf.stats import METRICS

TODAY = datetime.date(2026, 12, 3)


def acks_of(tmp_path, text):
    path = tmp_path / "expect.toml"
    path.write_text(text, encoding="utf-8")
    return load_expectations_file(path).perf


def refusal(tmp_path, text) -> str:
    with pytest.raises(ConformanceError) as raised:
        acks_of(tmp_path, text)
    return str(raised.value).replace(str(tmp_path / "expect.toml"), "F")


ENTRY = '[[perf]]\nworkload = "performance.sort_*"\nreason = "slower sort"\n'


@pytest.mark.parametrize(
    "extra, said",
    [
        ("jax = 5\n", 'F:4: [[perf]] entry 1: `jax` should be a version specifier string such as ">=0.8"'),
        ('jax = "~~1"\n', "F:4: [[perf]] entry 1: `jax` is '~~1', not a version specifier"),
        ('expires = "soon"\n', "F:4: [[perf]] entry 1: `expires` is 'soon', not a date such as 2027-02-01"),
        (
            "expires = 2027-01-01T00:00:00\n",
            "F:4: [[perf]] entry 1: `expires` is datetime.datetime(2027, 1, 1, 0, 0), not a date",
        ),
        ('metric = ["speed"]\n', f"F:4: [[perf]] entry 1: `metric` takes names of {', '.join(METRICS)}"),
        ('colour = "red"\n', f"F:4: [[perf]] entry 1: unknown key `colour` (known keys: {', '.join(PERF_KEYS)})"),
        ('bug = "not a link"\n', "F:4: [[perf]] entry 1: `bug` is 'not a link', not a link"),
    ],
)
def test_a_bad_entry_is_refused_in_one_line_naming_the_file_line_and_entry(tmp_path, extra, said):
    assert refusal(tmp_path, ENTRY + extra).startswith(said)


def test_a_bad_file_or_table_is_refused_in_one_line(tmp_path):
    assert refusal(tmp_path, "perf = [1]\n") == "F: [[perf]] entry 1: is not a table"
    assert refusal(tmp_path, "perf = 1\n") == "F: `perf` should be a list of [[perf]] tables"
    assert (
        refusal(tmp_path, '[[perf]]\nworkload = ""\nreason = "r"\n')
        == 'F:2: [[perf]] entry 1: needs `workload = "PATTERN"` (an fnmatch pattern)'
    )
    assert (
        refusal(tmp_path, '[[perf]]\nworkload = "x"\n')
        == 'F:1: [[perf]] entry 1: needs `reason = "..."` (why the change is accepted)'
    )
    assert refusal(tmp_path, "perf = [\n").startswith("F: does not parse as TOML: ")


@pytest.mark.parametrize("make", ["fifo", "device", "folder"])
def test_the_file_is_read_by_the_bounded_reader_never_a_fifo_or_a_device(tmp_path, make):
    if make == "fifo":
        path = tmp_path / "fifo.toml"
        os.mkfifo(path)  # open() would wait for a writer for good
    elif make == "device":
        path = "/dev/zero"  # read() would never end
    else:
        path = tmp_path
    with pytest.raises(ConformanceError, match="cannot read the expectations file") as raised:
        load_expectations_file(path)
    assert "\n" not in str(raised.value)


def test_an_expired_perf_entry_fails_the_gate_by_the_one_lifecycle_rule(tmp_path):
    acks = acks_of(tmp_path, ENTRY + 'expires = "2026-12-03"\n' + ENTRY + "expires = 2026-12-10\n" + ENTRY)
    dates = lifecycle(acks, TODAY)
    assert [a.line for a in dates.expired] == [1] and [a.line for a in dates.expiring] == [5]
    assert "[[perf]] performance.sort_* (line 1)" in dates.expired_line(dates.expired[0])


def test_a_specifier_takes_in_the_pre_releases_inside_it(tmp_path):
    acks = acks_of(tmp_path, ENTRY + 'jax = ">=0.8"\nmetric = "run_s"\n')
    assert acknowledging(acks, "performance.sort_big", "run_s", "0.9.0rc1").reason == "slower sort"
    assert acknowledging(acks, "performance.sort_big", "run_cpu_s", "0.9.0") is None
    assert acknowledging(acks, "performance.sort_big", "run_s", "0.7.2") is None


def test_an_entry_without_metric_acknowledges_every_metric(tmp_path):
    acks = acks_of(tmp_path, ENTRY)
    assert all(acknowledging(acks, "performance.sort_big", metric, "0.9.0") for metric in METRICS)
    assert acknowledging(acks, "performance.fft", "run_s", "0.9.0") is None


def test_name_entries_share_the_rules_and_match_by_pattern_on_the_candidate(tmp_path):
    path = tmp_path / "expect.toml"
    path.write_text('[[name]]\nname = "jax.tree_*"\njax = ">=0.6"\nreason = "moving to jax.tree"\n', encoding="utf-8")
    (entry,) = load_expectations_file(path).names
    assert entry.applies("jax.tree_map", "0.6.0") and not entry.applies("jax.tree_map", "0.5.3")
    assert not entry.applies("jax.numpy.add", "0.6.0")
    path.write_text('[[name]]\nname = "jax.tree_map"\nowner = 3\nreason = "r"\n', encoding="utf-8")
    with pytest.raises(ConformanceError, match=r":3: \[\[name\]\] entry 1: `owner` should be a string"):
        load_expectations_file(path)
