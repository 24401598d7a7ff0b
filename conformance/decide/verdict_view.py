"""The one gate's verdict as text, Markdown and JSON (`gate`, `gate --markdown PATH`, `gate --json PATH`). Pure.

The cell tier keeps its own full lines (`decide.render.gate_text`); every other tier is a section of its findings,
failing ones first; the last line is the one verdict. Every line of text goes through `safetext.terminal_text` (a
workload's error text, a `[[perf]]` reason or a scanned file's name are not the suite's own), Markdown through
`decide.render.md`.

The JSON (`GATE_FORMAT`, schema `report/schemas/gate.schema.json`): `{"format": 1, "kind": "gate", "title",
"passed", "exit_code", "tiers": [{"name", "title", "judged", "passed", "counts": {state: n}, "problems": [...],
"findings": [{"subject", "state", "reason", "detail"}]}], "skipped": [...], "expired": [...], "expiring": [...]}`.

`diff --json PATH` (`DIFF_FORMAT`, schema `report/schemas/gate.schema.json`, its `diff`): `{"format": 1, "kind": "diff",
"compared", "unchanged", "mismatch", "changes": [{"platform", "cell", "baseline", "candidate", "baseline_jax",
"candidate_jax", "printed_only", "known_issue"}], "only_in_baseline": [...], "only_in_candidate": [...]}`; a status
is null on the side that lacks the cell.
"""

from __future__ import annotations

from typing import Any

from conformance.decide.render import md
from conformance.decide.tiers import FAILING, STATES, Tier, Verdict
from conformance.safetext import terminal_text

GATE_FORMAT = 1
DIFF_FORMAT = 1
HEADINGS = {"regressed": "REGRESSION", "unjudged": "NOT JUDGED", "acknowledged": "acknowledged", "noted": "noted"}


def _ordered(tier: Tier) -> list:
    return sorted(tier.findings, key=lambda f: STATES.index(f.state))


def tier_summary(tier: Tier) -> str:
    """`workloads (jax A -> B): 3 judged, 1 regressed, 0 acknowledged, 0 unjudged, 2 noted: FAIL`."""
    counts = ", ".join(f"{tier.count(state)} {state}" for state in STATES)
    return f"{tier.name} ({tier.title}): {tier.judged} judged, {counts}: {'FAIL' if tier.failed else 'pass'}"


def _finding_line(finding: Any) -> str:
    detail = f" -- {finding.detail}" if finding.detail else ""
    return f"  {HEADINGS[finding.state]}: {finding.subject}: {finding.reason}{detail}"


def verdict_line(verdict: Verdict) -> str:
    """The one verdict: PASS or FAIL, and which tiers failed."""
    if verdict.exit_code == 0:
        return f"gate: PASS ({', '.join(t.name for t in verdict.tiers)} judged) (exit 0)"
    why = [f"{name} failed" for name in verdict.failing_tiers()]
    why += [f"{len(verdict.expired)} expectation(s) expired"] if verdict.expired else []
    return f"gate: FAIL: {'; '.join(why) or 'nothing was judged'} (exit 1)"


def verdict_text(verdict: Verdict) -> str:
    """The gate's text: a cell tier alone prints as the cell gate always did (the tiers not judged are in the JSON);
    with more tiers each is a section."""
    alone = len(verdict.tiers) == 1 and verdict.tiers[0].name == "cells" and verdict.tiers[0].lines
    if alone and not (verdict.expired or verdict.expiring or verdict.notes):  # what was not judged: in the JSON
        return "\n".join(verdict.tiers[0].lines)
    lines: list[str] = []
    for tier in verdict.tiers:
        if tier.lines:
            lines += [*tier.lines, ""]
        lines.append(terminal_text(tier_summary(tier)))
        lines += [terminal_text(f"  problem: {problem}") for problem in tier.problems]
        if not tier.lines:
            lines += [terminal_text(_finding_line(f)) for f in _ordered(tier)]
    lines += [terminal_text(f"not judged: {line}") for line in verdict.skipped]
    lines += [terminal_text(f"note: {line}") for line in verdict.notes]
    lines += [terminal_text(f"FAIL: {line}") for line in verdict.expired]
    lines += [terminal_text(f"warning: {line}") for line in verdict.expiring]
    return "\n".join([*lines, verdict_line(verdict)])


def verdict_markdown(verdict: Verdict, cells_markdown: str = "") -> str:
    """The gate's Markdown (a pull request comment): the verdict, the cell gate's own Markdown, a section per other
    tier with its failing findings first."""
    lines = [f"## {md(verdict.title)}", "", f"**{md(verdict_line(verdict))}**", ""]
    for tier in verdict.tiers:
        if tier.name == "cells" and cells_markdown:
            lines += [cells_markdown.rstrip("\n"), ""]
            continue
        lines += [f"### {md(tier_summary(tier))}", ""]
        lines += [f"- problem: {md(problem)}" for problem in tier.problems]
        for f in _ordered(tier):
            head = f"**{md(HEADINGS[f.state])}**" if f.state in FAILING else md(HEADINGS[f.state])
            lines.append(f"- {head} {md(f.subject)}: {md(f.reason)}" + (f" ({md(f.detail)})" if f.detail else ""))
        lines.append("")
    extra = [
        *(f"not judged: {s}" for s in verdict.skipped),
        *(f"note: {s}" for s in verdict.notes),
        *(f"FAIL: {s}" for s in verdict.expired),
        *(f"warning: {s}" for s in verdict.expiring),
    ]
    lines += [f"- {md(line)}" for line in extra]
    return "\n".join(lines).rstrip("\n") + "\n"


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The gate's public JSON (see the module docstring)."""
    return {
        "format": GATE_FORMAT,
        "kind": "gate",
        "title": verdict.title,
        "passed": verdict.exit_code == 0,
        "exit_code": verdict.exit_code,
        "tiers": [t.to_json() for t in verdict.tiers],
        "skipped": list(verdict.skipped),
        "expired": list(verdict.expired),
        "expiring": list(verdict.expiring),
    }


def diff_json(set_diff: Any, mismatch: str | None) -> dict[str, Any]:
    """`diff`'s public JSON (see the module docstring)."""
    status = lambda cell: cell.status.value if cell is not None else None  # noqa: E731
    changes = [
        {
            "platform": c.platform,
            "cell": c.cell_id,
            "baseline": status(c.baseline),
            "candidate": status(c.candidate),
            "baseline_jax": c.baseline_jax,
            "candidate_jax": c.candidate_jax,
            "printed_only": bool(c.printed_only),
            "known_issue": bool(c.known_issue),
        }
        for c in set_diff.changes
    ]
    return {
        "format": DIFF_FORMAT,
        "kind": "diff",
        "compared": set_diff.compared,
        "unchanged": set_diff.unchanged,
        "mismatch": mismatch,
        "changes": changes,
        "only_in_baseline": list(set_diff.only_in_baseline),
        "only_in_candidate": list(set_diff.only_in_candidate),
    }
