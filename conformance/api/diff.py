"""What changed in the public API between two releases, each change dated (pure).

`diff_chain(chain)` takes censuses ordered from A (`chain[0]`) to B (`chain[-1]`), with the censuses of releases
between them in between (as many as are at hand: `api diff --matrix` fills them), and returns the changes from A to
B, one `Change` each:

- `added`: usable (present or deprecated) on B, not on A (absent or removed there);
- `removed`: usable on A, removed or absent on B; the message says JAX's own words on both sides (the deprecation
  A reported, the AttributeError B raises);
- `deprecated` / `undeprecated`: present on A and deprecated on B, or the other way round;
- `moved`: a name on its way out (deprecated, removed or absent on B) whose object is newly reachable under another
  path on B, not deprecated there: the replacement JAX's message names, or the same jax function or class (the same
  `module.qualname`) at its canonical path on B (not an `alias_of` another path there);
- `signature`: usable on both, with a parameter added, removed or renamed, its kind changed or a default changed
  (a keyword-only parameter is never renamed: one removed and another added at its place are both listed);
- a keyword as JAX handles it (`name(keyword=)`, `removed` or `deprecated`): a parameter whose default became JAX's
  `DeprecatedArg` sentinel, or whose passing the function's body warns of, dated where passing it starts to warn
  (`deprecated`) or to raise (`removed`, also where the parameter leaves the signature), with JAX's own message
  (census `keywords`).

Every change of a name is listed (deprecated and its signature changed in one release: both).

A name under a module that failed to import (or was skipped) on either side is left out: nothing is known of it.
A whole module added or removed (absent, or removed through its parent's deprecation table) is one change, its names
not listed one by one.

`since` is the first release of the chain from which the change holds on every later census of the chain (a
census that cannot tell, `unknown`, does not break the run): with only A and B at hand it is B. `after` is the census
before it that tells the change does not hold there (the last one without it; "" when none does), so the change
came after `after` and in or before `since` (`bounds_of`; `api.dating` words it, a range where a release between the
two has no census). `deprecation_of` dates, by the same rule, when a removed name was deprecated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.api.model import USABLE, Census

CHANGES = ("added", "removed", "deprecated", "undeprecated", "moved", "signature")
KEYWORD_KINDS = ("positional_or_keyword", "keyword_only")
MAX_SIGNATURE = 160


@dataclass(frozen=True)
class Change:
    """One change of one name: `change` is one of `CHANGES`; `since` the release that first shows it."""

    name: str
    change: str
    since: str
    message: str
    # the last census of the chain without the change ("" when none tells): not in `api diff`'s JSON nor in equality
    after: str = field(default="", compare=False)

    def to_json(self) -> dict[str, str]:
        """The public JSON shape (`api diff --json`): name, change, since, message."""
        return {"name": self.name, "change": self.change, "since": self.since, "message": self.message}


def bounds_of(chain: Sequence[Census], holds: Callable[[Census], bool | None]) -> tuple[str, str]:
    """`(since, after)`: `since` the first release of `chain[1:]` from which `holds` is never False on a later census
    and True on it (the last release when it holds there only, or nothing in between tells); `after` the nearest
    census before it where `holds` is False (A included), "" when none is (it held on A already, or A cannot tell).
    Between `after` and `since` no census tells: the change came after `after`, in or before `since`."""
    first = after = ""
    for census in reversed(chain[1:]):
        held = holds(census)
        if held is False:
            after = census.jax
            break
        if held:
            first = census.jax
    if not after and chain and holds(chain[0]) is False:
        after = chain[0].jax
    since = first or chain[-1].jax
    return since, "" if after == since else after


def since_of(chain: Sequence[Census], holds: Callable[[Census], bool | None]) -> str:
    """The first release of `chain[1:]` from which `holds` is never False on a later census and True on it; the
    last release when it holds there only (or nothing in between tells): `bounds_of`'s `since`."""
    return bounds_of(chain, holds)[0]


def _tell(census: Census, name: str, test: Callable[[str], bool]) -> bool | None:
    state = census.state(name)
    return None if state == "unknown" else test(state)


