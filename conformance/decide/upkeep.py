"""`expectations prune` and `supported` as sessions: read what they need (an expectations file, stored results, the
selection), call the pure decisions (`decide.prune`, `decide.supported`), write the pruned file when asked, and
return the lines to print. Nothing here prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from conformance.atomic import write_text_atomically
from conformance.decide.expectations import MAX_EXPECTATIONS_BYTES, load_expectations_file
from conformance.decide.prune import prune
from conformance.decide.render import terminal_safe
from conformance.decide.supported import constraints, parse_current, range_text, ranges_json, supported_ranges
from conformance.engine import matrix
from conformance.errors import ConformanceError
from conformance.jsonout import write_json
from conformance.readfile import read_regular_text
from conformance.results.load import load_results
from conformance.results.merge import merge_files
from conformance.results.outputs import check_outputs


def prune_file(path: Path, results: Sequence[Path], write: bool) -> list[str]:
    """The removal of every entry of the expectations file `path` that the stored `results` no longer need, as
    lines (one per removal, then the unified diff); with `write`, applied to the file atomically."""
    try:
        text = read_regular_text(path, MAX_EXPECTATIONS_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(
            f"{path}: cannot read the expectations file ({getattr(exc, 'strerror', None) or exc})"
        ) from None
    outcome = prune(text, merge_files(load_results(list(results))), str(path))
    lines = [f"remove {removal.entry.label}: {removal.why}" for removal in outcome.removals]
    lines += outcome.diff.splitlines()
    if not outcome.removals:
        lines.append(f"{path}: every entry is still needed ({outcome.kept} kept)")
    elif write:
        write_text_atomically(path, outcome.new_text)
        count = len(outcome.removals)
        lines.append(f"wrote {path}: {count} entr{'y' if count == 1 else 'ies'} removed, {outcome.kept} kept")
    return [terminal_safe(line) for line in lines]


def supported_lines(
    cases: Sequence[str],
    expression: str | None,
    results: Sequence[Path],
    expectations: Path | None,
    current: str | None,
    constraints_format: bool,
    fixes_exclude: bool = False,
    json_path: Path | None = None,
) -> list[str]:
    """The supported range of each platform over the selected cells, as text or constraints lines; with
    `fixes_exclude`, a known issue maybe fixed after the documented release excludes it (`decide.supported`); with
    `json_path`, also written as JSON there (`-`: standard output; `decide.supported.ranges_json`)."""
    if json_path is not None:  # before anything is read: never over a result file or an input
        check_outputs([("--json", json_path)], inputs=list(results), reads=[expectations, *cases])
    spec = parse_current(current) if current is not None else None
    entries = load_expectations_file(expectations).entries if expectations else []
    selected = [
        (cell.case.id, cell.param) for cell in matrix.select_run(matrix.case_folders(cases), expression).selected
    ]
    ranges = supported_ranges(
        merge_files(load_results(list(results))), selected, entries, spec, current or "", fixes_exclude
    )
    lines = [terminal_safe(line) for line in (constraints(ranges) if constraints_format else range_text(ranges))]
    if json_path is not None:
        lines.append(write_json(json_path, json.dumps(ranges_json(ranges), indent=1, ensure_ascii=False) + "\n"))
    return lines
