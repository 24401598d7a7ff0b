"""`bisect`: the release list from the index, the binary search with a fake verdict, skips, --find-fix, the oracle."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from conformance import cli
from conformance.decide import bisect_session
from conformance.decide.bisect import (
    Memo,
    Untestable,
    bisect,
    bug_reproduces,
    releases_between,
    same_bug_state,
    same_observation,
    steps_left,
)
from conformance.decide.runs import CellOracle
from conformance.engine.selection import Cell
from conformance.envs.index import PackageIndex
from conformance.errors import ConformanceError
from tests.fake_index import PAGES
from tests.synthetic_results import VMAP, files, result
from tests.synthetic_results import cell as cell_entry

RELEASES = [
    "0.4.38",
    "0.5.0",
    "0.5.1",
    "0.5.2",
    "0.5.3",
    "0.6.0",
    "0.6.1",
    "0.6.2",
    "0.7.0",
    "0.7.1",
    "0.7.2",
    "0.8.0",
    "0.8.1",
    "0.8.2",
    "0.8.3",
    "0.9.0",
    "0.12.0.1",
]


def _index_page(versions, yanked=(), pre=()):
    files = [{"filename": f"jax-{v}-py3-none-any.whl", "requires-python": ">=3.10"} for v in versions]
    files += [{"filename": f"jax-{v}-py3-none-any.whl", "yanked": True} for v in yanked]
    files += [{"filename": f"jax-{v}-py3-none-any.whl"} for v in pre]
    return {"files": files}


def test_releases_between_come_from_the_index_with_patches_and_without_yanked_or_prereleases(tmp_path):
    page = _index_page(RELEASES, yanked=["0.6.3"], pre=["0.8.0rc1", "0.9.0.dev20250101"])
    index = PackageIndex(tmp_path, fetch={"jax": page}.__getitem__)
    found = releases_between(index.releases("jax"), "0.5.3", "0.8.1")
    assert found == ["0.5.3", "0.6.0", "0.6.1", "0.6.2", "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1"]
    assert releases_between(index.releases("jax"), "0.8.1", "0.7.2") == ["0.8.1", "0.8.0", "0.7.2"]
    with pytest.raises(ConformanceError, match="0.6.3 is not a release on the package index"):
        releases_between(index.releases("jax"), "0.5.3", "0.6.3")


def test_a_local_build_a_find_links_folder_adds_is_no_release_between_unless_it_is_an_end():
    versions = ["0.12.0.1", "0.12.0.1+corp.3", "0.12.5+gabc1234", "0.13.0"]
    assert releases_between(versions, "0.12.0.1", "0.13.0") == ["0.12.0.1", "0.13.0"]
    assert releases_between(versions, "0.12.0.1+corp.3", "0.13.0") == ["0.12.0.1+corp.3", "0.13.0"]


def test_the_fake_index_of_the_envs_tests_drops_its_yanked_release(tmp_path):
    index = PackageIndex(tmp_path, fetch=PAGES.__getitem__)
    assert releases_between(index.releases("jax"), "0.4.38", "0.12.0.1") == ["0.4.38", "0.12.0.1"]


def _verdicts(first_bad: str, skipped=()):
    """A fake oracle: `caught` before `first_bad`, `missed` from it on; records every release asked."""
    asked = []

    def oracle(version):
        asked.append(version)
        if version in skipped:
            return Untestable(version, "no interpreter here accepts it")
        missed = RELEASES.index(version) >= RELEASES.index(first_bad)
        return result(
            VMAP,
            "vmap",
            "conforms" if missed else "differs",
            {"old_jit": "missed" if missed else "caught"},
            known_issue=True,
        )

    return oracle, asked


def test_bisect_finds_the_first_release_that_differs_in_few_steps_and_says_how_many_are_left():
    oracle, asked = _verdicts("0.8.0")
    steps = []
    outcome = bisect(RELEASES, oracle, same_observation, on_step=steps.append)
    assert (outcome.last_good, outcome.first_bad) == ("0.7.2", "0.8.0")
    assert outcome.last_good_result.observation == {"old_jit": "caught"}
    assert outcome.first_bad_result.observation == {"old_jit": "missed"}
    assert asked[:2] == ["0.4.38", "0.12.0.1"]  # both ends first
    assert len(asked) <= 2 + steps_left(len(RELEASES) - 2) and len(set(asked)) == len(asked)
    assert steps[0].startswith("15 release(s) left between 0.4.38 and 0.12.0.1 (about 4 step(s)): testing jax")


def test_ends_that_agree_are_said_to_agree_and_nothing_else_is_tested():
    oracle, asked = _verdicts("0.4.38")
    outcome = bisect(RELEASES, oracle)
    assert outcome.ends_agree and asked == ["0.4.38", "0.12.0.1"]


def test_an_untestable_release_is_skipped_and_named():
    oracle, asked = _verdicts("0.8.0", skipped={"0.7.2", "0.6.2"})
    outcome = bisect(RELEASES, oracle)
    assert {s.version for s in outcome.skipped} <= {"0.7.2", "0.6.2"} and outcome.skipped
    assert outcome.first_bad == "0.8.0"
    if "0.7.2" in {s.version for s in outcome.skipped}:
        assert outcome.last_good == "0.7.1" and outcome.untested_between == ["0.7.2"]


def test_an_untestable_end_is_an_error():
    oracle, _ = _verdicts("0.8.0", skipped={"0.4.38"})
    with pytest.raises(ConformanceError, match="the start end, jax 0.4.38, cannot be tested here"):
        bisect(RELEASES, oracle)


def test_find_fix_ignores_changes_that_keep_the_bug():
    def oracle(version):
        fixed = RELEASES.index(version) >= RELEASES.index("0.9.0")
        message = "new wording" if RELEASES.index(version) >= RELEASES.index("0.6.0") else "old wording"
        return result(VMAP, "vmap", "differs" if fixed else "conforms", {"m": message}, known_issue=True)

    plain = bisect(RELEASES, oracle, same_observation)
    fix = bisect(RELEASES, oracle, same_bug_state)
    assert plain.first_bad == "0.6.0" and (fix.last_good, fix.first_bad) == ("0.8.3", "0.9.0")


class FakeBuilder:
    def __init__(self, broken=(), unknown=()):
        self.broken, self.unknown, self.prepared = broken, unknown, []

    def interpreter_for(self, version):
        if version in self.unknown:
            raise ConformanceError(f"no installed Python fits jax {version}")

    def prepare(self, version):
        if version in self.broken:
            raise ConformanceError(f"could not build the environment for jax {version}")
        self.prepared.append(version)
        return type("Env", (), {"python": f"/envs/{version}/bin/python"})()


def test_the_oracle_builds_only_what_it_tests_and_names_what_it_cannot_install():
    from conformance.core.case import find_case

    cell = Cell(find_case("numerics.debug_nans_vmap_miss"), "vmap")
    builder = FakeBuilder(broken={"0.5.0"}, unknown={"0.4.38"})
    ran = []

    def run_cell(env):  # the version's stored file: the cell, and another cell stored before
        ran.append(env.python)
        return files(
            "0.8.0",
            "linux-x86_64",
            [cell_entry(VMAP, "none", "differs"), cell_entry(VMAP, "vmap", "conforms", known_issue=True)],
        )

    oracle = CellOracle(builder, cell, run_cell)
    assert oracle("0.4.38") == Untestable(
        "0.4.38", "no interpreter here can install it: no installed Python fits jax 0.4.38"
    )
    assert oracle("0.5.0") == Untestable("0.5.0", "could not build the environment for jax 0.5.0")
    found = oracle("0.8.0")
    assert (found.cell_id, found.status.value) == ("numerics.debug_nans_vmap_miss[vmap]", "conforms")
    assert builder.prepared == ["0.8.0"] and ran == ["/envs/0.8.0/bin/python"]
    assert oracle.platform == "linux-x86_64"


def test_a_build_whose_run_fails_is_skipped_and_named_not_the_end_of_the_search():
    """A dev build (or release) that installs but whose run cannot finish is one skipped build, like one that does
    not install: the search goes on, and what was found before is kept."""
    from conformance.core.case import find_case

    cell = Cell(find_case("numerics.debug_nans_vmap_miss"), "vmap")

    def run_cell(env):
        raise ConformanceError("the run of jax 0.8.0.dev20250102 wrote no result file")

    found = CellOracle(FakeBuilder(), cell, run_cell)("0.8.0.dev20250102")
    assert isinstance(found, Untestable) and found.why == (
        "its run failed: the run of jax 0.8.0.dev20250102 wrote no result file"
    )


def test_the_oracle_takes_a_stored_answer_before_building_anything():
    from conformance.core.case import find_case

    cell = Cell(find_case("numerics.debug_nans_vmap_miss"), "vmap")
    builder = FakeBuilder(unknown={"0.8.0"})  # not even an interpreter is asked for
    stored = {"0.8.0": result(VMAP, "vmap", "conforms", known_issue=True)}
    oracle = CellOracle(builder, cell, lambda env: pytest.fail("ran a cell that was stored"), stored=stored.get)
    assert oracle("0.8.0") is stored["0.8.0"] and oracle.from_storage == {"0.8.0"}
    assert builder.prepared == []


def test_the_oracle_times_each_release_it_answers_to_a_tenth_of_a_second(monkeypatch):
    from conformance.core.case import find_case
    from conformance.decide import runs

    clock = iter([100.0, 102.36, 200.0, 200.04])
    monkeypatch.setattr(runs.time, "monotonic", lambda: next(clock))
    cell = Cell(find_case("numerics.debug_nans_vmap_miss"), "vmap")
    stored = {"0.7.2": result(VMAP, "vmap", "differs", known_issue=True)}
    oracle = CellOracle(
        FakeBuilder(),
        cell,
        lambda env: files("0.8.0", "linux-x86_64", [cell_entry(VMAP, "vmap", "conforms", known_issue=True)]),
        stored=stored.get,
    )
    oracle("0.8.0")
    oracle("0.7.2")
    assert oracle.seconds == {"0.8.0": 2.4, "0.7.2": 0.0} and oracle.from_storage == {"0.7.2"}


def test_the_oracle_refuses_a_stored_file_without_its_cell():
    from conformance.core.case import find_case

    cell = Cell(find_case("numerics.debug_nans_vmap_miss"), "vmap")
    oracle = CellOracle(FakeBuilder(), cell, lambda env: files("0.8.0", "linux-x86_64", [cell_entry(VMAP, "none")]))
    with pytest.raises(ConformanceError, match="stored no result for numerics.debug_nans_vmap_miss\\[vmap\\]"):
        oracle("0.8.0")


def _fake_cli(monkeypatch, tmp_path, first_bad="0.8.0", bug_from=None):
    class Builder:
        def __init__(self):
            self.index = PackageIndex(tmp_path, fetch={"jax": _index_page(RELEASES)}.__getitem__)
            self.notices = []

    class Oracle:
        def __init__(self, builder, cell, run_cell, stored=None):
            self.cell, self.seconds, self.from_storage = cell, {}, set()

        def __call__(self, version):
            oracle, _ = _verdicts(first_bad)
            return oracle(version)

    monkeypatch.setattr(cli, "EnvironmentBuilder", Builder)
    monkeypatch.setattr(bisect_session, "CellOracle", Oracle)


@pytest.mark.parametrize(
    "spelling",
    ["numerics.debug_nans_vmap_miss:vmap", "numerics.debug_nans_vmap_miss[vmap]", "numerics.debug_nans.vmap_miss.vmap"],
)
def test_cli_bisect_accepts_a_cell_or_a_row_and_ends_with_last_good_and_first_bad(
    spelling, monkeypatch, tmp_path, capsys
):
    _fake_cli(monkeypatch, tmp_path)
    assert cli.main(["bisect", spelling, "--good", "0.4.38", "--bad", "0.12.0.1"]) == 0
    out = capsys.readouterr().out
    assert "bisect numerics.debug_nans_vmap_miss[vmap]: 17 releases from 0.4.38 to 0.12.0.1" in out
    assert "left between" in out
    assert "last good: jax 0.7.2   differs (bug absent): {'old_jit': 'caught'}" in out
    assert "first bad: jax 0.8.0   conforms (bug still present): {'old_jit': 'missed'}" in out
    assert "old_jit: 'caught' -> 'missed'" in out


def test_cli_bisect_says_when_the_ends_agree(monkeypatch, tmp_path, capsys):
    _fake_cli(monkeypatch, tmp_path, first_bad="0.4.38")
    assert cli.main(["bisect", "numerics.debug_nans_vmap_miss:vmap", "--good", "0.4.38", "--bad", "0.12.0.1"]) == 1
    assert "agree on numerics.debug_nans_vmap_miss[vmap], so there is nothing to bisect" in capsys.readouterr().out


def test_cli_find_fix_searches_from_the_end_with_the_bug(monkeypatch, tmp_path, capsys):
    _fake_cli(monkeypatch, tmp_path)  # the bug shows from 0.8.0 on: from the newer end, its fix is 0.7.2 going back
    assert (
        cli.main(
            ["bisect", "numerics.debug_nans_vmap_miss:vmap", "--good", "0.4.38", "--bad", "0.12.0.1", "--find-fix"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "last release with the bug: jax 0.8.0" in out and "first release without it: jax 0.7.2" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["bisect", "numerics.debug_nans_vmap_miss", "--good", "0.4.38", "--bad", "0.12.0.1"],
            "has parameters none, vmap, clear, with",
        ),
        (["bisect", "nothing.here:x", "--good", "0.4.38", "--bad", "0.12.0.1"], "names no cell"),
        (
            ["bisect", "numerics.debug_nans_vmap_miss:none", "--good", "0.4.38", "--bad", "0.12.0.1", "--find-fix"],
            "documents no known issue",
        ),
        (
            ["bisect", "numerics.debug_nans_vmap_miss:vmap", "--good", "0.4.38", "--bad", "9.9.9"],
            "jax 9.9.9 is not a release on the package index",
        ),
    ],
)
def test_cli_bisect_bad_usage_exits_2(argv, message, monkeypatch, tmp_path, capsys):
    _fake_cli(monkeypatch, tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_find_fix_says_when_both_ends_show_the_bug(monkeypatch, tmp_path, capsys):
    _fake_cli(monkeypatch, tmp_path, first_bad="0.4.38")  # the bug everywhere
    assert (
        cli.main(
            ["bisect", "numerics.debug_nans_vmap_miss:vmap", "--good", "0.4.38", "--bad", "0.12.0.1", "--find-fix"]
        )
        == 1
    )
    assert "the known issue reproduces on both jax 0.4.38 and jax 0.12.0.1: no fix to find" in capsys.readouterr().out


def test_cli_bisect_stores_the_cells_it_runs_in_the_results_folder(monkeypatch, tmp_path, capsys):
    """The oracle runs through the engine's matrix run (pytest faked), so every tested release lands in --results."""
    from conformance.envs.builder import JaxEnvironment
    from tests.test_engine_matrix import FakePytest, env_for

    class Builder:
        def __init__(self):
            self.index = PackageIndex(tmp_path / "index", fetch={"jax": _index_page(RELEASES)}.__getitem__)
            self.notices = []

        def interpreter_for(self, version):
            return None

        def requirements(self, version):  # loose requirements: stored cells never answer without a pin file
            from conformance.envs.builder import Requirements

            return Requirements((f"jax=={version}",))

        def prepare(self, version):
            return env_for(version)

    from packaging.version import Version

    fake = FakePytest(lambda v: {f"{VMAP}[vmap]": "conforms" if Version(v) >= Version("0.8") else "differs"})
    monkeypatch.setattr(cli, "EnvironmentBuilder", Builder)
    monkeypatch.setattr(subprocess, "Popen", fake)
    monkeypatch.setattr(JaxEnvironment, "python", property(lambda env: f"/envs/{env.version}/bin/python"))
    results = tmp_path / "stored"
    argv = ["bisect", f"{VMAP}:vmap", "--good", "0.4.38", "--bad", "0.12.0.1", "--results", str(results)]
    issue, verdict = tmp_path / "bug.md", tmp_path / "verdict.json"
    assert cli.main(argv + ["--launch", "spawn", "--issue", str(issue), "--json", str(verdict)]) == 0
    out = capsys.readouterr().out
    assert f"wrote the bug report to {issue}" in out and f"wrote the verdict as JSON to {verdict}" in out
    written = json.loads(verdict.read_text())
    assert written["found"] and (written["last_good"]["jax"], written["first_bad"]["jax"]) == ("0.7.2", "0.8.0")
    assert written["compare_url"] == "https://github.com/jax-ml/jax/compare/jax-v0.7.2...jax-v0.8.0"
    text = issue.read_text()
    assert text.startswith("# ") and "jax 0.8.0" in text.splitlines()[0]
    assert "| first bad | 0.8.0 | 0.8.0 | jax-v0.8.0 | jaxlib-v0.8.0 |" in text
    assert "pip install jax==0.8.0 jaxlib==0.8.0" in text and "result = debug_nans_vmap_miss('vmap')" in text
    assert "## Environment (of the first bad build's run)\n- platform: linux-x86_64" in text
    assert text.splitlines()[0] == (
        f"# jax 0.8.0: {VMAP}[vmap] changes (differs -> conforms); jax 0.7.2 is the last release without it"
    )
    assert "first bad: jax 0.8.0" in out
    # The synthetic headers record no commit: the verdict names the release tags, and links them.
    assert "last good build: jax 0.7.2 (no commit recorded; tag jax-v0.7.2)" in out
    assert "jax commits between them: https://github.com/jax-ml/jax/compare/jax-v0.7.2...jax-v0.8.0" in out
    tested = sorted(p.name for p in results.glob("*.json"))
    assert len(tested) == len(fake.argvs)
    assert "0.8.0-linux-x86_64.json" in tested and "0.7.2-linux-x86_64.json" in tested
    first = fake.argvs[0]
    assert first[first.index("--jax-launch") + 1] == "spawn" and first[first.index("--jax-reuse") + 1] == str(results)


