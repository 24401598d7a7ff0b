"""A census file read back (pure apart from `load_census`): its release, platform, modules and names, and each
name's state on that release.

A name's state (`Census.state`):
- `present`, `deprecated`, `removed`: as the release reported it (see `conformance.api.census`);
- `absent`: not in the census, whose walk reached the module that would hold it;
- `unknown`: the census cannot tell: the name is under a module that failed to import or was skipped there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from conformance.api.census import FORMAT, FORMAT_VERSION
from conformance.errors import ConformanceError, one_line
from conformance.readfile import read_regular_text

MAX_CENSUS_BYTES = 64 * 1024 * 1024
MAX_CENSUS_NAMES = 200_000
STATES = ("present", "deprecated", "removed", "absent", "unknown")
# What a census file records: a name's state and kind, a parameter's kind (`inspect`'s), a module's status.
RECORDED_STATES = ("present", "deprecated", "removed")
KINDS = ("module", "function", "class", "constant", "config")
PARAM_KINDS = ("positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword")
MODULE_STATUSES = ("ok", "failed", "skipped")
# A name that a user can use on the release (deprecated still works, with a warning).
USABLE = ("present", "deprecated")


@dataclass(frozen=True)
class Census:
    """One release's census: `names` maps a dotted path to its entry, `modules` a walked module to its record."""

    jax: str
    platform: str
    names: dict[str, dict[str, Any]]
    modules: dict[str, dict[str, Any]]
    header: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    @property
    def label(self) -> str:
        """`0.6.2 (linux-x86_64)`."""
        return f"{self.jax} ({self.platform})"

    def entry(self, name: str) -> dict[str, Any] | None:
        """The name's entry, or None."""
        return self.names.get(name)

    def failed_under(self, name: str) -> str:
        """The module above `name` (or `name` itself) that failed to import or was skipped here; '' when none."""
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            record = self.modules.get(prefix)
            if record is not None and record.get("status") != "ok":
                return prefix
        return ""

    def walked(self, module: str) -> bool:
        """Whether `module` was imported and its names read."""
        return (self.modules.get(module) or {}).get("status") == "ok"

    def state(self, name: str) -> str:
        """present, deprecated, removed, absent or unknown (see the module docstring)."""
        found = self.names.get(name)
        if found is not None:
            return str(found.get("state") or "present")
        return "unknown" if self.failed_under(name) else "absent"

    def usable(self, name: str) -> bool:
        """Whether a user can use the name on this release (present or deprecated)."""
        return self.state(name) in USABLE

    def message(self, name: str) -> str:
        """JAX's own deprecation or removal message for the name ('' when none)."""
        return str((self.names.get(name) or {}).get("message") or "")

    def replacement(self, name: str) -> str:
        """The replacement JAX's message names ('' when none)."""
        return str((self.names.get(name) or {}).get("replacement") or "")

    def keyword(self, name: str, keyword: str) -> dict[str, str] | None:
        """How JAX handles passing `keyword` to `name` here where its default is JAX's `DeprecatedArg` sentinel:
        `{state: deprecated | removed, effect, message}`; None for any other parameter."""
        found = ((self.names.get(name) or {}).get("keywords") or {}).get(keyword)
        return found if isinstance(found, dict) else None

    def positional(self, name: str) -> dict[str, Any] | None:
        """Where JAX deprecated passing more than `after` arguments by position to `name` here (a `*args` that
        warns): `{after, state, effect, message}`; None otherwise."""
        found = (self.names.get(name) or {}).get("positional")
        return found if isinstance(found, dict) else None

    def params(self, name: str) -> list[list[Any]] | None:
        """The name's parameters `[name, kind, default]`, or None when it has no signature here."""
        found = (self.names.get(name) or {}).get("params")
        return found if isinstance(found, list) else None

    def counts(self) -> dict[str, int]:
        """How many names per state, and modules walked and failed."""
        counted = {state: 0 for state in ("present", "deprecated", "removed")}
        for entry in self.names.values():
            counted[str(entry.get("state"))] = counted.get(str(entry.get("state")), 0) + 1
        counted["names"] = len(self.names)
        counted["modules"] = sum(1 for r in self.modules.values() if r.get("status") == "ok")
        counted["failed_modules"] = sum(1 for r in self.modules.values() if r.get("status") == "failed")
        return counted


