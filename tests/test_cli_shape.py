"""The CLI only parses and prints: `cli.py` stays short, with short functions, and nothing below it sees parsed
arguments (issue 27). Checked on the source with `ast`, so a change that grows the CLI back fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import conformance
from conformance import cli

PACKAGE = Path(conformance.__file__).parent
MAX_LINES, MAX_FUNCTION_LINES = 350, 40


def test_cli_is_at_most_350_lines_and_no_function_is_over_40():
    source = Path(cli.__file__).read_text(encoding="utf-8")
    assert len(source.splitlines()) <= MAX_LINES
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def test_no_module_below_the_cli_sees_parsed_arguments():
    """A module that uses argparse is a command line of its own (the child's entry point, the screenshot script):
    it builds its own parser. None imports the CLI or takes its Namespace."""
    seen = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("cli.py", "__main__.py") and path.parent == PACKAGE:  # the CLI, and its entry point
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imports |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        own_parser = "ArgumentParser" in names
        if "conformance.cli" in imports or ("argparse" in imports or "Namespace" in names) and not own_parser:
            seen.append(str(path.relative_to(PACKAGE)))
    assert seen == []


def test_the_shape_check_can_fail():
    """The function-length check on a synthetic long function (so the check above is not vacuous)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    node = ast.parse(f"def long():\n{body}\n").body[0]
    assert node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
