"""The downstream judge, signatures, event reading, budgets, shards, manifests and acknowledgements (pure parts)."""

from __future__ import annotations

import datetime
import json

import pytest

from conformance.downstream.acks import parse_acks
from conformance.downstream.budget import plan_budget
from conformance.downstream.judge import Ack, Judged, judge
from conformance.downstream.lock import swapped
from conformance.downstream.manifest import parse_manifest, read_suite
from conformance.downstream.outcomes import UNINSTALLABLE_ID, read_events, rerun_candidates, with_rerun
from conformance.downstream.shards import all_shards, shard_for, shard_index
from conformance.downstream.signature import masked, signature
from conformance.errors import ConformanceError

SP = "/env/lib/python3.11/site-packages"
LIBS = {"chex": ("chex",), "optax": ("optax",)}
REPLICATED = {
    "type": "AttributeError",
    "message": "jax.device_put_replicated is deprecated; use jax.device_put",
    "frames": [
        [f"{SP}/chex/_src/asserts_test.py", 1332, "test_sharded"],
        [f"{SP}/jax/_src/deprecations.py", 54, "getattr"],
    ],
}
PMAP = {
    "type": "AttributeError",
    "message": "module 'jax.sharding' has no attribute 'PmapSharding'",
    "frames": [
        [f"{SP}/chex/_src/asserts_test.py", 10, "test_on_device"],
        [f"{SP}/chex/_src/asserts.py", 1207, "assert_tree_is_on_device"],
        [f"{SP}/chex/_src/asserts.py", 1061, "_check_sharding"],
    ],
}


# -- signatures


def test_the_innermost_library_frame_that_is_not_test_code_names_the_cause():
    sig = signature(PMAP, [SP], LIBS)
    assert sig.frame == "chex/_src/asserts.py:_check_sharding" and sig.owner == "chex"
    assert (
        sig.text == "AttributeError: module 'jax.sharding' has no attribute 'PmapSharding' @ "
        "chex/_src/asserts.py:_check_sharding"
    )


def test_a_failure_raised_inside_jax_from_test_code_is_filed_at_jax_frame():
    one = signature(REPLICATED, [SP], LIBS)
    other = signature(
        {
            **REPLICATED,
            "frames": [
                [f"{SP}/chex/_src/chexify_test.py", 404, "run_suite"],
                [f"{SP}/jax/_src/deprecations.py", 54, "getattr"],
            ],
        },
        [SP],
        LIBS,
    )
    assert one.frame == "jax/_src/deprecations.py:getattr" and one.text == other.text and one.owner == ""


def test_a_failure_in_test_code_alone_is_filed_at_the_tests_frame():
    exc = {"type": "AssertionError", "message": "assert 1 == 2", "frames": [[f"{SP}/chex/_src/a_test.py", 3, "test_a"]]}
    assert signature(exc, [SP], LIBS).frame == "chex/_src/a_test.py:test_a"


def test_a_frame_in_another_suites_library_is_filed_under_that_library():
    exc = {
        "type": "TypeError",
        "message": "bad",
        "frames": [
            [f"{SP}/optax/_src/alias_test.py", 1, "test_x"],
            [f"{SP}/optax/_src/alias.py", 2, "adam"],
            [f"{SP}/chex/_src/asserts.py", 3, "assert_x"],
        ],
    }
    assert signature(exc, [SP], LIBS).owner == "chex"


def test_numbers_and_addresses_are_masked_and_the_message_is_one_line():
    assert masked("shape (3, 4) at 0x7f00ab12 differs\nmore") == "shape (N, N) at 0x? differs"
    assert masked("float32[8]") == "float32[N]"
    assert (
        masked("cannot import name 'x' from 'jax' (/root/env-0.6.0/site-packages/jax/__init__.py)")
        == "cannot import name 'x' from 'jax' (.../__init__.py)"
    )
    assert masked("See https://docs.jax.dev/en/latest/x.html") == "See https://docs.jax.dev/en/latest/x.html"


def test_a_missing_exception_gives_an_empty_signature_not_a_crash():
    assert signature(None, [SP], LIBS).type == "?"


# -- reading a run


def _events(*events):
    return "\n".join(json.dumps(e) for e in events)


def test_a_dead_pytest_makes_the_running_test_a_crash_and_the_unreached_ones_crash_unreached():
    text = (
        _events(
            {"event": "collected", "nodeids": ["a::t1", "a::t2", "a::t3"]},
            {"event": "start", "nodeid": "a::t1"},
            {"event": "test", "nodeid": "a::t1", "outcome": "passed"},
            {"event": "start", "nodeid": "a::t2"},
        )
        + '\n{"event": "te'
    )
    run = read_events(text, exit_code=-11)
    assert run.outcomes["a::t1"].status == "passed"
    assert run.outcomes["a::t2"].status == "crash" and run.outcomes["a::t2"].reached
    assert run.outcomes["a::t3"].status == "crash" and not run.outcomes["a::t3"].reached