def _bug_report_text(case_id: str, param: str, good, bad, releases=("0.7.2", "0.8.0"), find_fix: bool = False) -> str:
    """`issue_markdown` of a bisect that ended between 0.7.2 (`good`) and 0.8.0 (`bad`) over `releases`."""
    from types import SimpleNamespace

    from conformance.core.case import find_case
    from conformance.decide.bisect import BisectOutcome
    from conformance.decide.bug_report import issue_markdown
    from conformance.decide.commits import BuildCommits

    cell = Cell(find_case(case_id), param)
    outcome = BisectOutcome(
        list(releases),
        releases[0],
        releases[-1],
        good,
        bad,
        last_good="0.7.2",
        first_bad="0.8.0",
        last_good_result=good,
        first_bad_result=bad,
    )
    report = SimpleNamespace(
        outcome=outcome,
        good_build=BuildCommits("0.7.2", "0.7.2"),
        find_fix=find_fix,
        bad_build=BuildCommits("0.8.0", "0.8.0"),
        cell=cell,
        attribution=None,
        environment={},
        releases=list(releases),
        cell_id=cell.id,
        dev=None,
        source=None,
    )
    return issue_markdown(report)


@pytest.mark.parametrize(
    "case_id, needed",
    [
        ("config.traceback_filtering_invalid_value", "and `JAX_TRACEBACK_FILTERING=bogus python repro.py`; it prints"),
        ("program.closure_constant_miscompile", "closure_miscompile.py"),
    ],
)
def test_the_bug_report_alone_reproduces_with_the_environment_and_the_scripts_its_case_needs(case_id, needed):
    """A maintainer reading the report has no copy of the suite: the run line carries the case's environment
    variables, and a script the probe runs as a file is in the report too, not named as `conformance/scripts/`."""
    from conformance.report.repro import script_sources

    good, bad = result(case_id, "", "conforms", {"a": 1}), result(case_id, "", "differs", {"a": 2})
    text = _bug_report_text(case_id, "", good, bad)
    assert needed in text and "(the suite's `conformance/scripts/`)" not in text
    assert text.count("```") % 2 == 0
    for name in ("closure_miscompile",) if "closure" in case_id else ():
        assert script_sources()[name].strip() in text


