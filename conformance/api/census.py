"""The census of one JAX release's public API, run inside the target environment. Standard library and jax only.

    python -m conformance.api.census --out FILE

    python -m conformance.api.census --out FILE --probe NAMES.json   # also read these names (of other releases)
    python -m conformance.api.census --out FILE --private NAMES.json  # only these private names (`jax._src...`)

In a fresh process it imports `jax`, walks jax's public modules (every submodule whose dotted path has no part
starting with `_`, found with `pkgutil` from `jax.__path__` down, those in `SKIPPED` left out) and reads the config
options (`jax.config`). For every module it lists each public name and each name its deprecation table
(`_deprecations`, served by `jax._src.deprecations.deprecation_getattr`; where the module deleted it, the table that
function's closure holds) holds, which `dir()` does not show, and reads each one as a user would (`getattr`).
Public means public (`is_public`): listed in the module's `__all__` where it has one; else re-exported on purpose
(`from m import x as x`), a jax object (a public jax module, or an object whose `__module__` is under jax or
jaxlib), a function the module binds by assignment, or a plain constant the module defines; a foreign object it
imports for its own use (stdlib, numpy, typing, a `jax._src` module) is left out. Names of `--probe` (those other
releases have) that the walk did not find are read with `getattr` too, and recorded with `probed: true` where they
resolve. For each name it records:

- `kind`: module, function, class, constant or config;
- `state` as the release itself reports it: `present`; `deprecated` (reading it warned; `message` is JAX's
  warning, `replacement` the first other `jax.` name the message names); `removed` (reading it raised
  AttributeError; `message` is what the error carries);
- `signature` (`inspect.signature`'s text) and `params` (`[name, kind, default]` each, default `null` when there is
  none, as text with memory addresses taken out) where inspect gives one;
- `keywords`: each parameter JAX deprecated or removed (its default is JAX's `DeprecatedArg` sentinel, or it
  defaults to None and its `if param is not None:` branch warns or raises saying so), as JAX handles it when passed
  (read from the function's source, never called): `{"state": "removed" | "deprecated", "effect": "raises
  ValueError" | "warns" | "unknown", "message": JAX's text}`;
- `positional`: where passing by position what a `*args` catches warns (`if args:` warns that it is deprecated),
  `{"after": N, "state": "deprecated", "effect": "warns", "message"}`, N the positional parameters before it;
- for a config option JAX's config source declares deprecated (`config_deprecations`): `state` deprecated,
  `message`, `effect` and `condition`;
- `origin` (`module.qualname` of a function, class or module) and `alias_of` (for names that are one object within
  this release: the group's canonical path, its origin where that is one of them, else the shortest path).
A removed name's `kind` is null: nothing can be read.

A module that fails to import (an optional package missing, an error at import) is recorded with its error, never
fatal; each import runs under a time bound (`IMPORT_TIMEOUT_S`, where the platform has SIGALRM) with its warnings
recorded. Output is one JSON object (`FORMAT`, `FORMAT_VERSION`) written atomically to FILE.
"""

from __future__ import annotations

import ast
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
FORMAT_VERSION = 3
IMPORT_TIMEOUT_S = 60
MAX_MODULES = 3000
MAX_NAMES_PER_MODULE = 5000
MAX_TEXT = 2000
MAX_DEFAULT = 200
MAX_WARNINGS = 20
# Modules that are not API: command-line tools and the test folders some packages ship.
# (`jax.cloud_tpu_init` is walked: importing it only binds the start-up function, which is never called.)
SKIPPED = {"jax.tools": "command-line tools, not an API", "jax.collect_profile": "a command-line script"}
SKIPPED_PARTS = ("tests",)  # and any module named `*_test`
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_JAX_NAME = re.compile(r"\bjax(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PLAIN = (int, float, complex, str, bytes, bool, type(None))
# Values a module's own source assigns that are its names whatever their type: stax's layers are tuples of two
# functions (`Relu = elementwise(relu)`).
_ASSIGNED = (*_PLAIN, tuple, list, dict, set, frozenset)
_ROUTINES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType)
SENTINEL = "DeprecatedArg"  # jax._src.typing.DeprecatedArg: the default of a parameter JAX deprecated or removed


class _ImportTimeout(Exception):
    pass