def _entry_problem(entry: dict[str, Any]) -> str:
    """What is wrong with one name's entry, in words ('' when nothing): the fields the diff and the judge read."""
    if entry.get("state") not in RECORDED_STATES:
        return f"state {entry.get('state')!r} is not one of {', '.join(RECORDED_STATES)}"
    if entry.get("kind") not in (*KINDS, None):
        return f"kind {entry.get('kind')!r} is not one of {', '.join(KINDS)} (or null)"
    for key in ("message", "replacement", "signature", "origin", "alias_of", "env", "effect", "condition"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            return f"{key} should be text, not {entry[key]!r}"
    params = entry.get("params")
    if params is not None and not (
        isinstance(params, list)
        and all(
            isinstance(p, list)
            and len(p) == 3
            and isinstance(p[0], str)
            and p[1] in PARAM_KINDS
            and (p[2] is None or isinstance(p[2], str))
            for p in params
        )
    ):
        return f"params should be a list of [name, kind, default] (default text or null), not {params!r}"[:300]
    keywords = entry.get("keywords")
    if keywords is not None and not (
        isinstance(keywords, dict)
        and all(
            isinstance(v, dict)
            and v.get("state") in ("deprecated", "removed")
            and all(isinstance(v.get(k, ""), str) for k in ("effect", "message"))
            for v in keywords.values()
        )
    ):
        return f"keywords should map a parameter to {{state, effect, message}}, not {keywords!r}"[:300]
    positional = entry.get("positional")
    if positional is not None and not (
        isinstance(positional, dict)
        and isinstance(positional.get("after"), int)
        and positional.get("state") == "deprecated"
        and all(isinstance(positional.get(k, ""), str) for k in ("effect", "message"))
    ):
        return f"positional should be {{after, state: deprecated, effect, message}}, not {positional!r}"[:300]
    return ""


def census_from(data: Any, source: str = "") -> Census:
    """A census from its parsed JSON; `ConformanceError` naming `source` when it is not one."""
    where = source or "census"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConformanceError(f'{where}: not a census file (its "format" is not {FORMAT!r})')
    if data.get("format_version") != FORMAT_VERSION:
        release = data.get("jax") if isinstance(data.get("jax"), str) else "VERSION"
        raise ConformanceError(
            f"{where}: census format_version {data.get('format_version')!r}, this checkout reads "
            f"{FORMAT_VERSION} (public names only, keywords and config options JAX deprecated); "
            f"take it again: jax-conformance api census --jax {release} --rerun"
        )
    names, modules = data.get("names"), data.get("modules")
    if not isinstance(names, dict) or not isinstance(modules, dict):
        raise ConformanceError(f'{where}: a census needs "names" and "modules" objects')
    if len(names) > MAX_CENSUS_NAMES:  # a release has about 9,000: far more is no census the suite wrote
        raise ConformanceError(f"{where}: {len(names)} names, more than the {MAX_CENSUS_NAMES} a census may hold")
    if not all(isinstance(k, str) and isinstance(v, dict) for k, v in [*names.items(), *modules.items()]):
        raise ConformanceError(f"{where}: every name and module of a census maps to an object")
    if not isinstance(data.get("jax"), str) or not isinstance(data.get("platform"), str) or not data["platform"]:
        raise ConformanceError(f'{where}: a census names its "jax" version and "platform"')
    try:
        Version(data["jax"])
    except InvalidVersion:
        raise ConformanceError(
            f'{where}: "jax" is {data["jax"]!r}, not a version (as 0.6.2); take the census again (api census --rerun)'
        ) from None
    for name, entry in names.items():
        problem = _entry_problem(entry)
        if problem:
            raise ConformanceError(f"{where}: name {name!r}: {problem}; take the census again (api census --rerun)")
    for name, record in modules.items():
        if record.get("status") not in MODULE_STATUSES:
            raise ConformanceError(
                f"{where}: module {name!r}: status {record.get('status')!r} is not one of "
                f"{', '.join(MODULE_STATUSES)}; take the census again (api census --rerun)"
            )
    header = {k: v for k, v in data.items() if k not in ("names", "modules")}
    return Census(data["jax"], data["platform"], names, modules, header, source)


def load_census(path: Path) -> Census:
    """Read a census file; `ConformanceError` (one line naming the file) when it cannot be read or is not one."""
    try:
        text = read_regular_text(path, MAX_CENSUS_BYTES)
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConformanceError(f"{path}: not a readable census file ({one_line(str(exc))[:200]})") from None
    return census_from(data, str(path))
