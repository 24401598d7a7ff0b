"""The gate's expectations file: which statuses a team expects for a cell, under which conditions, and why. Pure.

Borrowed from web-platform-tests' expectation metadata: an expected status or statuses per
cell, known intermittent results, conditions on the platform and the JAX version, a reason
and a bug link. TOML, one `[[expect]]` table per entry::

    [[expect]]
    cell = "numerics.debug_nans_vmap_miss[vmap]"   # `case[param]`, `case:param`, or `case` for every parameter
    status = ["conforms"]                          # statuses the candidate is expected to have
    intermittent = ["flaky", "timeout"]            # known intermittent results, also accepted (optional)
    platform = "linux-*"                           # fnmatch pattern or list of them (optional: any platform)
    jax = ">=0.8"                                  # PEP 440 specifier on the candidate's JAX version (optional)
    reason = "debug_nans misses NaNs once vmap has been traced"
    bug = "https://github.com/jax-ml/jax/issues/00000"  # an http(s) URL (optional)
    owner = "numerics-team"                            # who renews or removes it (optional)
    added = 2026-11-01                                 # TOML dates or "YYYY-MM-DD" strings (optional)
    expires = 2027-02-01                               # from this day on the gate fails on the entry (optional)

Dates are read against a `today` the caller passes (`lifecycle`), so the decision is exact in tests.

A top-level `fail_on_printed = true` makes the gate fail on a change of printed output alone
(wording, reprs, counts the chapter only prints), as `--fail-on-printed` does; `allow_missing = true`
accepts baseline cells the candidate lacks and platforms run on one side only, as `--allow-missing` does.

A malformed entry is one `ConformanceError` line that names the file, the line and the entry.
"""

from __future__ import annotations

import datetime
import fnmatch
import re
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conformance.core.status import Status
from conformance.decide.tomllines import header_lines, toml_lines
from conformance.readfile import read_regular_text
from conformance.decide.cellref import CellRef, parse_cell_ref
from conformance.errors import ConformanceError

KEYS = ("cell", "status", "intermittent", "platform", "jax", "reason", "bug", "owner", "added", "expires")
WARN_DAYS = 14  # an entry this many days (or fewer) from its expiry is warned about
EXPECTED, INTERMITTENT = "expected", "intermittent"


@dataclass(frozen=True)
class Expectation:
    """One entry: the cell it is about, the statuses it accepts, its conditions and its reason."""

    line: int
    cell: CellRef
    statuses: frozenset[Status]
    intermittent: frozenset[Status] = frozenset()
    platforms: tuple[str, ...] = ()
    jax: str = ""
    reason: str = ""
    bug: str = ""
    owner: str = ""
    added: datetime.date | None = None
    expires: datetime.date | None = None

    @property
    def label(self) -> str:
        """How the entry is named in the gate's output: its cell and its line."""
        return f"{self.cell.cell_id} (line {self.line})"

    @property
    def who(self) -> str:
        """`owner alice, bug URL` (what it has of the two), or `no owner, no bug`."""
        return f"{f'owner {self.owner}' if self.owner else 'no owner'}, {f'bug {self.bug}' if self.bug else 'no bug'}"

    def days_left(self, today: datetime.date) -> int | None:
        """Days from `today` to the entry's expiry (0 on the day it expires, negative after); None without one."""
        return None if self.expires is None else (self.expires - today).days

    def applies_to(self, platform: str, case: str, param: str, jax_version: str) -> bool:
        """Whether this entry is about the cell `case[param]` on `platform` and that JAX version."""
        if case != self.cell.case or (self.cell.param and param != self.cell.param):
            return False
        if self.platforms and not any(fnmatch.fnmatchcase(platform, p) for p in self.platforms):
            return False
        return not self.jax or SpecifierSet(self.jax).contains(jax_version, prereleases=True)

    def accepts(self, status: Status) -> str | None:
        """`expected` or `intermittent` when the entry accepts `status`, else None."""
        if status in self.statuses:
            return EXPECTED
        if status in self.intermittent:
            return INTERMITTENT
        return None


def _entry_lines(text: str) -> list[int]:
    """Each entry's header line (1-based), as TOML reads the file: never a line inside a multi-line string."""
    return [i + 1 for i in header_lines(text)]


