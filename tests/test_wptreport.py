"""The wptreports (`report --wptreport DIR`): one report per run, each accepted by wpt.fyi's results processor (its
rules transcribed in tests/wptfyi_rules.py) and valid against the project's schema, on synthetic results, on the
golden files and on the published report's data (rebuilt from reports/index.html); and the checker refuses what the
processor refuses, the old single file of several runs first."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance.core.case import load_cases
from conformance.report.model import build_model
from conformance.report.formats import render_outputs, write_outputs
from conformance.report.outputs import ReportData, as_json
from conformance.report.wptreport import NULL_COMMIT, fact_of, report_name, wptreport, wptreports
from conformance.results.load import load_results
from tests.published_report import published_files
from tests.synthetic_results import cell, files
from tests.test_report import CASES, GOLDEN
from tests.wptfyi_rules import report_problems, run_problems

WPT_SCHEMA = Path(__file__).resolve().parent.parent / "conformance" / "report" / "schemas" / "wptreport.schema.json"
PLATFORM = "linux-x86_64"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def schema_problems(report) -> list[str]:
    schema = json.loads(WPT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in jsonschema.Draft202012Validator(schema).iter_errors(report)
    ]


def write_wptreports(model, folder):
    """The wptreports of `model`, written into `folder` as `report --wptreport DIR` writes them (the registry)."""
    wanted = {"wptreport": folder}
    return write_outputs(render_outputs(ReportData(model, "2026-12-06T00:00:00+00:00"), wanted), wanted)


def accepted(report) -> bool:
    """Whether the report passes both the processor's rules (as written to disk) and the project's schema."""
    return report_problems(as_json(report, indent=None)) == [] and schema_problems(report) == []


def model_of(history: dict[str, list[dict]], platform: str = PLATFORM, **header):
    """A model from `{jax version: [cell metadata]}` on one platform; `header` sets run header fields."""
    runs = [files(v, platform, cells) for v, cells in history.items()]
    for run in runs:
        for key, value in header.items():
            setattr(run.header, key, value)
    return build_model(runs, [])


def old_single_file(reports: list[dict]) -> dict:
    """The format `--wptreport PATH` wrote before: every run in one file as wptrunner's subsuites, the top-level
    run_info holding what all runs share, and a revision naming the suite."""
    infos = [r["run_info"] for r in reports]
    names = [f"jax-{i['jax']}-{i['platform']}" for i in infos]
    common = {k: v for k, v in infos[0].items() if all(i.get(k) == v for i in infos[1:])}
    return {
        "run_info": {**common, "revision": f"jax-conformance-{infos[0]['suite_version']}"},
        "results": [{**r, "subsuite": n} for n, rep in zip(names, reports) for r in rep["results"]],
        "subsuites": dict(zip(names, infos)),
    }


@pytest.fixture(scope="module")
def published():
    return build_model(published_files(), load_cases())


# ------------------------------------------------------------------ one run, one report


def test_fact_of_a_diff_path():
    assert [fact_of(p) for p in ("dtype", "a.b", "types[0]", "<api>", "")] == ["dtype", "a", "types", "<api>", ""]


def test_a_fact_named_with_a_dot_fails_as_itself():
    """Review: `mentions_got_-1.0` (a real fact of numerics) was cut at its `.`: the fact read PASS and an invented
    subtest `mentions_got_-1` FAIL."""
    from conformance.report.wptreport import subtests
    from conformance.results.schema import CellResult

    facts = {"raised": None, "mentions_got_-1.0": True, "accuracy_above_0.9": {"a": 1}}
    result = CellResult.from_json(
        cell(
            "numerics.c",
            "array",
            "differs",
            {**facts, "mentions_got_-1.0": False},
            expected=facts,
            diff=[
                {"path": "mentions_got_-1.0", "expected": True, "observed": False, "kind": "changed"},
                {"path": "accuracy_above_0.9.a", "expected": 1, "observed": 2, "kind": "changed"},
            ],
        )
    )
    assert {t["name"]: t["status"] for t in subtests(result)} == {
        "raised": "PASS",
        "mentions_got_-1.0": "FAIL",
        "accuracy_above_0.9": "FAIL",
    }
    assert fact_of("accuracy_above_0.9.a", list(facts)) == "accuracy_above_0.9"


def test_a_run_is_a_report_with_its_facts_as_subtests():
    model = model_of(
        {
            "0.5.0": [
                cell("a.ok", expected={"x": 1, "y": 2}, observation={"x": 1, "y": 2}),
                cell(
                    "a.bad",
                    status="differs",
                    expected={"x": 1, "y": 2},
                    observation={"x": 1, "y": 3},
                    diff=[{"path": "y", "expected": 2, "observed": 3}],
                ),
                cell("a.gone", status="unsupported", reason="not yet there: jax.thing"),
                cell("a.boom", status="crash", reason="signal 11"),
            ]
        }
    )
    [(name, report)] = wptreports(model)
    assert name == "wptreport-0.5.0-linux-x86_64.json" and accepted(report)
    info = report["run_info"]
    assert (info["product"], info["browser_version"], info["browser_channel"], info["os"]) == (
        "jax",
        "0.5.0",
        "stable",
        "linux",
    )
    assert report["subsuites"] == {} and {r["subsuite"] for r in report["results"]} == {""}
    by_test = {r["test"]: r for r in report["results"]}
    assert by_test["/a.ok"]["status"] == "OK" and [s["status"] for s in by_test["/a.ok"]["subtests"]] == ["PASS"] * 2
    bad = by_test["/a.bad"]
    assert bad["status"] == "OK" and [(s["name"], s["status"]) for s in bad["subtests"]] == [
        ("x", "PASS"),
        ("y", "FAIL"),
    ]
    assert bad["subtests"][1]["message"] == "y: expected 2, observed 3" and bad["subtests"][0]["message"] is None
    assert by_test["/a.gone"]["status"] == "PRECONDITION_FAILED" and by_test["/a.gone"]["subtests"] == []
    assert by_test["/a.boom"]["status"] == "CRASH" and "signal 11" in by_test["/a.boom"]["message"]


def test_several_runs_give_one_report_each_and_are_never_one_run():
    model = model_of({"0.4.38": [cell("a.b")], "0.5.0": [cell("a.b", status="differs")]})
    reports = wptreports(model)
    assert [name for name, _ in reports] == ["wptreport-0.4.38-linux-x86_64.json", "wptreport-0.5.0-linux-x86_64.json"]
    assert all(accepted(report) for _, report in reports)
    assert [r["run_info"]["browser_version"] for _, r in reports] == ["0.4.38", "0.5.0"]
    assert [r["results"][0]["subtests"][0]["status"] for _, r in reports] == ["PASS", "FAIL"]
    # Uploaded together as the chunks of one run, the processor refuses them: they are two runs.
    problems = run_problems(as_json(r, indent=None) for _, r in reports)
    assert "ConflictingDataError: run_info browser_version: ['0.5.0', '0.4.38']" in problems
    assert "ConflictingDataError: Conflicting '/a.b' found in the merged report" in problems


@pytest.mark.parametrize(
    "recorded, revision", [(COMMIT, COMMIT), ("", NULL_COMMIT), ("0123456", NULL_COMMIT), (COMMIT.upper(), NULL_COMMIT)]
)
def test_revision_is_the_jax_commit_recorded_else_the_null_commit(recorded, revision):
    [(_, report)] = wptreports(model_of({"0.8.1": [cell("a.b")]}, jax_git_hash=recorded))
    assert report["run_info"]["revision"] == revision and report["run_info"]["jax_git_hash"] == recorded
    assert report["run_info"]["jax_ref"] == (recorded or "jax-v0.8.1")  # what an uploader resolves to a commit
    assert accepted(report)


@pytest.mark.parametrize(
    "version, channel", [("0.5.0", "stable"), ("0.6.0rc1", "beta"), ("0.13.0.dev20260102", "nightly")]
)
def test_the_release_channel_follows_the_version(version, channel):
    [(_, report)] = wptreports(model_of({version: [cell("a.b")]}))
    assert report["run_info"]["browser_channel"] == channel and accepted(report)


@pytest.mark.parametrize(
    "platform, os_name, processor, backend",
    [
        ("darwin-arm64", "mac", "arm64", "cpu"),
        ("windows-amd64", "win", "amd64", "cpu"),
        ("linux-x86_64-cuda", "linux", "x86_64", "cuda"),
    ],
)
def test_os_is_wptrunners_name_for_the_system(platform, os_name, processor, backend):
    [(name, report)] = wptreports(model_of({"0.5.0": [cell("a.b")]}, platform=platform))
    info = report["run_info"]
    assert (info["os"], info["processor"], info["backend"], info["platform"]) == (os_name, processor, backend, platform)
    assert name == f"wptreport-0.5.0-{platform}.json" and accepted(report)


def test_known_issue_cells_say_the_bugs_state_and_pass_where_the_bug_reproduces():
    bug = {"known_issue": True, "expected": {"missed": True, "count": 0}}
    model = model_of(
        {
            "0.4.38": [
                cell(
                    "n.vm",
                    "vmap",
                    status="differs",
                    observation={"missed": False, "count": 0},
                    diff=[{"path": "missed", "expected": True, "observed": False}],
                    **bug,
                )
            ],
            "0.12.0.1": [cell("n.vm", "vmap", observation={"missed": True, "count": 0}, **bug)],
            "0.13.0": [
                cell(
                    "n.vm",
                    "vmap",
                    status="differs",
                    observation={"missed": False, "count": 0},
                    diff=[{"path": "missed", "expected": True, "observed": False}],
                    **bug,
                )
            ],
        }
    )
    said = {}
    for _, report in wptreports(model):
        assert accepted(report)
        [result] = report["results"]
        said[report["run_info"]["jax"]] = (
            result["message"],
            [(s["name"], s["status"], s["message"]) for s in result["subtests"]],
        )
    assert said["0.12.0.1"] == (
        "bug still present (conforms)",
        [("missed", "PASS", "bug still present"), ("count", "PASS", "bug still present")],
    )
    assert said["0.4.38"] == (
        "bug absent (differs)",
        [("missed", "FAIL", "bug absent; missed: expected true, observed false"), ("count", "PASS", "bug absent")],
    )
    assert said["0.13.0"][0] == "changed: maybe fixed (differs)"
    assert said["0.13.0"][1][0] == ("missed", "FAIL", "changed: maybe fixed; missed: expected true, observed false")


def test_a_team_cases_prefix_is_a_folder_on_wpt_fyi():
    # wpt.fyi stores each test's result as a file named by the test: a team's `team/` prefix (the only `/` a cell ID
    # may hold) becomes its folder, beside no test's file.
    model = model_of({"0.5.0": [cell("team/a.b", "x"), cell("a.b", "y")]})
    [(_, report)] = wptreports(model)
    assert sorted(r["test"] for r in report["results"]) == ["/a.b[y]", "/team/a.b[x]"] and accepted(report)


def test_odd_run_data_still_gives_an_accepted_report():
    [run] = [
        files(
            "0.5.0", PLATFORM, [cell("a.b", duration_s=-1.0, expected={"<b>\u2028": 1}, observation={"<b>\u2028": 1})]
        )
    ]
    run.header.started_at, run.header.finished_at = "1960-01-01T00:00:00+00:00", "not a date"
    [(_, report)] = wptreports(build_model([run], []))
    assert accepted(report)
    assert "time_start" not in report and report["results"][0]["duration"] == 0
    assert report["results"][0]["subtests"][0]["name"] == "<b>\u2028"


def test_builds_of_their_own_get_names_of_their_own():
    model = model_of({"0.5.0": [cell("a.b")], "0.5.1": [cell("a.b")]})
    first, second = model.columns
    assert report_name(first) == "wptreport-0.5.0-linux-x86_64.json"
    for column in (first, second):
        column.jax, column.build, column.build_kind = "0.5.0+corp/3 x", "existing interpreter", "python"
    assert report_name(first) == "wptreport-0.5.0+corp_3_x-linux-x86_64-python.json"
    reports = wptreports(model)
    assert [name for name, _ in reports] == [
        "wptreport-0.5.0+corp_3_x-linux-x86_64-python.json",
        "wptreport-0.5.0+corp_3_x-linux-x86_64-python-2.json",
    ]
    assert all(r["run_info"]["browser_channel"] == "experimental" and accepted(r) for _, r in reports)
    first.build = ""
    first.jax = "not-a-version"
    assert wptreport(model, 0)["run_info"]["browser_channel"] == "experimental"


# ------------------------------------------------------------------ the checker refuses what the processor refuses


def test_the_rules_refuse_the_old_single_file_of_several_runs(published):
    old = old_single_file([report for _, report in wptreports(published)])
    problems = report_problems(as_json(old, indent=None))
    assert "ConflictingDataError: Conflicting '/setup.environment' found in the merged report" in problems
    assert "MissingMetadataError: Missing required metadata 'browser_version'" in problems
    assert "create_run.go: full_revision_hash must be the full SHA (40 chars)" in problems
    repeated = len(old["results"]) - len({r["test"] for r in old["results"]})  # each name once per run
    assert sum(p.startswith("ConflictingDataError") for p in problems) == repeated > 0


BREAKS = {
    "not JSON": (lambda r: "{", "InvalidJSONError"),
    "no results": (lambda r: {k: v for k, v in r.items() if k != "results"}, "InsufficientDataError"),
    "a test twice": (lambda r: {**r, "results": r["results"] + r["results"][:1]}, "ConflictingDataError"),
    "no revision": (
        lambda r: {**r, "run_info": {k: v for k, v in r["run_info"].items() if k != "revision"}},
        "MissingMetadataError: Missing required metadata 'revision'",
    ),
    "no os": (
        lambda r: {**r, "run_info": {k: v for k, v in r["run_info"].items() if k != "os"}},
        "MissingMetadataError: Missing required metadata 'os'",
    ),
    "a numeric version": (lambda r: {**r, "run_info": {**r["run_info"], "browser_version": 0.5}}, "TypeError"),
    "a short revision": (lambda r: {**r, "run_info": {**r["run_info"], "revision": "0123456789"}}, "40 chars"),
    "a revision not hex": (lambda r: {**r, "run_info": {**r["run_info"], "revision": "z" * 40}}, "is not a commit"),
    "a test without /": (lambda r: {**r, "results": [{**r["results"][0], "test": "a.b"}]}, "does not start"),
    "a test outside": (lambda r: {**r, "results": [{**r["results"][0], "test": "/../a.b"}]}, "not a path inside"),
    "a test in a test": (
        lambda r: {**r, "results": r["results"] + [{**r["results"][0], "test": "/a.b/c"}]},
        "another test's file",
    ),
    "a subtest twice": (
        lambda r: {**r, "results": [{**r["results"][0], "subtests": r["results"][0]["subtests"] * 2}]},
        "twice",
    ),
    "a status wpt lacks": (lambda r: {**r, "results": [{**r["results"][0], "status": "GOOD"}]}, "test status"),
    "a subtest status": (
        lambda r: {
            **r,
            "results": [{**r["results"][0], "subtests": [{**r["results"][0]["subtests"][0], "status": "OK"}]}],
        },
        "not a subtest status",
    ),
    "no subtests": (
        lambda r: {**r, "results": [{k: v for k, v in r["results"][0].items() if k != "subtests"}]},
        "no subtests list",
    ),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_the_rules_refuse_each_break(name):
    [(_, report)] = wptreports(model_of({"0.5.0": [cell("a.b", expected={"x": 1}, observation={"x": 1})]}))
    assert report_problems(as_json(report, indent=None)) == []
    change, said = BREAKS[name]
    broken = change(json.loads(json.dumps(report)))
    text = broken if isinstance(broken, str) else as_json(broken, indent=None)
    assert any(said in problem for problem in report_problems(text)), report_problems(text)


def test_the_schema_refuses_a_malformed_report():
    [(_, report)] = wptreports(model_of({"0.5.0": [cell("a.b")]}))
    assert schema_problems(report) == []
    for change in (
        lambda r: r["results"][0].update(test="a.b"),
        lambda r: r["results"][0].update(status="GOOD"),
        lambda r: r["run_info"].pop("browser_version"),
        lambda r: r["run_info"].pop("revision"),
        lambda r: r["run_info"].update(revision="jax-conformance-0.2.0"),
        lambda r: r["run_info"].update(os=None),
        lambda r: r["results"][0]["subtests"][0].update(status="OK"),
        lambda r: r.pop("results"),
    ):
        broken = json.loads(json.dumps(report))
        change(broken)
        assert schema_problems(broken)


# ------------------------------------------------------------------ the golden files and the published report


def test_every_golden_run_gets_an_accepted_report(tmp_path):
    model = build_model(load_results(GOLDEN), CASES)
    written = write_wptreports(model, tmp_path / "wpt")
    assert sorted(p.name for p in written) == [
        "wptreport-0.12.0.1-linux-x86_64.json",
        "wptreport-0.4.38-linux-x86_64.json",
    ]
    for path in written:
        assert report_problems(path.read_bytes()) == [], path.name
        assert schema_problems(json.loads(path.read_text(encoding="utf-8"))) == [], path.name
    newest = json.loads((tmp_path / "wpt" / "wptreport-0.12.0.1-linux-x86_64.json").read_text(encoding="utf-8"))
    known = next(r for r in newest["results"] if r["test"] == "/demo.known_bug")
    assert known["message"].startswith("changed: maybe fixed") and known["subtests"][0]["status"] == "FAIL"


def test_every_published_run_gets_an_accepted_report(published, tmp_path):
    written = write_wptreports(published, tmp_path)
    assert len(written) == len(published.columns) == 27
    results = 0
    for path in written:
        report = json.loads(path.read_text(encoding="utf-8"))
        assert report_problems(path.read_bytes()) == [], path.name
        assert schema_problems(report) == [], path.name
        assert report["time_start"] <= report["time_end"]
        results += len(report["results"])
    assert results == sum(c.result is not None for row in published.param_rows for c in row.cells)
    newest = json.loads((tmp_path / "wptreport-0.12.0.1-linux-x86_64.json").read_text(encoding="utf-8"))
    failing = {r["test"] for r in newest["results"] if any(s["status"] == "FAIL" for s in r["subtests"])}
    assert failing == {"/" + d.cell_id for d in published.discrepancies} and len(failing) >= 4
    vmap = next(r for r in newest["results"] if r["test"] == "/numerics.debug_nans_vmap_miss[vmap]")
    assert vmap["message"] == "bug still present (conforms)"
    assert {(s["status"], s["message"]) for s in vmap["subtests"]} == {("PASS", "bug still present")}
