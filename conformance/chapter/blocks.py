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
import warnings
from typing import Iterable

from conformance.chapter.model import Block, Heading

RAISES_COMMENT = re.compile(r"#\s*==>\s*raises\s+([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
PRINTS_COMMENT = re.compile(r"^\s*#\s*Prints:\s*(.*)$")


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


def parse_quietly(code: str) -> ast.Module | None:
    """The module's syntax tree, or None when it does not parse (with the host's Python)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None


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


def stated_raise(code: str) -> str:
    """The exception a `# ==> raises X` comment in the code says it raises ('' for none)."""
    found = RAISES_COMMENT.search(code)
    return found.group(1) if found else ""


def printed_comments(code: str) -> str | None:
    """The output the code's `# Prints:` comments state (the rest of that line, then the comment lines right under
    it, each without its `# `), or None when it has none."""
    lines = code.splitlines()
    shown: list[str] | None = None
    k = 0
    while k < len(lines):
        found = PRINTS_COMMENT.match(lines[k])
        k += 1
        if not found:
            continue
        shown = shown or []
        if found.group(1).strip():
            shown.append(found.group(1).rstrip())
        while k < len(lines) and lines[k].lstrip().startswith("#") and not PRINTS_COMMENT.match(lines[k]):
            text = lines[k].lstrip()[1:]
            shown.append(text[1:] if text.startswith(" ") else text)
            k += 1
    return None if shown is None else "\n".join(shown)


MAGIC = re.compile(r"^(\s*)[%!].*$")


def runnable_code(code: str) -> str:
    """The code as it runs: as written when it parses, else with each IPython line magic or shell escape
    (`%matplotlib inline`, `!pip install ...`) replaced by `pass` (a notebook's or an `ipython` fence's)."""
    if parse_quietly(code) is not None:
        return code
    return "\n".join(MAGIC.sub(lambda m: f"{m.group(1)}pass", line) for line in code.split("\n"))


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
        blocks.append(Block(index=index, id=block_id, hash=digest, code=code,
                            display=shows_value and ends_with_expression(code), defines=defined_names(code),
                            **piece))
    return tuple(blocks)
