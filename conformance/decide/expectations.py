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

The same file holds the other tiers' entries, read by this one reader with the same `jax`, `reason`, `bug`,
`owner`, `added` and `expires` rules (an expired entry of any kind fails the gate)::

    [[perf]]                                       # a workload change acknowledged (the workloads tier)
    workload = "performance.sort_*"                # fnmatch pattern on the workload id
    metric = ["run_s", "run_cpu_s"]                # metrics acknowledged (optional: every metric)
    jax = ">=0.9"                                  # PEP 440 specifier on the candidate's version (optional)
    reason = "sort moved to a new comparator; 1.4x slower on CPU"

    [[name]]                                       # a JAX name the team uses, its removal acknowledged (names tier)
    name = "jax.tree_map"                          # fnmatch pattern on the dotted name
    jax = ">=0.6"                                  # on the candidate's version (optional)
    reason = "replaced by jax.tree.map in the next sprint"

A malformed entry is one `ConformanceError` line that names the file, the line and the entry.
"""

from __future__ import annotations

import datetime
import fnmatch
import re
from dataclasses import dataclass, field

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from conformance.core.status import Status
from conformance.decide.cellref import CellRef, parse_cell_ref
from conformance.decide.tomllines import header_lines, toml_lines
from conformance.errors import ConformanceError
from conformance.perf.stats import METRICS
from conformance.tomltable import first_unknown, known_table, parse_toml, read_toml_file

KEYS = ("cell", "status", "intermittent", "platform", "jax", "reason", "bug", "owner", "added", "expires")
WARN_DAYS = 14  # an entry this many days (or fewer) from its expiry is warned about
EXPECTED, INTERMITTENT = "expected", "intermittent"


@dataclass(frozen=True, kw_only=True)
class Terms:
    """The keys every kind of entry shares (`common_fields` checks them): the candidate versions it holds on (`jax`,
    a PEP 440 specifier), why, a bug link, an owner, and when it was added and expires. Keyword arguments only, so
    each kind of entry keeps its own fields first."""

    jax: str = ""
    reason: str = ""
    bug: str = ""
    owner: str = ""
    added: datetime.date | None = None
    expires: datetime.date | None = None

    @property
    def who(self) -> str:
        """`owner alice, bug URL` (what it has of the two), or `no owner, no bug`."""
        return f"{f'owner {self.owner}' if self.owner else 'no owner'}, {f'bug {self.bug}' if self.bug else 'no bug'}"

    def days_left(self, today: datetime.date) -> int | None:
        """Days from `today` to the entry's expiry (0 on the day it expires, negative after); None without one."""
        return None if self.expires is None else (self.expires - today).days


@dataclass(frozen=True)
class Expectation(Terms):
    """One entry: the cell it is about, the statuses it accepts, its conditions and its reason."""

    line: int
    cell: CellRef
    statuses: frozenset[Status]
    intermittent: frozenset[Status] = frozenset()
    platforms: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How the entry is named in the gate's output: its cell and its line."""
        return f"{self.cell.cell_id} (line {self.line})"

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


def _entry_lines(text: str, table: str = "expect") -> list[int]:
    """Each `[[table]]` entry's header line (1-based), as TOML reads the file: never a line inside a multi-line
    string."""
    return [i + 1 for i in header_lines(text, table)]


def _key_line(text: str, start: int, key: str) -> int:
    lines = toml_lines(text)
    headers = {line for table in TABLES for line in _entry_lines(text, table)}
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


def _failing(kind: str, number: int, line: int, text: str, source: str):
    """The one-line refusal of entry `number` of a kind, at the line of the key it names (else its header's)."""

    def fail(key: str | None, message: str):
        where = _key_line(text, line, key) if key and line else line
        place = f"{source}:{where}" if where else source
        raise ConformanceError(f"{place}: {kind} entry {number}: {message}")

    return fail


