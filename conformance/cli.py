"""The command line: one short function per command that builds a request and prints its outcome, and the progress
printer. The grammar is `cli_parser`; the work lives below (`engine`, `decide`, `api`, `chapter`, `perf`, `report`,
`results`), which never sees parsed arguments. `main(argv)` returns the exit status; bad input is one line, exit 2."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import conformance
from conformance.core.case import CaseDeclarationError
from conformance.downstream.bisecting import BisectRequest, run_any_bisect, write_bisect_files
from conformance.decide.onegate import OneGateRequest, run_one_gate
from conformance.decide.render import bisect_session_text, diff_text
from conformance.decide.verdict_view import verdict_text
from conformance.cli_parser import DEFAULT_REPORT, DEFAULT_RESULTS, build_parser
from conformance.decide.sides import JUDGING_FLAGS, DiffRequest, GateRequest, run_diff
from conformance.decide.upkeep import prune_file, supported_lines
from conformance.decide.upgrade import UpgradeRequest, run_upgrade
from conformance.api.session import ApiDiffRequest, CensusRequest, ScanRequest, run_api_diff, run_censuses, run_scan
from conformance.chapter.command import ChapterRequest, PagesRequest, bisect_of, run_chapter, run_pages
from conformance.downstream.parser import DOWNSTREAM_OPTIONS, downstream_request, gate_tiers, run_downstream
from conformance.engine import matrix
from conformance.engine.matrixlist import MatrixRequest, matrix_listing
from conformance.engine.shards import parse_shard
from conformance.engine.targets import BUILD_KINDS, Release, given_builds, releases
from conformance.envs.builder import EnvironmentBuilder, page_packages
from conformance.envs.index import IndexOptions
from conformance.envs.matrix import DEFAULT_MATRIX, chosen_versions, expand_words, matrix_versions
from conformance.envs.pins import compile_pins
from conformance.errors import ConformanceError, one_line
from conformance.perf.command import PerfCommand, perf_sides, run_perf_bisect, run_perf_command
from conformance.interrupts import interrupt_lost, interrupted_status, sigterm_interrupts
from conformance.jsonout import human_text_to_stderr, json_wanted, write_json
from conformance.report.commandjson import cases_json, dumps, run_json
from conformance.report.progress import conflict_line, event_lines
from conformance.report.formats import check_report_outputs, outputs_said, requested
from conformance.report.outputs import output_settings
from conformance.report.render import render_results
from conformance.report.terminal import cases_listing, run_heading, run_summary
from conformance.results.history import entry_lines
from conformance.results.history_file import HistoryRequest, record_run
from conformance.results.load import ResultsError
from conformance.results.outputs import check_outputs, inputs_read
from conformance.safetext import terminal_lines


def make_builder(args: argparse.Namespace) -> EnvironmentBuilder:
    """The environment builder, with the command's index options (uv's defaults when none is given)."""
    options = IndexOptions(args.index_url, tuple(args.extra_index_url), tuple(args.find_links), args.pre)
    return EnvironmentBuilder(options=options) if options.given else EnvironmentBuilder()


def settings(args: argparse.Namespace, shard: Any = None) -> matrix.RunSettings:
    """The run settings the command was given."""
    return matrix.RunSettings(
        results=args.results,
        expression=args.expression,
        cases=tuple(args.cases),
        shard=shard,
        shard_durations=getattr(args, "shard_durations", None),
        workers=args.workers,
        retries=args.retries,
        retry_differs=args.retry_differs,
        launcher=args.launch,
        rerun=args.rerun,
        future=getattr(args, "future", False),
    )


def _err(text: str) -> None:
    print(f"jax-conformance: {one_line(text)}", file=sys.stderr, flush=True)  # what it echoes stays one line


class Progress:
    """Prints the events of a run and of a decision's session as they come, and keeps the runs that finished."""

    def __init__(self, gap: str = "") -> None:
        self.gap, self.finished = gap, []

    def __call__(self, event: Any) -> None:
        if isinstance(event, matrix.VersionDone):
            self.finished.append(event.run)
        for stream, text in event_lines(event, self.gap):
            _say(text, sys.stderr if stream == "stderr" else sys.stdout)


