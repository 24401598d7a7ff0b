"""Mutation testing of the project's own pure logic: do our tests notice when our code changes?

    python benchmarks/self_mutation.py [--module PATH ...] [-j N] [--workdir DIR] [--timeout-multiplier X]
                                       [--tests FILE ...] [--min-score PCT] [--show] [--json FILE]

The suite asks JAX's source to be mutated to prove a case can fail (`benchmarks/sensitivity.py`);
this does the same to the suite's own pure logic with mutmut (from the package index: it is in
the `test` extra). It copies the working tree (tracked and untracked files git does not ignore)
into `--workdir`, tells mutmut to mutate only the modules below, and runs only the tests that
build no JAX environment (`-m "not e2e"`; `--tests` narrows them to some test files, which can only
kill fewer mutants, so its score is a lower bound of the whole run's). mutmut runs the tests once to learn which tests
call which function, then runs each mutant against those tests only, `-j` at a time, with
a time limit of `--timeout-multiplier` times that test's own time.

Per module it prints mutants made, killed, survived, timed out, listed as equivalent,
other (no test reached it, or mutmut called it suspicious) and not run (a run stopped early;
`--no-run` reports such a run), and the score: (killed + timed out) / (made - equivalent - not run). Every
survivor is listed by name (`--show` adds its diff). `benchmarks/equivalent_mutants.txt` lists mutants that no
test can kill because they change nothing observable, one a line with its reason; a survivor listed there counts as
equivalent and is printed as such, never dropped silently, and a listed name that was killed
or no longer exists is reported as stale. Exits 1 when a module scores under `--min-score`.
Its wall time belongs to the machine, so it is printed here and never asserted in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS = ROOT / "benchmarks" / "equivalent_mutants.txt"

# The pure logic under test: whole packages, and the pure modules of engine/, report/, chapter/, api/ and perf/.
MODULES = (
    [
        f"conformance/core/{n}.py"
        for n in (
            "case",
            "casefolders",
            "compare",
            "model",
            "observation",
            "registry",
            "rowlist",
            "status",
            "validation",
            "verdict",
            "versions",
        )
    ]
    + [
        f"conformance/decide/{n}.py"
        for n in ("bisect", "cellref", "diff", "expectations", "gate", "render", "runs", "tiers", "verdict_view")
    ]
    + [f"conformance/results/{n}.py" for n in ("durations", "load", "merge", "outputs", "schema", "store", "versions")]
    + [f"conformance/engine/{n}.py" for n in ("selection", "shards", "keys")]
    + ["conformance/report/model.py"]
    + [
        f"conformance/chapter/{n}.py"
        for n in (
            "blocks",
            "cells",
            "grid",
            "headings",
            "listing",
            "magics",
            "mapfile",
            "markdown",
            "model",
            "printed",
            "publicjson",
            "skiplist",
            "stated",
            "statuses",
            "textsplit",
            "transcript",
        )
    ]
    + [f"conformance/api/{n}.py" for n in ("diff", "findings", "judge", "model", "scan", "table")]
    + [f"conformance/perf/{n}.py" for n in ("stats", "hlo", "render", "decisions")]
)

KILLED, SURVIVED, TIMEOUT = "killed", "survived", "timeout"
# mutmut's exit codes (mutmut/stats.py): 1 and 3 a failing test; 0 every test passed; 36, 24, -24, 152, 255 its
# time limit. Anything else (no tests, skipped, suspicious, a crash of the worker) is `other`.
STATUS_BY_EXIT = {1: KILLED, 3: KILLED, 0: SURVIVED, 36: TIMEOUT, 24: TIMEOUT, -24: TIMEOUT, 152: TIMEOUT, 255: TIMEOUT}


@dataclass
class ModuleScore:
    """The mutants of one module and what became of them."""

    module: str
    made: int = 0
    killed: int = 0
    survived: int = 0
    timeout: int = 0
    equivalent: int = 0
    other: int = 0
    not_run: int = 0
    survivors: list[str] = field(default_factory=list)
    equivalents: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)

    @property
    def score(self) -> float | None:
        """(killed + timed out) / (made - equivalent - not run), in percent; 100 when nothing is left to kill, None
        when no mutant was tried."""
        if self.made and self.made == self.not_run:
            return None
        counted = self.made - self.equivalent - self.not_run
        return 100.0 if counted <= 0 else 100.0 * (self.killed + self.timeout) / counted

    @property
    def score_text(self) -> str:
        """The score as the table prints it."""
        return "n/a" if self.score is None else f"{self.score:.1f}%"


def read_equivalents(path: Path) -> dict[str, str]:
    """`name  reason` lines of the equivalent-mutants file (blank lines and `#` comments skipped).

    A line without a reason is refused: an equivalent mutant is a claim, and a claim needs its why.
    """
    found: dict[str, str] = {}
    if not path.exists():
        return found
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        name, _, reason = text.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{path}:{number}: `{name}` has no reason; write `<mutant name> <why it is equivalent>`")
        found[name] = reason.strip()
    return found


def module_of(mutant: str) -> str:
    """`conformance.decide.gate.x_classify__mutmut_3` → `conformance/decide/gate.py`."""
    dotted = mutant.rsplit(".", 1)[0]
    return dotted.replace(".", "/") + ".py"


def tally(
    exit_codes: Mapping[str, int | None], equivalents: Mapping[str, str], modules: Iterable[str]
) -> dict[str, ModuleScore]:
    """Per module: how many mutants were made, killed, survived, timed out, equivalent or other. Pure."""
    scores = {m: ModuleScore(m) for m in modules}
    for name in sorted(exit_codes, key=_natural):
        score = scores.setdefault(module_of(name), ModuleScore(module_of(name)))
        score.made += 1
        status = STATUS_BY_EXIT.get(exit_codes[name])  # type: ignore[arg-type]
        if status == SURVIVED and name in equivalents:
            score.equivalent += 1
            score.equivalents.append(name)
        elif status == SURVIVED:
            score.survived += 1
            score.survivors.append(name)
        elif status == KILLED:
            score.killed += 1
        elif status == TIMEOUT:
            score.timeout += 1
        elif exit_codes[name] is None:  # a run stopped before this mutant: neither caught nor missed
            score.not_run += 1
        else:
            score.other += 1
            score.others.append(f"{name} (exit {exit_codes[name]})")
    return scores


def stale_equivalents(exit_codes: Mapping[str, int | None], equivalents: Mapping[str, str]) -> list[str]:
    """Listed equivalents that no longer survive or no longer exist (the list must be kept true). Pure."""
    stale = []
    for name in equivalents:
        if name not in exit_codes:
            stale.append(f"{name}: no such mutant any more")
        elif STATUS_BY_EXIT.get(exit_codes[name]) != SURVIVED:  # type: ignore[arg-type]
            stale.append(f"{name}: not a survivor (exit {exit_codes[name]}), so not equivalent")
    return stale


def _natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


def copy_tree(destination: Path) -> None:
    """The working tree as git sees it (tracked and untracked, not ignored), or all of it outside git."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True
    )
    if listed.returncode != 0:
        shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(".git", "__pycache__", "mutants"))
        return
    for relative in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / relative
        if source.is_file():
            (destination / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / relative)


