"""Perf sessions with a fake sampler: interleaved rounds, more rounds for what is unknown, A/A pairs, storage
and reuse, the public JSON. No JAX."""

from __future__ import annotations

import itertools

import pytest

from conformance.core.workload import Workload
from conformance.errors import ConformanceError
from conformance.perf.render import outcome_json, outcome_lines
from conformance.perf.session import PerfRequest, Side, run_perf
from conformance.perf.store import stored_perf


def build():
    return (lambda x: x), (1,)


WORKLOAD = Workload("performance.fake", "§P", "§P Performance", "A fake.", ("perf.fake",), build)


def sides(tmp_path, *labels, folder=True):
    return tuple(Side(v, "python", v, "linux-x86_64", f"env-{v}", tmp_path if folder else None) for v in labels)


class FakeSampler:
    """run_s per side label (a base value times a repeating jitter); records the order it was called in."""

    def __init__(self, base, jitter=(1.0, 1.02, 0.98, 1.01, 0.99), exact=None):
        self.base, self.jitter, self.exact = base, itertools.cycle(jitter), exact or {}
        self.calls = []

    def __call__(self, side, workload_ids, round_no):
        self.calls.append((round_no, side.label))
        metrics = {
            "run_s": self.base[side.label] * next(self.jitter),
            "compiles": 1,
            "temp_bytes": self.exact.get(side.label, 100),
        }
        return {wid: {"metrics": metrics, "info": {}, "round": round_no} for wid in workload_ids}


class Scripted(FakeSampler):
    """run_s per side label from a repeating list."""

    def __init__(self, values):
        super().__init__({})
        self.values = {label: itertools.cycle(v) for label, v in values.items()}

    def __call__(self, side, workload_ids, round_no):
        self.calls.append((round_no, side.label))
        return {wid: {"metrics": {"run_s": next(self.values[side.label])}} for wid in workload_ids}


def test_rounds_alternate_the_order_of_the_sides(tmp_path):
    sampler = FakeSampler({"A": 1.0, "B": 1.0, "C": 1.0})
    run_perf(PerfRequest(sides(tmp_path, "A", "B", "C", folder=False), (WORKLOAD,), "pkg", rounds=3), sampler)
    assert [label for _, label in sampler.calls] == ["A", "B", "C", "C", "B", "A", "A", "B", "C"]


def test_a_slower_release_is_regressed_and_a_grown_exact_metric_changed(tmp_path):
    sampler = FakeSampler({"A": 1.0, "B": 2.0}, exact={"B": 150})
    outcome = run_perf(PerfRequest(sides(tmp_path, "A", "B", folder=False), (WORKLOAD,), "pkg"), sampler)
    verdicts = outcome.verdicts(WORKLOAD.id, 0, 1)
    assert verdicts["run_s"].verdict == "regressed" and verdicts["temp_bytes"].verdict == "changed"
    assert verdicts["temp_bytes"].ratio == 1.5 and verdicts["compiles"].verdict == "same"
    assert any("regressed: performance.fake run_s A -> B: x2" in line for line in outcome_lines(outcome))


def test_an_unknown_verdict_gets_more_rounds_up_to_the_bound(tmp_path):
    sampler = Scripted({"A": [1.0, 2.0, 1.1, 2.1, 1.2], "B": [2.2, 1.05, 2.3, 2.4, 1.15]})
    outcome = run_perf(
        PerfRequest(sides(tmp_path, "A", "B", folder=False), (WORKLOAD,), "pkg", rounds=5, max_rounds=7), sampler
    )
    assert outcome.rounds_run == 7 and len(sampler.calls) == 14


def test_an_aa_pair_of_the_same_noisy_side_flags_nothing(tmp_path):
    sampler = FakeSampler({"A": 1.0, "A (A/A)": 1.0}, jitter=(1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 0.85))
    request = PerfRequest(sides(tmp_path, "A", "A (A/A)", folder=False), (WORKLOAD,), "pkg", pairs=((0, 1),))
    assert run_perf(request, sampler).flagged() == []


def test_samples_are_stored_then_reused_without_sampling_again(tmp_path):
    sampler = FakeSampler({"A": 1.0, "B": 1.0})
    request = PerfRequest(sides(tmp_path, "A", "B"), (WORKLOAD,), "pkg")
    first = run_perf(request, sampler)
    assert len(first.stored) == 2 and len(stored_perf(tmp_path, "A", "linux-x86_64")[WORKLOAD.id]["samples"]) == 5
    again = FakeSampler({"A": 1.0, "B": 1.0})
    second = run_perf(request, again)
    assert again.calls == [] and second.reused[(WORKLOAD.id, 0)] and second.stored == []


