"""Issue 58: the report's section "Downstream test suites" and its Markdown summary, from result files holding a
suite's tests as `downstream` stores them (`tests.synthetic_downstream`: cells shaped by `downstream.cells.to_cell`).

Each decision a reader sees is fed the input that would expose a wrong edit: a release with no test of the suite
(not run, never clean), a suite on one release only, a release the lock cannot serve (first and later), a crash
(reached: regressed; never reached: not), unequal test sets, a cause carried from the release before, and the
reproduce command's environment (the folder the `downstream` command builds).
"""

from __future__ import annotations

import fnmatch
import re
import shlex

from conformance.downstream.lock import env_folder_name
from conformance.report.downstreamview import CACHE, downstream_view, reproduce, suite_view
from conformance.report.markdown import code, text
from conformance.report.markdown_downstream import downstream_summary
from conformance.report.render import render_results
from conformance.results.load import load_results
from conformance.results.merge import merge_files
from conformance.results.schema import CellResult
from tests import synthetic_downstream as sd
from tests import synthetic_results as synth

A = "demo/_src/a_test.py"


def cells(outcomes) -> list[CellResult]:
    return [CellResult.from_json(c) for c in sd.suite_cells(outcomes)]


def view_of(by_release: dict, releases=None):
    releases = releases or list(by_release)
    return suite_view(sd.LABEL, sd.IDENT, "linux-x86_64", {r: cells(o) for r, o in by_release.items()}, releases)


def passing(*names: str):
    return [sd.outcome(f"{A}::{n}", "passed") for n in names]


def verdicts(view) -> dict[str, str]:
    return {r.release: r.verdict for r in view.releases}


def test_a_release_without_a_test_of_the_suite_is_not_run_never_clean():
    view = view_of({"0.8.0": passing("a", "b")}, ["0.7.2", "0.8.0", "0.9.0"])
    assert verdicts(view) == {"0.7.2": "not run", "0.8.0": "clean", "0.9.0": "not run"}
    assert [r.release for r in view.columns] == ["0.8.0"]  # the table: only where it ran
    assert view.answer == "clean on 0.8.0; not run on 0.7.2, 0.9.0"
    assert view.baseline == "0.8.0" and view.regressions == ()
    skipped = view_of({"0.8.0": passing("a"), "0.9.0": [sd.outcome(f"{A}::a", "skipped")]})
    assert verdicts(skipped)["0.9.0"] == "not run"  # every test skipped: nothing ran, so not clean either


def test_a_suite_on_one_release_only_is_judged_against_nothing():
    view = view_of({"0.10.0": [sd.outcome(f"{A}::a", "failed", sd.REPLICATED)]}, ["0.8.0", "0.10.0"])
    assert view.baseline == "0.10.0" and view.regressions == ()  # failing on its baseline is not a regression
    assert verdicts(view) == {"0.8.0": "not run", "0.10.0": "fails"}
    assert view.answer == "fails without a regression on 0.10.0; not run on 0.8.0"


def test_a_release_the_lock_cannot_serve_is_named_with_its_reason_and_never_the_baseline():
    view = view_of(
        {
            "0.7.2": [sd.uninstallable()],
            "0.8.0": passing("a", "b"),
            "0.10.0": [sd.uninstallable("uv pip check: chex 0.1.90 requires jax<0.10")],
        }
    )
    assert view.baseline == "0.8.0"
    assert verdicts(view) == {"0.7.2": "uninstallable", "0.8.0": "clean", "0.10.0": "uninstallable"}
    assert view.answer == "clean on 0.8.0; cannot be installed with 0.7.2, 0.10.0"
    assert [r.reason for r in view.columns] == [
        "the lock does not install: jaxlib==0.7.2 has no wheel",
        "",
        "uv pip check: chex 0.1.90 requires jax<0.10",
    ]
    (later,) = view.regressions
    assert later.release == "0.10.0" and later.regressed == 0 and later.causes == ()
    assert later.uninstallable.startswith("uninstallable: uv pip check")
    assert view.columns[0].counts[-1] == 1 and view.rows[-1] == ("uninstallable", [1, 0, 1])


