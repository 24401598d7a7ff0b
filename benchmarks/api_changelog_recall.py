"""Recall of `api diff` against JAX's own CHANGELOG: each countable removal or deprecation of a name, a config
option, a module or a keyword parameter that the changelog states for a release, looked up among the changes
`api diff` finds from the release before it to that release (dated over the stored censuses).

    python benchmarks/api_changelog_recall.py --results DIR [--changelog FILE] [--first 0.5.0] [--last 0.11.0]
        [--json OUT]

The changelog defaults to `git show HEAD:CHANGELOG.md` in the jax mirror (`/work/.mirror/jax-ml+jax/repo`). A
countable entry is a bullet of a release's section (nested bullets are bullets of their own) that says removed or
deprecated and names what with a backticked JAX path (`jax.x.y`, `jnp.x`, `lax.x`), a `jax_...` option, or a
keyword (`` `auto=` parameter of `jax.f` ``, ``the `interpolation` argument to {func}`jax.f` ``). Each named thing
is one entry. Kinds: `keyword` (a bullet about an argument/parameter, one bare name plus the function), `config`
(`jax_...`), `module` (`{mod}` or the word module), else `name`.

An entry is *found at the release* when a change of the diff (previous release → that release) matches it with
`since` that release: a removed name is `removed` or `moved` (or a module above it removed, or a removed
`name(keyword=)`); a deprecated one `deprecated` or `moved` (or its module deprecated); a keyword one the
`name(keyword=)` change or a signature change naming the parameter; a statement about a module's functions (the
deprecated functions in `jax.dlpack` were removed) any change of that kind under it. *Found at any release*: the
same match in the diff of any two neighbouring stored censuses. A miss is printed with the states of the name on
the censuses around it (the reason). Needs the censuses of every release from the one before `--first` to `--last`
stored in DIR/api (`jax-conformance api census --jax ... --results DIR`). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.api.diff import Change, diff_chain  # noqa: E402
from conformance.api.store import stored_censuses  # noqa: E402
from conformance.results.versions import version_order  # noqa: E402

MIRROR = Path("/work/.mirror/jax-ml+jax/repo")
SECTION = re.compile(r"^## (?:JAX|jax) (\d+\.\d+\.\d+(?:\.\d+)?)\b", re.M)
TOKEN = re.compile(r"(?:\{(func|obj|mod|class|data|attr|meth)\}\s*)?`([^`]+)`")
ALIASES = {"jnp.": "jax.numpy.", "lax.": "jax.lax.", "jsp.": "jax.scipy.", "jtu.": "jax.tree_util.",
           "jaxlib.": "jaxlib."}
REMOVED_WORDS = ("removed", "been deleted", "no longer available", "no longer exported", "deleted")
DEPRECATED_WORDS = ("deprecat",)


@dataclass(frozen=True)
class Entry:
    """One countable statement: `release`, `event` (removed | deprecated), `kind`, `name`, `keyword`, the bullet."""

    release: str
    event: str
    kind: str
    name: str
    keyword: str
    text: str


def sections(changelog: str) -> dict[str, str]:
    """release → its section's text."""
    found = list(SECTION.finditer(changelog))
    return {m.group(1): changelog[m.end():(found[i + 1].start() if i + 1 < len(found) else len(changelog))]
            for i, m in enumerate(found)}


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


def _event(text: str) -> str:
    lower = text.lower()
    return "removed" if any(w in lower for w in REMOVED_WORDS) else \
        "deprecated" if any(w in lower for w in DEPRECATED_WORDS) else ""


def _path(token: str) -> str:
    token = token.strip().lstrip("~!").split("(")[0].rstrip(".,:;=")
    for alias, full in ALIASES.items():
        if token.startswith(alias):
            return full + token[len(alias):]
    return token


BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NOT_NAMES = {"True", "False", "None"}


