"""Comparison of an observation with its documented expectation, as a field-level diff. Pure logic."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

_MISSING = object()


@dataclass(frozen=True)
class Difference:
    """One field where the observation and the expectation disagree."""

    path: str
    expected: Any
    observed: Any
    kind: str  # "changed", "missing" (expected but not observed) or "unexpected" (observed, not documented)

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form, as stored in result files."""
        return asdict(self)


def diff(expected: Any, observed: Any, path: str = "") -> list[Difference]:
    """Every field-level difference between `expected` and `observed`, depth first.

    Mappings are compared key by key and lists (or tuples) of equal length item by item;
    anything else is compared with `==`, so `1` equals `1.0` but not `True` vs `"True"`.
    """
    if isinstance(expected, Mapping) and isinstance(observed, Mapping):
        found: list[Difference] = []
        for key in list(expected) + [k for k in observed if k not in expected]:
            sub = f"{path}.{key}" if path else str(key)
            exp, obs = expected.get(key, _MISSING), observed.get(key, _MISSING)
            if exp is _MISSING:
                found.append(Difference(sub, None, obs, "unexpected"))
            elif obs is _MISSING:
                found.append(Difference(sub, exp, None, "missing"))
            else:
                found.extend(diff(exp, obs, sub))
        return found
    if isinstance(expected, (list, tuple)) and isinstance(observed, (list, tuple)) and len(expected) == len(observed):
        return [d for i, (e, o) in enumerate(zip(expected, observed)) for d in diff(e, o, f"{path}[{i}]")]
    if type(expected) is bool or type(observed) is bool:
        same = type(expected) is type(observed) and expected == observed
    else:
        same = expected == observed
    return [] if same else [Difference(path or "<observation>", expected, observed, "changed")]
