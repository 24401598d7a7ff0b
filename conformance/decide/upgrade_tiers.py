"""The upgrade review's data: one list per tier of what changes from release A to release B. Pure.

A tier is the one gate's `decide.tiers.Tier`, counted by the same rules: its name (the review's key), a title, the
findings that change (each `noted`, made by `item`, with a weight and the places that use it), how many things it
compared (`judged`), and, when it could not be judged, why (`missing`: a side without results, a tier not asked for).
Each tier is built here from what another part of the suite already decided, never decided again:

- behaviours (`behaviour_tiers`): `decide.diff`'s changed cells, each with the why its case declares
  (`report.model.explain_change`), split into the suite's cells and the team's own cells (`--cases`);
- names (`names_tier`): `api.diff`'s changes between the two censuses (removed, deprecated, moved, changed in
  signature; the message JAX gives names the replacement), each with the places in the team's code that use it
  (`api.judge`'s findings at B, `--scan`), and, when censuses of releases between A and B are stored, dated over
  them (`api.dating`: when it was deprecated, when removed; a range where a release between has no census);
- performance (`perf_tier`): every metric of every workload at B against A by `perf.stats`' rules, both sides
  sampled in one session, and the workloads that fail on a side;
- downstream suites (`downstream_review_tier`, `--downstream SUITE`): `downstream.judge`'s judgement of each suite
  from A to B, its regressed and its fixed tests grouped by signature (`Judgement.causes`: a count and up to three
  examples each), a candidate the suite's lock cannot be installed with named, flaky, appeared and vanished tests
  counted.

A later tier is one more function returning a `Tier`; the review and its outputs take any list of tiers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from conformance.core.casefolders import CHAPTER_NAMESPACE
from conformance.decide.diff import SetDiff
from conformance.decide.tiers import BREAKS, INFO, NOTED, WARNS, Finding, Tier
from conformance.downstream.gating import baseline_uninstallable
from conformance.downstream.judge import EXAMPLES, Cause, Judgement
from conformance.perf.decisions import upward


def item(
    name: str, change: str, detail: str = "", where: Sequence[str] = (), weight: int = INFO, dated: Sequence[Any] = ()
) -> Finding:
    """One thing that changes, as the review lists it: a `noted` finding about `name`, the change in a few words (its
    reason), the detail (the why, JAX's message, a ratio), the places that use it (`path:line`), its weight
    (`BREAKS`, `WARNS`, `INFO`), and a name's dated events (`api.dating.Dated`)."""
    return Finding(name, NOTED, change, detail, tuple(where), weight, tuple(dated))


@dataclass(frozen=True)
class Review:
    """The whole review from `before` to `after`: its tiers in order, and notes on the two sides."""

    before: str
    after: str
    tiers: tuple[Tier, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def tier(self, key: str) -> Tier | None:
        """The tier named `key`, if the review has it."""
        return next((t for t in self.tiers if t.name == key), None)


def not_judged(key: str, title: str, why: str) -> Tier:
    """A tier that could not be judged, and why (a side without results, not asked for)."""
    return Tier(key, title, 0, missing=why)


Why = Callable[[str, str], str]  # (case id, param) -> the declared why of its change from A to B, "" when none


def _behaviour_item(change: Any, why: str, platform_shown: bool) -> Finding:
    name = f"{change.cell_id} ({change.platform})" if platform_shown else change.cell_id
    if change.printed_only:
        shown = "; ".join(f"{d.path}: {d.expected!r} -> {d.observed!r}" for d in change.printed_differences[:2])
        return item(name, "printed output changed", why or f"only what the chapter prints: {shown}", weight=INFO)
    moved = change.statuses
    after = change.candidate.status.value if change.candidate else "absent"
    weight = BREAKS if after in ("differs", "crash", "error", "timeout") and not change.known_issue else WARNS
    return item(name, moved, why or "no declared reason: an unexplained change", weight=weight)


def behaviour_tiers(
    diff: SetDiff | None,
    why_of: Why,
    team_case: Callable[[str], bool],
    team_asked: bool,
    missing: str = "",
    notes: Sequence[str] = (),
) -> list[Tier]:
    """The suite's behaviours and the team's own cases (`--cases`) from a diff of A's cells against B's; a missing
    side (`missing`) leaves both tiers not judged."""
    titles = ("Behaviours", "Your cases")
    if diff is None or missing:
        why = missing or "no results for a side"
        return [
            not_judged("behaviours", titles[0], why),
            not_judged("cases", titles[1], why if team_asked else "not asked: give --cases DIR"),
        ]
    platforms = {c.platform for c in diff.changes}
    suite: list[Finding] = []
    team: list[Finding] = []
    for change in diff.changes:
        if change.baseline is None or change.candidate is None:
            continue  # a cell one side lacks is no change of behaviour: counted in the notes
        item = _behaviour_item(change, why_of(change.case, change.param), len(platforms) > 1)
        (team if team_case(change.case) else suite).append(item)
    one_sided = [c.case for c in diff.changes if c.baseline is None or c.candidate is None]
    blocks = sum(case.startswith(f"{CHAPTER_NAMESPACE}/") for case in one_sided)
    extra = [f"{len(one_sided) - blocks} cell(s) on one side only (a case added or retired between the two)"]
    extra = extra if len(one_sided) > blocks else []
    if blocks:  # a chapter run on one of the two releases only (the default matrix, not the all matrix)
        extra.append(f"{blocks} chapter block(s) on one side only (the chapter was run on one of the two releases)")
    compared = diff.compared
    team_checked = sum(
        1
        for platform, run in diff.baseline.runs.items()
        if platform in diff.candidate.runs
        for cell_id, cell in run.cells.items()
        if cell_id in diff.candidate.runs[platform].cells and team_case(cell.case)
    )  # on both sides
    return [
        Tier("behaviours", titles[0], compared - team_checked, tuple(suite), notes=tuple(notes) + tuple(extra)),
        Tier("cases", titles[1], team_checked, tuple(team))
        if team_asked
        else not_judged("cases", titles[1], "not asked: give --cases DIR"),
    ]


# The kinds of API change a team acts on, and their weight; added and undeprecated names are counted, not listed.
NAME_CHANGES = {"removed": BREAKS, "signature": WARNS, "moved": WARNS, "deprecated": WARNS}


def names_tier(
    changes: Sequence[Any] | None,
    findings: Sequence[Any] = (),
    scanned: bool = False,
    missing: str = "",
    names: int | None = None,
    dating: Callable[[Any], Sequence[Any]] = lambda change: (),
) -> Tier:
    """The public names removed, deprecated, moved or changed in signature from A to B (`api.diff.Change`s), each
    with the places that use it (`api.judge.Finding`s at B, when the team's code was scanned); a name the scan
    found that the diff does not list (removed before A, say) is listed too. `names`: how many names the two
    censuses hold (what was compared; the changes counted when not given). `dating`: a change's dated events
    (`api.dating.date_change` over the censuses between A and B); when it gives some, they are the item's reason
    (`deprecated in 0.4.26 or before, removed in 0.6.0`), else `removed in B` as the diff dates it."""
    if changes is None or missing:
        return not_judged("names", "Public names", missing or "no census for a side")
    where: dict[str, list[str]] = {}
    for found in findings:
        where.setdefault(found.name, []).append(f"{found.path}:{found.line}")
    items: list[Finding] = []
    for c in changes:
        if c.change in NAME_CHANGES:
            dated = tuple(dating(c))
            reason = ", ".join(d.words() for d in dated) if dated else f"{c.change} in {c.since}"
            items.append(item(c.name, reason, c.message, where.get(c.name, ()), NAME_CHANGES[c.change], dated))
    listed = {c.name for c in changes}
    for found in findings:
        if found.name not in listed:
            listed.add(found.name)
            detail = found.message + (f" (use {found.replacement})" if found.replacement else "")
            weight = BREAKS if found.state in ("removed", "missing") else WARNS
            items.append(item(found.name, f"{found.state} at B", detail, where[found.name], weight))
    counted = {kind: sum(c.change == kind for c in changes) for kind in ("added", "undeprecated")}
    notes = [f"{n} name(s) {kind}" for kind, n in counted.items() if n]
    if scanned:
        notes.append(f"{len(findings)} use(s) in the scanned code")
    checked = len(changes) if names is None else names
    return Tier("names", "Public names", checked, tuple(sorted(items, key=lambda i: -i.weight)), notes=tuple(notes))


def ratio_words(ratio: float | None) -> str:
    """`x1.40 slower`-style words for a ratio new/old (`new from 0` when the old value was 0)."""
    if ratio is None:
        return "new from 0"
    return f"x{ratio:.3g}" if ratio >= 1 else f"x{ratio:.3g} (1/{1 / ratio:.3g})" if ratio > 0 else "x0"


@dataclass(frozen=True)
class WorkloadJudged:
    """One workload at B against A: each metric's verdict (`perf.stats.Verdict`), each side's error, and whether
    each side's samples came from storage."""

    id: str
    verdicts: dict[str, Any]
    errors: tuple[str, str] = ("", "")
    reused: tuple[bool, bool] = (False, False)


def perf_tier(judged: Sequence[WorkloadJudged] | None, before: str, after: str, missing: str = "") -> Tier:
    """Every workload's metrics at B against A: each verdict other than `same` an item (what the gate refuses,
    `perf.decisions.upward`: a timed regression or an exact metric that grew, weighs as breaking), a workload that
    fails on a side an item of its own."""
    if judged is None or missing:
        return not_judged("performance", "Performance", missing or "not sampled")
    items: list[Finding] = []
    for workload in judged:
        for side, error in zip((before, after), workload.errors):
            if error:
                items.append(item(workload.id, f"fails on {side}", error, weight=BREAKS))
        for metric, verdict in workload.verdicts.items():
            if verdict.verdict == "same":
                continue
            grew = upward(verdict)  # the gate's own rule: a timed regression, an exact metric that grew (from 0 too)
            p = f", p={verdict.p:.2g}" if verdict.p is not None else ""
            detail = f"{ratio_words(verdict.ratio)} (median {after}/{before}{p}, noise band x{verdict.band:.2f})"
            items.append(
                item(
                    f"{workload.id} {metric}",
                    verdict.verdict,
                    detail,
                    weight=BREAKS if grew else WARNS if verdict.verdict == "unknown" else INFO,
                )
            )
    notes = []
    for index, side in enumerate((before, after)):
        reused = sum(w.reused[index] for w in judged)
        if reused:
            notes.append(f"samples of {reused} workload(s) on {side} reused from storage (an earlier session)")
    workloads = len({found.subject.split(" ")[0] for found in items})  # `workload metric`, or the one that fails
    return Tier("performance", "Performance", len(judged), tuple(items), notes=tuple(notes), changed=workloads)


DOWNSTREAM_TITLE = "Downstream suites"
# The classes of a downstream judgement the review counts in a note rather than lists (`downstream.judge`).
COUNTED = {
    "flaky": "flaky",
    "spurious": "spurious",
    "broken_changed": "broken on both with another cause",
    "appeared": "appeared",
    "vanished": "vanished",
}


def _tests(count: int) -> str:
    return f"{count} test{'s' if count != 1 else ''}"


def _cause_item(label: str, cause: Cause, change: str, weight: int) -> Finding:
    """One signature's tests of a suite: `chex==0.1.90: AttributeError: ... (in chex)`, `3 tests regressed`, and up
    to three of them as examples."""
    shown = ", ".join(cause.nodes[:EXAMPLES]) + (", ..." if len(cause.nodes) > EXAMPLES else "")
    owner = f" (in {cause.owner})" if cause.owner else ""
    return item(
        f"{label}: {cause.signature or 'no signature'}{owner}",
        f"{_tests(len(cause.nodes))} {change}",
        f"e.g. {shown}",
        weight=weight,
    )


def downstream_review_tier(judged: Sequence[tuple[str, str, str, Judgement]] | None, missing: str = "") -> Tier:
    """The downstream suites from A to B: the judgements `(suite label, A, B, judgement)` of `downstream.judge`
    (acknowledgements play no part: a review gates nothing). Per suite, each signature its regressed tests share is
    an item that breaks and each its fixed tests share one of information (a count and up to three examples each);
    a candidate the suite's lock cannot be installed with is an item that breaks (its tests never ran), a baseline
    it cannot be installed with one that warns (nothing of the suite judged); flaky, spurious, appeared and vanished
    tests, tests broken on both with another cause, and new deprecation warnings are counted in a note."""
    if judged is None or missing:
        return not_judged("downstream", DOWNSTREAM_TITLE, missing or "no suite judged")
    items: list[Finding] = []
    notes: list[str] = []
    changed = compared = 0
    for label, before, after, judgement in judged:
        if baseline_uninstallable(judgement):
            why = next((c.signature for c in judgement.changes if c.before == "uninstallable"), "")
            items.append(item(label, f"cannot be installed with jax {before}", f"nothing judged; {why}", weight=WARNS))
            continue
        compared += judgement.compared
        for cause in judgement.causes("uninstallable") + judgement.causes("uninstallable", acknowledged=True):
            detail = f"{_tests(len(cause.nodes))} of jax {before} not run: {cause.signature}"
            items.append(item(label, f"cannot be installed with jax {after}", detail, weight=BREAKS))
        for kind, change, weight in (("regressed", "regressed", BREAKS), ("fixed", "fixed", INFO)):
            for acknowledged in (False, True):
                items += [_cause_item(label, c, change, weight) for c in judgement.causes(kind, acknowledged)]
        counts = judgement.counts()
        changed += sum(counts.get(kind, 0) for kind in ("uninstallable", "regressed", "fixed"))
        counted = [f"{counts[kind]} {words}" for kind, words in COUNTED.items() if counts.get(kind)]
        if judgement.new_warnings:
            counted.append(f"{len(judgement.new_warnings)} new deprecation warning(s) from the library's code")
        if counted:
            notes.append(f"{label}: {', '.join(counted)}")
    ordered = tuple(sorted(items, key=lambda i: -i.weight))
    return Tier("downstream", DOWNSTREAM_TITLE, compared, ordered, notes=tuple(notes), changed=changed)


def review_counts(tiers: Iterable[Tier]) -> dict[str, int | None]:
    """Each tier's count of changes (None: not judged)."""
    return {t.name: None if t.missing else len(t.findings) for t in tiers}
