"""The CHANGELOG and the package agree on the version, and the CHANGELOG names every result schema (issue 60)."""

from __future__ import annotations

import re
from pathlib import Path

import conformance
from conformance.results.schema import SCHEMA_VERSION

CHANGELOG = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")


def test_the_newest_released_version_is_the_packages():
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", CHANGELOG, re.MULTILINE)
    assert released and released[0] == conformance.__version__


def test_every_result_schema_up_to_the_current_one_is_described():
    described = {int(n) for n in re.findall(r"^- Schema (\d+) \(", CHANGELOG, re.MULTILINE)}
    assert described == set(range(1, SCHEMA_VERSION + 1))
