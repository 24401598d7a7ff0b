"""CI keeps what it knows: three consecutive workflow runs, driven through the workflow's own scripts, with a local
folder standing in for the published site.

Each run does what the jobs of .github/workflows/conformance.yml do, in order: the plan job restores the site's
results and plans (`restore-results.sh`, `plan.sh`); each planned shard job restores its platform's results and runs
its shard (`restore-results.sh`, `run-shard.sh`), its shard files being its artifact; the report job restores the
results (kept apart as the previous run), adds every artifact, publishes the merged files, the history and the report
(`render-report.sh` with PUBLISH=1), and the site is replaced by what it wrote (the Pages deployment).

1. Two releases, nothing published yet: every job has work and every cell runs.
2. Nothing changed: no job at all, and the site republishes the same result files (same sha256) and the same table.
3. A third release, and one case module edited (in a clone of the checkout, so the repository is untouched): only
   the new release's cells and the edited case's cells on the two other releases run; every other cell is reused.

The versions are not named: like the daily run's `all`, each run reads them from the package index with a matrix
file (`since = "0.9.2"`), and the index is a local `file://` simple index standing in for PyPI, one snapshot per day:
PEP 503 HTML pages (the shape uv reads from a folder), made from PyPI's pages when the test runs, with jax and jaxlib
cut to the releases out that day (0.9.2 and 0.10.2 on days 1 and 2, and 0.11.0 too on day 3) and every other project
that their hashed pins in matrix/pins name. The wheels stay on PyPI, linked by URL and sha256, so each environment is
built from them (uv's download cache makes that seconds once they are downloaded); nothing an earlier run left is
read, hence `e2e`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conformance.engine.matrix import select_run
from conformance.engine.shards import parse_shard
from conformance.results.load import load_results
from tests.local_index import pinned_projects, write_simple_index

ROOT = Path(__file__).resolve().parents[1]
RUNNER = "ubuntu-24.04"  # the runner kind of this machine's platform (linux-x86_64)
SELECT = "exception_hierarchy or integer_conversion or explicit_test_util_import"
EDITED = "setup"  # the case module edited before run 3 (explicit_test_util_import's module)
RELEASES = ["0.9.2", "0.10.2"]
THIRD = "0.11.0"  # published on the index between run 2 and run 3

pytestmark = pytest.mark.e2e


@dataclass
class Workflow:
    """One run of the workflow: what the plan said, what the shard jobs ran and reused, and the published site."""

    plan: dict
    plan_log: str
    ran: int = 0
    reused: int = 0
    ran_cells: set = field(default_factory=set)


def script(checkout: Path, name: str, **env: str) -> subprocess.CompletedProcess:
    """Run one of the workflow's scripts in `checkout` (its own code: `python -m conformance` from there)."""
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
        "PYTHON": sys.executable,
        "PYTHONPATH": str(checkout),
        **env,
    }
    done = subprocess.run(
        ["bash", str(checkout / ".github" / "scripts" / name)],
        cwd=checkout,
        env=environ,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, f"{name}: {done.stdout}\n{done.stderr}"
    return done


def day_index(folder: Path, versions: list[str]) -> str:
    """A `file://` simple index of PyPI's pages on a day when `versions` are the jax and jaxlib releases out: jax and
    jaxlib cut to them, and every other project their pins name."""
    pins = [ROOT / "matrix" / "pins" / f"jax-{version}.txt" for version in versions]
    return write_simple_index(folder, pinned_projects(pins), cut={"jax": versions, "jaxlib": versions})


def workflow_run(checkout: Path, site: Path, work: Path, released: list[str]) -> Workflow:
    """The plan, shard and report jobs of one workflow run, on a day when `released` are on the index; the site is
    replaced by what the report job wrote."""
    work.mkdir()
    index = day_index(work / "index", released)
    matrix_file = work / "since.toml"  # like `all`, which is `since = "0.4.38"`
    matrix_file.write_text('description = "every release from 0.9.2 on"\nsince = "0.9.2"\n')
    script(checkout, "restore-results.sh", SITE_URL=str(site), RESULTS=str(work / "restored"))
    output = work / "github_output"
    output.write_text("")
    planned = script(
        checkout,
        "plan.sh",
        VERSIONS=str(matrix_file),
        RUNNERS=RUNNER,
        SHARDS="2",
        INDEX_URL=index,
        STORED=str(work / "restored"),
        SELECT=SELECT,
        GITHUB_OUTPUT=str(output),
    )
    plan = dict(line.split("=", 1) for line in output.read_text().splitlines())
    run = Workflow({k: json.loads(v) for k, v in plan.items()}, planned.stderr)
    artifacts = work / "artifacts"
    artifacts.mkdir()
    for i, job in enumerate(run.plan["matrix"]["include"]):
        results = work / f"shard{i}" / "results"
        script(checkout, "restore-results.sh", SITE_URL=str(site), RESULTS=str(results), PLATFORM=job["platform"])
        script(
            checkout,
            "run-shard.sh",
            JAX=job["job"]["jax"],
            SHARD=job["job"]["shard"],
            RESULTS=str(results),
            SELECT=SELECT,
            WORKERS="2",
            INDEX_URL=index,
        )
        for path in results.glob("*-shard*of*.json"):  # the job's artifact: its own files, not the restored ones
            shutil.copy(path, artifacts / f"{i}-{path.name}")
            stored = load_results(path)[0]
            for cell in stored.cells:
                run.reused += cell.reused
                run.ran += not cell.reused
                if not cell.reused:
                    run.ran_cells.add((stored.header.jax, cell.cell_id))
    everything = work / "all-results"
    script(checkout, "restore-results.sh", SITE_URL=str(site), RESULTS=str(everything), KEEP=str(work / "previous"))
    for path in artifacts.iterdir():
        shutil.copy(path, everything / path.name.split("-", 1)[1])
    script(
        checkout,
        "render-report.sh",
        RESULTS=str(everything),
        SITE=str(work / "site"),
        PUBLISH="1",
        PREVIOUS=str(work / "previous"),
        COMMIT=f"{len(list(work.parent.glob('run*'))):07x}",
    )
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(work / "site", site)  # the Pages deployment (the default branch only)
    return run


def published(site: Path) -> dict[str, str]:
    """The published result files and their sha256, as the site's index gives them (checked against the files)."""
    index = json.loads((site / "results" / "index.json").read_text())
    for entry in index["files"]:
        data = (site / "results" / entry["name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["size"]
        assert entry["name"] == f"{entry['jax']}-{entry['platform']}.json" and entry["suite_version"]
    assert index["date"] and index["suite_version"]
    return {entry["name"]: entry["sha256"] for entry in index["files"]}


def table(site: Path) -> str:
    """The report's Markdown without the "Since the last run" section (which names the run) and the minute it was
    rendered (two runs a minute apart are the same table)."""
    page = re.sub(r"\n## Since the last run\n.*?(?=\n## |\Z)", "", (site / "summary.md").read_text(), flags=re.S)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<rendered at>", page)


def check_history(
    site: Path, runs: int, *, releases: list[str], new_releases: list[str], keys_changed: int, cells: int
) -> None:
    """history.json holds one entry per published run; the last one says what the results hold, which releases are
    new and how many cells ran again for a changed key; the report's "Since the last run" says the same. (The history
    is helper "history"'s `jax-conformance history`, branch is-history.)"""
    entries = json.loads((site / "history.json").read_text())["entries"]
    assert len(entries) == runs
    last = entries[-1]
    assert last["first_run"] == (runs == 1) and last["commit"] == f"{runs:07x}"
    assert sorted(last["releases"]) == sorted(releases) and last["platforms"] == ["linux-x86_64"]
    assert last["cells"] == cells == sum(last["counts"].values())
    assert sorted(c["jax"] for c in last["new_columns"]) == sorted(new_releases)
    assert last["changes"]["new release"] == cells_of(new_releases, cells, releases)
    assert last["keys_changed"] == keys_changed
    assert last["changes"]["changed result on an unchanged key"] == 0  # nothing nondeterministic here
    summary = (site / "summary.md").read_text()
    assert summary.count("## Since the last run") == 1
    if runs == 1:
        assert "The first run in the history" in summary
    for release in new_releases if runs > 1 else []:
        assert f"jax {release} on linux-x86_64" in summary.split("## Since the last run", 1)[1].split("\n## ", 1)[0]


def cells_of(some: list[str], cells: int, releases: list[str]) -> int:
    """The cells of `some` of the releases, each release holding the same number."""
    return cells // len(releases) * len(some)


def test_three_runs_run_only_what_is_new(tmp_path):
    site = tmp_path / "site"  # empty: the first run (nothing published yet)
    cells = [cell.id for cell in select_run([], SELECT).selected]
    edited_cells = [cell for cell in cells if cell.startswith(f"{EDITED}.")]
    cells_per_release, edited = len(cells), len(edited_cells)
    assert 0 < edited < cells_per_release  # 4 cells, 1 of them in the edited module
    shards = {k: set(select_run([], SELECT, parse_shard(f"{k}/2")).cell_ids) for k in (1, 2)}

    first = workflow_run(ROOT, site, tmp_path / "run1", RELEASES)
    assert "nothing restored" in first.plan_log or "0 answered" in first.plan_log
    assert first.plan["job_count"] == len(first.plan["matrix"]["include"]) == 4  # 2 releases x 2 shards, 1 runner
    assert first.plan["to_run"] == first.plan["cells"] == 2 * cells_per_release
    assert (first.ran, first.reused) == (2 * cells_per_release, 0)
    files = published(site)
    assert sorted(files) == [f"{v}-linux-x86_64.json" for v in sorted(RELEASES)]
    first_table = table(site)
    check_history(site, 1, releases=RELEASES, new_releases=RELEASES, keys_changed=0, cells=2 * cells_per_release)

    second = workflow_run(ROOT, site, tmp_path / "run2", RELEASES)
    assert second.plan["job_count"] == 0 and second.plan["matrix"] == {"include": []}
    assert second.plan["to_run"] == 0 and second.plan["cells"] == 2 * cells_per_release
    assert (second.ran, second.reused) == (0, 0)  # no shard job ran
    assert published(site) == files  # the same result files, byte for byte
    assert table(site) == first_table
    check_history(site, 2, releases=RELEASES, new_releases=[], keys_changed=0, cells=2 * cells_per_release)

    clone = tmp_path / "clone"  # the checkout with one case module edited; the repository stays as it is
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    for changed in subprocess.run(
        ["git", "ls-files", "-m", "-o", "--exclude-standard"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split():
        (clone / changed).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / changed, clone / changed)  # uncommitted work of the checkout travels too
    module = clone / "conformance" / "cases" / f"{EDITED}.py"
    module.write_text(module.read_text() + "\n# edited: every cell of this module has a new reuse key\n")

    third = workflow_run(clone, site, tmp_path / "run3", RELEASES + [THIRD])
    expected = {(THIRD, cell) for cell in cells} | {(v, cell) for v in RELEASES for cell in edited_cells}
    assert third.ran_cells == expected and third.ran == cells_per_release + 2 * edited
    jobs = {(e["job"]["jax"], e["job"]["shard"]) for e in third.plan["matrix"]["include"]}
    # The new release's shards, and on the other releases only the shards holding an edited cell.
    assert jobs == {(THIRD, "1/2"), (THIRD, "2/2")} | {
        (v, f"{k}/2") for v in RELEASES for k, share in shards.items() if share & set(edited_cells)
    }
    assert len(jobs) < 6 and third.plan["job_count"] == len(jobs)
    assert third.plan["to_run"] == cells_per_release + 2 * edited
    assert third.plan["cells"] - third.plan["to_run"] == 2 * (cells_per_release - edited)
    assert third.reused == sum(e["cells"] - e["to_run"] for e in third.plan["matrix"]["include"])
    after = published(site)
    assert sorted(after) == sorted(f"{v}-linux-x86_64.json" for v in RELEASES + [THIRD])
    check_history(
        site, 3, releases=RELEASES + [THIRD], new_releases=[THIRD], keys_changed=2 * edited, cells=3 * cells_per_release
    )
