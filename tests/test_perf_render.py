"""A perf session's public JSON and terminal lines (`conformance.perf.render`) in full, on a session with a failed
side, an exact metric that grew, a timed metric from zero (no ratio) and XLA flags (issue 48: written against the
survivors of a mutation run). A fake sampler, no JAX."""

from __future__ import annotations

from conformance.perf.render import outcome_json, outcome_lines, verdict_line
from conformance.perf.session import PerfRequest, run_perf
from conformance.perf.stats import Verdict
from tests.test_perf_session import WORKLOAD, FakeSampler, sides


class WithFailure(FakeSampler):
    """A 1 s, B 2 s run_s (jittered); run_cpu_s 0 on A, 0.5 s on B; C fails."""

    def __call__(self, side, workload_ids, round_no):
        if side.label == "C":
            return {wid: {"error": "RuntimeError: boom"} for wid in workload_ids}
        out = super().__call__(side, workload_ids, round_no)
        for found in out.values():
            found["metrics"] = {**found["metrics"], "run_cpu_s": 0.0 if side.label == "A" else 0.5, "fusions": 3}
        return out


def session(tmp_path):
    request = PerfRequest(
        sides(tmp_path, "A", "B", "C", folder=False), (WORKLOAD,), "pkg", xla_flags="--xla_x=1", threshold=1.5
    )
    return run_perf(request, WithFailure({"A": 1.0, "B": 2.0}, exact={"B": 150}))


def test_the_terminal_lines_show_medians_errors_and_every_verdict_other_than_same(tmp_path):
    assert outcome_lines(session(tmp_path)) == [
        "performance.fake: A fake.",
        "  jax A: run_s 1s, run_cpu_s 0ms, temp_bytes 100, compiles 1, fusions 3 (5 samples)",
        "  jax B: run_s 2s, run_cpu_s 500ms, temp_bytes 150, compiles 1, fusions 3 (5 samples)",
        "  jax C: error: RuntimeError: boom",
        "3 verdict(s) other than same: (threshold x1.5, 5 rounds)",
        "  changed: performance.fake temp_bytes A -> B: x1.5 (100 -> 150)",
        "  regressed: performance.fake run_s A -> B: x2 (1s -> 2s), p=0.00794, band x1.5",
        "  regressed: performance.fake run_cpu_s A -> B: n/a (0ms -> 500ms), p=0.00794, band x1.5",
    ]


def test_a_time_under_a_second_reads_in_milliseconds_and_a_verdict_without_medians_has_no_values(tmp_path):
    outcome = session(tmp_path)
    assert (
        verdict_line(outcome, (WORKLOAD.id, 0, 2, "run_s", Verdict("unknown", None)))
        == "unknown: performance.fake run_s A -> C: n/a"
    )
    assert (
        verdict_line(outcome, (WORKLOAD.id, 1, 0, "run_cpu_s", Verdict("improved", 0.0123, 0.001, 2.0)))
        == "improved: performance.fake run_cpu_s B -> A: x0.0123 (500ms -> 0ms), p=0.001, band x2"
    )
    clean = run_perf(
        PerfRequest(sides(tmp_path, "A", "B", "C", folder=False), (WORKLOAD,), "pkg"),
        WithCompile({"A": 0.00123, "B": 0.9, "C": 1.2345}),
    )
    assert outcome_lines(clean)[1:4] == [
        "  jax A: run_s 1.23ms, compile_s 999ms, temp_bytes 100, compiles 1 (5 samples)",
        "  jax B: run_s 900ms, compile_s 999ms, temp_bytes 100, compiles 1 (5 samples)",
        "  jax C: run_s 1.22s, compile_s 999ms, temp_bytes 100, compiles 1 (5 samples)",
    ]


class WithCompile(FakeSampler):
    """compile_s 0.999 s beside the fake's metrics."""

    def __call__(self, side, workload_ids, round_no):
        out = super().__call__(side, workload_ids, round_no)
        for found in out.values():
            found["metrics"] = {**found["metrics"], "compile_s": 0.999}
        return out


def test_the_noise_band_is_written_to_four_decimals(tmp_path):
    request = PerfRequest(sides(tmp_path, "A", folder=False), (WORKLOAD,), "pkg")
    found = outcome_json(run_perf(request, FakeSampler({"A": 1.0}, jitter=(1.0, 1.01234, 0.98765, 1.00617, 0.99391))))
    assert found["workloads"][0]["noise_band"]["run_s"] == 1.0368  # 1 + 3 * 0.01226


def test_the_json_of_a_session_in_full(tmp_path):
    found = outcome_json(session(tmp_path))
    (workload,) = found.pop("workloads")
    assert found == {"format": 1, "threshold": 1.5, "rounds_run": 5, "xla_flags": "--xla_x=1", "sides": ["A", "B", "C"]}
    releases = workload.pop("releases")
    assert workload == {
        "id": "performance.fake",
        "claim": "A fake.",
        "noise_band": {"compile_s": 1.0, "run_s": 1.09, "run_cpu_s": 1.0},
    }
    a, b, c = releases
    assert (a["release"], a["reused"], a["error"], a["against"], a["verdicts"]) == ("A", False, None, None, {})
    assert [s["run_s"] for s in a["samples"]] == [1.0, 1.01, 0.99, 0.98, 1.01]
    assert a["medians"] == {"compiles": 1.0, "temp_bytes": 100.0, "fusions": 3.0, "run_s": 1.0, "run_cpu_s": 0.0}
    assert (b["against"], b["medians"]["run_cpu_s"]) == ("A", 0.5)
    assert b["verdicts"] == {
        "compiles": {"verdict": "same", "ratio": 1.0, "p": None, "band": 1.0},
        "temp_bytes": {"verdict": "changed", "ratio": 1.5, "p": None, "band": 1.0},
        "fusions": {"verdict": "same", "ratio": 1.0, "p": None, "band": 1.0},
        "run_s": {"verdict": "regressed", "ratio": 2.0, "p": 0.00793651, "band": 1.5},
        "run_cpu_s": {"verdict": "regressed", "ratio": None, "p": 0.00793651, "band": 1.5},
    }
    assert c == {
        "release": "C",
        "reused": False,
        "error": "RuntimeError: boom",
        "samples": [],
        "medians": {},
        "against": "B",
        "verdicts": {},
    }


def test_the_json_says_which_samples_were_reused_from_storage(tmp_path):
    request = PerfRequest(sides(tmp_path, "A", "B"), (WORKLOAD,), "pkg")
    run_perf(request, FakeSampler({"A": 1.0, "B": 1.0}))
    again = outcome_json(run_perf(request, FakeSampler({"A": 1.0, "B": 1.0})))
    assert [r["reused"] for r in again["workloads"][0]["releases"]] == [True, True]
    assert again["workloads"][0]["noise_band"]["run_s"] == 1.09


def test_a_session_that_flags_nothing_ends_with_a_count_of_zero_and_no_colon(tmp_path):
    quiet = run_perf(
        PerfRequest(sides(tmp_path, "A", "B", folder=False), (WORKLOAD,), "pkg"), FakeSampler({"A": 1.0, "B": 1.0})
    )
    assert outcome_lines(quiet)[-1] == "0 verdict(s) other than same (threshold x1.25, 5 rounds)"