def signature_key(params: list[list[Any]] | None) -> tuple[tuple[str, str, Any], ...] | None:
    """Parameters as comparable tuples (name, kind, default), or None."""
    if params is None:
        return None
    return tuple((str(p[0]), str(p[1]), p[2]) for p in params if isinstance(p, list) and len(p) == 3)


def _default(value: Any) -> str:
    return "no default" if value is None else str(value)


def signature_changes(before: list[list[Any]], after: list[list[Any]]) -> list[str]:
    """What changed between two parameter lists, in words: added, removed, renamed (same place and kind, not
    keyword-only), kind or default changed."""
    old = {p[0]: p for p in before}
    new = {p[0]: p for p in after}
    gone = [p for p in before if p[0] not in new]
    came = [p for p in after if p[0] not in old]
    words = []
    for lost in list(gone):
        if lost[1] == "keyword_only":  # passed by name only: another name at its place is no rename for a caller
            continue
        place = before.index(lost)
        twin = next((p for p in came if after.index(p) == place and p[1] == lost[1]), None)
        if twin is not None:
            words.append(f"parameter {lost[0]} renamed {twin[0]}")
            gone.remove(lost)
            came.remove(twin)
    words += [f"parameter {p[0]} removed" for p in gone]
    words += [f"parameter {p[0]} added" + (f" (default {p[2]})" if p[2] is not None else "") for p in came]
    for name, was in old.items():
        now = new.get(name)
        if now is None:
            continue
        if was[1] != now[1]:
            words.append(f"parameter {name}: {was[1]} → {now[1]}")
        if was[2] != now[2]:
            words.append(f"default of {name}: {_default(was[2])} → {_default(now[2])}")
    return words


def _described(census: Census, name: str) -> str:
    entry = census.entry(name) or {}
    text = str(entry.get("kind") or "name")
    signature = str(entry.get("signature") or "")
    if signature:
        text += f" {name.rsplit('.', 1)[-1]}{signature[:MAX_SIGNATURE]}{'…' if len(signature) > MAX_SIGNATURE else ''}"
    if entry.get("state") == "deprecated":
        text += f"; deprecated on {census.jax}: {census.message(name)}"
    return text


def _removal_message(chain: Sequence[Census], name: str) -> str:
    warned = [c for c in chain[:-1] if c.state(name) == "deprecated" and c.message(name)]
    parts = [f"deprecated on {warned[-1].jax}: {warned[-1].message(name)}"] if warned else []
    last = chain[-1]
    parts.append(
        f"on {last.jax} reading it raises AttributeError: {last.message(name)}"
        if last.message(name)
        else f"not in jax {last.jax}"
    )
    return " — ".join(parts)


def _state_change(chain: Sequence[Census], name: str) -> Change | None:
    first, last = chain[0], chain[-1]
    before, after = first.state(name), last.state(name)
    if "unknown" in (before, after):
        return None
    if before not in USABLE and after in USABLE:
        dated = bounds_of(chain, lambda c: _tell(c, name, lambda s: s in USABLE))
        return Change(name, "added", dated[0], _described(last, name), dated[1])
    if before in USABLE and after not in USABLE:
        dated = bounds_of(chain, lambda c: _tell(c, name, lambda s: s not in USABLE))
        return Change(name, "removed", dated[0], _removal_message(chain, name), dated[1])
    if before == "present" and after == "deprecated":
        dated = bounds_of(chain, _is_deprecated(name))
        return Change(name, "deprecated", dated[0], last.message(name), dated[1])
    if before == "deprecated" and after == "present":
        dated = bounds_of(chain, lambda c: _tell(c, name, lambda s: s == "present"))
        return Change(name, "undeprecated", dated[0], f"deprecated on {first.jax}: {first.message(name)}", dated[1])
    return None


def _is_deprecated(name: str) -> Callable[[Census], bool | None]:
    return lambda c: _tell(c, name, lambda s: s == "deprecated")


