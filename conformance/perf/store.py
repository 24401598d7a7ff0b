"""Workload samples in the release's result file (schema 5: its top-level `perf` object), reused by key.

`RESULTS/<jax>-<platform>.json` holds, beside its cells, `"perf": {"format": 1, "workloads": {ID: entry}}`; an
entry is `{"key", "claim", "samples": [sample, ...]}` (or with `"error"`, the workload's failure), a sample
`{"round", "session", "taken", "host", "xla_flags", "jax_platforms", "persistent_cache", "metrics", "info"}`.
A workload's samples are reused when its `key` is the one this run would write: the workload's source (its builder
and each function of its module the builder calls, `measured_source`), the perf child's code, the environment
(pins and Python), `XLA_FLAGS` and the host's CPU model and cores all unchanged.
Writing goes through the result store's lock and read rules (`results.store.ResultStore.read_stored`), and a new
file gets a header of its own when the release has no cells stored yet; a stored file's cells are never touched.
"""

from __future__ import annotations

import datetime as dt
import dis
import hashlib
import inspect
import json
import types
from pathlib import Path
from typing import Any, Mapping

from filelock import FileLock

import conformance
from conformance.perf.numbers import checked_workloads
from conformance.readfile import read_regular_text
from conformance.results.load import MAX_RESULT_BYTES
from conformance.results.merge import merge_perf_sections
from conformance.results.schema import SCHEMA_VERSION, RunHeader
from conformance.results.store import ResultStore, write_result_text

PERF_LAUNCHER = "perf (workloads only)"
_CODE_FILES = ("perf/child.py", "perf/hlo.py", "perf/numbers.py", "core/workload.py")


def perf_code_digest() -> str:
    """The digest of the code that measures a workload in the child."""
    digest = hashlib.sha256()
    root = Path(conformance.__file__).parent
    for name in _CODE_FILES:
        digest.update((root / name).read_bytes())
    return digest.hexdigest()


def _global_names(code: types.CodeType) -> set[str]:
    """The global names `code` and the functions nested in it load."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def measured_source(workload: Any) -> str:
    """The source a workload's samples depend on: its builder's, then that of each function of the builder's module
    it loads by global name (a shared input builder), in name order, recursively."""
    build = getattr(workload, "build", None)
    parts, seen, todo = [workload.source()], {build}, [build]
    while todo:
        code, module_globals = getattr(todo.pop(), "__code__", None), getattr(build, "__globals__", {})
        for name in sorted(_global_names(code)) if code else []:
            found = module_globals.get(name)
            if inspect.isfunction(found) and found not in seen and found.__module__ == build.__module__:
                seen.add(found)
                todo.append(found)
                try:
                    parts.append(inspect.getsource(found))
                except (OSError, TypeError):
                    continue
    return "".join(parts)


def workload_key(source: str, environment: str, xla_flags: str, host: Mapping[str, Any]) -> str:
    """The reuse key of a workload's samples (see the module docstring)."""
    text = "|".join(
        [source, perf_code_digest(), environment, xla_flags, str(host.get("cpu_model", "")), str(host.get("cores", ""))]
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def stored_perf(folder: Path, version: str, platform: str) -> dict[str, dict[str, Any]]:
    """The well-formed stored workload entries of a release (or a build's folder), by workload id (`perf.numbers`);
    {} when none is readable."""
    path = ResultStore(Path(folder)).path_for(version, platform)
    try:
        data = json.loads(read_regular_text(path, MAX_RESULT_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    workloads, _ = checked_workloads(data.get("perf") if isinstance(data, dict) else None, str(path))
    return workloads  # a malformed entry is sampled again, and its new entry replaces it


def reusable(entry: Mapping[str, Any] | None, key: str) -> list[dict[str, Any]]:
    """The stored samples of an entry whose key is `key` (without an error), else []."""
    if not entry or entry.get("key") != key or entry.get("error"):
        return []
    return [s for s in entry.get("samples") or [] if isinstance(s, dict) and isinstance(s.get("metrics"), dict)]


def new_result_file(version: str, platform: str, header: Mapping[str, Any]) -> dict[str, Any]:
    """A result file with no cells yet, for a release measured by `perf` before any `run`."""
    head = RunHeader(
        jax=version,
        platform=platform,
        suite_version=conformance.__version__,
        launcher=PERF_LAUNCHER,
        **{k: v for k, v in header.items() if k in ("python", "pins_hash", "source")},
    )
    return {
        "created": dt.datetime.now(dt.timezone.utc).timestamp(),
        "duration": 0.0,
        "exitcode": 0,
        "root": "",
        "environment": {},
        "summary": {"total": 0, "collected": 0},
        "tests": [],
        "jax_conformance": head.to_json(),
    }


def store_perf(
    folder: Path,
    version: str,
    platform: str,
    entries: Mapping[str, Mapping[str, Any]],
    header: Mapping[str, Any] | None = None,
) -> Path:
    """Merge `entries` (by workload id) into the result file of `version` on `platform` in `folder`, under the
    store's lock; stored workloads not measured now are kept, as cells are. Returns the file's path."""
    store = ResultStore(Path(folder))
    store.folder.mkdir(parents=True, exist_ok=True)
    path = store.path_for(version, platform)
    with FileLock(str(store.folder / f".{path.name}.lock")):
        stored, _, _ = store.read_stored(path, version, platform)
        data = stored if stored is not None else new_result_file(version, platform, header or {})
        data["perf"] = merge_perf_sections(data.get("perf"), {"workloads": dict(entries)})
        data["jax_conformance"]["schema_version"] = SCHEMA_VERSION
        write_result_text(path, json.dumps(data, indent=1, allow_nan=False))
    return path
