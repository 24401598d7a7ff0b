"""Several suites' shards on one release, merged: each (suite, release) task of a Kubernetes Indexed Job or a SLURM
array writes a file of its own name (`<jax>-<platform>-shard<K>of<N>.json`), so the files of every task copied into
one folder neither overwrite one another nor conflict; `report` merges them (from the task folders or the one
folder), and `gate --downstream` and `downstream` answer every suite from that folder without running anything. The
suites' runs are given (no environment is built, no pytest runs): `prepare_suite_env` and `run_suite` are replaced.
And the recipes in docs/downstream.md (Kubernetes, SLURM, GitHub Actions) size their tasks to the shards."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from conformance import cli
from conformance.downstream import command
from conformance.downstream.cells import node_of, to_cell
from conformance.downstream.lock import Lock, SuiteEnv
from conformance.downstream.manifest import read_suite
from conformance.downstream.outcomes import NodeOutcome
from conformance.downstream.runner import SuiteRun
from conformance.downstream.shards import all_shards, shard_file_suffix
from conformance.downstream.store import holding_file, store_suite, suite_cells
from conformance.engine.matrix import host_platform
from conformance.report.render import render_results
from conformance.results.load import load_result_file, result_files
from conformance.results.merge import merge_files

DOCS = Path(__file__).resolve().parents[1] / "docs" / "downstream.md"
RELEASES = ("0.8.0", "0.10.0")
GONE = {
    "type": "AttributeError",
    "message": "module 'jax' has no attribute 'device_put_replicated'",
    "frames": [["/env/t.py", 3, "test_a"]],
}


@pytest.fixture
def suites(tmp_path, monkeypatch):
    """Two team folders (two suites) whose runs are given: the first regresses one test on 0.10.0."""
    made = []
    for name in ("chexlike", "optaxlike"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "test_a.py").write_text("def test_a():\n    pass\n", encoding="utf-8")
        made.append(str(folder))
    ran: list[tuple[str, str]] = []

    def run_suite(suite, env, selected=None):
        ran.append((suite.ident, env.version))
        regressed = suite.ident == "chexlike" and env.version == "0.10.0"
        outcomes = [
            NodeOutcome("test_a.py::test_a", "failed" if regressed else "passed", 0.1, GONE if regressed else None),
            NodeOutcome("test_a.py::test_b", "passed", 0.2),
        ]
        return SuiteRun({o.nodeid: o for o in outcomes}, 1.0, "", "pytest")

    monkeypatch.setattr(command, "lock_for", lambda suite, baseline, builder: Lock("jax==0.8.0\n", baseline, "3.12"))
    monkeypatch.setattr(command, "suite_env_digest", lambda lock, version, builder: f"env-{version}")
    monkeypatch.setattr(
        command,
        "prepare_suite_env",
        lambda suite, lock, version, builder: SuiteEnv(version, tmp_path / "env", "3.12.1", "d", False),
    )
    monkeypatch.setattr(command, "run_suite", run_suite)
    return made, ran


def run_shards(suites, tmp_path, monkeypatch, variable="JOB_COMPLETION_INDEX") -> list[Path]:
    """Every task of the job, each in its own results folder, as the Kubernetes and SLURM recipes run them."""
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    monkeypatch.delenv("SLURM_ARRAY_TASK_ID", raising=False)
    folders = []
    for index in range(len(suites) * len(RELEASES)):
        monkeypatch.setenv(variable, str(index))
        folder = tmp_path / "tasks" / str(index)
        releases = [a for v in RELEASES for a in ("--jax", v)]
        argv = ["downstream", *suites, *releases, "--shard", "--results", str(folder)]
        assert cli.main(argv) == 0  # one release per task: nothing to judge there
        folders.append(folder)
    return folders


def gathered(folders: list[Path], into: Path) -> Path:
    """The tasks' files copied into one folder, as an artifact download with merge-multiple does."""
    into.mkdir()
    for folder in folders:
        for path in folder.glob("*.json"):
            shutil.copy(path, into / path.name)
    return into


def test_each_task_writes_a_file_of_its_own_name(suites, tmp_path, monkeypatch):
    made, _ = suites
    folders = run_shards(made, tmp_path, monkeypatch, "SLURM_ARRAY_TASK_ID")
    platform, count = host_platform(), len(made) * len(RELEASES)
    for shard, folder in zip(all_shards(made, RELEASES), folders):
        assert [p.name for p in folder.glob("*.json")] == [
            f"{shard.release}-{platform}{shard_file_suffix(shard.index, count)}.json"
        ]
    names = [p.name for f in folders for p in f.glob("*.json")]
    assert len(set(names)) == len(names) == count  # none overwrites another in one folder


