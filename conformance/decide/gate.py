"""The upgrade gate: classify every changed cell as a regression, a change to review or good news. Pure.

A cell regresses from baseline to candidate when
- a row of intended behaviour stops conforming (`conforms` -> anything else);
- a known issue that was absent appears (on a known-issue row `conforms` means the bug is there);
- a clean run (one that reached an observation) becomes `crash`, `timeout` or `error`.
An `error` the harness caused (pytest or the run failed around the probe: the cell's `harness` cause) is no result
of JAX's: the gate calls the candidate's cell missing, naming the fault (run it again, or accept it with
`--allow-missing`), and a baseline's such cell is a change to review, never a regression either way.
A known issue that disappears, and an intended row that starts to conform, are good news.
A change of printed facts alone (wording, reprs, counts the chapter only shows; same status,
same asserted facts) is reported apart and does not fail the gate, unless `fail_on_printed`
(`--fail-on-printed`, or `fail_on_printed = true` in the expectations file) makes it a
regression. Any other change of status or observation is a change to review. An expectations
entry that accepts the candidate's status acknowledges a regression; entries that match no
cell of the candidate are stale. An entry whose `expires` day has come fails the gate, whatever it
acknowledges (renew it or remove it); one that expires within 14 days is warned about.

The gate never passes on nothing: it fails when no cell was compared, when the candidate lacks a
cell the baseline has, and when a platform was run on one side only, unless `allow_missing`
(`--allow-missing`, or `allow_missing = true` in the expectations file) accepts the last two. A stored cell the
checkout no longer declares is not missing: the caller (`decide.scope`) leaves it out of both sides and it is
listed apart, "no longer in the suite", without failing the gate.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Sequence

from conformance.core.status import BROKEN, Status
from conformance.decide.diff import CellChange, ResultSet, SetDiff
from conformance.decide.expectations import Expectation, Lifecycle, lifecycle
from conformance.results.schema import CellResult

REGRESSION, REVIEW, GOOD, PRINTED, MISSING = "regression", "review", "good news", "printed output", "missing"


@dataclass(frozen=True)
class Judged:
    """One changed cell with its class, why, and the expectation that acknowledges it (if any)."""

    change: CellChange
    kind: str
    why: str
    acknowledged_by: Expectation | None = None
    accepted_as: str = ""


@dataclass
class GateOutcome:
    """What the gate decided: regressions, acknowledged ones, changes to review, good news, stale entries."""

    regressions: list[Judged] = field(default_factory=list)
    acknowledged: list[Judged] = field(default_factory=list)
    review: list[Judged] = field(default_factory=list)
    good: list[Judged] = field(default_factory=list)
    printed: list[Judged] = field(default_factory=list)
    missing: list[Judged] = field(default_factory=list)
    stale: list[Expectation] = field(default_factory=list)
    unchanged: int = 0
    compared: int = 0
    only_in_baseline: list[str] = field(default_factory=list)
    only_in_candidate: list[str] = field(default_factory=list)
    not_gated: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)  # stored cells the checkout no longer declares (not judged)
    allow_missing: bool = False
    dates: Lifecycle | None = None  # the entries' expiry, read on the day the caller passed

    @property
    def expired(self) -> list[Expectation]:
        """Entries whose `expires` day has come: each fails the gate."""
        return self.dates.expired if self.dates else []

    @property
    def expiring(self) -> list[Expectation]:
        """Entries that expire within the warning period: warned about, not failing."""
        return self.dates.expiring if self.dates else []

    @property
    def unaccepted_gaps(self) -> int:
        """Missing cells and one-sided platforms that count against a pass (none when `allow_missing`)."""
        if self.allow_missing:
            return 0
        return len(self.missing) + len(self.only_in_baseline) + len(self.only_in_candidate)

    @property
    def exit_code(self) -> int:
        """0 when cells were compared and none regresses apart from acknowledged ones, with no unaccepted gap and no
        expired expectation; else 1."""
        return 1 if self.regressions or not self.compared or self.unaccepted_gaps or self.expired else 0


def not_judged(cell: CellResult | None) -> bool:
    """Whether a cell is an `error` of the harness (its `harness` cause), not of its probe: no result of JAX's."""
    return cell is not None and cell.status is Status.ERROR and bool(cell.harness)