def deprecation_of(chain: Sequence[Census], change: Change) -> tuple[str, str] | None:
    """When a name that `change` says was removed had been deprecated, by `bounds_of` over the censuses up to the
    last one without the removal (`change.after`): `(since, after)`, `since` A itself with `after` "" when A already
    showed it deprecated (deprecated on or before A); None when that last census does not show it deprecated (no
    stored census saw the deprecation), or the change is no removal."""
    releases = [c.jax for c in chain]
    if change.change != "removed" or change.after not in releases:
        return None
    before = chain[: releases.index(change.after) + 1]
    name, _, keyword = change.name.partition("(")  # a keyword's change is named `name(keyword=)`
    holds = _keyword_in(name, keyword.removesuffix("=)"), "deprecated") if keyword else _is_deprecated(name)
    if holds(before[-1]) is not True:
        return None
    if len(before) == 1:
        return before[0].jax, ""
    since, after = bounds_of(before, holds)
    return (before[0].jax, "") if not after and holds(before[0]) else (since, after)


def _signature_change(chain: Sequence[Census], name: str) -> Change | None:
    first, last = chain[0], chain[-1]
    if not (first.usable(name) and last.usable(name)):
        return None
    before, after = first.params(name), last.params(name)
    if before is None or after is None or signature_key(before) == signature_key(after):
        return None
    words = signature_changes(before, after)
    if not words:
        return None
    wanted = signature_key(after)
    dated = bounds_of(chain, lambda c: None if c.params(name) is None else signature_key(c.params(name)) == wanted)
    return Change(name, "signature", dated[0], "; ".join(words), dated[1])


def keyword_state(census: Census, name: str, keyword: str) -> str | None:
    """How `keyword` of `name` stands on a census: `present`, `deprecated` (passing it warns), `removed` (it raises,
    or the signature has no such parameter, even where a `**kwargs` would swallow it); None when the census cannot
    tell (no usable name, no signature)."""
    params = census.params(name) if census.usable(name) else None
    if params is None:
        return None
    handled = census.keyword(name, keyword)
    if handled is not None:
        return str(handled.get("state"))
    if any(p[0] == keyword and p[1] in KEYWORD_KINDS for p in params):
        return "present"
    return "removed"  # no longer a parameter (a **kwargs would take it as something else: no longer this keyword)


def _keyword_in(name: str, keyword: str, state: str) -> Callable[[Census], bool | None]:
    """Whether a census shows `keyword` of `name` in `state` (None: it cannot tell)."""

    def holds(census: Census) -> bool | None:
        found = keyword_state(census, name, keyword)
        return None if found is None else found == state

    return holds


def _keyword_message(chain: Sequence[Census], name: str, keyword: str, state: str) -> str:
    said = next(
        (
            c.keyword(name, keyword)
            for c in reversed(chain)
            if c.keyword(name, keyword) and c.keyword(name, keyword).get("state") == state
        ),
        None,
    )
    if said is None:
        return f"parameter {keyword} removed from the signature of {name}"
    effect = "passing it " + str(said.get("effect") or "is deprecated").replace("unknown", "is deprecated")
    return f"{effect}: {said.get('message')}" if said.get("message") else effect


def keyword_changes(chain: Sequence[Census], name: str) -> list[Change]:
    """The keywords of `name` that JAX deprecated or removed from A to B (see the module docstring)."""
    first, last = chain[0], chain[-1]
    keywords = {k for c in chain for k in ((c.entry(name) or {}).get("keywords") or {})}  # JAX's sentinel somewhere
    out = []
    for keyword in sorted(keywords):
        before, after = keyword_state(first, name, keyword), keyword_state(last, name, keyword)
        if before is None or after is None or before == after or before == "removed":
            continue
        if after == "removed" or (before, after) == ("present", "deprecated"):
            since, last_without = bounds_of(chain, _keyword_in(name, keyword, after))
            message = _keyword_message(chain, name, keyword, after)
            out.append(Change(f"{name}({keyword}=)", after, since, message, last_without))
    return out


