"""Recording the deprecation warnings a probe triggers, in the child. Standard library only.

While a probe runs, every `DeprecationWarning` and `FutureWarning` it triggers is recorded (its
category, message, the module the warning points at, and the JAX deprecation it comes from) instead
of being printed: those two categories are set to `always` for the run, so a warning jax would show
once, or hide as Python hides DeprecationWarnings by default, is seen every time. Other warnings are
shown as before. A warning raised while a module body runs (the first `import jax` inside a probe, say) is left
out: a forked cell finds jax imported already, a spawned one imports it, and both must observe the same. A probe
that records warnings itself (`warnings.catch_warnings(record=True)`) keeps
the ones it catches; those do not reach this recorder.

The JAX deprecation is read from the call stack at the moment of the warning: `jax._src.deprecations.warn`
holds its `deprecation_id` (`jax-numpy-astype-complex-to-real`), and the `__getattr__` of a module's
`_deprecations` table (`deprecation_getattr`) holds the module and the attribute (`jax.core.pytype_aval_mappings`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Any, Iterator

CATEGORIES = (DeprecationWarning, FutureWarning)
MESSAGE_CHARS = 500
MAX_WARNINGS = 50
_DEPRECATIONS_FILE = os.path.join("jax", "_src", "deprecations.py")


def _module_of(filename: str) -> str:
    """The name of the loaded module whose file is `filename` (else the file's name)."""
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) == filename:
            return name
    return os.path.basename(filename)


def raised_by_an_import(frame: Any) -> bool:
    """Whether a module body (`<module>`) runs between `frame` and the probe's call (`Case.run_probe`)."""
    while frame is not None:
        code = frame.f_code
        # `Case.run_probe` lives in core/model.py (core/case.py re-exports it); tests/test_warnings_recorded.py
        # fails if it moves without this line.
        if code.co_name == "run_probe" and code.co_filename.endswith(os.path.join("core", "model.py")):
            return False
        if code.co_name == "<module>":
            return True
        frame = frame.f_back
    return False


def jax_deprecation(frame: Any) -> str:
    """The JAX deprecation a warning raised below `frame` comes from: a registered deprecation's id, or
    `module.attribute` of a deprecated module attribute; '' when it comes from elsewhere."""
    while frame is not None:
        if frame.f_code.co_filename.endswith(_DEPRECATIONS_FILE):
            local = frame.f_locals
            if isinstance(local.get("deprecation_id"), str):
                return local["deprecation_id"]
            if isinstance(local.get("name"), str) and isinstance(local.get("module"), str):
                return f"{local['module']}.{local['name']}"
        frame = frame.f_back
    return ""


@contextlib.contextmanager
def recording_warnings() -> Iterator[list[dict[str, str]]]:
    """Record the DeprecationWarnings and FutureWarnings raised inside the block (each distinct one once, at most
    `MAX_WARNINGS`); the list it yields fills as they come."""
    found: list[dict[str, str]] = []
    with warnings.catch_warnings():
        shown = warnings.showwarning
        for category in CATEGORIES:
            warnings.filterwarnings("always", category=category)

        def record(message, category, filename, lineno, file=None, line=None):  # noqa: ANN001 - warnings' signature
            if not issubclass(category, CATEGORIES):
                return shown(message, category, filename, lineno, file, line)
            caller = sys._getframe(1)
            if raised_by_an_import(caller):
                return None
            entry = {
                "category": category.__name__,
                "message": str(message)[:MESSAGE_CHARS],
                "module": _module_of(filename),
                "deprecation": jax_deprecation(caller),
            }
            if entry not in found and len(found) < MAX_WARNINGS:
                found.append(entry)
            return None

        warnings.showwarning = record
        yield found
