"""The workloads gate's and `bisect --metric`'s rules where they live (`perf.decisions`, `perf.stats`), each fed the
input that exposes its wrong edit: an exact metric grown from 0, 4 samples against 9, an entry without `metric`, a
specifier read against the wrong side, an improvement bisected (in either order of the ends), a candidate that fails,
a side reused beside one sampled now. No JAX: sessions are built from samples."""

from __future__ import annotations


import pytest

from conformance.core.workload import Workload
from conformance.decide.expectations import parse_expectations_file
from conformance.decide.tiers import ACKNOWLEDGED, NOTED, REGRESSED, UNJUDGED, Tier, Verdict
from conformance.errors import ConformanceError
from conformance.perf.decisions import (
    MetricBisect,
    bisect_metric,
    check_ratio,
    judged_workloads,
    perf_exit,
    place,
    upward,
    workload_findings,
)
from conformance.perf.render import verdict_line
from conformance.perf.session import PerfOutcome, PerfRequest, Side
from conformance.perf.stats import Verdict as StatsVerdict
from conformance.perf.stats import exact_verdict, timed_verdict


def build():
    return (lambda x: x), (1,)


FAST = Workload("performance.fast", "§P", "§P Performance", "A fast one.", ("perf.fast",), build)
SORT = Workload("performance.sort_big", "§P", "§P Performance", "A sort.", ("perf.sort",), build)


def outcome(samples, errors=None, reused=None, versions=("0.8.0", "0.9.0"), workloads=(SORT,)):
    """A session of two sides: `samples[(workload_id, side)]` a list of metric dicts."""
    sides = tuple(Side(v, "python", v, "linux-x86_64", f"env-{v}") for v in versions)
    request = PerfRequest(sides, tuple(workloads), "pkg")
    return PerfOutcome(
        request, {k: [{"metrics": m} for m in v] for k, v in samples.items()}, errors or {}, reused or {}, 5
    )


def entries(text):
    return parse_expectations_file(text, "expect.toml").perf


def same_runs(n=5, value=1.0, **exact):
    return [{"run_s": value * (1 + 0.01 * i), **exact} for i in range(n)]


# (a) an exact metric that grows from 0 counts as growing


def test_an_exact_metric_grown_from_zero_is_upward_and_fails_the_gate():
    grown = exact_verdict([0, 0], [4096, 4096])
    assert grown.verdict == "changed" and grown.ratio is None and upward(grown)
    assert not upward(exact_verdict([4096], [0]))  # shrank to 0: ratio 0
    found = workload_findings(
        outcome(
            {
                ("performance.sort_big", 0): same_runs(temp_bytes=0),
                ("performance.sort_big", 1): same_runs(temp_bytes=4096),
            }
        ),
        [],
        verdict_line,
    )
    assert [(f.subject, f.state, f.reason) for f in found] == [("performance.sort_big temp_bytes", REGRESSED, "grew")]


# (b) a side with 4 samples against 9 is `unknown`, whichever side has the 4


@pytest.mark.parametrize("old_n, new_n", [(4, 9), (9, 4)])
def test_four_samples_against_nine_is_unknown_even_when_separated(old_n, new_n):
    old, new = [1.0 + 0.001 * i for i in range(old_n)], [3.0 + 0.001 * i for i in range(new_n)]
    verdict = timed_verdict(old, new)
    assert verdict.p < 0.01 and verdict.ratio > 2  # the rank test and the ratio alone would say `regressed`
    assert verdict.verdict == "unknown"
    assert (
        timed_verdict(
            old + [1.004] * (5 - old_n) if old_n < 5 else old, new + [3.004] * (5 - new_n) if new_n < 5 else new
        ).verdict
        == "regressed"
    )


# (c) a `[[perf]]` entry without `metric` acknowledges every metric


def test_an_entry_without_metric_acknowledges_each_metric_that_moved():
    samples = {
        ("performance.sort_big", 0): same_runs(temp_bytes=100, fusions=3),
        ("performance.sort_big", 1): same_runs(value=3.0, temp_bytes=200, fusions=4),
    }
    found = workload_findings(
        outcome(samples), entries('[[perf]]\nworkload = "performance.sort_*"\nreason = "r"\n'), verdict_line
    )
    assert sorted(f.subject.split()[1] for f in found) == ["fusions", "run_s", "temp_bytes"]
    assert {f.state for f in found} == {ACKNOWLEDGED} and {f.reason for f in found} == {"r"}
    only_run = entries('[[perf]]\nworkload = "performance.sort_*"\nmetric = "run_s"\nreason = "r"\n')
    states = {f.subject.split()[1]: f.state for f in workload_findings(outcome(samples), only_run, verdict_line)}
    assert states == {"run_s": ACKNOWLEDGED, "temp_bytes": REGRESSED, "fusions": REGRESSED}


