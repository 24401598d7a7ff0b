"""The command line's grammar: every subcommand and option of `jax-conformance`. `cli` parses with it and prints;
nothing here runs anything. Options that name a kind of target come from `engine.targets.BUILD_KINDS`."""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path
from typing import Any

import conformance
from conformance.cli_help import with_help
from conformance.config import configured
from conformance.decide.sides import JUDGING_FLAGS
from conformance.engine.session import LAUNCHERS
from conformance.engine.targets import BUILD_KINDS
from conformance.envs.matrix import DEFAULT_MATRIX
from conformance.downstream.parser import (
    add_bisect_downstream_options,
    add_downstream_parser,
    add_gate_downstream_options,
    add_upgrade_downstream_options,
)
from conformance.perf.parser import add_bisect_perf_options, add_gate_perf_options, add_perf_parser
from conformance.jsonout import BARE_JSON, json_help, json_path
from conformance.report.formats import output_formats
from conformance.report.outputs import DEFAULT_HTML_LINK

DEFAULT_RESULTS = Path("results")
# Not taken from __doc__, which is None under PYTHONOPTIMIZE=2.
DESCRIPTION = "Documented JAX behaviours, probed in fresh processes across JAX versions."
MATRIX_HELP = f"a matrix name or .toml path (default: the {DEFAULT_MATRIX!r} matrix)"
DEFAULT_REPORT = Path("reports/local/index.html")  # ignored by git: a run never overwrites the published report


def day(text: str) -> datetime.date:
    """A `YYYY-MM-DD` command-line date (`--today`); argparse's error names the expected form."""
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date such as 2027-02-01") from None


