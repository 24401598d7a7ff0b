"""The reuse key of a cell: what its result depends on, hashed, so an unchanged cell need not run again.

A key covers the case module's source (probe and declaration), the shared probe helpers and
scripts, the child's own code, the parameter's declaration, the target environment's
installed packages, its Python version and the suite's version. Pure apart from reading sources.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import sys
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import conformance
from conformance.core.case import Case

_PACKAGE_ROOT = Path(conformance.__file__).resolve().parent
# What every cell's observation and verdict depend on besides its own module.
# The case API's modules are all here (`core/case.py` and what it re-exports: model, validation, registry).
_SHARED_SOURCES = (
    "cases/helpers.py",
    "child/main.py",
    "child/warned.py",
    "child/future.py",
    "child/forkserver.py",
    "core/case.py",
    "core/model.py",
    "core/validation.py",
    "core/registry.py",
    "core/observation.py",
    "core/compare.py",
    "core/verdict.py",
    "core/versions.py",
)


def _file_digest(path: str) -> str:
    """The sha256 of a file's bytes ("missing" when it cannot be read), read again when the file changed: the cache is
    keyed by what `stat` says of it too, so a case module edited (or written anew at the same path) in one process
    never keeps its old digest."""
    try:
        stat = os.stat(path)
    except OSError:
        return "missing"
    return _digest_of(path, stat.st_mtime_ns, stat.st_size, stat.st_ino)


@functools.lru_cache(maxsize=4096)
def _digest_of(path: str, mtime_ns: int, size: int, inode: int) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "missing"


def shared_sources_digest() -> str:
    """Digest of the code every cell depends on: shared helpers, scripts, the child and the case model."""
    paths = [_PACKAGE_ROOT / p for p in _SHARED_SOURCES] + sorted((_PACKAGE_ROOT / "scripts").glob("*.py"))
    return hashlib.sha256("".join(_file_digest(str(p)) for p in paths).encode()).hexdigest()


def _plain(value: Any) -> Any:
    if is_dataclass(value):
        return {type(value).__name__: _plain(asdict(value))}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def case_digest(case: Case, param: str) -> str:
    """Digest of a case's module source and of one parameter's declaration."""
    module = sys.modules.get(case.probe.__module__)
    source_file = inspect.getsourcefile(module) if module else None
    declaration = {
        "param": _plain(case.param(param)),
        "env": _plain(case.env),
        "stdin": case.stdin,
        "fresh": case.fresh_interpreter,
        "timeout": case.timeout_s,
    }
    text = _file_digest(source_file or "") + json.dumps(declaration, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def environment_digest(packages: dict[str, str], python_version: str) -> str:
    """Digest of a target environment's installed distributions and its Python version."""
    text = json.dumps({"packages": packages, "python": python_version}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def cell_key(case: Case, param: str, environment: str) -> str:
    """The reuse key of one cell on one environment (given by `environment_digest`)."""
    parts = [case_digest(case, param), shared_sources_digest(), environment, conformance.__version__]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]