# (d) an entry's `jax` specifier is read against the candidate, never the baseline


@pytest.mark.parametrize("specifier, acknowledged", [(">=0.9", True), ("<0.9", False), ("==0.8.0", False)])
def test_the_specifier_is_read_against_the_candidate(specifier, acknowledged):
    samples = {
        ("performance.sort_big", 0): same_runs(temp_bytes=100),
        ("performance.sort_big", 1): same_runs(temp_bytes=200),
    }
    text = f'[[perf]]\nworkload = "performance.sort_big"\njax = "{specifier}"\nreason = "r"\n'
    (found,) = workload_findings(outcome(samples, versions=("0.8.0", "0.9.0")), entries(text), verdict_line)
    assert found.state == (ACKNOWLEDGED if acknowledged else REGRESSED)


# (f) a workload that fails on the candidate fails the gate and is named; one that fails on the baseline is unjudged


def test_a_failing_workload_does_not_stop_the_others_being_judged():
    slow = [{"run_s": 9.0 * (1 + 0.01 * i), "temp_bytes": 2} for i in range(5)]
    for failing_side in (0, 1):
        samples = {
            ("performance.sort_big", 1 - failing_side): same_runs(),
            ("performance.fast", 0): same_runs(temp_bytes=1),
            ("performance.fast", 1): slow,
        }
        found = workload_findings(
            outcome(samples, {("performance.sort_big", failing_side): "boom"}, workloads=(SORT, FAST)), [], verdict_line
        )
        assert [(f.subject, f.state) for f in found] == [
            ("performance.sort_big", REGRESSED if failing_side else UNJUDGED),
            ("performance.fast temp_bytes", REGRESSED),
            ("performance.fast run_s", REGRESSED),
        ]
        assert all(f.detail.startswith(("changed: performance.fast", "regressed: performance.fast")) for f in found[1:])


def test_noted_and_acknowledged_findings_carry_the_measured_line():
    samples = {
        ("performance.sort_big", 0): same_runs(temp_bytes=200),
        ("performance.sort_big", 1): same_runs(temp_bytes=100, fusions=1),
    }
    samples[("performance.sort_big", 0)] = [{**m, "fusions": 0} for m in samples[("performance.sort_big", 0)]]
    found = workload_findings(outcome(samples), entries('[[perf]]\nworkload = "*"\nreason = "r"\n'), verdict_line)
    assert {f.subject: (f.state, f.detail) for f in found} == {
        "performance.sort_big temp_bytes": (
            NOTED,
            "changed: performance.sort_big temp_bytes 0.8.0 -> 0.9.0: x0.5 (200 -> 100)",
        ),
        "performance.sort_big fusions": (
            ACKNOWLEDGED,
            "changed: performance.sort_big fusions 0.8.0 -> 0.9.0: n/a (0 -> 1)",
        ),
    }


def test_a_workload_that_raises_on_the_candidate_is_a_named_regression():
    samples = {
        ("performance.sort_big", 0): same_runs(),
        ("performance.fast", 0): same_runs(),
        ("performance.fast", 1): same_runs(),
    }
    errors = {("performance.sort_big", 1): "AttributeError: module 'jax' has no attribute 'sort_big'"}
    found = workload_findings(outcome(samples, errors, workloads=(SORT, FAST)), [], verdict_line)
    assert [(f.subject, f.state) for f in found] == [("performance.sort_big", REGRESSED)]
    assert found[0].reason == "fails on 0.9.0: AttributeError: module 'jax' has no attribute 'sort_big'"
    assert judged_workloads(outcome(samples, errors, workloads=(SORT, FAST))) == 1
    tier = Tier("workloads", "t", 1, tuple(found))
    assert tier.failed and Verdict("gate", (tier,)).exit_code == 1
    no_error = workload_findings(outcome({("performance.sort_big", 0): same_runs()}), [], verdict_line)
    assert [(f.state, f.reason) for f in no_error] == [(REGRESSED, "fails on 0.9.0: no samples")]


def test_a_workload_that_fails_on_the_baseline_is_unjudged_and_fails_the_gate():
    found = workload_findings(
        outcome({("performance.sort_big", 1): same_runs()}, {("performance.sort_big", 0): "boom"}), [], verdict_line
    )
    assert [(f.state, f.reason) for f in found] == [(UNJUDGED, "nothing to compare with: no samples on 0.8.0: boom")]
    assert Tier("workloads", "t", 0, tuple(found)).failed
    (silent,) = workload_findings(outcome({("performance.sort_big", 1): same_runs()}), [], verdict_line)
    assert silent.reason == "nothing to compare with: no samples on 0.8.0: no samples"