def _entry(data: object, number: int, line: int, text: str, source: str) -> Expectation:
    fail = _failing("expectation", number, line, text, source)
    data = known_table(data, KEYS, fail)
    cell_text = data.get("cell")  # type: ignore[union-attr]
    if cell_text is None:
        fail(None, 'needs `cell = "case[param]"`')
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
        fail("platform", '`platform` should be a pattern such as "linux-*" or a list of them')
    return Expectation(
        line=line,
        cell=cell,
        statuses=statuses,
        intermittent=intermittent,  # type: ignore[arg-type]
        platforms=tuple(platforms),
        **common_fields(data, fail),
    )  # type: ignore[arg-type]


def common_fields(data: dict, fail, reason_needed: bool = False) -> dict:
    """The keys every kind of entry shares, checked by one rule: `jax` (a PEP 440 specifier on the candidate),
    `reason`, `bug` (an http(s) link), `owner`, `added` and `expires` (TOML dates, `expires` after `added`), as keyword
    arguments; `fail(key, message)` raises the caller's one-line error. `[[downstream]]` entries use it too."""
    jax = data.get("jax", "")
    if not isinstance(jax, str):
        fail("jax", '`jax` should be a version specifier string such as ">=0.8"')
    try:
        SpecifierSet(jax)
    except InvalidSpecifier:
        fail("jax", f'`jax` is {jax!r}, not a version specifier such as ">=0.8" or ">=0.7,<0.9"')
    for key in ("reason", "bug", "owner"):
        if not isinstance(data.get(key, ""), str):
            fail(key, f"`{key}` should be a string")
    if reason_needed and not data.get("reason", "").strip():
        fail(None, 'needs `reason = "..."` (why the change is accepted)')
    bug = data.get("bug", "")
    if bug and not _URL.match(bug):
        fail("bug", f'`bug` is {bug!r}, not a link such as "https://github.com/jax-ml/jax/issues/12345"')
    added, expires = (_date(data.get(key), key, fail) for key in ("added", "expires"))
    if added and expires and expires <= added:
        fail("expires", f"`expires` ({expires}) should come after `added` ({added})")
    return {
        "jax": jax,
        "reason": data.get("reason", "").strip() if reason_needed else data.get("reason", ""),
        "bug": bug,
        "owner": data.get("owner", ""),
        "added": added,
        "expires": expires,
    }


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
        return (
            f"expectation {entry.label} expired on {entry.expires} ({entry.who}): renew its `expires` "
            f"or remove the entry"
        )

    def expiring_line(self, entry: Expectation) -> str:
        """One line warning that an entry expires soon."""
        days = entry.days_left(self.today)
        return (
            f"expectation {entry.label} expires on {entry.expires}, in {days} day{'s' if days != 1 else ''} "
            f"({entry.who})"
        )


def lifecycle(entries: list, today: datetime.date, warn_days: int = WARN_DAYS) -> Lifecycle:
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


PERF_KEYS = ("workload", "metric", "jax", "reason", "bug", "owner", "added", "expires")
NAME_KEYS = ("name", "jax", "reason", "bug", "owner", "added", "expires")
TABLES = ("expect", "perf", "name")
# [[downstream]]: `downstream.acks`, `gate --downstream`
TOP_LEVEL_KEYS = (*TABLES, "downstream", "fail_on_printed", "allow_missing")


@dataclass(frozen=True)
class Acknowledgement(Terms):
    """A `[[perf]]` or `[[name]]` entry: what it acknowledges (`pattern`, fnmatch; for `[[perf]]` the `metrics`, none
    meaning every metric), on which candidate versions (`jax`), and the keys every entry shares (`Terms`)."""

    kind: str
    line: int
    pattern: str
    metrics: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How the entry is named in the gate's output: its kind, pattern and line."""
        return f"[[{self.kind}]] {self.pattern} (line {self.line})"

    def applies(self, subject: str, candidate: str, metric: str = "") -> bool:
        """Whether it acknowledges `subject` (a workload id or a name; for `[[perf]]` its `metric`) on the candidate
        version `candidate` (the version the team moves to: the specifier is never read against the baseline)."""
        if not fnmatch.fnmatchcase(subject, self.pattern) or (self.metrics and metric not in self.metrics):
            return False
        return not self.jax or SpecifierSet(self.jax).contains(candidate, prereleases=True)