def add_common_options(parser: argparse.ArgumentParser, *, cases: bool = True, index: bool = True) -> None:
    """`--cases DIR` (a team's own case folder) and where packages come from (`--index-url` and the rest, for uv)."""
    if cases:
        parser.add_argument(
            "--cases",
            action="append",
            default=[],
            metavar="DIR",
            help="also load the case modules "
            "of this folder (a package named after the folder; its ids are namespaced "
            "<folder>/<module>.<probe>); repeat for more",
        )
    if index:
        parser.add_argument(
            "--index-url",
            metavar="URL",
            default="",
            help="the simple index to install from and read releases from (default: UV_INDEX_URL, else PyPI)",
        )
        parser.add_argument(
            "--extra-index-url",
            action="append",
            default=[],
            metavar="URL",
            help="another simple index, also read (repeatable)",
        )
        parser.add_argument(
            "--find-links",
            action="append",
            default=[],
            metavar="DIR_OR_URL",
            help="a folder or page of distribution files for uv (repeatable)",
        )
        parser.add_argument(
            "--pre",
            action="store_true",
            help="allow pre-releases and dev builds when resolving "
            "(bisect: then search the dev builds between the two releases it ends at)",
        )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of a run: selection, workers, retries, launcher, reuse and the results folder."""
    parser.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    parser.add_argument(
        "-j",
        dest="workers",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="cells run at once, each in its own process (default: the number of cores)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        metavar="N",
        help="rerun a cell ending in error, crash or timeout up to N times (default 1)",
    )
    parser.add_argument("--retry-differs", action="store_true", help="also rerun cells that differ")
    parser.add_argument(
        "--launch",
        choices=LAUNCHERS,
        default="fork",
        help="fork cells from a per-version server that imported jax (default), or spawn each",
    )
    parser.add_argument("--rerun", action="store_true", help="run every selected cell, even one with a stored result")
    parser.add_argument(
        "--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR", help="results folder (default results/)"
    )
    add_common_options(parser)


def add_run_parser(commands: Any) -> None:
    """`run`: the targets (a matrix, versions, given builds), the run options, the shard and the report."""
    run = commands.add_parser("run", help="run the cases across JAX versions and write results and the report")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--matrix", metavar="NAME", help=MATRIX_HELP)
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX version; repeat for more")
    for kind in BUILD_KINDS:
        run.add_argument(f"--{kind.option}", action="append", default=[], metavar=kind.metavar, help=kind.run_help)
    add_run_options(run)
    run.add_argument(
        "--future",
        action="store_true",
        help="run each probe with JAX's registered deprecations "
        "accelerated, deprecated attributes removed and their warnings as errors "
        "(target <version>+future)",
    )
    run.add_argument(
        "--shard",
        metavar="K/N",
        help="run only shard K of N of the selected cells, balanced by "
        "recorded durations; results go to <jax>-<platform>-shardKofN.json",
    )
    run.add_argument(
        "--shard-durations",
        type=Path,
        metavar="PATH",
        help="result files whose recorded durations balance the shards (default matrix/baseline/); "
        "every shard of a run must read the same ones",
    )
    run.add_argument(
        "-o",
        "--report",
        type=Path,
        default=None,
        metavar="PATH",
        help="HTML report to write from every result file in DIR (default: reports/local/index.html for "
        "the default results/ folder, DIR/report.html for another folder)",
    )
    run.add_argument(
        "--json",
        type=json_path,
        metavar="PATH",
        help=json_help("the run's outcome (per release: counts per status, its result file; the report)"),
    )


def add_report_parser(commands: Any) -> None:
    """`report`: result files into the HTML page, and the Markdown, JUnit, compat JSON and wptreport beside it."""
    report = commands.add_parser("report", help="render result files into the HTML report")
    report.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="result files, or folders of them")
    report.add_argument("-o", "--output", type=Path, default=DEFAULT_REPORT, metavar="PATH")
    for output in output_formats():  # the outputs beside the page, one option each: the registry's entries
        report.add_argument(output.option, dest=output.name, type=Path, metavar=output.metavar, help=output.help)
    report.add_argument("--markdown-full", action="store_true", help="the Markdown lists every change and cell too")
    report.add_argument("--html-link", default=DEFAULT_HTML_LINK, metavar="URL", help="the Markdown's link to the page")
    report.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help='the Markdown starts with "From A to B": '
        "the status changes of an upgrade between two versions of the report, each with its why",
    )
    report.add_argument(
        "--site-url",
        default="",
        metavar="URL",
        help="where the page is published (https://...): "
        "every link of the Markdown and the compat JSON is made absolute against it",
    )
    report.add_argument(
        "--history",
        type=Path,
        metavar="FILE",
        help="history.json (written by `history`): show "
        '"since the last run" at the top of the page and the Markdown, and the previous runs',
    )


def add_history_parser(commands: Any) -> None:
    """`history`: append one published run's entry (what changed since the previous results, and why) to a file."""
    history = commands.add_parser(
        "history",
        help="append this run's entry to history.json: counts, and the cells "
        "changed since the previous results with the reason",
    )
    history.add_argument(
        "--previous",
        type=Path,
        metavar="DIR",
        help="the previous published results (missing or empty: the first run, every cell new)",
    )
    history.add_argument("--results", type=Path, required=True, metavar="DIR", help="the new results")
    history.add_argument(
        "--history",
        type=Path,
        required=True,
        metavar="FILE",
        help="the history file to append to (created if missing; an unreadable one is set aside)",
    )
    history.add_argument("--commit", default="", metavar="SHA", help="the suite's commit that made the run")
    history.add_argument(
        "--date", type=day, default=None, metavar="YYYY-MM-DD", help="the run's day (default: today, UTC)"
    )


