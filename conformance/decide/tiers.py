"""The one gate's tiers and its one verdict. Pure.

A tier judges one kind of thing from baseline to candidate (`cells`, `workloads`, `names`; a downstream test suite
plugs in as one more) and returns a `Tier`: how many things it judged, the problems that fail it as a whole (no cell
compared, a platform run on one side only) and its named findings, each in one state:

- `regressed`: the candidate is worse and nothing acknowledges it (fails the gate);
- `acknowledged`: an expectations entry accepts it, with the entry's reason;
- `unjudged`: it could not be judged (a side failed to run a workload, a name no census can judge, a cell the
  candidate lacks); named, and failing the gate: never silently passed;
- `noted`: listed, not failing (good news, a change to review, a verdict the samples could not decide).

`Verdict` is the gate's one outcome over every tier given: exit 1 when any tier fails, when an expectations entry of
any kind has expired, or when no tier judged anything; else 0.

The upgrade review (`decide.upgrade_tiers`) builds its tiers from the same `Tier` and `Finding`: a review judges
nothing against an expectation, so each of its findings is `noted`, with a `weight` (`BREAKS`, `WARNS`, `INFO`) and
the places that use it (`where`); a tier it could not judge says why (`missing`). One type, one count: `judged`
things compared, `count(state)` findings in a state, `changing` things that change (`heading` says it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

REGRESSED, ACKNOWLEDGED, UNJUDGED, NOTED = "regressed", "acknowledged", "unjudged", "noted"
STATES = (REGRESSED, ACKNOWLEDGED, UNJUDGED, NOTED)
FAILING = (REGRESSED, UNJUDGED)
# How a finding weighs where a review orders them ("top items"): what breaks first, then what warns, then the rest.
BREAKS, WARNS, INFO = 2, 1, 0
WEIGHTS = ("info", "warns", "breaks")  # each weight's word in the upgrade review's JSON


@dataclass(frozen=True)
class Finding:
    """One named thing a tier judged other than unchanged: what it is about, its state, why (for the upgrade review:
    the change in a few words), what was measured (the detail), and, where a review lists it, the places that use it
    (`path:line`) and its weight; a public name's change in the review also its dated events (`api.dating.Dated`:
    when deprecated, when removed, over the censuses stored between A and B; none with only A and B)."""

    subject: str
    state: str
    reason: str
    detail: str = ""
    where: tuple[str, ...] = ()
    weight: int = INFO
    dated: tuple[Any, ...] = ()

    def to_json(self) -> dict[str, str]:
        """Plain-JSON form."""
        return {"subject": self.subject, "state": self.state, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class Tier:
    """What one tier judged: its name, a title (the sides), the count judged, the problems that fail it whatever
    its findings say, its findings, (for the cell tier) the lines it prints in full, and, for the upgrade review,
    why it could not be judged (`missing`, "" when it was), its notes, and how many of the `judged` things change
    where a finding is a part of one (`changed`: a workload's metric)."""

    name: str
    title: str
    judged: int
    findings: tuple[Finding, ...] = ()
    problems: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()
    missing: str = ""
    notes: tuple[str, ...] = ()
    changed: int | None = None

    def count(self, state: str) -> int:
        """How many findings are in `state`."""
        return sum(1 for f in self.findings if f.state == state)

    @property
    def changing(self) -> int:
        """How many of the `judged` things change: `changed`, else one per finding."""
        return len(self.findings) if self.changed is None else self.changed

    @property
    def heading(self) -> str:
        """`Behaviours: 3 of 197 change` (`Performance: 4 of 13 change (9 items)`), or the title with why it was
        not judged."""
        if self.missing:
            return f"{self.title}: not judged ({self.missing})"
        parts = f" ({len(self.findings)} items)" if self.changing != len(self.findings) else ""
        return f"{self.title}: {self.changing} of {self.judged} change{parts}"

    def top(self, count: int) -> list[Finding]:
        """The `count` findings to show first: those the team's code uses (`where`), then the heaviest, each group in
        its own order."""
        return sorted(self.findings, key=lambda f: (not f.where, -f.weight))[:count]

    @property
    def failed(self) -> bool:
        """Whether this tier fails the gate: a problem, or a finding regressed or unjudged."""
        return bool(self.problems) or any(f.state in FAILING for f in self.findings)

    def to_json(self) -> dict[str, object]:
        """Plain-JSON form."""
        return {
            "name": self.name,
            "title": self.title,
            "judged": self.judged,
            "passed": not self.failed,
            "counts": {state: self.count(state) for state in STATES},
            "problems": list(self.problems),
            "findings": [f.to_json() for f in self.findings],
        }


@dataclass(frozen=True)
class Verdict:
    """The gate's one outcome: every tier given, the tiers not judged (with why), and the expectations entries that
    expired (failing) or expire soon (warned)."""

    title: str
    tiers: tuple[Tier, ...]
    skipped: tuple[str, ...] = ()
    expired: tuple[str, ...] = ()
    expiring: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """1 when any tier fails, an entry has expired or nothing at all was judged; else 0."""
        nothing = not any(t.judged for t in self.tiers)
        return 1 if nothing or self.expired or any(t.failed for t in self.tiers) else 0

    def failing_tiers(self) -> list[str]:
        """The names of the tiers that fail."""
        return [t.name for t in self.tiers if t.failed]


def cell_tier(outcome, title: str, lines: Sequence[str] = ()) -> Tier:
    """The cell gate's outcome (`decide.gate.GateOutcome`) as a tier: regressions, acknowledged ones, cells the
    candidate lacks (unjudged unless `allow_missing`), the rest noted; its whole-set problems (nothing compared, a
    platform on one side only, an expired `[[expect]]` entry). It fails exactly when the cell gate's exit is 1."""
    found = [Finding(_cell(j), REGRESSED, j.why) for j in outcome.regressions]
    found += [
        Finding(_cell(j), ACKNOWLEDGED, j.acknowledged_by.reason or f"accepted as {j.accepted_as}", j.why)
        for j in outcome.acknowledged
    ]
    found += [Finding(_cell(j), NOTED if outcome.allow_missing else UNJUDGED, j.why) for j in outcome.missing]
    found += [Finding(_cell(j), NOTED, j.kind, j.why) for j in (*outcome.review, *outcome.printed, *outcome.good)]
    problems = [] if outcome.compared else ["no cell was compared"]
    if not outcome.allow_missing and (outcome.only_in_baseline or outcome.only_in_candidate):
        problems.append("a platform was run on one side only")
    problems += [f"expectation {entry.label} expired on {entry.expires}" for entry in outcome.expired]
    tier = Tier("cells", title, outcome.compared, tuple(found), tuple(problems), tuple(lines))
    if outcome.exit_code and not tier.failed:  # a rule of the cell gate this view does not spell out: still a fail
        tier = Tier(
            "cells", title, outcome.compared, tuple(found), ("the cell gate fails (see its lines)",), tuple(lines)
        )
    return tier


def _cell(judged) -> str:
    return f"{judged.change.platform} {judged.change.cell_id}"


BREAKING_NAMES = ("removed", "missing")


def name_findings(findings: Sequence, entries: Sequence, candidate: str) -> list[Finding]:
    """`api scan` findings at the candidate as the names tier: a removed or missing name the team uses is
    `regressed` unless a `[[name]]` entry acknowledges it on the candidate's version; a use no census can judge is
    `unjudged`; a deprecation and the rest are `noted`. Each is named by its name and place."""
    judged = []
    for found in findings:
        subject, detail = found.name, f"{found.path}:{found.line}: {found.message}"
        if found.state in (*BREAKING_NAMES, "not_judged"):
            entry = next((e for e in entries if e.applies(found.name, candidate)), None)
            state, why = (
                (REGRESSED, f"{found.state} in jax {candidate}")
                if found.state in BREAKING_NAMES
                else (UNJUDGED, "no census can judge it")
            )
            judged.append(
                Finding(subject, ACKNOWLEDGED, entry.reason, detail) if entry else Finding(subject, state, why, detail)
            )
        else:
            judged.append(Finding(subject, NOTED, found.state, detail))
    return judged