def _key_line(text: str, start: int, key: str) -> int:
    lines = toml_lines(text)
    headers = set(_entry_lines(text))
    for number in range(start, len(lines) + 1):
        if number > start and number in headers:
            break
        if re.match(rf"^\s*\"?{re.escape(key)}\"?\s*=", lines[number - 1]):
            return number
    return start


def _statuses(value: object, fail, key: str) -> frozenset[Status]:
    words = [value] if isinstance(value, str) else value
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        fail(key, f"`{key}` should be a status or a list of statuses")
    found = set()
    for word in words:  # type: ignore[union-attr]
        try:
            found.add(Status(word))
        except ValueError:
            fail(key, f"`{key}` has {word!r}, not one of {', '.join(s.value for s in Status)}")
    return frozenset(found)


def _entry(data: object, number: int, line: int, text: str, source: str) -> Expectation:
    def fail(key: str | None, message: str):
        where = _key_line(text, line, key) if key and line else line
        place = f"{source}:{where}" if where else source
        raise ConformanceError(f"{place}: expectation entry {number}: {message}")

    if not isinstance(data, dict):
        fail(None, "is not a table")
    unknown = [k for k in data if k not in KEYS]  # type: ignore[union-attr]
    if unknown:
        fail(unknown[0], f"unknown key `{unknown[0]}` (known keys: {', '.join(KEYS)})")
    cell_text = data.get("cell")  # type: ignore[union-attr]
    if cell_text is None:
        fail(None, "needs `cell = \"case[param]\"`")
    cell = parse_cell_ref(cell_text) if isinstance(cell_text, str) else None
    if cell is None:
        fail("cell", f"`cell` should name a cell such as numerics.debug_nans_vmap_miss[vmap], not {cell_text!r}")
    statuses = _statuses(data.get("status", []), fail, "status")  # type: ignore[union-attr]
    intermittent = _statuses(data.get("intermittent", []), fail, "intermittent")  # type: ignore[union-attr]
    if not statuses and not intermittent:
        fail(None, "needs `status = [...]` (the statuses it expects)")
    platforms = data.get("platform", [])  # type: ignore[union-attr]
    platforms = [platforms] if isinstance(platforms, str) else platforms
    if not isinstance(platforms, list) or not all(isinstance(p, str) and p for p in platforms):
        fail("platform", "`platform` should be a pattern such as \"linux-*\" or a list of them")
    common = common_fields(data, fail)  # type: ignore[arg-type]
    return Expectation(line=line, cell=cell, statuses=statuses, intermittent=intermittent,  # type: ignore[arg-type]
                       platforms=tuple(platforms), **common)


def common_fields(data: dict, fail) -> dict:
    """The keys every kind of entry shares, checked (`jax`, `reason`, `bug`, `owner`, `added`, `expires`), as
    keyword arguments; `fail(key, message)` raises the caller's one-line error. `[[downstream]]` entries use it too."""
    jax = data.get("jax", "")  # type: ignore[union-attr]
    if not isinstance(jax, str):
        fail("jax", "`jax` should be a version specifier string such as \">=0.8\"")
    try:
        SpecifierSet(jax)
    except InvalidSpecifier:
        fail("jax", f"`jax` is {jax!r}, not a version specifier such as \">=0.8\" or \">=0.7,<0.9\"")
    for key in ("reason", "bug", "owner"):
        if not isinstance(data.get(key, ""), str):  # type: ignore[union-attr]
            fail(key, f"`{key}` should be a string")
    bug = data.get("bug", "")  # type: ignore[union-attr]
    if bug and not _URL.match(bug):
        fail("bug", f"`bug` is {bug!r}, not a link such as \"https://github.com/jax-ml/jax/issues/12345\"")
    added, expires = (_date(data.get(key), key, fail) for key in ("added", "expires"))  # type: ignore[union-attr]
    if added and expires and expires <= added:
        fail("expires", f"`expires` ({expires}) should come after `added` ({added})")
    return {"jax": jax, "reason": data.get("reason", ""), "bug": bug, "owner": data.get("owner", ""),
            "added": added, "expires": expires}


_URL = re.compile(r"^https?://[^\s/]+\S*$")


