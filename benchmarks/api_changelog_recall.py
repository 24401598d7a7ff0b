"""Recall of `api diff` against JAX's own CHANGELOG: each countable removal or deprecation of a name, a config
option, a module, a keyword parameter or a class member that the changelog states for a release, looked up among
the changes `api diff` finds from the release before it to that release (dated over the stored censuses).

    python benchmarks/api_changelog_recall.py --results DIR [--changelog FILE] [--first 0.5.0] [--last 0.11.0]
        [--json OUT]

The changelog defaults to `git show HEAD:CHANGELOG.md` in the jax mirror (`/work/.mirror/jax-ml+jax/repo`).

The counting rule (what an entry is):

1. The bullets of each release's section from `--first` to `--last`; a nested bullet is a bullet of its own, and
   one that states nothing itself takes the event of a parent that introduces a list ("The following public APIs
   are no longer available:"; a heading such as "Deprecations:" introduces none).
2. Each sentence of a bullet on its own (a sentence that lists what the one before spoke of, "These include ...",
   is joined to it). A sentence states an event when it says removed, deleted, renamed, no longer available or
   exported (`removed`), or deprecated or "will be removed" (an announced removal: `deprecated`). Only the text
   before a replacement phrase ("use", "instead", "in favor of", "moved to", "prefer", ...) names what went, so a
   replacement never counts, nor a name a later sentence mentions ("`jax.vjp` subsumes its functionality").
3. What it names: each backticked JAX path (`jax.x.y`, and the aliases `jnp.`, `lax.`, `jsp.`, `jtu.`, `jax2tf.`,
   `jx.`, a typo of the 0.8.1 section) or one written plainly (`jax.cloud_tpu_init`); each `jax_...` option
   (`config.jax_...` too); bare names listed after a module (`From jax.interpreters.pxla: MapTracer, ...`) as that
   module's; in a sentence about an argument, parameter or keyword, each bare name as a keyword of each function
   named (or of the function the bullet named last: "The `use_magma` argument is now deprecated"); a `.member`
   of a class path in a sentence about a property, attribute or method. Each named thing is one entry. Kinds:
   `keyword`, `config`, `member`, `module` (`{mod}`, a path the censuses know as a module, or the word module),
   else `name`.
4. Not counted, because no census of names could ever see them: a sentence about behaviour or a way of calling
   (`BEHAVIOUR`: "no longer accepts", "now returns", "show a deprecation warning for", "is used without"), or about
   values or inputs of a kind where it names no parameter ("Complex arguments passed to `jnp.arange`",
   "non-arraylike inputs"); and what JAX's own compatibility policy (docs/api_compatibility.md) calls private: a
   path with a part that starts with `_` (`jax.interpreters.pxla._UNSPECIFIED`) and anything in `jaxlib` ("Any
   import path in the jaxlib package is considered private"). A deprecation of passing a parameter by position
   (`jax.numpy.array(copy=)`, 0.10.1) counts: the signature shows it (the parameter becomes keyword-only).
5. A name no census holds where exactly one census name is it one module further down is read as that one (the
   changelog names the package: `jax.experimental.compilation_cache.is_initialized`).

An entry is *found at the release* when a change of the diff (previous release → that release) matches it with
`since` that release: a removed name is `removed` or `moved` (or a module above it removed, or a removed
`name(keyword=)`); a deprecated one `deprecated` or `moved` (or its module deprecated); a keyword one the
`name(keyword=)` change or a signature change naming the parameter; a statement about a module (the deprecated
functions in `jax.dlpack` were removed) any change of that kind under it. *Found at any release*: the same match
in the diff of any two neighbouring stored censuses. A miss is printed with its reason, from the censuses: the
releases where they date it, a class member (the census records the names of modules), under a module that does
not import in the census environment, in no census. Needs the censuses of every release from the one before
`--first` to `--last` stored in DIR/api (`jax-conformance api census --jax ... --results DIR`). Prints one JSON
object, then the misses.
"""

from __future__ import annotations

import argparse
import builtins
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.api.diff import Change, diff_chain  # noqa: E402
from conformance.api.store import stored_censuses  # noqa: E402
from conformance.results.versions import version_order  # noqa: E402

