"""The downstream suites' judgements as one tier of the one gate (`gate --from A --to B --downstream SUITE`). Pure.

Every test judged is a finding of the `downstream` tier (`decide.tiers`):

- a regressed test no `[[downstream]]` entry acknowledges is `regressed` (fails the gate), its reason the cause it is
  grouped under (signature, and the library it is filed under) and its detail how many tests share that cause;
- a regressed test an entry acknowledges is `acknowledged`, with the entry's reason;
- a candidate the suite's lock cannot be installed with is one `unjudged` finding per suite (named, failing; its
  tests never ran), or `acknowledged` when an entry names its cause;
- flaky and spurious tests, fixed, broken on both, appeared and vanished tests and new deprecation warnings from
  the library's code are `noted`: listed, never gating.

A suite whose lock cannot be installed with the baseline judges nothing and is a problem of the tier, and so is an
expired `[[downstream]]` entry (an expired entry of any kind fails the gate).
"""

from __future__ import annotations

from collections.abc import Sequence

from conformance.decide.tiers import ACKNOWLEDGED, NOTED, REGRESSED, UNJUDGED, Finding, Tier
from conformance.downstream.judge import Change, Judgement
from conformance.downstream.outcomes import UNINSTALLABLE_ID

NEVER_GATES = {
    "flaky": "flaky (failed, passed when rerun once): never gates",
    "spurious": "spurious (a timeout, or never reached by a dead pytest): never gates",
    "fixed": "fixed",
    "broken_same": "broken on both, same cause",
    "broken_changed": "broken on both, cause changed",
    "appeared": "appeared",
    "vanished": "vanished",
}


def _cause(change: Change) -> str:
    return change.signature + (f" (in {change.owner})" if change.owner else "")


def _regressions(label: str, judgement: Judgement) -> list[Finding]:
    """Each regressed test, grouped by cause (most tests first): regressed, or acknowledged with the entry's reason."""
    by_node = {c.node: c for c in judgement.of("regressed")}
    found = []
    for acknowledged in (False, True):
        for cause in judgement.causes("regressed", acknowledged=acknowledged):
            share = f"{len(cause.nodes)} test{'s' if len(cause.nodes) != 1 else ''} with this cause"
            for node in cause.nodes:
                change = by_node[node]
                moved = f"{change.before} -> {change.after}"
                found.append(
                    Finding(f"{label} {node}", ACKNOWLEDGED, change.acknowledged, f"{_cause(change)}; {moved}")
                    if acknowledged
                    else Finding(f"{label} {node}", REGRESSED, f"regressed: {_cause(change)}", f"{moved}; {share}")
                )
    return found


def _uninstallable(label: str, judgement: Judgement, candidate: str) -> list[Finding]:
    """One finding per cause of an uninstallable candidate: unjudged (its tests never ran), or acknowledged."""
    found = []
    for acknowledged in (False, True):
        for cause in judgement.causes("uninstallable", acknowledged=acknowledged):
            detail = f"{len(cause.nodes)} baseline test{'s' if len(cause.nodes) != 1 else ''} not run"
            reason = f"cannot be installed with jax {candidate}: {cause.signature}"
            why = next(c.acknowledged for c in judgement.of("uninstallable") if c.node == cause.nodes[0])
            found.append(
                Finding(label, ACKNOWLEDGED, why, f"{reason}; {detail}")
                if acknowledged
                else Finding(label, UNJUDGED, reason, detail)
            )
    return found


def baseline_uninstallable(judgement: Judgement) -> bool:
    """Whether the suite could not be installed with the baseline release (nothing of it was judged)."""
    return any(c.node == UNINSTALLABLE_ID and c.before == "uninstallable" for c in judgement.changes)


def downstream_tier(judged: Sequence[tuple[str, str, str, Judgement]], expired: Sequence[str] = ()) -> Tier:
    """The `downstream` tier of the judgements `(suite label, baseline, candidate, judgement)` (see the module
    docstring); `expired`: the lines naming expired `[[downstream]]` entries."""
    findings: list[Finding] = []
    problems = list(expired)
    for label, base, cand, judgement in judged:
        if baseline_uninstallable(judgement):
            problems.append(f"{label} cannot be installed with the baseline jax {base}: nothing of it was judged")
            continue
        findings += _regressions(label, judgement) + _uninstallable(label, judgement, cand)
        findings += [
            Finding(
                f"{label} {c.node}",
                NOTED,
                NEVER_GATES[c.kind],
                f"{c.before or 'absent'} -> {c.after or 'absent'}" + (f"; {c.signature}" if c.signature else ""),
            )
            for c in judgement.changes
            if c.kind in NEVER_GATES
        ]
        findings += [
            Finding(label, NOTED, "new deprecation warning from the library's code", warned)
            for warned in judgement.new_warnings
        ]
    judged_count = sum(j.compared for *_, j in judged if not baseline_uninstallable(j))
    labels = ", ".join(dict.fromkeys(label for label, *_ in judged))
    sides = ", ".join(dict.fromkeys(f"jax {base} -> {cand}" for _, base, cand, _ in judged))
    return Tier(
        "downstream",
        f"{labels}: {sides}" if judged else "no suite judged",
        judged_count,
        tuple(findings),
        tuple(problems),
    )
