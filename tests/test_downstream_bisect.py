"""`bisect NODEID --downstream SUITE`: the decisions of one test's bisect, with the oracle's run and storage given as
functions (no environment built): the half chosen, a release skipped (uninstallable, crashed, not run), the ends
refused in one line (the same release, a node id the good end does not report), answers from storage first."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.cli_parser import build_parser
from conformance.decide.bisect_session import BisectRequest, write_bisect_files
from conformance.downstream.bisecting import (
    NodeOracle,
    absent_cell,
    bisect_test,
    like_test,
    node_verdict,
    pick_cell,
    stored_answer,
)
from conformance.decide.bisect import Untestable
from conformance.downstream.cells import to_cell
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.errors import ConformanceError

NODE = "tests/test_tree.py::test_doubled"
RELEASES = ["0.4.38", "0.5.0", "0.5.3", "0.6.0", "0.6.2", "0.7.0", "0.8.0", "0.9.0"]


def cell(status: str, node: str = NODE, message: str = "", key: str = "k", reason: str = "", rerun: str = ""):
    exception = (
        {"type": "AttributeError", "message": message, "frames": [[node.split("::")[0], 3, "t"]]} if message else None
    )
    outcome = NodeOutcome(node, status, exception=exception, reason=reason, rerun=rerun)
    return to_cell("team", "team", outcome, key, [], {}, ())


def builder(releases=RELEASES):
    return SimpleNamespace(index=SimpleNamespace(releases=lambda name: list(releases)))


def oracle(answers: dict, stored: dict | None = None, broken: dict | None = None) -> NodeOracle:
    """Each release's run gives `answers[v]` (a list of cells); `broken[v]` raises; `stored[v]` answers first."""

    def run(version):
        if version in (broken or {}):
            raise ConformanceError(broken[version])
        run.asked.append(version)
        return answers[version]

    run.asked = []
    found = NodeOracle(NODE, lambda v: (stored or {}).get(v), run, lambda v: absent_cell("team", "team", NODE))
    found.asked = run.asked
    return found


def request(good="0.4.38", bad="0.9.0", **more):
    return BisectRequest(NODE, good, bad, downstream="folder", **more)


def test_the_half_is_chosen_from_the_start_and_the_first_unlike_release_found():
    fails = {"0.7.0", "0.8.0", "0.9.0"}
    answers = {
        v: [cell("failed", message="module 'jax' has no attribute 'tree_map'") if v in fails else cell("passed")]
        for v in RELEASES
    }
    found = oracle(answers)
    report = bisect_test(request(), builder(), oracle=found)
    assert (report.outcome.last_good, report.outcome.first_bad) == ("0.6.2", "0.7.0")
    assert report.exit_code == 0
    assert found.asked[:2] == ["0.4.38", "0.9.0"] and len(found.asked) < len(RELEASES)
    assert report.ran == [v for v in RELEASES if v in found.asked]


def test_the_other_direction_searches_from_the_good_end_given():
    fixed = {"0.4.38", "0.5.0"}  # failing on the old ones: --good is the newer end
    answers = {v: [cell("failed", message="boom") if v in fixed else cell("passed")] for v in RELEASES}
    report = bisect_test(request(good="0.9.0", bad="0.4.38"), builder(), oracle=oracle(answers))
    assert (report.outcome.last_good, report.outcome.first_bad) == ("0.5.3", "0.5.0")


def test_an_uninstallable_or_unrunnable_midpoint_is_skipped_and_named():
    answers = {v: [cell("failed", message="x") if v >= "0.6.0" and v != "0.6.2" else cell("passed")] for v in RELEASES}
    answers["0.6.0"] = [cell("uninstallable", node=UNINSTALLABLE_ID, reason="the lock does not install: no wheel")]
    found = oracle(answers, broken={"0.6.2": "no interpreter here can install it"})
    report = bisect_test(request(), builder(), oracle=found)
    skipped = {s.version: s.why for s in report.outcome.skipped}
    assert skipped["0.6.0"].startswith("uninstallable: the lock does not install")
    assert "no interpreter" in skipped["0.6.2"]
    assert report.outcome.last_good == "0.5.3"
    assert report.outcome.first_bad == "0.7.0"  # 0.6.0 and 0.6.2 untested between them
    assert report.outcome.untested_between == ["0.6.0", "0.6.2"]