def command_list(args: argparse.Namespace) -> int:
    """Print the selected cases."""
    cells = matrix.select_run(matrix.case_folders(args.cases), args.expression).selected
    print(f"{cases_listing(cells)}\n\n{len(cells)} cells in {len({c.case.id for c in cells})} cases")
    if args.json:
        print(write_json(args.json, dumps(cases_json(cells))))
    return 0


def command_run(args: argparse.Namespace) -> int:
    """Prepare every target, run each, summarise, and write the report."""
    started, builder = time.monotonic(), make_builder(args)
    builds = given_builds({kind.option: getattr(args, kind.option) for kind in BUILD_KINDS})
    versions = chosen_versions(args.jax, args.matrix, builder, others=bool(builds))
    shard = parse_shard(args.shard) if args.shard else None
    selection, request = matrix.plan_run(settings(args, shard), versions)
    report_path = args.report or (DEFAULT_REPORT if args.results == DEFAULT_RESULTS else args.results / "report.html")
    check_outputs(
        [("-o", report_path), ("--json", args.json)],
        results=args.results,
        reads=inputs_read(args.cases, args.matrix),
        writing=True,
    )
    if shard and not selection.chosen:  # nothing to run; with --json, the run's document all the same (no cell)
        print(
            f"jax-conformance: shard {shard.label} holds none of the {len(selection.selected)} selected cells; "
            "nothing to run"
            + (
                f"\n{write_json(args.json, dumps(run_json([], [], request.results, selection, shard.label)))}"
                if args.json
                else ""
            )
        )
        return 0
    progress, targets = Progress(gap="\n"), releases(versions) + builds
    prepared = matrix.prepare_targets(builder, targets, progress)  # bad input: one line, before anything is stored
    print(
        run_heading(
            conformance.__version__,
            len(selection.chosen),
            len(selection.selected),
            shard.label if shard else "",
            len(versions),
            len(builds),
        ),
        flush=True,
    )
    try:
        outcome = matrix.run_targets(request, builder, targets, progress, cells=selection.chosen, prepared=prepared)
    except KeyboardInterrupt:
        print(
            f"\ninterrupted; kept {len(progress.finished)} finished result file(s) in {request.results}/",
            file=sys.stderr,
        )
        return interrupted_status()
    failed = [f"jax {name}" for name in outcome.failed]
    if progress.finished:
        print("\n" + run_summary([vars(done) for done in progress.finished]))
        report, problems = render_report(request.results, report_path, cases=selection.declared if args.cases else None)
        failed += [f"unreadable result file {p}" for p in problems]
        print(f"\nreport: {report}  (from every result file in {request.results}/)")
    print(f"wall time: {time.monotonic() - started:.1f}s")
    if args.json:  # the run's outcome; with `-`, everything above went to stderr
        print(
            write_json(
                args.json,
                dumps(
                    run_json(
                        progress.finished,
                        failed,
                        request.results,
                        selection,
                        shard and shard.label,
                        report_path if progress.finished else None,
                    )
                ),
            )
        )
    if failed:
        _err(f"error: no results for {', '.join(failed)} (see above)")
    return 1 if failed else 0


def render_report(paths: Any, out: Path, cases: list | None = None, **given: Any) -> tuple[Path, list[str]]:
    """Render every readable result file (`given`: the outputs, their settings and the history, as `render_results`
    takes them), naming each unreadable one and each conflict; the report and problems."""
    done = render_results(paths, out, cases=cases, releases=EnvironmentBuilder().index.cached_releases("jax"), **given)
    for problem in done.problems:
        _err(f"skipped unreadable {'' if problem.startswith(('census ', 'perf ')) else 'result file: '}{problem}")
    for conflict in done.conflicts:
        print(conflict_line(conflict), file=sys.stderr)
    return done.path, done.problems


