"""The upgrade review said three ways, from one `Review`. Pure.

- `summary_text`: what `upgrade` prints, read in one screen: one heading per tier with its count, then its top
  items (the heaviest first), each cut to one line.
- `review_markdown`: the same for a pull request comment (GitHub's limit is 65,536 characters): every tier's
  items up to a bound per tier, the rest counted; text from JAX, workloads and the team's files escaped
  (`decide.render.md`).
- `review_json`: the documented, versioned JSON (`FORMAT`, `VERSION`; its JSON Schema is
  `conformance/decide/schemas/upgrade-1.schema.json`, described in docs/decisions.md#upgrade).
"""

from __future__ import annotations

from typing import Any

from conformance.decide.render import md, one_line
from conformance.decide.tiers import WEIGHTS, Finding, Tier
from conformance.decide.upgrade_tiers import Review

FORMAT = "jax-conformance-upgrade"
VERSION = 1
SUMMARY_ITEMS = 5  # per tier in the terminal summary
MARKDOWN_ITEMS = 40  # per tier in the Markdown
MARKDOWN_LIMIT = 60_000  # characters: under GitHub's 65,536 for a comment, with room for a header a CI step adds
LINE = 110


def _item_line(item: Finding, limit: int = LINE) -> str:
    where = f" [used at {', '.join(item.where[:3])}{' ...' if len(item.where) > 3 else ''}]" if item.where else ""
    return one_line(f"{item.subject}: {item.reason}" + (f" - {item.detail}" if item.detail else "") + where, limit)


def item_json(item: Finding) -> dict[str, Any]:
    """One finding in the review's public JSON (schema `upgrade-1`): its name, the change, the detail, the places that
    use it and its weight's word; a name dated over the censuses between A and B adds `dated`, its events (an
    optional field, added within version 1)."""
    found = {
        "name": item.subject,
        "change": item.reason,
        "detail": item.detail,
        "where": list(item.where),
        "weight": WEIGHTS[item.weight],
    }
    if item.dated:
        found["dated"] = [d.to_json() for d in item.dated]
    return found


def summary_text(review: Review, count: int = SUMMARY_ITEMS) -> str:
    """The terminal summary: a title, one line of counts, then per tier its heading and top items."""
    counts = ", ".join(f"{t.name} {'-' if t.missing else len(t.findings)}" for t in review.tiers)
    lines = [f"upgrade jax {review.before} -> {review.after}: {counts}"]
    lines += [f"note: {n}" for n in review.notes]
    for tier in review.tiers:
        lines += ["", tier.heading]
        lines += [f"  {_item_line(item)}" for item in tier.top(count)]
        if len(tier.findings) > count:
            lines.append(f"  ... and {len(tier.findings) - count} more (--markdown or --json lists them all)")
        lines += [f"  note: {one_line(n, LINE)}" for n in tier.notes]
    return "\n".join(lines)


def _tier_markdown(tier: Tier, count: int) -> list[str]:
    lines = ["", f"### {md(tier.heading)}", ""]
    if tier.missing:
        return lines[:-1]
    for item in tier.top(count):
        where = f" (used at {', '.join(f'`{md(w)}`' for w in item.where[:5])})" if item.where else ""
        lines.append(
            f"- **{md(item.subject)}**: {md(item.reason)}"
            + (f" - {md(one_line(item.detail, 240))}" if item.detail else "")
            + where
        )
    if len(tier.findings) > count:
        lines.append(f"- ... and {len(tier.findings) - count} more (the JSON lists them all)")
    lines += [f"- _note_: {md(n)}" for n in tier.notes]
    return lines


def review_markdown(review: Review, count: int = MARKDOWN_ITEMS) -> str:
    """The Markdown for a pull request comment; fewer items per tier until it fits `MARKDOWN_LIMIT`."""
    while True:
        lines = [f"## Upgrading JAX {md(review.before)} → {md(review.after)}", ""]
        lines.append(
            " · ".join(f"{md(t.title)}: {'not judged' if t.missing else len(t.findings)}" for t in review.tiers)
        )
        lines += [f"\n_note_: {md(n)}" for n in review.notes]
        for tier in review.tiers:
            lines += _tier_markdown(tier, count)
        text = "\n".join(lines) + "\n"
        if len(text) <= MARKDOWN_LIMIT or count <= 1:
            return text
        count //= 2


def review_json(review: Review, suite_version: str) -> dict[str, Any]:
    """The public JSON (see the module docstring): every tier with every item."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "suite": suite_version,
        "from": review.before,
        "to": review.after,
        "notes": list(review.notes),
        "tiers": [
            {
                "key": t.name,
                "title": t.title,
                "judged": not t.missing,
                "missing": t.missing or None,
                "checked": t.judged,
                "changed": t.changing,
                "count": len(t.findings),
                "notes": list(t.notes),
                "items": [item_json(i) for i in t.findings],
            }
            for t in review.tiers
        ],
    }