def classify(change: CellChange) -> tuple[str, str]:
    """The class of one change (regression, review or good news) and a short reason."""
    before = change.baseline.status if change.baseline else None
    after = change.candidate.status if change.candidate else None
    if before is None:
        return REVIEW, "new cell: the baseline does not have it"
    if after is None:
        return MISSING, "the candidate does not have this cell (it was not run)"
    if not_judged(change.candidate):
        return MISSING, (
            f"the candidate's cell was not judged: the harness failed around the probe "
            f"({change.candidate.harness}), not JAX; run it again"
        )
    if not_judged(change.baseline):
        return REVIEW, f"the baseline's cell was not judged (the harness failed: {change.baseline.harness})"
    clean_before = before not in BROKEN and before is not Status.FLAKY
    if clean_before and after in BROKEN:
        return REGRESSION, f"a clean run becomes {after.value}"
    if change.known_issue:
        if before is not Status.CONFORMS and after is Status.CONFORMS:
            return REGRESSION, "the known issue appears (it was absent in the baseline)"
        if before is Status.CONFORMS and after is Status.DIFFERS:
            return GOOD, f"the known issue no longer shows: the workaround for {change.cell_id} may be removable"
    else:
        if before is Status.CONFORMS and after is not Status.CONFORMS:
            return REGRESSION, "stops conforming to the documented behaviour"
        if before is not Status.CONFORMS and after is Status.CONFORMS:
            return GOOD, "now conforms to the documented behaviour"
    if change.printed_only:
        return PRINTED, "printed output changed (wording, reprs or counts the chapter only prints); status unchanged"
    if before is after:
        return REVIEW, "same status, different observation"
    return REVIEW, "status changed"


def _acknowledging(change: CellChange, expectations: Sequence[Expectation]) -> tuple[Expectation, str] | None:
    assert change.candidate is not None
    for entry in expectations:
        if entry.applies_to(change.platform, change.case, change.param, change.candidate_jax):
            accepted = entry.accepts(change.candidate.status)
            if accepted:
                return entry, accepted
    return None


def stale_expectations(expectations: Sequence[Expectation], candidate: ResultSet) -> list[Expectation]:
    """Entries that match no cell of the candidate (wrong name, parameter, platform or version)."""
    used: set[int] = set()
    for platform, cell in candidate.cells():
        jax = candidate.jax(platform)
        for i, entry in enumerate(expectations):
            if i not in used and entry.applies_to(platform, cell.case, cell.param, jax):
                used.add(i)
    return [entry for i, entry in enumerate(expectations) if i not in used]


def gate(
    set_diff: SetDiff,
    expectations: Sequence[Expectation] = (),
    fail_on_printed: bool = False,
    allow_missing: bool = False,
    today: datetime.date | None = None,
    retired: Sequence[str] = (),
) -> GateOutcome:
    """Judge every change of `set_diff`; an entry accepting the candidate's status acknowledges a regression.

    With `fail_on_printed`, a change of printed output alone is a regression too; with `allow_missing`, baseline
    cells the candidate lacks and platforms run on one side only are listed without failing the gate. With `today`,
    the entries' expiry dates are read on that day: an expired entry fails the gate. `retired` (the cells left out
    because the checkout no longer declares them) is listed apart and never fails the gate.
    """
    expectations = list(expectations)
    outcome = GateOutcome(
        unchanged=set_diff.unchanged,
        compared=set_diff.compared,
        only_in_baseline=set_diff.only_in_baseline,
        only_in_candidate=set_diff.only_in_candidate,
        stale=stale_expectations(expectations, set_diff.candidate),
        allow_missing=allow_missing,
        not_gated=set_diff.not_gated,
        retired=list(retired),
        dates=lifecycle(expectations, today) if today is not None else None,
    )
    for change in set_diff.changes:
        kind, why = classify(change)
        if kind == PRINTED and fail_on_printed:
            kind, why = REGRESSION, why.replace("; status unchanged", "; failing: printed output is gated")
        if kind == REGRESSION:
            found = _acknowledging(change, expectations)
            if found:
                outcome.acknowledged.append(Judged(change, kind, why, found[0], found[1]))
            else:
                outcome.regressions.append(Judged(change, kind, why))
        elif kind == GOOD:
            outcome.good.append(Judged(change, kind, why))
        elif kind == PRINTED:
            outcome.printed.append(Judged(change, kind, why))
        elif kind == MISSING:
            outcome.missing.append(Judged(change, kind, why))
        else:
            outcome.review.append(Judged(change, kind, why))
    return outcome