def command_report(args: argparse.Namespace) -> int:
    """Render every readable result file into the HTML report; name each unreadable one and exit 1."""
    wanted = requested(vars(args))  # {format name: path}, each format's option from `report.formats`
    check_report_outputs(args.output, wanted, args.results, reads=[args.history])
    shape = output_settings(wanted, args.markdown_full, args.html_link, args.compare, args.site_url)
    _, problems = render_report(args.results, args.output, outputs=wanted, settings=shape, history=args.history)
    print(outputs_said(args.output, wanted))
    return 1 if problems else 0


def command_history(args: argparse.Namespace) -> int:
    """Append this run's entry to the history file and print what changed since the previous results."""
    recorded = record_run(HistoryRequest(args.previous, args.results, args.history, args.commit, args.date))
    for notice in recorded.notices:
        _err(f"note: {notice}")
    print("\n".join(entry_lines(recorded.entry, str(recorded.path), recorded.entries)))
    return 0


def command_matrix(args: argparse.Namespace) -> int:
    """Print the JAX versions of matrices and versions (oldest first, each once), as lines, JSON or a CI plan."""
    done = matrix_listing(
        MatrixRequest(args.names, args.ci_runners, args.ci_jobs, args.shards, args.expression, args.stored, args.json),
        make_builder(args),
    )
    for note in done.notes:  # stdout stays the list
        print(note, file=sys.stderr)
    print(write_json(args.json, done.document) if done.document else done.text)
    return 0


def command_pin(args: argparse.Namespace) -> int:
    """Refresh the hashed pins of the given versions (default: the default matrix) with the index options given."""
    builder = make_builder(args)
    for version in expand_words(args.versions or [DEFAULT_MATRIX], builder.index, matrix_versions):
        print(f"pinned jax {version}: {compile_pins(version, builder.index, uv_options=builder.options.uv_args())}")
    return 0


def command_diff(args: argparse.Namespace) -> int:
    """Print the cells whose status or observation differ between two result sets (or versions, run if need be)."""
    found = run_diff(
        DiffRequest(args.baseline, args.candidate, settings(args), args.json), lambda: make_builder(args), Progress()
    )
    if found.mismatch:
        print(f"note: the two sets differ in version: {found.mismatch}")
    print(diff_text(found.diff) + (f"\njson: {args.json}" if args.json else ""))
    return 0


def command_gate(args: argparse.Namespace) -> int:
    """Judge every tier given in one verdict: exit 0 when each passes, 1 when one fails, 2 on bad input."""
    candidates = ([Release(args.to_version)] if args.to_version else []) + given_builds(
        {kind.option: [v] for kind in BUILD_KINDS if (v := getattr(args, f"to_{kind.option}"))}
    )
    flags = {flag: getattr(args, flag) for flag in JUDGING_FLAGS}
    cells = GateRequest(
        settings(args),
        tuple(args.baseline or ()),
        tuple(args.candidate or ()),
        args.from_version,
        tuple(candidates),
        args.expectations,
        args.markdown,
        today=args.today,
        **flags,
    )
    done = run_one_gate(
        OneGateRequest(
            cells=cells,
            workloads_only=args.perf,
            perf_rounds=args.perf_rounds,
            perf_threshold=args.perf_threshold,
            scan=tuple(args.scan),
            json_path=args.json,
            candidate_python=args.to_python,
            more=gate_tiers(args.downstream, args.budget),
        ),
        lambda: make_builder(args),
        Progress(),
        _say,
    )
    print("\n".join([verdict_text(done.verdict), *done.written]))
    return done.exit_code


def command_expectations(args: argparse.Namespace) -> int:
    """`expectations prune FILE`: print the removal of the entries the stored results no longer need."""
    print("\n".join(prune_file(args.file, args.results or [DEFAULT_RESULTS], args.write)))
    return 0


