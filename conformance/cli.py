"""The command line: `jax-conformance list | run | report | pin | diff | gate | bisect`.

It parses arguments, builds a request, calls one function per command and prints; the work
lives below it (`engine.matrix` runs a matrix, `results.store` stores it, `report.*` renders,
`decide.*` judges). Only this module prints. `main(argv)` returns the exit status, so it can
be tested without a shell; expected problems become one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from packaging.version import Version

import conformance
from conformance.atomic import write_text_atomically
from conformance.core.case import CaseDeclarationError
from conformance.ciplan import plan_jobs
from conformance.decide.bisect import Memo, bisect, bug_reproduces, releases_between, same_bug_state, same_observation
from conformance.decide.cellref import resolve_cell
from conformance.decide.diff import diff_sets, result_set, version_mismatch
from conformance.decide.expectations import ExpectationsFile, day, load_expectations_file, utc_today
from conformance.decide.prune import prune
from conformance.decide.supported import constraints, parse_current, range_text, supported_ranges
from conformance.decide.gate import gate
from conformance.decide.render import bisect_text, diff_text, gate_markdown, gate_text, observation_line, terminal_safe
from conformance.decide.runs import CellOracle
from conformance.engine import matrix
from conformance.engine.folders import case_folders
from conformance.engine.session import LAUNCHERS
from conformance.engine.shards import Shard, parse_shard
from conformance.envs.builder import EnvironmentBuilder, JaxEnvironment
from conformance.envs.index import IndexOptions, sort_versions
from conformance.envs.matrix import DEFAULT_MATRIX, matrix_versions
from conformance.envs.pins import compile_pins
from conformance.errors import ConformanceError
from conformance.report.html import write_report
from conformance.report.terminal import cases_listing, run_summary
from conformance.results.load import ResultsError, load_results, read_results_tolerantly
from conformance.results.outputs import check_outputs
from conformance.results.merge import merge_files
from conformance.results.store import ResultStore
from conformance.results.schema import is_version

DEFAULT_RESULTS = Path("results")
# Not taken from __doc__, which is None under PYTHONOPTIMIZE=2.
DESCRIPTION = "Documented JAX behaviours, probed in fresh processes across JAX versions."
DEFAULT_REPORT = Path("reports/index.html")


def add_cases_option(parser: argparse.ArgumentParser) -> None:
    """`--cases DIR`, repeatable: a team's own folder of case modules."""
    parser.add_argument("--cases", action="append", default=[], metavar="DIR",
                        help="also load the case modules of this folder (a package named after the folder; "
                             "its ids are namespaced <folder>/<module>.<probe>); repeat for more")


def add_index_options(parser: argparse.ArgumentParser) -> None:
    """Where packages come from, passed to uv as they are: `--index-url`, `--extra-index-url`, `--find-links`,
    `--pre` (uv's own environment variables, UV_INDEX_URL and the rest, keep working without them)."""
    parser.add_argument("--index-url", metavar="URL", default="",
                        help="the simple index to install from and read releases from (default: UV_INDEX_URL, "
                             "else PyPI)")
    parser.add_argument("--extra-index-url", action="append", default=[], metavar="URL",
                        help="another simple index, also read (repeatable)")
    parser.add_argument("--find-links", action="append", default=[], metavar="DIR_OR_URL",
                        help="a folder or page of distribution files for uv (repeatable)")
    parser.add_argument("--pre", action="store_true", help="allow pre-releases and dev builds when resolving")


def index_options(args: argparse.Namespace) -> IndexOptions:
    """The index options given on the command line."""
    return IndexOptions(getattr(args, "index_url", "") or "", tuple(getattr(args, "extra_index_url", None) or ()),
                        tuple(getattr(args, "find_links", None) or ()), bool(getattr(args, "pre", False)))