def mutmut_config(
    modules: Iterable[str],
    timeout_multiplier: float,
    also_copy: Iterable[str],
    tests: Iterable[str] = ("tests", "-m", "not e2e"),
) -> str:
    """The `[tool.mutmut]` table appended to the copy's pyproject.toml."""
    listed = ", ".join(json.dumps(m) for m in modules)
    copied = ", ".join(json.dumps(p) for p in also_copy)
    selection = ", ".join(json.dumps(a) for a in tests)
    return f"""

[tool.mutmut]
source_paths = ["conformance"]
only_mutate = [{listed}]
also_copy = [{copied}]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]
pytest_add_cli_args_test_selection = [{selection}]
timeout_multiplier = {timeout_multiplier}
use_git_change_detection = false
"""


# Processes the tests start (a cell, a fork server, a pytest of its own, `python -m conformance` in a scratch copy of
# the package, an interpreter of a venv without mutmut) import the mutated modules too. mutmut's own trampoline
# needs mutmut's configuration there, which such a process cannot find; so each mutated module takes mutmut's
# trampoline only where mutmut is already loaded (the mutmut process and its forks) and, anywhere else, this
# stand-in, kept inside the package so that copies of it carry it: it runs the mutant named in MUTANT_UNDER_TEST
# (inherited from the test), else the original.
CHILD_MODULE = "_mutmut_child"
CHILD_TRAMPOLINE = '''"""Stand-in for mutmut's trampoline in processes the tests start (see benchmarks/self_mutation.py)."""
import inspect
import os
from functools import wraps
from typing import Any, Callable

MutantDict = dict


def wrap_in_trampoline(mutants_dict: dict, is_classmethod: bool = False) -> Callable[[Callable], Callable]:
    def wrap(decorated: Callable) -> Callable:
        def chosen(args: tuple) -> tuple[Callable, tuple]:
            orig, rest = mutants_dict["_mutmut_orig"], args
            if is_classmethod:
                orig, rest = getattr(args[0], orig.__name__), args[1:]
            module, _, name = os.environ.get("MUTANT_UNDER_TEST", "").rpartition(".")
            mutant = mutants_dict.get(name) if module == decorated.__module__ else None
            if mutant is None:
                return orig, rest
            return (getattr(args[0], mutant.__name__) if is_classmethod else mutant), rest

        if inspect.isgeneratorfunction(decorated):
            @wraps(decorated)
            def generator(*args: Any, **kwargs: Any) -> Any:
                func, rest = chosen(args)
                return (yield from func(*rest, **kwargs))
            return generator

        @wraps(decorated)
        def plain(*args: Any, **kwargs: Any) -> Any:
            func, rest = chosen(args)
            return func(*rest, **kwargs)
        return plain
    return wrap
'''  # noqa: E501 - the written file's own docstring, kept whole
MUTMUT_IMPORT = "from mutmut.mutation.trampoline import wrap_in_trampoline as _mutmut_mutated, MutantDict"
EITHER_IMPORT = f"""import sys as _mutmut_sys
if "mutmut" in _mutmut_sys.modules:  # the mutmut process and its forks
    {MUTMUT_IMPORT}
else:  # a process the tests started
    from conformance.{CHILD_MODULE} import wrap_in_trampoline as _mutmut_mutated, MutantDict"""


