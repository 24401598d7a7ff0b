"""The CI's own commands, run here: shard jobs, then the merge job, against the newest environment.

Runs `.github/scripts/run-shard.sh` for shards 1/2 and 2/2 of a small `-k` selection, then
`render-report.sh` and `gate.sh` (the merge job), exactly as the workflow does, and checks that
the shards merged equal an unsharded run cell for cell. Marked `e2e`: it needs the newest JAX
environment (built with the package index, or already in the cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.envs.builder import EnvironmentBuilder
from conformance.envs.matrix import load_matrix
from conformance.results.load import load_results
from conformance.results.merge import merge_files

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / ".github" / "scripts"
NEWEST = load_matrix("default").versions[-1]
SELECTION = "program"  # a handful of cells, some slow and some quick, so the split has something to balance


def script(name: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """Run one of the workflow's scripts as its job does (bash, from the repository root)."""
    variables = {**os.environ, "PYTHON": sys.executable, "WORKERS": "2", **env}
    variables.pop("GITHUB_STEP_SUMMARY", None)
    variables["GITHUB_STEP_SUMMARY"] = str(tmp_path / "step-summary.md")
    return subprocess.run(
        ["bash", str(SCRIPTS / name)], cwd=ROOT, env=variables, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    EnvironmentBuilder().prepare(NEWEST)
    base = tmp_path_factory.mktemp("ci")
    sharded, whole = base / "all-results", base / "unsharded"
    for shard in ("1/2", "2/2"):
        done = script("run-shard.sh", base, JAX=NEWEST, SHARD=shard, RESULTS=str(sharded), SELECT=SELECTION)
        assert done.returncode == 0, done.stdout + done.stderr
    done = script("run-shard.sh", base, JAX=NEWEST, RESULTS=str(whole), SELECT=SELECTION)
    assert done.returncode == 0, done.stdout + done.stderr
    return base, sharded, whole


def _cells(folder: Path) -> dict[str, tuple]:
    (merged,) = merge_files(load_results(folder))
    assert merged.conflicts == []
    return {
        cell_id: (c.status.value, c.observation, c.expected, c.diff, c.rows, c.known_issue)
        for cell_id, c in merged.cells.items()
    }


def test_shards_split_the_selection_without_overlap(runs):
    base, sharded, whole = runs
    files = sorted(p.name for p in sharded.glob("*.json"))
    assert [f.rsplit("-", 1)[-1] for f in files] == ["shard1of2.json", "shard2of2.json"]
    by_shard = {f: json.loads((sharded / f).read_text()) for f in files}
    assert {d["jax_conformance"]["shard"] for d in by_shard.values()} == {"1/2", "2/2"}
    ids = [[t["metadata"]["case"] + t["metadata"]["param"] for t in d["tests"]] for d in by_shard.values()]
    assert ids[0] and ids[1] and not set(ids[0]) & set(ids[1])


def test_sharded_and_merged_equals_an_unsharded_run_cell_for_cell(runs):
    base, sharded, whole = runs
    merged, alone = _cells(sharded), _cells(whole)
    assert set(merged) == set(alone)
    assert {k: v for k, v in merged.items() if alone[k] != v} == {}


def test_the_merge_job_renders_one_column_and_skips_the_gate_without_a_baseline(runs):
    base, sharded, whole = runs
    site = base / "site"
    done = script("render-report.sh", base, RESULTS=str(sharded), SITE=str(site))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "conflict" not in done.stderr
    summary = (site / "summary.md").read_text()
    platform = json.loads(next(sharded.glob("*.json")).read_text())["jax_conformance"]["platform"]
    overview = summary.split("## Overview")[1].split("\n## ")[0]
    assert len([line for line in overview.splitlines() if line.startswith(f"| {NEWEST} ")]) == 1  # one column
    assert f"on {platform}:" in summary and (site / "index.html").exists()
    assert "# JAX conformance report" in (base / "step-summary.md").read_text()
    gate = script("gate.sh", base, BASELINE=str(base / "no-baseline"), RESULTS=str(sharded), SITE=str(site))
    assert gate.returncode == 0 and "gate was skipped" in gate.stdout
