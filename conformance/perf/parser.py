"""The grammar of the performance tier: `perf`, and the options it adds to `bisect` (`--metric`) and `gate`
(`--perf-rounds`, `--perf`, `--scan`, `--json`). `cli_parser` calls these; nothing here runs anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.jsonout import json_help, json_path
from conformance.perf.stats import METRICS, THRESHOLD


def _rounds_options(parser: Any, default_rounds: int = 5) -> None:
    parser.add_argument(
        "--rounds",
        type=int,
        default=default_rounds,
        metavar="N",
        help=f"interleaved rounds per side (default {default_rounds}; 5 is the fewest in which the "
        f"rank test can reach p < 0.01)",
    )
    parser.add_argument(
        "--max-rounds",
        type=int,
        default=9,
        metavar="N",
        help="the bound on rounds when a verdict is still unknown (default 9)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=THRESHOLD,
        metavar="RATIO",
        help=f"the ratio a timed metric must pass to be regressed or improved (default {THRESHOLD})",
    )
    parser.add_argument(
        "--xla-flags",
        default="",
        metavar="FLAGS",
        help="XLA_FLAGS for the workloads' processes, e.g. --xla_cpu_use_thunk_runtime=false",
    )


def add_perf_parser(commands: Any, add_common_options: Any, default_results: Path) -> None:
    """`perf`: the releases (a matrix, versions, interpreters), the selection, the rounds and the outputs."""
    perf = commands.add_parser(
        "perf",
        help="measure the workloads on each release in interleaved rounds and say what regressed, improved or changed",
    )
    which = perf.add_mutually_exclusive_group()
    which.add_argument("--matrix", metavar="NAME", help="a matrix name or .toml path (default: the default matrix)")
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX release; repeat for more")
    perf.add_argument(
        "--python",
        action="append",
        default=[],
        metavar="PATH",
        help="an existing interpreter with jax, measured as it is (repeatable; after the releases)",
    )
    perf.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection of workloads")
    _rounds_options(perf)
    perf.add_argument(
        "--aa",
        action="store_true",
        help="the noise check: each release against a twin of itself "
        "(exit 1 when anything is regressed, improved or changed)",
    )
    perf.add_argument("--rerun", action="store_true", help="sample again even where stored samples still hold")
    perf.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the samples and verdicts"))
    perf.add_argument(
        "--results",
        type=Path,
        default=default_results,
        metavar="DIR",
        help="results folder the samples are stored in (default results/)",
    )
    add_common_options(perf)


def add_bisect_perf_options(bisecting: Any) -> None:
    """`bisect WORKLOAD --metric M`: bisect a workload's metric instead of a cell's status."""
    bisecting.add_argument(
        "--metric",
        choices=METRICS,
        metavar="METRIC",
        help=f"bisect a workload's metric ({', '.join(METRICS)}); CELL is then a workload id",
    )
    _rounds_options(bisecting)


def add_gate_perf_options(gating: Any) -> None:
    """`gate`'s other tiers: the workloads (`--perf-rounds`, `--perf`, `--perf-threshold`), the names (`--scan`),
    and the one verdict as JSON (`--json`)."""
    gating.add_argument(
        "--perf-rounds",
        type=int,
        metavar="N",
        help="sample the workloads now, N interleaved rounds "
        "per side, and judge them with the cells (without it, workloads are judged when both sides' "
        "samples are stored)",
    )
    gating.add_argument(
        "--perf", action="store_true", help="judge the workloads only, not the cells (5 rounds unless --perf-rounds)"
    )
    gating.add_argument(
        "--perf-threshold",
        type=float,
        default=THRESHOLD,
        metavar="RATIO",
        help=f"the timed ratio that fails a workload (default {THRESHOLD})",
    )
    gating.add_argument(
        "--scan",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="judge the JAX names this code uses at --to (api scan): a removed one fails unless a "
        "[[name]] entry acknowledges it (repeatable)",
    )
    gating.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the one verdict (docs/decisions.md)"))
