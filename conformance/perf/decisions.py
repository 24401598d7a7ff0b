"""The decisions of the workloads gate and of `bisect --metric`, apart from any I/O. Pure: a session's samples
(`PerfOutcome`) and the expectations file's `[[perf]]` entries in, findings and placements out.

The gate (`workload_findings`), for each workload, the baseline side against the candidate:
- the candidate has no samples (the workload raised, or its child failed): `regressed`, named with its error;
- the baseline has none: `unjudged` (nothing to compare with), named with its error;
- a metric `upward` (a timed metric `regressed`, or an exact metric that grew, from 0 too): `regressed`, unless a
  `[[perf]]` entry acknowledges it on the candidate's version (an entry without `metric` acknowledges every metric);
- any other verdict but `same` (`improved`, an exact metric that shrank, `unknown`): `noted`;
- a side answered from an earlier session's samples beside one sampled now (not interleaved) is said so in the
  finding: the two were not measured together.

`bisect --metric` (`bisect_metric`): the ends must differ (`moved`); each midpoint is placed by its verdict against
the current good end: on the bad side when it moved the same way the ends did, on the good side when it is `same`,
and otherwise (`unknown`, or moved the other way) it cannot be placed and the bisect is refused: never a blame it
cannot stand behind. The releases kept are those between the two ends, whichever of them is the older.

`check_ratio`: a threshold must be a finite ratio above 1.

`perf`'s exit status (`perf_exit`): `perf` measures, as `run` does, and leaves judgement to the gate. A workload that
timed out, crashed or raised on a side, even every workload of a side, is a result (its status is named and stored,
and the gate judges it: a candidate that fails is `regressed`), so it exits 0, as `run` does when a cell crashes; it
exits 1 only when an A/A run flags anything (`regressed`, `improved` or `changed`; an `unknown` is listed, not a
flag), and 2 on bad input (a side that cannot be prepared, before any sample).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.decide.tiers import ACKNOWLEDGED, NOTED, REGRESSED, UNJUDGED, Finding
from conformance.errors import ConformanceError
from conformance.perf.stats import Verdict
from conformance.results.versions import version_order

MOVED = ("regressed", "improved", "changed")


def check_ratio(value: float, option: str) -> float:
    """`value` when it is a finite ratio above 1; else a one-line `ConformanceError` naming `option`."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 1:
        raise ConformanceError(f"{option} must be a finite ratio above 1 (such as 1.25), not {value}")
    return float(value)


def upward(verdict: Verdict) -> bool:
    """Whether a verdict is a step the gate refuses: a timed metric regressed, or an exact one grew (from 0 too:
    the ratio of a metric that was 0 is None)."""
    if verdict.verdict == "regressed":
        return True
    return verdict.verdict == "changed" and (verdict.ratio is None or verdict.ratio > 1)


def perf_exit(outcome: Any, aa: bool = False) -> int:
    """`perf`'s exit status (see the module docstring): 1 only when an A/A run flags a verdict; a workload that
    failed on a side is a result, named with its status, and the gate's to judge."""
    return 1 if aa and any(f[4].verdict in MOVED for f in outcome.flagged()) else 0


def acknowledging(entries: Sequence[Any], workload: str, metric: str, candidate: str) -> Any | None:
    """The first `[[perf]]` entry that acknowledges `metric` of `workload` on the candidate's version, or None."""
    return next((e for e in entries if e.applies(workload, candidate, metric)), None)


def _reuse_note(outcome: Any, workload: str, old: int, new: int) -> str:
    reused = [bool(outcome.reused.get((workload, side))) for side in (old, new)]
    if reused[0] == reused[1]:
        return ""
    sides = outcome.request.sides
    stored, fresh = (sides[old], sides[new]) if reused[0] else (sides[new], sides[old])
    return (
        f" [{stored.label}'s samples are reused from an earlier session, {fresh.label}'s sampled now: not "
        f"interleaved; --rerun samples both together]"
    )


