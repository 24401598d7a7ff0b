"""The command line (`list run report matrix pin diff gate bisect`): the parser, one short function per command that
builds a request and prints its outcome, and the progress printer. The work lives below (`engine.matrix.run_targets`
for every `engine.targets` kind, `decide.sides`, `decide.bisect_session`, `report`, `results`), which never sees
parsed arguments. `main(argv)` returns the exit status; expected problems are one line on stderr and exit 2."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import conformance
from conformance.core.case import CaseDeclarationError
from conformance.ciplan import plan_json
from conformance.decide.bisect_session import BisectRequest, run_bisect, write_bisect_files
from conformance.decide.render import bisect_session_text, diff_text, gate_markdown, gate_text
from conformance.decide.sides import JUDGING_FLAGS, DiffRequest, GateRequest, run_diff, run_gate
from conformance.atomic import write_text_atomically
from conformance.engine import matrix
from conformance.engine.session import LAUNCHERS
from conformance.engine.shards import parse_shard
from conformance.engine.targets import BUILD_KINDS, Release, given_builds, releases
from conformance.envs.builder import EnvironmentBuilder
from conformance.envs.index import IndexOptions, sort_versions
from conformance.envs.matrix import DEFAULT_MATRIX, expand_words, matrix_versions
from conformance.envs.pins import compile_pins
from conformance.errors import ConformanceError
from conformance.interrupts import interrupted_status, sigterm_interrupts
from conformance.report.progress import conflict_line, event_lines
from conformance.report.render import render_results
from conformance.report.terminal import cases_listing, run_heading, run_summary
from conformance.results.load import ResultsError
from conformance.results.outputs import check_outputs

DEFAULT_RESULTS = Path("results")
# Not taken from __doc__, which is None under PYTHONOPTIMIZE=2.
DESCRIPTION = "Documented JAX behaviours, probed in fresh processes across JAX versions."
DEFAULT_REPORT = Path("reports/index.html")


def add_common_options(parser: argparse.ArgumentParser, *, cases: bool = True, index: bool = True) -> None:
    """`--cases DIR` (a team's own case folder) and where packages come from (`--index-url` and the rest, for uv)."""
    if cases:
        parser.add_argument("--cases", action="append", default=[], metavar="DIR", help="also load the case modules "
                            "of this folder (a package named after the folder; its ids are namespaced "
                            "<folder>/<module>.<probe>); repeat for more")
    if index:
        parser.add_argument("--index-url", metavar="URL", default="", help="the simple index to install from and "
                            "read releases from (default: UV_INDEX_URL, else PyPI)")
        parser.add_argument("--extra-index-url", action="append", default=[], metavar="URL",
                            help="another simple index, also read (repeatable)")
        parser.add_argument("--find-links", action="append", default=[], metavar="DIR_OR_URL",
                            help="a folder or page of distribution files for uv (repeatable)")
        parser.add_argument("--pre", action="store_true", help="allow pre-releases and dev builds when resolving")


def make_builder(args: argparse.Namespace) -> EnvironmentBuilder:
    """The environment builder, with the command's index options (uv's defaults when none is given)."""
    options = IndexOptions(args.index_url, tuple(args.extra_index_url), tuple(args.find_links), args.pre)
    return EnvironmentBuilder(options=options) if options.given else EnvironmentBuilder()


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of a run: selection, workers, retries, launcher, reuse and the results folder."""
    parser.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    parser.add_argument("-j", dest="workers", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="cells run at once, each in its own process (default: the number of cores)")
    parser.add_argument("--retries", type=int, default=1, metavar="N",
                        help="rerun a cell that ends in error, crash or timeout up to N times (default 1)")
    parser.add_argument("--retry-differs", action="store_true", help="also rerun cells that differ")
    parser.add_argument("--launch", choices=LAUNCHERS, default="fork",
                        help="fork cells from a per-version server that imported jax (default), or spawn each")
    parser.add_argument("--rerun", action="store_true",
                        help="run every selected cell, even those whose stored result is still valid")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                        help="folder for result files (default results/)")
    add_common_options(parser)


def settings(args: argparse.Namespace, shard: Any = None) -> matrix.RunSettings:
    """The run settings the command was given."""
    return matrix.RunSettings(args.results, args.expression, tuple(args.cases), shard, getattr(
        args, "shard_durations", None), args.workers, args.retries, args.retry_differs, args.launch, args.rerun)


def add_run_parser(commands: Any) -> None:
    """`run`: the targets (a matrix, versions, given builds), the run options, the shard and the report."""
    run = commands.add_parser("run", help="run the cases across JAX versions and write results and the report")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--matrix", metavar="NAME", help=f"a matrix name or .toml path (default {DEFAULT_MATRIX})")
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX version; repeat for more")
    for kind in BUILD_KINDS:
        run.add_argument(f"--{kind.option}", action="append", default=[], metavar=kind.metavar, help=kind.run_help)
    add_run_options(run)
    run.add_argument("--shard", metavar="K/N", help="run only shard K of N of the selected cells, balanced by "
                     "recorded durations; results go to <jax>-<platform>-shardKofN.json")
    run.add_argument("--shard-durations", type=Path, metavar="PATH",
                     help="result files whose recorded durations balance the shards (default matrix/baseline/); "
                          "every shard of a run must read the same ones")
    run.add_argument("-o", "--report", type=Path, default=None, metavar="PATH",
                     help="HTML report to write from every result file in DIR (default: reports/index.html for "
                          "the default results/ folder, DIR/report.html for another folder)")


def add_decision_parsers(commands: Any) -> None:
    """`diff`, `gate` and `bisect`."""
    diff = commands.add_parser("diff", help="list the cells whose status or observation differ between two result sets")
    diff.add_argument("baseline", type=Path, metavar="A", help="baseline result file, a folder of them, or a JAX "
                      "version (its stored results; cells not stored yet are run)")
    diff.add_argument("candidate", type=Path, metavar="B", help="candidate result file, folder or JAX version")
    add_run_options(diff)
    add_gate_parser(commands)
    bisecting = commands.add_parser("bisect", help="find the first JAX release whose verdict on one cell changes")
    bisecting.add_argument("cell", metavar="CELL",
                           help="case id with :PARAM or [PARAM] (numerics.debug_nans_vmap_miss:vmap), or a row ID")
    bisecting.add_argument("--good", required=True, metavar="VERSION", help="a release that behaves as wanted")
    bisecting.add_argument("--bad", required=True, metavar="VERSION", help="a release that does not")
    bisecting.add_argument("--find-fix", action="store_true",
                           help="find the first release where a documented known issue stops reproducing")
    bisecting.add_argument("--launch", choices=LAUNCHERS, default="fork",
                           help="fork the cell from a server that imported jax (default), or spawn it")
    bisecting.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                           help="folder the tested cells are stored in, like run's (default results/)")
    bisecting.add_argument("--attribute", action="store_true", help="then tell a jax change from a jaxlib change")
    bisecting.add_argument("--jax-source", type=Path, metavar="GIT_DIR", help="then bisect the jax commits between "
                           "the two builds in this jax checkout, each installed with --no-deps over a jaxlib it accepts")
    bisecting.add_argument("--issue", type=Path, metavar="PATH", help="also write a bug report ready to file (Markdown)")
    bisecting.add_argument("--json", type=Path, metavar="PATH", help="also write the verdict as JSON")
    add_common_options(bisecting)


def add_gate_parser(commands: Any) -> None:
    """`gate`: two result sets given, or a baseline version and a candidate target to run."""
    gating = commands.add_parser("gate", help="fail when a candidate regresses from a baseline (exit 1)")
    for side in ("baseline", "candidate"):
        gating.add_argument(f"--{side}", action="append", type=Path, metavar="PATH",
                            help=f"{side} result file or folder (repeat for more)")
    gating.add_argument("--from", dest="from_version", metavar="VERSION",
                        help="run the suite on this JAX version as the baseline (with --to)")
    gating.add_argument("--to", dest="to_version", metavar="VERSION",
                        help="run the suite on this JAX version as the candidate (with --from)")
    for kind in BUILD_KINDS:
        gating.add_argument(f"--to-{kind.option}", metavar=kind.metavar, help=kind.gate_help)
    gating.add_argument("--expectations", type=Path, metavar="FILE",
                        help="TOML file of expected statuses that acknowledge known regressions")
    gating.add_argument("--markdown", type=Path, metavar="PATH", help="also write the decision as Markdown")
    for flag, text in JUDGING_FLAGS.items():
        gating.add_argument(f"--{flag.replace('_', '-')}", action="store_true", help=text)
    add_run_options(gating)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="jax-conformance", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jax-conformance {conformance.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    listing = commands.add_parser("list", help="show the cases, their rows and claims")
    listing.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    add_common_options(listing, index=False)
    add_run_parser(commands)
    report = commands.add_parser("report", help="render result files into the HTML report")
    report.add_argument("results", nargs="+", type=Path, metavar="RESULTS", help="result files, or folders of them")
    report.add_argument("-o", "--output", type=Path, default=DEFAULT_REPORT, metavar="PATH")
    report.add_argument("--markdown", type=Path, metavar="PATH", help="also write the Markdown summary")
    report.add_argument("--junit", type=Path, metavar="PATH", help="also write JUnit XML, one test case per cell")
    listed = commands.add_parser("matrix", help="print the JAX versions of a matrix (latest: read from the index)")
    listed.add_argument("names", nargs="?", default=DEFAULT_MATRIX, metavar="NAMES", help=f"matrix names or .toml "
                        f"paths and JAX versions, separated by spaces or commas (default {DEFAULT_MATRIX})")
    listed.add_argument("--json", action="store_true", help="print a JSON list (for a CI job matrix)")
    listed.add_argument("--ci-jobs", type=int, metavar="RUNNERS", help="print the CI job plan as JSON for this many "
                        "runners: the versions and shard of each job, within GitHub's limit of 256 jobs per matrix")
    listed.add_argument("--shards", type=int, default=2, metavar="N",
                        help="with --ci-jobs: shards per version while they fit (default 2)")
    add_common_options(listed, cases=False)
    add_decision_parsers(commands)
    pin = commands.add_parser("pin", help="refresh the hashed pinned requirement sets in matrix/pins/")
    pin.add_argument("versions", nargs="*", metavar="VERSION", help=f"JAX versions or matrix names (`all`) to pin "
                     f"(default: every version of the {DEFAULT_MATRIX} matrix)")
    add_common_options(pin, cases=False)
    return parser


def _err(text: str) -> None:
    print(f"jax-conformance: {text}", file=sys.stderr, flush=True)


class Progress:
    """Prints the events of a run and of a decision's session as they come, and keeps the runs that finished."""

    def __init__(self, gap: str = "") -> None:
        self.gap, self.finished = gap, []

    def __call__(self, event: Any) -> None:
        if isinstance(event, matrix.VersionDone):
            self.finished.append(event.run)
        for stream, text in event_lines(event, self.gap):
            print(text, file=sys.stderr if stream == "stderr" else sys.stdout, flush=True)


def command_list(args: argparse.Namespace) -> int:
    """Print the selected cases."""
    cells = matrix.select_run(matrix.case_folders(args.cases), args.expression).selected
    print(cases_listing(cells))
    print(f"\n{len(cells)} cells in {len({c.case.id for c in cells})} cases")
    return 0


def command_run(args: argparse.Namespace) -> int:
    """Prepare every target, run each, summarise, and write the report."""
    started, builder = time.monotonic(), make_builder(args)
    builds = given_builds({kind.option: getattr(args, kind.option) for kind in BUILD_KINDS})
    versions = list(dict.fromkeys(args.jax)) if args.jax else [] if builds and not args.matrix else \
        matrix_versions(args.matrix or DEFAULT_MATRIX, builder.index)
    shard = parse_shard(args.shard) if args.shard else None
    selection, request = matrix.plan_run(settings(args, shard), versions)
    if shard and not selection.chosen:
        print(f"jax-conformance: shard {shard.label} holds none of the {len(selection.selected)} selected cells; "
              f"nothing to run")
        return 0
    report_path = args.report or (DEFAULT_REPORT if args.results == DEFAULT_RESULTS else args.results / "report.html")
    check_outputs([("-o", report_path)], results=args.results)
    progress, targets = Progress(gap="\n"), releases(versions) + builds
    prepared = matrix.prepare_targets(builder, targets, progress)  # bad input: one line, before anything is stored
    print(run_heading(conformance.__version__, len(selection.chosen), len(selection.selected),
                      shard.label if shard else "", len(versions), len(builds)), flush=True)
    try:
        outcome = matrix.run_targets(request, builder, targets, progress, cells=selection.chosen, prepared=prepared)
    except KeyboardInterrupt:
        print(f"\ninterrupted; kept {len(progress.finished)} finished result file(s) in {request.results}/",
              file=sys.stderr)
        return interrupted_status()
    failed = [f"jax {name}" for name in outcome.failed]
    if progress.finished:
        print("\n" + run_summary([vars(done) for done in progress.finished]))
        shown = min((d.path.parent for d in progress.finished), key=lambda f: f != request.results)  # a pair: builds/
        report, problems = render_report(shown, report_path, cases=selection.declared if args.cases else None)
        failed += [f"unreadable result file {p}" for p in problems]
        print(f"\nreport: {report}  (from every result file in {shown}/)")
    print(f"wall time: {time.monotonic() - started:.1f}s")
    if failed:
        _err(f"error: no results for {', '.join(failed)} (see above)")
    return 1 if failed else 0


def render_report(paths: Any, out: Path, markdown: Path | None = None,
                  junit: Path | None = None, cases: list | None = None) -> tuple[Path, list[str]]:
    """Render every readable result file, naming each unreadable one and each conflict; the report and problems."""
    done = render_results(paths, out, markdown, junit, cases, EnvironmentBuilder().index.cached_releases("jax"))
    for problem in done.problems:
        _err(f"skipped unreadable result file: {problem}")
    for conflict in done.conflicts:
        print(conflict_line(conflict), file=sys.stderr)
    return done.path, done.problems


def command_report(args: argparse.Namespace) -> int:
    """Render every readable result file into the HTML report; name each unreadable one and exit 1."""
    check_outputs([("-o", args.output), ("--markdown", args.markdown), ("--junit", args.junit)],
                  inputs=list(args.results))
    out, problems = render_report(args.results, args.output, args.markdown, args.junit)
    print(f"report: {out}" + (f"\nmarkdown: {args.markdown}" if args.markdown else "")
          + (f"\njunit: {args.junit}" if args.junit else ""))
    return 1 if problems else 0


def command_matrix(args: argparse.Namespace) -> int:
    """Print the JAX versions of matrices and versions (oldest first, each once), as lines, JSON or a CI plan."""
    words = args.names.replace(",", " ").split() or [DEFAULT_MATRIX]
    versions = sort_versions(expand_words(words, make_builder(args).index, matrix_versions))
    plan = plan_json(versions, args.ci_jobs, args.shards) if args.ci_jobs is not None else None
    print(json.dumps(plan) if plan else json.dumps(versions) if args.json else "\n".join(versions))
    return 0


def command_pin(args: argparse.Namespace) -> int:
    """Refresh the hashed pins of the given versions (default: the default matrix) with the index options given."""
    builder = make_builder(args)
    for version in expand_words(args.versions or [DEFAULT_MATRIX], builder.index, matrix_versions):
        print(f"pinned jax {version}: {compile_pins(version, builder.index, uv_options=builder.options.uv_args())}")
    return 0


def command_diff(args: argparse.Namespace) -> int:
    """Print the cells whose status or observation differ between two result sets (or versions, run if need be)."""
    found = run_diff(DiffRequest(args.baseline, args.candidate, settings(args)), lambda: make_builder(args), Progress())
    if found.mismatch:
        print(f"note: the two sets differ in version: {found.mismatch}")
    print(diff_text(found.diff))
    return 0


def command_gate(args: argparse.Namespace) -> int:
    """Judge the candidate against the baseline: exit 0 without unacknowledged regressions, 1 with, 2 on bad input."""
    candidates = ([Release(args.to_version)] if args.to_version else []) + given_builds(
        {kind.option: [v] for kind in BUILD_KINDS if (v := getattr(args, f"to_{kind.option}"))})
    flags = {flag: getattr(args, flag) for flag in JUDGING_FLAGS}
    request = GateRequest(settings(args), tuple(args.baseline or ()), tuple(args.candidate or ()), args.from_version,
                          tuple(candidates), args.expectations, args.markdown, **flags)
    decided = run_gate(request, lambda: make_builder(args), Progress())
    print(gate_text(decided.outcome, decided.title))
    if args.markdown is not None:
        write_text_atomically(args.markdown, gate_markdown(decided.outcome, decided.title))
        print(f"markdown: {args.markdown}")
    return decided.exit_code


def command_bisect(args: argparse.Namespace) -> int:
    """Bisect the releases between --good and --bad for the first whose verdict on CELL changes."""
    request = BisectRequest(args.cell, args.good, args.bad, args.find_fix, args.launch, args.results, tuple(args.cases),
                            args.attribute, args.jax_source)
    found = run_bisect(request, make_builder(args), Progress())  # notices, dropped cells and each step, as they come
    print(bisect_session_text(found))
    for line in write_bisect_files(found, args.issue, args.json, conformance.__version__):
        print(line)
    return found.exit_code


LONG_COMMANDS = ("run", "gate", "bisect")
COMMANDS = {"list": command_list, "run": command_run, "report": command_report, "matrix": command_matrix,
            "pin": command_pin, "diff": command_diff, "gate": command_gate, "bisect": command_bisect}


def main(argv: list[str] | None = None) -> int:
    """Entry point of `jax-conformance` and `python -m conformance`."""
    for stream in [s for s in (sys.stdout, sys.stderr) if hasattr(s, "reconfigure")]:  # escapes, never a crash
        stream.reconfigure(errors="backslashreplace")  # on a terminal or pipe that cannot encode a case's text
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:  # a long command (run, gate --from/--to, bisect) ends on SIGTERM as on Ctrl-C, its temporaries removed
        with sigterm_interrupts(args.command in LONG_COMMANDS):
            return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("\njax-conformance: interrupted; result files already written are kept", file=sys.stderr)
        return interrupted_status()
    except (ConformanceError, ResultsError, CaseDeclarationError) as exc:
        _err(f"error: {exc}")
        return 2
    except OSError as exc:  # a folder or file we were told to use cannot be written
        _err(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
        return 2

if __name__ == "__main__":
    sys.exit(main())
