"""The Markdown page's summaries of the report's other sections: the chapter as written (per chapter, each release's
counts and the first block not as written) and every public name (per release, the names added, removed and newly
deprecated). Short by design: a release is one line, whatever the number of blocks or names, so the page stays a
size one pastes. Pure logic; the escaping is `report.markdown`'s."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conformance.report.apiview import ApiView
from conformance.report.chapterpage import ChapterPage

Escape = Callable[[Any], str]


def _block(name: str, text: Escape, code: Escape) -> str:
    """A block's one name (`§1.1, line 196: def f(x):`) with its line of code as a code span."""
    place, _, first = name.partition(": ")
    return f"{text(place)} ({code(first, in_table=True)})" if first else text(place)


def chapter_summary(pages: Sequence[ChapterPage], text: Escape, code: Escape, page: str) -> list[str]:
    """"The chapter as written": per chapter its title, file and blocks, a line per release, the disagreements."""
    if not pages:
        return []
    where = f" ([in the interactive report]({page}#chapter))" if page else ""
    lines = ["", "## The chapter as written", "",
             f"The chapter's own code, run block by block as written on each release{where}."]
    for found in pages:
        several = f" on {text(found.platform)}" if len({p.platform for p in pages}) > 1 else ""
        lines += ["", f"**{text(found.name)}**{several} ({code(found.chapter)}, {len(found.rows)} blocks; on each "
                      f"release the counts add up to them):", "",
                  "| release | blocks | the first not as written |", "|---|---|---|"]
        before = None
        for summary in found.summaries:
            counts = summary["text"].split(": ", 1)[1].rsplit(" (of ", 1)[0]
            first = summary["first"]
            broken = "none" if not first else "the same" if before and first["anchor"] == before["anchor"] and \
                first["words"] == before["words"] else f"{_block(first['name'], text, code)}: {text(first['words'])}"
            lines.append(f"| {text(summary['version'])} | {text(counts)} | {broken} |")
            before = first
        n = len(found.disagreements)
        lines += ["", f"Probe and chapter disagree in {n} place{'' if n == 1 else 's'}."]
    return lines


def api_summary(api: ApiView | None, text: Escape, page: str) -> list[str]:
    """"Every public name": how many names and censuses, and per release what it added, removed and deprecated."""
    if api is None:
        return []
    where = f" ([search them in the interactive report]({page}#api))" if page else ""
    several = len(api.platforms) > 1
    lines = ["", "## Every public name", "",
             f"{len(api.names)} public names over {api.censuses} release census{'' if api.censuses == 1 else 'es'}"
             f"{where}. Per release, the names it added, removed and newly deprecated since the release before it "
             "(a release that changed none is left out):", "",
             "| release " + ("| platform " if several else "") + "| added | removed | deprecated |",
             "|---|" + ("---|" if several else "") + "---|---|---|"]
    for release in api.releases:
        if not (release["added"] or release["removed"] or release["deprecated"]):
            continue
        platform = f"| {text(release['platform'])} " if several else ""
        lines.append(f"| {text(release['jax'])} {platform}| {len(release['added'])} | {len(release['removed'])} | "
                     f"{len(release['deprecated'])} |")
    return lines