def add_decision_parsers(commands: Any) -> None:
    """`diff`, `gate` and `bisect`."""
    diff = commands.add_parser("diff", help="list the cells whose status or observation differ between two result sets")
    diff.add_argument(
        "baseline",
        type=Path,
        metavar="A",
        help="baseline result file, a folder of them, or a JAX "
        "version (its stored results; cells not stored yet are run)",
    )
    diff.add_argument("candidate", type=Path, metavar="B", help="candidate result file, folder or JAX version")
    diff.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the differences (docs/decisions.md)"))
    add_run_options(diff)
    add_gate_parser(commands)
    bisecting = commands.add_parser("bisect", help="find the first JAX release whose verdict on one cell changes")
    bisecting.add_argument(
        "cell",
        metavar="CELL",
        help="case id with :PARAM or [PARAM] (numerics.debug_nans_vmap_miss:vmap), or a row ID; "
        "with --downstream SUITE, a pytest node id of that suite",
    )
    bisecting.add_argument("--good", required=True, metavar="VERSION", help="a release that behaves as wanted")
    bisecting.add_argument("--bad", required=True, metavar="VERSION", help="a release that does not")
    bisecting.add_argument(
        "--find-fix",
        action="store_true",
        help="find the first release where a documented known issue stops reproducing",
    )
    bisecting.add_argument(
        "--launch",
        choices=LAUNCHERS,
        default="fork",
        help="fork the cell from a server that imported jax (default), or spawn it",
    )
    bisecting.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="folder the tested cells are stored in, like run's (default results/)",
    )
    bisecting.add_argument("--attribute", action="store_true", help="then tell a jax change from a jaxlib change")
    bisecting.add_argument(
        "--jax-source",
        type=Path,
        metavar="GIT_DIR",
        help="then bisect the jax commits between "
        "the two builds in this jax checkout, each installed with --no-deps over a jaxlib it "
        "accepts",
    )
    bisecting.add_argument(
        "--issue", type=Path, metavar="PATH", help="also write a bug report ready to file (Markdown)"
    )
    bisecting.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the verdict"))
    add_common_options(bisecting)
    add_bisect_perf_options(bisecting)
    add_bisect_downstream_options(bisecting)


