"""Sensitivity, measured: does the suite notice when JAX itself changes, and in the right tier?

    python benchmarks/sensitivity.py [--scope module|rows|all] [--only NAME ...] [-k EXPR] [-j N]
                                     [--workdir DIR] [--json FILE]

It copies the built 0.12.0.1 environment once (into --workdir), applies each mutant of
`benchmarks/mutants.py` (a small, realistic edit to JAX's own Python source) to the copy, and
runs the suite on the copy through the pytest plugin. The unmutated copy runs first, once, as
the reference; each mutant's run is then compared with it cell by cell. A cell *turned* when
its status changed (a status turn) or its printed output went from matching to differing
(a printed mark). Per mutant it prints the turned cells and a verdict on the target rows:

- detected: an asserted mutant turned a target row's status; a printed mutant marked a target
  row's printed output and turned no target status;
- wrong tier: the target rows turned, but in the other tier;
- missed: no target row turned (other cells may have);
- not applicable: the mutant's old text is not found exactly once in this JAX.

Turns to or from timeout or flaky are reported as unstable and count for nothing (the
machine's load, not the mutant). Before each run every file any mutant edits is copied back
from the pristine environment, so no run sees another mutant's edit.

`--scope module` (default) runs the case modules of the target rows, `rows` only the cells of
the target rows, `all` every cell. Timings belong to the machine, so they live here and never
in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from conformance.core.case import Case, load_cases  # noqa: E402
from conformance.engine.matrix import PYTEST_PLUGIN  # noqa: E402
from conformance.errors import ConformanceError  # noqa: E402
from conformance.report.terminal import text_table  # noqa: E402
from mutants import ASSERTED, MUTANTS, PRINTED, Mutant  # noqa: E402

DOCUMENTED = "0.12.0.1"
SCOPES = ("module", "rows", "all")
UNSTABLE = {"timeout", "flaky"}
STATUS_TURN = "status"
PRINTED_MARK = "printed"
DETECTED, MISSED, WRONG_TIER, NOT_APPLICABLE = "detected", "missed", "wrong tier", "not applicable"
RUN_TIMEOUT_S = 3600


# ---- pure logic ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellState:
    """What the comparison needs of one cell's result."""

    status: str
    printed_diff: bool
    rows: tuple[str, ...] = ()
    asserted_paths: tuple[str, ...] = ()  # the asserted facts that differ (a cell that already differs can change)


@dataclass(frozen=True)
class Turn:
    """One cell that a mutant turned: how, from what to what."""

    cell: str
    how: str  # STATUS_TURN or PRINTED_MARK
    before: str
    after: str

    @property
    def unstable(self) -> bool:
        """A turn to or from timeout or flaky: the machine, not the mutant."""
        return self.how == STATUS_TURN and bool({self.before, self.after} & UNSTABLE)

    def describe(self) -> str:
        """One line: the cell and how it turned."""
        if self.how == PRINTED_MARK:
            return f"{self.cell}: printed output differs ({self.before})"
        return f"{self.cell}: {self.before} -> {self.after}" + (" (unstable)" if self.unstable else "")


def cell_states(report: Mapping[str, Any]) -> dict[str, CellState]:
    """Cell id -> state, from a pytest-json-report whose test entries carry the cells' results as metadata."""
    states = {}
    for test in report.get("tests", []):
        meta = test.get("metadata") or {}
        if "case" not in meta or "status" not in meta:
            continue
        cell = f"{meta['case']}[{meta['param']}]" if meta.get("param") else meta["case"]
        states[cell] = CellState(
            meta["status"],
            bool(meta.get("printed_diff")),
            tuple(meta.get("rows") or ()),
            tuple(sorted(str(d.get("path")) for d in meta.get("diff") or [])),
        )
    return states


