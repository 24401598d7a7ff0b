"""Text and Markdown for `diff`, `gate` and `bisect` results. Pure: returns strings, prints nothing.

Everything that comes from result data or an expectations file is escaped in Markdown
(HTML and Markdown specials, backticks included), so a crafted observation cannot inject
markup into a CI summary.
"""

from __future__ import annotations

import html
import re
from typing import Any

from conformance.core.status import BROKEN, describe
from conformance.core.versions import direction
from conformance.decide.diff import CellChange, SetDiff, cell_change
from conformance.decide.gate import GateOutcome, Judged
from conformance.decide.bisect import BisectOutcome
from conformance.decide.commits import compare_url, jaxlib_compare_url
from conformance.results.schema import CellResult

VALUE_CHARS = 120
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~!{}])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """`text` with every control character shown as an escape, so result data can neither start a line of its own
    (a forged `::error` annotation in CI) nor move the cursor or colour the terminal (ANSI escapes)."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


def _lines(lines: list[str]) -> str:
    return "\n".join(terminal_safe(line) for line in lines)


def short(value: Any, limit: int = VALUE_CHARS) -> str:
    """A value as one line of at most `limit` characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = VALUE_CHARS) -> str:
    """`text` on one line, cut to `limit` characters."""
    plain = " ".join(text.split())
    return plain if len(plain) <= limit else plain[: limit - 1] + "…"


def md(text: Any) -> str:
    """`text` as inert Markdown: one line, HTML escaped, Markdown specials and backticks backslashed."""
    plain = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(plain, quote=False))


def status_words(cell: CellResult | None, jax: str) -> str:
    """A side's status, with the known-issue reading where it differs from the word (`conforms (bug still present)`)."""
    if cell is None:
        return "absent"
    words = describe(cell.status, cell.known_issue, direction(jax))
    return cell.status.value if words == cell.status.value else f"{cell.status.value} ({words})"


def change_headline(change: CellChange) -> str:
    """`linux-x86_64 case[param]: conforms -> differs (jax 0.7.2 -> 0.12.0.1)`."""
    before = status_words(change.baseline, change.baseline_jax)
    after = status_words(change.candidate, change.candidate_jax)
    return (
        f"{change.platform} {change.cell_id}: {before} -> {after} (jax {change.baseline_jax} -> {change.candidate_jax})"
    )


def difference_lines(change: CellChange) -> list[str]:
    """One line per field that differs (`path: baseline -> candidate`), or why a side has no observation."""
    lines = []
    sides = [("baseline", change.baseline), ("candidate", change.candidate)]
    if any(cell is not None and cell.observation is None for _, cell in sides) and change.baseline and change.candidate:
        for label, cell in sides:
            if cell.observation is None:
                lines.append(
                    f"no observation in the {label}" + (f": {one_line(cell.reason, 200)}" if cell.reason else "")
                )
        return lines
    for d, tier in [(d, "") for d in change.differences] + [(d, "printed ") for d in change.printed_differences]:
        if d.kind == "missing":
            lines.append(f"{tier}{d.path}: {short(d.expected)} -> (absent)")
        elif d.kind == "unexpected":
            lines.append(f"{tier}{d.path}: (absent) -> {short(d.observed)}")
        else:
            lines.append(f"{tier}{d.path}: {short(d.expected)} -> {short(d.observed)}")
    marks = [cell is not None and cell.printed_differs for cell in (change.baseline, change.candidate)]
    if change.baseline is not None and change.candidate is not None and marks[0] != marks[1]:
        lines.append(
            "printed output " + ("now differs from the chapter's" if marks[1] else "now matches the chapter's again")
        )
    if change.candidate is not None and change.candidate.status in BROKEN and change.candidate.reason:
        lines.append(f"reason: {one_line(change.candidate.reason, 200)}")
    return lines


