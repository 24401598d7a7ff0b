"""A team's own case folders (`--cases DIR`): checked, imported as their own packages, hashed for result headers.

A folder is imported as a top-level package named after the folder (it needs an
`__init__.py`) from its own path (`core.casefolders`), here and in every child, which
learns the folders from `JAXCONF_CASE_FOLDERS`. Its parent folder is never put on an import
path, so nothing beside it can shadow what the suite or JAX imports. A folder whose name
the target environment can already import is refused before a run starts. Its cases are
namespaced by the folder's name (`core.case.folder_namespace`).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from conformance.core.case import CaseDeclarationError, folder_namespace
from conformance.core.casefolders import CaseFolderError, import_case_folder, name_refusal
from conformance.errors import ConformanceError
from conformance.portable import run_child


@dataclass(frozen=True)
class CaseFolder:
    """A folder of case modules, imported as the package `name` from `root`."""

    path: Path

    @property
    def name(self) -> str:
        """The package name: the folder's name."""
        return self.path.name

    def digest(self) -> str:
        """sha256 of the folder's Python sources (names and contents), recorded in result headers."""
        return folder_digest(self.path)

    def header_entry(self) -> dict[str, str]:
        """`{"name", "hash"}` for `RunHeader.case_folders`."""
        return {"name": self.name, "hash": self.digest()}


def folder_digest(path: Path) -> str:
    """sha256 over every `.py` file under `path`: its relative name and its bytes."""
    digest = hashlib.sha256()
    for source in sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts):
        digest.update(source.relative_to(path).as_posix().encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()


def case_folder(path: str | Path) -> CaseFolder:
    """A checked case folder; one-line errors say what is wrong with it."""
    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise ConformanceError(f"--cases {path}: no such folder")
    refusal = name_refusal(folder.name)
    if refusal:
        raise ConformanceError(f"--cases {path}: {refusal}")
    if not (folder / "__init__.py").is_file():
        raise ConformanceError(
            f"--cases {path}: it has no __init__.py; add an empty one (the folder is imported as "
            f"the package {folder.name})"
        )
    return CaseFolder(folder)


def case_folders(paths: Iterable[str | Path]) -> list[CaseFolder]:
    """Checked case folders, refusing two with the same name."""
    found: dict[str, CaseFolder] = {}
    for path in paths:
        folder = case_folder(path)
        if folder.name in found and found[folder.name].path != folder.path:
            raise ConformanceError(
                f"--cases {found[folder.name].path} and {folder.path} have the same name "
                f"{folder.name!r}; case ids are namespaced by the folder's name, so rename one"
            )
        found[folder.name] = folder
    return list(found.values())


def import_folder(folder: CaseFolder) -> str:
    """Import the folder here as its own package and return the package name; a module of it that
    fails to import is one line naming the module (exit 2), never a traceback."""
    try:
        return import_case_folder(folder.path)
    except CaseFolderError as exc:
        raise ConformanceError(str(exc)) from None
    except CaseDeclarationError:
        raise
    except Exception as exc:  # noqa: BLE001 - the team's __init__.py is foreign code
        raise ConformanceError(
            f"--cases {folder.path}: its __init__.py failed to import: {type(exc).__name__}: {_first_line(exc)}"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else ""


_IMPORTABLE_PROBE = """
import importlib.util, json, sys
found = {}
for name in json.loads(sys.argv[1]):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin not in (None, "namespace"):  # a plain folder (namespace) shadows nothing
        found[name] = str(spec.origin)
print(json.dumps(found))
"""


def importable_in(python: str, names: Iterable[str], env: dict[str, str] | None = None) -> dict[str, str]:
    """Which of `names` the interpreter `python` already imports (name -> where), run as a child is run."""
    from conformance.childenv import child_environment

    with tempfile.TemporaryDirectory(prefix="jaxconf-names-") as workdir:
        try:
            done = run_child(
                [python, "-c", _IMPORTABLE_PROBE, json.dumps(sorted(names))],
                cwd=workdir,
                env=env if env is not None else child_environment(os.environ, {}),
                capture_output=True,
                text=True,
                timeout=120,
            )
            found = json.loads(done.stdout)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return {}  # the run itself will say what is wrong with the interpreter
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def refuse_shadowing(folders: Iterable[CaseFolder], python: str) -> None:
    """One line (exit 2) when a folder's name is a module the target environment `python` already imports."""
    by_name = {folder.name: folder for folder in folders}
    if not by_name:
        return
    for name, where in sorted(importable_in(python, by_name).items()):
        raise ConformanceError(
            f"--cases {by_name[name].path}: the name {name!r} already imports from {where} in "
            f"{python}; rename the folder (its package would shadow that one)"
        )


def package_folder(package: str) -> str | None:
    """The case folder that is the package `package`, for the child's `JAXCONF_CASE_FOLDERS` (None for the
    built-in package or one not imported from a case folder)."""
    if not folder_namespace(package):
        return None
    module = sys.modules.get(package)
    locations = list(getattr(module, "__path__", None) or []) if module is not None else []
    return str(Path(locations[0]).resolve()) if locations else None


def package_folder_entry(package: str) -> list[dict[str, str]]:
    """`RunHeader.case_folders` for a run of `package`: the folder and its hash when it is a case folder."""
    folder = package_folder(package)
    if folder is None:
        return []
    return [{"name": package, "hash": folder_digest(Path(folder))}]
