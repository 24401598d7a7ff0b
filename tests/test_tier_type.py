"""One tier type for the one gate and the upgrade review (`decide.tiers.Tier`, `Finding`): the review builds its tiers
from it (no type of its own), counts them by its rules, and each command's outputs stay what they were before the two
types became one (the expected text, Markdown and JSON below were written by the code before, from these inputs)."""

from __future__ import annotations

import json

from conformance.api.diff import Change
from conformance.api.judge import Finding as Use
from conformance.decide import upgrade_tiers
from conformance.decide.tiers import BREAKS, NOTED, Finding, Tier, Verdict
from conformance.decide.upgrade_render import review_json, review_markdown, summary_text
from conformance.decide.upgrade_tiers import Review, WorkloadJudged, item, names_tier, not_judged, perf_tier
from conformance.decide.verdict_view import verdict_json, verdict_text
from conformance.perf import stats


def _review() -> Review:
    slow = stats.timed_verdict([1.0, 1.01, 0.99, 1.0, 1.02], [1.4, 1.41, 1.39, 1.42, 1.4])
    perf = perf_tier(
        [
            WorkloadJudged("w.a", {"run_s": slow, "compiles": stats.exact_verdict([1], [2])}),
            WorkloadJudged("w.b", {}, errors=("", "E: x")),
        ],
        "0.8.0",
        "0.9.0",
    )
    names = names_tier(
        [Change("jax.tree_map", "removed", "0.9.0", "use jax.tree.map")],
        [Use("a.py", 3, 1, "jax.tree_map", "removed", "0.9.0", "removed", "jax.tree.map")],
        scanned=True,
        names=10,
    )
    return Review("0.8.0", "0.9.0", (names, perf))


def test_the_review_has_no_tier_type_of_its_own():
    own = [
        name
        for name, value in vars(upgrade_tiers).items()
        if isinstance(value, type) and value.__module__ == upgrade_tiers.__name__
    ]
    assert sorted(own) == ["Review", "WorkloadJudged"]  # a second Tier or Item here is a second copy of the rules
    review = _review()
    assert all(type(t) is Tier and all(type(f) is Finding for f in t.findings) for t in review.tiers)
    assert type(not_judged("cases", "Your cases", "not asked")) is Tier


def test_a_review_finding_is_noted_so_a_review_tier_never_fails_a_gate():
    found = item("jax.x", "removed in 0.9.0", "use y", ["a.py:1"], BREAKS)
    assert (found.state, found.reason, found.where, found.weight) == (NOTED, "removed in 0.9.0", ("a.py:1",), BREAKS)
    perf = _review().tiers[1]
    assert not perf.failed and perf.count(NOTED) == len(perf.findings) == 3
    data = verdict_json(Verdict("gate", (perf,)))["tiers"][0]  # the same tier, counted by the gate's rules
    review = review_json(_review(), "v")["tiers"][1]
    assert (data["judged"], data["counts"]["noted"]) == (review["checked"], review["count"]) == (2, 3)
    assert review["changed"] == perf.changing == 2  # two workloads change, in three findings


def test_the_upgrade_outputs_are_what_they_were():
    review = _review()
    assert summary_text(review) == (
        "upgrade jax 0.8.0 -> 0.9.0: names 1, performance 3\n\nPublic names: 1 of 10 change\n  jax.tree_map: removed "
        "in 0.9.0 - use jax.tree.map [used at a.py:3]\n  note: 1 use(s) in the scanned code\n\nPerformance: 2 of 2 "
        "change (3 items)\n  w.a run_s: regressed - x1.4 (median 0.9.0/0.8.0, p=0.0079, noise band x1.25)\n  w.a "
        "compiles: changed - x2 (median 0.9.0/0.8.0, noise band x1.00)\n  w.b: fails on 0.9.0 - E: x"
    )
    assert review_markdown(review) == (
        "## Upgrading JAX 0.8.0 → 0.9.0\n\nPublic names: 1 · Performance: 3\n\n### Public names: 1 of 10 change\n\n"
        "- **jax.tree\\_map**: removed in 0.9.0 - use jax.tree.map (used at `a.py:3`)\n- _note_: 1 use(s) in the "
        "scanned code\n\n### Performance: 2 of 2 change (3 items)\n\n- **w.a run\\_s**: regressed - x1.4 (median "
        "0.9.0/0.8.0, p=0.0079, noise band x1.25)\n- **w.a compiles**: changed - x2 (median 0.9.0/0.8.0, noise band "
        "x1.00)\n- **w.b**: fails on 0.9.0 - E: x\n"
    )
    assert json.dumps(review_json(review, "v"), sort_keys=True) == (
        '{"format": "jax-conformance-upgrade", "from": "0.8.0", "notes": [], "suite": "v", "tiers": [{"changed": 1, '
        '"checked": 10, "count": 1, "items": [{"change": "removed in 0.9.0", "detail": "use jax.tree.map", "name": '
        '"jax.tree_map", "weight": "breaks", "where": ["a.py:3"]}], "judged": true, "key": "names", "missing": null, '
        '"notes": ["1 use(s) in the scanned code"], "title": "Public names"}, {"changed": 2, "checked": 2, "count": 3, '
        '"items": [{"change": "regressed", "detail": "x1.4 (median 0.9.0/0.8.0, p=0.0079, noise band x1.25)", "name": '
        '"w.a run_s", "weight": "breaks", "where": []}, {"change": "changed", "detail": "x2 (median 0.9.0/0.8.0, '
        'noise band x1.00)", "name": "w.a compiles", "weight": "breaks", "where": []}, {"change": "fails on 0.9.0", '
        '"detail": "E: x", "name": "w.b", "weight": "breaks", "where": []}], "judged": true, "key": "performance", '
        '"missing": null, "notes": [], "title": "Performance"}], "to": "0.9.0", "version": 1}'
    )