def make_builder(args: argparse.Namespace) -> EnvironmentBuilder:
    """The environment builder, with the command's index options (uv's defaults when none is given)."""
    options = index_options(args)
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
    add_cases_option(parser)
    add_index_options(parser)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="jax-conformance", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jax-conformance {conformance.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    listing = commands.add_parser("list", help="show the cases, their rows and claims")
    listing.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    add_cases_option(listing)

    run = commands.add_parser("run", help="run the cases across JAX versions and write results and the report")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--matrix", metavar="NAME", help=f"a matrix name or .toml path (default {DEFAULT_MATRIX})")
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX version; repeat for more")
    run.add_argument("--python", action="append", default=[], metavar="PATH",
                     help="an existing interpreter with jax installed: nothing is built, its jax, jaxlib and "
                          "platform are read from it (repeatable; with --jax or --matrix, those run too)")
    run.add_argument("--wheels", action="append", default=[], metavar="DIR",
                     help="a folder of jax and/or jaxlib wheel files: an environment is built from them (the rest "
                          "from the index) and cached under their sha256 (repeatable)")
    add_run_options(run)
    run.add_argument("--future", action="store_true",
                     help="run each probe with JAX's registered deprecations accelerated, deprecated module attributes "
                          "removed and deprecation warnings as errors; stored as the target <version>+future")
    run.add_argument("--shard", metavar="K/N",
                     help="run only shard K of N of the selected cells, balanced by recorded durations; "
                          "results go to <jax>-<platform>-shardKofN.json")
    run.add_argument("--shard-durations", type=Path, metavar="PATH",
                     help="result files whose recorded durations balance the shards (default matrix/baseline/); "
                          "every shard of a run must read the same ones")
    run.add_argument("-o", "--report", type=Path, default=None, metavar="PATH",
                     help="HTML report to write from every result file in DIR (default: reports/index.html for "
                          "the default results/ folder, DIR/report.html for another folder)")

    report = commands.add_parser("report", help="render result files into the HTML report")
    report.add_argument("results", nargs="+", type=Path, metavar="RESULTS",
                        help="result files, or folders of them")
    report.add_argument("-o", "--output", type=Path, default=DEFAULT_REPORT, metavar="PATH")
    report.add_argument("--markdown", type=Path, metavar="PATH", help="also write the Markdown summary")
    report.add_argument("--junit", type=Path, metavar="PATH", help="also write JUnit XML, one test case per cell")

    matrix = commands.add_parser("matrix", help="print the JAX versions of a matrix (latest: read from the index)")
    matrix.add_argument("names", nargs="?", default=DEFAULT_MATRIX, metavar="NAMES",
                        help=f"matrix names or .toml paths and JAX versions, separated by spaces or commas "
                             f"(default {DEFAULT_MATRIX})")
    matrix.add_argument("--json", action="store_true", help="print a JSON list (for a CI job matrix)")
    matrix.add_argument("--ci-jobs", type=int, metavar="RUNNERS",
                        help="print the CI job plan as JSON for this many runners: the versions and shard of each "
                             "job, within GitHub's limit of 256 jobs per matrix")
    matrix.add_argument("--shards", type=int, default=2, metavar="N",
                        help="with --ci-jobs: shards per version while they fit (default 2)")
    add_index_options(matrix)

    diff = commands.add_parser("diff", help="list the cells whose status or observation differ between two result sets")
    diff.add_argument("baseline", type=Path, metavar="A",
                      help="baseline result file, a folder of them, or a JAX version (its stored results; cells "
                           "not stored yet are run)")
    diff.add_argument("candidate", type=Path, metavar="B", help="candidate result file, folder or JAX version")
    add_run_options(diff)

    gating = commands.add_parser("gate", help="fail when a candidate regresses from a baseline (exit 1)")
    gating.add_argument("--baseline", action="append", type=Path, metavar="PATH",
                        help="baseline result file or folder (repeat for more)")
    gating.add_argument("--candidate", action="append", type=Path, metavar="PATH",
                        help="candidate result file or folder (repeat for more)")
    gating.add_argument("--from", dest="from_version", metavar="VERSION",
                        help="run the suite on this JAX version as the baseline (with --to)")
    gating.add_argument("--to", dest="to_version", metavar="VERSION",
                        help="run the suite on this JAX version as the candidate (with --from)")
    gating.add_argument("--to-python", metavar="PATH",
                        help="run the suite on this existing interpreter's jax as the candidate (with --from)")
    gating.add_argument("--to-wheels", metavar="DIR",
                        help="build an environment from this folder's jax/jaxlib wheels and run the suite on it as "
                             "the candidate (with --from)")
    gating.add_argument("--expectations", type=Path, metavar="FILE",
                        help="TOML file of expected statuses that acknowledge known regressions")
    gating.add_argument("--markdown", type=Path, metavar="PATH", help="also write the decision as Markdown")
    gating.add_argument("--newest", action="store_true",
                        help="when the candidate holds several JAX versions of a platform (a results folder), gate "
                             "the newest of each against the baseline")
    gating.add_argument("--baseline-platforms", action="store_true",
                        help="gate only the platforms the baseline holds; the candidate's others are listed as not "
                             "gated (by default a platform on one side only fails the gate)")
    gating.add_argument("--allow-missing", action="store_true",
                        help="accept baseline cells the candidate lacks and platforms run on one side only "
                             "(listed, not failing); by default they fail the gate")
    gating.add_argument("--fail-on-printed", action="store_true",
                        help="fail on a change of printed output alone (wording, reprs, counts the chapter only "
                             "prints); by default such changes are reported, not failing")
    gating.add_argument("--allow-version-mismatch", action="store_true",
                        help="compare result sets written by different suite or schema versions")
    gating.add_argument("--today", type=day, default=None, metavar="YYYY-MM-DD",
                        help="read the expectations' expiry dates on this day (default: today, UTC)")
    add_run_options(gating)

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
    add_cases_option(bisecting)
    add_index_options(bisecting)

    expecting = commands.add_parser("expectations", help="maintain an expectations file")
    expecting_commands = expecting.add_subparsers(dest="expectations_command", metavar="ACTION", required=True)
    pruning = expecting_commands.add_parser("prune", help="print, as a unified diff, the removal of every entry the "
                                                          "stored results no longer need (--write applies it)")
    pruning.add_argument("file", type=Path, metavar="FILE", help="the expectations file")
    pruning.add_argument("--results", action="append", type=Path, metavar="DIR",
                         help="result files or folders to read (repeatable; default results/)")
    pruning.add_argument("--write", action="store_true", help="apply the removal to FILE (atomically)")

    supporting = commands.add_parser("supported", help="the PEP 440 range of stored JAX releases on which every "
                                                       "selected cell conforms or is acknowledged, per platform")
    supporting.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    add_cases_option(supporting)
    supporting.add_argument("--results", action="append", type=Path, metavar="DIR",
                            help="result files or folders to read (repeatable; default results/)")
    supporting.add_argument("--expectations", type=Path, metavar="FILE",
                            help="expectations whose accepted statuses count as behaving")
    supporting.add_argument("--current", metavar="SPEC",
                            help="the specifier in use now ('jax<0.10'): say whether its cap can be lifted")
    supporting.add_argument("--format", choices=("text", "constraints"), default="text",
                            help="text (default), or constraints: one pip constraints line per platform")

    pin = commands.add_parser("pin", help="refresh the hashed pinned requirement sets in matrix/pins/")
    pin.add_argument("versions", nargs="*", metavar="VERSION",
                     help=f"JAX versions or matrix names (`all`) to pin (default: every version of the "
                          f"{DEFAULT_MATRIX} matrix)")
    add_index_options(pin)
    return parser


def command_list(args: argparse.Namespace) -> int:
    """Print the selected cases."""
    cells = matrix.select_run(case_folders(args.cases), args.expression).selected
    print(cases_listing(cells))
    print(f"\n{len(cells)} cells in {len({c.case.id for c in cells})} cases")
    return 0


def run_request(args: argparse.Namespace, versions: list[str], selection: matrix.Selection,
                shard: Shard | None = None) -> matrix.RunRequest:
    """The matrix run that `run` or `gate --from/--to` asks for, checked."""
    folders = case_folders(args.cases)
    request = matrix.RunRequest(
        versions=tuple(versions), results=args.results, cell_ids=selection.cell_ids, expression=args.expression,
        sources=tuple(matrix.run_sources(selection.chosen, folders)), case_folders=tuple(folders), shard=shard,
        shard_durations=getattr(args, "shard_durations", None), workers=args.workers, retries=args.retries,
        retry_differs=args.retry_differs, launcher=args.launch, rerun=args.rerun,
        future=getattr(args, "future", False))
    request.check()
    return request


class Progress:
    """Prints a matrix run's events as they come, and keeps the versions that finished."""

    def __init__(self, gap: str = "") -> None:
        self.gap, self.finished = gap, []

    def __call__(self, event: matrix.Event) -> None:
        if isinstance(event, matrix.Notice):
            print(f"jax-conformance: {event.text}", file=sys.stderr, flush=True)
        elif isinstance(event, matrix.AnsweredFromStorage):
            print(f"{self.gap}jax {event.version}: all {event.cells} selected cells answered by stored results "
                  f"({event.path}); nothing built or run", flush=True)
        elif isinstance(event, matrix.EnvironmentReady):
            what = {"python": "an existing interpreter (nothing built), described",
                    "wheels": f"environment from wheel files {'built' if event.built_now else 'reused'}"}.get(
                event.origin, f"environment {'built' if event.built_now else 'reused'}")
            print(f"{self.gap}jax {event.version}: Python {event.python}, {what} in {event.seconds:.1f}s", flush=True)
        elif isinstance(event, matrix.CellsDropped):
            dropped = event.cell_ids
            print(f"jax {event.version}: dropped {len(dropped)} stored cell(s) of cases this checkout no longer "
                  f"declares: {', '.join(dropped[:3])}{' …' if len(dropped) > 3 else ''}")
        elif isinstance(event, matrix.VersionDone):
            done = event.run
            self.finished.append(done)
            print(f"  {done.cells} cells ({done.ran} ran, {done.reused} reused) in {done.wall_s:.1f}s; "
                  f"wrote {done.path}", flush=True)
        elif isinstance(event, matrix.VersionFailed):
            print(f"jax-conformance: error: {event.error}", file=sys.stderr, flush=True)


terminated = threading.Event()


def _interrupt(signum: int, frame: Any) -> None:
    terminated.set()
    raise KeyboardInterrupt


def command_run(args: argparse.Namespace) -> int:
    """Prepare environments, run every version, summarise, and write the report."""
    started = time.monotonic()
    builder = make_builder(args)
    targets = [("python", p) for p in args.python] + [("wheels", w) for w in args.wheels]
    if args.jax:
        versions = list(dict.fromkeys(args.jax))
    elif targets and not args.matrix:
        versions = []
    else:
        versions = matrix_versions(args.matrix or DEFAULT_MATRIX, builder.index)
    shard = parse_shard(args.shard) if args.shard else None
    selection = matrix.select_run(case_folders(args.cases), args.expression, shard, args.shard_durations)
    if shard and not selection.chosen:
        print(f"jax-conformance: shard {shard.label} holds none of the {len(selection.selected)} selected cells; "
              f"nothing to run")
        return 0
    request = run_request(args, versions, selection, shard)
    report_path = args.report or (DEFAULT_REPORT if args.results == DEFAULT_RESULTS else args.results / "report.html")
    check_outputs([("-o", report_path)], results=args.results)
    matrix.check_interpreters(builder, versions)  # fail before any long work: unknown versions, no fitting Python
    prepared = prepare_targets(builder, targets)  # bad --python/--wheels: one line, before anything is stored
    sharded = f" (shard {shard.label} of {len(selection.selected)} selected)" if shard else ""
    targets_text = " + ".join(([f"{len(versions)} JAX versions"] if versions or not prepared else [])
                              + ([f"{len(prepared)} given build(s)"] if prepared else []))
    print(f"jax-conformance {conformance.__version__}: {len(selection.chosen)} cells{sharded} x {targets_text}",
          flush=True)
    progress = Progress(gap="\n")
    try:
        failed = [f"jax {v}" for v in matrix.run_matrix(request, builder, progress, cells=selection.chosen).failed]
        failed += run_prepared(request, prepared, progress)
    except KeyboardInterrupt:
        print(f"\ninterrupted; kept {len(progress.finished)} finished result file(s) in {request.results}/",
              file=sys.stderr)
        return 143 if terminated.is_set() else 130
    if progress.finished:
        print("\n" + run_summary([vars(done) for done in progress.finished]))
        report, problems = render_report(request.results, report_path,
                                         cases=selection.declared if args.cases else None)
        failed += [f"unreadable result file {p}" for p in problems]
        print(f"\nreport: {report}  (from every result file in {request.results}/)")
    print(f"wall time: {time.monotonic() - started:.1f}s")
    if failed:
        print(f"jax-conformance: error: no results for {', '.join(failed)} (see above)", file=sys.stderr)
        return 1
    return 0


def prepare_targets(builder: EnvironmentBuilder, targets: list[tuple[str, str]]) -> dict[tuple[str, str], JaxEnvironment]:
    """The environment of each `--python PATH` (described, nothing built) and `--wheels DIR` (built or reused), in
    order; bad input raises one line before any result is stored."""
    prepared = {}
    for kind, where in dict.fromkeys(targets):
        prepared[(kind, where)] = builder.prepare_python(where) if kind == "python" else builder.prepare_wheels(
            Path(where))
        for text in matrix.take_notices(builder):
            print(f"jax-conformance: {text}", file=sys.stderr)
    return prepared


def run_prepared(request: matrix.RunRequest, prepared: dict[tuple[str, str], JaxEnvironment],
                 progress: "Progress") -> list[str]:
    """Run the request's cells on each prepared environment; the ones that failed, named (each failure said)."""
    _, failed = matrix.run_builds(request, prepared, progress)
    return [f"jax {prepared[target].version} (--{target[0]} {target[1]})" for target in failed]


def render_report(paths: Any, out: Path, markdown: Path | None = None,
                  junit: Path | None = None, cases: list | None = None) -> tuple[Path, list[str]]:
    """Render every readable result file; name each unreadable one, and each conflicting cell, on stderr;
    return the report and the problems. `cases` give rows their sections (default: the built-in cases)."""
    loaded = read_results_tolerantly(paths)
    if not loaded.files:
        more = f" (and {len(loaded.problems) - 1} more unreadable)" if len(loaded.problems) > 1 else ""
        raise ConformanceError(f"{loaded.problems[0]}{more}" if loaded.problems else "no result files given")
    for problem in loaded.problems:
        print(f"jax-conformance: skipped unreadable result file: {problem}", file=sys.stderr)
    report_conflicts([c for run in merge_files(loaded.files) for c in run.conflicts])
    releases = EnvironmentBuilder().index.cached_releases("jax")  # offline: the report names ranges instead
    return write_report(loaded.files, out, markdown_path=markdown, junit_path=junit, cases=cases,
                        releases=releases), loaded.problems


def report_conflicts(conflicts: list) -> int:
    """Name each conflict of merged result sets on stderr (the entry finished last is the one used); return how many."""
    for conflict in conflicts:
        print(f"jax-conformance: conflict: {conflict.describe()} (the file finished last is reported)",
              file=sys.stderr)
    return len(conflicts)


def command_report(args: argparse.Namespace) -> int:
    """Render every readable result file into the HTML report; name each unreadable one and exit 1."""
    check_outputs([("-o", args.output), ("--markdown", args.markdown), ("--junit", args.junit)],
                  inputs=list(args.results))
    out, problems = render_report(args.results, args.output, args.markdown, args.junit)
    print(f"report: {out}" + (f"\nmarkdown: {args.markdown}" if args.markdown else "")
          + (f"\njunit: {args.junit}" if args.junit else ""))
    return 1 if problems else 0


def command_matrix(args: argparse.Namespace) -> int:
    """Print the JAX versions of matrices and versions given together (oldest first, each once),
    one a line or (`--json`) as a JSON list; `latest` asks the package index (`--index-url` and the rest)."""
    builder = make_builder(args)
    found: list[str] = []
    for word in args.names.replace(",", " ").split() or [DEFAULT_MATRIX]:
        found += [word] if is_version(word) and not Path(word).exists() else matrix_versions(word, builder.index)
    versions = sort_versions(dict.fromkeys(found))
    if args.ci_jobs is not None:
        try:
            jobs = plan_jobs(versions, args.ci_jobs, args.shards)
        except ValueError as exc:
            raise ConformanceError(f"--ci-jobs {args.ci_jobs} --shards {args.shards}: {exc}") from None
        print(json.dumps({"jobs": [job.to_json() for job in jobs], "shard_count": jobs[0].shards,
                          "total_jobs": len(jobs) * args.ci_jobs}))
        return 0
    print(json.dumps(versions) if args.json else "\n".join(versions))
    return 0


def command_pin(args: argparse.Namespace) -> int:
    """Refresh the hashed pins of the given versions (default: the default matrix), resolved with the index
    options given."""
    builder = make_builder(args)
    versions: list[str] = []
    for word in args.versions or [DEFAULT_MATRIX]:
        versions += [word] if is_version(word) and not Path(word).exists() else matrix_versions(word, builder.index)
    versions = list(dict.fromkeys(versions))
    for version in versions:
        path = compile_pins(version, builder.index, uv_options=builder.options.uv_args())
        print(f"pinned jax {version}: {path}")
    return 0


def command_diff(args: argparse.Namespace) -> int:
    """Print the cells whose status or observation differ between two result sets; exit 0.

    A side named by a JAX version (not an existing path) is that release's stored results in `--results`,
    with the selected cells that are not stored yet run first, as `gate --from/--to` does. A build with a local
    label (`0.12.0.1+corp.3`) is on no index: its stored result file in `--results` is read as it is."""
    sides = [stored_build(args.results, side) for side in (args.baseline, args.candidate)]
    versions = [str(side) for side in sides if not side.exists() and is_version(str(side))]
    if versions:
        check_outputs([], results=args.results)
        ran = dict(zip(versions, run_versions(args, versions)))
        sides = [ran.get(str(side), side) for side in sides]
    baseline = result_set(load_results(sides[0]), "baseline")
    candidate = result_set(load_results(sides[1]), "candidate")
    report_conflicts(baseline.conflicts + candidate.conflicts)
    mismatch = version_mismatch(baseline, candidate)
    if mismatch:
        print(f"note: the two sets differ in version: {mismatch}")
    print(diff_text(diff_sets(baseline, candidate)))
    return 0


def stored_build(results: Path, side: Path) -> Path:
    """`side` itself, or, for the version of a local build (`0.12.0.1+corp.3`, not a path) or of a stored pre-release
    or dev build, its result file in `results`; `ConformanceError` when there is none (such a build is run with `run --wheels` or `--python`)."""
    text = str(side)
    if side.exists() or not is_version(text):
        return side
    stored = ResultStore(results).path_for(text, matrix.host_platform())
    built = Version(text)  # a pre-release or dev build may be on no index this machine reads: its stored file
    if stored.is_file() and (built.local or built.is_prerelease or built.is_devrelease):
        return stored
    if "+" not in text:
        return side
    if not stored.is_file():
        raise ConformanceError(f"jax {text} is a local build, on no package index, and {results} holds no result "
                               f"file {stored.name}; run it first with `run --wheels DIR` or `run --python PATH`")
    return stored


def run_versions(args: argparse.Namespace, versions: list[str]) -> list[Path]:
    """The result file of each JAX version (in order) after running its selected cells: a version whose stored
    results answer every selected cell is neither built nor run."""
    return run_targets(args, [("jax", version) for version in versions])


def run_targets(args: argparse.Namespace, targets: list[tuple[str, str]]) -> list[Path]:
    """The result file of each target (in order) after running its selected cells. A target is `("jax", VERSION)`
    (a release, answered from storage when it can be), `("python", PATH)` or `("wheels", DIR)` (run, reusing the
    stored cells whose key is unchanged). Every target is checked, and given builds prepared, before any runs."""
    versions = list(dict.fromkeys(v for kind, v in targets if kind == "jax"))
    selection = matrix.select_run(case_folders(args.cases), args.expression)
    request = run_request(args, versions, selection)
    builder = make_builder(args)
    matrix.check_interpreters(builder, versions)
    prepared = prepare_targets(builder, [t for t in targets if t[0] != "jax"])
    progress = Progress()
    finished = matrix.run_matrix(request, builder, progress, keep_going=False, cells=selection.chosen).finished
    paths: dict[tuple[str, str], Path] = {("jax", v): done.path for v, done in zip(versions, finished)}
    built, _ = matrix.run_builds(request, prepared, progress, keep_going=False)
    paths.update({target: done.path for target, done in built.items()})
    return [paths[target] for target in targets]


def gate_inputs(args: argparse.Namespace) -> tuple[list[Path], list[Path]]:
    """The baseline and candidate result files: given, or produced by running `--from` and `--to` (or `--to-python`,
    `--to-wheels`)."""
    candidates = [(kind, value) for kind, value in (("jax", args.to_version), ("python", args.to_python),
                                                    ("wheels", args.to_wheels)) if value]
    ran = args.from_version or candidates
    given = args.baseline or args.candidate
    if ran and given:
        raise ConformanceError("give either --baseline/--candidate (result sets) or --from/--to (versions to run), "
                               "not both")
    if ran:
        if len(candidates) > 1:
            raise ConformanceError("give one candidate: --to VERSION, --to-python PATH or --to-wheels DIR")
        if not (args.from_version and candidates):
            raise ConformanceError("--from and --to go together (or --to-python, --to-wheels): the baseline JAX version and "
                                   "the candidate")
        paths = run_targets(args, [("jax", args.from_version), candidates[0]])
        return [paths[0]], [paths[-1]]
    if not (args.baseline and args.candidate):
        raise ConformanceError("gate needs --baseline A --candidate B (result files or folders), or --from V1 --to V2")
    return list(args.baseline), list(args.candidate)


def command_gate(args: argparse.Namespace) -> int:
    """Judge the candidate against the baseline: exit 0 without unacknowledged regressions, 1 with, 2 on bad input."""
    settings = load_expectations_file(args.expectations) if args.expectations else ExpectationsFile([])
    given = [p for p in (args.baseline or []) + (args.candidate or []) if p.exists()]
    check_outputs([("--markdown", args.markdown)], inputs=given,
                  results=args.results if (args.from_version or args.to_version or args.to_python or args.to_wheels)
                  else None)
    baseline_paths, candidate_paths = gate_inputs(args)
    baseline = result_set(load_results(baseline_paths), "baseline")
    candidate = result_set(load_results(candidate_paths), "candidate", newest=args.newest)
    report_conflicts(baseline.conflicts + candidate.conflicts)
    for left_out in candidate.left_out:
        print(f"note: --newest left out the candidate's {left_out}")
    mismatch = version_mismatch(baseline, candidate)
    if mismatch and not args.allow_version_mismatch:
        raise ConformanceError(f"refusing to compare result sets of different versions: {mismatch}; "
                               f"pass --allow-version-mismatch to compare them anyway")
    outcome = gate(diff_sets(baseline, candidate, baseline_platforms_only=args.baseline_platforms), settings.entries,
                   fail_on_printed=args.fail_on_printed or settings.fail_on_printed,
                   allow_missing=args.allow_missing or settings.allow_missing, today=args.today or utc_today())
    sides = ", ".join(f"{p}: jax {baseline.jax(p)} -> {candidate.jax(p)}" for p in sorted(baseline.runs)
                      if p in candidate.runs)
    title = f"gate ({sides})"
    if mismatch:
        title += f" [versions differ: {mismatch}]"
    print(gate_text(outcome, title))
    if args.markdown is not None:
        write_text_atomically(args.markdown, gate_markdown(outcome, title))
        print(f"markdown: {args.markdown}")
    return outcome.exit_code


def command_expectations(args: argparse.Namespace) -> int:
    """`expectations prune`: print the removal of the entries the stored results no longer need; apply it with
    --write. Exit 0 (2 on bad input)."""
    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"{args.file}: cannot read the expectations file "
                               f"({getattr(exc, 'strerror', None) or exc})") from None
    outcome = prune(text, merge_files(load_results(args.results or [DEFAULT_RESULTS])), str(args.file))
    for removal in outcome.removals:
        print(terminal_safe(f"remove {removal.entry.label}: {removal.why}"))
    for line in outcome.diff.splitlines():
        print(terminal_safe(line))
    if args.write and outcome.removals:
        write_text_atomically(args.file, outcome.new_text)
        print(f"wrote {args.file}: {len(outcome.removals)} entr{'y' if len(outcome.removals) == 1 else 'ies'} "
              f"removed, {outcome.kept} kept")
    elif not outcome.removals:
        print(f"{args.file}: every entry is still needed ({outcome.kept} kept)")
    return 0