def turns_between(reference: Mapping[str, CellState], mutated: Mapping[str, CellState]) -> list[Turn]:
    """The cells of `mutated` that turned against `reference`: status changed (or, for a cell that differs either
    way, the set of asserted facts that differ changed: the verdict tier moved), or printed output newly differs.

    A cell missing from the reference cannot be compared and is skipped; one missing from the mutated run
    (its module failed to collect) is a status turn to 'missing'.
    """
    found = []
    for cell in sorted(reference):
        before = reference[cell]
        after = mutated.get(cell)
        if after is None:
            found.append(Turn(cell, STATUS_TURN, before.status, "missing"))
        elif after.status != before.status:
            found.append(Turn(cell, STATUS_TURN, before.status, after.status))
        elif after.asserted_paths != before.asserted_paths:
            found.append(
                Turn(
                    cell,
                    STATUS_TURN,
                    f"{before.status} on {', '.join(before.asserted_paths) or 'nothing'}",
                    f"{after.status} on {', '.join(after.asserted_paths) or 'nothing'}",
                )
            )
        elif after.printed_diff and not before.printed_diff:
            found.append(Turn(cell, PRINTED_MARK, after.status, after.status))
    return found


def target_cells(rows: Iterable[str], states: Mapping[str, CellState]) -> set[str]:
    """The cells (of a run) that check any of `rows`."""
    wanted = set(rows)
    return {cell for cell, state in states.items() if wanted & set(state.rows)}


def verdict(kind: str, turns: Sequence[Turn], targets: set[str]) -> str:
    """Whether the target cells turned the intended way for a mutant of `kind` (asserted or printed)."""
    on_target = [t for t in turns if t.cell in targets and not t.unstable]
    status = any(t.how == STATUS_TURN for t in on_target)
    printed = any(t.how == PRINTED_MARK for t in on_target)
    if kind == ASSERTED:
        return DETECTED if status else WRONG_TIER if printed else MISSED
    if kind == PRINTED:
        return WRONG_TIER if status else DETECTED if printed else MISSED
    raise ValueError(f"unknown mutant kind {kind!r}")


@dataclass
class Outcome:
    """One mutant's result."""

    mutant: Mutant
    verdict: str
    turns: list[Turn] = field(default_factory=list)
    targets: set[str] = field(default_factory=set)
    seconds: float = 0.0
    note: str = ""

    @property
    def observed_tier(self) -> str:
        """How the target rows turned: status, printed, or none."""
        on_target = [t for t in self.turns if t.cell in self.targets and not t.unstable]
        if any(t.how == STATUS_TURN for t in on_target):
            return "status"
        return "printed" if on_target else "none"

    def to_json(self) -> dict[str, Any]:
        """Plain JSON of the outcome."""
        return {
            "name": self.mutant.name,
            "section": self.mutant.section,
            "rows": list(self.mutant.rows),
            "kind": self.mutant.kind,
            "verdict": self.verdict,
            "observed": self.observed_tier,
            "targets": sorted(self.targets),
            "note": self.note,
            "seconds": round(self.seconds, 1),
            "turns": [
                {"cell": t.cell, "how": t.how, "before": t.before, "after": t.after, "unstable": t.unstable}
                for t in self.turns
            ],
        }


def score_table(outcomes: Sequence[Outcome]) -> str:
    """The totals: per intended kind and overall, how many mutants were detected, missed, in the wrong tier."""
    rows = []
    for label, kinds in ((ASSERTED, {ASSERTED}), (PRINTED, {PRINTED}), ("all", {ASSERTED, PRINTED})):
        chosen = [o for o in outcomes if o.mutant.kind in kinds]
        count = {v: sum(o.verdict == v for o in chosen) for v in (DETECTED, MISSED, WRONG_TIER, NOT_APPLICABLE)}
        turned_any = sum(bool([t for t in o.turns if not t.unstable]) for o in chosen)
        rows.append(
            [label, len(chosen), turned_any, count[DETECTED], count[MISSED], count[WRONG_TIER], count[NOT_APPLICABLE]]
        )
    return text_table(["mutants", "count", "turned a cell", "detected", "missed", "wrong tier", "not applicable"], rows)


