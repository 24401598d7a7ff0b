"""The upgrade review (`upgrade --from A --to B`, issue 56): its tiers built from what the suite decided, a tier
with nothing, a tier missing a side, the counts in the headings, and its three outputs (the summary, the Markdown
for a pull request comment, the versioned JSON checked against its schema). No JAX needed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance.api.diff import Change as NameChange
from conformance.api.judge import Finding
from conformance.decide.diff import diff_sets, result_set
from conformance.decide.upgrade import UpgradeRequest, check_request
from conformance.decide.upgrade_render import MARKDOWN_LIMIT, review_json, review_markdown, summary_text
from conformance.decide.tiers import Tier
from conformance.decide.upgrade_tiers import (
    BREAKS,
    INFO,
    WARNS,
    Review,
    WorkloadJudged,
    behaviour_tiers,
    item,
    names_tier,
    perf_tier,
    review_counts,
)
from conformance.engine.matrix import RunSettings
from conformance.errors import ConformanceError
from conformance.perf import stats
from tests import synthetic_results as synth

SCHEMA = Path(__file__).resolve().parents[1] / "conformance" / "decide" / "schemas" / "upgrade-1.schema.json"
WHY = "The miss first appears in 0.9.0."


def _sides(extra_after=()):
    before = [
        synth.cell("demo.fixed", status="differs", observation={"ok": False}),
        synth.cell("demo.broken"),
        synth.cell("demo.same"),
        synth.cell("demo.retired"),
        synth.cell("demo.printed", observation={"text": "x"}, printed_expected={"text": "x"}),
        synth.cell("team/mod.own", status="conforms"),
    ]
    after = [
        synth.cell("demo.fixed"),
        synth.cell("demo.broken", status="differs", observation={"ok": False}),
        synth.cell("demo.same"),
        synth.cell("demo.printed", observation={"text": "y"}, printed_expected={"text": "x"}),
        synth.cell("team/mod.own", status="crash", observation=None),
        synth.cell("demo.added"),
        synth.cell("team/mod.new"),
        *extra_after,
    ]  # a team cell on one side only: no change, and not compared
    return (
        result_set([synth.files("0.8.0", "linux-x86_64", before)], "baseline"),
        result_set([synth.files("0.12.0.1", "linux-x86_64", after)], "candidate"),
    )


def _why(case: str, param: str) -> str:
    return WHY if case == "demo.fixed" else ""


def _team(case: str) -> bool:
    return case.startswith("team/")


def test_behaviours_list_each_change_with_its_why_and_the_team_cells_apart():
    suite, team = behaviour_tiers(diff_sets(*_sides()), _why, _team, team_asked=True)
    by_name = {found.subject: found for found in suite.findings}
    assert set(by_name) == {"demo.fixed", "demo.broken", "demo.printed"}  # same, retired and added are no change
    assert by_name["demo.fixed"].reason == "differs -> conforms" and by_name["demo.fixed"].detail == WHY
    assert by_name["demo.broken"].weight == BREAKS and "unexplained" in by_name["demo.broken"].detail
    assert by_name["demo.printed"].reason == "printed output changed" and by_name["demo.printed"].weight == INFO
    assert [i.subject for i in team.findings] == ["team/mod.own"] and team.findings[0].reason == "conforms -> crash"
    # both sides hold 5 cells in common (the team's one among them): counted apart, never twice
    assert (suite.judged, team.judged) == (4, 1)
    assert suite.heading == "Behaviours: 3 of 4 change" and team.heading == "Your cases: 1 of 1 change"
    assert any("3 cell(s) on one side only (a case added or retired" in note for note in suite.notes)
    assert not any("chapter block" in note for note in suite.notes)


def test_chapter_blocks_run_on_one_side_only_are_named_as_such_not_as_retired_cases():
    """The published run has the chapter on the default matrix only: from 0.8.0 to 0.12.0.1 its blocks are on one
    side, which is no case added or retired."""
    blocks = [synth.cell(f"chapter/ch000.b{n}") for n in range(4)]
    before, after = _sides(extra_after=blocks)
    suite, _ = behaviour_tiers(diff_sets(before, after), _why, _team, team_asked=False)
    assert "3 cell(s) on one side only (a case added or retired between the two)" in suite.notes
    assert "4 chapter block(s) on one side only (the chapter was run on one of the two releases)" in suite.notes
    only_blocks = result_set([synth.files("0.12.0.1", "linux-x86_64", [synth.cell("demo.same")] + blocks)], "c")
    alone = behaviour_tiers(diff_sets(only_blocks, only_blocks), _why, _team, team_asked=False)[0]
    assert alone.notes == ()


def test_a_behaviour_tier_missing_a_side_is_named_not_empty():
    suite, team = behaviour_tiers(None, _why, _team, team_asked=False, missing="jax 9.9.9 is not on the index")
    assert suite.missing == "jax 9.9.9 is not on the index" and suite.findings == ()
    assert suite.heading == "Behaviours: not judged (jax 9.9.9 is not on the index)"
    assert team.missing.startswith("not asked")  # no --cases: not asked, rather than "no change"
    assert review_counts([suite, team]) == {"behaviours": None, "cases": None}


def test_a_tier_with_nothing_is_judged_and_says_zero():
    before, after = _sides()
    suite, _ = behaviour_tiers(diff_sets(before, before), _why, _team, team_asked=False)
    assert suite.findings == () and not suite.missing and suite.heading == "Behaviours: 0 of 5 change"
    assert review_counts([suite]) == {"behaviours": 0}  # zero, not None: judged and nothing changed


def test_names_carry_their_replacement_and_the_places_that_use_them():
    changes = [
        NameChange("jax.tree_map", "removed", "0.10.0", "jax.tree_map was removed: use jax.tree.map"),
        NameChange("jax.new", "added", "0.9.0", ""),
        NameChange("jax.f", "signature", "0.11.0", "keyword x removed"),
    ]
    findings = [
        Finding("app/model.py", 6, 11, "jax.tree_map", "removed", "0.10.0", "removed", "jax.tree.map"),
        Finding("app/model.py", 10, 30, "jax.tree_leaves", "removed", "0.6.0", "removed before A", "jax.tree.leaves"),
    ]
    tier = names_tier(changes, findings, scanned=True)
    by_name = {found.subject: found for found in tier.findings}
    assert by_name["jax.tree_map"].where == ("app/model.py:6",) and "jax.tree.map" in by_name["jax.tree_map"].detail
    assert by_name["jax.tree_map"].weight == BREAKS and by_name["jax.f"].weight == WARNS
    assert "jax.new" not in by_name  # an added name is counted in the notes, not listed as a change to act on
    assert by_name["jax.tree_leaves"].detail.endswith("(use jax.tree.leaves)")  # found by the scan, not the diff
    assert tier.judged == 3 and names_tier(changes, names=5400).heading == "Public names: 2 of 5400 change"
    assert "1 name(s) added" in tier.notes and "2 use(s) in the scanned code" in tier.notes
    assert [i.subject for i in tier.top(2)] == ["jax.tree_map", "jax.tree_leaves"]  # what the code uses comes first
    assert names_tier(None, missing="no census of 0.8.0").heading == "Public names: not judged (no census of 0.8.0)"


def test_performance_judges_b_against_a_and_names_a_failing_side():
    slow = stats.timed_verdict([1.0, 1.01, 0.99, 1.0, 1.02], [1.4, 1.41, 1.39, 1.42, 1.4])
    grew = stats.exact_verdict([0], [4096])  # an exact metric that grows from 0: ratio None, still growth
    same = stats.exact_verdict([3], [3])
    judged = [
        WorkloadJudged("perf.dispatch_loop", {"run_s": slow, "fusions": same}, reused=(True, False)),
        WorkloadJudged("perf.buffer", {"temp_bytes": grew}),
        WorkloadJudged("perf.gone", {}, errors=("", "AttributeError: jax.old")),
    ]
    tier = perf_tier(judged, "0.8.0", "0.12.0.1")
    by_name = {found.subject: found for found in tier.findings}
    assert slow.verdict == "regressed" and by_name["perf.dispatch_loop run_s"].weight == BREAKS
    assert by_name["perf.dispatch_loop run_s"].detail.startswith("x1.4 ")
    assert (
        by_name["perf.buffer temp_bytes"].weight == BREAKS and "new from 0" in by_name["perf.buffer temp_bytes"].detail
    )
    assert by_name["perf.gone"].reason == "fails on 0.12.0.1" and by_name["perf.gone"].weight == BREAKS
    assert "perf.dispatch_loop fusions" not in by_name  # `same` is no change
    assert tier.heading == "Performance: 3 of 3 change"
    ok = WorkloadJudged("perf.ok", {"run_s": stats.timed_verdict([1.0] * 5, [1.0] * 5)})
    both = WorkloadJudged("perf.dispatch_loop", {"run_s": slow, "compiles": stats.exact_verdict([1], [2])})
    assert perf_tier([both, ok], "0.8.0", "0.12.0.1").heading == "Performance: 1 of 2 change (2 items)"
    assert tier.notes == ("samples of 1 workload(s) on 0.8.0 reused from storage (an earlier session)",)
    assert perf_tier(None, "0.8.0", "0.12.0.1", missing="not sampled: --perf-rounds 0").missing


def _review(items: int = 3) -> Review:
    many = tuple(item(f"jax.name{i}", "removed in 0.10.0", "x" * 200, ("a.py:1",), BREAKS) for i in range(items))
    return Review(
        "0.8.0",
        "0.12.0.1",
        (
            Tier("behaviours", "Behaviours", 197, (item("demo.b", "conforms -> differs", "why", (), BREAKS),)),
            Tier("names", "Public names", items + 10, many),
            Tier("performance", "Performance", 0, missing="not sampled: --perf-rounds 0"),
            Tier("cases", "Your cases", 0, missing="not asked: give --cases DIR"),
        ),
    )


def test_the_summary_counts_each_tier_and_shows_the_heaviest_items_first():
    review = _review(8)
    text = summary_text(review)
    assert text.splitlines()[0] == "upgrade jax 0.8.0 -> 0.12.0.1: behaviours 1, names 8, performance -, cases -"
    assert "Public names: 8 of 18 change" in text and "... and 3 more" in text
    assert "Performance: not judged (not sampled: --perf-rounds 0)" in text
    assert len(text.splitlines()) < 40  # one screen


def test_the_markdown_fits_a_pull_request_comment_however_many_items():
    text = review_markdown(_review(5000))
    assert len(text) <= MARKDOWN_LIMIT and "### Public names: 5000 of 5010 change" in text
    assert "more (the JSON lists them all)" in text
    assert review_markdown(_review(3)).count("jax.name") == 3


def test_the_json_follows_its_schema_and_counts_every_item():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    data = review_json(_review(50), "0.0.test")
    jsonschema.validate(data, schema)
    names = next(t for t in data["tiers"] if t["key"] == "names")
    assert names["count"] == len(names["items"]) == 50 and names["judged"] is True
    perf = next(t for t in data["tiers"] if t["key"] == "performance")
    assert perf["judged"] is False and perf["missing"].startswith("not sampled") and perf["items"] == []
    broken = dict(data, tiers=[dict(names, items=[{"name": "x"}])])
    with pytest.raises(jsonschema.ValidationError):  # the schema can fail
        jsonschema.validate(broken, schema)


@pytest.mark.parametrize(
    "before, after, rounds, scan, said",
    [
        ("x", "0.12.0.1", 5, (), "--from takes a JAX release"),
        ("0.8.0", "0.8.0", 5, (), "name the same release"),
        ("0.8.0", "0.12.0.1", -1, (), "--perf-rounds takes 0"),
        ("0.8.0", "0.12.0.1", 5, (Path("no/such/code"),), "--scan no/such/code: no such file"),
    ],
)
def test_bad_input_is_one_line_before_any_work(tmp_path, before, after, rounds, scan, said):
    request = UpgradeRequest(before, after, RunSettings(results=tmp_path / "results"), scan=scan, perf_rounds=rounds)
    with pytest.raises(ConformanceError, match=said):
        check_request(request)


def _outcome():
    from conformance.report.perfview import perf_view
    from tests.synthetic_report import _perf_sections

    return perf_view(_perf_sections()).outcome


def test_the_page_judges_every_pair_of_releases_so_a_drift_gets_a_verdict():
    from conformance.report.upgradeview import upgrade_data

    data = upgrade_data(["0.4.38"], _outcome())["perf"]
    drift = [v for v in data["pairs"].get("0-4", []) if v[:2] == ["perf.dispatch_loop", "run_s"]]
    assert drift and drift[0][2] == "regressed" and drift[0][3] > 1.25  # oldest to newest: judged
    steps = [
        v for i in range(4) for v in data["pairs"].get(f"{i}-{i + 1}", []) if v[:2] == ["perf.dispatch_loop", "run_s"]
    ]
    assert steps == []  # each step alone stays inside ×1.25: the neighbours' verdicts never flag the drift
    assert data["errors"] == {"perf.gone": ["0.12.0.1"]} and "medians" not in data


def test_with_too_many_pairs_the_page_gets_medians_and_bands_not_verdicts():
    from conformance.report.upgradeview import upgrade_data

    data = upgrade_data([], _outcome(), judged=0)["perf"]
    assert "pairs" not in data and data["threshold"] == stats.THRESHOLD
    first, last = data["medians"]["perf.dispatch_loop"][0], data["medians"]["perf.dispatch_loop"][-1]
    assert last[0]["run_s"] / first[0]["run_s"] == pytest.approx(1.08**4, rel=1e-3)
    assert 1 < first[1]["run_s"] < 1.25  # the band within one release, from its own samples
    assert data["medians"]["perf.gone"][-1] is None  # no samples on the release it failed on


def test_a_release_with_no_probe_cell_is_not_probed_so_the_page_never_says_nothing_changed(tmp_path):
    from conformance.chapter.grid import without_blocks
    from conformance.downstream.cells import without_tests
    from conformance.report.model import build_model
    from conformance.report.upgradeview import probed_releases, upgrade_data
    from conformance.results.load import load_results
    from tests import synthetic_downstream as sd

    suite = sd.demo_suite()  # on 0.12.0.1 only the suite's tests: a column, and no probe cell in it
    sd.write_files(tmp_path, {"0.8.0": [synth.cell("demo.case")] + suite["0.8.0"], "0.12.0.1": suite["0.12.0.1"]})
    files = without_blocks(without_tests(load_results(tmp_path)))  # what the page's table is built from
    model = build_model(files, [])
    assert {c.jax for c in model.columns} == {"0.8.0", "0.12.0.1"}
    probed = probed_releases(model)
    assert probed == {"linux-x86_64": ["0.8.0"]}
    assert upgrade_data(["0.8.0", "0.12.0.1"], None, probed=probed)["probed"] == probed
    assert upgrade_data([], None)["probed"] == {}  # nothing given: no release has behaviours on the page


def test_the_page_judges_every_ordered_pair_of_a_suites_releases_by_the_reviews_rules(tmp_path):
    from conformance.decide.upgrade_tiers import downstream_review_tier
    from conformance.downstream.judge import judge
    from conformance.report.downstreamview import downstream_view
    from conformance.report.upgradeview import downstream_pairs, upgrade_data
    from conformance.results.load import load_results
    from conformance.results.merge import merge_files
    from tests import synthetic_downstream as sd

    suite = sd.demo_suite()  # 0.7.2 uninstallable, 0.8.0 clean, regressions on 0.11.2 and 0.12.0.1
    sd.write_files(tmp_path, suite)
    view = downstream_view(merge_files(load_results(tmp_path)))
    data = downstream_pairs(view)
    (found,) = data["suites"]
    assert found["label"] == sd.LABEL and found["releases"] == ["0.7.2", "0.8.0", "0.11.2", "0.12.0.1"]
    assert len(found["pairs"]) == 4 * 3  # both directions: B older than A reads backwards (fixed, not regressed)
    tests = view.suites[0].tests
    for before, after in (("0.8.0", "0.12.0.1"), ("0.12.0.1", "0.8.0"), ("0.7.2", "0.11.2")):
        tier = downstream_review_tier([(sd.LABEL, before, after, judge(sd.LABEL, tests[before], tests[after]))])
        items, notes = found["pairs"][f"{before}>{after}"]
        assert items == [[f.weight, f.subject, f.reason, f.detail] for f in tier.findings] and items
        assert notes == list(tier.notes)
    regressed = [i for i in found["pairs"]["0.8.0>0.12.0.1"][0] if "regressed" in i[2]]
    assert regressed and not [i for i in found["pairs"]["0.12.0.1>0.8.0"][0] if "regressed" in i[2]]
    assert "0.7.2" in upgrade_data([], None, downstream=data)["releases"]  # the selects offer a suite's releases
    assert downstream_pairs(None) is None and upgrade_data([], None)["downstream"] is None


def test_the_page_s_downstream_tier_leaves_a_build_s_column_out(tmp_path):
    """A build's column (`0.8.0 (python-…)`) is no release the page's selects offer: no pair of it is judged and the
    suite's releases do not name it (else the selects would offer a release no other tier knows)."""
    from types import SimpleNamespace

    from conformance.report.downstreamview import downstream_view
    from conformance.report.upgradeview import downstream_pairs
    from conformance.results.load import load_results
    from conformance.results.merge import merge_files
    from tests import synthetic_downstream as sd

    sd.write_files(tmp_path, sd.demo_suite())
    (suite,) = downstream_view(merge_files(load_results(tmp_path))).suites
    tests = {**suite.tests, "0.8.0 (python-3.12)": suite.tests["0.8.0"]}
    (found,) = downstream_pairs(SimpleNamespace(suites=[SimpleNamespace(label=suite.label, tests=tests)]))["suites"]
    assert found["releases"] == ["0.7.2", "0.8.0", "0.11.2", "0.12.0.1"]
    assert not [pair for pair in found["pairs"] if "(" in pair]
