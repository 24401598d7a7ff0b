"""Blocks as cells: a block's outcome on a release as the `CellResult` the probes' result files hold. Pure.

- Cell id: `chapter/<chapter>.<block id>` (`chapter/ch000_074f18c932eb1ee6.s3_1_9f2c4a1b`), no parameter; the
  chapter part is the file's stem made an identifier (`ch` before a leading digit). `chapter` is a namespace no case
  folder may take (`results.schema.CHAPTER_NAMESPACE`), so a run's merge never drops block cells as retired cases.
- Status, in the suite's vocabulary (its own word stays in the observation, `{"block": "raised", ...}`):
  ran and raised_as_documented → conforms; assert_failed, raised, raised_otherwise and did_not_raise → differs
  (the chapter's code did not run as written); after_failure → error (not judged: an earlier block failed);
  timeout, crash, skipped → the same word; listing → skipped (not run: the page's build never runs it).
- The asserted tier: expected `{"block": "ran"}` (`{"block": "raised_as_documented", "stated": ...}` for a block
  the page states an error for), observed `{"block": STATUS, "exception": ..., "stated": ..., "assert": ...}`;
  the printed tier: `printed_expected = {"stdout": [the document's lines]}`, and a `printed_diff` entry when what the
  block printed differs (the cell's "printed output differs" mark).
- Reuse key: the block (code, shown output, stated outcome, display), the hashes of every block before it and
  whether each was skipped, the skip reason, the time limit, the environment's digest, the runner's source and the
  suite's version. An edited block changes its own key and those of every block after it.
- `heading` is `The chapter as written: <chapter>` (the report's main table groups a case it does not declare
  under its heading: blocks show as a section of their own until the report has its chapter view); `section` is the
  block's (`§3.1`), `claim` its heading, line and first code line, `details` everything else the grid shows.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Mapping

import conformance
from conformance.chapter.model import AS_WRITTEN, NOT_JUDGED, Block, BlockStatus, Chapter, Outcome
from conformance.chapter.printed import normalised_lines
from conformance.core.observation import DETAILS_CHARS, MESSAGE_CHARS, TAIL_CHARS, bounded
from conformance.core.status import PYTEST_OUTCOME, Status
from conformance.results.schema import CHAPTER_NAMESPACE, CellResult

STATUS_OF = {
    BlockStatus.RAN: Status.CONFORMS,
    BlockStatus.ASSERT_FAILED: Status.DIFFERS,
    BlockStatus.RAISED: Status.DIFFERS,
    BlockStatus.AFTER_FAILURE: Status.ERROR,
    BlockStatus.TIMEOUT: Status.TIMEOUT,
    BlockStatus.CRASH: Status.CRASH,
    BlockStatus.SKIPPED: Status.SKIPPED,
    BlockStatus.RAISED_AS_DOCUMENTED: Status.CONFORMS,
    BlockStatus.RAISED_OTHERWISE: Status.DIFFERS,
    BlockStatus.DID_NOT_RAISE: Status.DIFFERS,
    BlockStatus.LISTING: Status.SKIPPED,
    BlockStatus.INTERACTIVE: Status.SKIPPED,
}
HEADING_PREFIX = "The chapter as written: "
LAUNCHER = "chapter"
_RUNNER_SOURCES = (
    "runner.py",
    "session.py",
    "statuses.py",
    "printed.py",
    "blocks.py",
    "cells.py",
    "stated.py",
    "transcript.py",
    "magics.py",
    "runmagic.py",
    "runsteps.py",
    "markdown.py",
    "supervisor.py",
    "model.py",
    "headings.py",
    "interactive.py",
)  # with every module of this package they import


def chapter_ident(name: str) -> str:
    """The chapter's part of its cells' ids: its name as an identifier (`000_074f...` → `ch000_074f...`)."""
    ident = re.sub(r"\W", "_", name)
    return ident if ident and not ident[0].isdigit() else f"ch{ident}"


def case_id(chapter: Chapter | str, block: Block | str) -> str:
    """`chapter/<chapter>.<block id>`."""
    name = chapter.name if isinstance(chapter, Chapter) else chapter
    return f"{CHAPTER_NAMESPACE}/{chapter_ident(name)}.{block.id if isinstance(block, Block) else block}"


def is_block_cell(cell: CellResult) -> bool:
    """Whether a stored cell is a chapter's block."""
    return cell.case.startswith(f"{CHAPTER_NAMESPACE}/")


