"""The import-time checks of a case declaration: each wrong field or combination is a `CaseDeclarationError`, one
line naming the case (`validate`), and the parameters a decorator was given (`declared_params`).

Standard library only (the child imports it); the row IDs of the built-in cases are checked against the project's
row list (`core.rowlist`).
"""

from __future__ import annotations

import fnmatch
import inspect
import math
from typing import Any, Mapping, Sequence

from conformance.core import rowlist
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
    Param,
    Skip,
)
from conformance.core.observation import json_problem


def declared_params(case_id: str, rows, expect, known_issue, params) -> tuple[Param, ...]:
    """The parameters a `Section.case` decorator was given: its `params=` list checked, or one unnamed `Param` of
    its `rows=`, `expect=` and `known_issue=`; `CaseDeclarationError` when the two forms are mixed or one is wrong."""
    if params is not None:
        if rows is not None or expect is not None or known_issue:
            raise CaseDeclarationError(
                f"{case_id}: give rows, expect and known_issue inside each Param, not beside params="
            )
        if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Sequence):
            raise CaseDeclarationError(f"{case_id}: params= takes a list of Param, not {type(params).__name__}")
        declared = tuple(params)
        if not declared:
            raise CaseDeclarationError(f"{case_id}: params= is empty")
        for p in declared:
            if not isinstance(p, Param):
                raise CaseDeclarationError(f"{case_id}: params= holds {p!r}, not a Param")
            if not isinstance(p.name, str) or not PARAM_NAME.fullmatch(p.name):
                raise CaseDeclarationError(
                    f"{case_id}: parameter name {p.name!r} must be a non-empty word "
                    f"of letters, digits, _ . - (it is part of a `-k` selection)"
                )
        return declared
    if rows is None or expect is None:
        raise CaseDeclarationError(f"{case_id}: a case without params= needs rows= and expect=")
    return (Param(NO_PARAM, rows, expect, known_issue),)


def _patterns_overlap(patterns: Sequence[str]) -> tuple[str, str] | None:
    samples = list(SAMPLE_PLATFORMS) + [p for p in patterns if not any(c in p for c in "*?[")]
    for platform in samples:
        matching = [p for p in patterns if fnmatch.fnmatchcase(platform, p)]
        if len(matching) > 1:
            return matching[0], matching[1]
    return None


def _text_field(value: Any, where: str, field_name: str, what: str, optional: bool = False) -> None:
    if not (isinstance(value, str) or (optional and value is None)):
        raise CaseDeclarationError(f"{where}: {field_name}= takes {what}, not {type(value).__name__}")


def _env_field(env: Any, where: str) -> None:
    if not isinstance(env, Mapping):
        raise CaseDeclarationError(
            f"{where}: env= takes a mapping of variable names to strings, not {type(env).__name__}"
        )
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise CaseDeclarationError(
                f"{where}: env= has the variable name {name!r}; names are non-empty strings without '='"
            )
        if not isinstance(value, str) or "\0" in value:
            raise CaseDeclarationError(
                f"{where}: env= sets {name} to {value!r}; values are strings (write {str(value)!r})"
            )


def _json_field(value: Any, where: str, field_name: str) -> None:
    if not isinstance(value, Mapping):
        raise CaseDeclarationError(
            f"{where}: {field_name} takes a mapping of fact names to JSON values, not {type(value).__name__}"
        )
    problem = json_problem(dict(value), string_keys=True)
    if problem:
        raise CaseDeclarationError(f"{where}: {field_name} is not plain JSON: {problem}")


def _expect_fields(expect: Expect, where: str) -> None:
    _json_field(expect.facts, where, "Expect(facts)")
    _json_field(expect.printed, where, "Expect(printed=)")
    if not isinstance(expect.platforms, Mapping):
        raise CaseDeclarationError(
            f"{where}: Expect(platforms=) takes a mapping of platform patterns, not {type(expect.platforms).__name__}"
        )
    for pattern, override in expect.platforms.items():
        if not isinstance(pattern, str) or not pattern:
            raise CaseDeclarationError(
                f"{where}: Expect(platforms=) has the pattern {pattern!r}; patterns are "
                f"strings such as 'darwin-arm64' or '*-cuda'"
            )
        if not isinstance(override, Skip):
            _json_field(override, where, f"Expect(platforms={{{pattern!r}: ...}})")


