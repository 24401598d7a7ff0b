"""`[[downstream]]` entries of an expectations file: the downstream regressions a team acknowledges.

    [[downstream]]
    suite = "chex==*"                                 # fnmatch pattern on the suite's spec (optional: every suite)
    signature = "AttributeError: *device_put_replicated* @ *"   # fnmatch pattern on a failure's signature
    node = "chex/_src/*variants_test.py::*"           # or/and an fnmatch pattern on the node id
    jax = ">=0.10"                                     # PEP 440 specifier on the candidate (optional)
    reason = "jax.device_put_replicated was removed in 0.10; chex 0.1.91 no longer uses it"
    bug = "https://github.com/google-deepmind/chex/issues/0"   # optional
    owner = "platform-team"                           # optional
    expires = 2027-06-30                               # from this day on the entry acknowledges nothing (optional)

The keys shared with `[[expect]]` entries are checked by `decide.expectations.common_fields`, the one check of them.
An entry needs `signature` or `node`, and a `reason`. Expired entries acknowledge nothing and are named.

The file is read and parsed by the one reader (`tomltable`); within `gate --downstream` the gate's own reading of it
(`decide.expectations.ExpectationsFile.downstream`) is used (`acks_of`): the file is read once per gate.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conformance.decide.expectations import MAX_EXPECTATIONS_BYTES, common_fields
from conformance.downstream.judge import Ack
from conformance.errors import ConformanceError
from conformance.tomltable import failing, known_table, parse_toml, read_toml_file

KEYS = ("suite", "signature", "node", "jax", "reason", "bug", "owner", "added", "expires")


@dataclass
class DownstreamAcks:
    """The entries that apply on a day to a candidate, and the lines naming the expired ones."""

    acks: list[Ack] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)


def parse_acks(text: str, source: str, today: datetime.date, candidate: str) -> DownstreamAcks:
    """The `[[downstream]]` entries of an expectations file's text that apply to jax `candidate` on `today`."""
    return acks_of(parse_toml(text, source).get("downstream", []), source, today, candidate)


def acks_of(entries: object, source: str, today: datetime.date, candidate: str) -> DownstreamAcks:
    """The `[[downstream]]` tables as parsed (`entries`, from the file `source`) that apply to jax `candidate` on
    `today`; a malformed one is one line naming `source` and the entry."""
    if not isinstance(entries, list):
        raise ConformanceError(f"{source}: `downstream` should be a list of [[downstream]] tables")
    found = DownstreamAcks()
    for number, entry in enumerate(entries, 1):
        fail = failing(f"{source}: [[downstream]] entry {number}")
        entry = known_table(entry, KEYS, fail)
        for key in ("suite", "signature", "node"):
            if not isinstance(entry.get(key, ""), str):
                fail(key, f"`{key}` should be a string (an fnmatch pattern)")
        if not entry.get("signature") and not entry.get("node"):
            fail(None, 'needs signature = "PATTERN" or node = "PATTERN"')
        common = common_fields(entry, fail)
        if not str(common["reason"]).strip():
            fail("reason", 'needs reason = "..." (why the regression is accepted)')
        if common["expires"] is not None and common["expires"] <= today:
            found.expired.append(
                f"[[downstream]] entry {number} of {source} expired on {common['expires']} "
                f"({common['owner'] or 'no owner'}): it acknowledges nothing; renew or remove it"
            )
            continue
        if common["jax"] and not SpecifierSet(common["jax"]).contains(Version(candidate), prereleases=True):
            continue
        found.acks.append(
            Ack(
                entry.get("suite") or "*",
                entry.get("signature", ""),
                entry.get("node", ""),
                str(common["reason"]).strip(),
                number,
            )
        )
    return found


def load_acks(path: Any, today: datetime.date, candidate: str) -> DownstreamAcks:
    """The `[[downstream]]` entries of the expectations file at `path` (none without a file)."""
    if path is None:
        return DownstreamAcks()
    return parse_acks(
        read_toml_file(path, MAX_EXPECTATIONS_BYTES, "the expectations file"), str(path), today, candidate
    )