def _text(value: str, limit: int = MAX_TEXT) -> str:
    value = _ADDRESS.sub("", value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


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
        if type(param.default).__name__ == SENTINEL:
            default = "<sentinel>"  # kept apart while the sentinel is read; stored as its repr
        elif param.default is not inspect.Parameter.empty:
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
    """The deprecation warnings caught: a DeprecationWarning or FutureWarning, or any warning whose text says
    deprecated (jax 0.7.1's `jax.experimental.host_callback` warns with a plain UserWarning)."""
    texts = []
    for warned in caught:
        text = str(warned.message)
        if issubclass(warned.category, (DeprecationWarning, FutureWarning)) or "deprecat" in text.lower():
            texts.append(_text(text, 500))
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


def _under_jax(module_name: Any) -> bool:
    return isinstance(module_name, str) and (module_name.split(".")[0] in ("jax", "jaxlib"))


def _public_module(module_name: Any) -> bool:
    return _under_jax(module_name) and not any(p.startswith("_") for p in module_name.split("."))


def defined_under_jax(obj: Any) -> bool:
    """Whether an object belongs to jax: a public jax module, or a function, class or instance whose (class's)
    `__module__` is under jax (or jaxlib). A plain constant (a number, text, None) belongs to no one."""
    try:
        if isinstance(obj, types.ModuleType):
            return _public_module(obj.__name__)
        if isinstance(obj, _PLAIN):
            return False
        owner = obj if isinstance(obj, type) or callable(obj) else type(obj)
        return _under_jax(getattr(owner, "__module__", None)) or _under_jax(getattr(type(obj), "__module__", None))
    except Exception:  # noqa: BLE001 - an object whose attributes raise is not judged foreign
        return True


def source_bindings(module: Any) -> tuple[set[str], set[str]] | None:
    """What a module's own source binds at its top level: (names re-exported on purpose, `from m import x as x` or
    `import a.x as x`; names defined there, by def, class or assignment). None when there is no source to read."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except Exception:  # noqa: BLE001 - a compiled or odd module: no source
        return None
    exported: set[str] = set()
    defined: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody"):
                pending += getattr(node, block, [])
            for handler in getattr(node, "handlers", []):
                pending += handler.body
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            exported |= {a.asname for a in node.names if a.asname and a.asname == a.name.split(".")[-1]}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined |= {t.id for t in targets if isinstance(t, ast.Name)}
    return exported, defined


def is_public(name: str, obj: Any, exports: list[str] | None, bound: tuple[set[str], set[str]] | None) -> bool:
    """Public means public: listed in the module's `__all__` where it has one; else re-exported on purpose in its
    source, a jax object (`defined_under_jax`), a function the module's source binds by assignment (jax 0.6.2's
    `jax.extend.backend.add_clear_backends_callback = _util.cache_clearing_funs.add`, a builtin method), or a plain
    constant or container (a tuple, a list, a dict: stax's layers) the module's source assigns. A foreign object the
    module imports for its own use (stdlib, numpy, typing, a `jax._src` module) is not, nor a module it imports without
    re-exporting it (`import jax` in `jax.lax`'s source does not make `jax.lax.jax` a name)."""
    if exports is not None:
        return name in exports
    exported, defined = bound if bound is not None else (set(), set())
    if name in exported:
        return True
    if isinstance(obj, types.ModuleType) and bound is not None:
        return False  # a module imported for the module's own use (`import jax`, `import jax.numpy as jnp`)
    if defined_under_jax(obj):
        return True
    if name in defined and isinstance(obj, _ROUTINES):
        return True  # a function the module binds by assignment (`add_x = _registry.add`): its own, not imported
    if isinstance(obj, _PLAIN):
        return bound is None or name in defined
    return isinstance(obj, _ASSIGNED) and name in defined


def deprecation_table(module: Any) -> dict:
    """The module's deprecation table: `_deprecations`, or, where the module deleted it after installing
    `__getattr__` (jax 0.6.0's `jax.tree_util`), the table `deprecation_getattr`'s closure still holds."""
    table = getattr(module, "__dict__", {}).get("_deprecations")
    if isinstance(table, dict):
        return table
    hook = getattr(module, "__dict__", {}).get("__getattr__")
    for fn in (hook, getattr(hook, "__wrapped__", None)):
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, dict) and value and all(isinstance(v, tuple) for v in value.values()):
                return value
    return {}


def _strings(node: ast.AST | None) -> str:
    """The text of string constants (concatenated, in a tuple or an f-string's plain parts)."""
    if node is None:
        return ""
    return "".join(n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str))


