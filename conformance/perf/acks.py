"""`[[perf]]` entries of an expectations file: the workload changes a team acknowledges, for `gate --perf`.

    [[perf]]
    workload = "performance.sort_*"       # fnmatch pattern on the workload id
    metric = ["run_s", "run_cpu_s"]       # metrics acknowledged (optional: every metric)
    jax = ">=0.9"                         # PEP 440 specifier on the candidate's version (optional)
    reason = "sort moved to a new comparator; 1.4x slower on CPU"
    bug = "https://github.com/jax-ml/jax/issues/00000"   # optional
    expires = 2027-06-30                  # from this day on the entry acknowledges nothing (optional)

The cell gate (`[[expect]]` entries) ignores these tables; a malformed one is one line naming the file and entry.
"""

from __future__ import annotations

import datetime
import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from conformance.errors import ConformanceError
from conformance.perf.stats import METRICS

KEYS = ("workload", "metric", "jax", "reason", "bug", "owner", "added", "expires")


@dataclass(frozen=True)
class PerfAck:
    """One acknowledged workload change."""

    workload: str
    metrics: tuple[str, ...]
    jax: str
    reason: str

    def applies(self, workload: str, metric: str, version: str) -> bool:
        """Whether it acknowledges `metric` of `workload` on the candidate `version`."""
        if not fnmatch.fnmatchcase(workload, self.workload) or (self.metrics and metric not in self.metrics):
            return False
        return not self.jax or SpecifierSet(self.jax).contains(Version(version), prereleases=True)


def _ack(entry: Any, number: int, source: str, today: datetime.date) -> PerfAck | None:
    where = f"{source}: [[perf]] entry {number}"
    if not isinstance(entry, dict):
        raise ConformanceError(f"{where} is not a table")
    unknown = [k for k in entry if k not in KEYS]
    if unknown:
        raise ConformanceError(f"{where}: unknown key `{unknown[0]}` (known keys: {', '.join(KEYS)})")
    workload, reason, jax = entry.get("workload"), entry.get("reason"), entry.get("jax", "")
    if not isinstance(workload, str) or not workload or not isinstance(reason, str) or not reason.strip():
        raise ConformanceError(f"{where}: needs workload = \"PATTERN\" and reason = \"...\"")
    metrics = entry.get("metric", [])
    metrics = [metrics] if isinstance(metrics, str) else metrics
    if not isinstance(metrics, list) or any(m not in METRICS for m in metrics):
        raise ConformanceError(f"{where}: metric takes names of {', '.join(METRICS)}")
    try:
        SpecifierSet(jax) if isinstance(jax, str) else None
    except InvalidSpecifier:
        raise ConformanceError(f"{where}: jax = {jax!r} is not a PEP 440 specifier such as '>=0.9'") from None
    if not isinstance(jax, str):
        raise ConformanceError(f"{where}: jax takes a PEP 440 specifier string")
    expires = entry.get("expires")
    if isinstance(expires, str):
        try:
            expires = datetime.date.fromisoformat(expires)
        except ValueError:
            raise ConformanceError(f"{where}: expires = {expires!r} is not a date such as 2027-06-30") from None
    if expires is not None and not isinstance(expires, datetime.date):
        raise ConformanceError(f"{where}: expires takes a date such as 2027-06-30")
    if expires is not None and expires <= today:
        return None
    return PerfAck(workload, tuple(metrics), jax, reason.strip())


def load_acks(path: Path, today: datetime.date | None = None) -> list[PerfAck]:
    """The unexpired `[[perf]]` entries of an expectations file."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"{path}: cannot read the expectations file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConformanceError(f"{path}: does not parse as TOML: {exc}") from None
    entries = data.get("perf", [])
    if not isinstance(entries, list):
        raise ConformanceError(f"{path}: `perf` should be a list of [[perf]] tables")
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    found = [_ack(entry, i, str(path), today) for i, entry in enumerate(entries, 1)]
    return [a for a in found if a is not None]


def acknowledging(acks: list[PerfAck], workload: str, metric: str, version: str) -> str | None:
    """The reason of the first entry that acknowledges the change, or None."""
    return next((a.reason for a in acks if a.applies(workload, metric, version)), None)
