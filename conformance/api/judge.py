"""A scan's uses judged against censuses (pure): which are removed, missing or deprecated on the release a team
upgrades to (`to`), and which do not exist yet on the release it runs today (`before`, `--from`).

How much of a use a census can check (`checked_name`): a dotted chain is followed while its parts are modules (and
into `jax.config`, whose options are names of the census); the first part that is not a module ends it
(`jnp.ndarray.at` is checked as `jax.numpy.ndarray`). A name under a module the census could not import is not
judged. States of a `Finding`:

- `removed`: the release says so (its deprecation table's AttributeError), or the name is absent there but usable
  on another census at hand (`before` or the stored history); a keyword argument the signature no longer takes but
  did take on another census;
- `missing`: absent on `to` and on every census at hand (a typo, a private name, a name of a newer jax); a keyword
  the signature never took; an environment variable `JAX_...` is judged only when some census knows its option;
- `deprecated`: usable on `to`, with JAX's warning;
- `not_yet`: usable on `to` but absent (or removed) on `before`;
- `guarded`: a use that would be `removed` or `missing` but stands where the code already copes with that name's
  absence (`Use.guarded`, set by `scan`: a guard covers only the names it tests), at note level;
- `not_judged`: what the census does not cover, with why, never an error: a name under a private module
  (`jax._src...`), a dunder (`jax.__version__`), a name under a module the census skipped or could not import.
  With a private census (`Censuses.private`, `api scan --private`) a private use is judged against it instead:
  `missing` (labelled private) where its module no longer imports or lacks the name.

A keyword argument JAX deprecated on `to` (its `DeprecatedArg` sentinel, or a warning in the function's body) is
judged as JAX handles it (census `keywords`): `removed` where passing it raises, `deprecated` where it warns. A call
passing more arguments by position than JAX takes there without a warning (census `positional`: a `*args` that
warns, as `jax.lax.dot`'s from 0.7.1 and `jax.numpy.array`'s from 0.10.1) is `deprecated`, named `name(…)`. A
deprecated config option set to a literal its warning's `condition` does not hold for is no finding.

`since` is the first release of the history (the censuses of `to`'s platform at hand, oldest first, up to `to`)
from which the state holds through `to`; `≤` in front when it already holds on the oldest census at hand.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from conformance.api.model import USABLE, Census
from conformance.api.scan import Use

FINDING_STATES = ("removed", "missing", "deprecated", "not_yet", "guarded", "not_judged")
BREAKING = ("removed", "missing")
KEYWORD_KINDS = ("positional_or_keyword", "keyword_only")


@dataclass(frozen=True)
class Finding:
    """One use that the upgrade breaks, warns about or that the current release lacks."""

    path: str
    line: int
    col: int
    name: str
    state: str
    since: str
    message: str
    replacement: str = ""

    def to_json(self) -> dict[str, object]:
        """The public JSON shape (`api scan --format json`)."""
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "name": self.name,
            "state": self.state,
            "since": self.since,
            "message": self.message,
            "replacement": self.replacement or None,
        }


@dataclass(frozen=True)
class Censuses:
    """What a scan is judged against: `to`, optionally `before`, and the `history` (every census of `to`'s platform
    at hand up to `to`, oldest first, `to` included)."""

    to: Census
    before: Census | None = None
    history: tuple[Census, ...] = ()
    private: Census | None = None  # `--private`: the census of the private names the code uses, on `to`

    @property
    def all(self) -> list[Census]:
        """Every census at hand, each once."""
        seen = {id(c): c for c in [*self.history, self.to, *([self.before] if self.before else [])]}
        return list(seen.values())

    def kind(self, name: str) -> str:
        """The name's kind on the first census that has it ('' when none does)."""
        for census in [self.to, *self.all]:
            entry = census.entry(name)
            if entry is not None and entry.get("kind"):
                return str(entry["kind"])
        return ""

    def since(self, holds: Callable[[Census], bool | None]) -> str:
        """See the module docstring."""
        chain = list(self.history) or [self.to]
        first = ""
        for census in reversed(chain):
            held = holds(census)
            if held is False:
                return first or self.to.jax
            if held:
                first = census.jax
        return f"≤{first}" if first else self.to.jax


def checked_name(name: str, censuses: Censuses) -> str | None:
    """The part of a dotted use a census can check (see the module docstring); None when it cannot be judged."""
    parts = name.split(".")
    for end in range(2, len(parts) + 1):
        prefix = ".".join(parts[:end])
        parent = ".".join(parts[: end - 1])
        if parent == "jax.config" and not parts[end - 1].startswith("jax"):
            return parent  # a method of the config object (update, read), not an option
        if censuses.to.failed_under(prefix):
            return None
        if end == len(parts):
            return prefix
        if prefix != "jax.config" and censuses.kind(prefix) != "module":
            return prefix
    return None