def _acknowledgement(kind: str, data: object, number: int, line: int, text: str, source: str) -> Acknowledgement:
    fail = _failing(f"[[{kind}]]", number, line, text, source)
    data = known_table(data, PERF_KEYS if kind == "perf" else NAME_KEYS, fail)
    key = "workload" if kind == "perf" else "name"
    pattern = data.get(key)
    if not isinstance(pattern, str) or not pattern.strip():
        fail(key if key in data else None, f'needs `{key} = "PATTERN"` (an fnmatch pattern)')
    metrics = data.get("metric", [])
    metrics = [metrics] if isinstance(metrics, str) else metrics
    if not isinstance(metrics, list) or any(m not in METRICS for m in metrics):
        fail("metric", f"`metric` takes names of {', '.join(METRICS)}")
    return Acknowledgement(kind, line, pattern.strip(), tuple(metrics), **common_fields(data, fail, reason_needed=True))


@dataclass(frozen=True)
class ExpectationsFile:
    """A parsed expectations file: its entries of every kind and the gate's settings. `downstream` holds the
    `[[downstream]]` tables as parsed (`downstream.acks` checks them, for the candidate and day it judges), and
    `source` the file's name for their errors: the file is read and parsed once per command."""

    entries: list[Expectation]
    fail_on_printed: bool = False
    allow_missing: bool = False
    perf: list[Acknowledgement] = field(default_factory=list)
    names: list[Acknowledgement] = field(default_factory=list)
    downstream: object = field(default_factory=list)
    source: str = "expectations"

    def dated(self) -> list:
        """Every entry of every kind, for `lifecycle` (one expiry rule for all)."""
        return [*self.entries, *self.perf, *self.names]


def parse_expectations_file(text: str, source: str = "expectations") -> ExpectationsFile:
    """The entries and settings of an expectations file; a malformed one is a one-line error naming its line."""
    data = parse_toml(text, source)
    unknown = first_unknown(data, TOP_LEVEL_KEYS)
    if unknown is not None:
        line = _key_line(text, 1, unknown)
        raise ConformanceError(
            f"{source}:{line}: unknown top-level key `{unknown}`; entries are [[expect]], "
            f"[[perf]] and [[name]] tables "
            f"(top-level keys: {', '.join(TOP_LEVEL_KEYS)})"
        )
    for flag in ("fail_on_printed", "allow_missing"):
        if not isinstance(data.get(flag, False), bool):
            raise ConformanceError(f"{source}:{_key_line(text, 1, flag)}: `{flag}` should be true or false")
    tables = {}
    for table in TABLES:
        entries = data.get(table, [])
        if not isinstance(entries, list):
            raise ConformanceError(f"{source}: `{table}` should be a list of [[{table}]] tables")
        lines = _entry_lines(text, table)
        tables[table] = list(zip(entries, lines if len(lines) == len(entries) else [0] * len(entries)))
    cells = [_entry(entry, i, line, text, source) for i, (entry, line) in enumerate(tables["expect"], 1)]
    return ExpectationsFile(
        cells,
        data.get("fail_on_printed", False),
        data.get("allow_missing", False),
        *(
            [_acknowledgement(kind, entry, i, line, text, source) for i, (entry, line) in enumerate(tables[kind], 1)]
            for kind in ("perf", "name")
        ),
        downstream=data.get("downstream", []),
        source=source,
    )


def parse_expectations(text: str, source: str = "expectations") -> list[Expectation]:
    """The entries of an expectations file; a malformed one is a one-line error naming its line."""
    return parse_expectations_file(text, source).entries


MAX_EXPECTATIONS_BYTES = 16 * 1024 * 1024  # a hand-written file; far past any team's


def load_expectations_file(path) -> ExpectationsFile:
    """Read and parse an expectations file, entries and settings (`tomltable`'s bounded reader)."""
    return parse_expectations_file(read_toml_file(path, MAX_EXPECTATIONS_BYTES, "the expectations file"), str(path))


def load_expectations(path) -> list[Expectation]:
    """Read and parse an expectations file's entries."""
    return load_expectations_file(path).entries


def utc_today() -> datetime.date:
    """Today's date in UTC: the day the CLI reads expiry dates on (tests pass their own day instead)."""
    return datetime.datetime.now(datetime.timezone.utc).date()
