"""Stand-ins for the case API, so that a reproduction script runs with nothing but jax installed.

The report copies this file's source, then the shared probe helpers, then the case's module,
into one self-contained script. Standard library only.
"""

from dataclasses import dataclass, field


class Unsupported(Exception):
    """The API the behaviour is about is missing from this JAX version."""


@dataclass(frozen=True)
class Skip:
    """Not applicable on a platform."""

    reason: str


@dataclass(frozen=True)
class Observation:
    """What a probe returns: compared facts and shown details."""

    facts: dict
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Expect:
    """The documented facts."""

    facts: dict
    platforms: dict = field(default_factory=dict)
    printed: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Change:
    """Why a cell's status changes between releases (read by the suite's report only)."""

    why: str
    evidence: str
    since: str = ""
    versions: str = ""
    params: tuple = ()


@dataclass(frozen=True)
class Param:
    """One parameter of a case."""

    name: str
    rows: list
    expect: Expect
    known_issue: object = False
    env: dict = field(default_factory=dict)
    stdin: object = None
    label: str = ""
    fresh_interpreter: str = ""
    discrepancy: str = ""
    changes: tuple = ()


@dataclass(frozen=True)
class Section:
    """A chapter section; its `case` decorator leaves the probe as it is."""

    number: str
    title: str

    def case(self, **declaration):
        """Return the probe unchanged."""
        return lambda probe: probe
