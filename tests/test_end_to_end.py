"""End to end against a real environment of the newest JAX, built with the project's builder.

Needs the package index and an installed Python that the release accepts; slow (minutes),
marked `e2e`; CI runs it. Nothing here depends on how many cases exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from conformance import cli
from conformance.core.case import load_cases
from conformance.core.status import BROKEN, Status
from conformance.engine.keys import cell_key, environment_digest
from conformance.engine.plugin import describe_target
from conformance.engine.runner import Target
from conformance.engine.selection import all_cells
from conformance.engine.launch import env_group
from conformance.engine.session import RunSession, shared_case_envs
from conformance.envs.builder import EnvironmentBuilder
from conformance.envs.matrix import load_matrix
from tests.waiting import wait_until

pytestmark = pytest.mark.e2e

NEWEST = load_matrix("default").versions[-1]
DECLARED = all_cells(load_cases())


@pytest.fixture(scope="module")
def environment():
    return EnvironmentBuilder().prepare(NEWEST)


@pytest.fixture(scope="module")
def first_run(environment, tmp_path_factory):
    """One full run of the newest version through the CLI, as a user starts it."""
    folder = tmp_path_factory.mktemp("e2e")
    results, report = folder / "results", folder / "report.html"
    status = cli.main(["run", "--jax", NEWEST, "--results", str(results), "-o", str(report)])
    return status, results, report


def _statuses(results):
    (result_file,) = results.glob("*.json")
    data = json.loads(result_file.read_text())
    return data, {(t["metadata"]["case"], t["metadata"]["param"]): t["metadata"] for t in data["tests"]}


def test_every_declared_cell_gets_a_status_and_none_is_broken(first_run):
    status, results, report = first_run
    assert status == 0
    data, cells = _statuses(results)
    assert data["jax_conformance"]["jax"] == NEWEST
    assert set(cells) == {(c.case.id, c.param) for c in DECLARED}
    broken = {k: (m["status"], m["reason"]) for k, m in cells.items() if Status(m["status"]) in BROKEN}
    assert broken == {}
    assert NEWEST in report.read_text()


def test_rerun_with_nothing_changed_reuses_every_cell(first_run, capsys):
    status, results, report = first_run
    capsys.readouterr()
    assert cli.main(["run", "--jax", NEWEST, "--results", str(results), "-o", str(report)]) == 0
    out = capsys.readouterr().out
    assert f"{len(DECLARED)} cells (0 ran, {len(DECLARED)} reused)" in out


def test_rerunning_one_cell_keeps_every_other_cell(first_run):
    status, results, report = first_run
    before = _statuses(results)[1]
    one = DECLARED[0].id
    assert cli.main(["run", "--jax", NEWEST, "--results", str(results), "-o", str(report), "-k", one, "--rerun"]) == 0
    after = _statuses(results)[1]
    assert set(after) == set(before)
    assert after[(DECLARED[0].case.id, DECLARED[0].param)]["reused"] is False


def test_a_stored_cell_of_a_deleted_case_is_dropped_at_the_next_merge(first_run, capsys):
    status, results, report = first_run
    (result_file,) = results.glob("*.json")
    data = json.loads(result_file.read_text())
    ghost = json.loads(json.dumps(data["tests"][0]))
    ghost["nodeid"] = "conformance/cases/numerics.py::deleted_case"
    ghost["metadata"].update({"case": "numerics.deleted_case", "param": ""})
    data["tests"].append(ghost)
    result_file.write_text(json.dumps(data))
    capsys.readouterr()
    assert cli.main(["run", "--jax", NEWEST, "--results", str(results), "-o", str(report), "-k", DECLARED[0].id]) == 0
    assert (
        "dropped 1 stored cell(s) of cases this checkout no longer declares: numerics.deleted_case"
        in capsys.readouterr().out
    )
    assert set(_statuses(results)[1]) == {(c.case.id, c.param) for c in DECLARED}


def test_fork_and_spawn_observe_the_same_for_every_fork_eligible_cell(environment):
    eligible = [c for c in DECLARED if not c.case.needs_fresh_interpreter(c.param)]
    described = describe_target(environment.python)
    target = Target(environment.python, described["platform"], described["jax"])
    shared = {env_group(e) for e in shared_case_envs(eligible, target.platform)}
    should_fork = {c.id for c in eligible if env_group(c.case.env_for(c.param)) in shared | {()}}
    outcomes = {}
    for launcher in ("fork", "spawn"):
        run = RunSession(target, launcher=launcher, workers=os.cpu_count() or 1).run(eligible)
        assert run.launcher == launcher
        assert {r.cell_id for r in run.results if r.launcher == "fork"} == (
            should_fork if launcher == "fork" else set()
        )
        outcomes[launcher] = {r.cell_id: (r.status.value, r.observation) for r in run.results}
    different = {k: (v, outcomes["spawn"][k]) for k, v in outcomes["fork"].items() if outcomes["spawn"][k] != v}
    assert different == {}


def test_fork_server_initialises_no_backend_before_forking(environment):
    described = describe_target(environment.python)
    target = Target(environment.python, described["platform"], described["jax"])
    session = RunSession(target, launcher="fork")
    session.start([c for c in DECLARED if not c.case.needs_fresh_interpreter(c.param)][:1])
    try:
        hello = session._fork.server.hello  # noqa: SLF001 - the server's own ready line
        assert hello["jax"] == NEWEST and hello["backends"] == [] and hello["cases"] == len(load_cases())
    finally:
        session.close()


def test_keys_change_with_the_environment(environment):
    cell = DECLARED[0]
    assert cell_key(cell.case, cell.param, environment_digest({"jax": NEWEST}, "3.13.0")) != cell_key(
        cell.case, cell.param, environment_digest({"jax": "0.4.38"}, "3.13.0")
    )


def test_hostile_probes_become_statuses_and_the_report_still_renders(environment, tmp_path):
    from conformance.core.case import load_cases as load
    from conformance.report.html import render_html
    from conformance.report.model import build_model
    from conformance.results.schema import ResultFile, RunHeader

    described = describe_target(environment.python)
    target = Target(environment.python, described["platform"], described["jax"], "tests.adversarial_cases")
    cases = load("tests.adversarial_cases")
    started = time.monotonic()
    run = RunSession(target, launcher="fork", workers=2, retries=0).run(all_cells(cases))
    assert time.monotonic() - started < 120
    statuses = {r.case: r.status.value for r in run.results}
    # The flood is cut at its time limit or, first, at the cell's file-size limit (64 MiB; the write fails in it).
    flood = next(r for r in run.results if r.case == "hostile.flood")
    assert flood.status.value == "timeout" or (flood.status.value == "error" and "File too large" in flood.reason)
    del statuses["hostile.flood"]
    assert statuses == {
        "hostile.hang": "timeout",
        "hostile.setsid_grandchild": "timeout",
        "hostile.hard_exit": "crash",
        "hostile.interrupt": "error",
        "hostile.not_json": "error",
        "hostile.deep": "error",
        "hostile.surrogate": "differs",
    }
    assert subprocess.run(["pgrep", "-f", "time[.]sleep[(]608[)]"], capture_output=True).stdout == b""
    surrogate = next(r for r in run.results if r.case == "hostile.surrogate")
    assert "[… truncated]" in json.dumps(surrogate.details, ensure_ascii=False)
    header = RunHeader(jax=described["jax"], platform=described["platform"], finished_at="now")
    page = render_html(build_model([ResultFile(header, run.results, "hostile")], cases), "now")
    page.encode("utf-8")
    assert "<script>alert" not in page and len(page) < 2_000_000


@pytest.mark.parametrize(
    "command, signum, code, phase",
    [
        (["gate", "--from", NEWEST, "--to", NEWEST], "SIGTERM", 143, "children"),
        (["gate", "--from", NEWEST, "--to", NEWEST], "SIGTERM", 143, "starting"),
        (
            ["bisect", "training.traced_step_single_compile", "--good", "0.11.2", "--bad", NEWEST],
            "SIGINT",
            130,
            "children",
        ),
        (
            ["bisect", "training.traced_step_single_compile", "--good", "0.11.2", "--bad", NEWEST],
            "SIGINT",
            130,
            "starting",
        ),
    ],
)
def test_a_long_command_interrupted_ends_cleanly(environment, tmp_path, command, signum, code, phase):
    """issue 19 item 17: Ctrl-C or SIGTERM in gate --from/--to or bisect ends like run: no traceback, exit 130 or
    143, no child or fork server left, no `.running-*` file in the results folder."""
    import signal as signals
    import sys

    from conformance.engine.runner import SOURCE_ROOT

    def processes_under(folder):
        """Processes whose working folder is inside `folder` (the run's temporaries: fork servers, cells)."""
        found = []
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and os.readlink(f"/proc/{entry}/cwd").startswith(str(folder)):
                    found.append(entry)
            except OSError:
                continue
        return found

    temporaries = tmp_path / "tmp"
    temporaries.mkdir()
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "conformance", *command, "--results", str(results)]
    if command[0] == "gate":
        argv += ["-k", "training.traced_step_single_compile", "-j", "1"]
    # SIGINT back to its default first: a shell that runs this suite in the background ignores SIGINT for its
    # children, and Python then never turns SIGINT into KeyboardInterrupt (a user's Ctrl-C is never ignored).
    proc = subprocess.Popen(
        argv,
        cwd=SOURCE_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "TMPDIR": str(temporaries)},
        preexec_fn=lambda: signals.signal(signals.SIGINT, signals.SIG_DFL),
    )
    # Interrupted as the run starts (its `.running-*` file written), or once it has children of its own in the
    # temporaries (its fork server importing jax, or the cell under way).
    assert wait_until(lambda: list(results.glob(".running-*.json")), timeout_s=300), "the run never started"
    if phase == "children":
        assert wait_until(lambda: processes_under(temporaries), timeout_s=300), "the run never started a child"
    os.kill(proc.pid, getattr(signals, signum))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == code, out + err
    assert "Traceback" not in err and "interrupted" in err
    assert not list(results.glob(".running-*"))
    # killed children may take a moment to be reaped on a loaded machine
    assert wait_until(lambda: processes_under(temporaries) == []), processes_under(temporaries)
    assert not list(temporaries.glob("jaxconf-*"))
