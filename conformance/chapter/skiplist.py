"""The skip list: blocks not to run, kept outside the chapter, each with a reason. Pure (parses text).

```toml
# 000_074f18c932eb1ee6.skip.toml
[[skip]]
hash = "4c1d0e9a2b7f3e11"   # the block's hash, or its first 8 or more hex digits
reason = "needs an interactive terminal: jax.debug.breakpoint() waits for commands on stdin"

[[skip]]
heading = "1.3"             # a section number, or a heading's whole text (`jax-conformance chapter FILE --blocks`)
index = 1                   # the first block under it (counting from 1)
reason = "..."
```

An entry names a block by its hash, or by its heading and index; a reason is required. An edited block has a new
hash, so an entry by hash stops matching it (the block runs again, and `unmatched` names the entry): what a skip
list hides never changes silently.

The same file may give a block a time limit of its own, named the same way (a long training loop more than
`--timeout`, a block expected to hang less):

```toml
[[limit]]
hash = "8805a0835c1d2e4f"
seconds = 900
```

And it may run a listing, a plain fence of a MyST notebook page that the page's build never executes (a `>>>`
transcript that JAX's doctest job runs, say), named the same way, with an optional reason:

```toml
[[run]]
heading = "🔪 Miscellaneous divergences from NumPy"
index = 1
reason = "JAX's documentation workflow runs it as a doctest (pytest --doctest-glob='*.md')"
```

And a `[setup]`: code run before the first block in every process, for the names a page takes from its doctest
harness (JAX's `conftest.py` gives every doctest `jax`, `lax`, `jnp` and `np`), with its reason:

```toml
[setup]
code = "import jax\nimport jax.numpy as jnp"
reason = "JAX's conftest.py gives its doctests jax and jnp"
```
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from conformance.chapter.model import Block
from conformance.errors import ConformanceError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_HEX = re.compile(r"[0-9a-f]{8,64}")


def _describe_block(hash_prefix: str, heading: str, index: int) -> str:
    return f"hash {hash_prefix}" if hash_prefix else f"heading {heading!r} index {index}"


@dataclass(frozen=True)
class SkipEntry:
    """One `[[skip]]` entry: a hash (prefix), or a heading and a 1-based index; and the reason."""

    reason: str
    hash: str = ""
    heading: str = ""
    index: int = 0

    def describe(self) -> str:
        """How the entry names its block (`hash 4c1d0e9a`, `heading 1.3 index 1`)."""
        return _describe_block(self.hash, self.heading, self.index)


@dataclass(frozen=True)
class LimitEntry:
    """One `[[limit]]` entry: a block (named as a skip entry names it) and its own time limit in seconds."""

    seconds: float
    hash: str = ""
    heading: str = ""
    index: int = 0

    def describe(self) -> str:
        """How the entry names its block."""
        return _describe_block(self.hash, self.heading, self.index)


def _load(text: str, source: str) -> dict:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{source} is not valid TOML: {exc}") from None
    if set(data) - {"skip", "limit", "run", "setup"}:
        unknown = ", ".join(sorted(set(data) - {"skip", "limit", "run", "setup"}))
        raise ConformanceError(
            f"{source}: unknown table(s) {unknown}; it takes [[skip]], [[limit]] and [[run]] entries and a [setup]"
        )
    if not isinstance(data.get("setup", {}), dict):
        raise ConformanceError(f"{source}: setup should be a [setup] table, not setup = {data['setup']!r}")
    for key, value in data.items():
        if key != "setup" and not isinstance(value, list):
            raise ConformanceError(
                f"{source}: {key} should be [[{key}]] entries (an array of tables), not {key} = {value!r}"
            )
    return data


def _block_name(entry: object, where: str, keys: set[str]) -> dict:
    """The hash, or the heading and index, an entry names its block by; a one-line error for a bad entry."""
    if not isinstance(entry, dict):
        raise ConformanceError(f"{where} is not a table")
    extra = set(entry) - {"hash", "heading", "index"} - keys
    if extra:
        raise ConformanceError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
    if "hash" in entry:
        digest = entry["hash"]
        if set(entry) & {"heading", "index"} or not isinstance(digest, str) or not _HEX.fullmatch(digest):
            raise ConformanceError(
                f"{where}: hash should be 8 to 64 lower-case hex digits, alone (no heading or "
                f"index beside it), not {digest!r}"
            )
        return {"hash": digest}
    heading, index = entry.get("heading"), entry.get("index")
    if (
        not isinstance(heading, str)
        or not heading.strip()
        or not isinstance(index, int)
        or isinstance(index, bool)
        or index < 1
    ):
        raise ConformanceError(
            f"{where} should name its block by hash, or by heading (a string) and index (a number from 1)"
        )
    return {"heading": heading.strip(), "index": index}


def parse_skip_list(text: str, source: str = "the skip list") -> tuple[SkipEntry, ...]:
    """The `[[skip]]` entries of a skip list; a one-line `ConformanceError` naming the bad entry."""
    entries = []
    for number, entry in enumerate(_load(text, source).get("skip", []), 1):
        where = f"{source}: [[skip]] {number}"
        named = _block_name(entry, where, {"reason"})
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConformanceError(f'{where} has no reason: say why the block cannot run (reason = "...")')
        entries.append(SkipEntry(reason.strip(), **named))
    return tuple(entries)


def parse_limits(text: str, source: str = "the skip list") -> tuple[LimitEntry, ...]:
    """The `[[limit]]` entries of a skip list: blocks with a time limit of their own."""
    entries = []
    for number, entry in enumerate(_load(text, source).get("limit", []), 1):
        where = f"{source}: [[limit]] {number}"
        named = _block_name(entry, where, {"seconds", "reason"})
        seconds = entry.get("seconds")
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 < seconds < 86400:
            raise ConformanceError(f"{where}: seconds should be a number above 0 (and under a day), not {seconds!r}")
        entries.append(LimitEntry(float(seconds), **named))
    return tuple(entries)


@dataclass(frozen=True)
class RunEntry:
    """One `[[run]]` entry: a listing to run all the same (named as a skip entry names its block), and why."""

    reason: str = ""
    hash: str = ""
    heading: str = ""
    index: int = 0

    def describe(self) -> str:
        """How the entry names its block."""
        return _describe_block(self.hash, self.heading, self.index)


def parse_runs(text: str, source: str = "the skip list") -> tuple[RunEntry, ...]:
    """The `[[run]]` entries of a skip list: listings to run."""
    entries = []
    for number, entry in enumerate(_load(text, source).get("run", []), 1):
        where = f"{source}: [[run]] {number}"
        named = _block_name(entry, where, {"reason"})
        reason = entry.get("reason", "")
        if not isinstance(reason, str):
            raise ConformanceError(f"{where}: reason should be a string")
        entries.append(RunEntry(reason.strip(), **named))
    return tuple(entries)


def parse_setup(text: str, source: str = "the skip list") -> tuple[str, str]:
    """The `[setup]` of a skip list: the code run before the page's first block in every process, and why ('', ''
    without one)."""
    setup = _load(text, source).get("setup", {})
    if set(setup) - {"code", "reason"}:
        extra = ", ".join(sorted(set(setup) - {"code", "reason"}))
        raise ConformanceError(f"{source}: [setup] takes code and reason, not {extra}")
    code, reason = setup.get("code", ""), setup.get("reason", "")
    if not isinstance(code, str) or not isinstance(reason, str):
        raise ConformanceError(f"{source}: [setup] code and reason should be strings")
    if code.strip() and not reason.strip():
        raise ConformanceError(f"{source}: [setup] needs a reason (whose names it provides, and why)")
    try:
        compile(code, "<setup>", "exec")
    except SyntaxError as exc:
        raise ConformanceError(f"{source}: [setup] code is not Python: {exc.msg} (line {exc.lineno})") from None
    return code.strip(), reason.strip()


def listings_to_run(blocks: tuple[Block, ...], entries: tuple[RunEntry, ...]) -> tuple[set[str], list[RunEntry]]:
    """The ids of the listings the `[[run]]` entries name, and the entries that name no listing."""
    named: set[str] = set()
    unmatched = []
    for entry in entries:
        found = [b for b in _named(blocks, entry) if b.listing]
        if not found:
            unmatched.append(entry)
        named.update(b.id for b in found)
    return named, unmatched


def _under(block: Block, heading: str) -> bool:
    return heading in (block.heading.section, block.heading.text, block.heading.title, block.heading.subheading)


def _named(blocks: tuple[Block, ...], entry: SkipEntry | LimitEntry | RunEntry) -> list[Block]:
    if entry.hash:
        return [b for b in blocks if b.hash.startswith(entry.hash)]
    under = [b for b in blocks if _under(b, entry.heading)]
    return under[entry.index - 1 : entry.index] if entry.index <= len(under) else []


def skip_reasons(blocks: tuple[Block, ...], entries: tuple[SkipEntry, ...]) -> tuple[dict[str, str], list[SkipEntry]]:
    """The reason to skip each block an entry names (by block id), and the entries that name no block."""
    reasons: dict[str, str] = {}
    unmatched = []
    for entry in entries:
        named = _named(blocks, entry)
        if not named:
            unmatched.append(entry)
        for block in named:
            reasons.setdefault(block.id, entry.reason)
    return reasons, unmatched


def block_limits(
    blocks: tuple[Block, ...], entries: tuple[LimitEntry, ...]
) -> tuple[dict[str, float], list[LimitEntry]]:
    """The time limit of each block a `[[limit]]` entry names (by block id), and the entries that name no block."""
    limits: dict[str, float] = {}
    unmatched = []
    for entry in entries:
        named = _named(blocks, entry)
        if not named:
            unmatched.append(entry)
        for block in named:
            limits.setdefault(block.id, entry.seconds)
    return limits, unmatched