MIRROR = Path("/work/.mirror/jax-ml+jax/repo")
SECTION = re.compile(r"^## (?:JAX|jax) (\d+\.\d+\.\d+(?:\.\d+)?)\b", re.M)
TOKEN = re.compile(r"(?:\{(func|obj|mod|class|data|attr|meth)\}\s*)?(``|`)([^`]+)\2")
# A JAX path written without backticks (`The deprecated module jax.cloud_tpu_init was removed.`), not a URL's host.
PLAIN_PATH = re.compile(r"(?<![\w./`-])jax(?:\.[A-Za-z_]\w*)+")
# The aliases JAX's changelog writes, and `jx.` (a typo of the 0.8.1 section: `jx.device_put_replicated`).
ALIASES = {
    "jnp.": "jax.numpy.",
    "lax.": "jax.lax.",
    "jsp.": "jax.scipy.",
    "jtu.": "jax.tree_util.",
    "jax2tf.": "jax.experimental.jax2tf.",
    "jx.": "jax.",
}
REMOVED_WORDS = ("removed", "been deleted", "was deleted", "no longer available", "no longer exported", "renamed")
ANNOUNCED = re.compile(r"\b(will|to) be (removed|deleted)\b[^.;]*", re.I)  # an announced removal: a deprecation
# Where a sentence goes on to name what replaces the thing: only the text before it names what went.
REPLACEMENT = re.compile(
    r"(;|\.|,)?\s*\b(please use|use |instead|in favou?r of|replaced (?:by|with)|replacement|"
    r"going forward|migrate to|see |can be used|are available|is available|should be used|"
    r"moved to|now lives|is now|renamed to|prefer )",
    re.I,
)
# A sentence about behaviour or a way of calling, not about a name, an option, a module or a parameter going.
BEHAVIOUR = re.compile(
    r"no longer (accept|support|allow|return|round|canonicali)|now (raises|errors|returns|"
    r"requires|round)|will be treated|show a deprecation warning|resulted in a|default (value|"
    r"behavio)|deprecation warning (for|when)|has changed|non-`|warning for|is used without|"
    r"when used as",
    re.I,
)
# Values or inputs of a kind (`Complex arguments passed to jnp.arange`, `non-arraylike inputs`): a use, where the
# sentence names no parameter.
USE_OF_VALUES = re.compile(r"\b(arguments?|inputs?|arrays?|values?)\b", re.I)
KEYWORDY = re.compile(r"\b(argument|parameter|keyword|kwarg)s?\b", re.I)
MEMBERY = re.compile(r"\b(propert(y|ies)|attributes?|methods?)\b", re.I)
CONTINUES = re.compile(r"^(These include|This includes|Including)\b")
BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NOT_NAMES = {"True", "False", "None"} | {
    n
    for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
}


@dataclass(frozen=True)
class Entry:
    """One countable statement: `release`, `event` (removed | deprecated), `kind` (name, module, config, keyword,
    member), `name`, `keyword`, the bullet."""

    release: str
    event: str
    kind: str
    name: str
    keyword: str
    text: str


def sections(changelog: str) -> dict[str, str]:
    """release → its section's text."""
    found = list(SECTION.finditer(changelog))
    return {
        m.group(1): changelog[m.end() : (found[i + 1].start() if i + 1 < len(found) else len(changelog))]
        for i, m in enumerate(found)
    }


def bullets(text: str) -> list[tuple[str, str]]:
    """The bullets of a section, each with its continuation lines (nested bullets apart), and its parent's text
    ('' for a top-level one)."""
    out: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        if re.match(r"^\s*[*-] ", line):
            out.append((len(line) - len(line.lstrip()), [line.strip()[2:]]))
        elif out and line.strip() and not line.lstrip().startswith("#"):
            out[-1][1].append(line.strip())
    found = []
    for i, (indent, lines) in enumerate(out):
        parent = next((" ".join(o[1]) for o in reversed(out[:i]) if o[0] < indent), "")
        found.append((" ".join(lines), parent))
    return found


def event_of(text: str) -> str:
    """removed, deprecated or '': what a sentence says happened (an announced removal is a deprecation)."""
    announced = bool(ANNOUNCED.search(text))
    rest = ANNOUNCED.sub("", text).lower()
    if any(w in rest for w in REMOVED_WORDS):
        return "removed"
    return "deprecated" if announced or "deprecat" in text.lower() else ""


def sentences(bullet: str) -> list[tuple[str, str]]:
    """The bullet's sentences, each with its subject (the text before a replacement phrase); a sentence that lists
    what the one before it spoke of ("These include ...") is joined to it."""
    out: list[tuple[str, str]] = []
    for part in re.split(r"(?<=\.)\s+(?=[A-Z`{])", bullet):
        subject = REPLACEMENT.split(part, maxsplit=1)[0]
        if out and CONTINUES.match(part):
            out[-1] = (out[-1][0] + " " + part, out[-1][1] + " " + subject)
        else:
            out.append((part, subject))
    return out


