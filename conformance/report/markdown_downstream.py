"""The Markdown page's summary of "Downstream test suites": per suite its compatibility answer, its tests counted per
status on each release (only the statuses some release has), and per release with regressions their causes with
counts and an example. Short by design, as the page's other summaries (`report.markdown_sections`); pure logic, the
escaping is `report.markdown`'s."""

from __future__ import annotations

from collections.abc import Callable

from conformance.report.downstreamview import DownstreamView

Escape = Callable[..., str]


def downstream_summary(view: DownstreamView | None, text: Escape, code: Escape, page: str) -> list[str]:
    """ "Downstream test suites": a paragraph, a table of counts and a list of causes per suite (nothing without
    suites)."""
    if view is None or not view.suites:
        return []
    where = f" ([in the interactive report]({page}#downstream))" if page else ""
    lines = [
        "",
        "## Downstream test suites",
        "",
        f"Each suite's own tests, run on each release and judged test by test against its baseline, the first "
        f"release it was installed on{where}.",
    ]
    for suite in view.suites:
        lines += ["", f"**{text(suite.label)}**: {text(suite.answer)}."]
        shown = [(label, counts) for label, counts in suite.rows if any(counts)]
        if suite.columns:
            lines += [
                "",
                "| release | " + " | ".join(text(label) for label, _ in shown) + " | tests | verdict |",
                "|---|" + "---|" * (len(shown) + 2),
            ]
            for i, found in enumerate(suite.columns):
                base = " (baseline)" if found.release == suite.baseline else ""
                lines.append(
                    f"| {text(found.release)} | "
                    + "".join(f"{counts[i]} | " for _, counts in shown)
                    + f"{found.total} | {text(found.verdict)}{base} |"
                )
        for found in suite.columns:
            if found.reason:
                lines += ["", f"Cannot be installed with jax {text(found.release)}: {code(found.reason)}."]
        for reg in suite.regressions:
            said = (
                "cannot be installed"
                if reg.uninstallable
                else f"{reg.regressed} regressed test{'' if reg.regressed == 1 else 's'} against {text(reg.baseline)}"
            )
            if reg.against_previous is not None:
                said += f" ({reg.against_previous} against {text(reg.previous)})"
            lines += ["", f"jax {text(reg.release)}: {said}" + (":" if reg.causes else ".")]
            if reg.uninstallable:
                lines[-1] += " " + code(reg.uninstallable)
            lines += _causes(reg.causes, text, code)
            if reg.previous_only:
                lines += ["", "Regressed against the release before only (these failed on the baseline too):"]
                lines += _causes(reg.previous_only, text, code)
    return lines


def _causes(causes, text: Escape, code: Escape) -> list[str]:
    """A list item per cause: its count, library, signature and first example."""
    lines = [""] if causes else []
    for cause in causes:
        owner = f" in {text(cause.owner)}" if cause.owner else ""
        lines.append(
            f"- {cause.count} test{'' if cause.count == 1 else 's'}{owner}: {code(cause.signature)}; "
            f"e.g. {code(cause.examples[0])}"
        )
    return lines
