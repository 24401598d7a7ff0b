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
`Change` (on the case or on a `Param`) says in which release, why, and on what evidence. A wrong declaration raises `CaseDeclarationError` at import,
with one line naming the case. Standard library only: the child imports this module in
target environments that hold nothing but jax, jaxlib and numpy.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import math
import pkgutil
import re
import sys
import traceback
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from conformance.portable import signals_kept
from conformance.core import rowlist, workload as workload_model
from conformance.core.observation import encode_nonfinite, json_problem

DEFAULT_CASE_PACKAGE = "conformance.cases"
NO_PARAM = ""
# A parameter name is part of the cell id that `-k` selects, so it holds only what pytest's
# `-k` grammar reads as one word (no `=`, spaces or brackets).
PARAM_NAME = re.compile(r"[A-Za-z0-9_.-]+")

# Platforms that overlapping patterns are tried against (with each pattern's own literal text).
SAMPLE_PLATFORMS = (
    "linux-x86_64", "linux-arm64", "darwin-arm64", "darwin-x86_64", "windows-amd64", "windows-arm64",
    "linux-x86_64-cuda", "linux-arm64-cuda", "linux-x86_64-rocm", "linux-x86_64-tpu",
)


class CaseDeclarationError(Exception):
    """A case declared wrongly; the message is one line that names the case."""


class Unsupported(Exception):
    """Raised by a probe when the API its behaviour is about is missing from this JAX version.

    The message names the missing API, e.g. `Unsupported("jax.debug.log")`.
    """


@dataclass(frozen=True)
class Skip:
    """An expectation that says the cell does not apply on a platform, with the reason."""

    reason: str


@dataclass(frozen=True)
class Observation:
    """What a probe returns: the compared `facts` and the `details` shown beside them (both plain JSON)."""

    facts: Mapping[str, Any]
    details: Mapping[str, Any] = field(default_factory=dict)


def _with_nonfinite_encoded(value: Any) -> Any:
    """`value` itself, unless it is a mapping that holds NaN or ±inf and is plain JSON otherwise: then its
    copy with those in their stored form. Anything else wrong with it is left for the declaration check."""
    if isinstance(value, Mapping) and json_problem(dict(value)) and not json_problem(dict(value), nonfinite=True):
        return encode_nonfinite(dict(value))
    return value


@dataclass(frozen=True)
class Expect:
    """The documented facts of one cell, in two tiers, with per-platform overrides.

    `facts` are what the chapter *asserts* (its `assert` lines and explicit claims: a class,
    a boolean, a relation, a threshold, "contains X"); they decide the cell's status.
    `printed` are what the chapter only *prints* (wording, reprs, counts, sample numbers);
    they are compared too, in their own tier: a mismatch marks the cell "printed output
    differs" and keeps its status. Both name top-level keys of the probe's observation; a
    key belongs to one tier only.

    `platforms` maps an fnmatch pattern (`darwin-arm64`, `*-cuda`) to either a mapping of
    facts that replace some of either tier (the others are kept; a key goes to the tier that
    declares it, an undeclared key to the asserted tier) or a `Skip`. Patterns must not
    overlap, so at most one applies to any platform.
    """

    facts: Mapping[str, Any]
    platforms: Mapping[str, Mapping[str, Any] | Skip] = field(default_factory=dict)
    printed: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # An expected NaN or ±inf is held in its stored form, the form the child writes observations in,
        # so that it compares equal and can be written to a result file (observation.encode_nonfinite).
        object.__setattr__(self, "facts", _with_nonfinite_encoded(self.facts))
        object.__setattr__(self, "printed", _with_nonfinite_encoded(self.printed))
        if isinstance(self.platforms, Mapping):
            object.__setattr__(self, "platforms", {
                pattern: _with_nonfinite_encoded(override) for pattern, override in self.platforms.items()})

    def _override(self, platform: str) -> Mapping[str, Any] | Skip | None:
        for pattern, override in self.platforms.items():
            if fnmatch.fnmatchcase(platform, pattern):
                return override
        return None

    def on(self, platform: str) -> Mapping[str, Any] | Skip:
        """The asserted facts in force on `platform` (or the platform's `Skip`)."""
        override = self._override(platform)
        if isinstance(override, Skip):
            return override
        asserted = {k: v for k, v in (override or {}).items() if k not in self.printed}
        return {**self.facts, **asserted}

    def printed_on(self, platform: str) -> dict[str, Any]:
        """The printed facts in force on `platform` (empty where the platform skips the cell)."""
        override = self._override(platform)
        if isinstance(override, Skip):
            return {}
        return {**self.printed, **{k: v for k, v in (override or {}).items() if k in self.printed}}