def test_a_find_fix_bug_report_says_which_release_has_the_bug_and_which_does_not():
    bug = result(VMAP, "vmap", "conforms", {"old_jit": "missed"}, known_issue=True)
    fixed = result(VMAP, "vmap", "differs", {"old_jit": "caught"}, known_issue=True)
    text = _bug_report_text(VMAP, "vmap", bug, fixed, releases=("0.4.38", "0.8.0"), find_fix=True)
    assert "jax 0.7.2 is the last release without it" not in text
    assert text.splitlines()[0].endswith("jax 0.7.2 is the last release with it")
    assert "| last with the bug | 0.7.2 |" in text and "| first without it | 0.8.0 |" in text
    assert "--good 0.4.38 --bad 0.8.0 --find-fix`" in text  # the command that finds it again


def test_the_bug_reports_table_of_changes_survives_pipes_and_backticks_in_the_observations():
    """Error messages quote code (`jax.jit`) and operators (`|`): each row of the field table keeps three cells."""
    before = result(VMAP, "vmap", "differs", {"m": "unsupported operand type(s) for |: 'int'", "n": "use `jax.jit`"})
    after = result(VMAP, "vmap", "conforms", {"m": "a | b", "n": "``"})
    text = _bug_report_text(VMAP, "vmap", before, after)
    table = text.split("## What changed (field by field)")[1].split("##")[0].strip().splitlines()[2:]
    assert len(table) == 2
    for row in table:
        cells = [c for c in re.split(r"(?<!\\)\|", row)][1:-1]  # GFM: a cell ends at each unescaped |
        assert len(cells) == 3, row
        for cell_text in cells:
            ticks = re.match(r"\s*(`+)", cell_text).group(1)
            assert cell_text.strip().endswith(ticks) and ticks not in cell_text.strip()[len(ticks) : -len(ticks)], row