def block_status(cell: CellResult) -> BlockStatus | None:
    """A block cell's own status (`ran` ... `after_failure`), from its observation; None for any other cell."""
    word = cell.observation.get("block") if isinstance(cell.observation, dict) else None
    if word is None and cell.status is Status.SKIPPED and is_block_cell(cell):
        return BlockStatus.SKIPPED
    try:
        return BlockStatus(word)
    except ValueError:
        return None


def runner_digest() -> str:
    """Digest of the code that runs and judges blocks: a change reruns every block."""
    folder = Path(__file__).resolve().parent
    text = "".join(hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in _RUNNER_SOURCES)
    return hashlib.sha256(text.encode()).hexdigest()


def block_keys(
    chapter: Chapter,
    skip_reasons: Mapping[str, str],
    timeout_s: float,
    environment: str,
    runner: str,
    limits: Mapping[str, float] | None = None,
    ran_listings: frozenset[str] | set[str] = frozenset(),
) -> dict[str, str]:
    """The reuse key of every block (see the module's docstring), by block id; `limits` are the blocks' own time
    limits, by id (others have `timeout_s`); `ran_listings` the listings a `[[run]]` entry runs."""
    keys, before = {}, []
    for block in chapter.blocks:
        own = {
            "code": block.hash,
            "output": hashlib.sha256(block.output.encode()).hexdigest()[:16],
            "output_known": block.output_known,
            "joined": block.joined,
            "raises": block.raises,
            "display": block.display,
            "skip": skip_reasons.get(block.id) or block.skip,
        }
        if block.steps or block.runnable or block.cell_magic or block.listing:  # how it runs, when not whole
            own["plan"] = hashlib.sha256(
                json.dumps(
                    [
                        [s.to_json() for s in block.steps],
                        block.runnable,
                        block.cell_magic,
                        block.listing,
                        block.id in ran_listings,
                    ],
                    sort_keys=True,
                ).encode()
            ).hexdigest()[:16]
        limit = float((limits or {}).get(block.id, timeout_s))
        text = json.dumps(
            {
                "block": own,
                "before": before,
                "timeout_s": limit,
                "environment": environment,
                "runner": runner,
                "suite": conformance.__version__,
            }
            | ({"setup": chapter.setup} if chapter.setup else {}),
            sort_keys=True,
        )
        keys[block.id] = hashlib.sha256(text.encode()).hexdigest()[:32]
        before.append(
            [block.hash, bool(own["skip"])] if "plan" not in own else [block.hash, bool(own["skip"]), own["plan"]]
        )
    return keys


def _observation(outcome: Outcome) -> dict[str, Any]:
    observed: dict[str, Any] = {"block": outcome.status.value}
    if outcome.status is BlockStatus.ASSERT_FAILED:
        observed["assert"] = (f"line {outcome.assert_line}: " if outcome.assert_line else "") + outcome.assert_text
    elif outcome.status in (BlockStatus.RAISED, BlockStatus.AFTER_FAILURE, BlockStatus.RAISED_OTHERWISE):
        observed["exception"] = outcome.exception
    if outcome.status in (BlockStatus.RAISED_OTHERWISE, BlockStatus.DID_NOT_RAISE):
        observed["stated"] = outcome.stated
    if outcome.status is BlockStatus.RAISED_AS_DOCUMENTED:
        observed["raised"] = list(outcome.raised_as_stated)
    if outcome.status is BlockStatus.AFTER_FAILURE:
        observed["name"] = outcome.name
    return observed


