"""The rules by which wpt.fyi ingests a wptreport, transcribed from its source as a checker: what a report must be for
the results processor to accept it as one product run. No JSON Schema can say most of them (test names unique
within the report, a test's subtests unique, the run_info keys read as strings), and web-platform-tests publishes
no schema at all, so the project's tests check its wptreports against these rules as well as against the project's
own schema (conformance/report/schemas/wptreport.schema.json).

Read at web-platform-tests/wpt.fyi commit 227055c7f4f90745d581124e451cb6c7b81bd6a5:
- results-processor/wptreport.py (`WPTReport.load_json`, `_add_chunk`, `summarize`, `finalize`, `product_id`,
  `sha_product_path`, `test_run_metadata`, `write_result_directory`; errors `InvalidJSONError`,
  `InsufficientDataError`, `ConflictingDataError`, `MissingMetadataError`);
- results-processor/processor.py (`process_report`: load every file of the run, then `finalize`);
- api/receiver/create_run.go (`full_revision_hash`, the report's `revision`, must be 40 characters);
- api/query/cache/index/index.go (a test's subtests with one name are kept once, the others dropped);
- shared/statuses.go (the statuses wpt.fyi knows; any other is stored as UNKNOWN);
and web-platform-tests/wpt tools/wptrunner/wptrunner/wpttest.py (`TestharnessResult.statuses`,
`TestharnessSubtestResult.statuses`) with tools/wptrunner/wptrunner/formatters/wptreport.py at commit
646c33815d71d1ed597d3f0bb5e1057036512e31 (what a report of one run holds).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

# run_info keys the processor reads as strings: required (`product_id`, `test_run_metadata`) and optional.
REQUIRED_RUN_INFO = ("product", "browser_version", "os", "revision")
OPTIONAL_RUN_INFO = ("os_version", "browser_channel")
# results-processor/wptreport.py IGNORED_CONFLICTS: run_info keys chunks of one run may disagree on.
IGNORED_CONFLICTS = frozenset({"browser_build_id", "browser_changeset", "version", "os_build"})
# A testharness test's statuses (wptrunner's TestharnessResult, and SKIP for a test not run), all known to wpt.fyi.
TEST_STATUSES = frozenset({"OK", "ERROR", "TIMEOUT", "CRASH", "PRECONDITION_FAILED", "SKIP"})
SUBTEST_STATUSES = frozenset({"PASS", "FAIL", "TIMEOUT", "NOTRUN", "PRECONDITION_FAILED"})
COMMIT = re.compile(r"[0-9a-f]{40}")


def _load(text: str | bytes) -> tuple[dict[str, Any] | None, list[str]]:
    """`load_json`: UTF-8 JSON (control characters allowed in strings, `strict=False`) with a `results` field."""
    try:
        report = json.loads(text.decode("utf-8") if isinstance(text, bytes) else text, strict=False)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, ["InvalidJSONError: Invalid JSON"]
    if not isinstance(report, dict):
        return None, ["InvalidJSONError: the report is not an object"]
    if "results" not in report:
        return None, ["InsufficientDataError: Missing 'results' field"]
    if not isinstance(report["results"], list) or not isinstance(report.get("run_info", {}), dict):
        return None, ["TypeError: `results` must be a list and `run_info` an object (`_add_chunk`)"]
    return report, []


def _merge(chunks: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """`_add_chunk` on each file of one run: results joined; a run_info key two files give differently is a
    conflict unless the processor ignores it."""
    merged: dict[str, Any] = {"results": [], "run_info": {}}
    problems = []
    for chunk in chunks:
        merged["results"].extend(chunk["results"])
        for key, value in chunk.get("run_info", {}).items():
            if key in merged["run_info"] and merged["run_info"][key] != value and key not in IGNORED_CONFLICTS:
                problems.append(f"ConflictingDataError: run_info {key}: [{value!r}, {merged['run_info'][key]!r}]")
            merged["run_info"].setdefault(key, value)
        for key in ("time_start", "time_end"):
            if key in chunk:
                merged[key] = (
                    chunk[key] if key not in merged else (min if key == "time_start" else max)(merged[key], chunk[key])
                )
    return merged, problems


def _run_info_problems(report: dict[str, Any]) -> list[str]:
    """`product_id`, `sha_product_path`, `test_run_metadata`, `normalize_version`, `prepare_labels` and the
    receiver's check of `full_revision_hash`."""
    info = report["run_info"]
    problems = [
        f"MissingMetadataError: Missing required metadata '{key}'" for key in REQUIRED_RUN_INFO if key not in info
    ]
    problems += [
        f"TypeError: run_info {key} is {type(info[key]).__name__}, not a string (joined into the product id)"
        for key in REQUIRED_RUN_INFO + OPTIONAL_RUN_INFO
        if key in info and not isinstance(info[key], str)
    ]
    problems += [
        f"run_info {key} is empty (wpt.fyi would show a run without it)"
        for key in REQUIRED_RUN_INFO
        if info.get(key) == ""
    ]
    revision = info.get("revision")
    if isinstance(revision, str) and len(revision) != 40:
        problems.append("create_run.go: full_revision_hash must be the full SHA (40 chars)")
    elif isinstance(revision, str) and not COMMIT.fullmatch(revision):
        problems.append(f"revision {revision!r} is not a commit (40 lowercase hex digits)")
    for key in ("time_start", "time_end"):
        value = report.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            problems.append(f"{key} {value!r} is not milliseconds since the epoch")
    return problems


