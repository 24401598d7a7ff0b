"""What a chapter is read into and what running it gives: headings, blocks, block statuses and outcomes. Pure.

A **block** is an ordered unit of a chapter's code: its heading, its first line in the source, the printed output
the document shows after it (if any), what the document says it raises (a `raises-exception` tag, a
`# ==> raises X` comment), and a content hash. An edited block has a new hash, so it is a new block.

A block runs as **steps** when its page says something of one of its statements (docs/chapters.md#statements):
a step is a run of its top-level statements that ends at one the page states an error for (`# ValueError: ...`
under it), shows the output of (`# Prints:` under it, `>>` lines, a `>>>` example's output), or a line magic run in
its place (`%timeit f(x)`). A step whose stated error is raised does not end the block: the next step runs, as the
page shows each error and goes on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class BlockStatus(str, enum.Enum):
    """What happened to one block on one release (docs/chapters.md#the-statuses)."""

    RAN = "ran"  # it ran as written: no assert failed, and it raised only what the document says it raises
    ASSERT_FAILED = "assert_failed"  # one of its asserts failed (the assert's line and text are kept)
    RAISED = "raised"  # it raised an exception the document does not show (type and first line kept)
    TIMEOUT = "timeout"  # it ran past its time limit
    CRASH = "crash"  # the process died while it ran
    SKIPPED = "skipped"  # the skip list (or the document's own `skip-execution` tag) says not to run it
    AFTER_FAILURE = "after_failure"  # NameError for a name that an earlier block that failed should have defined
    # The page states the error a statement raises (`# ValueError: ...`, `# ==> raises X`, a `"""X: ..."""` string,
    # the `raises-exception` tag):
    RAISED_AS_DOCUMENTED = "raised_as_documented"  # it raised an instance of the stated class (a subclass counts)
    RAISED_OTHERWISE = "raised_otherwise"  # it raised, but another class than the stated one (both are kept)
    DID_NOT_RAISE = "did_not_raise"  # the page states an error and the block raised nothing
    LISTING = "listing"  # not run: a listing the page's own build never executes (a plain fence in a MyST notebook)
    INTERACTIVE = "interactive"  # not run: it calls breakpoint(), input(), jax.debug.breakpoint()... (`interactive`)

    def __str__(self) -> str:
        return self.value

    @property
    def words(self) -> str:
        """The status said in words, for people (a report, a terminal line): `raised as documented`."""
        return STATUS_WORDS[self]


STATUS_WORDS = {
    BlockStatus.RAN: "ran as written",
    BlockStatus.ASSERT_FAILED: "assert failed",
    BlockStatus.RAISED: "raised",
    BlockStatus.TIMEOUT: "timed out",
    BlockStatus.CRASH: "crashed",
    BlockStatus.SKIPPED: "skipped",
    BlockStatus.AFTER_FAILURE: "after an earlier failure",
    BlockStatus.RAISED_AS_DOCUMENTED: "raised as documented",
    BlockStatus.RAISED_OTHERWISE: "raised otherwise",
    BlockStatus.DID_NOT_RAISE: "did not raise",
    BlockStatus.LISTING: "not run: a listing",
    BlockStatus.INTERACTIVE: "not run: it waits for a person",
}
# Blocks that run as their page says: these count as "run as written" in every summary.
AS_WRITTEN = frozenset({BlockStatus.RAN, BlockStatus.RAISED_AS_DOCUMENTED})
# Blocks that are not judged at all (not counted in "N of M blocks run as written").
NOT_JUDGED = frozenset({BlockStatus.SKIPPED, BlockStatus.LISTING, BlockStatus.INTERACTIVE})
# A block that ran but not as written: the chapter's own code says otherwise on this release.
FAILED = frozenset(
    {
        BlockStatus.ASSERT_FAILED,
        BlockStatus.RAISED,
        BlockStatus.TIMEOUT,
        BlockStatus.CRASH,
        BlockStatus.RAISED_OTHERWISE,
        BlockStatus.DID_NOT_RAISE,
    }
)
# The blocks whose names a later block may miss (they did not run to their end, or at all).
DID_NOT_FINISH = FAILED | {
    BlockStatus.SKIPPED,
    BlockStatus.AFTER_FAILURE,
    BlockStatus.LISTING,
    BlockStatus.RAISED_AS_DOCUMENTED,
    BlockStatus.INTERACTIVE,
}


def counted(counts: dict[str, int], printed: int = 0) -> str:
    """A release's blocks counted in the words the terminal and the report share: `31 of 32 blocks run as written
    (1 skipped; 1 raised, 2 raised as documented; 7 printed differently)`. `counts` are per status word (an unknown
    word, from an older result file, is counted as it is said); the blocks run as written are those of `AS_WRITTEN`,
    out of every block but the skipped ones and the listings; `printed` counts the printed differences."""
    known = {s.value for s in BlockStatus}
    judged = sum(n for word, n in counts.items() if word not in {s.value for s in NOT_JUDGED})
    written = sum(counts.get(s.value, 0) for s in AS_WRITTEN)
    skipped, listings = counts.get(BlockStatus.SKIPPED.value, 0), counts.get(BlockStatus.LISTING.value, 0)
    waiting = counts.get(BlockStatus.INTERACTIVE.value, 0)
    others = [(s.words, counts.get(s.value, 0)) for s in BlockStatus if s not in (BlockStatus.RAN, *NOT_JUDGED)]
    others += [(word.replace("_", " "), n) for word, n in counts.items() if word not in known]
    parts = (
        ([f"{skipped} skipped"] if skipped else [])
        + ([f"{listings} listing{'s' * (listings != 1)} not run"] if listings else [])
        + ([f"{waiting} interactive, not run"] if waiting else [])
        + [", ".join(f"{n} {words}" for words, n in others if n)]
        + ([f"{printed} printed differently"] if printed else [])
    )
    detail = "; ".join(p for p in parts if p)
    said = f"{written} of {judged} block{'' if judged == 1 else 's'} run as written"
    return said + (f" ({detail})" if detail else "")


@dataclass(frozen=True)
class Heading:
    """Where a block sits: the numbered section (`3.1`, `Ex2` for exercise 2, or '' outside numbered sections), its
    title, and the unnumbered heading below it, if any (`🔍 Extra: ...`, `Common setup`)."""

    section: str = ""
    title: str = ""
    subheading: str = ""

    @property
    def text(self) -> str:
        """`3.1 jax_debug_nans / jax_debug_infs`, `Exercise 2: a nan_guard decorator`, with ` · <subheading>`."""
        if self.section.startswith("Ex"):
            head = f"Exercise {self.section[2:]}" + (f": {self.title}" if self.title else "")
        else:
            head = " ".join(p for p in (self.section, self.title) if p)
        return " · ".join(p for p in (head, self.subheading) if p)


@dataclass(frozen=True)
class Step:
    """A run of a block's top-level statements, lines `first`..`last` of its code (1-based, inclusive), and what the
    page says of its last statement: the error it raises (`stated`, a class name, with the message it shows and the
    form it was written in: `comment`, `string`, `==> raises`, `doctest`), the output it prints (`shown`, None for
    none stated), a line magic run in its place (`magic`: `%timeit f(x)`), and how it runs (`mode`: `exec`, or
    `single` for a `>>>` example, whose expression values are displayed as the interactive prompt does)."""

    first: int
    last: int
    stated: str = ""
    stated_message: str = ""
    stated_form: str = ""
    shown: str | None = None
    magic: str = ""
    mode: str = "exec"

    def to_json(self) -> dict:
        """The step as the runner's plan and the reuse key hold it."""
        return {
            "first": self.first,
            "last": self.last,
            "stated": self.stated,
            "message": self.stated_message,
            "form": self.stated_form,
            "shown": self.shown,
            "magic": self.magic,
            "mode": self.mode,
        }


@dataclass(frozen=True)
class Block:
    """One block of a chapter (see the module's docstring). `line` and `end_line` are its code's first and last line
    in the source (1-based; for a notebook, its cell's number), `output` the printed output the document shows
    right after it ('' for none), `output_known` whether the document states its output at all (False for a
    Markdown block without `# Prints:` or a notebook cell never executed: not compared), `joined` whether the next
    block follows it directly in a plain-text chapter (what it prints is shown after that one), `raises` the
    exception the document says it raises ('' none, '*' any: a notebook's `raises-exception` tag), `skip` the
    document's own reason not to run it (a `skip-execution` tag), `display` whether its last line is an expression
    whose value the document shows (a notebook displays it), and `defines` the names it binds at top level."""

    index: int
    id: str
    hash: str
    code: str
    line: int
    end_line: int
    heading: Heading
    output: str = ""
    output_known: bool = True
    joined: bool = False
    output_line: int = 0
    raises: str = ""
    skip: str = ""
    display: bool = False
    defines: tuple[str, ...] = ()
    # What the page says will happen, and how it runs (docs/chapters.md#statements): its steps (none: it runs whole,
    # as one), the code as run (`runnable`; '' for `code` itself: magic lines made `pass`, output lines blanked, a
    # `>>>` transcript's prompts removed), a cell magic wrapping it (`%%time`), the page's notes (`# ==> Pauses
    # during execution`) and the magics not run (`%xmode`), and why it is a listing the page's build never runs.
    steps: tuple[Step, ...] = ()
    runnable: str = ""
    cell_magic: str = ""
    notes: tuple[str, ...] = ()
    magics_not_run: tuple[str, ...] = ()
    listing: str = ""
    step_output: bool = False  # its shown output is its steps' (compared statement by statement), not the block's

    @property
    def first_code(self) -> str:
        """Its first line that is neither blank, a comment nor a decorator (else its first line)."""
        lines = [line.strip() for line in self.code.splitlines() if line.strip()]
        return next((line for line in lines if not line.startswith(("#", "@"))), lines[0] if lines else "")

    @property
    def section(self) -> str:
        """Its section number (`3.1`, `Ex2`, or '')."""
        return self.heading.section

    @property
    def code_as_run(self) -> str:
        """The code the runner compiles (see `runnable`)."""
        return self.runnable or self.code

    @property
    def stated_errors(self) -> tuple[str, ...]:
        """The errors the page states: the block's own (`*` for any: a `raises-exception` tag), then each
        statement's, in order."""
        return ((self.raises,) if self.raises else ()) + tuple(step.stated for step in self.steps if step.stated)

    @property
    def states_error(self) -> bool:
        """Whether the page states an error for the block or one of its statements."""
        return bool(self.stated_errors)


@dataclass(frozen=True)
class Chapter:
    """A chapter read into blocks: its name (the file's stem), the path it was read from, its form (`text`,
    `markdown`, `notebook`), its blocks in order, where a listed page comes from and its title (its first heading)."""

    name: str
    path: str
    form: str
    blocks: tuple[Block, ...]
    origin: str = ""  # where the page comes from, for a page of a list: `jax-ml/jax@8c0c43c0:docs/debugging.md`
    title: str = ""  # its own name, its first heading (`Chapter 8: The Debugging Toolkit`; '' for none)
    setup: str = ""  # the skip list's `[setup]` code, run before the first block in every process ('' for none)


@dataclass(frozen=True)
class Outcome:
    """One block's result on one release: its status, what decides it (`exception` and `message`: the type and the
    first line of what it raised; `assert_line` and `assert_text`: the failed assert, its line counted in the
    block; `name`: the missing name of an `after_failure`, `because` the block that should have defined it; `reason`
    for a skipped block), what it printed, and the printed comparison with the document (`printed_differs`, and
    `printed_diff`: the lines that differ, after normalising)."""

    status: BlockStatus
    exception: str = ""
    message: str = ""
    assert_line: int = 0
    assert_text: str = ""
    name: str = ""
    because: str = ""
    reason: str = ""
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    printed_differs: bool = False
    printed_diff: tuple[str, ...] = ()
    replayed: bool = False  # it ran in a process started again after a crash or a hard timeout, earlier blocks replayed
    line: int = 0  # the block's line of the statement that raised (0: unknown)
    stated: str = ""  # what the page states it raises: `ValueError: out-of-bounds indexing at <..>:7 (f)`
    raised_as_stated: tuple[str, ...] = ()  # each statement that raised as the page states: `line 5: ValueError`
    notes: tuple[str, ...] = ()  # the page's `# ==> ...` notes, `magic not run: %xmode`
    settings: tuple[str, ...] = ()  # flags an earlier block left set that the failure names: `jax_debug_nans=True (set
    # by block s1_2_...)`
    cause: str = ""  # what explains an error raised in a callback: the callback's own exception, the stderr's tail

    @property
    def detail(self) -> str:
        """One line saying what decided the status, then what explains it (an error raised in a callback, a flag an
        earlier block set) and the notes; empty for a block that ran as written with nothing to note."""
        return "; ".join(part for part in (self._decided(), self.cause, *self.settings, *self.notes) if part)

    def _decided(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        raised = f"{self.exception}: {self.message}".rstrip(": ")
        if self.status is BlockStatus.ASSERT_FAILED:
            where = f"line {self.assert_line}: " if self.assert_line else ""
            return where + self.assert_text + (f" ({self.message})" if self.message else "")
        if self.status is BlockStatus.RAISED:
            return where + raised
        if self.status is BlockStatus.RAISED_OTHERWISE:
            return f"{where}raised {raised}; the page states {self.stated}"
        if self.status is BlockStatus.DID_NOT_RAISE:
            return f"{where}raised nothing; the page states {self.stated}"
        if self.status is BlockStatus.RAISED_AS_DOCUMENTED:
            return "raised as the page states: " + ", ".join(self.raised_as_stated)
        if self.status is BlockStatus.INTERACTIVE:
            return f"not run: it waits for a person at {self.reason}"
        if self.status is BlockStatus.AFTER_FAILURE:
            return f"NameError: name {self.name!r} is not defined (block {self.because} should have defined it)"
        if self.status in (BlockStatus.SKIPPED, BlockStatus.LISTING):
            return self.reason
        if self.status in (BlockStatus.TIMEOUT, BlockStatus.CRASH):
            return self.message
        return ""