def command_supported(args: argparse.Namespace) -> int:
    """Print the supported range of each platform over the selected cells; exit 0 (2 on bad input)."""
    current = parse_current(args.current) if args.current is not None else None
    entries = load_expectations_file(args.expectations).entries if args.expectations else []
    selected = [(cell.case.id, cell.param) for cell in
                matrix.select_run(case_folders(args.cases), args.expression).selected]
    ranges = supported_ranges(merge_files(load_results(args.results or [DEFAULT_RESULTS])), selected, entries,
                              current, args.current or "")
    for line in constraints(ranges) if args.format == "constraints" else range_text(ranges):
        print(terminal_safe(line))
    return 0


def command_bisect(args: argparse.Namespace) -> int:
    """Bisect the releases between --good and --bad for the first whose verdict on CELL changes."""
    started = time.monotonic()
    folders = case_folders(args.cases)
    cell = resolve_cell(args.cell, matrix.load_all_cases(folders))
    if args.find_fix and not cell.case.param(cell.param).known_issue:
        raise ConformanceError(f"{cell.id} documents no known issue; --find-fix looks for the release where a "
                               f"documented bug stops reproducing (bisect without it for any change)")
    builder = make_builder(args)
    releases = releases_between(builder.index.releases("jax"), args.good, args.bad)
    folder = next((f for f in folders if f.name == cell.case.package), None)
    request = matrix.RunRequest(versions=(), results=args.results, cell_ids=(cell.id,), sources=(folder,),
                                case_folders=tuple(folders), workers=1, retries=1, launcher=args.launch)
    request.check()
    progress = Progress()  # only notices and dropped cells: the search prints each verdict itself
    quiet = lambda event: progress(event) if isinstance(event, (matrix.Notice, matrix.CellsDropped)) else None  # noqa
    oracle = CellOracle(builder, cell, lambda env: matrix.run_version(env, request, quiet).file,
                        stored=lambda version: matrix.stored_cells(request, builder, version, [cell]).get(cell.id))

    def announced(version: str):
        found = oracle(version)
        for text in matrix.take_notices(builder):
            progress(matrix.Notice(text))
        if hasattr(found, "status"):
            how = "stored result" if version in oracle.from_storage else f"{oracle.seconds.get(version, 0):.0f}s"
            print(f"  jax {version}: {observation_line(found, version)}  ({how})", flush=True)
        return found

    print(f"bisect {cell.id}: {len(releases)} releases from {releases[0]} to {releases[-1]}; "
          f"testing both ends first", flush=True)
    memo = Memo(announced)
    like = same_observation
    if args.find_fix:
        like = same_bug_state
        first, last = memo(releases[0]), memo(releases[-1])
        if hasattr(first, "status") and hasattr(last, "status"):
            if bug_reproduces(last) and not bug_reproduces(first):
                releases = releases[::-1]
            elif bug_reproduces(first) == bug_reproduces(last):
                state = "reproduces" if bug_reproduces(first) else "does not reproduce"
                print(f"the known issue {state} on both jax {releases[0]} and jax {releases[-1]}: no fix to find")
                return 1
    outcome = bisect(releases, memo, like, on_step=lambda line: print(line, flush=True))
    print()
    print(bisect_text(outcome, cell.id, args.find_fix))
    ran = sorted(set(oracle.seconds) - oracle.from_storage, key=releases.index)
    stored = sorted(oracle.from_storage, key=releases.index)
    print(f"answered from stored results in {request.results}: {', '.join(stored) or 'none'}; "
          f"ran: {', '.join(ran) or 'nothing'}")
    print(f"wall time: {time.monotonic() - started:.1f}s")
    return 1 if outcome.ends_agree else 0


LONG_COMMANDS = ("run", "gate", "bisect")
COMMANDS = {"list": command_list, "run": command_run, "report": command_report, "matrix": command_matrix,
            "pin": command_pin, "diff": command_diff, "gate": command_gate, "bisect": command_bisect,
            "expectations": command_expectations, "supported": command_supported}


def main(argv: list[str] | None = None) -> int:
    """Entry point of `jax-conformance` and `python -m conformance`."""
    for stream in (sys.stdout, sys.stderr):  # a terminal or pipe that cannot encode a case's text: escapes, not a crash
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    # Every long command (run, gate --from/--to, bisect) ends on SIGTERM as on Ctrl-C: the run under way kills its
    # children and removes its temporaries on the way out, and the exit status says which signal it was.
    terminated.clear()
    previous = signal.signal(signal.SIGTERM, _interrupt) if args.command in LONG_COMMANDS else None
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("\njax-conformance: interrupted; result files already written are kept", file=sys.stderr)
        return 143 if terminated.is_set() else 130
    except (ConformanceError, ResultsError, CaseDeclarationError) as exc:
        print(f"jax-conformance: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder or file we were told to use cannot be written
        print(f"jax-conformance: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