def _sentinel_effect(body: list[ast.stmt]) -> dict[str, str] | None:
    return next(_effects(body), None)


def _deprecation_effect(body: list[ast.stmt]) -> dict[str, str] | None:
    """The first raise or warning of a branch whose text says deprecated or removed (a check before it, as
    `jnp.array`'s "takes at most 5 positional arguments", is not the deprecation)."""
    return next((effect for effect in _effects(body) if _says_deprecated(effect)), None)


def _effects(body: list[ast.stmt]):
    """Each raise (`removed`, the exception and message) and warning (`deprecated`, its text) of a branch, in
    order."""
    for node in body:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Raise) and inner.exc is not None:
                call = inner.exc if isinstance(inner.exc, ast.Call) else None
                kind = ast.unparse(call.func) if call else ast.unparse(inner.exc)
                message = _strings(call.args[0]) if call and call.args else ""
                yield {"state": "removed", "effect": f"raises {kind}", "message": " ".join(message.split())}
            if isinstance(inner, ast.Call) and ast.unparse(inner.func).split(".")[-1] == "warn":
                texts = [_strings(a) for a in inner.args if _strings(a)]
                message = max(texts, key=len) if texts else ""
                yield {"state": "deprecated", "effect": "warns", "message": " ".join(message.split())}


_DEPRECATION_WORDS = ("deprecat", "removed", "no longer")


def _says_deprecated(effect: dict[str, str] | None) -> bool:
    return effect is not None and any(w in effect["message"].lower() for w in _DEPRECATION_WORDS)


def _may_warn_of_deprecation(fn: Any) -> bool:
    """A cheap look before the source is read: the function's own code holds a text that says deprecated or
    removed."""
    code = getattr(fn, "__code__", None)
    texts = [c for c in getattr(code, "co_consts", ()) if isinstance(c, str)]
    return any(w in " ".join(texts).lower() for w in _DEPRECATION_WORDS)


def _checked_as_passed(test: ast.expr, optional: list[str]) -> str:
    """The parameter a branch's test checks as passed, `P is not None`, where P defaults to None ('' if none)."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id in optional
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return ""


def deprecated_keywords(obj: Any, params: list[list[Any]]) -> dict[str, dict[str, str]]:
    """The parameters JAX deprecated or removed, as JAX handles them when passed, read from the function's own
    source (nothing is called): a parameter whose default is JAX's `DeprecatedArg` sentinel (its
    `if not isinstance(param, DeprecatedArg)` branch), or one defaulting to None whose `if param is not None:`
    branch warns or raises with a message that says deprecated or removed (`jax.lax.linalg.eig(use_magma=)`,
    0.8.0). `removed` where the branch raises (the exception and message), `deprecated` where it warns (the
    warning's text); a sentinel without a readable branch is `deprecated`, effect `unknown`."""
    marked = [p[0] for p in params if p[2] == "<sentinel>"]
    optional = [p[0] for p in params if p[2] == "None" and p[1] in ("positional_or_keyword", "keyword_only")]
    found = {name: {"state": "deprecated", "effect": "unknown", "message": ""} for name in marked}
    try:
        fn = inspect.unwrap(obj)
    except Exception:  # noqa: BLE001 - a wrapper chain that cannot be followed
        return found
    if not marked and not (optional and _may_warn_of_deprecation(fn)):
        return found
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(fn)))
    except Exception:  # noqa: BLE001 - no source: the sentinel alone says deprecated
        return found
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = ast.unparse(node.test)
        for name in marked:
            if f"isinstance({name}, {SENTINEL})" in test and "not " in test:
                effect = _sentinel_effect(node.body)
                if effect is not None and found[name]["effect"] == "unknown":
                    found[name] = effect
        name = _checked_as_passed(node.test, optional)
        if name and name not in found:
            effect = _deprecation_effect(node.body)
            if effect is not None:
                found[name] = effect
    return found


