"""The report's Performance section: workload × release, from the `perf` objects of the result files (schema 5).

Per workload and release: the medians of run time, compile time and temp bytes, every verdict other than `same`
against the release before (by the rules of `perf.stats`, computed again from the stored samples), the noise band
of the run time, and a sparkline of the median run time across releases. Pure but for reading the files.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from conformance.core.workload import Workload
from conformance.perf.numbers import checked_workloads
from conformance.perf.session import PerfOutcome, PerfRequest, Side, medians
from conformance.readfile import read_regular_text
from conformance.results.load import MAX_RESULT_BYTES
from conformance.results.merge import merge_perf_sections
from conformance.results.schema import is_version
from conformance.results.versions import version_order


@dataclass(frozen=True)
class PerfCell:
    """One workload on one release: medians, verdicts against the release before, and samples counted."""

    release: str
    run_s: float | None
    compile_s: float | None
    temp_bytes: float | None
    flagged: tuple[str, ...]
    samples: int
    error: str = ""
    # `(metric, verdict, ratio)` of each verdict other than `same`, as `flagged` says them in words
    verdicts: tuple[tuple[str, str, float | None], ...] = ()


@dataclass(frozen=True)
class PerfRow:
    """One workload across the releases."""

    id: str
    claim: str
    band: float
    cells: tuple[PerfCell, ...]
    sparkline: str


@dataclass(frozen=True)
class PerfView:
    """The section: the releases (columns) and one row per workload."""

    releases: tuple[str, ...]
    rows: tuple[PerfRow, ...]
    outcome: PerfOutcome | None = None  # the samples it was made from: "Everything that changes" judges any two


def ratio_text(ratio: float) -> str:
    """A ratio as `×2.36`, with the digits it needs not to read as ×1 when it is not 1 (`×1.0005`)."""
    short = f"{ratio:.3g}"
    return f"×{f'{ratio:.5g}' if short == '1' and ratio != 1 else short}"


def perf_sections(paths: Any, problems: list[str] | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """`(jax, platform, workloads)` of every result file in the folders or files of `paths` with a `perf` object,
    read with the bounded reader; each malformed workload entry (or `perf` object) is left out and named in one line
    in `problems` (`perf.numbers.checked_workloads`), as an unreadable cell's file is."""
    found = []
    for given in [Path(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]:
        for path in sorted(given.glob("*.json")) if given.is_dir() else [given]:
            try:
                data = json.loads(read_regular_text(path, MAX_RESULT_BYTES))
            except (OSError, ValueError, RecursionError):
                continue  # named by the result files' own reading
            head = data.get("jax_conformance") if isinstance(data, dict) else None
            if not isinstance(head, dict) or data.get("perf") is None:
                continue
            workloads, bad = checked_workloads(data.get("perf"), str(path))
            if not (is_version(head.get("jax")) and isinstance(head.get("platform"), str)):
                workloads, bad = {}, [f"perf object of {path}: its header names no JAX version and platform"]
            if problems is not None:
                problems.extend(bad)
            if workloads:
                found.append((str(head["jax"]), str(head["platform"]), workloads))
    return found


def sparkline(values: Sequence[float | None], width: int = 90, height: int = 18) -> str:
    """An inline SVG polyline of `values` (None: a gap), scaled to its own range."""
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return ""
    low, high = min(known), max(known)
    step = width / max(len(values) - 1, 1)
    points = " ".join(
        f"{i * step:.1f},{height - 2 - (v - low) / ((high - low) or 1) * (height - 4):.1f}"
        for i, v in enumerate(values)
        if v is not None
    )
    return (
        f'<svg class="spark" width="{width}" height="{height}" role="img" aria-label="run time across '
        f'releases"><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{points}"/></svg>'
    )


def perf_view(sections: list[tuple[str, str, dict[str, Any]]]) -> PerfView | None:
    """The section of the stored samples (one platform: the first found; one column per release: a release given
    twice, as by `report A B` with the release in both, has its workloads merged as a result file's are, the later
    file's entry of a workload replacing the earlier's), or None when there are none."""
    if not sections:
        return None
    platform = sections[0][1]
    by_release: dict[str, dict[str, Any]] = {}
    for jax, _, workloads in [s for s in sections if s[1] == platform]:  # one column per release, however given
        by_release[jax] = merge_perf_sections({"workloads": by_release.get(jax, {})}, {"workloads": workloads})[
            "workloads"
        ]
    chosen = sorted([(jax, platform, ws) for jax, ws in by_release.items()], key=lambda s: version_order(s[0]))
    ids = sorted({wid for _, _, workloads in chosen for wid in workloads})
    claims = {wid: str(w.get("claim", "")) for _, _, ws in chosen for wid, w in ws.items()}
    workloads = tuple(Workload(wid, "", "", claims[wid] or wid, ("perf",), lambda: None) for wid in ids)
    sides = tuple(Side(jax, "", jax, platform, "") for jax, _, _ in chosen)
    samples = {(wid, i): list(ws[wid].get("samples") or []) for i, (_, _, ws) in enumerate(chosen) for wid in ws}
    errors = {
        (wid, i): str(ws[wid]["error"]) for i, (_, _, ws) in enumerate(chosen) for wid in ws if ws[wid].get("error")
    }
    outcome = PerfOutcome(PerfRequest(sides, workloads, ""), samples, errors, {}, 0)
    return PerfView(tuple(s.label for s in sides), tuple(_row(outcome, w) for w in workloads), outcome)


def _row(outcome: PerfOutcome, workload: Workload) -> PerfRow:
    cells = []
    for index, side in enumerate(outcome.request.sides):
        found = medians(outcome, workload.id, index)
        verdicts = (
            ()
            if index == 0
            else tuple(
                (metric, v.verdict, v.ratio)
                for metric, v in outcome.verdicts(workload.id, index - 1, index).items()
                if v.verdict != "same"
            )
        )
        flagged = tuple(
            f"{metric} {verdict}" + (f" {ratio_text(ratio)}" if ratio is not None else "")
            for metric, verdict, ratio in verdicts
        )
        cells.append(
            PerfCell(
                side.label,
                found.get("run_s"),
                found.get("compile_s"),
                found.get("temp_bytes"),
                flagged,
                len(outcome.samples.get((workload.id, index), [])),
                outcome.errors.get((workload.id, index), ""),
                verdicts,
            )
        )
    return PerfRow(
        workload.id,
        workload.claim,
        outcome.band(workload.id, "run_s"),
        tuple(cells),
        sparkline([c.run_s for c in cells]),
    )
