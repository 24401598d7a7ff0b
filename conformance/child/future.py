"""`run --future`: run a probe as the next releases will, with JAX's pending removals done now. Standard library only.

When the run sets `JAXCONF_FUTURE=1` (the `+future` target), the child arranges this before the probe:
- every deprecation registered in `jax._src.deprecations` is accelerated (`accelerate(id)`): it raises instead of
  warning, as it will once removed (one registered later is accelerated as it registers);
- every module-level deprecated attribute (a module's `_deprecations` table read by `deprecation_getattr`) is
  removed: reading it raises AttributeError with its deprecation message. This holds for the modules loaded now and,
  through `deprecation_getattr` itself, for those imported later;
- DeprecationWarning and FutureWarning are raised as errors.

It never imports jax itself, so a probe that sets up something before its own `import jax` (an environment
variable, a blocked module) sees what it would without `--future`: where jax is not imported yet (a spawned
cell), a hook does the above as `jax._src.deprecations` finishes loading. A release whose `deprecations` module
lacks part of this API gets what it has.
"""

from __future__ import annotations

import importlib.abc
import sys
import warnings
from typing import Any

FUTURE_VARIABLE = "JAXCONF_FUTURE"
DEPRECATIONS = "jax._src.deprecations"


def _remove_attributes(module: Any) -> int:
    table = getattr(module, "_deprecations", None)
    if not isinstance(table, dict):
        return 0
    removed = 0
    for name, entry in list(table.items()):
        if isinstance(entry, tuple) and len(entry) == 2 and entry[1] is not None:
            table[name] = (entry[0], None)
            removed += 1
    clear = getattr(getattr(module, "__getattr__", None), "cache_clear", None)
    if callable(clear):  # deprecation_getattr caches what it returned: forget it
        clear()
    return removed


def accelerate_all(deprecations: Any) -> dict[str, int]:
    """Do the removals on a loaded `jax._src.deprecations` and the jax modules loaded now; make `register` and
    `deprecation_getattr` do them for what comes later. Returns how many deprecations and attributes it changed."""
    if getattr(deprecations, "_conformance_future", False):
        return {"accelerated": 0, "attributes_removed": 0}
    deprecations._conformance_future = True
    accelerate = getattr(deprecations, "accelerate", None)
    accelerated = 0
    if callable(accelerate):
        for deprecation_id in list(getattr(deprecations, "_registered_deprecations", {}) or {}):
            accelerate(deprecation_id)
            accelerated += 1
        register = getattr(deprecations, "register", None)
        if callable(register):

            def registered_accelerated(deprecation_id: str) -> None:
                register(deprecation_id)
                accelerate(deprecation_id)

            deprecations.register = registered_accelerated
    removed = sum(
        _remove_attributes(module)
        for name, module in list(sys.modules.items())
        if name == "jax" or name.startswith(("jax.", "jaxlib."))
    )
    original = getattr(deprecations, "deprecation_getattr", None)
    if callable(original):

        def deprecation_getattr(module, table):  # a module loaded from now on: its deprecated names are gone
            for name, entry in list(table.items()):
                if isinstance(entry, tuple) and len(entry) == 2:
                    table[name] = (entry[0], None)
            return original(module, table)

        deprecations.deprecation_getattr = deprecation_getattr
    return {"accelerated": accelerated, "attributes_removed": removed}


class _AfterDeprecationsLoad(importlib.abc.MetaPathFinder):
    """Finds `jax._src.deprecations` with the other finders and runs `accelerate_all` on it once it has loaded."""

    def find_spec(self, fullname, path, target=None):  # noqa: ANN001 - the finder protocol
        if fullname != DEPRECATIONS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                loader = spec.loader
                run = loader.exec_module

                def exec_module(module, run=run):  # noqa: ANN001
                    run(module)
                    accelerate_all(module)

                loader.exec_module = exec_module
                return spec
        return None


def enter_future() -> None:
    """Raise deprecation warnings as errors and do JAX's pending removals now, or as soon as jax loads."""
    for category in (DeprecationWarning, FutureWarning):
        warnings.filterwarnings("error", category=category)
    loaded = sys.modules.get(DEPRECATIONS)
    if loaded is not None:
        accelerate_all(loaded)
    elif not any(isinstance(f, _AfterDeprecationsLoad) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDeprecationsLoad())
