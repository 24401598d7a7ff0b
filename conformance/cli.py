"""The command line: `jax-conformance list | run | report`.

Only this module prints. `main(argv)` returns the exit status, so it can be
tested without a shell; expected problems become one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import conformance
from conformance.core.case import CaseDeclarationError, load_cases
from conformance.envs.builder import EnvironmentBuilder, JaxEnvironment
from conformance.errors import ConformanceError
from conformance.envs.matrix import DEFAULT_MATRIX, load_matrix
from conformance.report.html import write_report
from filelock import FileLock

from conformance.atomic import write_text_atomically
from conformance.engine.session import LAUNCHERS
from conformance.envs.index import sort_versions
from conformance.envs.pins import compile_pins
from conformance.results.schema import ResultFile, is_version
from conformance.results.load import ResultsError, load_result_file, read_results_tolerantly, result_files
from conformance.results.merge import merge_files, merge_report_json
from conformance.engine.runner import SOURCE_ROOT
from conformance.engine.selection import all_cells, select_cells
from conformance.engine.shards import parse_shard, select_shard
from conformance.envs.matrix import resolve_versions
from conformance.results.durations import recorded_durations
from conformance.report.text import cases_listing, run_summary

CASES_DIR = Path(conformance.__file__).resolve().parent / "cases"
DEFAULT_RESULTS = Path("results")
# Not taken from __doc__, which is None under PYTHONOPTIMIZE=2.
DESCRIPTION = "Documented JAX behaviours, probed in fresh processes across JAX versions."
DEFAULT_REPORT = Path("reports/index.html")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="jax-conformance", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jax-conformance {conformance.__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    listing = commands.add_parser("list", help="show the cases, their rows and claims")
    listing.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")

    run = commands.add_parser("run", help="run the cases across JAX versions and write results and the report")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--matrix", metavar="NAME", help=f"a matrix name or .toml path (default {DEFAULT_MATRIX})")
    which.add_argument("--jax", action="append", metavar="VERSION", help="a JAX version; repeat for more")
    run.add_argument("-k", dest="expression", metavar="EXPR", help="pytest-style selection expression")
    run.add_argument("-j", dest="workers", type=int, default=os.cpu_count() or 1, metavar="N",
                     help="cells run at once, each in its own process (default: the number of cores)")
    run.add_argument("--retries", type=int, default=1, metavar="N",
                     help="rerun a cell that ends in error, crash or timeout up to N times (default 1)")
    run.add_argument("--retry-differs", action="store_true", help="also rerun cells that differ")
    run.add_argument("--launch", choices=LAUNCHERS, default="fork",
                     help="fork cells from a per-version server that imported jax (default), or spawn each")
    run.add_argument("--rerun", action="store_true",
                     help="run every selected cell, even those whose stored result is still valid")
    run.add_argument("--results", type=Path, default=DEFAULT_RESULTS, metavar="DIR",
                     help="folder for result files (default results/)")
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

    pin = commands.add_parser("pin", help="refresh the hashed pinned requirement sets in matrix/pins/")
    pin.add_argument("versions", nargs="*", metavar="VERSION",
                     help=f"JAX versions to pin (default: every version of the {DEFAULT_MATRIX} matrix)")
    return parser


def command_list(args: argparse.Namespace) -> int:
    """Print the selected cases."""
    cells = select_cells(all_cells(load_cases()), args.expression)
    print(cases_listing(cells))
    print(f"\n{len(cells)} cells in {len({c.case.id for c in cells})} cases")
    return 0


def pytest_argv(env: JaxEnvironment, json_path: Path, stored: Path, args: argparse.Namespace) -> list[str]:
    """The pytest command that runs the selected cells against one environment."""
    argv = [sys.executable, "-m", "pytest", str(CASES_DIR), "--rootdir", SOURCE_ROOT,
            "-p", "no:cacheprovider", "-o", "addopts=", "-qq", "--no-header", "--tb=no", "-rN",
            "--jax-python", env.python, "--jax-workers", str(args.workers),
            "--jax-retries", str(args.retries), "--jax-launch", args.launch, "--jax-reuse", str(stored),
            "--json-report", "--json-report-file", str(json_path), "--json-report-omit", "keywords", "collectors"]
    if args.retry_differs:
        argv.append("--jax-retry-differs")
    if args.rerun:
        argv.append("--jax-rerun")
    if args.expression:
        argv += ["-k", args.expression]
    shard = getattr(args, "shard", None)
    if shard:
        argv += ["--jax-shard", shard.label]
        if getattr(args, "shard_durations", None):
            argv += ["--jax-shard-durations", str(args.shard_durations)]
    return argv


def run_version(env: JaxEnvironment, args: argparse.Namespace) -> dict[str, Any]:
    """Run the selected cells against one environment and merge them into its result file.

    Cells not selected this time keep their stored results. The file is locked while it is
    read, merged and replaced, so runs sharing a results folder never lose each other's cells.
    """
    args.results.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=args.results, prefix=".running-", suffix=".json")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        started = time.monotonic()
        child = subprocess.Popen(pytest_argv(env, tmp, args.results, args), cwd=SOURCE_ROOT)
        try:
            code = child.wait()
        except KeyboardInterrupt:
            child.send_signal(signal.SIGTERM)
            child.wait()
            raise
        if code not in (0, 1) or tmp.stat().st_size == 0:
            raise ConformanceError(f"pytest stopped with exit code {code} for jax {env.version}; "
                                   f"its output is above")
        data = json.loads(tmp.read_text(encoding="utf-8"))
        head = data.get("jax_conformance") or {}
        if head.get("jax") != env.version:
            raise ConformanceError(f"the environment for jax {env.version} reports jax {head.get('jax')}; "
                                   f"delete {env.path} and run again")
        wall = time.monotonic() - started
        head["wall_s"] = round(wall, 3)
        shard = args.shard.file_suffix if getattr(args, "shard", None) else ""
        final = args.results / f"{head['jax']}-{head['platform']}{shard}.json"
        with FileLock(str(args.results / f".{final.name}.lock")):
            stored = read_stored(final)
            merged = merge_report_json(stored, data)
            write_text_atomically(final, json.dumps(merged, indent=1))
        ran = [t.get("metadata") or {} for t in data.get("tests", [])]
        return {"file": load_result_file(final), "path": final, "wall_s": wall, "cells": len(ran),
                "reused": sum(bool(m.get("reused")) for m in ran)}
    finally:
        tmp.unlink(missing_ok=True)


terminated = threading.Event()


def _interrupt(signum: int, frame: Any) -> None:
    terminated.set()
    raise KeyboardInterrupt


def read_stored(path: Path) -> dict[str, Any] | None:
    """The stored result file to merge into; an unreadable one is kept aside (never lost) and a notice printed."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            return data
    except (OSError, ValueError):
        pass
    aside = path.with_name(f"{path.name}.unreadable-{int(time.time())}")
    os.replace(path, aside)
    print(f"jax-conformance: {path} was unreadable; kept it as {aside.name} and wrote a new one", file=sys.stderr)
    return None


