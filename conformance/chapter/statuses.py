"""Each block's status on one release, from what the runner recorded. Pure.

- `skipped`: the skip list names it (or the document tags it `skip-execution`); it is not run.
- `listing`: a plain fence of a MyST notebook page, which the page's build never runs (unless the skip list's
  `[[run]]` names it); not run.
- `interactive`: it calls something that waits for a person (`breakpoint()`, `input()`, `jax.debug.breakpoint()`,
  `pdb.set_trace()`: `chapter.interactive`); not run.
- `timeout` / `crash`: it ran past its time limit / its process died while it ran.
- the errors the page states (a statement's `# ValueError: ...`, a `"ValueError: ..."` string after it,
  `# ==> raises X`, a `>>>` example's traceback; the block's `raises-exception` tag): a raise that is an instance of
  the stated class
  (a subclass counts; the runner decides it in the block's namespace) is `raised_as_documented`, a raise of another
  class `raised_otherwise` (both named), no raise `did_not_raise`. The first statement that is not as the page
  says decides; a block whose every stated error was raised as stated, and that ran to its end otherwise, is
  `raised_as_documented`.
- `ran`: it ran to its end and raised nothing, and the page states no error for it.
- `assert_failed`: an `assert` of the chapter failed (in the block, or in a function an earlier block defined: the
  assert's block and line are kept).
- `after_failure`: it raised NameError for a name that an earlier block which did not finish (failed, timed out,
  crashed, skipped, a listing, or itself after_failure) binds at top level.
- `raised`: anything else it raised (the exception's type, the first line of its message and the block's line);
  a NameError for a name no earlier block binds says so (and names a later block that binds it).

What explains a failure is kept with it: for an error raised in a callback, the callback's own exception and the
tail of what the block wrote to stderr; a JAX config flag or environment variable an earlier block left set, when
the failure names it (or, for `jax_debug_nans`/`jax_debug_infs`, it is the `FloatingPointError` JAX raises only
when they are on), with the block that set it.

The printed output is compared apart (`conformance.chapter.printed`): it marks a block and never changes its status.
A block that follows the one before directly in a plain-text chapter (no output shown between) has its output
compared together with the next block's, where the document shows it; a block whose statements show their own
output is compared statement by statement; a stated error's message is compared with the raised one's.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Mapping

from conformance.chapter.interactive import interactive_call
from conformance.chapter.model import DID_NOT_FINISH, FAILED, Block, BlockStatus, Outcome
from conformance.chapter.printed import message_difference, printed_difference
from conformance.chapter.session import RawResult

# JAX raises FloatingPointError only from its NaN/Inf checks (jax/_src/dispatch.py, check_special and the
# de-optimized re-run), which run only while one of these flags is on.
_FLAGS_OF = {"FloatingPointError": ("jax_debug_nans", "jax_debug_infs")}
# A logging line's level, time and place (`ERROR:2026-12-03 08:47:28,267:jax._src.debugging:95: `): the time would
# make the detail differ on every run
_LOG_PREFIX = re.compile(r"^[A-Z]+:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[,.]\d+)?:(?:[\w.]+:\d+:\s*)?")


def _stated_text(name: str, message: str) -> str:
    return f"{name}: {message}" if message else name


class _Judged:
    """What the steps of one block say: the first that is not as the page says, the ones raised as stated, and the
    printed differences of their messages."""

    def __init__(self, block: Block, record: Mapping[str, Any]) -> None:
        self.first_bad: dict[str, Any] | None = None
        self.others: list[dict[str, Any]] = []
        self.as_stated: list[str] = []
        self.message_diff: list[str] = []
        done = {int(s.get("step", -1)): s for s in record.get("steps") or [] if isinstance(s, dict)}
        for number, step in enumerate(block.steps):
            found = done.get(number)
            if not step.stated or found is None:
                continue
            stated = _stated_text(step.stated, step.stated_message)
            if found.get("outcome") == "ok":
                self._bad({"status": BlockStatus.DID_NOT_RAISE, "line": step.last, "stated": stated})
                continue
            if found.get("outcome") != "exception" or found.get("ended"):
                continue
            exception = str(found.get("exception") or "")
            self.message_diff += message_difference(
                step.stated, step.stated_message, exception, str(found.get("text") or found.get("message") or "")
            )
            if found.get("matches") or (
                found.get("matches") is None and step.stated.rsplit(".", 1)[-1] in (found.get("mro") or [])
            ):
                self.as_stated.append(f"line {found.get('line') or step.last}: {exception}")
            else:
                self._bad(
                    {
                        "status": BlockStatus.RAISED_OTHERWISE,
                        "found": found,
                        "stated": stated,
                        "line": found.get("line") or step.last,
                    }
                )

        self.more = len(self.others)

    def _bad(self, what: dict[str, Any]) -> None:
        if self.first_bad is None:
            self.first_bad = what
        else:
            self.others.append(what)


def _after_failure(name: str, block: Block, blocks: tuple[Block, ...], earlier: Mapping[int, Outcome]) -> Block | None:
    return next(
        (
            b
            for b in reversed(blocks[: block.index])
            if name in b.defines and b.index in earlier and earlier[b.index].status in DID_NOT_FINISH
        ),
        None,
    )


def _unbound(name: str, block: Block, blocks: tuple[Block, ...]) -> str:
    """What explains a NameError for a name no earlier block binds (a doctest harness's namespace the page relies
    on, a page whose order is off); '' where an earlier block binds it."""
    if any(name in b.defines for b in blocks[: block.index]):
        return ""
    later = next((b for b in blocks[block.index + 1 :] if name in b.defines), None)
    return f"no block of the page binds {name!r} before it" + (f" (block {later.id}, later, does)" if later else "")


_NO_MODULE = re.compile(r"^No module named '([\w.]+)'")


def missing_module(exception: str, message: str) -> str:
    """What explains a `ModuleNotFoundError` (`No module named 'optax'`): the release's environment lacks that
    package, and how to run the page with it (`chapter --with`); '' for any other error. The package to name may be
    called otherwise than its module (`sklearn` comes with `scikit-learn`)."""
    found = _NO_MODULE.match(message) if exception == "ModuleNotFoundError" else None
    if not found:
        return ""
    top = found.group(1).split(".")[0]
    if top in ("jax", "jaxlib"):  # a module of JAX itself, gone or not yet there: the release's own change
        return ""
    return (
        f"the release's environment lacks the module {top!r}: the page imports a package that is not jax's; run "
        f"the page with it installed beside the release (chapter FILE --with PACKAGE, the package that provides "
        f"{top!r})"
    )


def _raised(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "exception": str(record.get("exception") or ""),
        "message": str(record.get("message") or ""),
        "line": int(record.get("line") or 0),
    }


def _from_record(
    block: Block, raw: RawResult, blocks: tuple[Block, ...], timeout_s: float, earlier: Mapping[int, Outcome]
) -> Outcome:
    record = raw.record or {}
    notes = block.notes + tuple(f"magic not run: {magic}" for magic in block.magics_not_run)
    common = {
        "stdout": record.get("stdout", raw.stdout),
        "stderr": record.get("stderr_tail", raw.stderr),
        "duration_s": float(record.get("duration_s", raw.duration_s) or 0.0),
        "replayed": raw.replayed,
        "notes": notes,
    }
    if raw.killed:
        return Outcome(BlockStatus(raw.killed), message=raw.message, **common)
    outcome = record.get("outcome")
    if outcome == "timeout":
        return Outcome(BlockStatus.TIMEOUT, message=f"ran past its time limit of {timeout_s:g}s", **common)
    judged = _Judged(block, record)
    if judged.first_bad is not None:
        return _stated_failure(judged, common)
    as_stated = tuple(judged.as_stated)
    if outcome == "ok":
        if block.raises and not as_stated:
            wanted = "an exception" if block.raises == "*" else block.raises
            return Outcome(BlockStatus.DID_NOT_RAISE, stated=wanted, **common)
        if as_stated:
            return Outcome(BlockStatus.RAISED_AS_DOCUMENTED, raised_as_stated=as_stated, **common)
        return Outcome(BlockStatus.RAN, **common)
    raised = _raised(record)
    common.update(cause=_callback_cause(record, raw) or missing_module(raised["exception"], raised["message"]))
    # before the document's stated raise: a block tagged to raise anything must not pass on a NameError that only
    # an earlier failure caused
    name = str(record.get("name") or "")
    if raised["exception"] == "NameError" and name:
        because = _after_failure(name, block, blocks, earlier)
        if because is not None:
            return Outcome(BlockStatus.AFTER_FAILURE, name=name, because=because.id, **raised, **common)
        common.update(cause=common["cause"] or _unbound(name, block, blocks))
    if block.raises:
        mro = [str(n) for n in record.get("mro") or [raised["exception"]]]
        matches = record.get("matches")
        if matches or (matches is None and (block.raises == "*" or block.raises.rsplit(".", 1)[-1] in mro)):
            where = f"line {raised['line']}: " if raised["line"] else ""
            return Outcome(
                BlockStatus.RAISED_AS_DOCUMENTED,
                raised_as_stated=as_stated + (where + raised["exception"],),
                **raised,
                **common,
            )
        return Outcome(BlockStatus.RAISED_OTHERWISE, stated=block.raises, **raised, **common)
    site = record.get("assert")
    if raised["exception"] == "AssertionError" and isinstance(site, dict):
        where = "" if site.get("block") == block.index else f"in block {_id(blocks, site.get('block'))}: "
        return Outcome(
            BlockStatus.ASSERT_FAILED,
            exception=raised["exception"],
            message=raised["message"],
            assert_line=int(site.get("line") or 0),
            assert_text=where + str(site.get("text") or ""),
            **common,
        )
    return Outcome(BlockStatus.RAISED, **raised, **common)


def _stated_failure(judged: _Judged, common: dict[str, Any]) -> Outcome:
    bad = judged.first_bad or {}
    if judged.more:
        common = dict(common, notes=common["notes"] + (f"{judged.more} more statement(s) not as the page states",))
    found = bad.get("found") or {}
    raised = _raised(found)
    if bad["status"] is BlockStatus.DID_NOT_RAISE:
        return Outcome(BlockStatus.DID_NOT_RAISE, stated=bad["stated"], line=int(bad.get("line") or 0), **common)
    common = dict(common, cause=_cause_text(found, "", ""))
    return Outcome(
        BlockStatus.RAISED_OTHERWISE,
        stated=bad["stated"],
        **dict(raised, line=int(bad.get("line") or raised["line"])),
        **common,
    )


def _cause_text(found: Mapping[str, Any], stdout: str, stderr: str) -> str:
    inner = str(found.get("callback") or "")
    if not inner:
        return ""
    said = [
        f"{name}: {tail}" for name, tail in (("its output ended", _tail(stdout)), ("stderr", _tail(stderr))) if tail
    ]
    return f"raised in a callback: {inner}" + (f" ({'; '.join(said)})" if said else "")


def _callback_cause(record: Mapping[str, Any], raw: RawResult) -> str:
    return _cause_text(
        record, str(record.get("stdout_tail", raw.stdout) or ""), str(record.get("stderr_tail", raw.stderr) or "")
    )


def _tail(text: str) -> str:
    """The last lines a block wrote, up to a traceback (what the callback said before it raised: the debugger's
    prompt that read end-of-input), cut at a word."""
    text = text.split("Traceback (most recent call last):")[0] if "Traceback" in text else text
    lines = [_LOG_PREFIX.sub("", line.strip()) for line in text.strip().splitlines() if line.strip()]
    tail = " ⏎ ".join(lines[-3:])
    if len(tail) <= 200:
        return tail
    cut = tail[-200:]
    return "… " + cut[cut.find(" ") + 1 :] if " " in cut else "… " + cut


def _id(blocks: tuple[Block, ...], index: object) -> str:
    return blocks[index].id if isinstance(index, int) and 0 <= index < len(blocks) else "?"


def _mentions(text: str, name: str) -> bool:
    short = name[4:] if name.startswith("jax_") else name
    return bool(
        re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", text)
        or (short != name and re.search(rf"(?<![\w]){re.escape(short)}(?!\w)", text))
    )


class _Settings:
    """The config flags and environment variables earlier blocks left set: name -> (value, the block that set it),
    with the value before the first change (a flag set back to it is no longer left set)."""

    def __init__(self) -> None:
        self.in_effect: dict[str, tuple[str, str]] = {}
        self.original: dict[str, Any] = {}

    def update(self, block: Block, record: Mapping[str, Any]) -> None:
        for kind in ("config", "environ"):
            for name, change in (record.get(kind) or {}).items():
                if not isinstance(change, list) or len(change) != 2:
                    continue
                self.original.setdefault(name, change[0])
                if change[1] == self.original[name]:
                    self.in_effect.pop(name, None)
                else:
                    shown = change[1] if kind == "config" else repr(change[1])
                    self.in_effect[name] = (str(shown), block.id)

    def named_by(self, record: Mapping[str, Any], exception: str) -> tuple[str, ...]:
        """The settings in effect that a failure's record names (see the module's docstring)."""
        steps = [s for s in record.get("steps") or [] if isinstance(s, dict)]
        text = " ".join(
            str(part)
            for part in [
                record.get("message"),
                record.get("traceback"),
                record.get("stderr_tail"),
                record.get("callback"),
                *[s.get("text") for s in steps],
            ]
            if part
        )
        flagged = _FLAGS_OF.get(exception, ())
        return tuple(
            f"{name}={value} (set by block {block_id})"
            for name, (value, block_id) in self.in_effect.items()
            if name in flagged or _mentions(text, name)
        )


def block_outcomes(
    blocks: tuple[Block, ...],
    raw: Mapping[int, RawResult],
    skip_reasons: Mapping[str, str],
    timeout_s: float,
    limits: Mapping[str, float] | None = None,
    run_listings: frozenset[str] | set[str] = frozenset(),
) -> dict[str, Outcome]:
    """Each block's outcome on one release, by block id (see the module's docstring); `timeout_s` is a block's time
    limit unless `limits` gives it its own (by block id); `run_listings` the listings run all the same (by id)."""
    by_index: dict[int, Outcome] = {}
    settings = _Settings()
    carried = ""  # what blocks printed whose output the document shows after a later block
    for block in blocks:
        reason = skip_reasons.get(block.id) or block.skip
        if reason or (block.listing and block.id not in run_listings):
            by_index[block.index] = (
                Outcome(BlockStatus.SKIPPED, reason=reason)
                if reason
                else Outcome(BlockStatus.LISTING, reason=f"not run: {block.listing}")
            )
            carried = ""
            continue
        waits = interactive_call(block.code_as_run)
        if waits:  # a call that waits for a person: not run (`chapter.interactive`)
            by_index[block.index] = Outcome(BlockStatus.INTERACTIVE, reason=waits)
            carried = ""
            continue
        found = raw.get(block.index)
        if found is None:
            by_index[block.index] = Outcome(BlockStatus.CRASH, message="not run (no record of it)")
            carried = ""
            continue
        outcome = _from_record(block, found, blocks, float((limits or {}).get(block.id, timeout_s)), by_index)
        record = found.record or {}
        if outcome.status in FAILED:
            outcome = replace(outcome, settings=settings.named_by(record, outcome.exception))
        settings.update(block, record)
        by_index[block.index] = outcome
        if block.joined:
            carried += outcome.stdout
            continue
        compared = block.output_known and outcome.status not in (BlockStatus.TIMEOUT, BlockStatus.CRASH)
        diff = _printed(block, record, carried + outcome.stdout) if compared else ()
        if outcome.status in (BlockStatus.RAISED_AS_DOCUMENTED, BlockStatus.RAISED_OTHERWISE):
            diff += tuple(_Judged(block, record).message_diff)
        carried = ""
        by_index[block.index] = replace(outcome, printed_differs=bool(diff), printed_diff=diff)
    return {blocks[index].id: outcome for index, outcome in sorted(by_index.items())}


def _printed(block: Block, record: Mapping[str, Any], printed: str) -> tuple[str, ...]:
    """The printed difference of a block: its whole output, or statement by statement (see the module's
    docstring)."""
    if not block.step_output:
        return printed_difference(block.output, printed)
    done = {int(s.get("step", -1)): s for s in record.get("steps") or [] if isinstance(s, dict)}
    diff: list[str] = []
    for number, step in enumerate(block.steps):
        if step.shown is None or number not in done:
            continue
        diff += printed_difference(step.shown, str(done[number].get("stdout") or ""), wildcards=True)
    return tuple(diff[:12]) + ((f"… {len(diff) - 12} more line(s)",) if len(diff) > 12 else ())