def test_a_crash_or_timeout_is_no_verdict_on_the_test():
    assert isinstance(node_verdict(cell("crash", reason="pytest died"), "0.6.0"), Untestable)
    assert isinstance(node_verdict(cell("timeout"), "0.6.0"), Untestable)
    assert not isinstance(node_verdict(cell("failed", message="x"), "0.6.0"), Untestable)


def test_an_end_that_cannot_be_tested_is_one_line():
    answers = {v: [cell("passed")] for v in RELEASES}
    answers["0.9.0"] = [cell("crash", reason="Fatal Python error")]
    with pytest.raises(ConformanceError, match="end, jax 0.9.0, cannot be tested here: crash: Fatal Python error"):
        bisect_test(request(), builder(), oracle=oracle(answers))


def test_the_same_release_at_both_ends_is_refused_before_anything_runs():
    found = oracle({})
    with pytest.raises(ConformanceError, match="same release"):
        bisect_test(request(good="0.6.0", bad="0.6.0"), builder(), oracle=found)
    assert found.asked == []


def test_a_node_id_the_good_end_does_not_report_is_refused():
    answers = {v: [cell("passed", node="tests/test_tree.py::test_other")] for v in RELEASES}
    with pytest.raises(ConformanceError, match="not a test of the suite on jax 0.4.38"):
        bisect_test(request(), builder(), oracle=oracle(answers))


def test_a_test_gone_on_the_bad_side_is_found_where_it_went():
    answers = {v: [cell("passed")] if v < "0.8.0" else [] for v in RELEASES}
    report = bisect_test(request(), builder(), oracle=oracle(answers))
    assert report.outcome.first_bad == "0.8.0"
    assert report.outcome.first_bad_result.observation["test"] == "absent"


def test_ends_that_agree_are_said_and_exit_1():
    answers = {v: [cell("passed")] for v in RELEASES}
    report = bisect_test(request(), builder(), oracle=oracle(answers))
    assert report.outcome.ends_agree and report.exit_code == 1


def test_a_stored_answer_is_used_first():
    answers = {v: [cell("passed")] for v in RELEASES}
    answers["0.9.0"] = [cell("failed", message="x")]
    found = oracle(answers, stored={"0.4.38": cell("passed")})
    report = bisect_test(request(), builder(), oracle=found)
    assert "0.4.38" not in found.asked and report.from_storage == ["0.4.38"]
    assert report.outcome.first_bad == "0.9.0"


def test_like_the_start_reads_the_word_and_the_signature():
    passed, flaky = cell("passed"), cell("flaky", rerun="passed")
    assert like_test(passed, flaky)  # passed when rerun: never a change
    assert not like_test(passed, cell("failed", message="x"))
    assert not like_test(passed, cell("skipped"))
    one, same, other = (cell("failed", message=m) for m in ("no tree_map", "no tree_map", "no PmapSharding"))
    assert like_test(one, same)
    assert not like_test(one, other)  # failing for another reason is a change


def test_the_cell_that_answers_for_a_node():
    module = NODE.split("::")[0]
    own, collection = cell("failed", message="x"), cell("collection_error", node=module, message="import")
    install = cell("uninstallable", node=UNINSTALLABLE_ID, reason="r")
    assert pick_cell([collection, own], NODE) is own
    assert pick_cell([collection, cell("passed", node="tests/t.py::x")], NODE) is collection
    assert pick_cell([cell("passed", node=module)], NODE) is None  # a passing module entry is no collection error
    assert pick_cell([install], NODE) is install
    assert pick_cell([], NODE) is None


def test_only_a_stored_cell_whose_key_holds_answers():
    stored = [cell("failed", message="x", key="old")]
    assert stored_answer(stored, NODE, ("new-node", "new-whole")) is None
    assert stored_answer(stored, NODE, ("new-node", "old")) is stored[0]


def test_the_case_bisect_options_are_refused_with_a_downstream_test():
    with pytest.raises(ConformanceError, match="--find-fix"):
        bisect_test(BisectRequest(NODE, "0.4.38", "0.9.0", find_fix=True, downstream="x"), builder(), oracle=oracle({}))