def test_the_whole_run_bound_makes_the_running_test_a_timeout():
    text = _events({"event": "collected", "nodeids": ["a::t1"]}, {"event": "start", "nodeid": "a::t1"})
    assert read_events(text, killed=True).outcomes["a::t1"].status == "timeout"


def test_a_finished_run_makes_no_crash_and_keeps_collection_errors_per_module():
    text = _events(
        {"event": "collected", "nodeids": []},
        {"event": "collect_error", "nodeid": "tests/test_b.py", "exception": {"type": "ImportError"}},
        {"event": "finished"},
    )
    run = read_events(text)
    assert run.finished and run.outcomes["tests/test_b.py"].status == "collection_error"


def test_a_failure_that_passes_on_its_rerun_is_flaky_and_one_that_fails_again_keeps_its_status():
    run = read_events(
        _events(
            *[
                {"event": "test", "nodeid": n, "outcome": o}
                for n, o in (("a::x", "failed"), ("a::y", "failed"), ("a::z", "timeout"), ("a::w", "error"))
            ],
            {"event": "finished"},
        )
    )
    assert rerun_candidates(run.outcomes) == ["a::w", "a::x", "a::y"]  # a timeout is never retried
    again = read_events(
        _events(
            {"event": "test", "nodeid": "a::x", "outcome": "passed"},
            {"event": "test", "nodeid": "a::y", "outcome": "failed"},
            {"event": "test", "nodeid": "a::w", "outcome": "passed"},
        )
    )
    merged = with_rerun(run.outcomes, again.outcomes)
    assert merged["a::x"].status == "flaky" and merged["a::w"].status == "flaky"
    assert merged["a::y"].status == "failed" and merged["a::y"].rerun == "failed"
    assert merged["a::z"].status == "timeout"


# -- judging


def J(status, sig="", **kw):
    return Judged(status, sig, **kw)


def test_classes_of_a_judgement():
    base = {
        "r": J("passed"),
        "f": J("failed", "E1"),
        "s": J("failed", "E1"),
        "c": J("failed", "E1"),
        "k": J("passed"),
        "t": J("passed"),
        "u": J("passed"),
        "v": J("passed"),
        "x": J("xfail"),
    }
    cand = {
        "r": J("failed", "E2"),
        "f": J("passed"),
        "s": J("failed", "E1"),
        "c": J("error", "E3"),
        "k": J("flaky", "E4"),
        "t": J("timeout"),
        "u": J("crash", reached=False),
        "n": J("passed"),
        "x": J("crash", "SIGSEGV"),
    }
    kinds = {c.node: c.kind for c in judge("s", base, cand).changes}
    assert kinds == {
        "r": "regressed",
        "f": "fixed",
        "s": "broken_same",
        "c": "broken_changed",
        "k": "flaky",
        "t": "spurious",
        "u": "spurious",
        "n": "appeared",
        "v": "vanished",
        "x": "regressed",
    }


def test_only_unacknowledged_regressions_gate_and_flaky_never_does():
    base = {"a": J("passed"), "b": J("passed"), "c": J("passed")}
    cand = {"a": J("failed", "AttributeError: x @ f"), "b": J("failed", "TypeError: y @ g"), "c": J("flaky", "E")}
    judged = judge("chex==1", base, cand)
    assert sorted(c.node for c in judged.gating) == ["a", "b"]
    acked = judge("chex==1", base, cand, [Ack("chex==*", signature="AttributeError: *")])
    assert [c.node for c in acked.gating] == ["b"]
    assert [c.node for c in judge("chex==1", base, cand, [Ack("optax==*", node="*")]).gating] == ["a", "b"]
    assert judge("chex==1", base, {**cand, "a": J("passed"), "b": J("passed")}).gating == []


def test_a_manifests_known_flaky_node_never_gates():
    judged = judge("s", {"a::t": J("passed")}, {"a::t": J("failed", "E")}, known_flaky=["a::*"])
    assert judged.gating == [] and judged.of("flaky")[0].node == "a::t"


def test_regressions_are_grouped_by_signature_with_counts_and_three_examples():
    base = {f"t{i}": J("passed") for i in range(6)}
    cand = {**{f"t{i}": J("failed", "A") for i in range(4)}, "t4": J("failed", "B"), "t5": J("failed", "B")}
    causes = judge("s", base, cand).causes()
    assert [(c.signature, len(c.nodes)) for c in causes] == [("A", 4), ("B", 2)]
    assert causes[0].line().startswith("4 tests: A; e.g. t0, t1, t2, ...")


def test_a_module_that_stops_collecting_regresses_once_and_its_tests_do_not_vanish():
    base = {"m.py::a": J("passed"), "m.py::b": J("passed"), "n.py::c": J("passed")}
    cand = {"m.py": J("collection_error", "ImportError: x @ m.py"), "n.py::c": J("passed")}
    changes = judge("s", base, cand).changes
    assert [(c.node, c.kind, c.after) for c in changes] == [("m.py", "regressed", "collection_error")]


