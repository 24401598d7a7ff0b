"""Plain-text tables for the terminal: the case list and the per-version summary. Pure logic."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from conformance.engine.selection import Cell
from conformance.results.schema import CellResult
from conformance.core.status import Status


def text_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """Columns padded to their widest entry, with a rule under the header."""
    body = [[str(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in body]
    return "\n".join(lines)


def cases_listing(cells: list[Cell]) -> str:
    """The `list` command's output: each case once, its parameters, rows and claim."""
    lines: list[str] = []
    seen: set[str] = set()
    for cell in cells:
        case = cell.case
        if case.id in seen:
            continue
        seen.add(case.id)
        params = [c.param for c in cells if c.case.id == case.id and c.param]
        kind = "known issue" if case.has_known_issue else "behaviour"
        lines.append(f"{case.id}{' [' + ', '.join(params) + ']' if params else ''}   ({case.section}; {kind})")
        lines.append(f"    {case.claim}")
        for row in case.all_rows:
            lines.append(f"    - {row}")
    return "\n".join(lines)


def status_counts(cells: Iterable[CellResult]) -> dict[str, int]:
    """How many cells have each status."""
    counts = {s.value: 0 for s in Status}
    for cell in cells:
        counts[cell.status.value] += 1
    return counts


def run_summary(runs: list[dict[str, Any]]) -> str:
    """One line per finished version: platform, Python, launcher, counts per status, cells whose printed output
    differs from the chapter's, cells run and reused, time."""
    header = (
        ["jax", "platform", "python", "launch"]
        + [s.value for s in Status]
        + ["printed", "ran", "reused", "seconds", "cells/s"]
    )
    rows = []
    for run in runs:
        head = run["file"].header
        counts = status_counts(run["file"].cells)
        wall = run.get("wall_s", 0.0)
        rate = f"{run['cells'] / wall:.1f}" if wall else "-"
        launcher = run.get("launcher") or head.launcher  # this run's, not the merged file's
        printed = sum(cell.printed_differs for cell in run["file"].cells)
        rows.append(
            [
                head.jax,
                head.platform,
                head.python,
                launcher,
                *[counts[s.value] for s in Status],
                printed,
                run["cells"] - run["reused"],
                run["reused"],
                f"{wall:.1f}",
                rate,
            ]
        )
    return text_table(header, rows)


def run_heading(suite: str, chosen: int, selected: int, shard: str, versions: int, builds: int) -> str:
    """The line a run starts with: the cells (and shard) times the JAX versions and given builds."""
    sharded = f" (shard {shard} of {selected} selected)" if shard else ""
    counted = " + ".join(
        ([f"{versions} JAX versions"] if versions or not builds else [])
        + ([f"{builds} given build(s)"] if builds else [])
    )
    return f"jax-conformance {suite}: {chosen} cells{sharded} x {counted}"
