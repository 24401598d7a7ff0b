"""The command line: `jax-conformance list | run | report | pin | diff | gate | bisect`.

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
from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, CaseDeclarationError, folder_namespace, load_cases
from conformance.decide.bisect import Memo, bisect, bug_reproduces, releases_between, same_bug_state, same_observation
from conformance.decide.cellref import parse_cell_ref
from conformance.decide.diff import diff_sets, result_set, version_mismatch
from conformance.decide.expectations import ExpectationsFile, load_expectations_file
from conformance.decide.gate import gate
from conformance.decide.render import bisect_text, diff_text, gate_markdown, gate_text, observation_line
from conformance.decide.runs import CellOracle
from conformance.core.casefolders import FOLDERS_VARIABLE, folders_variable
from conformance.engine.folders import CaseFolder, case_folders, import_folder, refuse_shadowing
from conformance.results.schema import SchemaError, result_file_from_json
from conformance.results.load import load_results
from conformance.envs.builder import EnvironmentBuilder, JaxEnvironment
from conformance.errors import ConformanceError
from conformance.envs.matrix import DEFAULT_MATRIX, load_matrix
from conformance.report.html import write_report
from filelock import FileLock

from conformance.atomic import write_text_atomically
from conformance.engine.session import LAUNCHERS, REUSED_ONLY
from conformance.envs.index import sort_versions
from conformance.envs.pins import compile_pins
from conformance.results.schema import ResultFile, is_version
from conformance.results.load import ResultsError, load_result_file, read_results_tolerantly, result_files
from conformance.results.merge import merge_files, merge_report_json, retired_cells, retired_stored_cells
from conformance.engine.runner import SOURCE_ROOT
from conformance.engine.selection import Cell, all_cells, select_cells
from conformance.engine.shards import parse_shard, select_shard
from conformance.envs.matrix import resolve_versions
from conformance.results.durations import recorded_durations
from conformance.report.text import cases_listing, run_summary

CASES_DIR = Path(conformance.__file__).resolve().parent / "cases"
DEFAULT_RESULTS = Path("results")
# Not taken from __doc__, which is None under PYTHONOPTIMIZE=2.
DESCRIPTION = "Documented JAX behaviours, probed in fresh processes across JAX versions."
DEFAULT_REPORT = Path("reports/index.html")


def add_cases_option(parser: argparse.ArgumentParser) -> None:
    """`--cases DIR`, repeatable: a team's own folder of case modules."""
    parser.add_argument("--cases", action="append", default=[], metavar="DIR",
                        help="also load the case modules of this folder (a package named after the folder; "
                             "its ids are namespaced <folder>/<module>.<probe>); repeat for more")


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
    add_run_options(run)
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

    diff = commands.add_parser("diff", help="list the cells whose status or observation differ between two result sets")
    diff.add_argument("baseline", type=Path, metavar="A", help="baseline result file, or a folder of them")
    diff.add_argument("candidate", type=Path, metavar="B", help="candidate result file, or a folder of them")

    gating = commands.add_parser("gate", help="fail when a candidate regresses from a baseline (exit 1)")
    gating.add_argument("--baseline", action="append", type=Path, metavar="PATH",
                        help="baseline result file or folder (repeat for more)")
    gating.add_argument("--candidate", action="append", type=Path, metavar="PATH",
                        help="candidate result file or folder (repeat for more)")
    gating.add_argument("--from", dest="from_version", metavar="VERSION",
                        help="run the suite on this JAX version as the baseline (with --to)")
    gating.add_argument("--to", dest="to_version", metavar="VERSION",
                        help="run the suite on this JAX version as the candidate (with --from)")
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
    add_cases_option(bisecting)

    pin = commands.add_parser("pin", help="refresh the hashed pinned requirement sets in matrix/pins/")
    pin.add_argument("versions", nargs="*", metavar="VERSION",
                     help=f"JAX versions or matrix names (`all`) to pin (default: every version of the "
                          f"{DEFAULT_MATRIX} matrix)")
    return parser


