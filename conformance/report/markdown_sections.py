"""The Markdown page's summaries of the report's other sections: the chapter as written (per chapter, each release's
counts and the first block not as written), every public name (per release, the names added, removed and newly
deprecated) and performance (per release, the workloads' decided verdicts against the release before). Short by
design: a release is one line, whatever the number of blocks or names, so the page stays a size one pastes. Pure
logic; the escaping is `report.markdown`'s."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conformance.report.apiview import ApiView
from conformance.report.chapterpage import ChapterPage
from conformance.report.perfview import PerfView, ratio_text

Escape = Callable[[Any], str]


def _block(name: str, text: Escape, code: Escape) -> str:
    """A block's one name (`§1.1, line 196: def f(x):`) with its line of code as a code span."""
    place, _, first = name.partition(": ")
    return f"{text(place)} ({code(first, in_table=True)})" if first else text(place)


def chapter_summary(
    pages: Sequence[ChapterPage], text: Escape, code: Escape, page: str, probes: bool = True
) -> list[str]:
    """ "The chapter as written": per chapter its title, file and blocks, a line per release, the disagreements. In a
    report of pages and no probe (`probes` False) it is "The page as written", as the HTML page names it."""
    if not pages:
        return []
    where = f" ([in the interactive report]({page}#chapter))" if page else ""
    word = "chapter" if probes else "page"
    lines = [
        "",
        f"## The {word} as written",
        "",
        f"The {word}'s own code, run block by block as written on each release{where}.",
    ]
    for found in pages:
        several = f" on {text(found.platform)}" if len({p.platform for p in pages}) > 1 else ""
        lines += [
            "",
            f"**{text(found.name)}**{several} ({code(found.chapter)}, {len(found.rows)} blocks):",
            "",
            "| release | blocks | the first not as written |",
            "|---|---|---|",
        ]
        before = None
        for summary in found.summaries:
            counts = summary["text"].split(": ", 1)[1].rsplit(" (of ", 1)[0]
            first = summary["first"]
            broken = (
                "none"
                if not first
                else "the same"
                if before and first["anchor"] == before["anchor"] and first["words"] == before["words"]
                else f"{_block(first['name'], text, code)}: {text(first['words'])}"
            )
            lines.append(f"| {text(summary['version'])} | {text(counts)} | {broken} |")
            before = first
        n = len(found.disagreements)
        # only a chapter the probes encode is compared with them (`chapter.grid`): another page says nothing of it
        lines += ["", f"Probe and chapter disagree in {n} place{'' if n == 1 else 's'}."] if found.linked else []
    return lines


def api_summary(api: ApiView | None, text: Escape, page: str) -> list[str]:
    """ "Every public name": how many names and censuses, and per release what it added, removed and deprecated."""
    if api is None:
        return []
    where = f" ([search them in the interactive report]({page}#api))" if page else ""
    several = len(api.platforms) > 1
    lines = [
        "",
        "## Every public name",
        "",
        f"{len(api.names)} public names over {api.censuses} release census{'' if api.censuses == 1 else 'es'}"
        f"{where}. Per release, the names it added, removed and newly deprecated since the release before it "
        "(a release that changed none is left out):",
        "",
        "| release " + ("| platform " if several else "") + "| added | removed | deprecated |",
        "|---|" + ("---|" if several else "") + "---|---|---|",
    ]
    for release in api.releases:
        if not (release["added"] or release["removed"] or release["deprecated"]):
            continue
        platform = f"| {text(release['platform'])} " if several else ""
        lines.append(
            f"| {text(release['jax'])} {platform}| {len(release['added'])} | {len(release['removed'])} | "
            f"{len(release['deprecated'])} |"
        )
    return lines


# The exact metrics of the optimized HLO: the page sums them up per release (how many workloads, the range of ratios);
# times, bytes and compilations are named workload by workload.
_HLO_COUNTS = ("fusions", "instructions")


def _hlo_moves(moves: dict[str, list[float]]) -> str:
    """`fusions: 11 up ×1.23–×3.45; instructions: 3 up ×1.01–×1.06, 2 down ×0.74–×0.9`, from each HLO count's ratios
    in one release."""
    said = []
    for metric in _HLO_COUNTS:
        parts = []
        for word, kept in (
            ("up", [r for r in moves.get(metric, []) if r > 1]),
            ("down", [r for r in moves.get(metric, []) if r < 1]),
        ):
            if kept:
                spread = ratio_text(kept[0]) if len(kept) == 1 else f"{ratio_text(min(kept))}–{ratio_text(max(kept))}"
                parts.append(f"{len(kept)} {word} {spread}")
        if parts:
            said.append(f"{metric}: {', '.join(parts)}")
    return "; ".join(said) or "none"


def perf_summary(perf: PerfView | None, text: Escape, page: str) -> list[str]:
    """ "Performance": per release, what moved against the release before and was decided: run and compile times a rank
    test calls `regressed` or `improved`, and the bytes and compilations that `changed`, named by workload, sorted into
    slower or bigger and faster or smaller; the HLO's fusion and instruction counts summed up (how many workloads, the
    range of ratios). `unknown` moves are only counted (their samples could not decide them; the page shows each)."""
    if perf is None:
        return []
    named: dict[tuple[str, bool], dict[str, list[str]]] = {}
    counted: dict[str, dict[str, list[float]]] = {}
    unknown = 0
    for row in perf.rows:
        workload = row.id.rsplit(".", 1)[-1]
        for cell in row.cells:
            for metric, verdict, ratio in cell.verdicts:
                if verdict == "unknown" or ratio is None:
                    unknown += verdict == "unknown"
                elif metric in _HLO_COUNTS:
                    counted.setdefault(cell.release, {}).setdefault(metric, []).append(ratio)
                else:
                    grew = verdict == "regressed" or (verdict == "changed" and ratio > 1)
                    named.setdefault((cell.release, grew), {}).setdefault(workload, []).append(
                        f"{metric} {ratio_text(ratio)}"
                    )

    def said(release: str, grew: bool) -> str:
        found = named.get((release, grew), {})
        return text("; ".join(f"{w}: {', '.join(m)}" for w, m in found.items()) or "none")

    where = f" ([medians per release]({page}#performance))" if page else ""
    lines = [
        "",
        "## Performance",
        "",
        f"{len(perf.rows)} workload{'' if len(perf.rows) == 1 else 's'} on {len(perf.releases)} release"
        f"{'' if len(perf.releases) == 1 else 's'}, in interleaved rounds{where}. What moved against the "
        "release before: times where a rank test decides it (p < 0.01, past ×1.25 and the noise band); bytes, "
        "compilations and HLO counts whenever they differ.",
        "",
        "| release | slower or bigger | faster or smaller | HLO counts |",
        "|---|---|---|---|",
    ]
    for release in perf.releases:
        if (release, True) in named or (release, False) in named or release in counted:
            lines.append(
                f"| {text(release)} | {said(release, True)} | {said(release, False)} | "
                f"{text(_hlo_moves(counted.get(release, {})))} |"
            )
    if unknown:
        lines += [
            "",
            f"{unknown} more move{'' if unknown == 1 else 's'} past ×1.25 that the samples could not decide "
            f"(`unknown`) {'is' if unknown == 1 else 'are'} in the interactive report.",
        ]
    return lines
