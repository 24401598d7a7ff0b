"""A team's own case folders (`--cases DIR`): checked, made importable, hashed for result headers.

A folder is imported as a top-level package named after the folder (it needs an
`__init__.py`), with its parent folder on `sys.path` here and on the child's PYTHONPATH.
Its cases are namespaced by the folder's name (`core.case.folder_namespace`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from conformance.core.case import DEFAULT_CASE_PACKAGE, folder_namespace
from conformance.errors import ConformanceError


@dataclass(frozen=True)
class CaseFolder:
    """A folder of case modules, imported as the package `name` from `root`."""

    path: Path

    @property
    def name(self) -> str:
        """The package name: the folder's name."""
        return self.path.name

    @property
    def root(self) -> str:
        """The folder to put on the import path so that `name` imports."""
        return str(self.path.parent)

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
    if not folder.name.isidentifier() or folder.name in ("conformance", "jax", "jaxlib", "numpy", "test", "tests"):
        raise ConformanceError(f"--cases {path}: the folder's name {folder.name!r} must be a Python identifier that "
                               f"names no other package (it is imported as a package of that name)")
    if not (folder / "__init__.py").is_file():
        raise ConformanceError(f"--cases {path}: it has no __init__.py; add an empty one (the folder is imported as "
                               f"the package {folder.name})")
    return CaseFolder(folder)


def case_folders(paths: Iterable[str | Path]) -> list[CaseFolder]:
    """Checked case folders, refusing two with the same name."""
    found: dict[str, CaseFolder] = {}
    for path in paths:
        folder = case_folder(path)
        if folder.name in found and found[folder.name].path != folder.path:
            raise ConformanceError(f"--cases {found[folder.name].path} and {folder.path} have the same name "
                                   f"{folder.name!r}; case ids are namespaced by the folder's name, so rename one")
        found[folder.name] = folder
    return list(found.values())


def import_folder(folder: CaseFolder) -> str:
    """Make the folder importable here as its package and return the package name."""
    if folder.root not in sys.path:
        sys.path.insert(0, folder.root)
    importlib.invalidate_caches()
    spec = importlib.util.find_spec(folder.name)
    where = Path(next(iter(spec.submodule_search_locations or []), "")).resolve() if spec else None
    if where != folder.path:
        raise ConformanceError(f"--cases {folder.path}: the name {folder.name!r} already imports from "
                               f"{where or 'elsewhere'}; rename the folder")
    importlib.import_module(folder.name)
    return folder.name


def package_root(package: str) -> str | None:
    """The folder that makes `package` importable, for the child's PYTHONPATH (None for the built-in package)."""
    if package == DEFAULT_CASE_PACKAGE:
        return None
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        return None
    return str(Path(locations[0]).resolve().parents[package.count(".")])


def package_folder_entry(package: str) -> list[dict[str, str]]:
    """`RunHeader.case_folders` for a run of `package`: the folder and its hash when it is a case folder."""
    if not folder_namespace(package):
        return []
    root = package_root(package)
    if root is None:
        return []
    return [{"name": package, "hash": folder_digest(Path(root) / package)}]