def test_the_grammar_and_no_bug_report_for_a_test(tmp_path: Path):
    args = build_parser().parse_args(
        ["bisect", NODE, "--downstream", "chex==0.1.90", "--good", "0.8.0", "--bad", "0.10.0", "--manifest", "m.toml"]
    )
    assert (args.cell, args.downstream, args.manifest) == (NODE, "chex==0.1.90", Path("m.toml"))
    answers = {v: [cell("passed") if v < "0.7.0" else cell("failed", message="x")] for v in RELEASES}
    report = bisect_test(request(results=tmp_path), builder(), oracle=oracle(answers))
    said = write_bisect_files(report, tmp_path / "issue.md", tmp_path / "v.json")
    assert not (tmp_path / "issue.md").exists() and "downstream test" in said[-1]
    assert '"first_bad"' in (tmp_path / "v.json").read_text()


# -- the suite's oracle: the lock, storage and the one node's run wired together (no environment is built)


@pytest.fixture
def wired(tmp_path, monkeypatch):
    """A team folder whose lock, environments and runs are given: `runs[version]` are the outcomes of a release's run
    (`"uninstallable"` for one the lock cannot serve); `ran` lists each run's (version, selection)."""
    from conformance.downstream import bisecting, command
    from conformance.downstream.lock import Lock, SuiteEnv, Uninstallable
    from conformance.downstream.runner import SuiteRun

    folder = tmp_path / "team"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test_tree.py").write_text("def test_doubled():\n    pass\n", encoding="utf-8")
    runs, ran = {}, []

    def prepare(suite, lock, version, builder):
        if runs[version] == "uninstallable":
            return Uninstallable(version, "uv pip check: team needs jax<0.7", "d")
        return SuiteEnv(version, tmp_path / "env", "3.12.1", "d", False)

    def run_suite(suite, env, selected=None):
        ran.append((env.version, selected))
        outcomes = [o for o in runs[env.version] if selected is None or o.nodeid in selected]
        return SuiteRun({o.nodeid: o for o in outcomes}, 0.1, "", "pytest")

    for module in (bisecting, command):
        monkeypatch.setattr(module, "lock_for", lambda suite, good, builder: Lock("jax==0.5.3\n", good, "3.12"))
        monkeypatch.setattr(module, "suite_env_digest", lambda lock, version, builder: f"env-{version}")
        monkeypatch.setattr(module, "prepare_suite_env", prepare)
        monkeypatch.setattr(module, "run_suite", run_suite)
    return SimpleNamespace(folder=folder, runs=runs, ran=ran, results=tmp_path / "results")


def test_the_suites_oracle_runs_the_one_node_stores_it_and_answers_from_storage(wired):
    from conformance.cli import main

    passing = [NodeOutcome(NODE, "passed", 0.1), NodeOutcome("tests/test_tree.py::test_other", "passed", 0.1)]
    failing = [
        NodeOutcome(
            NODE,
            "failed",
            0.1,
            {"type": "AttributeError", "message": "no tree_map", "frames": [["tests/test_tree.py", 2, "test_doubled"]]},
        )
    ]
    wired.runs.update({"0.5.3": passing, "0.6.0": "uninstallable", "0.6.2": failing, "0.7.0": failing})
    # a whole `downstream` run stored the good end: its cell answers (its key is the whole run's)
    assert main(["downstream", str(wired.folder), "--jax", "0.5.3", "--results", str(wired.results)]) == 0
    assert wired.ran == [("0.5.3", None)]
    req = BisectRequest(NODE, "0.5.3", "0.7.0", results=wired.results, downstream=str(wired.folder))
    report = bisect_test(req, builder(["0.5.3", "0.6.0", "0.6.2", "0.7.0"]))
    assert report.from_storage == ["0.5.3"] and wired.ran[1:] == [("0.7.0", [NODE]), ("0.6.2", [NODE])]
    assert (report.outcome.last_good, report.outcome.first_bad) == ("0.5.3", "0.6.2")
    assert [s.version for s in report.outcome.skipped] == ["0.6.0"]  # uninstallable: skipped and named
    again = bisect_test(req, builder(["0.5.3", "0.6.0", "0.6.2", "0.7.0"]))
    assert len(wired.ran) == 3 and again.ran == []  # every release answered from the stored cells now
    assert again.outcome.first_bad == "0.6.2" and [s.version for s in again.outcome.skipped] == ["0.6.0"]