def test_the_gate_outputs_are_what_they_were():
    tier = Tier(
        "workloads",
        "jax 0.8.0 -> 0.9.0",
        2,
        (
            Finding("w.a run_s", "regressed", "regressed", "x1.4"),
            Finding("w.a compiles", "noted", "changed", "x2"),
            Finding("w.b", "acknowledged", "known"),
            Finding("w.c", "unjudged", "nothing to compare with"),
        ),
        ("a problem",),
    )
    verdict = Verdict("gate jax 0.8.0 -> 0.9.0", (tier,))
    assert verdict_text(verdict) == (
        "workloads (jax 0.8.0 -> 0.9.0): 2 judged, 1 regressed, 1 acknowledged, 1 unjudged, 1 noted: FAIL\n  problem: "
        "a problem\n  REGRESSION: w.a run_s: regressed -- x1.4\n  acknowledged: w.b: known\n  NOT JUDGED: w.c: nothing "
        "to compare with\n  noted: w.a compiles: changed -- x2\ngate: FAIL: workloads failed (exit 1)"
    )
    assert json.dumps(verdict_json(verdict), sort_keys=True) == (
        '{"exit_code": 1, "expired": [], "expiring": [], "format": 1, "kind": "gate", "passed": false, "skipped": [], '
        '"tiers": [{"counts": {"acknowledged": 1, "noted": 1, "regressed": 1, "unjudged": 1}, "findings": [{"detail": '
        '"x1.4", "reason": "regressed", "state": "regressed", "subject": "w.a run_s"}, {"detail": "x2", "reason": '
        '"changed", "state": "noted", "subject": "w.a compiles"}, {"detail": "", "reason": "known", "state": '
        '"acknowledged", "subject": "w.b"}, {"detail": "", "reason": "nothing to compare with", "state": "unjudged", '
        '"subject": "w.c"}], "judged": 2, "name": "workloads", "passed": false, "problems": ["a problem"], "title": '
        '"jax 0.8.0 -> 0.9.0"}], "title": "gate jax 0.8.0 -> 0.9.0"}'
    )


def test_the_review_weighs_as_breaking_exactly_what_the_gate_refuses():
    """One rule for a workload's step (`perf.decisions.upward`), read by both: from the same samples, the metrics the
    gate finds `regressed` are the review's breaking ones (grown from 0, grown, slower; not shrunk, faster, unknown)."""
    from conformance.decide.tiers import REGRESSED
    from conformance.perf.decisions import workload_findings
    from conformance.perf.render import verdict_line
    from tests.test_perf_decisions import FAST, SORT, outcome, same_runs

    samples = {
        ("performance.sort_big", 0): same_runs(temp_bytes=0, output_bytes=64, fusions=3),
        ("performance.sort_big", 1): same_runs(temp_bytes=4096, output_bytes=32, fusions=5),
        ("performance.fast", 0): same_runs(value=3.0, compiles=2),
        ("performance.fast", 1): same_runs(compiles=1),
    }
    session = outcome(samples, workloads=(FAST, SORT))
    gate = {f.subject for f in workload_findings(session, [], verdict_line) if f.state == REGRESSED}
    review = perf_tier([WorkloadJudged(w.id, session.verdicts(w.id, 0, 1)) for w in (FAST, SORT)], "0.8.0", "0.9.0")
    assert (
        gate
        == {f.subject for f in review.findings if f.weight == BREAKS}
        == {"performance.sort_big temp_bytes", "performance.sort_big fusions"}
    )
    assert {f.subject for f in review.findings} > gate  # the shrunk and the faster ones are listed, not breaking
