"""The census of one JAX release's public API, run inside the target environment. Standard library and jax only.

    python -m conformance.api.census --out FILE

In a fresh process it imports `jax`, walks jax's public modules (every submodule whose dotted path has no part
starting with `_`, found with `pkgutil` from `jax.__path__` down, those in `SKIPPED` left out) and reads the config
options (`jax.config`). For every module it lists each name not starting with `_` and each name its deprecation
table (`_deprecations`, served by `jax._src.deprecations.deprecation_getattr`) holds, which `dir()` does not show,
and reads each one as a user would (`getattr`), recording:

- `kind`: module, function, class, constant or config;
- `state` as the release itself reports it: `present`; `deprecated` (reading it warned; `message` is JAX's
  warning, `replacement` the first other `jax.` name the message names); `removed` (reading it raised
  AttributeError; `message` is what the error carries);
- `signature` (`inspect.signature`'s text) and `params` (`[name, kind, default]` each, default `null` when there is
  none, as text with memory addresses taken out) where inspect gives one;
- `origin` (`module.qualname` of a function, class or module) and `alias_of` (for names that are one object within
  this release: the group's canonical path, its origin where that is one of them, else the shortest path).
A removed name's `kind` is null: nothing can be read.

A module that fails to import (an optional package missing, an error at import) is recorded with its error, never
fatal; each import runs under a time bound (`IMPORT_TIMEOUT_S`, where the platform has SIGALRM) with its warnings
recorded. Output is one JSON object (`FORMAT`, `FORMAT_VERSION`) written atomically to FILE.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import pkgutil
import platform
import re
import signal
import sys
import time
import types
import warnings
from typing import Any

FORMAT = "jax-conformance api census"
FORMAT_VERSION = 1
IMPORT_TIMEOUT_S = 60
MAX_MODULES = 3000
MAX_NAMES_PER_MODULE = 5000
MAX_TEXT = 2000
MAX_DEFAULT = 200
MAX_WARNINGS = 20
# Modules that are not API: command-line tools and the test folders some packages ship.
SKIPPED = {"jax.tools": "command-line tools, not an API", "jax.collect_profile": "a command-line script",
           "jax.cloud_tpu_init": "TPU VM start-up code that reads the host's metadata"}
SKIPPED_PARTS = ("tests",)  # and any module named `*_test`
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_JAX_NAME = re.compile(r"\bjax(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


class _ImportTimeout(Exception):
    pass


def _text(value: str, limit: int = MAX_TEXT) -> str:
    value = _ADDRESS.sub("", value)
    return value if len(value) <= limit else value[:limit - 1] + "…"


def replacement_in(message: str, name: str) -> str:
    """The first `jax.` name a deprecation message names that is not `name` itself ('' when none): the
    replacement JAX points to (`jax.tree.map` in "jax.tree_map is deprecated: use jax.tree.map ...")."""
    for found in _JAX_NAME.findall(message or ""):
        found = found.rstrip(".")
        if found != name and not name.startswith(found + "."):
            return found
    return ""


def kind_of(obj: Any) -> str:
    """module, class, function (anything callable that is not a class) or constant."""
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "class"
    try:
        return "function" if callable(obj) else "constant"
    except Exception:  # noqa: BLE001 - a strange object reads as a constant
        return "constant"


def origin_of(obj: Any, kind: str) -> str:
    """`module.qualname` of a function or class, a module's own name; '' for anything else."""
    try:
        if kind == "module":
            return str(obj.__name__)
        if kind in ("function", "class"):
            module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            if isinstance(module, str) and isinstance(qualname, str):
                return f"{module}.{qualname}"
    except Exception:  # noqa: BLE001 - an object whose attributes raise has no origin
        pass
    return ""


def signature_of(obj: Any) -> tuple[str, list[list[Any]]] | None:
    """The signature's text and its parameters as `[name, kind, default-or-None]`, or None when inspect gives none."""
    try:
        sig = inspect.signature(obj)
    except Exception:  # noqa: BLE001 - builtins without text signatures, odd callables
        return None
    params = []
    for param in sig.parameters.values():
        default = None
        if param.default is not inspect.Parameter.empty:
            try:
                default = _text(repr(param.default), MAX_DEFAULT)
            except Exception:  # noqa: BLE001
                default = "<unrepresentable>"
        params.append([param.name, param.kind.name.lower(), default])
    try:
        text = _text(str(sig))
    except Exception:  # noqa: BLE001
        text = ""
    return text, params


