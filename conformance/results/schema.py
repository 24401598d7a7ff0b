"""The result schema: the run header and the cell result, as dataclasses with `to_json` and `from_json`.

A result file is a pytest-json-report file. Its top-level `jax_conformance` object is a
`RunHeader`; each test entry's `metadata` is a `CellResult`. `from_json` checks the shape of
every field and raises `SchemaError` naming the field, so a reader never meets a half-valid
record. Standard library and `packaging` (what a version is) only; reading results never imports pytest.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from packaging.version import InvalidVersion, Version

from conformance.core.case import folder_namespace
from conformance.core.casefolders import CHAPTER_NAMESPACE  # noqa: F401 - chapters' blocks: `chapter/<chapter>.<block>`
from conformance.core.observation import MAX_DEPTH, WARNING_KEYS, json_problem
from conformance.core.status import Status

# The format of a result file's top-level `perf` object (schema 5): `{"format": 1, "workloads": {ID: entry}}`; its
# one check, for a result file's as for the perf child's numbers, is `perf.numbers.checked_workloads`.
from conformance.perf.numbers import PERF_FORMAT  # noqa: F401 - defined once, with its check

SCHEMA_VERSION = 5  # 4: a cell's `warnings`; the header's `jax_git_hash` and `jaxlib_git_hash`; 5: `perf`
OLDEST_READABLE_SCHEMA = 1


# A case id is `<module>.<probe>`, or `<folder>/<module>.<probe>` for a team's own case folder.
# The same ids a declaration accepts (`core.case`): Python identifiers, any script (a team's folder may be
# `équipe/prüfung.größe`), and parameter names of `core.case.PARAM_NAME`.
CASE_ID = re.compile(r"(?:[^\W\d]\w*/)?[^\W\d]\w*\.[^\W\d]\w*")
PARAM = re.compile(r"[A-Za-z0-9_.-]*")
# A platform name (`linux-x86_64`, `darwin-arm64`, `linux-x86_64-cuda`): system, machine and an optional accelerator,
# as it appears in a result file's name.
PLATFORM_NAME = re.compile(r"[A-Za-z0-9_]+-[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)?")


class SchemaError(ValueError):
    """A field of a result record has the wrong shape; the message names the field."""


# A stored value may nest a little deeper than an observation: a diff entry or an attempt wraps one.
STORED_DEPTH = MAX_DEPTH + 4
_VALUE_FIELDS = ("expected", "observation", "details", "diff", "printed_expected", "printed_diff", "attempts")


def _check(value: Any, kind: Any, where: str, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and not math.isfinite(value):
            raise SchemaError(f"`{where}` should be a finite number, not {value!r}")
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        name = getattr(kind, "__name__", str(kind))
        raise SchemaError(f"`{where}` should be {'null or ' if optional else ''}{name}, not {type(value).__name__}")
    return value


def is_version(text: Any) -> bool:
    """Whether `text` is a version as `packaging` (pip's own reading of PEP 440) reads one: a release such as
    `0.4.38` or `0.12.0.1`, a pre-release (`0.13.0rc1`, `0.5.0-rc1`), a dev build (`0.13.0.dev20261201`), a build
    with a local label (`0.12.0.1+corp.3`, `0.4.38+corp_3`) or one spelled with a `v` (`v0.4.38`);
    `results.versions.normalized_or_same` gives its one spelling. Text with spaces or a line break around it is not
    one (packaging would strip them)."""
    if not isinstance(text, str) or text != text.strip():
        return False
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


@dataclass
class CellResult:
    """The outcome of one cell (case parameter × JAX version × platform), stored in a test entry's metadata."""

    case: str
    param: str
    rows: list[str]
    status: Status
    known_issue: bool = False
    expected: Any = None
    observation: Any = None
    diff: list[dict[str, Any]] = field(default_factory=list)
    details: Any = None
    reason: str = ""
    observation_verdict: str | None = None
    duration_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    command: str = ""
    launcher: str = ""
    key: str = ""
    reused: bool = False
    attempts: list[dict[str, Any]] = field(default_factory=list)
    printed_expected: Any = None
    printed_diff: list[dict[str, Any]] = field(default_factory=list)
    section: str = ""  # where the chapter (or a team's folder) documents it: `§3.1`
    heading: str = ""  # the section's heading: `§3 Finding NaNs`
    claim: str = ""
    discrepancy: str = ""  # why the chapter's claim is false on the documented release, where a case says so
    suite_version: str = ""  # the suite version that ran it ("" in files written before cells carried it)
    build: str = ""  # `build_identity` of the build that ran it ("" for a release, and in files written before)
    # The DeprecationWarnings and FutureWarnings the probe triggered: {"category", "message", "module",
    # "deprecation"} each (schema 4; older files have none). Compared like printed facts: they never decide a status.
    warnings: list[dict[str, str]] = field(default_factory=list)
    # A fault of the harness (pytest, the plugin, the run session) on this cell, outside its probe: `<phase>:
    # <exception>` ("" when none; an additive key of schema 5, which older readers ignore). With status `error` it
    # kept the cell from being judged: no result of JAX's, which the gate calls missing, not a regression. With
    # another status it came after the judgment, which stands.
    harness: str = ""

    @property
    def printed_differs(self) -> bool:
        """Whether what the chapter only prints (wording, reprs, counts) came out otherwise; the status ignores it."""
        return bool(self.printed_diff)

    @property
    def cell_id(self) -> str:
        """`case[param]`, or the case id for a case without parameters."""
        return f"{self.case}[{self.param}]" if self.param else self.case

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form with the status as its word."""
        data = asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: Any, where: str = "metadata") -> "CellResult":
        """A checked `CellResult` from its JSON form; `SchemaError` names the first bad field."""
        _check(data, dict, where)
        for name in _VALUE_FIELDS:  # before anything walks them: a value nested 900 deep is refused, not a crash
            problem = json_problem(data.get(name), STORED_DEPTH)
            if problem:
                raise SchemaError(f"`{where}.{name}` is not a stored value: {problem}")
        for required in ("case", "status"):
            if required not in data:
                raise SchemaError(f"`{where}.{required}` is missing")
        status_word = _check(data["status"], str, f"{where}.status")
        try:
            status = Status(status_word)
        except ValueError:
            raise SchemaError(
                f"`{where}.status` is {status_word!r}, not one of {', '.join(s.value for s in Status)}"
            ) from None
        rows = _check(data.get("rows", []), list, f"{where}.rows")
        for i, row in enumerate(rows):
            _check(row, str, f"{where}.rows[{i}]")
        diff = _check(data.get("diff", []), list, f"{where}.diff")
        for i, entry in enumerate(diff):
            _check(entry, dict, f"{where}.diff[{i}]")
            _check(entry.get("path", ""), str, f"{where}.diff[{i}].path")
        printed_diff = _check(data.get("printed_diff", []), list, f"{where}.printed_diff")
        for i, entry in enumerate(printed_diff):
            _check(entry, dict, f"{where}.printed_diff[{i}]")
            _check(entry.get("path", ""), str, f"{where}.printed_diff[{i}].path")
        printed_expected = _check(data.get("printed_expected"), dict, f"{where}.printed_expected", optional=True)
        attempts = _check(data.get("attempts", []), list, f"{where}.attempts")
        for i, attempt in enumerate(attempts):
            _check(attempt, dict, f"{where}.attempts[{i}]")
        warned = _check(data.get("warnings", []), list, f"{where}.warnings")
        for i, entry in enumerate(warned):
            _check(entry, dict, f"{where}.warnings[{i}]")
            for key in WARNING_KEYS:
                _check(entry.get(key, ""), str, f"{where}.warnings[{i}].{key}")
        case = _check(data["case"], str, f"{where}.case")
        if not CASE_ID.fullmatch(case):
            raise SchemaError(f"`{where}.case` is {case[:80]!r}, not a case id such as numerics.debug_nans_vmap_miss")
        param = _check(data.get("param", ""), str, f"{where}.param")
        if not PARAM.fullmatch(param):
            raise SchemaError(f"`{where}.param` is {param[:80]!r}, not a parameter name")
        return cls(
            case=case,
            param=param,
            rows=list(rows),
            status=status,
            known_issue=_check(data.get("known_issue", False), bool, f"{where}.known_issue"),
            expected=data.get("expected"),
            observation=data.get("observation"),
            diff=list(diff),
            details=data.get("details"),
            reason=_check(data.get("reason", ""), str, f"{where}.reason"),
            observation_verdict=_check(
                data.get("observation_verdict"), str, f"{where}.observation_verdict", optional=True
            ),
            duration_s=float(_check(data.get("duration_s", 0.0), float, f"{where}.duration_s")),
            stdout_tail=_check(data.get("stdout_tail", ""), str, f"{where}.stdout_tail"),
            stderr_tail=_check(data.get("stderr_tail", ""), str, f"{where}.stderr_tail"),
            command=_check(data.get("command", ""), str, f"{where}.command"),
            launcher=_check(data.get("launcher", ""), str, f"{where}.launcher"),
            key=_check(data.get("key", ""), str, f"{where}.key"),
            reused=_check(data.get("reused", False), bool, f"{where}.reused"),
            attempts=list(attempts),
            printed_expected=printed_expected,
            printed_diff=list(printed_diff),
            section=_check(data.get("section", ""), str, f"{where}.section"),
            heading=_check(data.get("heading", ""), str, f"{where}.heading"),
            claim=_check(data.get("claim", ""), str, f"{where}.claim"),
            discrepancy=_check(data.get("discrepancy", ""), str, f"{where}.discrepancy"),
            suite_version=_check(data.get("suite_version", ""), str, f"{where}.suite_version"),
            build=_check(data.get("build", ""), str, f"{where}.build"),
            warnings=[{key: entry.get(key, "") for key in WARNING_KEYS} for entry in warned],
            harness=_check(data.get("harness", ""), str, f"{where}.harness"),
        )


def utc_now(seconds_ago: float = 0.0) -> str:
    """Now (or `seconds_ago` before now), in UTC to the second, as a result header's `started_at` and
    `finished_at` write it."""
    moment = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=seconds_ago)
    return moment.isoformat(timespec="seconds")


@dataclass
class RunHeader:
    """What a result file says about its run: the suite, the target environment and when it ran."""

    jax: str
    platform: str
    schema_version: int = SCHEMA_VERSION
    suite_version: str = ""
    jaxlib: str | None = None
    numpy: str | None = None
    python: str | None = None
    backend: str | None = None
    devices: list[str] = field(default_factory=list)
    case_package: str = ""
    case_folders: list[dict[str, str]] = field(default_factory=list)
    launcher: str = ""
    pins_hash: str = ""
    # The digest of the environment's installed distributions and Python (`engine.keys.environment_digest`),
    # which every cell's reuse key holds: with it, stored cells can answer for a release without building it.
    environment_digest: str = ""
    shard: str = ""
    started_at: str = ""
    finished_at: str = ""
    wall_s: float = 0.0
    # Where the target's jax came from (optional; older files have none): {"kind": "index", "index_url": ...},
    # {"kind": "wheels", "wheels": [{"name": ..., "sha256": ...}], "index_url": ...} or {"kind": "python",
    # "python": PATH} for an interpreter the suite did not build. `jax_module_version` is `jax.__version__` where it
    # differs from the distribution's version (`jax`), as in a re-tagged build.
    source: dict[str, Any] = field(default_factory=dict)
    jax_module_version: str = ""
    # The commits the installed jax and jaxlib record in their `version.py` (`_git_hash`; schema 4): '' where the
    # build records none (jax before 0.8) or the file is older.
    jax_git_hash: str = ""
    jaxlib_git_hash: str = ""

    def to_json(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any, where: str = "jax_conformance") -> "RunHeader":
        """A checked `RunHeader`; `SchemaError` names the first bad field (unknown keys are ignored)."""
        _check(data, dict, where)
        version = data.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise SchemaError(f"`{where}.schema_version` is missing or not an integer")
        if version < OLDEST_READABLE_SCHEMA:
            raise SchemaError(
                f"`{where}.schema_version` is {version}; the oldest this reads is {OLDEST_READABLE_SCHEMA}"
            )
        if version > SCHEMA_VERSION:
            raise SchemaError(
                f"`{where}.schema_version` is {version}, newer than the {SCHEMA_VERSION} this "
                f"jax-conformance reads; upgrade jax-conformance"
            )
        jax_version = data.get("jax")
        if not is_version(jax_version):
            raise SchemaError(f"`{where}.jax` should be a JAX version such as 0.4.38, not {jax_version!r}")
        platform = data.get("platform")
        if not isinstance(platform, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", platform):
            raise SchemaError(f"`{where}.platform` should be a platform name such as linux-x86_64, not {platform!r}")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in (
            "suite_version",
            "case_package",
            "launcher",
            "pins_hash",
            "environment_digest",
            "shard",
            "started_at",
            "finished_at",
            "jax_module_version",
            "jax_git_hash",
            "jaxlib_git_hash",
        ):
            _check(values.get(name, ""), str, f"{where}.{name}")
        for name in ("jaxlib", "numpy", "python", "backend"):
            _check(values.get(name), str, f"{where}.{name}", optional=True)
        devices = _check(values.get("devices") or [], list, f"{where}.devices")
        values["devices"] = [str(d) for d in devices]
        _check(values.get("case_folders", []), list, f"{where}.case_folders")
        source = _check(values.get("source", {}), dict, f"{where}.source")
        _check(source.get("kind", ""), str, f"{where}.source.kind")
        values["wall_s"] = float(_check(values.get("wall_s", 0.0), float, f"{where}.wall_s"))
        return cls(**values)


@dataclass
class ResultFile:
    """One result file, read and checked: its header, its cells, and where it came from."""

    header: RunHeader
    cells: list[CellResult]
    source: str = ""
    duration: float = 0.0

    def by_cell(self) -> dict[tuple[str, str], CellResult]:
        """The cells keyed by (case id, param)."""
        return {(c.case, c.param): c for c in self.cells}


def unjudged_cell(test: Mapping[str, Any], namespace: str = "") -> CellResult | None:
    """An `error` cell for a test entry without cell metadata (the plugin failed before judging it).

    `namespace` is the case folder's name when the file is a run of a case folder (`<folder>/<module>.<probe>`).
    """
    found = re.fullmatch(r"(?:.*/)?(\w+)\.py::(\w+)(?:\[(.*)\])?", str(test.get("nodeid", "")))
    if not found:
        return None
    crash = (test.get("call") or test.get("setup") or {}).get("crash") or {}
    why = crash.get("message") or f"pytest outcome: {test.get('outcome', '?')}"
    prefix = f"{namespace}/" if namespace else ""
    return CellResult(
        case=f"{prefix}{found[1]}.{found[2]}",
        param=found[3] or "",
        rows=[],
        status=Status.ERROR,
        reason="no cell result was recorded (" + " ".join(str(why).split())[:300] + ")",
    )


def build_identity(source: Mapping[str, Any] | None) -> str:
    """Which build a run's source names: "" for a release from a package index (or a file without a source), else
    `<kind>-<hash>` of the source (its wheel files' hashes, its interpreter): files of one version and platform
    with different identities are different builds, never merged together."""
    if not source or (source.get("kind") or "index") == "index":
        return ""
    import hashlib
    import json as _json

    what = {k: v for k, v in source.items() if k not in ("index_url", "extra_index_urls", "find_links", "pre")}
    digest = hashlib.sha256(_json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:10]
    return f"{source.get('kind')}-{digest}"


def result_file_from_json(report: Any, source: str = "") -> ResultFile:
    """A `ResultFile` from a parsed pytest-json-report object; `SchemaError` names the bad field."""
    if not isinstance(report, Mapping):
        raise SchemaError("the top level is not an object, so this is not a result file")
    if not isinstance(report.get("jax_conformance"), Mapping):
        raise SchemaError("there is no `jax_conformance` object: not a result file of the suite's pytest plugin")
    header = RunHeader.from_json(report["jax_conformance"])
    tests = report.get("tests")
    if not isinstance(tests, list):
        raise SchemaError("`tests` is missing or not a list")
    cells = []
    for i, test in enumerate(tests):
        if not isinstance(test, Mapping):
            raise SchemaError(f"`tests[{i}]` is not an object")
        metadata = test.get("metadata")
        if metadata is None:
            lost = unjudged_cell(test, folder_namespace(header.case_package))
            if lost is not None:
                cells.append(lost)
            continue
        cells.append(CellResult.from_json(metadata, f"tests[{i}].metadata"))
    duration = report.get("duration", 0.0)
    return ResultFile(
        header=header,
        cells=cells,
        source=source,
        duration=(float(duration) if isinstance(duration, (int, float)) and math.isfinite(duration) else 0.0),
    )