def test_several_suites_on_one_release_merge_without_losing_or_conflicting(suites, tmp_path, monkeypatch):
    made, ran = suites
    folders = run_shards(made, tmp_path, monkeypatch)
    merged = gathered(folders, tmp_path / "merged")
    runs = {run.jax: run for run in merge_files([load_result_file(p) for p in result_files(merged)])}
    assert set(runs) == set(RELEASES)
    for run in runs.values():
        assert run.conflicts == [] and len(run.cells) == 4  # 2 tests x 2 suites, none lost
    for paths in (folders, [merged]):  # `report` given the task folders, or the one folder
        rendered = render_results(paths, tmp_path / f"report-{len(paths)}.html", releases=list(RELEASES))
        assert rendered.conflicts == [] and rendered.problems == []
    for ident in ("chexlike", "optaxlike"):
        assert {node_of(c) for c in suite_cells(merged, "0.10.0", host_platform(), ident)} == {
            "test_a.py::test_a",
            "test_a.py::test_b",
        }
    before = len(ran)
    code = cli.main(
        [
            "gate",
            "--from",
            "0.8.0",
            "--to",
            "0.10.0",
            "-k",
            "no_such_cell_anywhere",
            "--downstream",
            made[0],
            "--downstream",
            made[1],
            "--results",
            str(merged),
        ]
    )
    assert code == 1 and len(ran) == before  # both suites, both sides answered from the merged folder
    assert cli.main(["downstream", made[1], "--from", "0.8.0", "--to", "0.10.0", "--results", str(merged)]) == 0
    assert len(ran) == before


def test_a_later_run_in_the_merged_folder_is_stored_where_the_suite_is(suites, tmp_path, monkeypatch):
    made, ran = suites
    merged = gathered(run_shards(made, tmp_path, monkeypatch), tmp_path / "merged")
    names = sorted(p.name for p in merged.glob("*.json"))
    assert (
        cli.main(["downstream", made[0], "--from", "0.8.0", "--to", "0.10.0", "--rerun", "--results", str(merged)]) == 1
    )
    assert sorted(p.name for p in merged.glob("*.json")) == names  # no second copy of the suite's tests
    rendered = render_results([merged], tmp_path / "report.html", releases=list(RELEASES))
    assert rendered.conflicts == []


def test_the_file_that_holds_a_suite_is_the_first_in_order(tmp_path):
    platform = host_platform()

    def cells(ident):
        suite = read_suite(str(tmp_path))
        return [to_cell(ident, suite.label, NodeOutcome("t.py::t", "passed"), "k", [], {}, ())]

    store_suite(tmp_path, "0.10.0", platform, "other", cells("other"), "3.12.1", 1.0)
    store_suite(tmp_path, "0.10.0", platform, "lib", cells("lib"), "3.12.1", 1.0, shard_suffix="-shard2of4")
    files = [(p, load_result_file(p).cells) for p in sorted(tmp_path.glob("*.json"))]
    assert holding_file(files, "lib").name.endswith("-shard2of4.json")
    assert holding_file(files, "other").name == f"0.10.0-{platform}.json"
    assert holding_file(files, "absent") is None
    assert len(suite_cells(tmp_path, "0.10.0", platform, "lib")) == 1  # read from its shard file


# -- the recipes in docs/downstream.md


def _block(language: str, marker: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    return next(b for b in blocks if marker in b)


def _shards_of(command_line: str) -> int:
    words = command_line.split()
    suites = words[words.index("downstream") + 1 : words.index("--jax")]
    return len(suites) * words.count("--jax")


def test_the_kubernetes_recipe_runs_one_task_per_shard():
    job = yaml.safe_load(_block("yaml", "completionMode"))
    spec = job["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    line = container["command"][-1]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == _shards_of(line)
    assert "--shard" in line and "$JOB_COMPLETION_INDEX" in line


def test_the_slurm_recipe_runs_one_task_per_shard():
    script = _block("sh", "#SBATCH --array")
    low, high = map(int, re.search(r"--array=(\d+)-(\d+)", script).groups())
    line = next(line for line in script.splitlines() if "conformance downstream" in line)
    assert (low, high - low + 1) == (0, _shards_of(line))
    assert "--shard" in line and "$SLURM_ARRAY_TASK_ID" in line


def test_the_github_actions_recipe_runs_one_job_per_shard_and_gates_on_the_merged_files():
    flow = yaml.safe_load(_block("yaml", "JOB_COMPLETION_INDEX: ${{ matrix.index }}"))
    shard, gate = flow["jobs"]["shard"], flow["jobs"]["gate"]
    run = next(s["run"] for s in shard["steps"] if "conformance downstream" in s.get("run", ""))
    assert shard["strategy"]["matrix"]["index"] == list(range(_shards_of(run)))
    assert shard["env"]["JOB_COMPLETION_INDEX"] == "${{ matrix.index }}" and "--shard" in run
    upload = next(s for s in shard["steps"] if "upload-artifact" in s.get("uses", ""))
    assert "${{ matrix.index }}" in upload["with"]["name"]  # one artifact per task
    download = next(s for s in gate["steps"] if "download-artifact" in s.get("uses", ""))
    assert download["with"]["merge-multiple"] is True  # one folder: the file names are the tasks' own
    judged = next(s["run"] for s in gate["steps"] if "conformance gate" in s.get("run", ""))
    assert gate["needs"] == "shard" and f"--results {download['with']['path']}" in judged