def command_supported(args: argparse.Namespace) -> int:
    """Print the supported range of each platform over the selected cells."""
    print(
        "\n".join(
            supported_lines(
                args.cases,
                args.expression,
                args.results or [DEFAULT_RESULTS],
                args.expectations,
                args.current,
                args.format == "constraints",
                args.fixes_exclude,
                args.json,
            )
        )
    )
    return 0


def command_bisect(args: argparse.Namespace) -> int:
    """Bisect the releases between --good and --bad for the first whose verdict on CELL changes."""
    check_outputs([("--issue", args.issue), ("--json", args.json)], results=args.results, reads=args.cases)  # first
    request = BisectRequest(
        args.cell,
        args.good,
        args.bad,
        args.find_fix,
        args.launch,
        args.results,
        tuple(args.cases),
        args.attribute,
        args.jax_source,
        args.pre,
        args.downstream,
        args.manifest,
    )
    found = run_any_bisect(request, make_builder(args), Progress())  # notices, dropped cells, each step as it comes
    print(bisect_session_text(found))
    for line in write_bisect_files(found, args.issue, args.json, conformance.__version__):
        print(line)
    return found.exit_code


def _say(text: str, stream: Any = None) -> None:  # text the suite did not write (a chapter's, a census's): made safe
    print(terminal_lines(text), file=stream or sys.stderr, flush=True)


def command_api(args: argparse.Namespace) -> int:
    """`api census|diff|scan`: the public names of JAX releases, what changed, and a team's code against them."""
    if args.api_command == "census":
        builder = make_builder(args)
        builds = given_builds({kind.option: getattr(args, kind.option) for kind in BUILD_KINDS})
        versions = chosen_versions(args.jax, args.matrix, builder, others=bool(builds))
        done = run_censuses(
            CensusRequest(tuple(releases(versions) + builds), args.results, args.rerun),
            builder,
            lambda line: _say(line, sys.stdout),
        )
        for failure in done.failures:
            _err(f"error: no census for {failure}")
        return 1 if done.failures else 0
    if args.api_command == "diff":
        check_outputs([("--json", args.json)], results=args.results, reads=[args.a, args.b])
        found = run_api_diff(
            ApiDiffRequest(args.a, args.b, args.results, args.matrix, tuple(args.name), args.rerun, args.json),
            lambda: make_builder(args),
            _say,
        )
        _say("\n".join(found.lines()) + (f"\njson: {args.json}" if args.json else ""), sys.stdout)
        return 0
    scanned = run_scan(
        ScanRequest(
            tuple(args.paths),
            args.to,
            args.from_version,
            args.results,
            args.format,
            args.rerun,
            args.private,
            args.json,
        ),
        lambda: make_builder(args),
        _say,
    )
    for line in scanned.skipped:
        _err(f"note: {line}")
    print(scanned.text)  # made safe by its format (`api.findings`)
    return scanned.exit_code


def command_chapter(args: argparse.Namespace) -> int:
    """List a chapter's blocks, or run them as written on each release, store them as cells and summarise."""
    if args.pages is not None or args.docs is not None:
        return command_chapter_pages(args)
    bisecting, builder = bisect_of(args.file, args.bisect, args.good, args.bad), make_builder(args)
    versions = [] if args.blocks or bisecting else chosen_versions(args.jax, args.matrix, builder)
    request = ChapterRequest(
        args.file,
        tuple(versions),
        args.skip,
        args.map,
        args.results,
        args.json,
        args.timeout,
        args.blocks,
        args.rerun,
        bisecting,
        with_packages=page_packages(args.with_packages),
    )
    check_outputs([("-o", args.report), ("--json", args.json)], results=args.results, reads=request.inputs())
    done = run_chapter(request, builder, lambda line: _say(line, sys.stdout))
    _say("\n".join(done.lines), sys.stdout)
    if args.report is not None and not args.blocks:
        print(f"report: {render_report(args.results, args.report)[0]}  (from every result file in {args.results}/)")
    return 0