def test_a_crash_regresses_the_test_pytest_was_running_not_those_it_never_reached():
    view = view_of(
        {
            "0.8.0": passing("a", "b", "c"),
            "0.10.0": passing("a")
            + [sd.outcome(f"{A}::b", "crash", reason="signal 11"), sd.outcome(f"{A}::c", "crash", reached=False)],
        }
    )
    (found,) = view.regressions
    assert found.regressed == 1 and [c.examples for c in found.causes] == [(f"{A}::b",)]
    assert dict(found.others) == {"spurious (timeout or never reached)": 1}
    assert dict(view.rows)["crash"] == [0, 2] and verdicts(view)["0.10.0"] == "regresses"


def test_unequal_test_sets_count_each_release_and_name_what_appeared_and_vanished():
    view = view_of(
        {"0.8.0": passing("a", "b", "c"), "0.10.0": passing("a", "b") + [sd.outcome(f"{A}::d", "failed", sd.PMAP)]}
    )
    assert [r.total for r in view.columns] == [3, 3]
    assert dict(view.rows)["passed"] == [3, 2] and dict(view.rows)["failed"] == [0, 1]
    assert view.regressions == ()  # a test new on the candidate that fails is not a regression
    assert verdicts(view)["0.10.0"] == "fails"
    assert view.answer == "clean on 0.8.0; fails without a regression on 0.10.0"


def test_each_release_is_judged_against_the_baseline_and_counted_against_the_release_before():
    view = view_of(
        {
            "0.8.0": passing("a", "b", "c"),
            "0.10.0": passing("b", "c") + [sd.outcome(f"{A}::a", "failed", sd.REPLICATED)],
            "0.12.0": passing("c")
            + [sd.outcome(f"{A}::a", "failed", sd.REPLICATED), sd.outcome(f"{A}::b", "failed", sd.PMAP)],
        }
    )
    first, second = view.regressions
    assert (first.release, first.regressed, first.against_previous) == ("0.10.0", 1, None)
    assert (second.release, second.baseline, second.previous) == ("0.12.0", "0.8.0", "0.10.0")
    assert (second.regressed, second.against_previous) == (2, 1)
    by_cause = {c.signature.split(": ", 1)[1][:30]: c for c in second.causes}
    assert {k: (c.count, c.first_seen) for k, c in by_cause.items()} == {
        "module 'jax' has no attribute ": (1, "0.10.0"),
        "module 'jax.sharding' has no a": (1, "0.12.0"),
    }
    pmap = by_cause["module 'jax.sharding' has no a"]
    assert pmap.owner == "demo" and pmap.signature.endswith("@ demo/_src/asserts.py:assert_on_device")
    assert view.answer == "clean on 0.8.0; regresses against 0.8.0 from 0.10.0 (on 0.10.0, 0.12.0)"


def test_causes_are_grouped_by_signature_with_three_examples_most_tests_first():
    many = [sd.outcome(f"{A}::r{i}", "failed", sd.REPLICATED) for i in range(5)]
    view = view_of(
        {
            "0.8.0": passing(*[f"r{i}" for i in range(5)], "p"),
            "0.10.0": many + [sd.outcome(f"{A}::p", "failed", sd.PMAP)],
        }
    )
    causes = view.regressions[0].causes
    assert [(c.count, len(c.examples)) for c in causes] == [(5, 3), (1, 1)]
    assert causes[0].examples == (f"{A}::r0", f"{A}::r1", f"{A}::r2")


def test_the_reproduce_command_builds_the_environment_the_downstream_command_names_and_runs_the_node():
    node = f"{A}::test_x[a b]"
    lines = reproduce("chex==0.1.90", "chex_0_1_90", "0.10.0", "0.8.0", node).splitlines()
    assert "jax-conformance downstream chex==0.1.90 --jax 0.8.0 --jax 0.10.0 --rerun" in lines
    assert lines[-1] == f"../../../bin/python -m pytest {shlex.quote(node)}" and "'" in lines[-1]
    pattern = re.search(r"downstream/envs/(\S+) \|", lines[-2]).group(1)
    assert fnmatch.fnmatchcase(env_folder_name("chex_0_1_90", "0.10.0", "3.12", "0123456789"), pattern)
    assert not fnmatch.fnmatchcase(env_folder_name("chex_0_1_90", "0.1.0", "3.12", "0123456789"), pattern)
    assert CACHE in lines[-2] and lines[-2].endswith("/lib/python3*/site-packages")
    folder = reproduce("folder tests/team", "team", "0.6.0", "0.6.0", "test_a.py::t").splitlines()
    assert "jax-conformance downstream tests/team --jax 0.6.0 --rerun" in folder  # the baseline named once
    assert "cd tests/team" in folder and folder[-1] == '"$ENV/bin/python" -m pytest test_a.py::t'


