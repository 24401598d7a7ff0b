"""Which blocks wait for a person: a call to `breakpoint()`, `input()`, `jax.debug.breakpoint()`, `pdb.set_trace()`
and their kin. Pure (`ast`).

Such a block is not run (its status is `interactive`, docs/chapters.md#the-statuses): run without a terminal it
would stop at its prompt until its time limit, or read the end of its input and raise, and either would read as a
broken page. Only a call written in the block's own code counts (one inside a function it defines too: calling it
is what the block's code does); a name bound to one of these by an earlier block is not followed.
"""

from __future__ import annotations

import ast

from conformance.chapter.stated import parse_quietly

# The callables that stop for a person, by the dotted name a page calls them with.
WAITING = frozenset(
    {
        "breakpoint",
        "input",
        "jax.debug.breakpoint",
        "debug.breakpoint",
        "pdb.set_trace",
        "pdb.post_mortem",
        "pdb.pm",
        "ipdb.set_trace",
        "ipdb.post_mortem",
        "code.interact",
        "IPython.embed",
    }
)


def _dotted(node: ast.AST) -> str:
    """`jax.debug.breakpoint` for that attribute chain; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])


def interactive_call(code: str) -> str:
    """The first call in `code` that waits for a person, with its line (`line 5: jax.debug.breakpoint()`); '' when
    it has none or does not parse."""
    tree = parse_quietly(code)
    if tree is None:
        return ""
    calls = sorted(
        (node.lineno, name)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for name in [_dotted(node.func)]
        if name in WAITING
    )
    return f"line {calls[0][0]}: {calls[0][1]}()" if calls else ""