def patch_mutants(mutants: Path, modules: Iterable[str]) -> None:
    """Point each mutated module at the stand-in trampoline where mutmut is not loaded, and write the stand-in.

    mutmut keeps a mutated file that is newer than its source, so the patch survives its next start.
    """
    (mutants / "conformance" / f"{CHILD_MODULE}.py").write_text(CHILD_TRAMPOLINE, encoding="utf-8")
    for module in modules:
        path = mutants / module
        text = path.read_text(encoding="utf-8")
        if MUTMUT_IMPORT in text:
            path.write_text(text.replace(MUTMUT_IMPORT, EITHER_IMPORT, 1), encoding="utf-8")


def run_mutmut(
    workspace: Path,
    modules: list[str],
    jobs: int,
    timeout_multiplier: float,
    log: Path,
    tests: Iterable[str] = ("tests",),
) -> float:
    """Copy the tree into `workspace`, run mutmut there; the wall time in seconds."""
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    copy_tree(workspace)
    # Everything beside the package and the tests (workflows, examples, matrix) is copied as it is.
    beside = sorted(p.name for p in workspace.iterdir() if p.name not in ("conformance", "tests", "mutants"))
    project = (workspace / "pyproject.toml").read_text(encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs)]
    started = time.monotonic()
    with open(log, "w", encoding="utf-8") as out:
        # First only the mutants: a test selection that matches nothing stops mutmut right after writing them.
        (workspace / "pyproject.toml").write_text(
            project + mutmut_config(modules, timeout_multiplier, beside, ["tests/no-tests-yet"]), encoding="utf-8"
        )
        subprocess.run(command, cwd=workspace, stdout=out, stderr=subprocess.STDOUT, env=env)
        missing = [m for m in modules if not (workspace / "mutants" / m).is_file()]
        if missing:
            raise SystemExit(f"mutmut wrote no mutants for {', '.join(missing)}; its output is in {log}")
        patch_mutants(workspace / "mutants", modules)
        selection = [*tests, "-m", "not e2e"]
        (workspace / "pyproject.toml").write_text(
            project + mutmut_config(modules, timeout_multiplier, beside, selection), encoding="utf-8"
        )
        done = subprocess.run(command, cwd=workspace, stdout=out, stderr=subprocess.STDOUT, env=env)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"mutmut failed (exit {done.returncode}); its output is in {log}")
    return wall