def _path_problems(names: list[str]) -> list[str]:
    """`write_result_directory` writes each result to the upload folder + its test name: the name starts with `/`,
    and its parts make a path inside that folder, where no test's file is another test's folder."""
    problems = []
    for name in names:
        parts = name[1:].split("/")
        if any(part in ("", ".", "..") for part in parts) or "\0" in name:
            problems.append(f"test {name!r} is not a path inside the upload folder")
    files = set(names)
    problems += [
        f"test {name!r} lies in a folder that is another test's file"
        for name in names
        if any(name.rsplit("/", k)[0] in files for k in range(1, name.count("/")))
    ]
    return problems


def _result_problems(results: list[Any]) -> list[str]:
    """`summarize` (each test once, read as `test`, `status`, `subtests` with their `status`), index.go (each
    subtest name once) and the statuses wptrunner writes for a testharness test."""
    problems: list[str] = []
    names: list[str] = []
    seen: set[str] = set()
    for result in results:
        if not isinstance(result, dict) or not isinstance(result.get("test"), str):
            problems.append(f"KeyError: a result without a test name: {str(result)[:80]}")
            continue
        name = result["test"].strip()
        if not name.startswith("/"):
            problems.append(f"AssertionError: test {name!r} does not start with '/'")
        if name in seen:
            problems.append(f"ConflictingDataError: Conflicting '{name}' found in the merged report")
        seen.add(name)
        names.append(name)
        if result.get("status") not in TEST_STATUSES:
            problems.append(f"{name}: status {result.get('status')!r} is not a testharness test status")
        subtests = result.get("subtests")
        if not isinstance(subtests, list):
            problems.append(f"KeyError: {name} has no subtests list")
            continue
        sub_names: set[Any] = set()
        for subtest in subtests:
            if not isinstance(subtest, dict) or not isinstance(subtest.get("name"), str):
                problems.append(f"{name}: a subtest without a name")
                continue
            if subtest.get("status") not in SUBTEST_STATUSES:
                problems.append(f"{name} / {subtest['name']}: status {subtest.get('status')!r} is not a subtest status")
            if subtest["name"] in sub_names:
                problems.append(f"{name}: subtest {subtest['name']!r} twice (wpt.fyi keeps only the first)")
            sub_names.add(subtest["name"])
    return problems + _path_problems([n for n in names if n.startswith("/")])


def run_problems(files: Iterable[str | bytes]) -> list[str]:
    """Why wpt.fyi's processor would refuse `files` uploaded as the files of one product run (`[]`: it accepts
    them): each loaded, the chunks merged, then the checks of `finalize` and of the run's creation."""
    chunks = []
    for text in files:
        report, problems = _load(text)
        if problems:
            return problems
        chunks.append(report)
    if not chunks:
        return ["no report given"]
    merged, problems = _merge(chunks)
    return problems + _result_problems(merged["results"]) + _run_info_problems(merged)


def report_problems(text: str | bytes) -> list[str]:
    """Why wpt.fyi's processor would refuse the report `text` as one product run (`[]`: it accepts it)."""
    return run_problems([text])