def mutant_table(outcomes: Sequence[Outcome]) -> str:
    """One line per mutant: intended tier against the observed turn of its target rows, and the verdict."""
    return text_table(
        ["mutant", "section", "intended", "target turned", "verdict", "cells turned"],
        [
            [
                o.mutant.name,
                o.mutant.section,
                o.mutant.kind,
                o.observed_tier,
                o.verdict,
                sum(not t.unstable for t in o.turns),
            ]
            for o in outcomes
        ],
    )


def outcome_lines(outcome: Outcome) -> list[str]:
    """What the benchmark prints for one mutant."""
    m = outcome.mutant
    head = (
        f"{m.name} ({m.section}, {m.kind}; target {', '.join(m.rows)}): {outcome.verdict.upper()}"
        f" - target turned: {outcome.observed_tier}"
    )
    if outcome.note:
        head += f" - {outcome.note}"
    lines = [head, f"    change: {m.change}"]
    for turn in outcome.turns:
        mark = "*" if turn.cell in outcome.targets else " "
        lines.append(f"  {mark} {turn.describe()}")
    return lines


# ---- selection ----------------------------------------------------------------------------------------------


def check_rows(mutants: Sequence[Mutant], cases: Sequence[Case]) -> None:
    """Every target row must be checked by some case; ConformanceError names the first that is not."""
    known = {row for case in cases for row in case.all_rows}
    for mutant in mutants:
        unknown = [row for row in mutant.rows if row not in known]
        if unknown:
            raise ConformanceError(
                f"mutant {mutant.name}: no case checks row {unknown[0]}; fix its rows in benchmarks/mutants.py"
            )


def case_module_paths(rows: Iterable[str], cases: Sequence[Case]) -> list[str]:
    """The case module files (relative to the repository) whose cases check any of `rows`."""
    wanted = set(rows)
    modules = {case.probe.__module__ for case in cases if wanted & set(case.all_rows)}
    return sorted(str(Path(*module.split(".")).with_suffix(".py")) for module in modules)


def row_cell_ids(rows: Iterable[str], cases: Sequence[Case]) -> list[str]:
    """The ids of exactly the cells that check any of `rows`."""
    wanted = set(rows)
    return sorted(case.cell_id(param) for case in cases for param in case.param_names if wanted & set(case.rows(param)))


@dataclass(frozen=True)
class Selection:
    """What one pytest run covers: case module paths, and optionally exactly these cells."""

    paths: tuple[str, ...]
    cells: tuple[str, ...] | None = None


def selection_for(rows: Iterable[str], scope: str, cases: Sequence[Case]) -> Selection:
    """The run that covers `rows` under `scope`."""
    rows = list(rows)
    if scope == "all":
        return Selection(("conformance/cases",))
    if scope == "module":
        return Selection(tuple(case_module_paths(rows, cases)))
    if scope == "rows":
        return Selection(tuple(case_module_paths(rows, cases)), tuple(row_cell_ids(rows, cases)))
    raise ConformanceError(f"--scope {scope}: use one of {', '.join(SCOPES)}")


# ---- the environment copy -----------------------------------------------------------------------------------


def site_packages(env_path: Path) -> Path:
    """The site-packages folder of a virtual environment."""
    found = sorted(env_path.glob("lib/python3*/site-packages")) + sorted(env_path.glob("Lib/site-packages"))
    if not found:
        raise ConformanceError(f"{env_path}: no site-packages folder; rebuild the environment")
    return found[0]