def test_the_reproduce_command_passes_the_manifests_own_pytest_args_the_run_passed(tmp_path):
    """The run passes the manifest's `pytest_args` (`-p no:randomly`, a `-k`); the command that reproduces a
    regressed test left them out, so it could run the test otherwise than the run did."""
    from conformance.downstream.cells import to_cell
    from conformance.downstream.outcomes import NodeOutcome

    args = ("-p", "no:randomly", "-k", "not slow")
    lines = reproduce("chex==0.1.90", "chex_0_1_90", "0.10.0", "0.8.0", f"{A}::t", args).splitlines()
    assert lines[-1] == f"../../../bin/python -m pytest -p no:randomly -k 'not slow' {A}::t"
    assert to_cell("x", "x==1", NodeOutcome("t.py::t", "passed"), "k", [], {}, (), args).details["pytest_args"] == [
        *args
    ]
    assert "pytest_args" not in to_cell("x", "x==1", NodeOutcome("t.py::t", "passed"), "k", [], {}, ()).details
    suite = sd.demo_suite()
    for cell in suite["0.12.0.1"]:  # recorded by the newer run only: the older release's command has none
        cell["details"]["pytest_args"] = list(args)
    sd.write_files(tmp_path / "r", suite)
    (view,) = downstream_view(merge_files(load_results(tmp_path / "r"))).suites
    commands = {r.release: r.causes[0].reproduce.splitlines()[-1] for r in view.regressions if r.causes}
    assert commands["0.12.0.1"].startswith("../../../bin/python -m pytest -p no:randomly -k 'not slow' demo/")
    assert commands["0.11.2"].startswith("../../../bin/python -m pytest demo/")


def test_no_downstream_cell_no_section_and_several_platforms_name_theirs(tmp_path):
    synth.write(tmp_path / "probes", "0.8.0", "linux-x86_64", [synth.cell("demo.case")])
    assert downstream_view(merge_files(load_results(tmp_path / "probes"))) is None
    for platform in ("linux-x86_64", "darwin-arm64"):
        sd.write_files(tmp_path / "two", {"0.8.0": sd.suite_cells(passing("a"))}, platform)
    view = downstream_view(merge_files(load_results(tmp_path / "two")))
    assert [s.label for s in view.suites] == ["demo==1.0 on darwin-arm64", "demo==1.0 on linux-x86_64"]
    assert [s.anchor for s in view.suites] == ["downstream-0", "downstream-1"]


def demo_files(folder):
    """The demo suite in the same result files as a probe's cells, as `downstream` stores it beside a run's."""
    suite = sd.demo_suite()
    sd.write_files(
        folder,
        {v: [synth.cell("demo.case")] + suite.get(v, []) for v in ["0.4.38", "0.7.2", "0.8.0", "0.11.2", "0.12.0.1"]},
    )
    return folder


def test_the_markdown_summary_counts_each_release_and_names_the_causes(tmp_path):
    view = downstream_view(merge_files(load_results(demo_files(tmp_path / "r"))))
    lines = downstream_summary(view, text, code, "https://x.example/")
    page = "\n".join(lines)
    assert "## Downstream test suites" in page and "(https://x.example/#downstream)" in page
    assert (
        "**demo==1.0**: clean on 0.8.0; regresses against 0.8.0 from 0.11.2 (on 0.11.2, 0.12.0.1); cannot be "
        "installed with 0.7.2; not run on 0.4.38."
    ) in page
    # only the statuses some release has, a release a row; a release without a test is no row
    assert (
        "| release | passed | failed | skipped | flaky | collection error | crash | uninstallable | tests | "
        "verdict |" in lines
    )
    assert "| 0.8.0 | 8 | 0 | 1 | 0 | 0 | 0 | 0 | 9 | clean (baseline) |" in lines
    assert "| 0.11.2 | 3 | 3 | 1 | 1 | 0 | 1 | 0 | 9 | regresses |" in lines
    assert not any(line.startswith("| 0.4.38") for line in lines)
    assert "jax 0.12.0.1: 4 regressed tests against 0.8.0 (1 against 0.11.2):" in lines
    assert (
        "- 2 tests: `AttributeError: module 'jax' has no attribute 'device_put_replicated' @ "
        "jax/_src/deprecations.py:getattr`; e.g. `demo/_src/a_test.py::test_0`"
    ) in lines
    assert "Cannot be installed with jax 0.7.2: `the lock does not install: jaxlib==0.7.2 has no wheel`." in lines
    assert downstream_summary(None, text, code, "") == []


