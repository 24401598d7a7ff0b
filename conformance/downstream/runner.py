"""One pytest run of a downstream suite in its environment, bounded, and the rerun of its failures.

pytest runs as `python -m pytest -p conformance.downstream.plugin` in the suite's environment, in a process group
of its own (`portable.run_bounded`: at the whole-run bound the group is killed), with our source on PYTHONPATH for
the plugin and nothing else of ours, no cache provider and no bytecode written. A `pyargs` suite runs from its
environment's site-packages (so node ids read `chex/_src/asserts_test.py::...`); a folder suite runs in the folder,
the folder on PYTHONPATH. The manifest's device count becomes
`XLA_FLAGS=--xla_force_host_platform_device_count=N`. The failing tests are then rerun once, in the same
environment, and a test that passes then is `flaky` (`outcomes.with_rerun`).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from conformance.childenv import SOURCE_ROOT, child_environment
from conformance.downstream.lock import SuiteEnv
from conformance.downstream.manifest import Suite
from conformance.downstream.outcomes import NodeOutcome, read_events, rerun_candidates, with_rerun
from conformance.errors import ConformanceError
from conformance.portable import run_bounded

PLUGIN = "conformance.downstream.plugin"


@dataclass(frozen=True)
class SuiteRun:
    """The outcomes of a run (with reruns), its wall seconds, and the tail of what pytest printed."""

    outcomes: dict[str, NodeOutcome]
    wall_s: float
    tail: str
    command: str


def where_it_runs(suite: Suite, env: SuiteEnv) -> Path:
    """The folder pytest runs in and node ids are relative to."""
    return suite.folder if suite.kind == "folder" and suite.folder is not None else env.site_packages()


def pytest_argv(suite: Suite, env: SuiteEnv, selected: Sequence[str] | None) -> list[str]:
    """The pytest command line: the selected node ids, or the whole suite (`--pyargs` packages or the folder)."""
    root = where_it_runs(suite, env)
    argv = [
        env.python,
        "-m",
        "pytest",
        "-p",
        PLUGIN,
        "-p",
        "no:cacheprovider",
        "-q",
        "-rN",
        "--rootdir",
        str(root),
        "--continue-on-collection-errors",
        *suite.manifest.pytest_args,
    ]
    for node, _ in suite.manifest.deselect:
        argv += ["--deselect", node]
    if selected is not None:  # their files; the plugin keeps the node ids themselves (`JAXCONF_DOWNSTREAM_SELECT`)
        return argv + list(dict.fromkeys(node.split("::", 1)[0] for node in selected))
    if suite.manifest.tests == "pyargs":
        return argv + ["--pyargs", *suite.manifest.packages]
    return argv + ["."]


def _once(suite: Suite, env: SuiteEnv, selected: Sequence[str] | None, bound_s: float):
    with tempfile.TemporaryDirectory(prefix="jaxconf-downstream-") as work:
        events = Path(work) / "events.jsonl"
        extra = {
            "JAXCONF_DOWNSTREAM_OUT": str(events),
            "JAXCONF_DOWNSTREAM_TEST_TIMEOUT": str(suite.manifest.test_timeout_s * suite.manifest.time_multiplier),
            "JAX_PLATFORMS": "cpu",
        }
        if suite.manifest.device_count:
            extra["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={suite.manifest.device_count}"
        if selected is not None:
            chosen = Path(work) / "selected.txt"
            chosen.write_text("\n".join(selected) + "\n", encoding="utf-8")
            extra["JAXCONF_DOWNSTREAM_SELECT"] = str(chosen)
        env_vars = child_environment(os.environ, extra)
        if suite.kind == "folder" and suite.folder is not None:
            env_vars["PYTHONPATH"] = os.pathsep.join([str(suite.folder), SOURCE_ROOT])
        argv = pytest_argv(suite, env, selected)
        try:
            done = run_bounded(argv, env=env_vars, cwd=str(where_it_runs(suite, env)), timeout=bound_s, limit=16 * 1024)
        except OSError as exc:
            raise ConformanceError(f"could not start pytest for {suite.label}: {exc}") from None
        text = events.read_text(encoding="utf-8", errors="replace") if events.is_file() else ""
        return read_events(text, killed=done.timed_out, exit_code=done.returncode), done.output, argv


def run_suite(suite: Suite, env: SuiteEnv, selected: Sequence[str] | None = None) -> SuiteRun:
    """Run the suite (or the `selected` node ids) once, then rerun its failing tests once."""
    started = time.monotonic()
    bound = suite.manifest.run_timeout_s * suite.manifest.time_multiplier
    first, tail, argv = _once(suite, env, selected, bound)
    outcomes = first.outcomes
    again = rerun_candidates(outcomes)
    if again:
        rerun, _, _ = _once(suite, env, again, bound)
        outcomes = with_rerun(outcomes, rerun.outcomes)
    return SuiteRun(outcomes, time.monotonic() - started, tail, " ".join(argv[1:]))
