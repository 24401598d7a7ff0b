"""`api scan`'s outputs (`conformance.api.findings`) in full: the GitHub annotations' escapes, SARIF's paths, rules,
tool and information address, and the text summary. Pure, no JAX."""

from __future__ import annotations

import json

from conformance.api.findings import artifact, github_lines, render, sarif_log, text_lines
from conformance.api.judge import FINDING_STATES, Finding

TYPO = Finding("src\\win dows.py", 2, 7, "jax.nu_mpy", "not_yet", "0.6.1", "a\r\nb, c: 50%", "")


def test_github_annotations_escape_every_character_the_runner_reads():
    (line,) = github_lines([TYPO])
    assert line == (
        "::notice file=src\\win dows.py,line=2,col=7,title=jax%3A jax.nu_mpy not yet::"
        "jax.nu_mpy not yet (since 0.6.1): a%0D%0Ab, c: 50%25"
    )
    (named,) = github_lines([Finding("a,b:c.py", 1, 1, "jax.x", "missing", "1", "m")])
    assert named.startswith("::error file=a%2Cb%3Ac.py,line=1,col=1,title=jax%3A jax.x missing::")


def test_a_sarif_result_is_located_in_its_file_and_the_tool_says_who_it_is():
    assert artifact("src\\win dows.py") == {"uri": "src/win%20dows.py", "uriBaseId": "%SRCROOT%"}
    assert artifact("C:\\work\\a.py") == {"uri": "file:///C:/work/a.py"}
    log = sarif_log([TYPO], "0.2.0")
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "jax-conformance" and driver["version"] == driver["semanticVersion"] == "0.2.0"
    assert "informationUri" not in driver
    assert (
        sarif_log([], "0.2.0", "https://example.org/jc")["runs"][0]["tool"]["driver"]["informationUri"]
        == "https://example.org/jc"
    )
    assert [rule["id"] for rule in driver["rules"]] == [f"jax-api/{state}" for state in FINDING_STATES]
    assert [rule["id"] for rule in driver["rules"]][:4] == [
        "jax-api/removed",
        "jax-api/missing",
        "jax-api/deprecated",
        "jax-api/not_yet",
    ]
    (result,) = log["runs"][0]["results"]
    assert result["ruleIndex"] == 3 and result["level"] == "note"
    assert result["properties"] == {"name": "jax.nu_mpy", "state": "not_yet", "since": "0.6.1"}
    assert log["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_the_text_summary_counts_each_state_and_names_the_target():
    removal = Finding("a.py", 1, 1, "jax.tree_map", "removed", "0.6.0", "gone: use jax.tree.map", "jax.tree.map")
    assert text_lines([removal], "0.6.2", files=3) == [
        "a.py:1:1: jax.tree_map removed (since 0.6.0): gone: use jax.tree.map",
        "1 finding(s) in 3 file(s) against jax 0.6.2: 1 removed",
    ]
    other = Finding("a.py", 1, 1, "jax.tree_map", "removed", "0.6.0", "gone", "jax.tree.map")
    assert render([other], "text", "0.6.2").splitlines() == [
        "a.py:1:1: jax.tree_map removed (since 0.6.0): gone [use jax.tree.map]",
        "1 finding(s) in 0 file(s) against jax 0.6.2: 1 removed",
    ]
    assert render([], "text", "0.6.2", "0.5.3") == "0 finding(s) in 0 file(s) against jax 0.6.2 (from 0.5.3)"
    assert render([], "github", "0.6.2") == ""


def test_a_sentence_adds_the_replacement_only_when_jaxs_words_do_not_name_it():
    base = dict(path="a.py", line=1, col=1, name="jax.x_y", state="not_yet", since="0.6.1")
    assert (
        render([Finding(**base, message="m", replacement="")], "text", "1").splitlines()[0]
        == "a.py:1:1: jax.x_y not yet (since 0.6.1): m"
    )
    assert (
        render([Finding(**base, message="use jax.z", replacement="jax.z")], "text", "1").splitlines()[0]
        == "a.py:1:1: jax.x_y not yet (since 0.6.1): use jax.z"
    )


def test_json_and_sarif_are_indented_by_one_and_keep_non_ascii_text_escaped():
    """Non-ASCII text survives as JSON escapes: the bytes stay ASCII, so no C1 control (a raw CSI) reaches a
    terminal that shows the file (issue 43), and a JSON reader gets the text back."""
    finding = Finding("é.py", 1, 2, "jax.x", "missing", "≤0.5.3", "jax 0.6.2 has no jax.x")
    out = render([finding], "json", "0.6.2")
    assert out == (
        '{\n "format": 1,\n "findings": [\n  {\n   "path": "\\u00e9.py",\n   "line": 1,\n   "col": 2,\n'
        '   "name": "jax.x",\n'
        '   "state": "missing",\n   "since": "\\u22640.5.3",\n   "message": "jax 0.6.2 has no jax.x",\n'
        '   "replacement": null\n  }\n ]\n}'
    )
    assert out.isascii() and json.loads(out)["findings"][0]["path"] == "é.py"
    sarif = render([finding], "sarif", "0.6.2", version="0.2.0")
    assert sarif.startswith('{\n "$schema": ') and sarif.isascii() and '"since": "\\u22640.5.3"' in sarif
    two = [finding, Finding("b.py", 3, 1, "jax.y", "deprecated", "0.6.0", "m")]
    assert render(two, "github", "0.6.2") == "\n".join(github_lines(two))
    assert render(two, "github", "0.6.2").count("\n") == 1


def test_sarif_names_a_replacement_in_the_results_properties_and_the_defaults_are_empty():
    removal = Finding("a.py", 1, 1, "jax.tree_map", "removed", "0.6.0", "gone", "jax.tree.map")
    (result,) = sarif_log([removal], "0.2.0")["runs"][0]["results"]
    assert result["properties"] == {
        "name": "jax.tree_map",
        "state": "removed",
        "since": "0.6.0",
        "replacement": "jax.tree.map",
    }
    driver = json.loads(render([removal], "sarif", "0.6.2"))["runs"][0]["tool"]["driver"]
    assert driver["version"] == driver["semanticVersion"] == ""  # no version given: none claimed
    assert text_lines([], "0.6.2") == ["0 finding(s) in 0 file(s) against jax 0.6.2"]
