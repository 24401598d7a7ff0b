"""`run --future`: run a probe as the next releases will, with JAX's pending removals done now. Standard library only.

When the run sets `JAXCONF_FUTURE=1` (the `+future` target), the child does this before the probe:
- every deprecation registered in `jax._src.deprecations` is accelerated (`accelerate(id)`): it raises instead of
  warning, as it will once removed;
- every module-level deprecated attribute (a module's `_deprecations` table read by `deprecation_getattr`) is
  removed: reading it raises AttributeError with its deprecation message. This holds for the modules loaded now and,
  through `deprecation_getattr` itself, for those the probe imports later;
- DeprecationWarning and FutureWarning are raised as errors.

It imports jax first (a spawned cell would otherwise import it inside its probe). A release whose
`deprecations` module lacks part of this API gets what it has.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

FUTURE_VARIABLE = "JAXCONF_FUTURE"


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


def enter_future() -> dict[str, int]:
    """Accelerate every registered JAX deprecation, remove every deprecated module attribute, and raise deprecation
    warnings as errors; return how many deprecations and attributes it changed."""
    import jax  # noqa: F401 - loads the modules whose deprecation tables are changed below
    from jax._src import deprecations

    accelerated = 0
    accelerate = getattr(deprecations, "accelerate", None)
    for deprecation_id in list(getattr(deprecations, "_registered_deprecations", {}) or {}):
        if callable(accelerate):
            accelerate(deprecation_id)
            accelerated += 1
    removed = sum(_remove_attributes(module) for name, module in list(sys.modules.items())
                  if name == "jax" or name.startswith(("jax.", "jaxlib.")))
    original = getattr(deprecations, "deprecation_getattr", None)
    if callable(original) and not getattr(original, "_conformance_future", False):
        def deprecation_getattr(module, table):  # a module imported from now on: its deprecated names are gone
            for name, entry in list(table.items()):
                if isinstance(entry, tuple) and len(entry) == 2:
                    table[name] = (entry[0], None)
            return original(module, table)

        deprecation_getattr._conformance_future = True  # type: ignore[attr-defined]
        deprecations.deprecation_getattr = deprecation_getattr
    for category in (DeprecationWarning, FutureWarning):
        warnings.filterwarnings("error", category=category)
    return {"accelerated": accelerated, "attributes_removed": removed}
