"""The workload model: a pattern JAX users run, measured per release for speed, memory and compilations.

A case module declares workloads with its section's `workload` decorator, beside its cases::

    SECTION = Section("§P", "Performance")

    @SECTION.workload(
        rows=["perf.mlp_train_step"],
        claim="A jitted MLP training step with an SGD update: matmuls, their gradients and a tree update.",
    )
    def mlp_train_step():
        import jax, jax.numpy as jnp
        ...
        return step, (params, batch)          # or (fn, args, kwargs)

The decorated function builds the workload: it returns `(fn, args)` or `(fn, args, kwargs)`, a function to
jit and its example arguments (`args` a tuple, `kwargs` a mapping). `jit=False` says `fn` is called as it is
(it jits what it calls itself, as a Python loop of small jitted calls does); the exact HLO metrics are then
absent. The builder runs in the child (`conformance.perf.child`), after jax is imported, in a process of the
workload's own. `timeout_s` (default 120, at most `MAX_TIMEOUT_S`) bounds one measurement of it: the builder, the
first call, the compilation and the steady calls; past it the workload's process is stopped and the workload gets
the status `timeout` for that release. A wrong declaration raises `CaseDeclarationError` at import, one line naming
the workload. Standard library only.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

WORKLOAD_ROW = re.compile(r"[a-z0-9_.]+")
MAX_TIMEOUT_S = 3600.0


@dataclass(frozen=True)
class Workload:
    """One declared workload: its id (`<module>.<function>`), where it is documented, what it exercises."""

    id: str
    section: str
    heading: str
    claim: str
    rows: tuple[str, ...]
    build: Callable[[], Any]
    notes: str = ""
    package: str = ""
    jit: bool = True
    timeout_s: float = 120.0

    def source(self) -> str:
        """The builder's source text, shown in the report."""
        try:
            return inspect.getsource(self.build)
        except (OSError, TypeError):
            return ""


_WORKLOADS: dict[tuple[str, str], Workload] = {}


def check_declaration(workload: Workload, error: type[Exception]) -> None:
    """Raise `error` (one line naming the workload) for a declaration that cannot be right."""
    where = workload.id
    if not isinstance(workload.claim, str) or not workload.claim.strip():
        raise error(f"{where}: a workload needs claim=, one sentence of what it exercises")
    if isinstance(workload.rows, (str, bytes)) or not isinstance(workload.rows, Sequence) or not workload.rows:
        raise error(f"{where}: rows= takes a non-empty list of row IDs such as ['perf.mlp_train_step']")
    for row in workload.rows:
        if not isinstance(row, str) or not WORKLOAD_ROW.fullmatch(row):
            raise error(f"{where}: rows= holds {row!r}; row IDs are lower-case words joined by dots")
    if not isinstance(workload.notes, str):
        raise error(f"{where}: notes= takes a string, not {type(workload.notes).__name__}")
    if not isinstance(workload.jit, bool):
        raise error(f"{where}: jit= takes True or False")
    bound = workload.timeout_s
    if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not 0 < bound <= MAX_TIMEOUT_S:  # NaN too
        raise error(
            f"{where}: timeout_s= takes the seconds one measurement of it may last, a number above 0 and "
            f"at most {MAX_TIMEOUT_S:g}, not {bound!r}"
        )
    if workload.build.__name__.startswith("test"):
        raise error(f"{where}: a workload's name must not start with 'test' (pytest would collect it)")
    try:
        wanted = [
            p
            for p in inspect.signature(workload.build).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        wanted = []
    if wanted:
        raise error(f"{where}: a workload's builder takes no argument; it returns (fn, args) or (fn, args, kwargs)")


def register(workload: Workload, error: type[Exception]) -> None:
    """Record a checked workload; a second builder under the same id is refused."""
    check_declaration(workload, error)
    key = (workload.package, workload.id)
    previous = _WORKLOADS.get(key)
    if previous is not None and previous.build.__code__.co_filename != workload.build.__code__.co_filename:
        raise error(f"{workload.id}: declared twice in {workload.package}; rename one")
    _WORKLOADS[key] = workload


def registered(package: str, module: str | None = None) -> list[Workload]:
    """The registered workloads of `package` (of one module when given), in declaration order."""
    return [
        w for (pkg, _), w in _WORKLOADS.items() if pkg == package and (module is None or w.build.__module__ == module)
    ]


def forget(package: str) -> None:
    """Drop the registered workloads of `package` (tests load scratch packages)."""
    for key in [k for k in _WORKLOADS if k[0] == package]:
        del _WORKLOADS[key]


def split_built(built: Any, where: str) -> tuple[Callable[..., Any], tuple[Any, ...], Mapping[str, Any]]:
    """`(fn, args, kwargs)` from what a builder returned; `TypeError` naming the workload when its shape is wrong."""
    if not isinstance(built, tuple) or len(built) not in (2, 3):
        raise TypeError(f"{where}: the builder returned {type(built).__name__}, not (fn, args) or (fn, args, kwargs)")
    fn, args = built[0], built[1]
    kwargs = built[2] if len(built) == 3 else {}
    if not callable(fn):
        raise TypeError(f"{where}: the first item the builder returned is not callable")
    if not isinstance(args, tuple):
        raise TypeError(f"{where}: args must be a tuple, not {type(args).__name__}")
    if not isinstance(kwargs, Mapping):
        raise TypeError(f"{where}: kwargs must be a mapping, not {type(kwargs).__name__}")
    return fn, args, dict(kwargs)