def add_gate_parser(commands: Any) -> None:
    """`gate`: two result sets given, or a baseline version and a candidate target to run."""
    gating = commands.add_parser("gate", help="fail when a candidate regresses from a baseline (exit 1)")
    for side in ("baseline", "candidate"):
        gating.add_argument(
            f"--{side}",
            action="append",
            type=Path,
            metavar="PATH",
            help=f"{side} result file or folder (repeat for more)",
        )
    gating.add_argument(
        "--from",
        dest="from_version",
        metavar="VERSION",
        help="run the suite on this JAX version as the baseline (with --to)",
    )
    gating.add_argument(
        "--to",
        dest="to_version",
        metavar="VERSION",
        help="run the suite on this JAX version as the candidate (with --from)",
    )
    for kind in BUILD_KINDS:
        gating.add_argument(f"--to-{kind.option}", metavar=kind.metavar, help=kind.gate_help)
    gating.add_argument(
        "--expectations",
        type=Path,
        metavar="FILE",
        help="TOML file of expected statuses that acknowledge known regressions",
    )
    gating.add_argument("--markdown", type=Path, metavar="PATH", help="also write the decision as Markdown")
    for flag, text in JUDGING_FLAGS.items():
        gating.add_argument(f"--{flag.replace('_', '-')}", action="store_true", help=text)
    gating.add_argument(
        "--today",
        type=day,
        default=None,
        metavar="YYYY-MM-DD",
        help="read the expectations' expiry dates on this day (default: today, UTC)",
    )
    add_run_options(gating)
    add_gate_perf_options(gating)
    add_gate_downstream_options(gating)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="jax-conformance", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jax-conformance {conformance.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    listing = commands.add_parser("list", help="show the cases, their rows and claims")
    listing.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    add_common_options(listing, index=False)
    listing.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the selected cases"))
    add_run_parser(commands)
    add_report_parser(commands)
    add_history_parser(commands)
    listed = commands.add_parser("matrix", help="print the JAX versions of a matrix (latest: read from the index)")
    listed.add_argument(
        "names",
        nargs="?",
        default=DEFAULT_MATRIX,
        metavar="NAMES",
        help=f"matrix names or .toml "
        f"paths and JAX versions, separated by spaces or commas (default: {DEFAULT_MATRIX!r})",
    )
    listed.add_argument(
        "--json",
        type=json_path,
        nargs="?",
        const=BARE_JSON,
        metavar="PATH",
        help=json_help("the versions") + " (without a value: deprecated, the old plain list)",
    )
    listed.add_argument(
        "--ci-jobs",
        type=int,
        metavar="RUNNERS",
        help="print the CI job plan as JSON for this many "
        "runners: the versions and shard of each job, within GitHub's limit of 256 jobs per matrix",
    )
    listed.add_argument(
        "--shards",
        type=int,
        default=2,
        metavar="N",
        help="with --ci-jobs: shards per version while they fit (default 2)",
    )
    listed.add_argument(
        "--ci-runners",
        metavar="KINDS",
        help="the CI plan for these runner kinds (ubuntu-24.04, "
        "ubuntu-24.04-arm, macos-14, windows-2022; separated by spaces or commas), keeping only the "
        "jobs with a cell that --stored does not answer on the runner's platform",
    )
    listed.add_argument(
        "--stored",
        type=Path,
        metavar="DIR",
        help="with --ci-runners: the restored result files of "
        "the last run; a cell whose reuse key is unchanged is answered and needs no job",
    )
    listed.add_argument("-k", dest="expression", metavar="EXPR", help="with --ci-runners: the cells the jobs select")
    add_common_options(listed, cases=False)
    add_decision_parsers(commands)
    pin = commands.add_parser("pin", help="refresh the hashed pinned requirement sets in matrix/pins/")
    pin.add_argument(
        "versions",
        nargs="*",
        metavar="VERSION",
        help=f"JAX versions or matrix names (`all`) to pin (default: every version of the {DEFAULT_MATRIX} matrix)",
    )
    add_common_options(pin, cases=False)
    add_upkeep_parsers(commands)
    add_api_parsers(commands)
    add_chapter_parser(commands)
    add_perf_parser(commands, add_common_options, DEFAULT_RESULTS)
    add_downstream_parser(commands, add_common_options, DEFAULT_RESULTS)
    add_upgrade_parser(commands)
    return with_help(configured(parser))  # no abbreviations, -v/-q, the team's defaults; grouped help, examples


def add_upgrade_parser(commands: Any) -> None:
    """`upgrade --from A --to B`: everything that changes from A to B, one list per tier (`decide.upgrade`)."""
    upgrade = commands.add_parser(
        "upgrade",
        help="everything that changes from one JAX release to another: "
        "behaviours, public names, performance, your own cases and downstream suites",
    )
    upgrade.add_argument("--from", dest="from_version", required=True, metavar="VERSION", help="the release used now")
    upgrade.add_argument("--to", dest="to_version", required=True, metavar="VERSION", help="the release to move to")
    upgrade.add_argument(
        "--scan",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="also list where this file or folder of your code uses a removed, deprecated or changed name (repeatable)",
    )
    upgrade.add_argument(
        "--perf-rounds",
        type=int,
        default=5,
        metavar="N",
        help="rounds each workload is sampled "
        "on each side, interleaved (default 5; stored samples reused; 0: no performance tier)",
    )
    upgrade.add_argument(
        "--markdown", type=Path, metavar="PATH", help="also write the review as Markdown (a pull request comment)"
    )
    upgrade.add_argument(
        "--json",
        type=json_path,
        metavar="PATH",
        help=json_help("the review (format jax-conformance-upgrade 1, docs/decisions.md#upgrade)"),
    )
    add_upgrade_downstream_options(upgrade)
    add_run_options(upgrade)


def add_upkeep_parsers(commands: Any) -> None:
    """`expectations prune` and `supported`: keeping a team's acknowledgements and version range honest."""
    expecting = commands.add_parser("expectations", help="maintain an expectations file")
    actions = expecting.add_subparsers(dest="expectations_command", metavar="ACTION", required=True)
    pruning = actions.add_parser(
        "prune",
        help="print, as a unified diff, the removal of every entry the stored "
        "results no longer need (--write applies it)",
    )
    pruning.add_argument("file", type=Path, metavar="FILE", help="the expectations file")
    pruning.add_argument("--write", action="store_true", help="apply the removal to FILE (atomically)")
    supporting = commands.add_parser(
        "supported",
        help="the PEP 440 range of stored JAX releases on which every "
        "selected cell conforms or is acknowledged, per platform",
    )
    supporting.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    add_common_options(supporting, index=False)
    supporting.add_argument(
        "--expectations", type=Path, metavar="FILE", help="expectations whose accepted statuses count as behaving"
    )
    supporting.add_argument(
        "--current", metavar="SPEC", help="the specifier in use now ('jax<0.10'): say whether its cap can be lifted"
    )
    supporting.add_argument(
        "--format",
        choices=("text", "constraints"),
        default="text",
        help="text (default), or constraints: one pip constraints line per platform",
    )
    supporting.add_argument(
        "--fixes-exclude",
        action="store_true",
        help="the old reading: a known issue that differs after the documented release (maybe "
        "fixed) excludes that release; by default it is allowed and named",
    )
    supporting.add_argument("--json", type=json_path, metavar="PATH", help=json_help("each platform's range"))
    for parser in (pruning, supporting):
        parser.add_argument(
            "--results",
            action="append",
            type=Path,
            metavar="DIR",
            help="result files or folders to read (repeatable; default results/)",
        )


def add_api_parsers(commands: Any) -> None:
    """`api census`, `api diff` and `api scan`: every public JAX name per release, and a team's code against them."""
    api = commands.add_parser("api", help="the public API of JAX releases: census, diff, and a scan of your code")
    actions = api.add_subparsers(dest="api_command", metavar="ACTION", required=True)
    census = actions.add_parser("census", help="take (or read from storage) the census of each target's public names")
    which = census.add_mutually_exclusive_group()
    which.add_argument("--matrix", metavar="NAME", help=MATRIX_HELP)
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX version; repeat for more")
    for kind in BUILD_KINDS:
        census.add_argument(f"--{kind.option}", action="append", default=[], metavar=kind.metavar, help=kind.run_help)
    diff = actions.add_parser(
        "diff",
        help="the names added, removed, deprecated, undeprecated, moved or with a new "
        "signature between two releases, each dated",
    )
    diff.add_argument("a", metavar="A", help="a JAX version, a census file (.json), a wheels folder or an interpreter")
    diff.add_argument("b", metavar="B", help="the same, for the newer side")
    diff.add_argument(
        "--matrix",
        metavar="NAME",
        help="also census this matrix's releases between A and B, to date "
        "each change to the first release that shows it (default: the stored censuses between them)",
    )
    diff.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="PREFIX",
        help="only names equal to PREFIX or below it (jax.numpy); repeatable",
    )
    diff.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the changes"))
    scan = actions.add_parser(
        "scan",
        help="the JAX names your code uses that --to removes, lacks or deprecates "
        "(exit 1 when one is removed or missing)",
    )
    scan.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="Python files or folders (nothing is imported)"
    )
    scan.add_argument(
        "--to",
        required=True,
        metavar="VERSION",
        help="the release to upgrade to (or a census file, wheels folder or interpreter)",
    )
    scan.add_argument(
        "--from",
        dest="from_version",
        metavar="VERSION",
        help="the release run today: also name the uses it does not have yet",
    )
    scan.add_argument(
        "--private",
        action="store_true",
        help="also judge the private names (jax._src...) the code uses, against a census of just those "
        "names taken in --to's environment (labelled private)",
    )
    scan.add_argument(
        "--format",
        choices=("text", "json", "github", "sarif"),
        default="text",
        help="text (default), github (workflow annotations) or sarif (2.1.0, for code scanning); json: "
        "deprecated, write --json -",
    )
    scan.add_argument("--json", type=json_path, metavar="PATH", help=json_help("the findings"))
    for parser in (census, diff, scan):
        parser.add_argument(
            "--results",
            type=Path,
            default=DEFAULT_RESULTS,
            metavar="DIR",
            help="results folder; censuses are stored in DIR/api/ (default results/)",
        )
        parser.add_argument("--rerun", action="store_true", help="take every census again, even one stored")
        add_common_options(parser, cases=False)