def one_sided_platforms(only_in_baseline, only_in_candidate) -> list[str]:
    """One line per platform that only one side ran, so it was not compared."""
    return [
        f"{platform} is only in the {side} (not compared)"
        for side, platforms in (("baseline", only_in_baseline), ("candidate", only_in_candidate))
        for platform in platforms
    ]


def diff_text(set_diff: SetDiff) -> str:
    """The `diff` command's output."""
    lines = []
    for change in set_diff.changes:
        lines.append(change_headline(change) + (" [printed output only]" if change.printed_only else ""))
        lines.extend("    " + line for line in difference_lines(change))
    lines.extend(one_sided_platforms(set_diff.only_in_baseline, set_diff.only_in_candidate))
    printed = sum(change.printed_only for change in set_diff.changes)
    lines.append(
        f"{len(set_diff.changes)} cell(s) differ"
        + (f" ({printed} in printed output only)" if printed else "")
        + f", {set_diff.unchanged} unchanged"
    )
    return _lines(lines)


def _acknowledgement(judged: Judged) -> str:
    entry = judged.acknowledged_by
    assert entry is not None
    accepted = "a known intermittent result" if judged.accepted_as == "intermittent" else "expected"
    bits = [f"{accepted} by expectation {entry.label}"]
    if entry.reason:
        bits.append(entry.reason)
    if entry.bug:
        bits.append(entry.bug)
    if entry.owner:
        bits.append(f"owner {entry.owner}")
    if entry.expires:
        bits.append(f"expires {entry.expires}")
    return "; ".join(bits)


SECTIONS = (
    ("regressions", "Regressions"),
    ("missing", "Missing from the candidate"),
    ("acknowledged", "Acknowledged regressions"),
    ("review", "Changes to review"),
    ("printed", "Printed output changes (not failing)"),
    ("good", "Good news"),
)


# Stored cells the checkout no longer declares: listed, never judged as "missing: it was not run".
RETIRED_HEADING = "No longer in the suite (not compared, not failing)"


def _verdict(outcome: GateOutcome) -> str:
    printed = f", {len(outcome.printed)} printed-output change(s)" if outcome.printed else ""
    if not outcome.compared:
        return "FAIL: no cell was compared (the two sides share no platform or no cell) (exit 1)"
    reasons = []
    if outcome.regressions:
        reasons.append(f"{len(outcome.regressions)} regression(s) not acknowledged")
    if outcome.unaccepted_gaps:
        gaps = len(outcome.missing), len(outcome.only_in_baseline) + len(outcome.only_in_candidate)
        reasons.append(
            f"{gaps[0]} baseline cell(s) missing from the candidate and {gaps[1]} platform(s) on one side "
            f"only (accept them with --allow-missing)"
        )
    if outcome.expired:
        reasons.append(f"{len(outcome.expired)} expectation(s) expired")
    if reasons:
        return f"FAIL: {'; '.join(reasons)}{printed} (exit 1)"
    return f"PASS: no regression ({len(outcome.acknowledged)} acknowledged{printed}) (exit 0)"


def _compared_line(outcome: GateOutcome) -> str:
    accepted = (
        " (accepted with --allow-missing)"
        if outcome.allow_missing and (outcome.missing or outcome.only_in_baseline or outcome.only_in_candidate)
        else ""
    )
    retired = f", {len(outcome.retired)} no longer in the suite" if outcome.retired else ""
    return (
        f"{outcome.compared} cell(s) compared, {outcome.unchanged} unchanged, {len(outcome.missing)} missing "
        f"from the candidate{accepted}{retired}."
    )


def _dated_lines(outcome: GateOutcome, lead: str) -> list[str]:
    """`FAIL: expectation X (line N) expired on DAY (owner O, bug B): ...` per expired entry, a warning per
    entry that expires soon."""
    if outcome.dates is None:
        return []
    lines = [f"FAIL: {outcome.dates.expired_line(entry)}" for entry in outcome.expired] + [
        f"warning: {outcome.dates.expiring_line(entry)}" for entry in outcome.expiring
    ]
    return [lead + line if i == 0 else line for i, line in enumerate(lines)]


