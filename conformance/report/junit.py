"""JUnit XML of the report: one test suite per column, one test case per cell. Pure logic on the report model."""

from __future__ import annotations

from xml.sax.saxutils import escape as xml_escape, quoteattr

from conformance.core.status import Status
from conformance.report.common import visible
from conformance.report.model import ReportModel


def junit_xml(model: ReportModel) -> str:
    """JUnit XML: one test suite per column, one test case per cell (differs and broken statuses fail)."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
    for i, column in enumerate(model.columns):
        name = f"jax {column.label} {column.platform}"
        cases = []
        failures = skipped = errors = 0
        for row in model.param_rows:
            cell = row.cells[i]
            if cell.result is None:
                continue
            status = cell.result.status
            body = ""
            message = quoteattr(visible(f"{cell.word}: {cell.result.reason}".strip(": "))[:500])
            if status in (Status.SKIPPED, Status.UNSUPPORTED):
                skipped += 1
                body = f"<skipped message={message}/>"
            elif status in (Status.ERROR, Status.CRASH, Status.TIMEOUT):
                errors += 1
                body = f"<error message={message}/>"
            elif status is not Status.CONFORMS:
                failures += 1
                diff = "\n".join(
                    f"{d.get('path')}: expected {d.get('expected')!r}, observed {d.get('observed')!r}"
                    for d in cell.result.diff
                )
                body = f"<failure message={message}>{xml_escape(visible(diff))}</failure>"
            if cell.printed_differs:  # a mark, not a failure: the status decides that
                printed = "\n".join(
                    f"{d.get('path')}: printed {d.get('expected')!r}, observed {d.get('observed')!r}"
                    for d in cell.result.printed_diff
                )
                body = (
                    '<properties><property name="printed_output_differs" value="true"/></properties>'
                    + body
                    + f"<system-out>{xml_escape(visible('printed output differs: ' + printed))}</system-out>"
                )
            cases.append(
                f"<testcase classname={quoteattr(row.case_id)} name={quoteattr(row.cell_id)} "
                f'time="{cell.result.duration_s:.3f}">{body}</testcase>'
            )
        out.append(
            f'<testsuite name={quoteattr(name)} tests="{len(cases)}" failures="{failures}" '
            f'errors="{errors}" skipped="{skipped}">'
        )
        out.extend(cases)
        out.append("</testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