def test_the_report_shows_the_section_and_keeps_the_tests_out_of_the_table_of_probes(tmp_path):
    out, markdown = tmp_path / "index.html", tmp_path / "summary.md"
    render_results(demo_files(tmp_path / "r"), out, outputs={"markdown": markdown}, releases=["0.8.0"])
    html = out.read_text(encoding="utf-8")
    assert '<li><a href="#downstream">Downstream test suites</a></li>' in html
    assert '<section class="downstream" id="downstream"' in html and '<h3 id="downstream-0">demo==1.0</h3>' in html
    assert "1 cells each" in html  # the probe's cell, not the suite's nine tests
    assert 'role="region" tabindex="0" aria-label="demo==1.0: tests per status on each release"' in html
    assert "pytest demo/_src/a_test.py::test_0</pre>" in html
    assert "## Downstream test suites" in markdown.read_text(encoding="utf-8")


def test_a_report_of_suites_and_no_probe_says_only_what_its_suites_hold(tmp_path):
    folder = tmp_path / "r"
    sd.write_files(folder, sd.demo_suite())
    out = tmp_path / "index.html"
    render_results(folder, out, releases=["0.8.0"])
    html = out.read_text(encoding="utf-8")
    assert "1 downstream test suite run on 4 JAX versions × 1 platform, no probe." in html
    assert '<a class="skip" href="#downstream" id="skip">' in html and 'href="#overview"' not in html
    hidden = html.index('<div class="probeonly" hidden>')
    assert hidden < html.index('<h2 id="overview">') < html.index('<section class="downstream"')
    assert (
        "demo==1.0: clean on 0.8.0; regresses against 0.8.0 from 0.11.2 (on 0.11.2, 0.12.0.1); cannot be "
        "installed with 0.7.2.</p>"
    ) in html  # the closing line
    with_probe = tmp_path / "probe.html"
    render_results(demo_files(tmp_path / "p"), with_probe, releases=["0.8.0"])
    assert '<div class="probeonly" hidden>' not in with_probe.read_text(encoding="utf-8")


def test_the_markdown_of_suites_and_no_probe_says_only_what_its_suites_hold(tmp_path):
    """The Markdown page printed the empty probe overview ("0 cells each", "## Overview") and the probes' legend for
    a report of downstream suites only; the HTML page hides them (`suites_only`)."""
    folder, markdown = tmp_path / "r", tmp_path / "summary.md"
    sd.write_files(folder, sd.demo_suite())
    render_results(folder, tmp_path / "index.html", outputs={"markdown": markdown}, releases=["0.8.0"])
    page = markdown.read_text(encoding="utf-8")
    assert "1 downstream test suite run on 4 JAX versions × 1 platform, no probe." in page
    assert "## Downstream test suites" in page and "**demo==1.0**: clean on 0.8.0" in page
    for probes_only in ("## Overview", "## Legend", "#legend", "cells each", "Behaviours that the chapter"):
        assert probes_only not in page, probes_only
    with_probe = tmp_path / "probe.md"
    render_results(
        demo_files(tmp_path / "p"), tmp_path / "p.html", outputs={"markdown": with_probe}, releases=["0.8.0"]
    )
    said = with_probe.read_text(encoding="utf-8")
    assert "## Overview" in said and "## Legend" in said and "## Downstream test suites" in said


def test_a_test_failing_on_the_baseline_that_passes_then_fails_again_regressed_against_the_release_before(tmp_path):
    failing = [sd.outcome(f"{A}::a", "failed", sd.REPLICATED)]
    by_release = {"0.8.0": failing + passing("b"), "0.9.0": passing("a", "b"), "0.10.0": failing + passing("b")}
    view = view_of(by_release)
    assert verdicts(view) == {"0.8.0": "fails", "0.9.0": "clean", "0.10.0": "fails"}
    (found,) = view.regressions
    assert (found.release, found.regressed, found.against_previous, found.previous) == ("0.10.0", 0, 1, "0.9.0")
    assert found.causes == () and [c.examples for c in found.previous_only] == [(f"{A}::a",)]
    assert dict(found.others) == {"broken on both, same cause": 1}
    lines = downstream_summary(downstream_view_of(view), text, code, "")
    assert "jax 0.10.0: 0 regressed tests against 0.8.0 (1 against 0.9.0)." in lines
    assert "Regressed against the release before only (these failed on the baseline too):" in lines
    sd.write_files(tmp_path / "r", {v: sd.suite_cells(o) for v, o in by_release.items()})
    render_results(tmp_path / "r", tmp_path / "index.html", releases=list(by_release))
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<p>Regressed against the release before only (these failed on the baseline too):</p>" in html


