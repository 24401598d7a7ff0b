"""The case model: how a documented behaviour is declared, and the registry of declared cases.

A case module (one per chapter section, in `conformance.cases`) declares probes with
the `case` decorator. Standard library only: the child imports this module in
target environments that hold nothing but jax, jaxlib and numpy.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

DEFAULT_CASE_PACKAGE = "conformance.cases"
NO_PARAM = ""


class Unsupported(Exception):
    """Raised by a probe when the API its behaviour is about is missing from this JAX version."""


@dataclass(frozen=True)
class Skip:
    """An expectation that says the cell does not apply on a platform, with the reason."""

    reason: str


@dataclass(frozen=True)
class Expect:
    """The documented facts for one cell, optionally different on some platforms.

    `platforms` maps a platform pattern (fnmatch style, e.g. `darwin-arm64`, `*-cuda`)
    to the facts documented there, or to a `Skip`; the first matching pattern wins.
    """

    facts: Mapping[str, Any]
    platforms: Mapping[str, Mapping[str, Any] | Skip] = field(default_factory=dict)

    def on(self, platform: str) -> Mapping[str, Any] | Skip:
        """The expectation in force on `platform`."""
        for pattern, expected in self.platforms.items():
            if fnmatch.fnmatchcase(platform, pattern):
                return expected
        return self.facts


@dataclass(frozen=True)
class Case:
    """One documented behaviour (or a few that one probe observes together)."""

    id: str
    section: str
    claim: str
    rows: Mapping[str, tuple[str, ...]]
    expect: Mapping[str, Expect]
    probe: Callable[..., Any]
    known_issue_params: frozenset[str] = frozenset()
    known_issue_platforms: tuple[str, ...] = ("*",)
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: str | None = None
    timeout_s: float = 120.0
    notes: str = ""

    @property
    def params(self) -> tuple[str, ...]:
        """The parameters, each run as its own cell; `("",)` for a case without any."""
        return tuple(self.expect)

    @property
    def all_rows(self) -> tuple[str, ...]:
        """Every row ID this case checks, in declaration order, without repeats."""
        return tuple(dict.fromkeys(row for rows in self.rows.values() for row in rows))

    def is_known_issue(self, param: str, platform: str | None = None) -> bool:
        """Whether the cell's expectation is a known issue (a bug), so that `conforms` means "still there".

        With a platform, only where the chapter documents the bug to reproduce.
        """
        if param not in self.known_issue_params:
            return False
        return platform is None or any(fnmatch.fnmatchcase(platform, p) for p in self.known_issue_platforms)

    def cell_id(self, param: str) -> str:
        """The identifier of one cell of this case, e.g. `numerics.debug_nans_vmap_miss[vmap]`."""
        return f"{self.id}[{param}]" if param else self.id

    def expected(self, param: str, platform: str) -> Mapping[str, Any] | Skip:
        """The documented expectation for `param` on `platform`."""
        return self.expect[param].on(platform)

    def run_probe(self, param: str) -> Any:
        """Call the probe function for `param` (in the child process)."""
        return self.probe(param) if param else self.probe()

    def source(self) -> str:
        """The probe's source text, shown in the report."""
        try:
            return inspect.getsource(self.probe)
        except (OSError, TypeError):
            return ""


_REGISTRY: dict[str, Case] = {}


def case(
    *,
    rows: list[str] | Mapping[str, list[str]],
    section: str,
    claim: str,
    expect: Expect | Mapping[str, Expect],
    known_issue: bool | list[str] = False,
    known_issue_platforms: tuple[str, ...] = ("*",),
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout_s: float = 120.0,
    notes: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated probe as a case.

    `expect` is one `Expect` for a case without parameters, or a mapping from each
    parameter to its `Expect`. `rows` is a list of row IDs for the whole case, or a
    mapping from parameter to the row IDs that parameter checks. `known_issue` is True
    when every cell documents a known issue (a bug), or the list of parameters that do;
    `known_issue_platforms` (fnmatch patterns) limits that to where the bug is documented to reproduce.
    """

    def register(probe: Callable[..., Any]) -> Callable[..., Any]:
        expectations = {NO_PARAM: expect} if isinstance(expect, Expect) else dict(expect)
        if isinstance(rows, Mapping):
            rows_by_param = {param: tuple(rows[param]) for param in expectations}
        else:
            rows_by_param = {param: tuple(rows) for param in expectations}
        case_id = f"{probe.__module__.rsplit('.', 1)[-1]}.{probe.__name__}"
        _REGISTRY[case_id] = Case(
            id=case_id,
            section=section,
            claim=claim,
            rows=rows_by_param,
            expect=expectations,
            probe=probe,
            known_issue_params=frozenset(
                expectations if known_issue is True else (known_issue or ())),
            known_issue_platforms=tuple(known_issue_platforms),
            env=dict(env or {}),
            stdin=stdin,
            timeout_s=timeout_s,
            notes=notes,
        )
        return probe

    return register


def case_modules(package: str = DEFAULT_CASE_PACKAGE) -> list[str]:
    """The dotted names of the case modules in `package`, in file-name order."""
    pkg = importlib.import_module(package)
    return sorted(
        f"{package}.{info.name}"
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_")
    )


def load_module_cases(module_name: str) -> list[Case]:
    """Import one case module and return the cases it declares, in declaration order."""
    module = importlib.import_module(module_name)
    return [c for c in _REGISTRY.values() if c.probe.__module__ == module.__name__]


def section_order(title: str) -> list[tuple[int, Any]]:
    """Sort key of a section title in chapter order: numbers compare as numbers (§5.3 before §10)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", title)]


def load_cases(package: str = DEFAULT_CASE_PACKAGE) -> list[Case]:
    """Import every case module of `package` and return all their cases, in chapter order."""
    found = [c for name in case_modules(package) for c in load_module_cases(name)]
    return sorted(found, key=lambda c: section_order(c.section))


def find_case(case_id: str, package: str = DEFAULT_CASE_PACKAGE) -> Case:
    """The case called `case_id` (`<module>.<probe>`), importing only its module."""
    module_short = case_id.split(".", 1)[0]
    for found in load_module_cases(f"{package}.{module_short}"):
        if found.id == case_id:
            return found
    raise KeyError(f"no case {case_id!r} in {package}")
