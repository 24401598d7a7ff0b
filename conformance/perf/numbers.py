"""The one check of a workload's numbers, wherever they cross a boundary: the perf child's record, a stored result
file's `perf` object, a sample a session is about to decide on.

A metric or an information value is a finite number at least 0 (a time, a count of bytes, of compilations, of
calls: none is negative, none is NaN or infinite; a bool is not a number). A sample is an object whose `metrics`
(and `info`, when present) map names to such numbers; an entry of a `perf` object is an object with a `samples`
list of samples, a string `key`, `claim` and `error` where present. Each check returns '' or one line naming what
is wrong (the workload, the sample, the metric and its value), for the caller to prefix with where it read it.
Pure and standard library only: the child imports it in a release's environment.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

PERF_FORMAT = 1  # the format of a result file's `perf` object: `{"format": 1, "workloads": {ID: entry}}`
STATUSES = ("timeout", "crash", "error")  # what a workload that gave no sample got, in an entry's `status`


def number_problem(value: Any) -> str:
    """'' when `value` is a finite number at least 0, else why not (`nan, not a finite number >= 0`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{type(value).__name__}, not a number"
    if not math.isfinite(value) or value < 0:
        return f"{value!r}, not a finite number >= 0"
    return ""


def sample_problem(sample: Any) -> str:
    """'' when `sample` is a well-formed sample (see the module docstring), else one line naming the metric."""
    if not isinstance(sample, Mapping):
        return f"a sample is {type(sample).__name__}, not an object"
    metrics = sample.get("metrics")
    if not isinstance(metrics, Mapping) or not metrics:
        return "a sample has no `metrics` object"
    for part in ("metrics", "info"):
        values = sample.get(part, {})
        if not isinstance(values, Mapping):
            return f"`{part}` is {type(values).__name__}, not an object"
        for name, value in values.items():
            problem = number_problem(value)
            if problem:
                return f"{'' if part == 'metrics' else 'info '}{str(name)[:80]} is {problem}"
    return ""


def entry_problem(entry: Any) -> str:
    """'' when `entry` (one workload of a `perf` object) is well formed, else one line naming the sample and
    metric."""
    if not isinstance(entry, Mapping):
        return f"the entry is {type(entry).__name__}, not an object"
    for name in ("key", "claim", "error", "status"):
        if name in entry and not isinstance(entry[name], str):
            return f"`{name}` is {type(entry[name]).__name__}, not a string"
    samples = entry.get("samples", [])
    if not isinstance(samples, list):
        return f"`samples` is {type(samples).__name__}, not a list"
    for index, sample in enumerate(samples, 1):
        problem = sample_problem(sample)
        if problem:
            return f"sample {index}: {problem}"
    return ""


def checked_workloads(section: Any, source: str) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The well-formed entries of a result file's `perf` object by workload id, and one line per malformed one
    (`perf workload ID in FILE: sample 2: run_s is nan, not a finite number >= 0`); a `perf` object that is not
    `{"format": 1, "workloads": {...}}` is skipped whole in one line (`perf object of FILE: ...`)."""
    if section is None:
        return {}, []
    workloads = section.get("workloads") if isinstance(section, Mapping) else None
    if not isinstance(workloads, Mapping) or section.get("format", PERF_FORMAT) != PERF_FORMAT:
        return {}, [f'perf object of {source}: not {{"format": {PERF_FORMAT}, "workloads": {{...}}}}']
    kept: dict[str, dict[str, Any]] = {}
    problems = []
    for workload_id, entry in workloads.items():
        problem = entry_problem(entry)
        if problem:
            problems.append(f"perf workload {str(workload_id)[:200]} in {source}: {problem}")
        else:
            kept[str(workload_id)] = dict(entry)
    return kept, problems