def _changes_field(changes: Any, where: str, params: Sequence[str] | None) -> None:
    """Each `Change` of a case (`params` are its parameter names) or of a parameter (`params` None)."""
    if isinstance(changes, (str, bytes, Mapping)) or not isinstance(changes, Sequence):
        raise CaseDeclarationError(f"{where}: changes= takes a list of Change, not {type(changes).__name__}")
    for change in changes:
        if not isinstance(change, Change):
            raise CaseDeclarationError(f"{where}: changes= holds {change!r}, not a Change")
        for name in ("why", "evidence", "since", "versions"):
            if not isinstance(getattr(change, name), str):
                raise CaseDeclarationError(
                    f"{where}: Change({name}=) takes a string, not {type(getattr(change, name)).__name__}"
                )
        if not change.why.strip() or not change.evidence.strip():
            raise CaseDeclarationError(
                f"{where}: a Change needs why= (one sentence) and evidence= (a JAX source "
                f"line, a CHANGELOG entry or a measurement)"
            )
        if bool(change.since) == bool(change.versions):
            raise CaseDeclarationError(f"{where}: a Change takes either since='0.8.0' or versions='0.7.2..0.8.0'")
        if change.since and not RELEASE.fullmatch(change.since):
            raise CaseDeclarationError(f"{where}: Change(since={change.since!r}) is not a release such as '0.8.0'")
        if change.versions:
            low, sep, high = change.versions.partition("..")
            if not (sep and RELEASE.fullmatch(low) and RELEASE.fullmatch(high)) or _release(low) >= _release(high):
                raise CaseDeclarationError(
                    f"{where}: Change(versions={change.versions!r}) is not 'OLD..NEW', two "
                    f"releases, the older first, such as '0.7.2..0.8.0'"
                )
        if isinstance(change.params, (str, bytes)) or not isinstance(change.params, Sequence):
            raise CaseDeclarationError(f"{where}: Change(params=) takes a tuple of parameter names")
        unknown = [p for p in change.params if params is None or p not in params]
        if unknown:
            raise CaseDeclarationError(
                f"{where}: Change(params=) names {unknown[0]!r}, "
                + (
                    "which is not a parameter of the case"
                    if params is not None
                    else "but a Change on a Param applies to that Param only"
                )
            )


def _release(text: str) -> tuple[int, ...]:
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _check_case_fields(case: Case) -> None:
    """The type of every declared field, so that a wrong one is a line naming the case and the field."""
    where = case.id
    _text_field(case.claim, where, "claim", "one sentence")
    _text_field(case.notes, where, "notes", "a string")
    _text_field(case.discrepancy, where, "discrepancy", "what was measured and why, as a sentence")
    _text_field(case.stdin, where, "stdin", "text (a str)", optional=True)
    _env_field(case.env, where)
    _changes_field(case.changes, where, [p.name for p in case.params])
    timeout = case.timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise CaseDeclarationError(f"{where}: timeout_s= takes a finite number of seconds above 0, not {timeout!r}")
    for p in case.params:
        label = f"{where}[{p.name}]" if p.name else where
        if isinstance(p.rows, (str, bytes)) or not isinstance(p.rows, Sequence):
            raise CaseDeclarationError(
                f"{label}: rows= takes a list of row IDs, not {type(p.rows).__name__} (write rows=[{p.rows!r}])"
            )
        for row in p.rows:
            if not isinstance(row, str) or not row.strip():
                raise CaseDeclarationError(f"{label}: rows= holds {row!r}; row IDs are non-empty strings")
        if not isinstance(p.expect, Expect):
            raise CaseDeclarationError(f"{label}: expect= must be an Expect, not {type(p.expect).__name__}")
        _expect_fields(p.expect, label)
        _text_field(p.discrepancy, label, "discrepancy", "what was measured and why, as a sentence")
        _text_field(p.label, label, "label", "a string")
        _text_field(p.stdin, label, "stdin", "text (a str)", optional=True)
        _env_field(p.env, label)
        _changes_field(p.changes, label, None)


def validate(case: Case) -> None:
    """Raise `CaseDeclarationError` (one line naming the case) for a declaration that cannot be right."""
    where = case.id
    _check_case_fields(case)
    names = [p.name for p in case.params]
    if len(set(names)) != len(names):
        raise CaseDeclarationError(f"{where}: a parameter is declared twice ({', '.join(names)})")
    if not case.claim.strip():
        raise CaseDeclarationError(f"{where}: the claim is empty")
    if case.probe.__name__.startswith("test"):
        raise CaseDeclarationError(
            f"{where}: a probe name must not start with 'test' (pytest would collect it as a test of its own)"
        )
    reasons = [case.fresh_interpreter, *(p.fresh_interpreter for p in case.params)]
    if any(not isinstance(reason, str) for reason in reasons):
        raise CaseDeclarationError(f"{where}: fresh_interpreter= takes the reason, as a sentence")
    try:
        signature = inspect.signature(case.probe)
        takes = [
            p
            for p in signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
        wants = 1 if names != [NO_PARAM] else 0
        if len(takes) != wants:
            what = "one argument, the parameter" if wants else "no argument"
            raise CaseDeclarationError(
                f"{where}: the probe takes {len(takes)} required argument(s) but should take {what}"
            )
    except (TypeError, ValueError):
        pass
    known_rows = rowlist.row_ids() if case.package == DEFAULT_CASE_PACKAGE else None
    for p in case.params:
        label = f"{where}[{p.name}]" if p.name else where
        if not p.rows:
            raise CaseDeclarationError(f"{label}: names no row ID")
        for row in p.rows:
            if known_rows is not None and row not in known_rows:
                raise CaseDeclarationError(
                    f"{label}: row {row!r} is not in the project's row list ({rowlist.ROWS_FILE.name})"
                )
        both = sorted(set(p.expect.facts) & set(p.expect.printed))
        if both:
            raise CaseDeclarationError(
                f"{label}: {', '.join(both)} is declared both asserted (facts) and printed; a fact belongs to one tier"
            )
        overlap = _patterns_overlap(list(p.expect.platforms))
        if overlap:
            raise CaseDeclarationError(f"{label}: platform patterns {overlap[0]!r} and {overlap[1]!r} overlap")
        if isinstance(p.known_issue, (list, str)):
            raise CaseDeclarationError(f"{label}: known_issue= takes True or a tuple of platform patterns")