def test_an_uninstallable_candidate_gates_every_baseline_test_under_the_resolvers_reason():
    base = {"a": J("passed"), "b": J("failed", "E")}
    cand = {UNINSTALLABLE_ID: J("uninstallable", "uninstallable: no solution")}
    judged = judge("s", base, cand)
    assert [(c.node, c.kind, c.signature) for c in judged.gating] == [
        ("a", "uninstallable", "uninstallable: no solution"),
        ("b", "uninstallable", "uninstallable: no solution"),
    ]


def test_new_deprecation_warnings_are_the_early_signal():
    base = {"a": J("passed", warnings=("DeprecationWarning: old @ chex/x.py",))}
    cand = {"a": J("passed", warnings=("DeprecationWarning: old @ chex/x.py", "DeprecationWarning: new @ chex/y.py"))}
    assert judge("s", base, cand).new_warnings == ["DeprecationWarning: new @ chex/y.py"]


# -- budgets


def test_a_budget_keeps_one_parametrisation_per_function_first_and_drops_the_slow_tail():
    recorded = {"a.py::f[1]": 1.0, "a.py::f[2]": 1.0, "a.py::g": 2.0, "a.py::slow": 50.0, "a.py::h[x]": 0.5}
    planned = plan_budget(list(recorded), recorded, 4.0)
    assert set(planned.kept) == {"a.py::f[1]", "a.py::g", "a.py::h[x]"}
    assert planned.left_out[0] == "a.py::slow" and "a.py::f[2]" in planned.left_out
    assert "left out 2" in planned.line(4.0)
    assert plan_budget(list(recorded), recorded, 1000).left_out == ()
    assert plan_budget(list(recorded), recorded, 4.0, multiplier=2).kept == ("a.py::f[1]", "a.py::h[x]")


# -- shards


def test_kubernetes_and_slurm_indexes_map_to_suite_release_shards():
    suites, releases = ["chex==0.1.90", "optax==0.2.8"], ["0.8.0", "0.9.0", "0.10.0"]
    assert [(s.suite, s.release) for s in all_shards(suites, releases)][3] == ("optax==0.2.8", "0.8.0")
    assert shard_index({"JOB_COMPLETION_INDEX": "4"}) == 4
    assert shard_index({"SLURM_ARRAY_TASK_ID": "5"}) == 5
    assert shard_index({}) is None
    assert shard_for(suites, releases, 5).release == "0.10.0"
    with pytest.raises(ConformanceError, match="outside the 6 shards"):
        shard_for(suites, releases, 6)
    with pytest.raises(ConformanceError, match="not a task index"):
        shard_index({"SLURM_ARRAY_TASK_ID": "x"})


# -- manifests, locks, acknowledgements


def test_manifests_are_checked_key_by_key():
    manifest = parse_manifest('tests = "pyargs"\ndevice_count = 8\n[[flaky]]\nnode = "a::*"\nreason = "r"\n', "m")
    assert manifest.device_count == 8 and manifest.flaky == (("a::*", "r"),)
    for bad, said in (
        ('tets = "x"', "unknown key"),
        ('tests = "wheel"', "`tests`"),
        ("device_count = 0", "positive"),
        ('[[deselect]]\nnode = "a"', "needs node"),
    ):
        with pytest.raises(ConformanceError, match=said):
            parse_manifest(bad, "m")


def test_a_suite_is_a_release_or_a_folder(tmp_path):
    chex = read_suite("chex==0.1.90")
    assert chex.kind == "index" and chex.ident == "chex_0_1_90" and chex.manifest.packages == ("chex",)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    assert read_suite(str(tmp_path)).manifest.packages == ("lib",)
    with pytest.raises(ConformanceError, match="neither a library release"):
        read_suite(str(tmp_path / "missing"))


def test_the_lock_swaps_only_jax_and_jaxlib():
    text = "jax==0.8.0\n    # via chex\njaxlib==0.8.0\njaxtyping==0.2\nml-dtypes==0.5\n"
    assert swapped(text, "0.10.0", "") == (
        "jax==0.10.0\n    # via chex\njaxlib==0.10.0\njaxtyping==0.2\nml-dtypes==0.5\n"
    )


def test_downstream_entries_reuse_the_expectations_checks_and_expire():
    today = datetime.date(2027, 1, 1)
    text = (
        '[[downstream]]\nsignature = "AttributeError: *"\nreason = "known"\n'
        '[[downstream]]\nnode = "a::*"\nreason = "old"\nexpires = 2026-12-01\n'
        '[[downstream]]\nnode = "b::*"\nreason = "later"\njax = ">=0.11"\n'
    )
    found = parse_acks(text, "e.toml", today, "0.10.0")
    assert [a.signature for a in found.acks] == ["AttributeError: *"] and len(found.expired) == 1
    for bad, said in (
        ('[[downstream]]\nreason = "r"\n', "needs signature"),
        ('[[downstream]]\nnode = "a"\n', "needs reason"),
        ('[[downstream]]\nnode = "a"\nreason = "r"\nbug = "nope"\n', "not a link"),
        ('[[downstream]]\nnode = "a"\nreason = "r"\nsuite = 3\n', "should be a string"),
    ):
        with pytest.raises(ConformanceError, match=said):
            parse_acks(bad, "e.toml", today, "0.10.0")
