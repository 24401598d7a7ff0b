"""Stand-ins for the case API, so that a reproduction script runs with nothing but jax installed.

The report copies this file's source, then the shared probe helpers, then the case's module,
into one self-contained script. Standard library only.
"""

import json
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


# ---- the verdict: the facts observed here against the expected ones and the release the script reproduces


def _stored_form(value):
    """`value` as a result file stores it: JSON types only, a non-finite float as {"$float": "nan"}."""
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": "nan" if value != value else ("inf" if value > 0 else "-inf")}
    if isinstance(value, dict):
        return {str(k): _stored_form(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_stored_form(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def _differences(expected, observed, path=""):
    """Every field where `observed` is not `expected`, as the suite compares them (key by key, item by item)."""
    if isinstance(expected, dict) and isinstance(observed, dict):
        found = []
        for key in list(expected) + [k for k in observed if k not in expected]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in expected or key not in observed:
                found.append(sub)
            else:
                found.extend(_differences(expected[key], observed[key], sub))
        return found
    if isinstance(expected, list) and isinstance(observed, list) and len(expected) == len(observed):
        return [d for i, (e, o) in enumerate(zip(expected, observed)) for d in _differences(e, o, f"{path}[{i}]")]
    if type(expected) is bool or type(observed) is bool:
        same = type(expected) is type(observed) and expected == observed
    else:
        same = expected == observed
    return [] if same else [path or "<observation>"]


def verdict(status_here, facts, expected, printed_keys, release, status_there, observed_there=None):
    """The last lines a reproduction prints and its exit status: `reproduced: differs as on 0.4.38` (0) when this
    machine comes out as the release did, else `not reproduced: conforms here` (1). `status_here` is `observed`
    (the probe returned `facts`), `unsupported` or `error`; only the asserted facts (not `printed_keys`) decide;
    `observed_there` is what the release observed, printed beside them."""
    asserted = {k: v for k, v in facts.items() if k not in printed_keys} if isinstance(facts, dict) else facts
    if isinstance(observed_there, dict):
        observed_there = {k: v for k, v in observed_there.items() if k not in printed_keys}
    differing = _differences(expected, _stored_form(asserted)) if status_here == "observed" else []
    here = status_here if status_here != "observed" else ("differs" if differing else "conforms")
    lines = [
        f"expected (what the chapter asserts): {json.dumps(expected, sort_keys=True)}",
        f"observed on {release}: {json.dumps(observed_there, sort_keys=True)} ({status_there})",
    ]
    if status_here == "observed":
        lines.append(f"observed here: {json.dumps(_stored_form(asserted), sort_keys=True)}")
        if differing:
            lines.append("differs in: " + ", ".join(differing))
    if here == status_there:
        return lines + [f"reproduced: {here} as on {release}"], 0
    return lines + [f"not reproduced: {here} here"], 1