def command_chapter_pages(args: argparse.Namespace) -> int:
    """`chapter --pages LIST --docs CHECKOUT`: each page of the list run as a chapter, from the checkout."""
    if args.pages is None or args.docs is None or args.file is not None or args.bisect:
        raise ConformanceError("--pages LIST and --docs CHECKOUT go together, without FILE or --bisect")
    builder = make_builder(args)
    versions = [] if args.blocks else chosen_versions(args.jax, args.matrix, builder)
    request = PagesRequest(
        args.pages, args.docs, tuple(versions), args.results, args.json, args.timeout, args.blocks, args.rerun
    )
    check_outputs([("-o", args.report)], results=args.results, reads=request.inputs(), folders=[("--json", args.json)])
    for done in run_pages(request, builder, lambda line: _say(line, sys.stdout)):
        _say("\n".join(done.lines), sys.stdout)
    if args.report is not None and not args.blocks:
        print(f"report: {render_report(args.results, args.report)[0]}  (from every result file in {args.results}/)")
    return 0


def command_perf(args: argparse.Namespace) -> int:
    """`perf` and `bisect WORKLOAD --metric M`: the workloads' speed, memory and compilations."""
    builder, perf = make_builder(args), args.command == "perf"
    check_outputs([("--json", args.json)], reads=inputs_read(args.cases, vars(args).get("matrix")))
    request = PerfCommand(
        sides=perf_sides(args.jax, args.python, args.matrix, builder) if perf else (),
        results=args.results,
        case_folders=tuple(args.cases),
        expression=args.expression if perf else None,
        rounds=args.rounds,
        max_rounds=args.max_rounds,
        threshold=args.threshold,
        xla_flags=args.xla_flags,
        rerun=perf and args.rerun,
        aa=perf and args.aa,
        json_path=args.json,
        issue_path=None if perf else args.issue,
    )
    lines, status = (
        run_perf_command(request, builder, _say)
        if perf
        else run_perf_bisect(request, args.cell, args.metric, args.good, args.bad, builder, _say)
    )
    print("\n".join(lines))
    return status


def command_downstream(args: argparse.Namespace) -> int:
    """`downstream SUITE...`: each suite on each release, judged against the first; exit 1 on a regression."""
    request = downstream_request(builder := make_builder(args), **{k: getattr(args, k) for k in DOWNSTREAM_OPTIONS})
    return run_downstream(request, builder, lambda line: _say(line, sys.stdout)).exit_code


def command_upgrade(args: argparse.Namespace) -> int:
    """`upgrade --from A --to B`: everything that changes between two releases, one list per tier; a review, exit 0."""
    request = UpgradeRequest(
        args.from_version,
        args.to_version,
        settings(args),
        tuple(args.scan),
        args.perf_rounds,
        args.markdown,
        args.json,
        tuple(args.downstream),
        args.budget,
    )
    return _say(run_upgrade(request, lambda: make_builder(args), Progress(), _say).text, sys.stdout) or 0  # a review


LONG_COMMANDS = ("run", "diff", "gate", "bisect", "api", "chapter", "perf", "downstream", "upgrade")
COMMANDS = {
    name: globals()[f"command_{name}"]
    for name in (  # `jax-conformance NAME` runs `command_NAME`
        "list",
        "run",
        "report",
        "history",
        "matrix",
        "pin",
        "diff",
        "gate",
        "bisect",
        "expectations",
        "supported",
        "api",
        "chapter",
        "perf",
        "downstream",
        "upgrade",
    )
}


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
        with sigterm_interrupts(args.command in LONG_COMMANDS), human_text_to_stderr(json_wanted(vars(args))):
            status = COMMANDS["perf" if getattr(args, "metric", None) else args.command](args)  # bisect --metric
        if not interrupt_lost(status):
            return status
        raise KeyboardInterrupt
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