def _absent_message(name: str, censuses: Censuses, usable_on: list[Census]) -> str:
    to = censuses.to
    if usable_on:
        last = usable_on[-1]
        said = next((c.message(name) for c in reversed(censuses.all) if c.message(name)), "")
        return f"not in jax {to.jax} (last seen on {last.jax})" + (f"; {said}" if said else "")
    return f"jax {to.jax} has no {name}"


_CONDITION_NODES = (
    ast.Expression,
    ast.UnaryOp,
    ast.Not,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.Compare,
    ast.Eq,
    ast.NotEq,
    ast.Is,
    ast.IsNot,
    ast.In,
    ast.NotIn,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Tuple,
    ast.List,
)


def condition_holds(condition: str, value: str) -> bool | None:
    """Whether a config validator's warning `condition` (census, `not new_val`) holds for the literal `value` an
    option is set to (`True`); None where either is missing or the condition is more than names, literals, `not`,
    `and`, `or` and comparisons (nothing else is evaluated)."""
    try:
        tree = ast.parse(condition, mode="eval")
        literal = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    if not condition or not value or not all(isinstance(n, _CONDITION_NODES) for n in ast.walk(tree)):
        return None
    names = {n.id: literal for n in ast.walk(tree) if isinstance(n, ast.Name)}
    try:
        return bool(eval(compile(tree, "<condition>", "eval"), {"__builtins__": {}}, names))  # noqa: S307
    except Exception:  # noqa: BLE001 - a comparison the literal does not support: not known
        return None


def judge_name(use: Use, name: str, censuses: Censuses) -> list[Finding]:
    """The findings of one checked name (see the module docstring)."""
    to, before = censuses.to, censuses.before
    state = to.state(name)
    out = []
    at = (use.path, use.line, use.col, name)
    if state == "unknown":
        return []
    if use.what == "env" and not any(c.entry(name) for c in censuses.all):
        return []  # an environment variable no census knows as an option: maybe not JAX's at all
    # an option set to a value JAX's validator does not warn of (`True` where it warns `if not new_val`) warns not
    warns = not (
        use.what == "config" and condition_holds(str((to.entry(name) or {}).get("condition") or ""), use.value) is False
    )
    if state == "deprecated" and warns:
        since = censuses.since(lambda c: None if c.state(name) == "unknown" else c.state(name) == "deprecated")
        out.append(Finding(*at, "deprecated", since, to.message(name), to.replacement(name)))
    elif state in ("removed", "absent"):
        usable_on = sorted((c for c in censuses.all if c.usable(name)), key=lambda c: censuses.all.index(c))
        verdict = "removed" if state == "removed" or usable_on else "missing"
        since = censuses.since(lambda c: None if c.state(name) == "unknown" else c.state(name) not in USABLE)
        message = to.message(name) if state == "removed" else _absent_message(name, censuses, usable_on)
        replacement = to.replacement(name) or next(
            (c.replacement(name) for c in reversed(censuses.all) if c.replacement(name)), ""
        )
        out.append(Finding(*at, verdict, since, message, replacement))
    if before is not None and to.usable(name) and before.state(name) in ("absent", "removed"):
        since = censuses.since(lambda c: None if c.state(name) == "unknown" else c.usable(name))
        out.append(Finding(*at, "not_yet", since.lstrip("≤"), f"not in jax {before.jax}, which --from names", ""))
    if to.usable(name):
        out += judge_positional(use, name, censuses)
    return out


def not_covered(name: str, censuses: Censuses) -> str:
    """Why the census does not cover a use ('' when it does): a private module, a dunder, a module skipped or
    failed to import on `to`."""
    parts = name.split(".")
    dunder = next((p for p in parts[1:] if p.startswith("__") and p.endswith("__")), "")
    if dunder:
        return f"{dunder} is a module attribute, not a name the census lists"
    private = next((i for i, p in enumerate(parts) if p.startswith("_")), None)
    if private is not None:
        module = ".".join(parts[: private + 1])
        return f"{module} is private: the census covers public names only"
    failed = censuses.to.failed_under(name)
    if failed:
        record = censuses.to.modules.get(failed) or {}
        why = record.get("reason") or record.get("error") or record.get("status")
        return f"{failed} is not in the census of jax {censuses.to.jax} ({record.get('status')}: {why})"
    return ""


def private_name(name: str) -> bool:
    """Whether a use is under a private module (`jax._src...`) and no dunder."""
    parts = name.split(".")
    return any(p.startswith("_") for p in parts) and not any(p.startswith("__") and p.endswith("__") for p in parts)