def add_chapter_parser(commands: Any) -> None:
    """`chapter`: a chapter's own code, block by block, on releases (docs/chapters.md)."""
    chapter = commands.add_parser(
        "chapter",
        help="run a chapter's own code (notebook, Markdown/MyST or plain text) "
        "block by block on each release, as written; store its blocks as cells",
    )
    chapter.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        nargs="?",
        help="the chapter: .ipynb, .md (Markdown or "
        "MyST), or plain text exported from a notebook (or --pages LIST --docs CHECKOUT)",
    )
    chapter.add_argument(
        "--pages",
        type=Path,
        metavar="LIST",
        help="run every page a list names (chapters/"
        "jax-docs.toml: path and commit of each) instead of FILE, from the checkout --docs names",
    )
    chapter.add_argument(
        "--docs",
        type=Path,
        metavar="CHECKOUT",
        help="with --pages: a local checkout of the pages' repository (jax-ml/jax) the pages are read from",
    )
    which = chapter.add_mutually_exclusive_group()
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX version; repeat for more")
    which.add_argument("--matrix", metavar="NAME", help=MATRIX_HELP)
    chapter.add_argument(
        "--blocks",
        action="store_true",
        help="only list the blocks found (line range, heading, first code line), to check the split; runs nothing",
    )
    chapter.add_argument(
        "--skip",
        type=Path,
        metavar="FILE",
        help="the skip list (default: <stem>.skip.toml beside the chapter, else in the project's chapters/ folder)",
    )
    chapter.add_argument(
        "--map",
        type=Path,
        metavar="FILE",
        help="the map file correcting a plain-text chapter's "
        "split (default: <stem>.map.toml beside the chapter, else in chapters/)",
    )
    chapter.add_argument(
        "--results",
        type=Path,
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="results folder the blocks are stored in, as cells (default results/)",
    )
    chapter.add_argument(
        "-o", "--report", type=Path, metavar="PATH", help="also render the HTML report of every result file in DIR"
    )
    chapter.add_argument(
        "--json",
        type=json_path,
        metavar="PATH",
        help=json_help("the blocks' statuses per release (docs/chapters.md)")
        + "; with --pages, a folder: one <chapter>.json per page",
    )
    chapter.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="each block's time limit (default 300)"
    )
    chapter.add_argument(
        "--rerun", action="store_true", help="run every release, even one whose stored results answer every block"
    )
    chapter.add_argument(
        "--bisect",
        metavar="BLOCK",
        help="find the first release between --good and --bad where "
        "this block (its id or hash, see --blocks) changes status or observation",
    )
    chapter.add_argument(
        "--with",
        dest="with_packages",
        action="append",
        default=[],
        metavar="PACKAGE",
        help="install PACKAGE too (what the page imports besides jax), in an environment of its own "
        "beside each release's; repeat for more",
    )
    chapter.add_argument("--good", metavar="VERSION", help="with --bisect: a release where the block behaves as wanted")
    chapter.add_argument("--bad", metavar="VERSION", help="with --bisect: a release where it does not")
    add_common_options(chapter, cases=False)
