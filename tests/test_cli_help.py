"""Each subcommand's `--help` in groups and ending with examples (issue 60): every option of every subcommand in a
titled group, every subcommand with at least one example, and each example a command line the real parser takes
for that very subcommand. No help says "(default default)"."""

from __future__ import annotations

import argparse
import shlex

import pytest

from conformance.cli_help import EXAMPLES, GROUPS, PROG, group_options, subparsers, with_help
from conformance.cli_parser import build_parser

COMMANDS = dict(subparsers(build_parser()))
UNGROUPED = ("positional arguments", "options")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_subcommand_groups_its_options_and_ends_with_examples(name):
    parser = COMMANDS[name]
    titled = [g.title for g in parser._action_groups if g._group_actions and g.title not in UNGROUPED]
    parent = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)  # `api`, `expectations`
    assert len(titled) >= (1 if parent else 2), titled  # "how much it says" and at least one of the command's own
    assert [a.dest for a in parser._optionals._group_actions] == ["help"]  # nothing left in the flat list
    text = parser.format_help()
    assert "examples:" in text and text.rstrip().splitlines()[-1].startswith(f"  {PROG} {name.split()[0]}")
    assert "default default" not in " ".join(text.split())


@pytest.mark.parametrize("name,line", [(name, line) for name, lines in EXAMPLES.items() for line in lines])
def test_each_example_parses_with_the_real_parser_as_its_subcommand(name, line):
    args = build_parser().parse_args(shlex.split(line))  # argparse exits 2 on a line it refuses
    words = name.split()
    assert args.command == words[0]
    if len(words) > 1:
        assert getattr(args, f"{words[0]}_command") == words[1]


def test_every_subcommand_has_examples_and_no_example_names_a_missing_one():
    assert set(EXAMPLES) == set(COMMANDS)


def test_grouping_moves_options_and_keeps_what_they_parse():
    """On a synthetic parser, so the rule cannot pass by seeing nothing: the grouped options parse as before, a
    mutually exclusive pair still refuses both, and an option no group names stays under "options"."""
    parser = argparse.ArgumentParser(prog=PROG)
    commands = parser.add_subparsers(dest="command")
    child = commands.add_parser("x")
    pair = child.add_mutually_exclusive_group()
    pair.add_argument("--jax")
    pair.add_argument("--matrix")
    child.add_argument("--results")
    child.add_argument("--unheard-of")
    with_help(parser)
    groups = {g.title: [a.dest for a in g._group_actions] for g in child._action_groups}
    assert groups["what to run"] == ["jax", "matrix"] and groups["where results and outputs go"] == ["results"]
    assert groups["options"] == ["help", "unheard_of"]
    assert parser.parse_args(["x", "--jax", "1", "--results", "r"]).results == "r"
    with pytest.raises(SystemExit):
        parser.parse_args(["x", "--jax", "1", "--matrix", "m"])
    assert "examples:" not in child.format_help()  # no examples for a command EXAMPLES does not know
    group_options(child)  # again: nothing moves twice
    assert sum(len(g._group_actions) for g in child._action_groups) == len(child._actions)
    assert all(GROUPS[t] for t in GROUPS)