def positional_deprecation(obj: Any, params: list[list[Any]]) -> dict[str, Any] | None:
    """Passing by position what a `*args` catches, where JAX deprecated it: the function's own source has
    `if args:` (the `*args` placed after its positional parameters) warn with a text that says deprecated (jax
    0.7.1's `jax.lax.dot(lhs, rhs, *args, precision=None, ...)`). `{after: the positional parameters before it,
    state: deprecated, effect: warns, message}`, or None. Nothing is called."""
    kinds = [p[1] for p in params]
    if "var_positional" not in kinds:
        return None
    after = kinds.index("var_positional")  # the positional parameters before it
    star = params[after][0]
    try:
        fn = inspect.unwrap(obj)
        if not _may_warn_of_deprecation(fn):
            return None
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(fn)))
    except Exception:  # noqa: BLE001 - no source: nothing is known
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and any(isinstance(n, ast.Name) and n.id == star for n in ast.walk(node.test)):
            effect = next((e for e in _effects(node.body) if e["state"] == "deprecated" and _says_deprecated(e)), None)
            if effect is not None:
                return {"after": after, **effect}
    return None


def callable_fields(obj: Any) -> dict[str, Any]:
    """A function's or class's `signature`, `params`, and the `keywords` and `positional` passing JAX deprecated
    (empty where inspect gives no signature)."""
    found = signature_of(obj)
    if found is None:
        return {}
    fields: dict[str, Any] = {"signature": found[0]}
    keywords = deprecated_keywords(obj, found[1])
    if keywords:
        fields["keywords"] = keywords
    positional = positional_deprecation(obj, found[1])
    if positional:
        fields["positional"] = positional
    fields["params"] = [[p[0], p[1], "Deprecated" if p[2] == "<sentinel>" else p[2]] for p in found[1]]
    return fields


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
        entry.update(callable_fields(obj))
    entry["_id"] = id(obj) if entry["kind"] != "constant" else None
    entry["_obj"] = obj  # kept alive until aliases are found, so ids stay unique
    return entry


def _exports(module: Any) -> list[str] | None:
    exports = getattr(module, "__dict__", {}).get("__all__")
    if isinstance(exports, (list, tuple)) and all(isinstance(n, str) for n in exports):
        return list(exports)
    return None


def module_names(module: Any, path: str) -> dict[str, dict[str, Any]]:
    """Every public name of a module (`is_public`) and every name of its deprecation table, read; its own public
    submodules (walked as modules of their own) left out."""
    try:
        listed = [n for n in dir(module) if isinstance(n, str) and not n.startswith("_")]
    except Exception:  # noqa: BLE001
        listed = []
    table = deprecation_table(module)
    tabled = {n for n in table if isinstance(n, str) and not n.startswith("_")}
    exports, bound = _exports(module), source_bindings(module)
    own = getattr(module, "__dict__", {})
    found = {}
    for name in sorted(set(listed) | tabled)[:MAX_NAMES_PER_MODULE]:
        value = own.get(name)
        if isinstance(value, types.ModuleType) and value.__name__ == f"{path}.{name}":
            continue  # a submodule: the walk records it
        if name not in tabled and name in own and not is_public(name, value, exports, bound):
            continue  # a foreign object the module imported for its own use
        found[f"{path}.{name}"] = read_name(module, path, name, table)
    return found


def probe_names(names: dict[str, dict[str, Any]], modules: dict[str, dict[str, Any]], wanted: list[str]) -> None:
    """Names another release has, read with `getattr` here where the walk did not find them (not in `dir()` nor a
    deprecation table: a module `__getattr__` can still serve them); each one found is added, `probed: true`."""
    for full in wanted:
        if full in names or "." not in full:
            continue
        path, name = full.rsplit(".", 1)
        if name.startswith("_") or (modules.get(path) or {}).get("status") != "ok":
            continue
        module = sys.modules.get(path)
        if module is None:
            continue
        own = getattr(module, "__dict__", {})
        if name in own and not is_public(name, own[name], _exports(module), source_bindings(module)):
            continue  # there, but not public: the walk left it out on purpose
        entry = read_name(module, path, name, {})
        if entry["state"] == "removed" or "error" in entry:
            continue
        entry["probed"] = True
        names[full] = entry


