"""A perf session as its public JSON (`perf --json PATH`) and as lines for the terminal. Pure.

The JSON (format 1): `{"format", "threshold", "rounds_run", "xla_flags", "sides", "workloads": [{"id", "claim",
"noise_band": {metric: band}, "releases": [{"release", "reused", "error", "samples": [{metric: value}],
"medians": {metric: value}, "against", "verdicts": {metric: {"verdict", "ratio", "p", "band"}}}]}]}`; a
release's `verdicts` are against `against`, the side it is compared with (null for the first).

`bisect WORKLOAD --metric M --json PATH` (format 1): `{"format", "workload", "metric", "good", "bad", "ends": verdict,
"steps": [{"release", "side": "good"|"bad"|"unplaced", "verdict"}], "first", "last_good", "refused"}` (`first` and
`last_good` null and `refused` the reason when no release is blamed); `--issue PATH` is the same as Markdown.
"""

from __future__ import annotations

from typing import Any

from conformance.perf import stats
from conformance.perf.decisions import MetricBisect
from conformance.perf.session import PerfOutcome, medians

JSON_FORMAT = 1


def _compared_with(outcome: PerfOutcome) -> dict[int, int]:
    return {new: old for old, new in outcome.request.comparisons()}


def outcome_json(outcome: PerfOutcome) -> dict[str, Any]:
    """The public JSON of a session (see the module docstring)."""
    request, against = outcome.request, _compared_with(outcome)
    workloads = []
    for workload in request.workloads:
        releases = []
        for index, side in enumerate(request.sides):
            old = against.get(index)
            verdicts = outcome.verdicts(workload.id, old, index) if old is not None else {}
            releases.append(
                {
                    "release": side.label,
                    "reused": bool(outcome.reused.get((workload.id, index))),
                    "error": outcome.errors.get((workload.id, index)),
                    "samples": [s["metrics"] for s in outcome.samples.get((workload.id, index), [])],
                    "medians": medians(outcome, workload.id, index),
                    "against": request.sides[old].label if old is not None else None,
                    "verdicts": {m: v.to_json() for m, v in verdicts.items()},
                }
            )
        workloads.append(
            {
                "id": workload.id,
                "claim": workload.claim,
                "noise_band": {m: round(outcome.band(workload.id, m), 4) for m in stats.TIMED_METRICS},
                "releases": releases,
            }
        )
    return {
        "format": JSON_FORMAT,
        "threshold": request.threshold,
        "rounds_run": outcome.rounds_run,
        "xla_flags": request.xla_flags,
        "sides": [s.label for s in request.sides],
        "workloads": workloads,
    }


def _short(metric: str, value: float) -> str:
    """A median for a person: a time in ms under a second, else in s (never `1e+03ms`); a count as an integer."""
    if metric.endswith("_s"):
        milliseconds = f"{value * 1e3:.3g}"
        return f"{milliseconds}ms" if "e" not in milliseconds else f"{value:.3g}s"
    return f"{value:.0f}"


def verdict_line(outcome: PerfOutcome, flagged: tuple[str, int, int, str, stats.Verdict]) -> str:
    """One line for a verdict other than `same`: workload, sides, metric, ratio, p and band."""
    workload, old, new, metric, verdict = flagged
    sides = outcome.request.sides
    ratio = "n/a" if verdict.ratio is None else f"x{verdict.ratio:.3g}"
    before, after = medians(outcome, workload, old).get(metric), medians(outcome, workload, new).get(metric)
    values = (
        f" ({_short(metric, before)} -> {_short(metric, after)})" if before is not None and after is not None else ""
    )
    extra = f", p={verdict.p:.3g}, band x{verdict.band:.3g}" if verdict.p is not None else ""
    return f"{verdict.verdict}: {workload} {metric} {sides[old].label} -> {sides[new].label}: {ratio}{values}{extra}"


def outcome_lines(outcome: PerfOutcome) -> list[str]:
    """The session for a person: per workload and side the medians, then every verdict other than `same`."""
    lines = []
    for workload in outcome.request.workloads:
        lines.append(f"{workload.id}: {workload.claim}")
        for index, side in enumerate(outcome.request.sides):
            error = outcome.errors.get((workload.id, index))
            found = medians(outcome, workload.id, index)
            shown = ", ".join(
                f"{m} {_short(m, found[m])}"
                for m in ("run_s", "run_cpu_s", "compile_s", "temp_bytes", "compiles", "fusions")
                if m in found
            )
            count = len(outcome.samples.get((workload.id, index), []))
            lines.append(f"  jax {side.label}: " + (f"error: {error}" if error else f"{shown} ({count} samples)"))
    flagged = outcome.flagged()
    lines.append(
        f"{len(flagged)} verdict(s) other than same"
        + (":" if flagged else "")
        + f" (threshold x{outcome.request.threshold:g}, {outcome.rounds_run} rounds)"
    )
    lines.extend(f"  {verdict_line(outcome, f)}" for f in flagged)
    return lines


def bisect_json(found: MetricBisect, workload: str, metric: str, named: dict[str, str]) -> dict[str, Any]:
    """The public JSON of a metric bisect (see the module docstring); `named` gives each side's label."""
    label = lambda side: None if side is None else named.get(side, side)  # noqa: E731
    return {
        "format": JSON_FORMAT,
        "workload": workload,
        "metric": metric,
        "good": label(found.good),
        "bad": label(found.bad),
        "ends": found.ends.to_json(),
        "steps": [{"release": label(r), "side": side, "verdict": v.to_json()} for r, side, v in found.steps],
        "first": label(found.first),
        "last_good": label(found.last_good),
        "refused": found.refused or None,
    }


def bisect_markdown(found: MetricBisect, workload: str, metric: str, named: dict[str, str]) -> str:
    """A bug report of a metric bisect that blamed a release, in Markdown (`bisect --metric --issue PATH`)."""
    label = lambda side: named.get(side, side)  # noqa: E731
    ratio = "n/a" if found.ends.ratio is None else f"x{found.ends.ratio:.3g}"
    rows = [
        f"| {label(r)} | {side} | {v.verdict} | {'n/a' if v.ratio is None else f'x{v.ratio:.3g}'} |"
        for r, side, v in found.steps
    ]
    return "\n".join(
        [
            f"# `{workload}`: {metric} {found.ends.verdict} first in jax {label(found.first)}",
            "",
            f"{metric} of `{workload}` is {found.ends.verdict} ({ratio}) from jax {label(found.good)} to "
            f"{label(found.bad)}; the first release where it crossed is **{label(found.first)}** (the last before it: "
            f"{label(found.last_good)}).",
            "",
            "| release | side | verdict against the good end | ratio |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Found with `jax-conformance bisect {workload} --metric {metric} --good {label(found.good)} "
            f"--bad {label(found.bad)}`.",
            "",
        ]
    )
