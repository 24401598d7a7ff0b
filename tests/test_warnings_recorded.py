"""Warnings are facts too: the deprecation warnings a probe triggers are recorded, stored, compared like printed
facts, and never change a status."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from conformance.child.main import observe
from conformance.core.case import forget_package
from conformance.core.observation import ProcessOutcome
from conformance.core.status import Status
from conformance.core.verdict import judge
from conformance.decide.diff import diff_sets, result_set
from conformance.decide.gate import PRINTED, gate
from conformance.results.schema import CellResult
from tests.synthetic_results import cell, files

# A stand-in for jax/_src/deprecations.py: the recorder reads the deprecation from this file's frames.
FAKE_DEPRECATIONS = """
import functools, warnings

def warn(deprecation_id, message, stacklevel):
    warnings.warn(message, category=DeprecationWarning, stacklevel=stacklevel + 1)

def deprecation_getattr(module, deprecations):
    @functools.cache
    def getattr(name):
        if name in deprecations:
            message, fn = deprecations[name]
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return fn
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return getattr
"""

PROBES = """
import warnings
from conformance.core.case import Expect, Observation, Section

SECTION = Section("§W", "Warnings")


@SECTION.case(rows=["w.deprecated"], claim="Warns.", expect=Expect({"answer": 42}))
def deprecated():
    from fakejax.jax._src import deprecations
    import fakejax.oldapi as oldapi

    deprecations.warn("jax-fake-positional-args", "passing positional args is deprecated", stacklevel=1)
    oldapi.old_function                                   # a deprecated module attribute
    for _ in range(2):                                    # the same warning twice is recorded once
        warnings.warn("dtype will change", FutureWarning)
    warnings.warn("a user warning is shown, not recorded", UserWarning)
    import fakejax.warns_on_import                        # a warning while a module body runs: left out
    return Observation({"answer": 42})


@SECTION.case(rows=["w.own"], claim="Records its own warnings.", expect=Expect({"answer": 42}))
def own():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("caught by the probe itself", DeprecationWarning)
    return Observation({"answer": 42 if len(caught) == 1 else 0})
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A case package `warnfixture` and a fake `fakejax` whose `jax/_src/deprecations.py` warns as jax does."""
    (tmp_path / "warnfixture").mkdir()
    (tmp_path / "warnfixture" / "__init__.py").write_text("")
    (tmp_path / "warnfixture" / "probes.py").write_text(PROBES)
    deprecations = tmp_path / "fakejax" / "jax" / "_src"
    deprecations.mkdir(parents=True)
    for folder in (tmp_path / "fakejax", tmp_path / "fakejax" / "jax", deprecations):
        (folder / "__init__.py").write_text("")
    (deprecations / "deprecations.py").write_text(FAKE_DEPRECATIONS)
    (tmp_path / "fakejax" / "oldapi.py").write_text(
        textwrap.dedent("""
        from fakejax.jax._src.deprecations import deprecation_getattr as _getattr
        _deprecations = {"old_function": ("fakejax.oldapi.old_function is deprecated", len)}
        __getattr__ = _getattr(__name__, _deprecations)
    """)
    )
    (tmp_path / "fakejax" / "warns_on_import.py").write_text(
        "import warnings\nwarnings.warn('warned while importing', DeprecationWarning)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "warnfixture"
    forget_package("warnfixture")
    for name in [m for m in sys.modules if m.startswith("fakejax")]:
        del sys.modules[name]


def test_a_probe_records_its_deprecation_and_future_warnings_with_the_jax_deprecation(package):
    with pytest.warns(UserWarning, match="a user warning is shown, not recorded"):  # other warnings: shown as before
        record = observe("warnfixture/probes.deprecated", "", package)
    assert record["outcome"] == "observed" and record["facts"] == {"answer": 42}
    assert record["warnings"] == [
        {
            "category": "DeprecationWarning",
            "message": "passing positional args is deprecated",
            "module": "warnfixture.probes",
            "deprecation": "jax-fake-positional-args",
        },
        {
            "category": "DeprecationWarning",
            "message": "fakejax.oldapi.old_function is deprecated",
            "module": "warnfixture.probes",
            "deprecation": "fakejax.oldapi.old_function",
        },
        {
            "category": "FutureWarning",
            "message": "dtype will change",
            "module": "warnfixture.probes",
            "deprecation": "",
        },
    ]


def test_warnings_a_probe_catches_itself_stay_its_own_and_a_quiet_probe_has_no_warnings_key(package):
    record = observe("warnfixture/probes.own", "", package)
    assert record["facts"] == {"answer": 42} and "warnings" not in record


def _judged(warned):
    record = {
        "schema": 2,
        "case": "a.b",
        "param": "",
        "outcome": "observed",
        "facts": {"x": 1},
        "details": {},
        "warnings": warned,
    }
    return judge(ProcessOutcome(0, False, "", "", 0.1), json.dumps(record), {"x": 1}, "0.12.0.1")


def test_warnings_reach_the_cell_and_never_change_its_status():
    warned = [{"category": "DeprecationWarning", "message": "m", "module": "jax.numpy", "deprecation": "jax-x"}]
    found = _judged(warned)
    assert found.status is Status.CONFORMS and found.warnings == warned
    assert _judged([{"category": 3}, "junk"]).warnings == []  # malformed entries are left out
    stored = CellResult.from_json({**cell("a.b"), "warnings": warned})
    assert stored.warnings == warned and CellResult.from_json(stored.to_json()).warnings == warned


def test_a_new_warning_is_a_printed_output_change_in_diff_and_gate():
    warned = [{"category": "DeprecationWarning", "message": "x is deprecated", "module": "jax", "deprecation": "jax-x"}]
    before = result_set([files("0.11.2", "linux-x86_64", [cell("a.b")])], "baseline")
    after = result_set([files("0.12.0.1", "linux-x86_64", [cell("a.b", warnings=warned)])], "candidate")
    (change,) = diff_sets(before, after).changes
    assert change.printed_only and [d.observed for d in change.printed_differences] == [
        "DeprecationWarning: x is deprecated [jax-x] (jax)"
    ]
    outcome = gate(diff_sets(before, after))
    assert outcome.exit_code == 0 and [j.kind for j in outcome.printed] == [PRINTED]
    assert gate(diff_sets(before, after), fail_on_printed=True).exit_code == 1


def test_the_report_marks_a_cell_with_warnings_and_lists_them_in_its_panel():
    from conformance.report.html import render_html
    from conformance.report.model import build_model

    warned = [
        {"category": "DeprecationWarning", "message": "x <is> deprecated", "module": "jax", "deprecation": "jax-x"}
    ]
    model = build_model([files("0.12.0.1", "linux-x86_64", [cell("a.warns", warnings=warned), cell("a.quiet")])], [])
    page = render_html(model, "2026-12-01T00:00:00+00:00")
    data = json.loads(page.split('<script type="application/json" id="data">')[1].split("</script>")[0])
    by_row = {row["id"]: cells[0].get("wn") for row, cells in zip(data["rows"], data["cells"])}
    # The page draws the W mark from `wn` (tests/test_browser_navigation.py sees it drawn).
    assert by_row == {"a.warns": ["DeprecationWarning: x <is> deprecated [jax-x] (jax)"], "a.quiet": None}
    assert "<h3>Deprecation warnings" in page