def load_all_cases(folders: list[CaseFolder]) -> list[Case]:
    """The built-in cases, then those of each case folder (imported as its package)."""
    cases = load_cases()
    for folder in folders:
        cases += load_cases(import_folder(folder))
    return cases


def command_list(args: argparse.Namespace) -> int:
    """Print the selected cases."""
    cells = select_cells(all_cells(load_all_cases(case_folders(args.cases))), args.expression)
    print(cases_listing(cells))
    print(f"\n{len(cells)} cells in {len({c.case.id for c in cells})} cases")
    return 0


def pytest_argv(env: JaxEnvironment, json_path: Path, stored: Path, args: argparse.Namespace,
                folder: CaseFolder | None = None) -> list[str]:
    """The pytest command that runs the selected cells of the built-in cases (or of one case folder)."""
    where = [str(folder.path), "--conformance-cases", folder.name] if folder else [str(CASES_DIR)]
    # --noconftest: a team's conftest.py files (in or above its folder) are not part of a conformance run.
    argv = [sys.executable, "-m", "pytest", *where, "--rootdir", SOURCE_ROOT, "--noconftest",
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
    started = time.monotonic()
    sources = getattr(args, "sources", None) or [None]
    final, ran, launchers = None, [], []
    for folder in sources:
        final, data = _run_package(env, args, folder)
        ran += [t.get("metadata") or {} for t in data.get("tests", [])]
        launchers.append(str((data.get("jax_conformance") or {}).get("launcher") or ""))
    wall = time.monotonic() - started
    return {"file": load_result_file(final), "path": final, "wall_s": wall, "cells": len(ran),
            "reused": sum(bool(m.get("reused")) for m in ran), "launcher": " + ".join(dict.fromkeys(launchers))}


def _run_package(env: JaxEnvironment, args: argparse.Namespace, folder: CaseFolder | None) -> tuple[Path, dict]:
    """Run the selected cells of one case package in pytest and merge them into the version's result file."""
    fd, tmp_name = tempfile.mkstemp(dir=args.results, prefix=".running-", suffix=".json")
    os.close(fd)
    tmp = Path(tmp_name)
    selection = tmp.with_name(tmp.name + ".cells")
    selection.write_text(json.dumps(sorted(getattr(args, "cell_ids", None) or [])), encoding="utf-8")
    environ = dict(os.environ)
    retired = retired_in(folder)  # before the run: a case file edited meanwhile must not cost its results
    environ.pop(FOLDERS_VARIABLE, None)
    if folder is not None:  # imported from its own path, never with its parent on PYTHONPATH
        refuse_shadowing([folder], env.python)
        environ[FOLDERS_VARIABLE] = folders_variable([folder.path])
    try:
        started = time.monotonic()
        argv = pytest_argv(env, tmp, args.results, args, folder)
        if getattr(args, "cell_ids", None):
            argv += ["--jax-cells", str(selection)]
        child = subprocess.Popen(argv + ["--jax-pins-hash", env.pins_hash], cwd=SOURCE_ROOT, env=environ)
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
            stored = read_stored(final, args.results)
            dropped = retired_stored_cells(stored, data, retired)
            merged = merge_report_json(stored, data, retired=retired)
            merged["jax_conformance"] = merged_header((stored or {}).get("jax_conformance"), head)
            write_text_atomically(final, json.dumps(merged, indent=1))
        if dropped:
            print(f"jax {env.version}: dropped {len(dropped)} stored cell(s) of cases this checkout no longer "
                  f"declares: {', '.join(dropped[:3])}{' …' if len(dropped) > 3 else ''}")
        return final, data
    finally:
        tmp.unlink(missing_ok=True)
        selection.unlink(missing_ok=True)


def retired_in(folder: CaseFolder | None):
    """Which stored cells of this package (built-in or a case folder) no longer exist in it."""
    package = import_folder(folder) if folder is not None else DEFAULT_CASE_PACKAGE
    declared = [cell.id for cell in all_cells(load_cases(package))]
    return retired_cells(declared, folder_namespace(package))


def merged_header(stored: Any, new: dict[str, Any]) -> dict[str, Any]:
    """The header of a merged result file: the new run's, keeping the case folders earlier runs recorded, and the
    launcher of the run before when this one only reused cells."""
    head = dict(new)
    if new.get("launcher") == REUSED_ONLY and isinstance(stored, dict) and stored.get("launcher"):
        head["launcher"] = stored["launcher"]  # this run started nothing: the cells came from that one
    folders = {f.get("name"): f for f in (stored or {}).get("case_folders") or [] if isinstance(f, dict)}
    folders.update({f.get("name"): f for f in new.get("case_folders") or [] if isinstance(f, dict)})
    head["case_folders"] = sorted(folders.values(), key=lambda f: str(f.get("name")))
    if isinstance(stored, dict) and new.get("case_package") != DEFAULT_CASE_PACKAGE and stored.get("case_package"):
        head["case_package"] = stored["case_package"]
    return head


terminated = threading.Event()


def _interrupt(signum: int, frame: Any) -> None:
    terminated.set()
    raise KeyboardInterrupt


def read_stored(path: Path, folder: Path) -> dict[str, Any] | None:
    """The stored result file to merge into. One that is unreadable, or holds a cell of the wrong shape, is
    kept aside (never lost, and never read as a result again) with a notice; the merge then starts afresh."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        result_file_from_json(data, str(path))
        return data
    except (OSError, ValueError, SchemaError, RecursionError) as exc:
        why = " ".join(str(exc).split())[:200]
    aside = folder / f".{path.name}.unreadable-{int(time.time())}"
    os.replace(path, aside)
    print(f"jax-conformance: {path} could not be merged into ({why}); kept it as {aside.name} and wrote a new one",
          file=sys.stderr)
    return None


def render_report(paths: Any, out: Path, markdown: Path | None = None,
                  junit: Path | None = None, cases: list[Case] | None = None) -> tuple[Path, list[str]]:
    """Render every readable result file; name each unreadable one on stderr; return the report and the problems.

    `cases` (the built-in ones and those of case folders) give rows their sections; default: the built-in cases.
    """
    loaded = read_results_tolerantly(paths)
    if not loaded.files:
        more = f" (and {len(loaded.problems) - 1} more unreadable)" if len(loaded.problems) > 1 else ""
        raise ConformanceError(f"{loaded.problems[0]}{more}" if loaded.problems else "no result files given")
    for problem in loaded.problems:
        print(f"jax-conformance: skipped unreadable result file: {problem}", file=sys.stderr)
    print_conflicts(loaded.files)
    releases = EnvironmentBuilder().index.cached_releases("jax")  # offline: the report names ranges instead
    return write_report(loaded.files, out, markdown_path=markdown, junit_path=junit, cases=cases,
                        releases=releases), loaded.problems


def print_conflicts(files: list[ResultFile]) -> int:
    """Name on stderr every cell that two files of one version and platform report differently; return how many.

    Shards and platforms merge cell by cell (the file finished last wins a cell); a conflict is
    never dropped in silence.
    """
    return report_conflicts([c for run in merge_files(files) for c in run.conflicts])


def report_conflicts(conflicts: list) -> int:
    """Name each conflict of merged result sets on stderr (the entry finished last is the one used); return how many."""
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
    declared = load_all_cases(case_folders(args.cases))
    cells = select_cells(all_cells(declared), args.expression)
    selected = len(cells)
    args.shard = parse_shard(args.shard) if args.shard else None
    if args.shard:
        chosen = select_shard([c.id for c in cells], args.shard, recorded_durations(args.shard_durations))
        cells = [c for c in cells if c.id in chosen]
        if not cells:
            print(f"jax-conformance: shard {args.shard.label} holds none of the {selected} selected cells; "
                  f"nothing to run")
            return 0
    args.sources = run_sources(cells, case_folders(args.cases))
    args.cell_ids = [c.id for c in select_cells(all_cells(declared), args.expression)]
    if args.results.exists() and not args.results.is_dir():
        raise ConformanceError(f"--results {args.results} is a file; name a folder for the result files")
    if args.workers < 1:
        raise ConformanceError(f"-j {args.workers}: the number of cells run at once must be at least 1")
    if args.retries < 0:
        raise ConformanceError(f"--retries {args.retries}: the number of retries cannot be negative")
    report_path = args.report or (DEFAULT_REPORT if args.results == DEFAULT_RESULTS else args.results / "report.html")
    check_writable(report_path, "-o")
    args.results = args.results.absolute()  # pytest and the children run in other working folders
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
            except (ConformanceError, ResultsError) as exc:
                failed.append(f"jax {version}")
                print(f"jax-conformance: error: {exc}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"\ninterrupted; kept {len(finished)} finished result file(s) in {args.results}/", file=sys.stderr)
        return 143 if terminated.is_set() else 130
    if finished:
        print("\n" + run_summary(finished))
        report, problems = render_report(args.results, report_path, cases=declared if args.cases else None)
        failed += [f"unreadable result file {p}" for p in problems]
        print(f"\nreport: {report}  (from every result file in {args.results}/)")
    print(f"wall time: {time.monotonic() - started:.1f}s")
    if failed:
        print(f"jax-conformance: error: no results for {', '.join(failed)} (see above)", file=sys.stderr)
        return 1
    return 0


def run_sources(cells: list[Cell], folders: list[CaseFolder]) -> list[CaseFolder | None]:
    """The case packages with selected cells: None for the built-in one, then each case folder."""
    packages = {cell.case.package for cell in cells}
    chosen: list[CaseFolder | None] = [None] if DEFAULT_CASE_PACKAGE in packages else []
    return chosen + [folder for folder in folders if folder.name in packages]


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
    """The versions of a named matrix; one that names releases of the package index (`latest`, `all`) asks it."""
    matrix = load_matrix(name)
    if not matrix.from_index:
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
    builder = EnvironmentBuilder()
    versions: list[str] = []
    for word in args.versions or [DEFAULT_MATRIX]:
        versions += [word] if is_version(word) and not Path(word).exists() else matrix_versions(word, builder)
    versions = list(dict.fromkeys(versions))
    for version in versions:
        path = compile_pins(version, builder.index)
        print(f"pinned jax {version}: {path}")
    return 0


def command_diff(args: argparse.Namespace) -> int:
    """Print the cells whose status or observation differ between two result sets; exit 0."""
    baseline = result_set(load_results(args.baseline), "baseline")
    candidate = result_set(load_results(args.candidate), "candidate")
    report_conflicts(baseline.conflicts + candidate.conflicts)
    mismatch = version_mismatch(baseline, candidate)
    if mismatch:
        print(f"note: the two sets differ in version: {mismatch}")
    print(diff_text(diff_sets(baseline, candidate)))
    return 0


def gate_inputs(args: argparse.Namespace) -> tuple[list[Path], list[Path]]:
    """The baseline and candidate result files: given, or produced by running `--from` and `--to`."""
    ran = args.from_version or args.to_version
    given = args.baseline or args.candidate
    if ran and given:
        raise ConformanceError("give either --baseline/--candidate (result sets) or --from/--to (versions to run), "
                               "not both")
    if ran:
        if not (args.from_version and args.to_version):
            raise ConformanceError("--from and --to go together: the baseline and the candidate JAX versions")
        return run_sides([args.from_version, args.to_version], args)
    if not (args.baseline and args.candidate):
        raise ConformanceError("gate needs --baseline A --candidate B (result files or folders), or --from V1 --to V2")
    return list(args.baseline), list(args.candidate)


def run_sides(versions: list[str], args: argparse.Namespace) -> tuple[list[Path], list[Path]]:
    """Build both environments and run the suite on each (incrementally, into --results); their result files."""
    cells = select_cells(all_cells(load_all_cases(case_folders(args.cases))), args.expression)
    args.sources = run_sources(cells, case_folders(args.cases))
    args.cell_ids = [c.id for c in cells]
    args.results = args.results.absolute()
    if args.workers < 1:
        raise ConformanceError(f"-j {args.workers}: the number of cells run at once must be at least 1")
    builder = EnvironmentBuilder()
    for version in versions:
        builder.interpreter_for(version)
    paths = []
    for version in versions:
        env = builder.prepare(version)
        print_notices(builder)
        print(f"jax {version}: Python {env.interpreter.version}, environment "
              f"{'built' if env.built_now else 'reused'} in {env.seconds:.1f}s", flush=True)
        done = run_version(env, args)
        print(f"  {done['cells']} cells ({done['cells'] - done['reused']} ran, {done['reused']} reused) "
              f"in {done['wall_s']:.1f}s; wrote {done['path']}", flush=True)
        paths.append(done["path"])
    return [paths[0]], [paths[1]]


def command_gate(args: argparse.Namespace) -> int:
    """Judge the candidate against the baseline: exit 0 without unacknowledged regressions, 1 with, 2 on bad input."""
    settings = load_expectations_file(args.expectations) if args.expectations else ExpectationsFile([])
    if args.markdown is not None:
        check_writable(args.markdown, "--markdown")
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
                   allow_missing=args.allow_missing or settings.allow_missing)
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


def resolve_cell(text: str, cases: list[Case]) -> Cell:
    """The cell named by a case id with :PARAM or [PARAM], or by a row ID; one line when it names none."""
    cells = all_cells(cases)
    ref = parse_cell_ref(text)
    if ref is not None:
        matching = [c for c in cells if c.case.id == ref.case]
        if matching:
            chosen = [c for c in matching if c.param == ref.param]
            if len(chosen) == 1:
                return chosen[0]
            params = ", ".join(c.param for c in matching if c.param)
            raise ConformanceError(f"{ref.case} has parameters {params}; name one as {ref.case}:PARAM")
    by_row = [c for c in cells if text in c.case.rows(c.param)]
    if len(by_row) == 1:
        return by_row[0]
    raise ConformanceError(f"{text!r} names no cell (a case id such as numerics.debug_nans_vmap_miss:vmap, or a row "
                           f"ID); `jax-conformance list` shows them")


def command_bisect(args: argparse.Namespace) -> int:
    """Bisect the releases between --good and --bad for the first whose verdict on CELL changes."""
    started = time.monotonic()
    folders = case_folders(args.cases)
    cell = resolve_cell(args.cell, load_all_cases(folders))
    if args.find_fix and not cell.case.param(cell.param).known_issue:
        raise ConformanceError(f"{cell.id} documents no known issue; --find-fix looks for the release where a "
                               f"documented bug stops reproducing (bisect without it for any change)")
    builder = EnvironmentBuilder()
    releases = releases_between(builder.index.releases("jax"), args.good, args.bad)
    folder = next((f for f in folders if f.name == cell.case.package), None)
    oracle = CellOracle(builder, cell, launcher=args.launch, case_folders=(str(folder.path),) if folder else ())

    def announced(version: str):
        found = oracle(version)
        print_notices(builder)
        if hasattr(found, "status"):
            print(f"  jax {version}: {observation_line(found, version)}  ({oracle.seconds.get(version, 0):.0f}s)",
                  flush=True)
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
    print(f"wall time: {time.monotonic() - started:.1f}s")
    return 1 if outcome.ends_agree else 0


COMMANDS = {"list": command_list, "run": command_run, "report": command_report, "matrix": command_matrix,
            "pin": command_pin, "diff": command_diff, "gate": command_gate, "bisect": command_bisect}


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
