"""Run one cell: start a fresh child in the target environment, read its observation, judge it.

How the child is started is a strategy (`Launcher`) passed in; the default starts
a plain subprocess per cell.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from pathlib import Path
from typing import Mapping

import conformance
from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, Skip
from conformance.engine.launch import CellCommand, Launcher, subprocess_launcher
from conformance.core.verdict import CellResult, build_result, merge_attempts, needs_retry, skipped_result

SOURCE_ROOT = str(Path(conformance.__file__).resolve().parent.parent)

# Like the chapter's helper, children start without the parent's JAX and XLA settings.
_STRIPPED_PREFIXES = ("JAX_", "XLA_FLAGS")


def child_environment(base: Mapping[str, str], extra: Mapping[str, str], source_root: str = SOURCE_ROOT) -> dict[str, str]:
    """The environment of a child: `base` without JAX_*/XLA_FLAGS, our source on PYTHONPATH, then `extra`."""
    env = {k: v for k, v in base.items() if not k.startswith(_STRIPPED_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, base.get("PYTHONPATH", "")) if p)
    env["PYTHON_COLORS"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def child_argv(python: str, case: Case, param: str, out_path: str, package: str = DEFAULT_CASE_PACKAGE) -> list[str]:
    """The command line that runs one cell's probe."""
    argv = [python, "-m", "conformance.child", case.id]
    if param:
        argv.append(param)
    argv += ["--out", out_path]
    if package != DEFAULT_CASE_PACKAGE:
        argv += ["--package", package]
    return argv


def reproduction_command(python: str, case: Case, param: str, package: str = DEFAULT_CASE_PACKAGE) -> str:
    """A shell line that reproduces the cell by hand, with the case's own environment variables."""
    assignments = [f"{k}={shlex.quote(v)}" for k, v in case.env_for(param).items()]
    assignments.insert(0, f"PYTHONPATH={shlex.quote(SOURCE_ROOT)}")
    argv = child_argv(python, case, param, "observation.json", package)
    stdin = f" <<< {shlex.quote(case.stdin_for(param))}" if case.stdin_for(param) is not None else ""
    return " ".join(assignments + [shlex.join(argv)]) + stdin


def run_cell_once(
    case: Case,
    param: str,
    python: str,
    platform: str,
    launcher: Launcher = subprocess_launcher,
    package: str = DEFAULT_CASE_PACKAGE,
) -> CellResult:
    """Run one cell in one fresh child and judge it."""
    rows = list(case.rows(param))
    expected = case.expected(param, platform)
    if isinstance(expected, Skip):
        return skipped_result(case.id, param, rows, expected)
    with tempfile.TemporaryDirectory(prefix="jaxconf-") as workdir:
        out_path = os.path.join(workdir, "observation.json")
        command = CellCommand(
            argv=child_argv(python, case, param, out_path, package),
            env=child_environment(os.environ, case.env_for(param)),
            timeout_s=case.timeout_s,
            stdin=case.stdin_for(param),
            cwd=workdir,
        )
        outcome = launcher(command)
        record_text = Path(out_path).read_text(encoding="utf-8") if os.path.exists(out_path) else None
    return build_result(case.id, param, rows, outcome, record_text, dict(expected),
                        reproduction_command(python, case, param, package))


def run_cell(
    case: Case,
    param: str,
    python: str,
    platform: str,
    launcher: Launcher = subprocess_launcher,
    package: str = DEFAULT_CASE_PACKAGE,
    retries: int = 0,
) -> CellResult:
    """Run one cell, retrying up to `retries` times when it does not conform; disagreeing attempts make it `flaky`."""
    attempts = [run_cell_once(case, param, python, platform, launcher, package)]
    while needs_retry(attempts[-1]) and len(attempts) <= retries:
        attempts.append(run_cell_once(case, param, python, platform, launcher, package))
    result = merge_attempts(attempts)
    result.known_issue = case.is_known_issue(param, platform)
    return result