def test_a_jax_source_search_that_cannot_start_keeps_the_release_verdict(monkeypatch, tmp_path, capsys):
    """The releases were searched (and run) before the checkout is read: a checkout that cannot serve the search
    stops that step in one line, and the verdict is still printed and written."""
    _fake_cli(monkeypatch, tmp_path)
    verdict = tmp_path / "verdict.json"
    code = cli.main(
        [
            "bisect",
            f"{VMAP}:vmap",
            "--good",
            "0.4.38",
            "--bad",
            "0.12.0.1",
            "--jax-source",
            str(tmp_path / "no-checkout"),
            "--json",
            str(verdict),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "first bad: jax 0.8.0" in out
    assert "jax source: stopped: --jax-source" in out and "is not a git checkout" in out
    assert json.loads(verdict.read_text())["source"]["stopped"].endswith("clone jax-ml/jax there")


# ---- the pure pieces, exactly -------------------------------------------------------------------------------------


def test_releases_between_skips_what_is_not_a_version_and_keeps_a_pre_release_only_as_an_end():
    versions = ["nightly", "0.5.0", "0.5.1rc1", "0.5.1", "0.6.0rc2", "0.6.0", "0.6.1"]
    assert releases_between(versions, "0.5.0", "0.6.1") == ["0.5.0", "0.5.1", "0.6.0", "0.6.1"]
    assert releases_between(versions, "0.5.1rc1", "0.6.0rc2") == ["0.5.1rc1", "0.5.1", "0.6.0rc2"]
    assert releases_between(versions, "0.6.0rc2", "0.5.0") == ["0.6.0rc2", "0.5.1", "0.5.0"]
    assert releases_between(versions, "0.5.1", "0.5.1") == ["0.5.1"]
    for first, last in (("0.4.0", "0.5.0"), ("0.5.0", "nightly")):
        missing = first if first == "0.4.0" else last
        with pytest.raises(ConformanceError) as error:
            releases_between(versions, first, last)
        assert str(error.value) == (
            f"jax {missing} is not a release on the package index (yanked releases are excluded)"
        )


@pytest.mark.parametrize(
    "candidates, steps", [(-1, 0), (0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (15, 4), (16, 5)]
)
def test_steps_left(candidates, steps):
    assert steps_left(candidates) == steps


def test_the_oracles_compare_status_and_observation_or_only_the_bug():
    base = result(VMAP, "vmap", "conforms", {"m": 1}, known_issue=True)
    assert same_observation(base, result(VMAP, "vmap", "conforms", {"m": 1}, known_issue=True))
    assert not same_observation(base, result(VMAP, "vmap", "conforms", {"m": 2}, known_issue=True))
    assert not same_observation(base, result(VMAP, "vmap", "differs", {"m": 1}, known_issue=True))
    assert same_bug_state(base, result(VMAP, "vmap", "conforms", {"m": 2}))
    assert not same_bug_state(base, result(VMAP, "vmap", "differs", {"m": 1}))
    gone = result(VMAP, "vmap", "differs")
    assert same_bug_state(gone, result(VMAP, "vmap", "crash")) and not same_bug_state(gone, base)
    assert bug_reproduces(base) and not bug_reproduces(gone)


def test_memo_asks_the_oracle_once_per_release_and_keeps_the_order():
    asked = []
    memo = Memo(lambda version: asked.append(version) or version.upper())
    assert [memo("a"), memo("b"), memo("a"), memo("c")] == ["A", "B", "A", "C"]
    assert asked == ["a", "b", "c"] and memo.order == ["a", "b", "c"] and memo.answers == {"a": "A", "b": "B", "c": "C"}


TEN = [f"1.{i}" for i in range(10)]


def _oracle(first_bad: int, skipped=(), why="no interpreter"):
    asked = []

    def oracle(version):
        asked.append(version)
        if version in skipped:
            return Untestable(version, why)
        return result("a.b", "", "differs" if TEN.index(version) >= first_bad else "conforms", {"i": 0})

    return oracle, asked


def test_bisect_searches_by_halves_and_says_each_step():
    oracle, asked = _oracle(7)
    steps = []
    outcome = bisect(TEN, oracle, on_step=steps.append)
    assert asked == ["1.0", "1.9", "1.5", "1.7", "1.6"]
    assert steps == [
        "8 release(s) left between 1.0 and 1.9 (about 4 step(s)): testing jax 1.5",
        "  -> like jax 1.0",
        "3 release(s) left between 1.5 and 1.9 (about 2 step(s)): testing jax 1.7",
        "  -> unlike jax 1.0",
        "1 release(s) left between 1.5 and 1.7 (about 1 step(s)): testing jax 1.6",
        "  -> like jax 1.0",
    ]
    assert (outcome.releases, outcome.start, outcome.end) == (TEN, "1.0", "1.9")
    assert (outcome.start_result.status.value, outcome.end_result.status.value) == ("conforms", "differs")
    assert not outcome.ends_agree
    assert (outcome.last_good, outcome.first_bad) == ("1.6", "1.7")
    assert outcome.last_good_result.status.value == "conforms" and outcome.first_bad_result.status.value == "differs"
    assert outcome.tested == asked and outcome.skipped == [] and outcome.untested_between == []


@pytest.mark.parametrize("unit", ["build", "commit"])
def test_the_step_lines_name_what_is_searched_dev_builds_or_commits(unit):
    oracle, _ = _oracle(7)
    steps = []
    bisect(TEN, oracle, on_step=steps.append, unit=unit)
    assert steps[0] == f"8 {unit}(s) left between 1.0 and 1.9 (about 4 step(s)): testing jax 1.5"
    assert not any("release" in step for step in steps)


def test_bisect_with_the_first_release_after_the_start_already_bad():
    oracle, asked = _oracle(1)
    outcome = bisect(TEN, oracle)
    assert asked == ["1.0", "1.9", "1.5", "1.3", "1.2", "1.1"] and (outcome.last_good, outcome.first_bad) == (
        "1.0",
        "1.1",
    )


def test_bisect_skips_untestable_releases_and_names_the_untested_range():
    oracle, asked = _oracle(7, skipped={"1.5", "1.6"}, why="no wheel")
    steps = []
    outcome = bisect(TEN, oracle, on_step=steps.append)
    assert asked == ["1.0", "1.9", "1.5", "1.4", "1.7", "1.6"]
    assert steps == [
        "8 release(s) left between 1.0 and 1.9 (about 4 step(s)): testing jax 1.5",
        "  jax 1.5: skipped (no wheel)",
        "7 release(s) left between 1.0 and 1.9 (about 3 step(s)): testing jax 1.4",
        "  -> like jax 1.0",
        "3 release(s) left between 1.4 and 1.9 (about 2 step(s)): testing jax 1.7",
        "  -> unlike jax 1.0",
        "1 release(s) left between 1.4 and 1.7 (about 1 step(s)): testing jax 1.6",
        "  jax 1.6: skipped (no wheel)",
    ]
    assert (outcome.last_good, outcome.first_bad) == ("1.4", "1.7")
    assert outcome.untested_between == ["1.5", "1.6"]
    assert outcome.skipped == [Untestable("1.5", "no wheel"), Untestable("1.6", "no wheel")]
    assert outcome.tested == ["1.0", "1.9", "1.4", "1.7"]


def test_bisect_when_the_ends_agree_leaves_the_rest_empty():
    oracle, asked = _oracle(10)
    outcome = bisect(TEN, oracle)
    assert outcome.ends_agree and asked == ["1.0", "1.9"]
    assert (outcome.last_good, outcome.first_bad, outcome.last_good_result, outcome.first_bad_result) == (
        "",
        "",
        None,
        None,
    )
    assert outcome.untested_between == [] and outcome.skipped == [] and outcome.tested == ["1.0", "1.9"]


def test_bisect_asks_like_start_with_the_start_first():
    oracle, _ = _oracle(7)
    seen = []

    def like(start, other):
        seen.append(start.status.value)
        return other.status is start.status

    bisect(TEN, oracle, like)
    assert seen and set(seen) == {"conforms"}


def test_bisect_uses_a_memo_it_is_given_as_it_is():
    oracle, asked = _oracle(7)
    memo = Memo(oracle)
    memo("1.9")  # asked before the search (as --find-fix asks both ends to choose a direction)
    outcome = bisect(TEN, memo)
    assert asked == ["1.9", "1.0", "1.5", "1.7", "1.6"] and outcome.tested == asked


def test_bisect_of_two_releases_and_its_errors():
    oracle, asked = _oracle(1)
    outcome = bisect(TEN[:2], oracle)
    assert (outcome.last_good, outcome.first_bad, outcome.untested_between) == ("1.0", "1.1", [])
    for releases in ([], ["1.0"]):
        with pytest.raises(ConformanceError) as error:
            bisect(releases, oracle)
        assert str(error.value) == "bisect needs two different releases"
    for skipped, which in (("1.0", "start"), ("1.9", "end")):
        oracle, _ = _oracle(7, skipped={skipped}, why="needs Python 3.9")
        with pytest.raises(ConformanceError) as error:
            bisect(TEN, oracle)
        assert str(error.value) == f"the {which} end, jax {skipped}, cannot be tested here: needs Python 3.9"