def _warning_texts(caught: list[warnings.WarningMessage]) -> list[str]:
    texts = []
    for warned in caught:
        if issubclass(warned.category, (DeprecationWarning, FutureWarning)):
            texts.append(_text(str(warned.message), 500))
    return texts[:MAX_WARNINGS]


def _on_alarm(signum: int, frame: Any) -> None:
    raise _ImportTimeout(f"import did not finish within {IMPORT_TIMEOUT_S}s")


def import_bounded(path: str) -> tuple[Any, str, list[str], float]:
    """Import `path` under the time bound, recording its deprecation warnings: (module or None, error, warnings,
    seconds)."""
    started = time.perf_counter()
    alarm = hasattr(signal, "SIGALRM")
    previous = signal.signal(signal.SIGALRM, _on_alarm) if alarm else None
    module, error = None, ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if alarm:
                signal.alarm(IMPORT_TIMEOUT_S)
            module = importlib.import_module(path)
        except BaseException as exc:  # noqa: BLE001 - SystemExit and the like at import are recorded too
            if isinstance(exc, KeyboardInterrupt):
                raise
            error = _text(f"{type(exc).__name__}: {exc}", 500)
        finally:
            if alarm:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
    return module, error, _warning_texts(caught), time.perf_counter() - started


def read_name(module: Any, path: str, name: str, table: dict) -> dict[str, Any]:
    """One name of a module, read as a user reads it, and its entry (without `alias_of`)."""
    full = f"{path}.{name}"
    entry: dict[str, Any] = {"kind": "constant", "state": "present"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            obj = getattr(module, name)
        except AttributeError as exc:
            entry["state"], entry["message"] = "removed", _text(str(exc))
            obj = None
        except Exception as exc:  # noqa: BLE001 - a lazy attribute that fails to load
            entry["error"], obj = _text(f"{type(exc).__name__}: {exc}", 500), None
    warned = _warning_texts(caught)
    listed = table.get(name)
    if entry["state"] == "present" and (warned or isinstance(listed, tuple)) and name in table:
        entry["state"] = "deprecated"
        entry["message"] = warned[0] if warned else _text(str(listed[0]))
    if entry["state"] == "removed" and isinstance(listed, tuple) and listed and not entry["message"]:
        entry["message"] = _text(str(listed[0]))
    if entry.get("message"):
        replacement = replacement_in(entry["message"], full)
        if replacement:
            entry["replacement"] = replacement
    if entry["state"] == "removed":
        entry["kind"] = None
        return entry
    if "error" in entry:
        return entry
    entry["kind"] = kind_of(obj)
    entry["origin"] = origin_of(obj, entry["kind"])
    if entry["kind"] in ("function", "class"):
        found = signature_of(obj)
        if found is not None:
            entry["signature"], entry["params"] = found
    entry["_id"] = id(obj) if entry["kind"] != "constant" else None
    entry["_obj"] = obj  # kept alive until aliases are found, so ids stay unique
    return entry


def module_names(module: Any, path: str) -> dict[str, dict[str, Any]]:
    """Every public name of a module and every name of its deprecation table, read; its own public submodules
    (walked as modules of their own) left out."""
    try:
        listed = [n for n in dir(module) if isinstance(n, str) and not n.startswith("_")]
    except Exception:  # noqa: BLE001
        listed = []
    table = getattr(module, "__dict__", {}).get("_deprecations")
    table = table if isinstance(table, dict) else {}
    names = sorted(set(listed) | {n for n in table if isinstance(n, str) and not n.startswith("_")})
    found = {}
    for name in names[:MAX_NAMES_PER_MODULE]:
        value = getattr(module, "__dict__", {}).get(name)
        if isinstance(value, types.ModuleType) and value.__name__ == f"{path}.{name}":
            continue  # a submodule: the walk records it
        found[f"{path}.{name}"] = read_name(module, path, name, table)
    return found


def submodules(module: Any, path: str) -> list[str]:
    """The public submodules of a package, sorted."""
    try:
        return sorted(f"{path}.{info.name}" for info in pkgutil.iter_modules(getattr(module, "__path__", None) or [])
                      if not info.name.startswith("_") and info.name not in SKIPPED_PARTS
                      and not info.name.endswith("_test"))
    except Exception:  # noqa: BLE001
        return []


def config_options(jax: Any) -> dict[str, dict[str, Any]]:
    """The config options: `jax.config.<option>` entries with the value of this fresh process and the environment
    variable that sets it (its name upper-cased)."""
    config = getattr(jax, "config", None)
    holders = getattr(config, "_value_holders", None)
    names = set(holders) if isinstance(holders, dict) else set()
    values = getattr(config, "values", None)
    names |= set(values) if isinstance(values, dict) else set()
    found = {}
    for name in sorted(n for n in names if isinstance(n, str)):
        try:
            value = _text(repr(getattr(config, name)), MAX_DEFAULT)
        except Exception as exc:  # noqa: BLE001 - a flag whose read raises is still a flag
            value = _text(f"<{type(exc).__name__}>", MAX_DEFAULT)
        found[f"jax.config.{name}"] = {"kind": "config", "state": "present", "value": value, "env": name.upper()}
    return found


def walk() -> dict[str, Any]:
    """The whole census of the running interpreter's jax (without the environment part)."""
    modules: dict[str, dict[str, Any]] = {}
    names: dict[str, dict[str, Any]] = {}
    queue, seen = ["jax"], {"jax"}
    while queue and len(modules) < MAX_MODULES:
        path = queue.pop(0)
        if path in SKIPPED:
            modules[path] = {"status": "skipped", "reason": SKIPPED[path]}
            continue
        module, error, warned, seconds = import_bounded(path)
        record: dict[str, Any] = {"status": "failed" if module is None else "ok", "seconds": round(seconds, 3)}
        if error:
            record["error"] = error
        if warned:
            record["warnings"] = warned
        modules[path] = record
        if module is None:
            continue
        entry: dict[str, Any] = {"kind": "module", "state": "present", "origin": path}
        own = [w for w in warned if path in w]
        if own:
            entry["state"], entry["message"] = "deprecated", own[0]
            if replacement_in(own[0], path):
                entry["replacement"] = replacement_in(own[0], path)
        names[path] = entry
        found = module_names(module, path)
        record["names"] = len(found)
        names.update(found)
        for child in submodules(module, path):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    import jax

    names.update(config_options(jax))
    mark_aliases(names)
    return {"modules": modules, "names": dict(sorted(names.items()))}


def mark_aliases(names: dict[str, dict[str, Any]]) -> None:
    """`alias_of` on every name of a group of two or more that are one object (by id, within this process): the
    group's canonical path, its origin where that is one of the group, else the shortest (fewest dots, then
    shortest, then first in sorted order)."""
    groups: dict[int, list[str]] = {}
    for path in sorted(names):
        entry = names[path]
        ident = entry.pop("_id", None)
        entry.pop("_obj", None)
        if ident is not None:
            groups.setdefault(ident, []).append(path)
    for paths in groups.values():
        if len(paths) < 2:
            continue
        origin = names[paths[0]].get("origin")
        canonical = origin if origin in paths else min(paths, key=lambda p: (p.count("."), len(p), p))
        for path in paths:
            if path != canonical:
                names[path]["alias_of"] = canonical


def environment() -> dict[str, Any]:
    """Python, jax, jaxlib, the platform and the installed distributions (as `conformance.child.envinfo` says)."""
    from conformance.child.envinfo import distribution_version, installed_packages, platform_tag

    import jax

    try:
        backend = jax.default_backend()
    except Exception:  # noqa: BLE001 - no backend starts: the census stands, the platform is the host's
        backend = "cpu"
    return {"python": platform.python_version(), "jax": distribution_version("jax") or jax.__version__,
            "jaxlib": distribution_version("jaxlib"), "platform": platform_tag(platform.system(), platform.machine(),
                                                                                backend),
            "packages": installed_packages()}


def census() -> dict[str, Any]:
    """The census file's content."""
    started = time.perf_counter()
    found = walk()
    described = environment()
    return {"format": FORMAT, "format_version": FORMAT_VERSION, **described, **found,
            "census_seconds": round(time.perf_counter() - started, 3)}


def main(argv: list[str] | None = None) -> int:
    """Write the census to --out."""
    parser = argparse.ArgumentParser(prog="python -m conformance.api.census")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    payload = census()
    text = json.dumps(payload, allow_nan=False, separators=(",", ":"), sort_keys=False)
    temp = f"{args.out}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8", errors="backslashreplace") as out:
        out.write(text)
    os.replace(temp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
