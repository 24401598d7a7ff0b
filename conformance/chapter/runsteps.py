"""Inside the target environment, for the chapter runner: what an exception says, whether it is the one the page
states, and which global settings a block changed. Standard library only (and jax, when the chapter imported it).

- `summary(exc, filename)`: the exception's class and the classes it is an instance of, the first line of its
  message that is not `Traceback (most recent call last):` (cut at a word, with `…`), the block's line of the
  top-level statement that raised it (the outermost frame in the block's own file), and for an error raised in a
  callback (JAX wraps the callback's traceback into its message) the last line of that traceback: the callback's own
  exception (`SystemExit: 0` when `jax.debug.breakpoint()` read end-of-input).
- `is_stated(exc, name, namespace)`: the page states `name` (`ValueError`, `jax.errors.ConcretizationTypeError`);
  the exception is an instance of that class (a subclass counts) when the name resolves to a class in the block's
  namespace, the builtins or `jax.errors`; otherwise when a class of its MRO has that name.
- `SettingsWatch`: JAX's configuration values and the environment variables after each block, so the record says
  which block set `jax_debug_nans` (the values right after `import jax` finished are the starting point: a watch
  on the import, since a block may import jax and change a flag in the same breath).
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import os
import re
import sys
import traceback
from typing import Any

MESSAGE_CHARS = 300
_TRACEBACK = "Traceback (most recent call last):"


def cut(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` at most `limit` characters long, cut at a word boundary with `…` (never inside a word)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + " …"


def first_line(text: str) -> str:
    """The first line of a message that says something: not blank, not `Traceback (most recent call last):` (a
    message that starts a traceback mid-line keeps what comes before it)."""
    for line in text.strip().splitlines():
        line = line.split(_TRACEBACK)[0].rstrip() if _TRACEBACK in line else line
        if line.strip():
            return cut(line.strip())
    return ""


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')


def callback_exception(text: str) -> str:
    """The last line of a traceback embedded in a message (an error raised in a callback: `SystemExit: 0`) and the
    frame it was raised in (`in do_quit, jax/_src/debugger/cli_debugger.py:146`), or ''."""
    if _TRACEBACK not in text:
        return ""
    tail = text.split(_TRACEBACK)[-1].strip().splitlines()
    last = next((line.strip() for line in reversed(tail) if line.strip() and not line.startswith("  ")), "")
    frames = [found for found in map(_FRAME.match, tail) if found]
    if frames:
        where = frames[-1].group(1).replace("\\", "/")
        where = where.split("site-packages/")[-1] if "site-packages/" in where else where.rsplit("/", 1)[-1]
        last += f" (in {frames[-1].group(3)}, {where}:{frames[-1].group(2)})"
    return cut(last, 240)


def raising_line(exc: BaseException, filename: str) -> int:
    """The block's line of its top-level statement that raised (the outermost frame in the block's own file: a
    function the block defines may raise further in), 0 when none."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return int(exc.lineno or 0)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    return int(frames[0].lineno or 0) if frames else 0


def summary(exc: BaseException, filename: str) -> dict[str, Any]:
    """What the record keeps of an exception (see the module's docstring)."""
    text = str(exc)
    found: dict[str, Any] = {
        "exception": type(exc).__name__,
        "mro": [c.__name__ for c in type(exc).__mro__],
        "message": first_line(text),
        "line": raising_line(exc, filename),
    }
    inner = callback_exception(text)
    if inner:
        found["callback"] = inner
    return found


def _resolve(name: str, namespace: dict[str, Any]) -> Any:
    parts = name.split(".")
    jax = sys.modules.get("jax")
    errors = getattr(jax, "errors", None) if jax is not None else None
    for root in (namespace, vars(builtins), vars(errors) if errors is not None else {}):
        if parts[0] in root:
            value = root[parts[0]]
            try:
                for part in parts[1:]:
                    value = getattr(value, part)
            except AttributeError:
                continue
            if isinstance(value, type) and issubclass(value, BaseException):
                return value
    return None


def is_stated(exc: BaseException, name: str, namespace: dict[str, Any]) -> bool:
    """Whether `exc` is an instance of the class the page states (see the module's docstring)."""
    if name == "*":
        return True
    stated = _resolve(name, namespace)
    if stated is not None:
        return isinstance(exc, stated)
    last = name.rsplit(".", 1)[-1]
    return any(cls.__name__ == last for cls in type(exc).__mro__)


def _config_values() -> dict[str, str] | None:
    jax = sys.modules.get("jax")
    config = getattr(jax, "config", None) if jax is not None else None
    if config is None:
        return None
    try:
        values = getattr(config, "values", None)
        if not isinstance(values, dict):
            holders = getattr(config, "_value_holders", {}) or {}
            values = {name: getattr(holder, "value", None) for name, holder in holders.items()}
        return {str(name): repr(value)[:200] for name, value in values.items()}
    except Exception:  # noqa: BLE001 - a config we cannot read records nothing
        return None


class _ImportWatch(importlib.abc.MetaPathFinder):
    """Calls `done()` once the `jax` package has finished importing (the starting values of its config)."""

    def __init__(self, done: Any) -> None:
        self.done = done

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "jax" or self.done is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = getattr(spec, "loader", None) if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run, done = loader.exec_module, self.done
        self.done = None

        def exec_module(module: Any) -> None:
            run(module)
            done()

        loader.exec_module = exec_module
        return spec


class SettingsWatch:
    """JAX's config values and the environment, compared after each block with the values before it."""

    def __init__(self) -> None:
        self.environ = dict(os.environ)
        self.config: dict[str, str] | None = None
        sys.meta_path.insert(0, _ImportWatch(self._started))

    def _started(self) -> None:
        if self.config is None:
            self.config = _config_values()

    def changes(self) -> dict[str, Any]:
        """What changed since the last call, each as [before, after]: `{"config": {name: [repr, repr]}, "environ":
        {name: [value or None, value or None]}}`."""
        found: dict[str, Any] = {}
        now = _config_values()
        if now is not None:
            before = self.config if self.config is not None else now
            changed = {k: [before.get(k), v] for k, v in sorted(now.items()) if before.get(k) != v}
            if changed:
                found["config"] = changed
            self.config = now
        environ = dict(os.environ)
        changed_env = {
            k: [_short(self.environ.get(k)), _short(environ.get(k))]
            for k in sorted(set(environ) | set(self.environ))
            if environ.get(k) != self.environ.get(k)
        }
        if changed_env:
            found["environ"] = changed_env
        self.environ = environ
        return found


def _short(value: str | None) -> str | None:
    return value[:200] if value is not None else None