# A release as a `Change` names it: numbers joined by dots (`0.8.0`, `0.9.0.1`).
RELEASE = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class Change:
    """Why a cell's status changes between JAX releases: the release range, one sentence, and its evidence.

    `since="0.8.0"` says the change is in 0.8.0 (the release before it behaves otherwise);
    `versions="0.7.2..0.8.0"` says it is after 0.7.2 and in 0.8.0 at the latest (for a range
    whose releases between were not all measured). Give exactly one. `why` is one sentence;
    `evidence` is where it comes from: a JAX source line (`jax/_src/pjit.py: ...`), a
    CHANGELOG entry (`CHANGELOG 0.8.0: ...`) or a measurement (`measured: ...`). On a case,
    `params` names the parameters it explains (all of them when empty); on a `Param` it is unused.
    """

    why: str
    evidence: str
    since: str = ""
    versions: str = ""
    params: tuple[str, ...] = ()

    @property
    def bounds(self) -> tuple[str, str]:
        """`(after, upto)`: the change happened after release `after` ('' when open) and in `upto` at the latest."""
        if self.since:
            return "", self.since
        low, _, high = self.versions.partition("..")
        return low, high

    @property
    def range_text(self) -> str:
        """`in 0.8.0`, or `after 0.7.2, by 0.8.0`."""
        low, high = self.bounds
        return f"in {high}" if not low else f"after {low}, by {high}"


@dataclass(frozen=True)
class Param:
    """One parameter of a case, declared with everything that belongs to it.

    `known_issue` is True when the expectation documents a bug everywhere, or a tuple of
    platform patterns where the chapter documents it to reproduce. `env` and `stdin`
    apply to this parameter on top of the case's own; `fresh_interpreter` is the reason this
    parameter alone must run in a newly started interpreter. `discrepancy` says, when the
    chapter's asserted claim is false on the documented release, what was measured and why
    (the JAX source line where known); the expectation stays the chapter's, so the cell differs.
    """

    name: str
    rows: Sequence[str]
    expect: Expect
    known_issue: bool | tuple[str, ...] = False
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: str | None = None
    label: str = ""
    fresh_interpreter: str = ""
    discrepancy: str = ""
    changes: Sequence[Change] = ()