def copy_problem(copy: Path) -> str | None:
    """Why the copied environment does not run as itself (its interpreter, its own jax), or None."""
    python = copy / "bin" / "python"
    try:
        done = subprocess.run(
            [str(python), "-c", "import sys, jax; print(sys.prefix); print(jax.__file__)"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run {python} ({exc})"
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or len(lines) < 2:
        return f"{python} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}"
    prefix, jax_file = Path(lines[-2]).resolve(), Path(lines[-1]).resolve()
    if prefix != copy.resolve():
        return f"{python} runs with sys.prefix {prefix}, not the copy"
    if copy.resolve() not in jax_file.parents:
        return f"{python} imports jax from {jax_file}, not from the copy"
    return None


def prepare_copy(pristine: Path, copy: Path) -> Path:
    """A working copy of the environment at `copy` (made with `cp -a` unless one that runs as itself is there)."""
    if copy.exists() and copy_problem(copy) is None:
        return copy
    if copy.exists():
        shutil.rmtree(copy)
    copy.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["cp", "-a", str(pristine), str(copy)], capture_output=True, text=True)
    if done.returncode != 0:
        raise ConformanceError(f"cannot copy {pristine} to {copy}: {done.stderr.strip()}")
    problem = copy_problem(copy)
    if problem:
        raise ConformanceError(f"the copy of the environment does not run as itself: {problem}")
    return copy


def _drop_bytecode(source: Path) -> None:
    """Remove the cached bytecode of `source`, so that an edited or restored file is compiled afresh."""
    cache = source.parent / "__pycache__"
    for compiled in cache.glob(f"{source.stem}.*.pyc") if cache.is_dir() else ():
        compiled.unlink()


def restore_files(pristine_jax: Path, copy_jax: Path, files: Iterable[str]) -> None:
    """Copy `files` (relative to the jax package) back from the pristine environment into the copy."""
    for relative in sorted(set(files)):
        target = copy_jax / relative
        shutil.copy2(pristine_jax / relative, target)
        _drop_bytecode(target)


def apply_mutant(mutant: Mutant, copy_jax: Path) -> str:
    """Edit the copy's jax source; '' when applied, else why the mutant is not applicable here."""
    path = copy_jax / mutant.file
    if not path.is_file():
        return f"no file jax/{mutant.file}"
    text = path.read_text(encoding="utf-8")
    found = text.count(mutant.old)
    if found != 1:
        return f"old text found {found} times in jax/{mutant.file}"
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")
    _drop_bytecode(path)
    return ""


# ---- running the suite --------------------------------------------------------------------------------------


class SuiteDidNotRun(ConformanceError):
    """The pytest run ended without a report (for a mutant: JAX no longer imports, say)."""


def run_suite(python: str, selection: Selection, workers: int, keyword: str | None = None) -> dict[str, CellState]:
    """Run the selected cells on `python` through the pytest plugin; cell id -> state."""
    with tempfile.TemporaryDirectory(prefix="jax-sensitivity-") as scratch:
        report = Path(scratch) / "report.json"
        # the plugin is loaded where the suite runs pytest, as `engine.matrix` does (no pytest11 entry point)
        command = [
            sys.executable,
            "-m",
            "pytest",
            *selection.paths,
            *PYTEST_PLUGIN,
            "--jax-python",
            python,
            "--json-report",
            "--json-report-file",
            str(report),
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-q",
            "--jax-workers",
            str(workers),
        ]
        if selection.cells is not None:
            cells = Path(scratch) / "cells.json"
            cells.write_text(json.dumps(list(selection.cells)), encoding="utf-8")
            command += ["--jax-cells", str(cells)]
        if keyword:
            command += ["-k", keyword]
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
        )
        try:
            done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise ConformanceError(f"the suite run did not finish in {RUN_TIMEOUT_S} s: {' '.join(command)}") from None
        if not report.exists():
            tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
            raise SuiteDidNotRun(f"the suite run wrote no report (exit {done.returncode}): {' | '.join(tail)}")
        return cell_states(json.loads(report.read_text(encoding="utf-8")))


