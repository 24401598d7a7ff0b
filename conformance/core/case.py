"""The case model (case API v2): how a documented behaviour is declared, checked at import, and registered.

A case module (one per chapter section) declares its section once and its cases with
that section's decorator::

    SECTION = Section("§5", "Compilation and speed")

    @SECTION.case(
        rows=["compile.cache_size.shared"],
        claim="Every jit wrapper of one function reports the same _cache_size().",
        expect=Expect({"new_wrapper": 0}),
    )
    def cache_size_shared():
        import jax
        ...
        return Observation({"new_wrapper": 0}, details={"raw": ...})

A parametrised case declares each parameter with its rows, expectation and known-issue
status together (`Param`). Where a cell's status changes from one JAX release to another, a
`Change` (on the case or on a `Param`) says in which release, why, and on what evidence. A wrong declaration
raises `CaseDeclarationError` at import, with one line naming the case. Standard library only: the child imports
this module in target environments that hold nothing but jax, jaxlib and numpy.

This module is the case API's one import path, and holds the decorators (`Section.case`, `Section.workload`); the
rest lives beside it and is re-exported here under the same names: the model in `core/model.py`, the import-time
checks in `core/validation.py`, the registry and the loader in `core/registry.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from conformance.core import workload as workload_model
from conformance.core.model import (
    DEFAULT_CASE_PACKAGE,
    NO_PARAM,
    PARAM_NAME,
    RELEASE,
    SAMPLE_PLATFORMS,
    Case,
    CaseDeclarationError,
    Change,
    Expect,
    Observation,
    Param,
    Skip,
    Unsupported,
    folder_namespace,
    namespaced_row,
)

# `_REGISTRY` too, though private: tests and scratch case packages read and clean the one registry through here.
from conformance.core.registry import _REGISTRY  # noqa: F401 - re-exported, as said above
from conformance.core.registry import (
    _register,
    case_modules,
    find_case,
    find_workload,
    forget_package,
    import_failure,
    load_cases,
    load_module_cases,
    load_workloads,
    section_order,
)
from conformance.core.validation import declared_params, validate

__all__ = [
    "DEFAULT_CASE_PACKAGE",
    "NO_PARAM",
    "PARAM_NAME",
    "RELEASE",
    "SAMPLE_PLATFORMS",
    "Case",
    "CaseDeclarationError",
    "Change",
    "Expect",
    "Observation",
    "Param",
    "Section",
    "Skip",
    "Unsupported",
    "case_modules",
    "find_case",
    "find_workload",
    "folder_namespace",
    "forget_package",
    "import_failure",
    "load_cases",
    "load_module_cases",
    "load_workloads",
    "namespaced_row",
    "section_order",
    "validate",
]


@dataclass(frozen=True)
class Section:
    """A chapter section, declared once per case module; its `case` method declares that module's cases."""

    number: str
    title: str

    @property
    def label(self) -> str:
        """`§3 Finding NaNs`, as the report shows it."""
        return f"{self.number} {self.title}"

    def case(
        self,
        *,
        claim: str,
        rows: Sequence[str] | None = None,
        expect: Expect | None = None,
        known_issue: bool | tuple[str, ...] = False,
        params: Sequence[Param] | None = None,
        subsection: str = "",
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        fresh_interpreter: str = "",
        timeout_s: float = 120.0,
        notes: str = "",
        discrepancy: str = "",
        changes: Sequence[Change] = (),
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare the decorated probe as a case of this section.

        Either `rows`, `expect` (and `known_issue`) for a case without parameters, or
        `params`, a list of `Param`. `subsection` (`"3.1"`) refines where in the section
        the behaviour is documented. `discrepancy` (here or on a `Param`) records where the
        chapter's asserted claim is false on the documented release, with what was measured. `fresh_interpreter`
        is the reason the probe needs a newly started interpreter rather than a child forked from one that already
        imported jax (`env` and `stdin` do not need it: the variables are set before that import). `changes`
        (here or on a `Param`) explains each release where a cell's status changes (`Change`).
        """

        def register(probe: Callable[..., Any]) -> Callable[..., Any]:
            module = probe.__module__
            package, _, short_module = module.rpartition(".")
            namespace = folder_namespace(package)
            case_id = (
                f"{namespace}/{short_module}.{probe.__name__}" if namespace else f"{short_module}.{probe.__name__}"
            )
            declared = declared_params(case_id, rows, expect, known_issue, params)
            built = Case(
                id=case_id,
                section=f"§{subsection}" if subsection else self.number,
                heading=self.label,
                claim=claim,
                params=declared,
                probe=probe,
                env=dict(env) if isinstance(env, Mapping) else ({} if env is None else env),
                stdin=stdin,
                fresh_interpreter=fresh_interpreter,
                timeout_s=timeout_s,
                notes=notes,
                package=package or DEFAULT_CASE_PACKAGE,
                discrepancy=discrepancy,
                changes=tuple(changes) if isinstance(changes, (list, tuple)) else changes,
            )
            validate(built)
            built = replace(
                built,
                params=tuple(
                    replace(p, rows=tuple(namespaced_row(namespace, r) if namespace else r for r in p.rows))
                    for p in built.params
                ),
            )
            _register(built)
            return probe

        return register

    def workload(
        self,
        *,
        claim: str,
        rows: Sequence[str],
        subsection: str = "",
        notes: str = "",
        jit: bool = True,
        timeout_s: float = 120.0,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare the decorated builder as a workload of this section (`core.workload`): it returns `(fn, args)`
        or `(fn, args, kwargs)`, measured per release by `jax-conformance perf`, never by `run`. `jit=False` calls
        `fn` as it is (it jits what it calls itself)."""

        def register(build: Callable[..., Any]) -> Callable[..., Any]:
            package, _, short_module = build.__module__.rpartition(".")
            namespace = folder_namespace(package)
            workload_id = (
                f"{namespace}/{short_module}.{build.__name__}" if namespace else f"{short_module}.{build.__name__}"
            )
            declared = tuple(rows) if isinstance(rows, (list, tuple)) else rows
            built = workload_model.Workload(
                id=workload_id,
                section=f"§{subsection}" if subsection else self.number,
                heading=self.label,
                claim=claim,
                rows=declared,
                build=build,
                notes=notes,
                package=package or DEFAULT_CASE_PACKAGE,
                jit=jit,
                timeout_s=timeout_s,
            )
            workload_model.register(built, CaseDeclarationError)
            return build

        return register
