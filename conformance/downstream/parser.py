"""The grammar of downstream suites: `downstream SUITE...`, `gate --downstream SUITE` and `upgrade --downstream
SUITE`. `cli_parser` calls these; nothing here runs anything. `downstream_request` makes a `DownstreamRequest` of
plain values (the CLI hands them over by the names in `DOWNSTREAM_OPTIONS`); `gate_tiers` is the one gate's
downstream tier (`command`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.downstream.command import DownstreamRequest, gate_tiers, run_downstream  # noqa: F401 - the CLI's
from conformance.envs.matrix import matrix_versions
from conformance.errors import ConformanceError
from conformance.jsonout import json_help, json_path


def add_downstream_parser(commands: Any, add_common_options: Any, default_results: Path) -> None:
    """`downstream SUITE... (--from A --to B | --jax V ... | --matrix NAME) [--budget S] [--json PATH]`."""
    parser = commands.add_parser(
        "downstream",
        help="run a library's (NAME==VERSION) or a team folder's own pytest "
        "suite on each release, every test a cell, and judge each release against the first",
    )
    parser.add_argument("suites", nargs="+", metavar="SUITE", help="chex==0.1.90, or a folder holding a pytest suite")
    parser.add_argument("--from", dest="from_version", metavar="VERSION", help="the baseline release (with --to)")
    parser.add_argument("--to", dest="to_version", metavar="VERSION", help="the candidate release (with --from)")
    parser.add_argument(
        "--jax",
        action="append",
        default=[],
        metavar="VERSION",
        help="a release (repeatable; the first is the baseline the lock is resolved against)",
    )
    parser.add_argument("--matrix", metavar="NAME", help="the releases of a matrix (the first is the baseline)")
    parser.add_argument("--manifest", type=Path, metavar="FILE", help="the suite's TOML manifest (one suite)")
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="run the subset that fits, planned from the "
        "durations recorded on the baseline (one parametrisation per test function first)",
    )
    parser.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the statuses and judgements"))
    parser.add_argument(
        "--expectations",
        type=Path,
        metavar="FILE",
        help="[[downstream]] entries acknowledging regressions (exit 1 on any other regressed test)",
    )
    parser.add_argument("--rerun", action="store_true", help="run again where stored cells would answer")
    parser.add_argument(
        "--resolve",
        choices=("baseline", "each"),
        default="baseline",
        help="baseline: one lock resolved against the first release, only jax/jaxlib swapped (default); each: the "
        "library resolved afresh with each release, its picked version said per release",
    )
    parser.add_argument(
        "--no-api-scan",
        dest="api_scan",
        action="store_false",
        help="do not scan the library's installed source with api scan against each candidate",
    )
    parser.add_argument(
        "--shard",
        action="store_true",
        help="run the one (suite, release) pair JOB_COMPLETION_INDEX "
        "(Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (SLURM array) names",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=default_results,
        metavar="DIR",
        help="results folder the tests are stored in (default results/)",
    )
    add_common_options(parser, cases=False)


def add_gate_downstream_options(gating: Any) -> None:
    """`gate --from A --to B --downstream SUITE`: the downstream tier, judged in the one verdict with the others."""
    gating.add_argument(
        "--downstream",
        action="append",
        default=[],
        metavar="SUITE",
        help="judge this downstream suite (repeatable): fail on a regressed test no [[downstream]] entry acknowledges",
    )
    gating.add_argument("--budget", type=float, metavar="SECONDS", help="with --downstream: the suite's budget")


def add_upgrade_downstream_options(upgrade: Any) -> None:
    """`upgrade --from A --to B --downstream SUITE`: the downstream tier of the review, run as `gate --downstream`."""
    upgrade.add_argument(
        "--downstream",
        action="append",
        default=[],
        metavar="SUITE",
        help="also list this downstream suite's tests regressed and fixed from A to B, by signature (repeatable; "
        "chex==0.1.90, or a folder holding a pytest suite)",
    )
    upgrade.add_argument("--budget", type=float, metavar="SECONDS", help="with --downstream: the suite's budget")


def add_bisect_downstream_options(bisecting: Any) -> None:
    """`bisect NODEID --downstream SUITE --good A --bad B`: the first release where one test of a suite changed."""
    bisecting.add_argument(
        "--downstream",
        metavar="SUITE",
        default="",
        help="bisect one test of this downstream suite (chex==0.1.90, or a folder); CELL is then its pytest node id",
    )
    bisecting.add_argument("--manifest", type=Path, metavar="FILE", help="with --downstream: the suite's TOML manifest")


# The `downstream` options the CLI hands to `downstream_request` as plain keyword values (their argparse names).
DOWNSTREAM_OPTIONS = (
    "suites",
    "from_version",
    "to_version",
    "jax",
    "matrix",
    "results",
    "manifest",
    "budget",
    "json",
    "expectations",
    "rerun",
    "shard",
    "resolve",
    "api_scan",
)


def downstream_request(
    builder: Any,
    *,
    suites: Sequence[str],
    results: Path,
    from_version: str | None = None,
    to_version: str | None = None,
    jax: Sequence[str] = (),
    matrix: str | None = None,
    manifest: Path | None = None,
    budget: float | None = None,
    json: Path | None = None,
    expectations: Path | None = None,
    rerun: bool = False,
    shard: bool = False,
    resolve: str = "baseline",
    api_scan: bool = True,
) -> DownstreamRequest:
    """The request of `downstream SUITE...`: the releases are `from_version` and `to_version` (both), else the
    releases of `matrix` (read from `builder.index`), else `jax` in order; the first is the baseline."""
    if from_version or to_version:
        if not (from_version and to_version):
            raise ConformanceError("give both --from A (the baseline) and --to B (the candidate)")
        versions: tuple[str, ...] = (from_version, to_version)
    elif matrix:
        versions = tuple(matrix_versions(matrix, builder.index))
    else:
        versions = tuple(jax)
    return DownstreamRequest(
        tuple(suites),
        versions,
        results,
        manifest,
        budget,
        json,
        rerun,
        shard,
        expectations,
        resolve=resolve,
        api_scan=api_scan,
    )