def measure(
    mutants: Sequence[Mutant],
    scope: str = "module",
    workers: int = 2,
    keyword: str | None = None,
    workdir: Path | None = None,
    version: str = DOCUMENTED,
    echo=print,
) -> list[Outcome]:
    """Run the reference and every mutant; the outcomes, in the order of `mutants`."""
    from conformance.envs.builder import EnvironmentBuilder

    cases = load_cases()
    check_rows(mutants, cases)
    env = EnvironmentBuilder().prepare(version)
    workdir = workdir or Path(tempfile.gettempdir()) / "jax-sensitivity"
    copy = prepare_copy(Path(env.path), workdir / f"env-{version}")
    pristine_jax, copy_jax = site_packages(Path(env.path)) / "jax", site_packages(copy) / "jax"
    python = str(copy / "bin" / "python")
    edited = [m.file for m in MUTANTS if (pristine_jax / m.file).is_file()]
    restore_files(pristine_jax, copy_jax, edited)

    selections = {m.name: selection_for(m.rows, scope, cases) for m in mutants}
    reference_selection = selection_for([r for m in mutants for r in m.rows], scope, cases)
    started = time.monotonic()
    echo(f"reference: {len(reference_selection.paths)} case module(s) on {python}")
    reference = run_suite(python, reference_selection, workers, keyword)
    echo(f"reference: {len(reference)} cells in {time.monotonic() - started:.0f} s")

    outcomes = []
    for mutant in mutants:
        restore_files(pristine_jax, copy_jax, edited)
        problem = apply_mutant(mutant, copy_jax)
        if problem:
            outcome = Outcome(mutant, NOT_APPLICABLE, note=problem)
        else:
            started = time.monotonic()
            note = ""
            try:
                mutated = run_suite(python, selections[mutant.name], workers, keyword)
            except SuiteDidNotRun as exc:
                mutated, note = {}, str(exc)  # every selected cell turns to 'missing'
            finally:
                restore_files(pristine_jax, copy_jax, [mutant.file])
            compared = {
                cell: state
                for cell, state in reference.items()
                if cell in mutated or _in_selection(cell, selections[mutant.name], cases)
            }
            turns = turns_between(compared, mutated)
            targets = target_cells(mutant.rows, compared)
            outcome = Outcome(
                mutant,
                verdict(mutant.kind, turns, targets),
                turns,
                targets,
                time.monotonic() - started,
                note or ("" if targets else "no target cell ran"),
            )
        outcomes.append(outcome)
        for line in outcome_lines(outcome):
            echo(line)
    restore_files(pristine_jax, copy_jax, edited)
    return outcomes


def _in_selection(cell: str, selection: Selection, cases: Sequence[Case]) -> bool:
    """Whether a reference cell belongs to a mutant's run (so that its absence there is a turn)."""
    if selection.cells is not None:
        return cell in selection.cells
    if selection.paths == ("conformance/cases",):
        return True
    module_of = {c.id: c.probe.__module__ for c in cases}
    case_id = cell.split("[", 1)[0]
    return case_id in module_of and str(Path(*module_of[case_id].split(".")).with_suffix(".py")) in selection.paths


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print; 2 with one line on bad input."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scope",
        choices=SCOPES,
        default="module",
        help="run the case modules of the target rows (default), only their cells, or every cell",
    )
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this mutant (repeatable)")
    parser.add_argument("-k", dest="keyword", default=None, metavar="EXPR", help="pytest -k expression for every run")
    parser.add_argument("-j", "--workers", type=int, default=2, help="cells at once (default 2)")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the environment copy lives (default: <tmp>/jax-sensitivity)"
    )
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the outcomes as JSON")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    try:
        chosen = list(MUTANTS)
        if args.only:
            known = {m.name: m for m in MUTANTS}
            missing = [n for n in args.only if n not in known]
            if missing:
                raise ConformanceError(f"--only {missing[0]}: no such mutant (see --list)")
            chosen = [known[n] for n in args.only]
        if args.list:
            print(
                text_table(
                    ["mutant", "section", "kind", "target rows", "change"],
                    [[m.name, m.section, m.kind, " ".join(m.rows), m.change] for m in chosen],
                )
            )
            return 0
        if args.workers < 1:
            raise ConformanceError("-j must be at least 1")
        outcomes = measure(chosen, args.scope, args.workers, args.keyword, args.workdir)
    except ConformanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print()
    print(mutant_table(outcomes))
    print()
    print(score_table(outcomes))
    if args.json:
        args.json.write_text(json.dumps([o.to_json() for o in outcomes], indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
