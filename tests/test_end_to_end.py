"""End to end: build a real environment for the newest JAX with the project's builder and run the six cases.

Needs the package index and an installed Python that the release accepts; it is
slow (a minute or so) and marked `e2e`, and CI runs it.
"""

from __future__ import annotations

import json

import pytest

from conformance import cli
from conformance.envs.matrix import load_matrix

pytestmark = pytest.mark.e2e

NEWEST = load_matrix("default").versions[-1]


def test_newest_jax_conforms_on_this_platform(tmp_path, capsys):
    results, report = tmp_path / "results", tmp_path / "report.html"
    status = cli.main(["run", "--jax", NEWEST, "--results", str(results), "-o", str(report), "-j", "2"])
    out = capsys.readouterr().out
    assert status == 0, out
    (result_file,) = results.glob("*.json")
    data = json.loads(result_file.read_text())
    head = data["jax_conformance"]
    assert head["jax"] == NEWEST and result_file.name == f"{NEWEST}-{head['platform']}.json"
    statuses = {t["metadata"]["case"] + "[" + t["metadata"]["param"] + "]": t["metadata"]["status"]
                for t in data["tests"]}
    assert len(statuses) == 11
    if head["platform"] == "linux-x86_64":
        assert set(statuses.values()) == {"conforms"}, statuses
    html = report.read_text()
    assert NEWEST in html and "numerics.debug_nans_vmap_miss" in html
    assert "conforms" in out and "wall time" in out