def gate_text(outcome: GateOutcome, title: str) -> str:
    """The `gate` command's plain-text output: regressions first, then acknowledged ones, review, good news."""
    lines = [title]
    for attr, heading in SECTIONS:
        items: list[Judged] = getattr(outcome, attr)
        if not items:
            continue
        lines.append(f"\n{heading.upper()} ({len(items)})")
        for judged in items:
            lines.append(f"  {change_headline(judged.change)}")
            lines.append(f"      {judged.why}")
            if judged.acknowledged_by is not None:
                lines.append(f"      {_acknowledgement(judged)}")
            lines.extend("      " + line for line in difference_lines(judged.change))
            if attr == "regressions" and judged.change.candidate and judged.change.candidate.command:
                lines.append(f"      reproduce: {judged.change.candidate.command}")
    if outcome.stale:
        lines.append(f"\nSTALE EXPECTATIONS ({len(outcome.stale)})")
        lines.extend(f"  {entry.label}: matches no cell of the candidate" for entry in outcome.stale)
    lines.extend(_dated_lines(outcome, "\n"))
    lines.extend(f"\nnote: {line}" for line in one_sided_platforms(outcome.only_in_baseline, outcome.only_in_candidate))
    lines.extend(
        f"\nnote: {platform} is not gated: the baseline has no results for it" for platform in outcome.not_gated
    )
    if outcome.retired:
        lines.append(f"\n{RETIRED_HEADING.upper()} ({len(outcome.retired)})")
        lines.extend(f"  {line}" for line in outcome.retired)
    lines.append(f"\n{_compared_line(outcome)} {_verdict(outcome)}")
    # Only a heading's own leading newline is kept; any other control character, from result data, is escaped.
    return "\n".join(("\n" if line.startswith("\n") else "") + terminal_safe(line.lstrip("\n")) for line in lines)


def gate_markdown(outcome: GateOutcome, title: str) -> str:
    """The `gate` command's Markdown, for a CI summary; result data is escaped."""
    lines = [f"## {md(title)}", "", f"**{md(_verdict(outcome))}**"]
    for attr, heading in SECTIONS:
        items: list[Judged] = getattr(outcome, attr)
        if not items:
            continue
        lines += ["", f"### {heading} ({len(items)})", ""]
        for judged in items:
            lines.append(f"- {md(change_headline(judged.change))}: {md(judged.why)}")
            if judged.acknowledged_by is not None:
                lines.append(f"  - {md(_acknowledgement(judged))}")
            lines.extend(f"  - {md(line)}" for line in difference_lines(judged.change))
    if outcome.stale:
        lines += ["", f"### Stale expectations ({len(outcome.stale)})", ""]
        lines.extend(f"- {md(entry.label)}: matches no cell of the candidate" for entry in outcome.stale)
    dated = _dated_lines(outcome, "")
    if dated:
        lines += ["", "### Expectations expired or expiring", ""] + [f"- {md(line)}" for line in dated]
    sided = one_sided_platforms(outcome.only_in_baseline, outcome.only_in_candidate) + [
        f"{platform} is not gated: the baseline has no results for it" for platform in outcome.not_gated
    ]
    if sided:
        lines += ["", "### Platforms on one side only", ""] + [f"- {md(line)}" for line in sided]
    if outcome.retired:
        lines += ["", f"### {RETIRED_HEADING} ({len(outcome.retired)})", ""] + [
            f"- {md(line)}" for line in outcome.retired
        ]
    lines += ["", md(_compared_line(outcome))]
    return "\n".join(lines) + "\n"


