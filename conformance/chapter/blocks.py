"""Making blocks from the pieces a reader found: the content hash, the block's id, the names it binds, whether its
last expression is displayed, and the comment conventions that state an outcome. Pure.

- The hash is the sha256 of the block's code with trailing spaces and the blank lines around it removed (16 hex
  digits kept): an edited block has a new hash, a block moved elsewhere keeps it.
- The id is the section and the first 8 hex digits of the hash (`s3_1_9f2c4a1b`, `ex2_...`, `b_...` outside
  numbered sections), with `_2`, `_3` ... for a repeat of the same code in the same section: stable while the block
  is unchanged, whatever is added or removed around it.
"""

from __future__ import annotations

import ast
import hashlib
import re
from typing import Iterable

from conformance.chapter.magics import find_magics
from conformance.chapter.model import Block, Heading, Step
from conformance.chapter.stated import (
    ALTERNATIVE,
    block_steps,
    fence_output_lines,
    notes_of,
    parse_quietly,
    printed_comments,
    stated_raise,
)
from conformance.chapter.transcript import is_transcript, transcript_steps

__all__ = ["printed_comments", "stated_raise", "parse_quietly", "make_blocks", "block_plan"]


def normalised_code(code: str) -> str:
    """The code as hashed: trailing spaces of each line and the blank lines around it removed."""
    lines = [line.rstrip() for line in code.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def code_hash(code: str) -> str:
    """The block's content hash: 16 hex digits of the sha256 of its normalised code."""
    return hashlib.sha256(normalised_code(code).encode("utf-8")).hexdigest()[:16]


def section_slug(section: str) -> str:
    """`3.1` → `s3_1`, `Ex2` → `ex2`, '' → `b`: the start of a block's id."""
    if section and section[0].isdigit():
        return "s" + re.sub(r"\W", "_", section)
    return re.sub(r"\W", "_", section.lower()) or "b"


class _Bindings(ast.NodeVisitor):
    """The names a module binds in its own scope (not inside functions, classes or lambdas)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def _target(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            self.names.append(node.id)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                self._target(element)
        elif isinstance(node, ast.Starred):
            self._target(node.value)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self._target(node.target)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._target(node.optional_vars)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.names.append(node.name)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.names += [alias.asname or alias.name.split(".")[0] for alias in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.names += [alias.asname or alias.name for alias in node.names if alias.name != "*"]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.names.append(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.append(node.name)
        for decorator in node.decorator_list:
            self.visit(decorator)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return


def defined_names(code: str) -> tuple[str, ...]:
    """The names the code binds at top level, each once, in order (none when it does not parse)."""
    tree = parse_quietly(code)
    if tree is None:
        return ()
    found = _Bindings()
    found.visit(tree)
    return tuple(dict.fromkeys(found.names))


def ends_with_expression(code: str) -> bool:
    """Whether the code's last statement is an expression a notebook would display (not one ending with `;`); its
    IPython magic lines read as the runner runs them (`runnable_code`)."""
    tree = parse_quietly(runnable_code(code))
    if tree is None or not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return False
    value = tree.body[-1].value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print":
        return False  # its value is None: nothing to display
    last = [line.split("#", 1)[0].rstrip() for line in code.splitlines() if line.split("#", 1)[0].strip()]
    return not (last and last[-1].endswith(";"))


def runnable_code(code: str) -> str:
    """The code as it runs: as written when it parses, else with each IPython line magic or shell escape
    (`%matplotlib inline`, `!pip install ...`) replaced by `pass` (a notebook's or an `ipython` fence's)."""
    return find_magics(code)[0]


def block_plan(code: str, markdown: bool = False) -> dict:
    """How a block runs and what its page says of it (docs/chapters.md#statements): the `Block` fields `runnable`,
    `steps`, `cell_magic`, `notes`, `magics_not_run` and `step_output`. `markdown`: the block is a Markdown page's
    fence, where a `>>>` transcript runs as a doctest, `# Prints:` comments belong to the statement above them and
    lines that are not code are output."""
    notes = notes_of(code)
    if markdown and is_transcript(code):
        runnable, steps, skipped = transcript_steps(code)
        return {
            "runnable": runnable,
            "steps": steps,
            "cell_magic": "",
            "notes": notes + skipped,
            "magics_not_run": (),
            "step_output": True,
        }
    runnable, line_magics, cell, not_run = find_magics(code)
    output_lines: dict[int, str] = {}
    if markdown:
        runnable, output_lines = fence_output_lines(runnable)
    steps = block_steps(runnable, prints=markdown, output_lines=output_lines, magics=line_magics)
    if line_magics and not steps:  # the code does not parse here: its magics cannot be run in their place
        not_run = tuple(dict.fromkeys(not_run + tuple(m.split()[0] for m in line_magics.values())))
    return {
        "runnable": "" if runnable == code else runnable,
        "steps": steps,
        "cell_magic": cell,
        "notes": notes,
        "magics_not_run": not_run,
        "step_output": any(step.shown is not None for step in steps),
    }


def _steps_output(steps: tuple[Step, ...]) -> str:
    """The output a block's steps show, one after the other (each step's first alternative)."""
    return "\n".join(step.shown.split(ALTERNATIVE)[0] for step in steps if step.shown)


def unique_ids(blocks: Iterable[tuple[Heading, str]]) -> list[str]:
    """The id of each (heading, hash), in order: the section's slug and 8 hex digits, `_2` ... for repeats."""
    seen: dict[str, int] = {}
    ids = []
    for heading, digest in blocks:
        base = f"{section_slug(heading.section)}_{digest[:8]}"
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}_{seen[base]}")
    return ids


def make_blocks(raw: Iterable[dict]) -> tuple[Block, ...]:
    """Blocks from the readers' raw pieces (dicts with the `Block` fields other than index, id, hash, defines and
    display; `shows_value` says whether the document shows its last expression's value)."""
    pieces = [dict(piece) for piece in raw]
    hashes = [code_hash(piece["code"]) for piece in pieces]
    ids = unique_ids((piece["heading"], digest) for piece, digest in zip(pieces, hashes))
    blocks = []
    for index, (piece, digest, block_id) in enumerate(zip(pieces, hashes, ids)):
        shows_value = piece.pop("shows_value", bool(piece.get("output")))
        code = piece.pop("code")
        plan = block_plan(code, markdown=piece.pop("markdown", False))
        if plan["step_output"]:
            piece.update(output=_steps_output(plan["steps"]), output_known=True)
        if piece.get("raises") not in ("", "*") and any(s.stated_form == "==> raises" for s in plan["steps"]):
            piece["raises"] = ""  # the comment names the statement that raises: its step states it
        runs = plan["runnable"] or code
        display = (
            shows_value and not any(step.mode == "single" for step in plan["steps"]) and ends_with_expression(runs)
        )
        blocks.append(
            Block(
                index=index,
                id=block_id,
                hash=digest,
                code=code,
                display=display,
                defines=defined_names(runs),
                **plan,
                **piece,
            )
        )
    return tuple(blocks)
