"""A scan's findings written out (pure): text, JSON, GitHub workflow annotations or SARIF 2.1.0.

- text: `path:line:col: STATE name (since V): message [use R]`, then a summary line (each line made safe for a
  terminal and a CI log by `conformance.safetext`: a control character is an escape, no line a workflow command);
- json: `{"findings": [{"path", "line", "col", "name", "state", "since", "message", "replacement"}]}` (col is
  1-based, in characters, as in every format; replacement is null when JAX names none);
- github: one workflow command per finding, `::error` for removed and missing, `::warning` for deprecated,
  `::notice` for not_yet, guarded and not_judged (`file=`, `line=`, `col=`, `title=`; values escaped as the runner's
  toolkit does, other control characters as escapes);
- sarif: a SARIF 2.1.0 log with one run of the tool `jax-conformance`, one rule per state, one result per finding
  (level error, warning or note), each located in its file (relative paths against `%SRCROOT%`; columns in
  Unicode code points, `columnKind`).

JSON and SARIF are written in ASCII (Unicode escapes such as `\\u00e9`): a control character in a name or file name
is never raw.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote_from_bytes
from collections.abc import Sequence
from typing import Any

from conformance.api.judge import FINDING_STATES, Finding
from conformance.safetext import terminal_text, workflow_data, workflow_property

FORMATS = ("text", "json", "github", "sarif")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {
    "removed": "error",
    "missing": "error",
    "deprecated": "warning",
    "not_yet": "note",
    "guarded": "note",
    "not_judged": "note",
}
COMMANDS = {"error": "error", "warning": "warning", "note": "notice"}
RULES = {
    "removed": "a JAX name (or keyword argument) the target release removed: the code fails there",
    "missing": "a JAX name (or keyword argument) the target release does not have: the code fails there",
    "deprecated": "a JAX name the target release deprecates: it warns there and goes in a later release",
    "not_yet": "a JAX name the current release (--from) does not have yet",
    "guarded": "a JAX name the target release lacks, used where the code already copes (hasattr, try/except, a "
    "version compare)",
    "not_judged": "a use the census does not cover (a private module, a dunder, a module skipped or not imported)",
}


def sentence(finding: Finding) -> str:
    """The finding's message as one sentence: state, since, JAX's words and the replacement."""
    text = f"{finding.name} {finding.state.replace('_', ' ')} (since {finding.since}): {finding.message}"
    if finding.replacement and finding.replacement not in finding.message:
        text += f" [use {finding.replacement}]"
    return text


def text_lines(findings: Sequence[Finding], to: str, before: str = "", files: int = 0) -> list[str]:
    """One line per finding, then the summary."""
    lines = [terminal_text(f"{f.path}:{f.line}:{f.col}: {sentence(f)}") for f in findings]
    counted = Counter(f.state for f in findings)
    parts = [f"{counted[state]} {state.replace('_', ' ')}" for state in FINDING_STATES if counted[state]]
    against = f"jax {to}" + (f" (from {before})" if before else "")
    lines.append(
        f"{len(findings)} finding(s) in {files} file(s) against {against}" + (f": {', '.join(parts)}" if parts else "")
    )
    return lines


def findings_json(findings: Sequence[Finding]) -> dict[str, Any]:
    """The public JSON shape of `api scan --json PATH` (`format`, the shape's version, since issue 60)."""
    return {"format": 1, "findings": [f.to_json() for f in findings]}


def github_lines(findings: Sequence[Finding]) -> list[str]:
    """GitHub workflow commands: one annotation per finding."""
    lines = []
    for f in findings:
        command = COMMANDS[LEVELS[f.state]]
        props = ",".join(
            [
                f"file={workflow_property(f.path)}",
                f"line={f.line}",
                f"col={f.col}",
                f"title={workflow_property(f'jax: {f.name} ' + f.state.replace('_', ' '))}",
            ]
        )
        lines.append(f"::{command} {props}::{workflow_data(sentence(f))}")
    return lines


def artifact(path: str) -> dict[str, str]:
    """SARIF's artifactLocation of a path: relative to `%SRCROOT%`, or an absolute file URI. A file name that is not
    UTF-8 (its bytes kept by Python as surrogate escapes) is percent-encoded from its own bytes, so the URI names
    that very file and the log is always written."""
    for flavour in (PurePosixPath, PureWindowsPath):
        if flavour(path).is_absolute():
            try:
                return {"uri": flavour(path).as_uri()}
            except UnicodeEncodeError:  # a Windows-style path with a surrogate: its bytes, as on POSIX
                return {
                    "uri": "file:///" + quote_from_bytes(os.fsencode(path.replace("\\", "/")).lstrip(b"/"), safe="/:")
                }
    return {"uri": quote_from_bytes(os.fsencode(path.replace("\\", "/"))), "uriBaseId": "%SRCROOT%"}


def sarif_log(findings: Sequence[Finding], version: str, information_uri: str = "") -> dict[str, Any]:
    """A SARIF 2.1.0 log of the findings."""
    driver: dict[str, Any] = {
        "name": "jax-conformance",
        "version": version,
        "semanticVersion": version,
        "rules": [
            {
                "id": f"jax-api/{state}",
                "name": state,
                "shortDescription": {"text": RULES[state]},
                "defaultConfiguration": {"level": LEVELS[state]},
            }
            for state in FINDING_STATES
        ],
    }
    if information_uri:
        driver["informationUri"] = information_uri
    results = []
    for f in findings:
        results.append(
            {
                "ruleId": f"jax-api/{f.state}",
                "ruleIndex": FINDING_STATES.index(f.state),
                "level": LEVELS[f.state],
                "message": {"text": sentence(f)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifact(f.path),
                            "region": {"startLine": f.line, "startColumn": f.col},
                        }
                    }
                ],
                "properties": {
                    "name": f.name,
                    "state": f.state,
                    "since": f.since,
                    **({"replacement": f.replacement} if f.replacement else {}),
                },
            }
        )
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
    }


def render(findings: Sequence[Finding], fmt: str, to: str, before: str = "", files: int = 0, version: str = "") -> str:
    """The findings in format `fmt` (one of `FORMATS`), as the text to print."""
    if fmt == "json":
        return json.dumps(findings_json(findings), indent=1, ensure_ascii=True)
    if fmt == "github":
        return "\n".join(github_lines(findings))
    if fmt == "sarif":
        return json.dumps(sarif_log(findings, version), indent=1, ensure_ascii=True)
    return "\n".join(text_lines(findings, to, before, files))