def submodules(module: Any, path: str) -> list[str]:
    """The public submodules of a package, sorted."""
    try:
        return sorted(
            f"{path}.{info.name}"
            for info in pkgutil.iter_modules(getattr(module, "__path__", None) or [])
            if not info.name.startswith("_") and info.name not in SKIPPED_PARTS and not info.name.endswith("_test")
        )
    except Exception:  # noqa: BLE001
        return []


def _warned_in(fn: ast.FunctionDef) -> tuple[str, str] | None:
    """The first warning a validator gives whose text says deprecated, and the test of the `if` around it (''
    where none, or where the test does not read the new value): (message, condition)."""
    argument = fn.args.args[0].arg if fn.args.args else ""
    pending: list[tuple[ast.AST, str]] = [(node, "") for node in fn.body]
    while pending:
        node, condition = pending.pop(0)
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            reads = argument and any(isinstance(n, ast.Name) and n.id == argument for n in ast.walk(node.test))
            pending += [(inner, test if reads else condition) for inner in node.body]
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call) and ast.unparse(inner.func).split(".")[-1] == "warn":
                texts = [_strings(a) for a in inner.args if _strings(a)]
                message = " ".join(max(texts, key=len).split()) if texts else ""
                if "deprecat" in message.lower():
                    return message, condition
    return None


def config_deprecations(source: str) -> dict[str, dict[str, str]]:
    """The options JAX's config module (`jax/_src/config.py`) declares deprecated, from its source: an option
    whose `validator=` or `extra_validator=` function warns with a text that says deprecated (when it is set, to
    the values the `if` around the warning tests: `condition`), or whose help starts "[deprecated]". Option →
    `{message, effect: "warns when set", condition}` (the help's text, effect "said in its help", for the latter)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    found: dict[str, dict[str, str]] = {}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        name = keywords.get("name")
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.startswith("jax_")):
            continue
        for key in ("validator", "extra_validator"):
            validator = keywords.get(key)
            warned = (
                _warned_in(functions[validator.id])
                if isinstance(validator, ast.Name) and validator.id in functions
                else None
            )
            if warned:
                found[name.value] = {
                    "message": _text(warned[0], 500),
                    "effect": "warns when set",
                    **({"condition": warned[1]} if warned[1] else {}),
                }
                break
        help_text = " ".join(_strings(keywords.get("help")).split())
        if name.value not in found and help_text.lower().startswith("[deprecated]"):
            found[name.value] = {"message": _text(help_text, 500), "effect": "said in its help"}
    return found


def _config_source(config: Any) -> str:
    module = sys.modules.get("jax._src.config") or sys.modules.get(getattr(type(config), "__module__", ""))
    try:
        return inspect.getsource(module) if module is not None else ""
    except Exception:  # noqa: BLE001 - no source to read: no option is read as deprecated
        return ""


def config_options(jax: Any) -> dict[str, dict[str, Any]]:
    """The config options: `jax.config.<option>` entries with the value of this fresh process and the environment
    variable that sets it (its name upper-cased); `deprecated` where JAX's config source declares it so
    (`config_deprecations`: setting it warns), with JAX's message."""
    config = getattr(jax, "config", None)
    holders = getattr(config, "_value_holders", None)
    names = set(holders) if isinstance(holders, dict) else set()
    values = getattr(config, "values", None)
    names |= set(values) if isinstance(values, dict) else set()
    deprecated = config_deprecations(_config_source(config))
    found = {}
    for name in sorted(n for n in names if isinstance(n, str)):
        try:
            value = _text(repr(getattr(config, name)), MAX_DEFAULT)
        except Exception as exc:  # noqa: BLE001 - a flag whose read raises is still a flag
            value = _text(f"<{type(exc).__name__}>", MAX_DEFAULT)
        found[f"jax.config.{name}"] = {"kind": "config", "state": "present", "value": value, "env": name.upper()}
        if name in deprecated:
            found[f"jax.config.{name}"].update(state="deprecated", **deprecated[name])
    return found


def walk(probe: list[str] | None = None) -> dict[str, Any]:
    """The whole census of the running interpreter's jax (without the environment part); `probe`: names of other
    releases to read with `getattr` where the walk did not find them."""
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
    probe_names(names, modules, probe or [])
    mark_aliases(names)
    return {"modules": modules, "names": dict(sorted(names.items()))}