def entries(changelog: str, first: str, last: str, modules: set[str] = frozenset()) -> list[Entry]:
    """The countable entries of the releases from `first` to `last` (see the module docstring); `modules`: the
    module paths the censuses know, so that bare names a bullet lists after one (`From jax.interpreters.pxla:
    MapTracer, ...`) are read as that module's."""
    low, high = version_order(first), version_order(last)
    out = []
    for release, text in sections(changelog).items():
        if not low <= version_order(release) <= high:
            continue
        for bullet, parent in bullets(text):
            lower = bullet.lower()
            event = _event(bullet) or (_event(parent) if parent.rstrip().endswith(":") else "")
            if not event:
                continue
            tokens = [(role, _path(tok)) for role, tok in TOKEN.findall(bullet)]
            paths = [(role, p) for role, p in tokens if re.fullmatch(r"jax(lib)?(\.\w+)+", p)]
            options = [p for _, p in tokens if re.fullmatch(r"jax_\w+", p)]
            bare = [p for _, p in tokens if BARE.fullmatch(p) and not p.startswith("jax_") and p not in NOT_NAMES]
            keywordy = re.search(r"\b(argument|parameter|keyword|kwarg)s?\b", lower)
            if keywordy and bare and paths:
                fns = [p for role, p in paths if role != "mod"]
                out += [Entry(release, event, "keyword", fn, kw, bullet) for fn in fns[:1] for kw in bare]
                continue
            container = next((p for _, p in paths if p in modules), "") if bare else ""
            if container:
                out += [Entry(release, event, "name", f"{container}.{b}", "", bullet) for b in bare]
                paths = [(role, p) for role, p in paths if p != container]
            out += [Entry(release, event, "config", f"jax.config.{o}", "", bullet) for o in options]
            for role, path in paths:
                kind = "module" if role == "mod" or re.search(r"\bmodules?\b", lower) and role != "func" else "name"
                out.append(Entry(release, event, kind, path, "", bullet))
    return list(dict.fromkeys(out))


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def matches(entry: Entry, change: Change) -> bool:
    """Whether a change of the diff is the one the entry states."""
    name = entry.name
    if entry.kind == "keyword":
        if change.name == f"{name}({entry.keyword}=)":
            return True
        return change.name == name and change.change == "signature" and f"parameter {entry.keyword} " in change.message
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
    text = args.changelog.read_text(encoding="utf-8") if args.changelog else subprocess.run(
        ["git", "-C", str(MIRROR), "show", "HEAD:CHANGELOG.md"], capture_output=True, text=True, check=True).stdout
    censuses = sorted(stored_censuses(args.results), key=lambda c: version_order(c.jax))
    diffs = {c.jax: diff_chain(neighbours(censuses, c.jax)) for c in censuses}
    modules = {n for c in censuses for n, e in c.names.items() if e.get("kind") == "module"} | {
        m for c in censuses for m in c.modules}
    found = entries(text, args.first, args.last, modules)
    at_release, anywhere, misses = 0, 0, []
    for entry in found:
        here = any(matches(entry, ch) and ch.since == entry.release for ch in diffs.get(entry.release, []))
        elsewhere = here or any(matches(entry, ch) for changes in diffs.values() for ch in changes)
        at_release += here
        anywhere += elsewhere
        if not here:
            misses.append({**asdict(entry), "text": entry.text[:240], "found_elsewhere": elsewhere,
                           "states": _states(censuses, entry)})
    report = {"releases": [c.jax for c in censuses], "entries": len(found), "found_at_release": at_release,
              "found_at_any_release": anywhere, "recall_at_release": round(at_release / max(len(found), 1), 4),
              "recall_any": round(anywhere / max(len(found), 1), 4),
              "by_kind": {k: sum(1 for e in found if e.kind == k) for k in ("name", "module", "config", "keyword")},
              "misses": misses}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "misses"}))
    for miss in misses:
        print(f"miss {miss['release']} {miss['event']} {miss['kind']} {miss['name']}"
              f"{'(' + miss['keyword'] + '=)' if miss['keyword'] else ''} [elsewhere={miss['found_elsewhere']}]"
              f" {miss['states']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
