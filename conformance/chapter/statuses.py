"""Each block's status on one release, from what the runner recorded. Pure.

- `skipped`: the skip list names it (or the document tags it `skip-execution`); it is not run.
- `timeout` / `crash`: it ran past its time limit / its process died while it ran.
- `ran`: it ran to its end and raised nothing, or raised what the document says it raises (a `raises-exception`
  tag: any exception; `# ==> raises X`: X or a subclass).
- `assert_failed`: an `assert` of the chapter failed (in the block, or in a function an earlier block defined: the
  assert's block and line are kept); or the document says it raises and it raised nothing.
- `after_failure`: it raised NameError for a name that an earlier block which did not finish (failed, timed out,
  crashed, skipped, or itself after_failure) binds at top level.
- `raised`: anything else it raised (the exception's type and the first line of its message).

The printed output is compared apart (`conformance.chapter.printed`): it marks a block and never changes its status.
A block that follows the one before directly in a plain-text chapter (no output shown between) has its output
compared together with the next block's, where the document shows it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from conformance.chapter.model import DID_NOT_FINISH, Block, BlockStatus, Outcome
from conformance.chapter.printed import printed_difference
from conformance.chapter.session import RawResult


def _from_record(block: Block, raw: RawResult, blocks: tuple[Block, ...], timeout_s: float,
                 earlier: Mapping[int, Outcome]) -> Outcome:
    record = raw.record or {}
    common = {"stdout": record.get("stdout", raw.stdout), "stderr": record.get("stderr_tail", raw.stderr),
              "duration_s": float(record.get("duration_s", raw.duration_s) or 0.0), "replayed": raw.replayed}
    if raw.killed:
        return Outcome(BlockStatus(raw.killed), message=raw.message, **common)
    outcome = record.get("outcome")
    if outcome == "timeout":
        return Outcome(BlockStatus.TIMEOUT, message=f"ran past its time limit of {timeout_s:g}s", **common)
    if outcome == "ok":
        if block.raises:
            wanted = "an exception" if block.raises == "*" else block.raises
            return Outcome(BlockStatus.ASSERT_FAILED, assert_text=f"the chapter says it raises {wanted}; it raised "
                           f"nothing", **common)
        return Outcome(BlockStatus.RAN, **common)
    exception, message = str(record.get("exception") or ""), str(record.get("message") or "")
    # before the document's stated raise: a block tagged to raise anything must not pass on a NameError that only
    # an earlier failure caused
    name = str(record.get("name") or "")
    if exception == "NameError" and name:
        because = next((b for b in reversed(blocks[:block.index]) if name in b.defines
                        and b.index in earlier and earlier[b.index].status in DID_NOT_FINISH), None)
        if because is not None:
            return Outcome(BlockStatus.AFTER_FAILURE, exception=exception, message=message, name=name,
                           because=because.id, **common)
    mro = [str(name) for name in record.get("mro") or [exception]]
    if block.raises and (block.raises == "*" or block.raises.rsplit(".", 1)[-1] in mro):
        return Outcome(BlockStatus.RAN, exception=exception, message=message, **common)
    site = record.get("assert")
    if exception == "AssertionError" and isinstance(site, dict):
        where = "" if site.get("block") == block.index else f"in block {_id(blocks, site.get('block'))}: "
        return Outcome(BlockStatus.ASSERT_FAILED, exception=exception, message=message,
                       assert_line=int(site.get("line") or 0), assert_text=where + str(site.get("text") or ""),
                       **common)
    return Outcome(BlockStatus.RAISED, exception=exception, message=message, **common)


def _id(blocks: tuple[Block, ...], index: object) -> str:
    return blocks[index].id if isinstance(index, int) and 0 <= index < len(blocks) else "?"


def block_outcomes(blocks: tuple[Block, ...], raw: Mapping[int, RawResult], skip_reasons: Mapping[str, str],
                   timeout_s: float, limits: Mapping[str, float] | None = None) -> dict[str, Outcome]:
    """Each block's outcome on one release, by block id (see the module's docstring); `timeout_s` is a block's time
    limit unless `limits` gives it its own (by block id)."""
    by_index: dict[int, Outcome] = {}
    carried = ""  # what blocks printed whose output the document shows after a later block
    for block in blocks:
        reason = skip_reasons.get(block.id) or block.skip
        if reason:
            by_index[block.index] = Outcome(BlockStatus.SKIPPED, reason=reason)
            carried = ""
            continue
        found = raw.get(block.index)
        if found is None:
            by_index[block.index] = Outcome(BlockStatus.CRASH, message="not run (no record of it)")
            carried = ""
            continue
        outcome = _from_record(block, found, blocks, float((limits or {}).get(block.id, timeout_s)), by_index)
        by_index[block.index] = outcome
        if block.joined:
            carried += outcome.stdout
            continue
        compared = block.output_known and outcome.status not in (BlockStatus.TIMEOUT, BlockStatus.CRASH)
        diff = printed_difference(block.output, carried + outcome.stdout) if compared else ()
        carried = ""
        by_index[block.index] = replace(outcome, printed_differs=bool(diff), printed_diff=diff)
    return {blocks[index].id: outcome for index, outcome in sorted(by_index.items())}