@dataclass(frozen=True)
class Case:
    """One documented behaviour (or a few that one probe observes together)."""

    id: str
    section: str
    heading: str
    claim: str
    params: tuple[Param, ...]
    probe: Callable[..., Any]
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: str | None = None
    fresh_interpreter: str = ""
    timeout_s: float = 120.0
    notes: str = ""
    package: str = DEFAULT_CASE_PACKAGE
    discrepancy: str = ""
    changes: Sequence[Change] = ()

    @property
    def param_names(self) -> tuple[str, ...]:
        """The parameter names, each run as its own cell; `("",)` for a case without parameters."""
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param:
        """The declaration of parameter `name`."""
        for declared in self.params:
            if declared.name == name:
                return declared
        raise KeyError(f"{self.id} has no parameter {name!r}")

    @property
    def all_rows(self) -> tuple[str, ...]:
        """Every row ID this case checks, in declaration order, without repeats."""
        return tuple(dict.fromkeys(row for p in self.params for row in p.rows))

    def rows(self, param: str) -> tuple[str, ...]:
        """The row IDs one parameter checks."""
        return tuple(self.param(param).rows)

    @property
    def has_known_issue(self) -> bool:
        """Whether any parameter documents a known issue somewhere."""
        return any(p.known_issue for p in self.params)

    def is_known_issue(self, param: str, platform: str | None = None) -> bool:
        """Whether the cell's expectation is a known issue (a bug), so that `conforms` means "still there".

        With a platform, only where the chapter documents the bug to reproduce.
        """
        known = self.param(param).known_issue
        if known is True or not known:
            return bool(known)
        return platform is None or any(fnmatch.fnmatchcase(platform, p) for p in known)

    def cell_id(self, param: str) -> str:
        """The identifier of one cell of this case, e.g. `numerics.debug_nans_vmap_miss[vmap]`."""
        return f"{self.id}[{param}]" if param else self.id

    def expected(self, param: str, platform: str) -> Mapping[str, Any] | Skip:
        """The documented asserted facts for `param` on `platform` (or the platform's `Skip`)."""
        return self.param(param).expect.on(platform)

    def expected_printed(self, param: str, platform: str) -> dict[str, Any]:
        """The documented printed facts for `param` on `platform`."""
        return self.param(param).expect.printed_on(platform)

    def discrepancy_note(self, param: str) -> str:
        """Why the chapter's asserted claim is false on the documented release ('' when it is not known to be)."""
        return self.param(param).discrepancy or self.discrepancy

    def changes_for(self, param: str) -> tuple[Change, ...]:
        """The declared status changes of one cell: its parameter's, then the case's that apply to it."""
        own = tuple(self.param(param).changes)
        return own + tuple(c for c in self.changes if not c.params or param in c.params)

    def env_for(self, param: str) -> dict[str, str]:
        """Environment variables the child of `param` starts with (the case's, then the parameter's)."""
        return {**self.env, **self.param(param).env}

    def stdin_for(self, param: str) -> str | None:
        """Text piped to the child of `param`, if any."""
        own = self.param(param).stdin
        return own if own is not None else self.stdin

    def fresh_interpreter_reason(self, param: str) -> str:
        """Why the cell must run in a newly started interpreter ('' when a forked child will do)."""
        return self.param(param).fresh_interpreter or self.fresh_interpreter

    def needs_fresh_interpreter(self, param: str) -> bool:
        """Whether the cell must run in a newly started interpreter rather than a forked one.

        Environment variables and stdin do not imply it: a cell with `env=` is forked from a
        server that imported jax under those variables, and a forked child's stdin can be a file.
        """
        return bool(self.fresh_interpreter_reason(param))

    def run_probe(self, param: str) -> Any:
        """Call the probe function for `param` (in the child process)."""
        return self.probe(param) if param else self.probe()

    def source(self) -> str:
        """The probe's source text, shown in the report."""
        try:
            return inspect.getsource(self.probe)
        except (OSError, TypeError):
            return ""


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
        chapter's asserted claim is false on the documented release, with what was measured. `fresh_interpreter` is the reason the probe needs a
        newly started interpreter rather than a child forked from one that already imported jax
        (`env` and `stdin` do not need it: the variables are set before that import). `changes`
        (here or on a `Param`) explains each release where a cell's status changes (`Change`).
        """

        def register(probe: Callable[..., Any]) -> Callable[..., Any]:
            module = probe.__module__
            package, _, short_module = module.rpartition(".")
            namespace = folder_namespace(package)
            case_id = f"{namespace}/{short_module}.{probe.__name__}" if namespace else f"{short_module}.{probe.__name__}"
            declared = _declared_params(case_id, rows, expect, known_issue, params)
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
            built = replace(built, params=tuple(
                replace(p, rows=tuple(namespaced_row(namespace, r) if namespace else r for r in p.rows))
                for p in built.params))
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
            workload_id = f"{namespace}/{short_module}.{build.__name__}" if namespace else \
                f"{short_module}.{build.__name__}"
            declared = tuple(rows) if isinstance(rows, (list, tuple)) else rows
            built = workload_model.Workload(
                id=workload_id, section=f"§{subsection}" if subsection else self.number, heading=self.label,
                claim=claim, rows=declared, build=build, notes=notes, package=package or DEFAULT_CASE_PACKAGE,
                jit=jit, timeout_s=timeout_s)
            workload_model.register(built, CaseDeclarationError)
            return build

        return register


def folder_namespace(package: str) -> str:
    """The namespace of a case folder's package (`teamcases`), or '' for the built-in and dotted packages.

    A folder given with `--cases DIR` is imported as a top-level package named after the
    folder; its case ids read `<folder>/<module>.<probe>` and its row IDs `<folder>.<row>`,
    so two folders that both hold `numerics.py` never collide with each other or the suite.
    """
    return package if package and "." not in package and package != DEFAULT_CASE_PACKAGE else ""


def namespaced_row(namespace: str, row: str) -> str:
    """`row` prefixed with `<namespace>.` unless it already is."""
    return row if row.startswith(namespace + ".") else f"{namespace}.{row}"


def _declared_params(case_id: str, rows, expect, known_issue, params) -> tuple[Param, ...]:
    if params is not None:
        if rows is not None or expect is not None or known_issue:
            raise CaseDeclarationError(f"{case_id}: give rows, expect and known_issue inside each Param, "
                                       f"not beside params=")
        if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Sequence):
            raise CaseDeclarationError(f"{case_id}: params= takes a list of Param, not {type(params).__name__}")
        declared = tuple(params)
        if not declared:
            raise CaseDeclarationError(f"{case_id}: params= is empty")
        for p in declared:
            if not isinstance(p, Param):
                raise CaseDeclarationError(f"{case_id}: params= holds {p!r}, not a Param")
            if not isinstance(p.name, str) or not PARAM_NAME.fullmatch(p.name):
                raise CaseDeclarationError(f"{case_id}: parameter name {p.name!r} must be a non-empty word "
                                           f"of letters, digits, _ . - (it is part of a `-k` selection)")
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
        raise CaseDeclarationError(f"{where}: env= takes a mapping of variable names to strings, "
                                   f"not {type(env).__name__}")
    for name, value in env.items():
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise CaseDeclarationError(f"{where}: env= has the variable name {name!r}; names are non-empty "
                                       f"strings without '='")
        if not isinstance(value, str) or "\0" in value:
            raise CaseDeclarationError(f"{where}: env= sets {name} to {value!r}; values are strings "
                                       f"(write {str(value)!r})")


def _json_field(value: Any, where: str, field_name: str) -> None:
    if not isinstance(value, Mapping):
        raise CaseDeclarationError(f"{where}: {field_name} takes a mapping of fact names to JSON values, "
                                   f"not {type(value).__name__}")
    problem = json_problem(dict(value), string_keys=True)
    if problem:
        raise CaseDeclarationError(f"{where}: {field_name} is not plain JSON: {problem}")


def _expect_fields(expect: Expect, where: str) -> None:
    _json_field(expect.facts, where, "Expect(facts)")
    _json_field(expect.printed, where, "Expect(printed=)")
    if not isinstance(expect.platforms, Mapping):
        raise CaseDeclarationError(f"{where}: Expect(platforms=) takes a mapping of platform patterns, "
                                   f"not {type(expect.platforms).__name__}")
    for pattern, override in expect.platforms.items():
        if not isinstance(pattern, str) or not pattern:
            raise CaseDeclarationError(f"{where}: Expect(platforms=) has the pattern {pattern!r}; patterns are "
                                       f"strings such as 'darwin-arm64' or '*-cuda'")
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
                raise CaseDeclarationError(f"{where}: Change({name}=) takes a string, "
                                           f"not {type(getattr(change, name)).__name__}")
        if not change.why.strip() or not change.evidence.strip():
            raise CaseDeclarationError(f"{where}: a Change needs why= (one sentence) and evidence= (a JAX source "
                                       f"line, a CHANGELOG entry or a measurement)")
        if bool(change.since) == bool(change.versions):
            raise CaseDeclarationError(f"{where}: a Change takes either since='0.8.0' or versions='0.7.2..0.8.0'")
        if change.since and not RELEASE.fullmatch(change.since):
            raise CaseDeclarationError(f"{where}: Change(since={change.since!r}) is not a release such as '0.8.0'")
        if change.versions:
            low, sep, high = change.versions.partition("..")
            if not (sep and RELEASE.fullmatch(low) and RELEASE.fullmatch(high)) or \
                    _release(low) >= _release(high):
                raise CaseDeclarationError(f"{where}: Change(versions={change.versions!r}) is not 'OLD..NEW', two "
                                           f"releases, the older first, such as '0.7.2..0.8.0'")
        if isinstance(change.params, (str, bytes)) or not isinstance(change.params, Sequence):
            raise CaseDeclarationError(f"{where}: Change(params=) takes a tuple of parameter names")
        unknown = [p for p in change.params if params is None or p not in params]
        if unknown:
            raise CaseDeclarationError(f"{where}: Change(params=) names {unknown[0]!r}, "
                                       + ("which is not a parameter of the case" if params is not None
                                          else "but a Change on a Param applies to that Param only"))


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
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) \
            or timeout <= 0:
        raise CaseDeclarationError(f"{where}: timeout_s= takes a finite number of seconds above 0, not {timeout!r}")
    for p in case.params:
        label = f"{where}[{p.name}]" if p.name else where
        if isinstance(p.rows, (str, bytes)) or not isinstance(p.rows, Sequence):
            raise CaseDeclarationError(f"{label}: rows= takes a list of row IDs, not {type(p.rows).__name__} "
                                       f"(write rows=[{p.rows!r}])")
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
        raise CaseDeclarationError(f"{where}: a probe name must not start with 'test' (pytest would collect it "
                                   f"as a test of its own)")
    reasons = [case.fresh_interpreter, *(p.fresh_interpreter for p in case.params)]
    if any(not isinstance(reason, str) for reason in reasons):
        raise CaseDeclarationError(f"{where}: fresh_interpreter= takes the reason, as a sentence")
    try:
        signature = inspect.signature(case.probe)
        takes = [p for p in signature.parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
        wants = 1 if names != [NO_PARAM] else 0
        if len(takes) != wants:
            what = "one argument, the parameter" if wants else "no argument"
            raise CaseDeclarationError(f"{where}: the probe takes {len(takes)} required argument(s) but should take "
                                       f"{what}")
    except (TypeError, ValueError):
        pass
    known_rows = rowlist.row_ids() if case.package == DEFAULT_CASE_PACKAGE else None
    for p in case.params:
        label = f"{where}[{p.name}]" if p.name else where
        if not p.rows:
            raise CaseDeclarationError(f"{label}: names no row ID")
        for row in p.rows:
            if known_rows is not None and row not in known_rows:
                raise CaseDeclarationError(f"{label}: row {row!r} is not in the project's row list "
                                           f"({rowlist.ROWS_FILE.name})")
        both = sorted(set(p.expect.facts) & set(p.expect.printed))
        if both:
            raise CaseDeclarationError(f"{label}: {', '.join(both)} is declared both asserted (facts) and printed; "
                                       f"a fact belongs to one tier")
        overlap = _patterns_overlap(list(p.expect.platforms))
        if overlap:
            raise CaseDeclarationError(f"{label}: platform patterns {overlap[0]!r} and {overlap[1]!r} overlap")
        if isinstance(p.known_issue, (list, str)):
            raise CaseDeclarationError(f"{label}: known_issue= takes True or a tuple of platform patterns")


_REGISTRY: dict[tuple[str, str], Case] = {}


def _register(case: Case) -> None:
    key = (case.package, case.id)
    if key in _REGISTRY:
        previous = _REGISTRY[key]
        if previous.probe.__code__.co_filename != case.probe.__code__.co_filename or \
                previous.probe.__code__.co_firstlineno != case.probe.__code__.co_firstlineno:
            raise CaseDeclarationError(f"{case.id}: declared twice in {case.package} (a second probe with the "
                                       f"same name replaces the first); rename one")
    _REGISTRY[key] = case


def case_modules(package: str = DEFAULT_CASE_PACKAGE) -> list[str]:
    """The dotted names of the case modules in `package`, in file-name order (helpers start with `_`)."""
    pkg = importlib.import_module(package)
    return sorted(
        f"{package}.{info.name}"
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_") and info.name != "helpers"
    )


def load_module_cases(module_name: str) -> list[Case]:
    """Import one case module and return the cases it declares, in declaration order."""
    try:
        with signals_kept():  # foreign code: what it does to signal dispositions stays in its own import
            module = importlib.import_module(module_name)
    except CaseDeclarationError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a case module is foreign code
        raise CaseDeclarationError(f"{module_name}: the case module failed to import: {import_failure(exc)}") \
            from None
    package = module.__name__.rpartition(".")[0]
    return [c for (pkg, _), c in _REGISTRY.items() if pkg == package and c.probe.__module__ == module.__name__]


def import_failure(exc: BaseException) -> str:
    """One line for an exception raised while importing a module: its type, first line and where."""
    text = str(exc).strip()
    line = f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename] or frames
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{line} ({exc.filename}:{exc.lineno})"
    return f"{line} ({own[-1].filename}:{own[-1].lineno})" if own else line


def section_order(title: str) -> list[tuple[int, Any]]:
    """Sort key of a section title in chapter order: numbers compare as numbers (§5.3 before §10)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", title)]