def test_improvements_and_undecided_verdicts_are_noted_not_failing():
    samples = {
        ("performance.sort_big", 0): same_runs(4, value=1.0, temp_bytes=200),
        ("performance.sort_big", 1): same_runs(4, value=3.0, temp_bytes=100),
    }
    found = workload_findings(outcome(samples), [], verdict_line)
    assert {(f.subject, f.state, f.reason) for f in found} == {
        ("performance.sort_big run_s", NOTED, "unknown"),
        ("performance.sort_big temp_bytes", NOTED, "changed"),
    }
    assert not Tier("workloads", "t", 1, tuple(found)).failed


# (h) a side stored by an earlier session beside one sampled now is said so


@pytest.mark.parametrize(
    "reused, said",
    [
        ({0: True}, "0.8.0's samples are reused from an earlier session, 0.9.0's"),
        ({1: True}, "0.9.0's samples are reused from an earlier session, 0.8.0's"),
        ({0: True, 1: True}, None),
        ({}, None),
    ],
)
def test_a_reused_side_beside_a_fresh_one_is_said_to_be_reused(reused, said):
    samples = {
        ("performance.sort_big", 0): same_runs(temp_bytes=1),
        ("performance.sort_big", 1): same_runs(temp_bytes=2),
    }
    (found,) = workload_findings(
        outcome(samples, reused={("performance.sort_big", k): v for k, v in reused.items()}), [], verdict_line
    )
    assert (said in found.detail and "not interleaved" in found.detail) if said else "reused" not in found.detail


# (g) the threshold


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1.0, 0.5, -2.0])
def test_a_non_finite_or_at_most_one_threshold_is_refused_in_one_line(value):
    with pytest.raises(ConformanceError) as raised:
        check_ratio(value, "--perf-threshold")
    assert str(raised.value).startswith("--perf-threshold must be a finite ratio above 1") and "\n" not in str(
        raised.value
    )
    assert check_ratio(1.1, "--threshold") == 1.1


# (e) bisect: an improvement blames the right release, in either order of the ends, or is refused

RELEASES = ["0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0"]


def bisect(values, good, bad, unknown=()):
    """Bisect over `RELEASES` where `values[release]` is a run time; a midpoint in `unknown` cannot be told."""

    def verdict(old, new):
        if new in unknown:
            return StatsVerdict("unknown", values[new] / values[old])
        ratio = values[new] / values[old]
        return StatsVerdict("same" if 0.8 < ratio < 1.25 else "regressed" if ratio > 1 else "improved", ratio)

    steps = [
        r
        for r in RELEASES
        if min(good, bad, key=RELEASES.index) != r != max(good, bad, key=RELEASES.index)
        and RELEASES.index(min(good, bad, key=RELEASES.index))
        < RELEASES.index(r)
        < RELEASES.index(max(good, bad, key=RELEASES.index))
    ]
    return bisect_metric(good, bad, steps, verdict(good, bad), lambda low, middle, high: verdict(low, middle))


@pytest.mark.parametrize("crossing", ["0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0"])
def test_bisecting_an_improvement_blames_the_release_it_came_in(crossing):
    values = {r: (1.0 if RELEASES.index(r) >= RELEASES.index(crossing) else 3.0) for r in RELEASES}
    found = bisect(values, "0.5.0", "0.10.0")  # good: the old, slow one; bad: the new, fast one
    assert found.ends.verdict == "improved" and found.exit_code == 0
    assert found.first == crossing and found.last_good == RELEASES[RELEASES.index(crossing) - 1]


@pytest.mark.parametrize("crossing", ["0.6.0", "0.7.0", "0.8.0", "0.9.0", "0.10.0"])
def test_bisecting_with_the_newer_release_as_good_blames_the_right_release(crossing):
    # --good 0.10.0 --bad 0.5.0: the newer end is the good one (a fix looked for backwards)
    values = {r: (1.0 if RELEASES.index(r) >= RELEASES.index(crossing) else 3.0) for r in RELEASES}
    found = bisect(values, "0.10.0", "0.5.0")
    assert found.ends.verdict == "regressed" and found.exit_code == 0
    assert found.first == RELEASES[RELEASES.index(crossing) - 1] and found.last_good == crossing


