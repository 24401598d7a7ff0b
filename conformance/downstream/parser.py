"""The grammar of downstream suites: `downstream SUITE...` and `gate --downstream SUITE`. `cli_parser` calls these;
nothing here runs anything. `request_of` turns the parsed options into a `DownstreamRequest` (the CLI only prints)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.downstream.command import DownstreamRequest, run_downstream  # noqa: F401 - the CLI's entry
from conformance.envs.matrix import matrix_versions
from conformance.errors import ConformanceError


def add_downstream_parser(commands: Any, add_common_options: Any, default_results: Path) -> None:
    """`downstream SUITE... (--from A --to B | --jax V ... | --matrix NAME) [--budget S] [--json PATH]`."""
    parser = commands.add_parser("downstream", help="run a library's (NAME==VERSION) or a team folder's own pytest "
                                 "suite on each release, every test a cell, and judge each release against the first")
    parser.add_argument("suites", nargs="+", metavar="SUITE", help="chex==0.1.90, or a folder holding a pytest suite")
    parser.add_argument("--from", dest="from_version", metavar="VERSION", help="the baseline release (with --to)")
    parser.add_argument("--to", dest="to_version", metavar="VERSION", help="the candidate release (with --from)")
    parser.add_argument("--jax", action="append", default=[], metavar="VERSION",
                        help="a release (repeatable; the first is the baseline the lock is resolved against)")
    parser.add_argument("--matrix", metavar="NAME", help="the releases of a matrix (the first is the baseline)")
    parser.add_argument("--manifest", type=Path, metavar="FILE", help="the suite's TOML manifest (one suite)")
    parser.add_argument("--budget", type=float, metavar="SECONDS", help="run the subset that fits, planned from the "
                        "durations recorded on the baseline (one parametrisation per test function first)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write statuses and judgements as JSON")
    parser.add_argument("--expectations", type=Path, metavar="FILE", help="[[downstream]] entries acknowledging "
                        "regressions (exit 1 on any other regressed test)")
    parser.add_argument("--rerun", action="store_true", help="run again where stored cells would answer")
    parser.add_argument("--shard", action="store_true", help="run the one (suite, release) pair JOB_COMPLETION_INDEX "
                        "(Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (SLURM array) names")
    parser.add_argument("--results", type=Path, default=default_results, metavar="DIR",
                        help="results folder the tests are stored in (default results/)")
    add_common_options(parser, cases=False)


def add_gate_downstream_options(gating: Any) -> None:
    """`gate --from A --to B --downstream SUITE`: judge downstream suites instead of the cells."""
    gating.add_argument("--downstream", action="append", default=[], metavar="SUITE", help="judge this downstream "
                        "suite (repeatable): fail on a regressed test no [[downstream]] entry acknowledges")
    gating.add_argument("--budget", type=float, metavar="SECONDS", help="with --downstream: the suite's budget")


def request_of(args: Any, builder: Any) -> DownstreamRequest:
    """The request of `downstream` or `gate --downstream` from the parsed options."""
    gate = args.command == "gate"
    if gate or args.from_version or args.to_version:
        if not (args.from_version and args.to_version):
            raise ConformanceError("give both --from A (the baseline) and --to B (the candidate)")
        versions = (args.from_version, args.to_version)
    elif args.matrix:
        versions = tuple(matrix_versions(args.matrix, builder.index))
    else:
        versions = tuple(args.jax)
    return DownstreamRequest(tuple(args.downstream if gate else args.suites), versions, args.results,
                             getattr(args, "manifest", None), args.budget, getattr(args, "json", None),
                             getattr(args, "rerun", False), getattr(args, "shard", False), args.expectations,
                             args.today if gate else None)
