"""Part of the command line's grammar: each subcommand's `--help` in groups (what it runs on, how, what it judges by,
where results and outputs go, where packages come from, how much it says) and ending with examples. Applied by
`cli_parser.build_parser` to the parser it built, by each option's argparse name, so a new option joins its group
by its name alone and the parsers stay as they are written. Runs nothing."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

PROG = "jax-conformance"

# Each group's options, by argparse dest; an option named in none stays under "options" with -h.
GROUPS: dict[str, frozenset[str]] = {
    "what to run": frozenset(
        {
            "expression",
            "jax",
            "matrix",
            "python",
            "wheels",
            "pair",
            "cases",
            "future",
            "shard",
            "shard_durations",
            "from_version",
            "to_version",
            "to",
            "to_python",
            "to_wheels",
            "to_pair",
            "baseline",
            "candidate",
            "good",
            "bad",
            "metric",
            "pages",
            "docs",
            "bisect",
            "blocks",
            "skip",
            "map",
            "with_packages",
            "manifest",
            "scan",
            "downstream",
            "name",
            "private",
            "find_fix",
            "attribute",
            "jax_source",
            "perf",
            "aa",
            "ci_runners",
            "ci_jobs",
            "shards",
            "stored",
        }
    ),
    "how it runs": frozenset(
        {
            "workers",
            "retries",
            "retry_differs",
            "launch",
            "rerun",
            "timeout",
            "rounds",
            "max_rounds",
            "xla_flags",
            "perf_rounds",
            "budget",
            "resolve",
            "api_scan",
        }
    ),
    "what it judges by": frozenset(
        {
            "expectations",
            "today",
            "threshold",
            "perf_threshold",
            "allow_missing",
            "allow_version_mismatch",
            "baseline_platforms",
            "newest",
            "fail_on_printed",
            "current",
            "fixes_exclude",
        }
    ),
    "where results and outputs go": frozenset(
        {
            "results",
            "report",
            "output",
            "json",
            "markdown",
            "markdown_full",
            "html_link",
            "compare",
            "site_url",
            "junit",
            "compat_json",
            "wptreport",
            "history",
            "issue",
            "format",
            "write",
            "previous",
            "commit",
            "date",
        }
    ),
    "package index": frozenset({"index_url", "extra_index_url", "find_links", "pre"}),
    "how much it says": frozenset({"verbose", "quiet"}),
}

# One or two command lines per subcommand, shown at the end of its --help (each parses: tests/test_cli_help.py).
EXAMPLES: dict[str, tuple[str, ...]] = {
    "list": ("list -k numerics", "list --cases examples/teamcases --json -"),
    "run": ("run --jax 0.4.38 --jax 0.5.0 -k numerics", "run --matrix quick --results results --json run.json"),
    "report": ("report results/ -o reports/local/index.html",),
    "history": ("history --previous old-results --results results --history history.json",),
    "matrix": ("matrix quick", "matrix 'quick latest' --json -"),
    "diff": ("diff 0.4.38 0.5.0 -k numerics", "diff old-results/ results/ --json diff.json"),
    "gate": (
        "gate --from 0.4.38 --to 0.5.0 --expectations expectations.toml",
        "gate --baseline old-results --candidate results --json -",
    ),
    "bisect": ("bisect numerics.debug_nans_vmap_miss:vmap --good 0.4.30 --bad 0.4.38 --json -",),
    "pin": ("pin 0.4.38", "pin all"),
    "expectations": ("expectations prune expectations.toml --results results",),
    "expectations prune": ("expectations prune expectations.toml", "expectations prune expectations.toml --write"),
    "supported": ("supported --results results --current 'jax<0.10'",),
    "api": ("api census --jax 0.6.2", "api scan src/ --to 0.6.2 --json -"),
    "api census": ("api census --jax 0.5.3 --jax 0.6.2",),
    "api diff": ("api diff 0.5.3 0.6.2 --name jax.numpy --json changes.json",),
    "api scan": ("api scan src/ --to 0.6.2 --from 0.5.3", "api scan src/ --to 0.6.2 --format sarif"),
    "chapter": ("chapter thinking_in_jax.md --blocks", "chapter thinking_in_jax.md --jax 0.6.2 --json -"),
    "perf": ("perf --jax 0.5.3 --jax 0.6.2 --rounds 5 --json perf.json",),
    "downstream": ("downstream chex==0.1.90 --from 0.5.3 --to 0.6.2 --json -",),
    "upgrade": ("upgrade --from 0.5.3 --to 0.6.2 --scan src/ --markdown review.md",),
}


def subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(`name`, parser) of every subcommand below `parser`, nested ones (`api scan`) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield f"{prefix}{name}", child
                yield from subparsers(child, f"{prefix}{name} ")


def group_options(parser: argparse.ArgumentParser) -> None:
    """Move each of `parser`'s options from the one "options" list into its group (`GROUPS`), in `GROUPS`' order;
    what they parse is unchanged (a mutually exclusive pair stays one)."""
    loose = parser._optionals._group_actions
    for title, dests in GROUPS.items():
        moving = [action for action in loose if action.dest in dests]
        if moving:
            group = parser.add_argument_group(title)
            group._group_actions.extend(moving)
            loose[:] = [action for action in loose if action not in moving]


def examples_epilog(lines: tuple[str, ...]) -> str:
    """The examples at the end of a subcommand's help."""
    return "examples:\n" + "\n".join(f"  {PROG} {line}" for line in lines)


def with_help(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`parser` with every subcommand's options grouped and its examples at the end of its help."""
    for name, each in subparsers(parser):
        group_options(each)
        if name in EXAMPLES:
            each.epilog = examples_epilog(EXAMPLES[name])
            each.formatter_class = argparse.RawDescriptionHelpFormatter  # the examples' lines kept as written
    return parser