def _replacement(chain: Sequence[Census], name: str) -> str:
    """The replacement the newest census of the chain that names one gives ('' when none does)."""
    return next((c.replacement(name) for c in reversed(chain) if c.replacement(name)), "")


def _movable(census: Census, name: str) -> str:
    """The origin by which a name may be found moved: a jax function or class (not a re-exported `typing.Any` or
    a module); '' otherwise."""
    entry = census.entry(name) or {}
    origin = str(entry.get("origin") or "")
    return origin if entry.get("kind") in ("function", "class") and origin.startswith("jax.") else ""


def moves(chain: Sequence[Census], added: set[str]) -> list[Change]:
    """The moves from A to B (see the module docstring): each name on its way out whose object is newly reachable,
    with one destination: the replacement JAX names, else the canonical path on B (not an alias of another path
    there: `alias_of`) of the same jax function or class, the shortest one."""
    first, last = chain[0], chain[-1]
    arrivals: dict[str, list[str]] = {}
    added = {name for name in added if last.state(name) == "present"}  # never to a path that is itself going
    for new in added:
        origin = _movable(last, new)
        if origin and not (last.entry(new) or {}).get("alias_of"):
            arrivals.setdefault(origin, []).append(new)
    out = []
    for old in sorted(first.names):
        if not first.usable(old) or last.state(old) in ("present", "unknown"):
            continue
        replacement = _replacement(chain, old)
        if replacement in added:
            new, why = replacement, f"its replacement, as JAX says: {last.message(old) or first.message(old)}"
        else:
            found = arrivals.get(_movable(first, old)) if _movable(first, old) else None
            if not found:
                continue
            new = min(found, key=lambda p: (p.count("."), len(p), p))
            why = f"the same {(first.entry(old) or {}).get('kind')} ({_movable(first, old)})"
        since, after = bounds_of(
            chain,
            lambda c, o=old, n=new: (
                None if "unknown" in (c.state(o), c.state(n)) else c.usable(n) and c.state(o) != "present"
            ),
        )
        out.append(Change(old, "moved", since, f"now {new}: {why}", after))
    return out


def _inside_changed_module(name: str, modules: set[str]) -> bool:
    parts = name.split(".")
    return any(".".join(parts[:end]) in modules for end in range(1, len(parts)))


def diff_chain(chain: Sequence[Census]) -> list[Change]:
    """The changes from `chain[0]` to `chain[-1]`, dated over the chain (see the module docstring)."""
    if len(chain) < 2:
        return []
    first, last = chain[0], chain[-1]
    changes = []
    for name in sorted(set(first.names) | set(last.names)):
        changes += [c for c in (_state_change(chain, name), _signature_change(chain, name)) if c is not None]
        if first.usable(name) and last.usable(name):
            changes += keyword_changes(chain, name)
    added = {c.name for c in changes if c.change == "added"}
    # a module removed through a deprecation table has kind null on B: its kind on A says it was a module
    whole = {
        c.name
        for c in changes
        if c.change in ("added", "removed")
        and any((census.entry(c.name) or {}).get("kind") == "module" for census in (first, last))
    }
    changes = [c for c in changes if c.change not in ("added", "removed") or not _inside_changed_module(c.name, whole)]
    changes += moves(chain, added)
    order = {change: i for i, change in enumerate(CHANGES)}
    return sorted(changes, key=lambda c: (c.name, order[c.change]))


def changes_named(changes: Sequence[Change], prefixes: Sequence[str]) -> list[Change]:
    """The changes of the names `prefixes` give (`api diff --name`): each name itself, the names under it, and its
    keywords (`jax.pure_callback(vectorized=)` for `jax.pure_callback`)."""
    return [c for c in changes if any(c.name == p or c.name.startswith((p + ".", p + "(")) for p in prefixes)]


def changes_json(changes: Sequence[Change]) -> dict[str, Any]:
    """`{"format": 1, "changes": [{"name", "change", "since", "message"}]}`: the public shape of `api diff --json`
    (`format`, the shape's version, since issue 60)."""
    return {"format": 1, "changes": [c.to_json() for c in changes]}
