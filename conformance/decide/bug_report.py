"""A bisect verdict as a bug report ready to file (Markdown) and as JSON for a bot. Pure: strings and dicts.

`issue_markdown(report)` takes a `decide.bisect_session.BisectReport` that found a change: a title, what the
chapter documents, what the last good and the first bad build observed (facts and the field-level diff), both
builds with their jax and jaxlib versions and commits, the compare link, the attribution when there is one, the
environment (platform, Python, numpy) and the cell's self-contained reproduction script inline; with `--pre`, the
narrowest pair of dev builds too. `verdict_json` gives the same verdict as plain JSON (`dev_builds` with `--pre`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from conformance.core.compare import diff
from conformance.decide.commits import compare_url, jaxlib_compare_url
from conformance.decide.render import status_words
from conformance.report.repro import reproduction_script, run_line, script_sources, scripts_used


def changes(before: Any, after: Any) -> list[dict[str, Any]]:
    """The field-level difference of two observations: `{"path", "before", "after", "kind"}` each."""
    return [{"path": d.path, "before": d.expected, "after": d.observed, "kind": d.kind} for d in diff(before, after)]


def _build_json(build: Any) -> dict[str, str]:
    return {"jax": build.jax, "jaxlib": build.jaxlib, "jax_commit": build.jax_hash, "jaxlib_commit": build.jaxlib_hash}


def verdict_json(report: Any) -> dict[str, Any]:
    """The bisect verdict as plain JSON: the cell, the ends, last good and first bad builds with commits and
    observations, the compare link(s), the attribution and the environment; `found` false when nothing changed."""
    outcome = report.outcome
    found = outcome is not None and not outcome.ends_agree
    data: dict[str, Any] = {
        "format": 1,
        "cell": report.cell_id,
        "find_fix": report.find_fix,
        "found": found,
        "releases": list(report.releases),
        "tested": list(outcome.tested) if outcome else [],
        "skipped": ([{"version": s.version, "why": s.why} for s in outcome.skipped] if outcome else []),
        "from_storage": list(report.from_storage),
        "ran": list(report.ran),
        "environment": dict(report.environment),
    }
    if getattr(report, "dev", None) is not None:
        data["dev_builds"] = report.dev.to_json()
    source = getattr(report, "source", None)
    if source is not None:
        data["source"] = {
            "stopped": source.stopped,
            "commits": len(source.commits),
            "jaxlibs": source.jaxlibs,
            "first_bad_commit": source.outcome.first_bad if source.outcome else "",
            "last_good_commit": source.outcome.last_good if source.outcome else "",
            "changed_by_commit": source.changed_by,
            "subject": source.subjects.get(source.changed_by, ""),
        }
    if not found:
        data["no_fix"] = report.no_fix
        return data
    good, bad = report.good_build, report.bad_build
    data.update(
        {
            "last_good": {
                **_build_json(good),
                "status": outcome.last_good_result.status.value,
                "observation": outcome.last_good_result.observation,
            },
            "first_bad": {
                **_build_json(bad),
                "status": outcome.first_bad_result.status.value,
                "observation": outcome.first_bad_result.observation,
            },
            "untested_between": list(outcome.untested_between),
            "diff": changes(outcome.last_good_result.observation, outcome.first_bad_result.observation),
            "compare_url": compare_url(good, bad),
            "jaxlib_compare_url": jaxlib_compare_url(good, bad),
            "attribution": report.attribution.to_json() if report.attribution is not None else None,
        }
    )
    return data


def _code(text: str) -> str:
    """`text` as a code span in a table cell: a `|` escaped (GFM splits cells at it even in a code span), and
    fenced with more backticks than it holds (an error message may quote `jax.jit`)."""
    text = " ".join(str(text).split("\n")).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _facts(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=1, sort_keys=True, default=repr) + "\n```"


def issue_markdown(report: Any, suite: str = "") -> str:
    """The bug report of a bisect that found a change (see the module docstring)."""
    outcome, good, bad, cell = report.outcome, report.good_build, report.bad_build, report.cell
    before, after = outcome.last_good_result, outcome.first_bad_result
    claim = " ".join(str(cell.case.claim).split())
    changed = changes(before.observation, after.observation)
    summary = ", ".join(f"{c['path']} {c['before']!r} -> {c['after']!r}" for c in changed[:3])
    if not summary or before.observation is None or after.observation is None:  # no facts on a side: the statuses
        summary = f"{before.status.value} -> {after.status.value}"
    if report.find_fix:  # the search went from the build with the documented bug to the first without it
        title = (
            f"jax {bad.jax}: {cell.id} no longer shows the documented issue ({summary}); jax {good.jax} is "
            f"the last release with it"
        )
        labels = ("last with the bug", "first without it")
    else:
        title = f"jax {bad.jax}: {cell.id} changes ({summary}); jax {good.jax} is the last release without it"
        labels = ("last good", "first bad")
    lines = [
        f"# {title}",
        "",
        f"**What the documentation says** ({cell.case.section}): {claim}",
        "",
        f"Between jax {outcome.last_good} and jax {outcome.first_bad} the observed behaviour of `{cell.id}` "
        "changes."
        + (
            f" Not tested between them: {', '.join(outcome.untested_between)}."
            if outcome.untested_between
            else " No release lies between them."
        ),
        "",
        "| | jax | jaxlib | jax commit | jaxlib commit | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for label, build, found, version in (
        (labels[0], good, before, outcome.last_good),
        (labels[1], bad, after, outcome.first_bad),
    ):
        lines.append(
            f"| {label} | {build.jax} | {build.jaxlib} | {build.jax_ref} | {build.jaxlib_ref} | "
            f"{status_words(found, version)} |"
        )
    lines += ["", f"Commits between them: {compare_url(good, bad)}"]
    if jaxlib_compare_url(good, bad):
        lines.append(f"jaxlib commits between them: {jaxlib_compare_url(good, bad)}")
    if getattr(report, "dev", None) is not None:
        lines += [
            "",
            "**Through the dev builds** (each jax with the jaxlib of the same night, else the one it declares):",
            "",
            *(f"    {line}" for line in report.dev.lines(lambda found, version: status_words(found, version))),
        ]
    if getattr(report, "source", None) is not None:
        lines += [
            "",
            "**In the jax source** (first-parent commits, each over a released jaxlib it accepts):",
            "",
            *(f"    {line}" for line in report.source.lines()),
        ]
    if report.attribution is not None:
        lines += ["", f"**Attribution:** {report.attribution.verdict}"]
        lines += [f"- {line}" for line in report.attribution.details]
    lines += [
        "",
        f"## Observed in jax {outcome.last_good}",
        _facts(before.observation),
        "",
        f"## Observed in jax {outcome.first_bad}",
        _facts(after.observation),
        "",
        "## What changed (field by field)",
        "",
        f"| field | jax {outcome.last_good} | jax {outcome.first_bad} |",
        "|---|---|---|",
        *(f"| {_code(c['path'])} | {_code(repr(c['before']))} | {_code(repr(c['after']))} |" for c in changed),
        "",
        "## Expected (what the chapter asserts)",
        _facts(after.expected),
    ]
    env = report.environment
    lines += [
        "",
        "## Environment (of the first bad build's run)",
        f"- platform: {env.get('platform', '?')}; Python {env.get('python', '?')}; numpy {env.get('numpy', '?')}"
        f"; backend {env.get('backend', '?')}",
        f"- found with jax-conformance{f' {suite}' if suite else ''}: `jax-conformance bisect "
        f"{cell.case.id}{f':{cell.param}' if cell.param else ''} "
        f"--good {report.releases[0]} --bad {report.releases[-1]}{' --find-fix' if report.find_fix else ''}"
        f"{' --pre' if getattr(report, 'dev', None) is not None else ''}`"
        + (
            " (with the index or `--find-links` place that held the dev builds)"
            if getattr(report, "dev", None) is not None
            else ""
        ),
    ]
    script = reproduction_script(cell.case, cell.param, bad.jax, bad.jaxlib, suite)
    extra = scripts_used(script)
    stdin = " (its header says what stdin.txt holds)" if getattr(cell.case, "stdin", None) else ""
    lines += [
        "",
        "## Reproduction",
        f"Save as `repro.py`{', with the files below beside it' if extra else ''}, then "
        f"`pip install jax=={bad.jax} jaxlib=={bad.jaxlib}` and `{run_line(cell.case, cell.param)}`{stdin}; "
        f"it prints the facts above.",
        "",
        "```python",
        script.rstrip("\n"),
        "```",
    ]
    sources = script_sources()
    for name in extra:  # the scripts it runs as files: inline too, so the report alone reproduces
        lines += ["", f"`{name}.py`:", "", "```python", sources[name].rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"