def walk_private(wanted: list[str]) -> dict[str, Any]:
    """The private census (`--private`): only the names listed (uses of `jax._src...` a scanned repository makes),
    each read the same way from the longest prefix that imports as a module, every entry `private: true`."""
    modules: dict[str, dict[str, Any]] = {}
    names: dict[str, dict[str, Any]] = {}
    for full in sorted(set(wanted))[:MAX_NAMES_PER_MODULE]:
        parts = full.split(".")
        for end in range(len(parts), 1, -1):
            path = ".".join(parts[:end])
            if path not in modules:
                module, error, _, seconds = import_bounded(path)
                if module is None and error.startswith("ModuleNotFoundError"):
                    continue  # not a module (an attribute of a shorter prefix), or gone: read from a shorter one
                modules[path] = {
                    "status": "failed" if module is None else "ok",
                    "seconds": round(seconds, 3),
                    "private": True,
                    **({"error": error} if error else {}),
                }
            if modules[path]["status"] != "ok":
                break
            names.setdefault(path, {"kind": "module", "state": "present", "origin": path, "private": True})
            if end < len(parts):
                entry = read_name(sys.modules[path], path, parts[end], deprecation_table(sys.modules[path]))
                if entry["state"] == "removed" or "error" in entry:
                    break  # not there: absent from the census
                entry["private"] = True
                names[f"{path}.{parts[end]}"] = entry
            break
    mark_aliases(names)
    return {"private": True, "modules": modules, "names": dict(sorted(names.items()))}


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
    return {
        "python": platform.python_version(),
        "jax": distribution_version("jax") or jax.__version__,
        "jaxlib": distribution_version("jaxlib"),
        "platform": platform_tag(platform.system(), platform.machine(), backend),
        "packages": installed_packages(),
    }


def census(probe: list[str] | None = None, private: list[str] | None = None) -> dict[str, Any]:
    """The census file's content (of the `private` names only, where given)."""
    started = time.perf_counter()
    found = walk_private(private) if private is not None else walk(probe)
    described = environment()
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        **described,
        **found,
        "census_seconds": round(time.perf_counter() - started, 3),
    }


OPTIONS = ("--out", "--probe", "--private")
USAGE = "usage: python -m conformance.api.census --out FILE [--probe NAMES.json] [--private NAMES.json]"


def parse_argv(argv: list[str]) -> dict[str, str] | str:
    """The options of the command line (`--out FILE`, `--probe FILE`, `--private FILE`, each at most once, `--out`
    required), or the one line saying what is wrong. Parsed by hand, not with argparse: the parent
    (`conformance.api.store.run_census`) is its only caller and writes exactly these pairs, and `cli.py` stays the
    package's one argparse command line (tests/test_cli_shape.py)."""
    given: dict[str, str] = {}
    pairs = iter(argv)
    for option in pairs:
        name, equals, value = option.partition("=")
        if name not in OPTIONS:
            return f"unknown argument {option!r}; {USAGE}"
        if not equals:
            value = next(pairs, None)
            if value is None:
                return f"{name} needs a FILE; {USAGE}"
        if name in given:
            return f"{name} given twice; {USAGE}"
        given[name] = value
    return given if "--out" in given else f"--out FILE is required; {USAGE}"


def main(argv: list[str] | None = None) -> int:
    """Write the census to --out (a wrong command line: one line on stderr, exit 2)."""
    given = parse_argv(sys.argv[1:] if argv is None else list(argv))
    if isinstance(given, str):
        print(f"conformance.api.census: {given}", file=sys.stderr)
        return 2
    listed_names = {}
    for option in ("probe", "private"):
        if given.get(f"--{option}"):
            with open(given[f"--{option}"], encoding="utf-8") as listed:
                listed_names[option] = [n for n in json.load(listed) if isinstance(n, str)]
    payload = census(listed_names.get("probe", []), listed_names.get("private"))
    text = json.dumps(payload, allow_nan=False, separators=(",", ":"), sort_keys=False)
    temp = f"{given['--out']}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8", errors="backslashreplace") as out:
        out.write(text)
    os.replace(temp, given["--out"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