def _path(token: str) -> str:
    token = token.strip().lstrip("~!").split("(")[0].rstrip(".,:;=")
    for alias, full in ALIASES.items():
        if token.startswith(alias):
            return full + token[len(alias) :]
    return token


def private(path: str) -> bool:
    """Private by JAX's own policy (docs/api_compatibility.md): a part that starts with `_`, or anything in jaxlib."""
    return path.split(".")[0] == "jaxlib" or any(part.startswith("_") for part in path.split("."))


def _tokens(subject: str) -> list[tuple[str, str]]:
    found = [(role, _path(text)) for role, _, text in TOKEN.findall(subject)]
    plain = TOKEN.sub(" ", subject)
    return found + [("", m.rstrip(".")) for m in PLAIN_PATH.findall(plain)]


def sentence_entries(
    release: str, event: str, text: str, subject: str, modules: set[str], last_function: str
) -> list[Entry]:
    """The entries one sentence states (see the module docstring)."""
    if BEHAVIOUR.search(subject):
        return []
    tokens = _tokens(subject)
    paths = [(role, p) for role, p in tokens if re.fullmatch(r"jax(lib)?(\.\w+)+", p) and ".config.jax_" not in p]
    options = [re.sub(r"^(jax\.)?config\.", "", p) for _, p in tokens if re.fullmatch(r"(jax\.)?(config\.)?jax_\w+", p)]
    bare = [p for _, p in tokens if BARE.fullmatch(p) and not p.startswith("jax_") and p not in NOT_NAMES]
    members = [x.lstrip(".") for _, _, x in TOKEN.findall(subject) if x.startswith(".") and BARE.fullmatch(x[1:])]
    if not bare and not options and not members and USE_OF_VALUES.search(subject):
        return []  # values or inputs of a kind: a use
    if KEYWORDY.search(subject) and bare and (paths or last_function):
        fns = [p for role, p in paths if role != "mod" and p not in modules] or [last_function]
        return [Entry(release, event, "keyword", fn, kw, text) for fn in fns for kw in bare]
    out = [Entry(release, event, "config", f"jax.config.{o}", "", text) for o in options]
    if members and paths and MEMBERY.search(subject):
        return out + [Entry(release, event, "member", f"{paths[0][1]}.{m}", "", text) for m in members]
    container = next((p for _, p in paths if p in modules), "") if bare else ""
    if container:
        out += [Entry(release, event, "name", f"{container}.{b}", "", text) for b in bare]
        paths = [(role, p) for role, p in paths if p != container]
    says_module = re.search(r"\b(sub)?modules?\b", subject, re.I)
    for role, path in paths:
        module = role == "mod" or path in modules or bool(says_module) and role != "func"
        out.append(Entry(release, event, "module" if module else "name", path, "", text))
    return out


def _heading(parent: str) -> bool:
    """A parent that introduces a list ("... have been removed, including:"), not a heading ("Deprecations:")."""
    return parent.rstrip().endswith(":") and len(parent.split()) > 2


def entries(changelog: str, first: str, last: str, modules: set[str] = frozenset()) -> list[Entry]:
    """The countable entries of the releases from `first` to `last` (see the module docstring); `modules`: the
    module paths the censuses know, so that bare names a sentence lists after one (`From jax.interpreters.pxla:
    MapTracer, ...`) are read as that module's, and a module named as a name is read as a module."""
    low, high = version_order(first), version_order(last)
    out = []
    for release, text in sections(changelog).items():
        if not low <= version_order(release) <= high:
            continue
        for bullet, parent in bullets(text):
            said = sentences(bullet)
            inherited = event_of(parent) if _heading(parent) and not any(event_of(t) for t, _ in said) else ""
            last_function = ""
            for sentence, subject in said:
                event = event_of(sentence) or inherited
                if event:
                    out += [
                        e
                        for e in sentence_entries(release, event, bullet, subject, modules, last_function)
                        if not private(e.name)
                    ]
                fns = [p for role, p in _tokens(subject) if role == "func"]
                last_function = fns[-1] if fns else last_function
    return list(dict.fromkeys(out))