def load_cases(package: str = DEFAULT_CASE_PACKAGE) -> list[Case]:
    """Import every case module of `package` and return all their cases, in chapter order."""
    found = [c for name in case_modules(package) for c in load_module_cases(name)]
    return sorted(found, key=lambda c: section_order(c.section))


def load_workloads(package: str = DEFAULT_CASE_PACKAGE) -> list["workload_model.Workload"]:
    """Import every case module of `package` and return the workloads they declare, in chapter order."""
    found = []
    for name in case_modules(package):
        load_module_cases(name)
        found.extend(workload_model.registered(package, name))
    return sorted(found, key=lambda w: (section_order(w.section), w.id))


def find_workload(workload_id: str, package: str = DEFAULT_CASE_PACKAGE) -> "workload_model.Workload":
    """The workload called `workload_id`, importing only its module."""
    module_short = workload_id.rpartition("/")[2].split(".", 1)[0]
    module = f"{package}.{module_short}"
    load_module_cases(module)
    for found in workload_model.registered(package, module):
        if found.id == workload_id:
            return found
    raise KeyError(f"no workload {workload_id!r} in {package}")


def find_case(case_id: str, package: str = DEFAULT_CASE_PACKAGE) -> Case:
    """The case called `case_id` (`<module>.<probe>`, or `<folder>/<module>.<probe>`), importing only its module."""
    module_short = case_id.rpartition("/")[2].split(".", 1)[0]
    for found in load_module_cases(f"{package}.{module_short}"):
        if found.id == case_id:
            return found
    raise KeyError(f"no case {case_id!r} in {package}")


def forget_package(package: str) -> None:
    """Drop the registered cases of `package` and its imported modules (tests load scratch packages)."""
    for key in [k for k in _REGISTRY if k[0] == package]:
        del _REGISTRY[key]
    workload_model.forget(package)
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