def _expected(block: Block) -> dict[str, Any]:
    """What the page says the block does: it runs, or raises what it states."""
    if not block.states_error:
        return {"block": BlockStatus.RAN.value}
    stated = [s.stated + (f": {s.stated_message}" if s.stated_message else "") for s in block.steps if s.stated]
    if block.raises:
        stated.append("an exception" if block.raises == "*" else block.raises)
    return {"block": BlockStatus.RAISED_AS_DOCUMENTED.value, "stated": stated}


def block_cell(chapter: Chapter, block: Block, outcome: Outcome, jax_version: str, key: str) -> CellResult:
    """The cell of one block on one release (see the module's docstring)."""
    observed = _observation(outcome)
    expected = _expected(block)
    judged = outcome.status not in NOT_JUDGED
    diff = (
        [{"path": "block", "expected": expected["block"], "observed": outcome.status.value, "kind": "changed"}]
        if judged and outcome.status not in AS_WRITTEN
        else []
    )
    compared = block.output_known and not block.joined
    printed_diff = (
        [
            {
                "path": "stdout",
                "expected": [line[1:] for line in outcome.printed_diff if line[:1] == "-"],
                "observed": [line[1:] for line in outcome.printed_diff if line[:1] == "+"],
                "kind": "changed",
            }
        ]
        if outcome.printed_differs
        else []
    )
    details = {
        "chapter": chapter.name,
        "source": Path(chapter.path).name,
        "form": chapter.form,
        "block": block.id,
        "index": block.index + 1,
        "hash": block.hash,
        "line": block.line,
        "end_line": block.end_line,
        "output_line": block.output_line,
        "section": block.section,
        "heading": block.heading.text,
        "first_code": block.first_code,
        "detail": outcome.detail,
        "message": outcome.message,
        "because": outcome.because,
        "replayed": outcome.replayed,
        "printed_lines": list(outcome.printed_diff),
    }
    details.update(
        {
            key: value
            for key, value in (
                ("raising_line", outcome.line),
                ("stated", outcome.stated),
                ("notes", list(outcome.notes)),
                ("settings", list(outcome.settings)),
                ("cause", outcome.cause),
                ("listing", block.listing),
                ("origin", chapter.origin),
                ("title", chapter.title),
            )
            if value
        }
    )
    return CellResult(
        case=case_id(chapter, block),
        param="",
        rows=[],
        status=STATUS_OF[outcome.status],
        expected=expected if judged else None,
        observation=observed if judged or outcome.status in (BlockStatus.LISTING, BlockStatus.INTERACTIVE) else None,
        diff=diff,
        details=bounded(details, DETAILS_CHARS),
        reason=outcome.detail[:MESSAGE_CHARS],
        duration_s=round(outcome.duration_s, 4),
        stdout_tail=outcome.stdout[-TAIL_CHARS:],
        stderr_tail=outcome.stderr[-TAIL_CHARS:],
        command=f"jax-conformance chapter {Path(chapter.path).name} --jax {jax_version}",
        launcher=LAUNCHER,
        key=key,
        printed_expected={"stdout": normalised_lines(block.output)} if compared and judged else None,
        printed_diff=printed_diff,
        section=f"§{block.section}" if block.section else "",
        heading=HEADING_PREFIX + chapter.name,
        claim=f"{block.heading.text or '(before the first heading)'} — line {block.line}: {block.first_code}"[:400],
        suite_version=conformance.__version__,
    )


def test_entry(chapter: Chapter, block: Block, cell: CellResult) -> dict[str, Any]:
    """The pytest-json-report test entry that holds a block's cell."""
    return {
        "nodeid": f"{CHAPTER_NAMESPACE}/{Path(chapter.path).name}::{block.id}",
        "lineno": block.line,
        "outcome": PYTEST_OUTCOME[cell.status],
        "keywords": [],
        "metadata": cell.to_json(),
    }