def resolve(entry: Entry, known: set[str]) -> Entry:
    """A name no census holds, where exactly one census name is it one module further down (the changelog names
    the package: `jax.experimental.compilation_cache.is_initialized` is
    `jax.experimental.compilation_cache.compilation_cache.is_initialized`): that path."""
    if entry.kind not in ("name", "keyword") or entry.name in known or "." not in entry.name:
        return entry
    parent, leaf = entry.name.rsplit(".", 1)
    found = [
        n
        for n in known
        if n.startswith(parent + ".") and n.endswith("." + leaf) and n.count(".") == entry.name.count(".") + 1
    ]
    return replace(entry, name=found[0]) if len(found) == 1 else entry


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def matches(entry: Entry, change: Change) -> bool:
    """Whether a change of the diff is the one the entry states."""
    name = entry.name
    if entry.kind == "keyword":
        if change.name == f"{name}({entry.keyword}=)":
            return True
        return (
            change.name == name
            and change.change == "signature"
            and bool(re.search(rf"\bparameter {re.escape(entry.keyword)}\b", change.message))
        )
    wanted = ("removed", "moved") if entry.event == "removed" else ("deprecated", "moved", "removed")
    if change.change not in wanted:
        return False
    if change.name == name or change.name.startswith(name + "("):
        return True
    if _under(name, change.name):  # a module above it removed or deprecated: one change
        return True
    return entry.kind == "module" and _under(change.name, name)  # "the deprecated functions in jax.dlpack ..."


def neighbours(censuses: list, release: str) -> list:
    """The chain from the census before `release` to `release` (empty when either is missing)."""
    versions = [c.jax for c in censuses]
    if release not in versions or versions.index(release) == 0:
        return []
    i = versions.index(release)
    return [censuses[i - 1], censuses[i]]


def why_missed(entry: Entry, censuses: list, dated: list[str]) -> str:
    """A miss's reason, as the censuses show it."""
    if entry.kind == "member":
        return "a member of a class: the census records the names of modules, not of classes"
    if dated:
        return f"the censuses date it at {', '.join(dated)}"
    states = {c.state(entry.name) for c in censuses}
    if states <= {"unknown", "absent"} and "unknown" in states:
        failed = next((c.failed_under(entry.name) for c in censuses if c.failed_under(entry.name)), "")
        return f"under {failed}, which does not import in the census environment" if failed else "unknown"
    if states == {"absent"}:
        return "in no census"
    return "no change of it in any diff: " + ", ".join(sorted(states))


def _states(censuses: list, entry: Entry) -> str:
    name = entry.name
    return ", ".join(f"{c.jax}:{c.state(name)}" for c in censuses)


def main(argv: list[str] | None = None) -> int:
    """Print the recall (see the module docstring)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--changelog", type=Path)
    parser.add_argument("--first", default="0.5.0")
    parser.add_argument("--last", default="0.11.0")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    text = (
        args.changelog.read_text(encoding="utf-8")
        if args.changelog
        else subprocess.run(
            ["git", "-C", str(MIRROR), "show", "HEAD:CHANGELOG.md"], capture_output=True, text=True, check=True
        ).stdout
    )
    censuses = sorted(stored_censuses(args.results), key=lambda c: version_order(c.jax))
    diffs = {c.jax: diff_chain(neighbours(censuses, c.jax)) for c in censuses}
    modules = {n for c in censuses for n, e in c.names.items() if e.get("kind") == "module"} | {
        m for c in censuses for m in c.modules
    }
    known = {n for c in censuses for n in c.names}
    found = list(dict.fromkeys(resolve(e, known) for e in entries(text, args.first, args.last, modules)))
    at_release, anywhere, misses = 0, 0, []
    for entry in found:
        here = any(matches(entry, ch) and ch.since == entry.release for ch in diffs.get(entry.release, []))
        dated = sorted(
            {ch.since for changes in diffs.values() for ch in changes if matches(entry, ch)}, key=version_order
        )
        at_release += here
        anywhere += here or bool(dated)
        if not here:
            misses.append(
                {
                    **asdict(entry),
                    "text": entry.text[:240],
                    "found_elsewhere": bool(dated),
                    "why": why_missed(entry, censuses, dated),
                    "states": _states(censuses, entry),
                }
            )
    report = {
        "releases": [c.jax for c in censuses],
        "entries": len(found),
        "found_at_release": at_release,
        "found_at_any_release": anywhere,
        "recall_at_release": round(at_release / max(len(found), 1), 4),
        "recall_any": round(anywhere / max(len(found), 1), 4),
        "by_kind": {k: sum(1 for e in found if e.kind == k) for k in ("name", "module", "config", "keyword", "member")},
        "misses": misses,
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "misses"}))
    for miss in misses:
        print(
            f"miss {miss['release']} {miss['event']} {miss['kind']} {miss['name']}"
            f"{'(' + miss['keyword'] + '=)' if miss['keyword'] else ''}: {miss['why']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