def test_a_midpoint_that_moved_the_other_way_or_cannot_be_told_is_refused_never_blamed():
    values = {"0.5.0": 3.0, "0.6.0": 3.0, "0.7.0": 9.0, "0.8.0": 9.0, "0.9.0": 1.0, "0.10.0": 1.0}
    found = bisect(values, "0.5.0", "0.10.0")
    assert found.exit_code == 1 and found.first is None and "cannot be placed (regressed against" in found.refused
    found = bisect({r: 3.0 if RELEASES.index(r) < 3 else 1.0 for r in RELEASES}, "0.5.0", "0.10.0", unknown=("0.8.0",))
    assert found.exit_code == 1 and found.first is None and "0.8.0 cannot be placed (unknown" in found.refused


def test_the_steps_are_taken_in_version_order_whatever_order_they_come_in():
    values = {"0.8.0": 3.0, "0.9.0": 3.0, "0.10.0": 1.0, "0.11.0": 1.0, "0.12.0": 1.0}
    verdict = lambda old, new: StatsVerdict(  # noqa: E731
        "same" if values[old] == values[new] else "improved",
        values[new] / values[old],
    )
    found = bisect_metric(
        "0.8.0",
        "0.12.0",
        ["0.11.0", "0.9.0", "0.10.0"],
        verdict("0.8.0", "0.12.0"),
        lambda low, middle, high: verdict(low, middle),
    )
    assert (found.first, found.last_good) == ("0.10.0", "0.9.0")
    assert [release for release, _, _ in found.steps] == ["0.10.0", "0.9.0"]


def test_a_midpoint_that_cannot_be_placed_is_the_last_step_said_unplaced():
    found = bisect({r: 3.0 if RELEASES.index(r) < 3 else 1.0 for r in RELEASES}, "0.5.0", "0.10.0", unknown=("0.8.0",))
    assert [(release, side) for release, side, _ in found.steps] == [("0.8.0", "unplaced")]


def test_ends_that_do_not_differ_are_refused():
    found = bisect({r: 1.0 for r in RELEASES}, "0.5.0", "0.10.0")
    assert found.exit_code == 1 and "the ends do not differ (same)" in found.refused


@pytest.mark.parametrize(
    "against_good, ends, side",
    [
        (StatsVerdict("improved", 0.5), StatsVerdict("improved", 0.4), "bad"),
        (StatsVerdict("regressed", 2.0), StatsVerdict("improved", 0.4), None),
        (StatsVerdict("changed", None), StatsVerdict("changed", 3.0), "bad"),
        (StatsVerdict("changed", 0.5), StatsVerdict("changed", 3.0), None),
        (StatsVerdict("same", 1.0), StatsVerdict("regressed", 3.0), "good"),
        (StatsVerdict("unknown", 2.0), StatsVerdict("regressed", 3.0), None),
    ],
)
def test_a_midpoint_is_placed_by_its_move_from_the_good_end_in_the_ends_direction(against_good, ends, side):
    assert place(against_good, ends) == side


def test_a_bisect_with_no_release_between_blames_the_bad_end():
    found = bisect_metric("a", "b", [], StatsVerdict("regressed", 2.0), lambda *_: pytest.fail("no step"))
    assert isinstance(found, MetricBisect) and (found.first, found.last_good, found.exit_code) == ("b", "a", 0)


# `perf`'s exit status: a measurement, as `run` (a failed workload is a result, the gate's to judge)


@pytest.mark.parametrize("failed", [("performance.sort_big",), ("performance.sort_big", "performance.fast")])
def test_perf_exits_0_when_workloads_failed_on_a_side(failed):
    samples = {
        ("performance.sort_big", 0): same_runs(),
        ("performance.fast", 0): same_runs(),
        ("performance.fast", 1): same_runs(),
    }
    samples = {k: v for k, v in samples.items() if not (k[1] == 1 and k[0] in failed)}
    errors = {(w, 1): "ran past its timeout_s of 2 s and was stopped" for w in failed}
    assert perf_exit(outcome(samples, errors, workloads=(FAST, SORT))) == 0
    assert perf_exit(outcome(samples, errors, workloads=(FAST, SORT)), aa=True) == 0  # a failure is no A/A flag


def test_perf_exits_1_on_an_aa_run_that_flags_and_0_without_aa():
    moved = {
        ("performance.sort_big", 0): same_runs(temp_bytes=0),
        ("performance.sort_big", 1): same_runs(temp_bytes=4096),
    }
    assert perf_exit(outcome(moved), aa=True) == 1 and perf_exit(outcome(moved)) == 0
    unknown = {("performance.sort_big", 0): same_runs(4), ("performance.sort_big", 1): same_runs(9, value=3.0)}
    assert perf_exit(outcome(unknown), aa=True) == 0  # `unknown` is listed, not a flag