def judge_private(use: Use, private: Census) -> list[Finding]:
    """A private use judged against the private census (`--private`): `missing` when its module no longer imports
    or the module lacks the name, each message labelled private; nothing when it resolves."""
    parts = use.name.split(".")
    at = (use.path, use.line, use.col)
    for end in range(len(parts), 1, -1):
        path = ".".join(parts[:end])
        record = private.modules.get(path)
        if record is None:
            continue
        if record.get("status") != "ok":
            return [
                Finding(
                    *at,
                    path,
                    "missing",
                    private.jax,
                    f"private: {path} does not import on jax "
                    f"{private.jax} ({record.get('error', '')}); private names go without deprecation",
                )
            ]
        name = ".".join(parts[: end + 1])
        if private.usable(name):
            return []
        return [
            Finding(
                *at,
                name,
                "missing",
                private.jax,
                f"private: jax {private.jax} has no {name}; private names go without deprecation",
            )
        ]
    return [Finding(*at, use.name, "not_judged", private.jax, f"{use.name}: no private module of it imports")]


def _guarded(findings: list[Finding], use: Use) -> list[Finding]:
    """Breaking findings of a guarded use, as `guarded` notes."""
    if not use.guarded:
        return findings
    return [
        Finding(f.path, f.line, f.col, f.name, "guarded", f.since, f"{f.message} ({use.guarded})", f.replacement)
        if f.state in BREAKING
        else f
        for f in findings
    ]


def _takes(params: list[list] | None, keyword: str) -> bool | None:
    if params is None:
        return None
    if any(p[1] == "var_keyword" for p in params):
        return True
    return any(p[0] == keyword and p[1] in KEYWORD_KINDS for p in params)


def judge_positional(use: Use, name: str, censuses: Censuses) -> list[Finding]:
    """A call passing more arguments by position than `to` takes without a deprecation warning (census
    `positional`: a `*args` that warns, as `jax.lax.dot`'s from 0.7.1)."""
    handled = censuses.to.positional(name)
    if name != use.name or handled is None or use.positional <= int(handled.get("after", 0)):
        return []
    after = int(handled["after"])
    since = censuses.since(lambda c: None if c.params(name) is None else c.positional(name) is not None)
    message = (
        f"passing more than {after} positional arguments to {name} {handled.get('effect') or 'warns'} on "
        f"jax {censuses.to.jax}: {handled.get('message') or ''}"
    )
    return [Finding(use.path, use.line, use.col, f"{name}(…)", "deprecated", since, message.rstrip(": "))]


def judge_keywords(use: Use, name: str, censuses: Censuses) -> list[Finding]:
    """A call's keyword arguments that the callable's signature on `to` does not take."""
    to = censuses.to
    if name != use.name or not to.usable(name) or to.params(name) is None:
        return []
    out = []
    for keyword in use.keywords:
        handled = to.keyword(name, keyword)
        if handled is not None:
            state = str(handled.get("state"))
            since = censuses.since(
                lambda c, k=keyword, s=state: (
                    None
                    if c.params(name) is None
                    else (c.keyword(name, k) or {}).get("state") == s
                    or (s == "removed" and _takes(c.params(name), k) is False)
                )
            )
            effect = str(handled.get("effect") or "").replace("unknown", "is deprecated")
            message = f"passing {keyword}= to {name} {effect} on jax {to.jax}: {handled.get('message') or ''}"
            out.append(
                Finding(
                    use.path,
                    use.line,
                    use.col,
                    f"{name}({keyword}=)",
                    state,
                    since.lstrip("≤") if state == "removed" else since,
                    message.rstrip(": "),
                )
            )
            continue
        if _takes(to.params(name), keyword) is not False:
            continue
        took = [c for c in censuses.all if _takes(c.params(name), keyword)]
        since = censuses.since(
            lambda c, k=keyword: None if _takes(c.params(name), k) is None else not _takes(c.params(name), k)
        )
        signature = str((to.entry(name) or {}).get("signature") or "")
        message = (
            f"{name} takes no keyword argument {keyword!r} on jax {to.jax}"
            + (f" (it did on {took[-1].jax})" if took else "")
            + (f"; its signature: {signature}" if signature else "")
        )
        out.append(
            Finding(
                use.path, use.line, use.col, f"{name}({keyword}=)", "removed" if took else "missing", since, message
            )
        )
    return out


def judge(uses: Sequence[Use], censuses: Censuses) -> list[Finding]:
    """Every finding of the uses, in file and position order."""
    findings = []
    for use in uses:
        why = not_covered(use.name, censuses)
        if why and censuses.private is not None and private_name(use.name):
            findings += _guarded(judge_private(use, censuses.private), use)
            continue
        if why:
            findings.append(Finding(use.path, use.line, use.col, use.name, "not_judged", censuses.to.jax, why))
            continue
        name = checked_name(use.name, censuses)
        if name is None or name == "jax":
            continue
        found = judge_keywords(use, name, censuses) if use.what == "call" else judge_name(use, name, censuses)
        findings += _guarded(found, use)
    return sorted(findings, key=lambda f: (f.path, f.line, f.col, f.name, f.state))


def exit_status(findings: Sequence[Finding]) -> int:
    """1 when a used name (or keyword) is removed or missing on `to`, else 0."""
    return 1 if any(f.state in BREAKING for f in findings) else 0