def _date(value: object, key: str, fail) -> datetime.date | None:
    """A TOML date (`2027-02-01`) or a string holding one; a datetime or anything else is refused in one line."""
    if value is None:
        return None
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    fail(key, f"`{key}` is {value!r}, not a date such as 2027-02-01 (YYYY-MM-DD)")
    return None


@dataclass
class Lifecycle:
    """Where the entries of a file stand on one day: expired ones fail the gate, expiring ones are warned about."""

    today: datetime.date
    expired: list[Expectation] = field(default_factory=list)
    expiring: list[Expectation] = field(default_factory=list)

    def expired_line(self, entry: Expectation) -> str:
        """One line naming an expired entry, its owner and its bug."""
        return (f"expectation {entry.label} expired on {entry.expires} ({entry.who}): renew its `expires` "
                f"or remove the entry")

    def expiring_line(self, entry: Expectation) -> str:
        """One line warning that an entry expires soon."""
        days = entry.days_left(self.today)
        return (f"expectation {entry.label} expires on {entry.expires}, in {days} day{'s' if days != 1 else ''} "
                f"({entry.who})")


def lifecycle(entries: list[Expectation], today: datetime.date, warn_days: int = WARN_DAYS) -> Lifecycle:
    """Which entries have expired on `today` (their `expires` day has come) and which expire within `warn_days`."""
    found = Lifecycle(today)
    for entry in entries:
        days = entry.days_left(today)
        if days is None:
            continue
        if days <= 0:
            found.expired.append(entry)
        elif days <= warn_days:
            found.expiring.append(entry)
    return found


# [[perf]]: `perf.acks`, `gate --perf`; [[downstream]]: `downstream.acks`, `gate --downstream`
TOP_LEVEL_KEYS = ("expect", "fail_on_printed", "allow_missing", "perf", "downstream")


@dataclass(frozen=True)
class ExpectationsFile:
    """A parsed expectations file: its entries and the gate's settings."""

    entries: list[Expectation]
    fail_on_printed: bool = False
    allow_missing: bool = False


def parse_expectations_file(text: str, source: str = "expectations") -> ExpectationsFile:
    """The entries and settings of an expectations file; a malformed one is a one-line error naming its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{source}: does not parse as TOML: {exc}") from None
    unknown = [k for k in data if k not in TOP_LEVEL_KEYS]
    if unknown:
        line = _key_line(text, 1, unknown[0])
        raise ConformanceError(f"{source}:{line}: unknown top-level key `{unknown[0]}`; entries are [[expect]] tables "
                               f"(top-level keys: {', '.join(TOP_LEVEL_KEYS)})")
    for flag in ("fail_on_printed", "allow_missing"):
        if not isinstance(data.get(flag, False), bool):
            raise ConformanceError(f"{source}:{_key_line(text, 1, flag)}: `{flag}` should be true or false")
    entries = data.get("expect", [])
    if not isinstance(entries, list):
        raise ConformanceError(f"{source}: `expect` should be a list of [[expect]] tables")
    lines = _entry_lines(text)
    if len(lines) != len(entries):
        lines = [0] * len(entries)
    return ExpectationsFile([_entry(entry, i, lines[i - 1], text, source) for i, entry in enumerate(entries, 1)],
                            data.get("fail_on_printed", False), data.get("allow_missing", False))


def parse_expectations(text: str, source: str = "expectations") -> list[Expectation]:
    """The entries of an expectations file; a malformed one is a one-line error naming its line."""
    return parse_expectations_file(text, source).entries


MAX_EXPECTATIONS_BYTES = 16 * 1024 * 1024  # a hand-written file; far past any team's


def load_expectations_file(path) -> ExpectationsFile:
    """Read and parse an expectations file, entries and settings."""
    try:
        text = read_regular_text(path, MAX_EXPECTATIONS_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"{path}: cannot read the expectations file ({getattr(exc, 'strerror', None) or exc})"
                               ) from None
    return parse_expectations_file(text, str(path))


def load_expectations(path) -> list[Expectation]:
    """Read and parse an expectations file's entries."""
    return load_expectations_file(path).entries


def utc_today() -> datetime.date:
    """Today's date in UTC: the day the CLI reads expiry dates on (tests pass their own day instead)."""
    return datetime.datetime.now(datetime.timezone.utc).date()