def observation_line(cell: CellResult | None, jax: str = "") -> str:
    """A cell's status (with its known-issue reading) and observation on one line, or its reason without one."""
    if cell is None:
        return "(not tested)"
    status = status_words(cell, jax)
    if cell.observation is None:
        return terminal_safe(f"{status}: {one_line(cell.reason, 200)}")
    return terminal_safe(f"{status}: {short(cell.observation, 400)}")


def bisect_text(outcome: BisectOutcome, cell_id: str, find_fix: bool = False) -> str:
    """The end of `bisect`'s output: the last good and the first bad release, both observations, what was skipped."""

    lines = []
    if outcome.ends_agree:
        lines.append(f"jax {outcome.start} and jax {outcome.end} agree on {cell_id}, so there is nothing to bisect:")
        lines.append(f"  jax {outcome.start}: {observation_line(outcome.start_result, outcome.start)}")
        lines.append(f"  jax {outcome.end}: {observation_line(outcome.end_result, outcome.end)}")
    else:
        good, bad = (
            ("last release with the bug", "first release without it") if find_fix else ("last good", "first bad")
        )
        for label, version, found in (
            (good, outcome.last_good, outcome.last_good_result),
            (bad, outcome.first_bad, outcome.first_bad_result),
        ):
            lines.append(f"{label}: jax {version}   {observation_line(found, version)}")
        change = cell_change(
            "", outcome.last_good_result, outcome.first_bad_result, outcome.last_good, outcome.first_bad
        )
        if change is not None:
            lines.extend("  " + line for line in difference_lines(change))
        if outcome.untested_between:
            lines.append(
                f"the change happened in one of these untested releases or at jax {outcome.first_bad}: "
                f"{', '.join(outcome.untested_between)}"
            )
    for skipped in outcome.skipped:
        lines.append(f"skipped jax {skipped.version}: {one_line(skipped.why, 300)}")
    lines.append(
        f"tested {len(outcome.tested)} of {len(outcome.releases)} releases "
        f"({outcome.releases[0]} .. {outcome.releases[-1]})"
    )
    return _lines(lines)


def commit_lines(report: Any) -> list[str]:
    """The builds the verdict changes between, with their jax and jaxlib commits, and the compare link(s)."""
    good, bad = report.good_build, report.bad_build
    if good is None or bad is None:
        return []
    lines = [
        f"  last good build: {good.line()}",
        f"  first bad build: {bad.line()}",
        f"  jax commits between them: {compare_url(good, bad)}",
    ]
    if jaxlib_compare_url(good, bad):
        lines.append(f"  jaxlib commits between them: {jaxlib_compare_url(good, bad)}")
    return lines


def attribution_lines(report: Any) -> list[str]:
    """`--attribute`'s verdict and the mixes it rests on (of the narrowest pair: the dev builds' with `--pre`)."""
    if report.attribution is None:
        return []
    return [f"attribution: {report.attribution.verdict}", *(f"  {line}" for line in report.attribution.details)]


def bisect_session_text(report: Any) -> str:
    """How a whole bisect session ended (a `decide.bisect_session.BisectReport`): the search's outcome, the releases
    answered from storage and those run, and the wall time; or that `--find-fix` has no fix to find."""
    if report.outcome is None:
        return (
            f"the known issue {report.no_fix} on both jax {report.releases[0]} and jax {report.releases[-1]}: "
            f"no fix to find"
        )
    source = report.source.lines() if getattr(report, "source", None) is not None else []
    dev = report.dev.lines(observation_line) if getattr(report, "dev", None) is not None else []
    return "\n".join(
        [
            f"\n{bisect_text(report.outcome, report.cell_id, report.find_fix)}",
            *commit_lines(report),
            *dev,
            *attribution_lines(report),
            *source,
            f"answered from stored results in {report.results}: {', '.join(report.from_storage) or 'none'}; "
            f"ran: {', '.join(report.ran) or 'nothing'}",
            f"wall time: {report.wall_s:.1f}s",
        ]
    )
