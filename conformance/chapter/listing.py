"""`jax-conformance chapter FILE --blocks`: the blocks found, for an author to check the split. Pure. Every line
is made safe for a terminal (`conformance.safetext`): a heading, code line, skip reason or map title holding a
control character or a line break shows it as an escape."""

from __future__ import annotations

from typing import AbstractSet, Mapping

from conformance.chapter.interactive import interactive_call
from conformance.chapter.model import Block, Chapter
from conformance.safetext import terminal_text


def _where(chapter: Chapter, block: Block) -> str:
    if chapter.form == "notebook":
        return f"cell {block.line}"
    span = f"lines {block.line}-{block.end_line}"
    if block.output_line and block.output:
        span += f", output {block.output_line}-{block.output_line + len(block.output.splitlines()) - 1}"
    elif block.joined:
        span += ", output after the next block"
    return span


def block_lines(
    chapter: Chapter, skip_reasons: Mapping[str, str], run_listings: AbstractSet[str] = frozenset()
) -> list[str]:
    """One line per block: number, id and hash, where it is, its heading and its first code line; then what the
    document says of it (raises, each statement's stated error and shown output, notes, magics, a listing,
    skipped) and a count."""
    lines = [f"{chapter.name} ({chapter.form}, {chapter.path}): {len(chapter.blocks)} blocks"]
    for block in chapter.blocks:
        lines.append(
            f"{block.index + 1:4d}  {block.id:<18} {block.hash}  {_where(chapter, block)}  "
            f"[{block.heading.text or '-'}]"
        )
        lines.append(f"      {block.first_code[:100]}")
        said = []
        if block.raises:
            said.append(f"raises {'an exception' if block.raises == '*' else block.raises}")
        said += [f"line {step.last}: raises {step.stated} ({step.stated_form})" for step in block.steps if step.stated]
        shown = [step for step in block.steps if step.shown is not None]
        if shown:
            said.append(
                f"{len(shown)} statement(s) show their output"
                + (", a >>> transcript" if any(s.mode == "single" for s in block.steps) else "")
            )
        said += [f"line {step.first}: runs {step.magic}" for step in block.steps if step.magic]
        said += [f"runs under {block.cell_magic}"] if block.cell_magic else []
        said += [f"magic not run: {magic}" for magic in block.magics_not_run] + list(block.notes)
        if block.listing:
            said.append("runs all the same ([[run]])" if block.id in run_listings else f"not run: {block.listing}")
        if block.display:
            said.append("displays its last expression")
        reason = skip_reasons.get(block.id) or block.skip
        if reason:
            said.append(f"skipped: {reason}")
        elif interactive_call(block.code_as_run):
            said.append(f"not run: it waits for a person at {interactive_call(block.code_as_run)}")
        if said:
            lines.append(f"      ({'; '.join(said)})")
    return [terminal_text(line) for line in lines]
