"""The case model (case API v2): the declared shapes (`Case`, `Param`, `Expect`, `Change`, `Skip`, `Observation`),
the errors a probe or a declaration raises, and how a case folder's package names its cases and rows.

Pure data and standard library only: the child imports it in target environments that hold nothing but jax, jaxlib
and numpy. Case authors import these names from `conformance.core.case` (docs/writing-cases.md).
"""

from __future__ import annotations

import fnmatch
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from conformance.core.observation import encode_nonfinite, json_problem

DEFAULT_CASE_PACKAGE = "conformance.cases"
NO_PARAM = ""
# A parameter name is part of the cell id that `-k` selects, so it holds only what pytest's
# `-k` grammar reads as one word (no `=`, spaces or brackets).
PARAM_NAME = re.compile(r"[A-Za-z0-9_.-]+")

# Platforms that overlapping patterns are tried against (with each pattern's own literal text).
SAMPLE_PLATFORMS = (
    "linux-x86_64",
    "linux-arm64",
    "darwin-arm64",
    "darwin-x86_64",
    "windows-amd64",
    "windows-arm64",
    "linux-x86_64-cuda",
    "linux-arm64-cuda",
    "linux-x86_64-rocm",
    "linux-x86_64-tpu",
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
            object.__setattr__(
                self,
                "platforms",
                {pattern: _with_nonfinite_encoded(override) for pattern, override in self.platforms.items()},
            )

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