def downstream_view_of(view):
    from conformance.report.downstreamview import DownstreamView

    return DownstreamView((view,))


def test_a_label_with_a_line_break_stays_in_the_reproduce_commands_comment():
    # the label is a result file's text: a line break in it must not end the comment and start a command
    hostile = "folder team\ntouch pwned"
    for label in (hostile, hostile[len("folder ") :]):
        script = reproduce(label, "team", "0.6.0", "0.6.0", "test_a.py::t")
        words = list(shlex.shlex(script, posix=True, punctuation_chars=True))
        assert "touch" not in words and "pwned" not in words, script
        assert script.splitlines()[0].startswith("# the environment of ") and "\\n" in script.splitlines()[0]


def test_a_suites_hostile_text_reaches_neither_page_as_a_tag(tmp_path):
    # a suite's node ids, failure messages and install reasons are its own text: no tag of theirs in the raw pages
    node = f"{A}::test_x[<img src=x onerror=alert(1)>]"
    failure = ("AssertionError", "<script>alert(1)</script> | `tick`\n\x1b[31mred", "demo/_src/asserts.py", "f")
    folder = tmp_path / "r"
    sd.write_files(
        folder,
        {
            "0.7.2": sd.suite_cells([sd.uninstallable("no wheel: <b>bold</b>")]),
            "0.8.0": sd.suite_cells([sd.outcome(node, "passed")]),
            "0.9.0": sd.suite_cells([sd.outcome(node, "failed", failure)]),
        },
    )
    out, markdown = tmp_path / "index.html", tmp_path / "summary.md"
    render_results(folder, out, outputs={"markdown": markdown}, releases=["0.8.0"])
    page, html = markdown.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    assert "regressed test against 0.8.0" in page and "onerror" in page and "alert(1)" in page
    for tag in ("<script>", "<img", "<b>"):
        assert not re.search(r"(?<!\\)" + re.escape(tag), page), tag  # Markdown: a `<` escaped as `\<` is no tag
        assert tag not in html.split('<script type="application/json"')[0]
    assert "\x1b" not in page and "\x1b" not in html


def test_the_answers_edges_a_flaky_only_release_many_not_run_one_regressing_release_and_none():
    flaky = view_of({"0.8.0": passing("a"), "0.9.0": [sd.outcome(f"{A}::a", "flaky", rerun="passed")]})
    assert verdicts(flaky)["0.9.0"] == "clean"  # a test that passed on a rerun ran and passed
    many = [f"0.{i}.0" for i in range(1, 9)]
    counted = view_of({"0.9.0": passing("a")}, [*many, "0.9.0"])
    assert counted.answer == "clean on 0.9.0; not run on 8 other releases of this report"
    named = view_of({"0.9.0": passing("a")}, [*many[:6], "0.9.0"])
    assert named.answer == "clean on 0.9.0; not run on 0.1.0, 0.2.0, 0.3.0, 0.4.0, 0.5.0, 0.6.0"
    failing = [sd.outcome(f"{A}::a", "failed", sd.REPLICATED)]
    one = view_of({"0.8.0": passing("a"), "0.9.0": failing})
    assert one.answer == "clean on 0.8.0; regresses against 0.8.0 from 0.9.0"  # no "(on 0.9.0)" for one release
    assert suite_view(sd.LABEL, sd.IDENT, "linux-x86_64", {}, []).answer == "no test ran"


def test_the_release_before_is_the_last_one_the_suite_was_installed_on():
    failing = [sd.outcome(f"{A}::a", "failed", sd.REPLICATED)]
    view = view_of(
        {
            "0.8.0": passing("a", "b"),
            "0.9.0": failing + passing("b"),
            "0.10.0": [sd.uninstallable()],
            "0.11.0": failing + [sd.outcome(f"{A}::b", "failed", sd.PMAP)],
        }
    )
    last = view.regressions[-1]
    assert (last.release, last.previous, last.against_previous) == ("0.11.0", "0.9.0", 1)  # b only, against 0.9.0