def render_report(paths: Any, out: Path, markdown: Path | None = None,
                  junit: Path | None = None) -> tuple[Path, list[str]]:
    """Render every readable result file; name each unreadable one on stderr; return the report and the problems."""
    loaded = read_results_tolerantly(paths)
    if not loaded.files:
        more = f" (and {len(loaded.problems) - 1} more unreadable)" if len(loaded.problems) > 1 else ""
        raise ConformanceError(f"{loaded.problems[0]}{more}" if loaded.problems else "no result files given")
    for problem in loaded.problems:
        print(f"jax-conformance: skipped unreadable result file: {problem}", file=sys.stderr)
    print_conflicts(loaded.files)
    return write_report(loaded.files, out, markdown_path=markdown, junit_path=junit), loaded.problems


def print_conflicts(files: list[ResultFile]) -> int:
    """Name on stderr every cell that two files of one version and platform report differently; return how many.

    Shards and platforms merge cell by cell (the file finished last wins a cell); a conflict is
    never dropped in silence.
    """
    conflicts = [c for run in merge_files(files) for c in run.conflicts]
    for conflict in conflicts:
        print(f"jax-conformance: conflict: {conflict.describe()} (the file finished last is reported)",
              file=sys.stderr)
    return len(conflicts)


def command_run(args: argparse.Namespace) -> int:
    """Prepare environments, run every version, summarise, and write the report."""
    previous = signal.signal(signal.SIGTERM, _interrupt)  # a terminated run cleans up like an interrupted one
    try:
        return _run_versions(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_versions(args: argparse.Namespace) -> int:
    started = time.monotonic()
    builder = EnvironmentBuilder()
    versions = list(dict.fromkeys(args.jax)) if args.jax else matrix_versions(args.matrix or DEFAULT_MATRIX, builder)
    cells = select_cells(all_cells(load_cases()), args.expression)
    selected = len(cells)
    args.shard = parse_shard(args.shard) if args.shard else None
    if args.shard:
        chosen = select_shard([c.id for c in cells], args.shard, recorded_durations(args.shard_durations))
        cells = [c for c in cells if c.id in chosen]
        if not cells:
            print(f"jax-conformance: shard {args.shard.label} holds none of the {selected} selected cells; "
                  f"nothing to run")
            return 0
    if args.results.exists() and not args.results.is_dir():
        raise ConformanceError(f"--results {args.results} is a file; name a folder for the result files")
    if args.workers < 1:
        raise ConformanceError(f"-j {args.workers}: the number of cells run at once must be at least 1")
    if args.retries < 0:
        raise ConformanceError(f"--retries {args.retries}: the number of retries cannot be negative")
    report_path = args.report or (DEFAULT_REPORT if args.results == DEFAULT_RESULTS else args.results / "report.html")
    check_writable(report_path, "-o")
    for version in versions:  # fail before any long work: unknown versions, no fitting Python
        builder.interpreter_for(version)
    sharded = f" (shard {args.shard.label} of {selected} selected)" if args.shard else ""
    print(f"jax-conformance {conformance.__version__}: {len(cells)} cells{sharded} x {len(versions)} JAX versions",
          flush=True)
    finished, failed = [], []
    try:
        for version in versions:
            try:
                env = builder.prepare(version)
                print_notices(builder)
                verb = "built" if env.built_now else "reused"
                print(f"\njax {version}: Python {env.interpreter.version}, environment {verb} "
                      f"in {env.seconds:.1f}s", flush=True)
                finished.append(run_version(env, args))
                done = finished[-1]
                print(f"  {done['cells']} cells ({done['cells'] - done['reused']} ran, {done['reused']} reused) "
                      f"in {done['wall_s']:.1f}s; wrote {done['path']}", flush=True)
            except ConformanceError as exc:
                failed.append(f"jax {version}")
                print(f"jax-conformance: error: {exc}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"\ninterrupted; kept {len(finished)} finished result file(s) in {args.results}/", file=sys.stderr)
        return 143 if terminated.is_set() else 130
    if finished:
        print("\n" + run_summary(finished))
        report, problems = render_report(args.results, report_path)
        failed += [f"unreadable result file {p}" for p in problems]
        print(f"\nreport: {report}  (from every result file in {args.results}/)")
    print(f"wall time: {time.monotonic() - started:.1f}s")
    if failed:
        print(f"jax-conformance: error: no results for {', '.join(failed)} (see above)", file=sys.stderr)
        return 1
    return 0


def check_writable(path: Path, option: str) -> None:
    """Fail with one line, before any work, when `path` cannot be written as a file."""
    if path.is_dir():
        raise ConformanceError(f"{option} {path} is a folder; name a file")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise ConformanceError(f"{option} {path}: {folder} is not a writable folder")


def print_notices(builder: EnvironmentBuilder) -> None:
    """Print (once) what the builder and its index repaired."""
    for notice in builder.index.notices + builder.notices:
        print(f"jax-conformance: {notice}", file=sys.stderr, flush=True)
    builder.index.notices.clear()
    builder.notices.clear()


def command_report(args: argparse.Namespace) -> int:
    """Render every readable result file into the HTML report; name each unreadable one and exit 1."""
    inputs = {p.resolve() for p in result_files(args.results)}
    for option, out in (("-o", args.output), ("--markdown", args.markdown), ("--junit", args.junit)):
        if out is not None and out.resolve() in inputs:
            raise ConformanceError(f"{out} is one of the result files to read; write the report elsewhere")
        if out is not None:
            check_writable(out, option)
    out, problems = render_report(args.results, args.output, args.markdown, args.junit)
    print(f"report: {out}" + (f"\nmarkdown: {args.markdown}" if args.markdown else "")
          + (f"\njunit: {args.junit}" if args.junit else ""))
    return 1 if problems else 0


def matrix_versions(name: str, builder: EnvironmentBuilder) -> list[str]:
    """The versions of a named matrix; one that names the newest releases asks the package index."""
    matrix = load_matrix(name)
    if not matrix.newest:
        return list(matrix.versions)
    return list(resolve_versions(matrix, builder.index.releases("jax")))


def command_matrix(args: argparse.Namespace) -> int:
    """Print the JAX versions of matrices and versions given together (oldest first, each once),
    one a line or (`--json`) as a JSON list; `latest` asks the package index."""
    builder = EnvironmentBuilder()
    found: list[str] = []
    for word in args.names.replace(",", " ").split() or [DEFAULT_MATRIX]:
        found += [word] if is_version(word) and not Path(word).exists() else matrix_versions(word, builder)
    versions = sort_versions(dict.fromkeys(found))
    print(json.dumps(versions) if args.json else "\n".join(versions))
    return 0


def command_pin(args: argparse.Namespace) -> int:
    """Refresh the hashed pins of the given versions (default: the default matrix)."""
    versions = args.versions or list(load_matrix(DEFAULT_MATRIX).versions)
    builder = EnvironmentBuilder()
    for version in versions:
        path = compile_pins(version, builder.index)
        print(f"pinned jax {version}: {path}")
    return 0


COMMANDS = {"list": command_list, "run": command_run, "report": command_report, "matrix": command_matrix,
            "pin": command_pin}


def main(argv: list[str] | None = None) -> int:
    """Entry point of `jax-conformance` and `python -m conformance`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except (ConformanceError, ResultsError, CaseDeclarationError) as exc:
        print(f"jax-conformance: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder or file we were told to use cannot be written
        print(f"jax-conformance: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