def workload_findings(
    outcome: Any, entries: Sequence[Any], line: Callable[[Any, tuple], str], old: int = 0, new: int = 1
) -> list[Finding]:
    """Every workload's findings, side `old` (the baseline) against side `new` (the candidate), as the module
    docstring says; `line` says a verdict (`perf.render.verdict_line`)."""
    sides, found = outcome.request.sides, []
    for workload in outcome.request.workloads:
        wid = workload.id
        if not outcome.samples.get((wid, new)):
            error = outcome.errors.get((wid, new)) or "no samples"
            found.append(Finding(wid, REGRESSED, f"fails on {sides[new].label}: {error}"))
            continue
        if not outcome.samples.get((wid, old)):
            error = outcome.errors.get((wid, old)) or "no samples"
            found.append(Finding(wid, UNJUDGED, f"nothing to compare with: no samples on {sides[old].label}: {error}"))
            continue
        note = _reuse_note(outcome, wid, old, new)
        for metric, verdict in outcome.verdicts(wid, old, new).items():
            if verdict.verdict == "same":
                continue
            detail, subject = line(outcome, (wid, old, new, metric, verdict)) + note, f"{wid} {metric}"
            if not upward(verdict):
                found.append(Finding(subject, NOTED, verdict.verdict, detail))
                continue
            entry = acknowledging(entries, wid, metric, sides[new].version)
            if entry is not None:
                found.append(Finding(subject, ACKNOWLEDGED, entry.reason, detail))
            else:
                found.append(
                    Finding(subject, REGRESSED, "grew" if verdict.verdict == "changed" else "regressed", detail)
                )
    return found


def judged_workloads(outcome: Any, old: int = 0, new: int = 1) -> int:
    """How many workloads have samples on both sides (the ones a verdict was reached on)."""
    return sum(
        1 for w in outcome.request.workloads if outcome.samples.get((w.id, old)) and outcome.samples.get((w.id, new))
    )


def moved(verdict: Verdict) -> bool:
    """Whether a verdict says the metric moved (`regressed`, `improved` or `changed`)."""
    return verdict.verdict in MOVED


def rising(verdict: Verdict) -> bool:
    """Whether a moved metric went up (a ratio above 1, or from 0)."""
    return verdict.ratio is None or verdict.ratio > 1


def place(against_good: Verdict, ends: Verdict) -> str | None:
    """Where a midpoint goes: `bad` when it moved from the good end the way the ends did, `good` when it is `same`,
    None when it cannot be placed (`unknown`, or moved the other way)."""
    if moved(against_good):
        return "bad" if rising(against_good) == rising(ends) else None
    return "good" if against_good.verdict == "same" else None


@dataclass
class MetricBisect:
    """What a metric bisect found: each step (release, placement, its verdict), the first release on the bad side
    and the last on the good one, or why it was refused."""

    good: str
    bad: str
    ends: Verdict
    steps: list[tuple[str, str, Verdict]] = field(default_factory=list)
    refused: str = ""

    @property
    def exit_code(self) -> int:
        """0 when a release is blamed, 1 when the ends do not differ or a midpoint cannot be placed."""
        return 1 if self.refused else 0

    @property
    def first(self) -> str | None:
        """The first release on the bad side (None when refused)."""
        if self.refused:
            return None
        bad = [release for release, side, _ in self.steps if side == "bad"]
        return bad[-1] if bad else self.bad

    @property
    def last_good(self) -> str | None:
        """The last release on the good side (None when refused)."""
        if self.refused:
            return None
        good = [release for release, side, _ in self.steps if side == "good"]
        return good[-1] if good else self.good


def bisect_metric(
    good: str, bad: str, steps: Sequence[str], ends: Verdict, judge: Callable[[str, str, str], Verdict]
) -> MetricBisect:
    """Bisect `steps` (the releases strictly between `good` and `bad`, either being the older): `judge(low, middle,
    high)` gives the middle's verdict against the current good end (see the module docstring)."""
    found = MetricBisect(good, bad, ends)
    if not moved(ends):
        found.refused = f"the ends do not differ ({ends.verdict}); nothing to bisect"
        return found
    older_good = version_order(good) < version_order(bad) if steps else True
    low, high, left = good, bad, sorted(steps, key=version_order)
    while left:
        middle = left[len(left) // 2]
        verdict = judge(low, middle, high)
        side = place(verdict, ends)
        if side is None:
            found.steps.append((middle, "unplaced", verdict))
            found.refused = (
                f"{middle} cannot be placed ({verdict.verdict} against {low}, while the ends "
                f"{ends.verdict}); more rounds (--rounds, --max-rounds) may decide it"
            )
            return found
        found.steps.append((middle, side, verdict))
        before = [s for s in left if version_order(s) < version_order(middle)]
        after = [s for s in left if version_order(s) > version_order(middle)]
        if side == "bad":
            high, left = middle, before if older_good else after
        else:
            low, left = middle, after if older_good else before
    return found
