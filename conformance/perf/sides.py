"""The sides a perf command names, ready to sample: a release (its environment built or reused, its samples stored
in its result file) or an existing interpreter with jax (`--python PATH`; stored under `builds/`, never as the
release), and the workloads a `-k` expression selects."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from conformance.core.case import DEFAULT_CASE_PACKAGE, load_workloads
from conformance.core.casefolders import import_case_folder
from conformance.core.workload import Workload
from conformance.engine.matrix import host_platform
from conformance.engine.selection import _compile, _matcher
from conformance.engine.targets import ExistingPython, Release
from conformance.errors import ConformanceError
from conformance.perf.session import Side


def is_interpreter(text: str) -> bool:
    """Whether a side is given as an interpreter path (an existing file) rather than a release."""
    return Path(text).is_file()


def prepare_side(text: str, builder: Any, results: Path) -> Side:
    """The side `text` names, its environment prepared (see the module docstring)."""
    if is_interpreter(text):
        target = ExistingPython(text)
        env = target.prepare(builder)
        folder = results / "builds" / target.storage_name(env)
        return Side(
            f"{env.version} ({text})",
            env.python,
            env.version,
            host_platform(),
            f"python|{env.python}|{env.interpreter.version}",
            folder,
            {"python": env.interpreter.version, "source": env.source},
        )
    release = Release(text)
    release.check(builder)
    env = release.prepare(builder)
    return Side(
        text,
        env.python,
        text,
        host_platform(),
        f"{env.pins_hash}|{env.interpreter.version}",
        results,
        {"python": env.interpreter.version, "pins_hash": env.pins_hash, "source": env.source},
    )


def twin(side: Side) -> Side:
    """The A/A twin of a side: the same environment, sampled apart and never stored."""
    return Side(f"{side.label} (A/A)", side.python, side.version, side.platform, side.environment, None, side.header)


def workload_names(workload: Workload) -> list[str]:
    """Every name `-k` matches for a workload: its id, its name, its module file and its row IDs."""
    module, _, rest = workload.id.rpartition("/")[2].partition(".")
    return [workload.id, rest, f"{module}.py", "workloads", *workload.rows]


def select_workloads(case_folders: Sequence[str], expression: str | None) -> tuple[list[Workload], list[str]]:
    """The workloads of the suite and of each case folder that `expression` selects, and the folders' paths."""
    found = load_workloads(DEFAULT_CASE_PACKAGE)
    folders = []
    for folder in case_folders:
        found += load_workloads(import_case_folder(folder))
        folders.append(str(Path(folder).resolve()))
    if expression:
        compiled = _compile(expression)
        found = [w for w in found if compiled.evaluate(_matcher(workload_names(w)))]
    if not found:
        raise ConformanceError(f"-k {expression!r} selects no workload" if expression else "no workload is declared")
    return found, folders