def test_the_json_has_samples_medians_and_verdicts_per_release(tmp_path):
    sampler = FakeSampler({"A": 1.0, "B": 2.0})
    found = outcome_json(run_perf(PerfRequest(sides(tmp_path, "A", "B", folder=False), (WORKLOAD,), "pkg"), sampler))
    (workload,) = found["workloads"]
    first, second = workload["releases"]
    assert first["against"] is None and first["verdicts"] == {} and len(first["samples"]) == 5
    assert second["against"] == "A" and second["verdicts"]["run_s"]["verdict"] == "regressed"
    assert second["medians"]["run_s"] == 2.0 and set(workload["noise_band"]) == {"compile_s", "run_s", "run_cpu_s"}


OTHER = Workload("performance.other", "§P", "§P Performance", "Another.", ("perf.other",), build)


class Hostile(FakeSampler):
    """Answers for `performance.fake` with what a broken or forging child would hand back; `performance.other` is
    sound."""

    def __init__(self, answer_for_fake, extra=None):
        super().__init__({"A": 1.0})
        self.answer, self.extra = answer_for_fake, extra or {}

    def __call__(self, side, workload_ids, round_no):
        self.calls.append((round_no, tuple(workload_ids)))
        found = {wid: {"metrics": {"run_s": 1.0 + 0.01 * round_no, "compiles": 1}} for wid in workload_ids}
        if WORKLOAD.id in workload_ids:
            found[WORKLOAD.id] = self.answer
        return {**found, **self.extra}


def test_an_answer_for_a_workload_not_asked_is_not_taken(tmp_path):
    """Before: whatever id the child's file named became a sample of that workload (a workload could forge
    another's)."""
    forged = {"performance.never_asked": {"metrics": {"run_s": 9.0}}}
    outcome = run_perf(
        PerfRequest(sides(tmp_path, "A", folder=False), (OTHER,), "pkg", rounds=2),
        Hostile({"metrics": {"run_s": 1.0}}, forged),
    )
    assert ("performance.never_asked", 0) not in outcome.samples and len(outcome.samples[(OTHER.id, 0)]) == 2


@pytest.mark.parametrize(
    "answer, why",
    [
        ({"metrics": {"run_s": -0.5}}, "run_s is -0.5, not a finite number >= 0"),  # a clock running backwards
        ({"metrics": {"run_s": float("nan")}}, "run_s is nan"),
        ({"metrics": {"run_s": float("inf"), "compiles": 1}}, "run_s is inf"),
        ({"metrics": {"run_s": 0.1, "compiles": "1"}}, "compiles is str, not a number"),
        ({"metrics": {"run_s": 0.1}, "info": {"calls": -3}}, "info calls is -3"),
        ({"status": "timeout", "error": "ran past its timeout_s of 2 s"}, "timeout: ran past its timeout_s of 2 s"),
        ({"status": "crash", "error": "its process died of SIGSEGV"}, "crash: its process died of SIGSEGV"),
        (7, "no answer"),
    ],
)
def test_a_workload_with_bad_numbers_or_no_sample_gets_a_status_and_the_others_are_kept(tmp_path, answer, why):
    """Before: a negative time was stored and printed, a NaN ended the command in a traceback."""
    said = []
    sampler = Hostile(answer)
    outcome = run_perf(PerfRequest(sides(tmp_path, "A"), (WORKLOAD, OTHER), "pkg", rounds=3), sampler, said.append)
    assert (WORKLOAD.id, 0) not in outcome.samples and why in outcome.errors[(WORKLOAD.id, 0)]
    assert len(outcome.samples[(OTHER.id, 0)]) == 3  # the others' samples of every round are kept
    assert any(WORKLOAD.id in line and why in line for line in said)
    assert [ids for _, ids in sampler.calls][1:] == [(OTHER.id,), (OTHER.id,)]  # not asked again
    stored = stored_perf(tmp_path, "A", "linux-x86_64")
    assert why in stored[WORKLOAD.id]["error"] and stored[WORKLOAD.id]["samples"] == []
    status = why.split(":")[0] if why.startswith(("timeout:", "crash:")) else "error"
    assert stored[WORKLOAD.id]["status"] == outcome.statuses[(WORKLOAD.id, 0)] == status
    assert any(f"{WORKLOAD.id} {status}: " in line for line in said)


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), 1.0, 0.5])
def test_a_threshold_that_is_not_a_finite_ratio_above_1_is_refused_before_sampling(tmp_path, threshold):
    """Before: `--threshold nan` passed the command's `<= 1` check and every verdict compared against NaN."""
    sampler = FakeSampler({"A": 1.0, "B": 1.0})
    request = PerfRequest(sides(tmp_path, "A", "B", folder=False), (WORKLOAD,), "pkg", threshold=threshold)
    with pytest.raises(ConformanceError, match="--threshold must be a finite ratio above 1") as raised:
        run_perf(request, sampler)
    assert sampler.calls == [] and "\n" not in str(raised.value)