def read_exit_codes(workspace: Path, modules: Iterable[str]) -> dict[str, int | None]:
    """Every mutant's exit code, from mutmut's `.meta` file beside each mutated module."""
    codes: dict[str, int | None] = {}
    for module in modules:
        meta = workspace / "mutants" / f"{module}.meta"
        if meta.exists():
            codes.update(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    return codes


def show(workspace: Path, name: str) -> str:
    """mutmut's diff of one mutant."""
    done = subprocess.run([sys.executable, "-m", "mutmut", "show", name], cwd=workspace, capture_output=True, text=True)
    return done.stdout.strip()


def table(scores: Iterable[ModuleScore]) -> list[str]:
    """The per-module table, and a total line."""
    rows = list(scores)
    head = (
        f"{'module':42} {'made':>5} {'killed':>6} {'surv':>5} {'tmout':>5} {'equiv':>5} {'other':>5} "
        f"{'notrun':>6} {'score':>7}"
    )
    lines = [head, "-" * len(head)]
    total = ModuleScore("total")
    for row in rows:
        lines.append(
            f"{row.module:42} {row.made:5} {row.killed:6} {row.survived:5} {row.timeout:5} "
            f"{row.equivalent:5} {row.other:5} {row.not_run:6} {row.score_text:>7}"
        )
        for name in ("made", "killed", "survived", "timeout", "equivalent", "other", "not_run"):
            setattr(total, name, getattr(total, name) + getattr(row, name))
    lines.append("-" * len(head))
    lines.append(
        f"{'total':42} {total.made:5} {total.killed:6} {total.survived:5} {total.timeout:5} "
        f"{total.equivalent:5} {total.other:5} {total.not_run:6} {total.score_text:>7}"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--module",
        action="append",
        help="a module path such as conformance/decide/gate.py (repeatable; default: every module of the pure logic)",
    )
    parser.add_argument("-j", "--jobs", type=int, default=2, help="mutants run at once (default 2)")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path("/tmp/jaxconf-self-mutation"),
        help="where the copy and mutmut's files go (emptied first)",
    )
    parser.add_argument(
        "--timeout-multiplier",
        type=float,
        default=5.0,
        help="a mutant's limit is this many times its tests' own time (default 5)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        metavar="FILE",
        help="run only these test files (default: every test that builds no JAX environment); "
        "fewer tests kill fewer mutants, so the score is a lower bound",
    )
    parser.add_argument("--min-score", type=float, default=90.0, help="exit 1 when a module scores under this")
    parser.add_argument("--equivalents", type=Path, default=EQUIVALENTS, help="the equivalent-mutants file")
    parser.add_argument("--show", action="store_true", help="print each survivor's diff")
    parser.add_argument("--json", type=Path, help="also write the per-module numbers here")
    parser.add_argument(
        "--no-run",
        action="store_true",
        help="report what the last run in --workdir found so far (a run stopped early included)",
    )
    args = parser.parse_args(argv)
    modules = args.module or MODULES
    unknown = [m for m in modules if not (ROOT / m).is_file()]
    if unknown:
        parser.error(f"no such module: {', '.join(unknown)} (give a path such as conformance/decide/gate.py)")
    missing = [t for t in args.tests or () if not (ROOT / t).is_file()]
    if missing:
        parser.error(f"no such test file: {', '.join(missing)} (give a path such as tests/test_decide_gate.py)")
    equivalents = read_equivalents(args.equivalents)
    args.workdir.mkdir(parents=True, exist_ok=True)
    log = args.workdir / "mutmut.log"
    if args.no_run:
        wall = log.stat().st_mtime - (args.workdir / "tree").stat().st_mtime if log.exists() else 0.0
    else:
        wall = run_mutmut(
            args.workdir / "tree", modules, args.jobs, args.timeout_multiplier, log, args.tests or ("tests",)
        )
    codes = read_exit_codes(args.workdir / "tree", modules)
    scores = tally(codes, {k: v for k, v in equivalents.items() if module_of(k) in modules}, modules)
    print("\n".join(table(scores[m] for m in modules)))
    print(f"\nwall time: {wall:.0f} s with -j {args.jobs} (mutmut's log: {log})")
    if args.tests:
        print(f"tests: only {' '.join(args.tests)}: the scores are lower bounds of a run with every test")
    if any(scores[m].not_run for m in modules):
        print("the run stopped early: `notrun` mutants were never tried, and the scores leave them out")
    for row in scores.values():
        for name in row.survivors:
            print(f"\nsurvived: {name}" + (f"\n{show(args.workdir / 'tree', name)}" if args.show else ""))
        for name in row.equivalents:
            print(f"equivalent: {name}: {equivalents[name]}")
        for name in row.others:
            print(f"other: {name}")
    stale = stale_equivalents(codes, {k: v for k, v in equivalents.items() if module_of(k) in modules})
    for line in stale:
        print(f"stale entry in {args.equivalents.name}: {line}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "wall_s": round(wall, 1),
                    "jobs": args.jobs,
                    "modules": [{**asdict(scores[m]), "score": scores[m].score} for m in modules],
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    low = [m for m in modules if scores[m].score is None or scores[m].score < args.min_score]
    if low:
        print(f"\nunder {args.min_score:.0f}%: {', '.join(low)}")
    return 1 if low or stale else 0


if __name__ == "__main__":
    sys.exit(main())
