"""Importing a team's case folder as a package of its own, without putting its parent on the import path.

A case folder is foreign code. Putting its parent folder on `sys.path` (or PYTHONPATH) ahead
of the standard library and site-packages would let every sibling of the folder shadow what
the suite and JAX import (a `json/`, a `jax/` checkout, an `opt_einsum/`). Instead the folder
alone is imported, from its path, as the top-level package named after it
(`spec_from_file_location` with the folder as its only submodule search location); its
modules then import through the package's own `__path__`.

The parent tells its children which folders to import through one environment variable,
`JAXCONF_CASE_FOLDERS`, a JSON list of absolute paths (so no path separator is ever parsed).
A folder whose name is already importable here (a standard-library module, jax or one of
its dependencies, any installed top-level package) is refused: it would replace that module
for everything in the process. Standard library only: the child imports this module in
target environments.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Iterable, Mapping

from conformance.portable import signals_kept

FOLDERS_VARIABLE = "JAXCONF_CASE_FOLDERS"

# What JAX itself imports, and the suite's own package and test folders.
RESERVED_NAMES = frozenset(
    {"jax", "jaxlib", "numpy", "ml_dtypes", "opt_einsum", "scipy", "conformance", "test", "tests"}
)
# The namespace of a chapter's blocks in result files (`chapter/<chapter>.<block>`, `conformance.chapter`): no case
# folder may take it, so a merge never mistakes a block for a retired case of a folder.
CHAPTER_NAMESPACE = "chapter"
# The namespace of downstream suites' tests (`downstream/<suite>.t<hash>`, `conformance.downstream`): reserved alike.
DOWNSTREAM_NAMESPACE = "downstream"


class CaseFolderError(ImportError):
    """A case folder that cannot be imported as its own package; the message is one line naming the folder."""


def stdlib_names() -> frozenset[str]:
    """Top-level names of the standard library (`sys.stdlib_module_names`, Python 3.10+)."""
    return frozenset(getattr(sys, "stdlib_module_names", ())) | frozenset(sys.builtin_module_names)


def name_refusal(name: str) -> str:
    """Why a folder called `name` cannot be imported as a package ('' when it can), by its name alone."""
    if not name.isidentifier():
        return f"the folder's name {name!r} must be a Python identifier (it is imported as a package of that name)"
    if name in (CHAPTER_NAMESPACE, DOWNSTREAM_NAMESPACE):
        return (
            f"the folder's name {name!r} is the namespace of chapters' blocks or downstream suites' tests in "
            f"result files ({name}/...); rename the folder"
        )
    if name in RESERVED_NAMES or name in stdlib_names():
        what = "a standard-library module" if name in stdlib_names() else "a package the suite or JAX imports"
        return f"the folder's name {name!r} is {what}; rename the folder (its package would shadow that module)"
    return ""


def _installed_location(name: str, folder: Path) -> str:
    """Where `name` already imports from here, other than `folder` itself ('' when nowhere else)."""
    present = sys.modules.get(name)
    if present is not None:
        locations = list(getattr(present, "__path__", None) or [])
        if any(Path(p).resolve() == folder for p in locations):
            return ""
        return str(getattr(present, "__file__", None) or locations or "an already imported module")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    if spec is None or spec.origin is None:
        return ""  # nothing, or only a namespace package (a plain folder), which a real package hides anyway
    locations = list(spec.submodule_search_locations or [])
    if locations and all(Path(p).resolve() == folder for p in locations):
        return ""  # the folder itself, e.g. through the working folder: no other module is hidden
    return str(spec.origin)


def import_case_folder(path: str | os.PathLike) -> str:
    """Import the folder at `path` as the top-level package named after it, and return that name.

    Importing it twice is harmless. `CaseFolderError` (one line) when its name is refused or
    already importable here from somewhere else, or it has no `__init__.py`.
    """
    folder = Path(path).resolve()
    name = folder.name
    refusal = name_refusal(name)
    if refusal:
        raise CaseFolderError(f"--cases {folder}: {refusal}")
    present = sys.modules.get(name)
    if present is not None and any(Path(p).resolve() == folder for p in getattr(present, "__path__", None) or []):
        return name
    elsewhere = _installed_location(name, folder)
    if elsewhere:
        raise CaseFolderError(
            f"--cases {folder}: the name {name!r} already imports from {elsewhere} in "
            f"{sys.executable}; rename the folder (its package would shadow that one)"
        )
    init = folder / "__init__.py"
    if not init.is_file():
        raise CaseFolderError(
            f"--cases {folder}: it has no __init__.py; add an empty one (the folder is imported as the package {name})"
        )
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise CaseFolderError(f"--cases {folder}: it cannot be imported as the package {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with signals_kept():  # a team's package is foreign code: its signal dispositions stay in its import
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return name


def folders_variable(paths: Iterable[str | os.PathLike]) -> str:
    """The value of `JAXCONF_CASE_FOLDERS` that names these folders."""
    return json.dumps([str(Path(p).resolve()) for p in paths])


def declared_folders(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The folder paths `JAXCONF_CASE_FOLDERS` names (none when it is unset or not a JSON list of strings)."""
    try:
        found = json.loads(environ.get(FOLDERS_VARIABLE) or "[]")
    except ValueError:
        return []
    return [p for p in found if isinstance(p, str)] if isinstance(found, list) else []


def import_declared_folders(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Import every folder `JAXCONF_CASE_FOLDERS` names, as its own package; return the package names."""
    return [import_case_folder(path) for path in declared_folders(environ)]
