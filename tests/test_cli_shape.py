"""The CLI only parses and prints: `cli.py` stays short, with short functions, and nothing below it sees parsed
arguments (issue 27). Checked on the source with `ast`, so a change that grows the CLI back fails here."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import conformance
from conformance import cli

PACKAGE = Path(conformance.__file__).parent
# Counted in logical lines (Python's NEWLINE tokens: a statement spread over several lines by `ruff format` counts
# once), so that the formatter cannot move the bound. Before the tree was formatted the bound was 350 physical lines
# (40 per function) with cli.py at 345 physical, 257 logical lines and its longest function, `command_run`, at 37
# physical, 32 logical; formatting took cli.py to 495 physical lines and the same 257 logical ones.
MAX_LOGICAL_LINES, MAX_FUNCTION_LOGICAL_LINES = 260, 34


def logical_lines(source: str, first: int = 1, last: int | None = None) -> int:
    """The logical lines of `source` (NEWLINE tokens, and each `;` between two statements: `a = 1; b = 2` is two)
    that end between physical lines `first` and `last`."""
    skip = (tokenize.COMMENT, tokenize.NL)
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skip]
    ends = [
        t
        for t, after in zip(tokens, tokens[1:] + [None])
        if t.type == tokenize.NEWLINE or (t.exact_type == tokenize.SEMI and after and after.type != tokenize.NEWLINE)
    ]
    return sum(1 for t in ends if first <= t.start[0] and (last is None or t.start[0] <= last))


def test_a_statement_over_several_physical_lines_is_one_logical_line():
    assert logical_lines("x = f(\n    1,\n    2,\n)\ny = 2\n") == 2
    assert logical_lines("def f():\n    a = 1\n    return a\n", 2, 3) == 2
    # statements joined by `;` on one physical line are still counted one each (a trailing `;` ends nothing more)
    assert logical_lines("a = 1; b = 2; c = 3\nd = 4;  # x\n") == 4
    assert logical_lines("def f(): a = 1; return a\n") == 2


def test_cli_is_at_most_260_logical_lines_and_no_function_is_over_34():
    source = Path(cli.__file__).read_text(encoding="utf-8")
    assert logical_lines(source) <= MAX_LOGICAL_LINES
    long = [
        (node.name, logical_lines(source, node.lineno, node.end_lineno))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and logical_lines(source, node.lineno, node.end_lineno) > MAX_FUNCTION_LOGICAL_LINES
    ]
    assert long == []


# The only modules of the package besides the CLI that may build an ArgumentParser, each with its reason. The child
# side runs inside a target environment as `python -m ...` (its argv written by the parent, not by a user); the
# maintainer's tools live outside the package (`tools/import_rows.py`), so that a new one here fails.
OWN_COMMAND_LINES = {
    "cli_parser.py": "the CLI's parser",
    "child/main.py": "child side: the cell runner, started by the parent",
    "child/forkserver.py": "child side: the per-version fork server, started by the parent",
    "child/envinfo.py": "child side: the environment's description, started by the parent",
    "perf/child.py": "child side: a workload's timing process, started by the parent",
}
# The CLI's grammar beside `cli_parser.py` that uses argparse's types without building a parser of its own: the
# team's `[tool.jax-conformance]` defaults and `-v`/`-q`, applied to every parser `cli_parser` builds.
GRAMMAR = {
    "config.py": "the team's defaults and the verbosity options, applied by cli_parser",
    "cli_help.py": "each subcommand's help in groups, with examples, applied by cli_parser",
}


def argparse_use(source: str) -> tuple[bool, bool]:
    """Whether a module's source imports argparse (or the CLI, or takes a Namespace), and whether it builds its own
    ArgumentParser."""
    tree = ast.parse(source)
    imports = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imports |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    names |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    uses = "conformance.cli" in imports or "argparse" in imports or "Namespace" in names
    return uses, "ArgumentParser" in names


def test_no_module_below_the_cli_sees_parsed_arguments():
    """Nothing below the CLI imports it or takes its Namespace; a module that uses argparse at all is one of the
    listed command lines of their own (census, screenshots, publish and restore parse theirs elsewhere: issue 60), and
    every listed one still is (a stale entry fails too)."""
    seen, parsers = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        name = str(path.relative_to(PACKAGE))
        if name in ("cli.py", "__main__.py"):  # the CLI, and its entry point
            continue
        uses, own_parser = argparse_use(path.read_text(encoding="utf-8"))
        if own_parser:
            parsers.add(name)
        if uses and name not in OWN_COMMAND_LINES and name not in GRAMMAR:
            seen.append(name)
    assert seen == []
    assert parsers - set(GRAMMAR) == set(OWN_COMMAND_LINES)  # GRAMMAR names ArgumentParser in its annotations


def test_the_argparse_rule_sees_each_way_in():
    """The detector above on synthetic sources, so the rule cannot pass by seeing nothing."""
    assert argparse_use("import argparse\nargparse.ArgumentParser()") == (True, True)
    assert argparse_use("from argparse import ArgumentParser\nArgumentParser()") == (True, True)
    assert argparse_use("from conformance.cli import settings") == (True, False)
    assert argparse_use("def f(args):\n    return args.Namespace") == (True, False)
    assert argparse_use("import json\njson.dumps({})") == (False, False)


def test_the_shape_check_can_fail():
    """The function-length check on a synthetic long function (so the check above is not vacuous)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LOGICAL_LINES + 1))
    source = f"def long():\n{body}\n"
    node = ast.parse(source).body[0]
    assert logical_lines(source, node.lineno, node.end_lineno) > MAX_FUNCTION_LOGICAL_LINES
