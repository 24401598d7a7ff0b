"""Run one cell: start its child through a launcher, read the observation, judge it, retry when asked.

The launcher is passed in, so tests and other strategies can replace it.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conformance.core.case import DEFAULT_CASE_PACKAGE, Case, Skip
from conformance.childenv import SOURCE_ROOT, child_environment  # noqa: F401 - SOURCE_ROOT re-exported: matrix, tests
from conformance.core.observation import DETAILS_CHARS, MESSAGE_CHARS, OBSERVATION_CHARS, ProcessOutcome, bounded
from conformance.core.status import Status
from conformance.core.verdict import judge, merged_status, needs_retry
from conformance.engine.launch import CellCommand
from conformance.results.schema import CellResult

# Every child's environment: `conformance.childenv` (no JAX/XLA settings, no credentials, our source on PYTHONPATH).


@dataclass(frozen=True)
class Target:
    """The environment cells run in: its interpreter, platform and JAX version."""

    python: str
    platform: str
    jax_version: str | None = None
    package: str = DEFAULT_CASE_PACKAGE
    case_folders: tuple[str, ...] = ()  # paths of the case folders the child imports as packages
    source_kind: str = ""  # "python" or "wheels" for a build of its own (its reproduce line names it); "" a release


# Where a target's jax came from (its result header's `source.kind`): a release from an index, or a build of its own.
SOURCE_KINDS = ("", "index", "python", "wheels", "pair", "source")


def reproduction_command(
    case: Case, param: str, jax_version: str | None, package: str = DEFAULT_CASE_PACKAGE, source_kind: str = ""
) -> str:
    """A portable shell line that reproduces the cell with the suite's CLI (no local paths). A build is not the
    index's release of its version: a build from wheel files (or any with a local label, `0.12.0.1+corp.3`, on no
    public index) names its wheels' folder, `--wheels WHEELS_DIR`, and an existing interpreter `--python PYTHON`."""
    selection = shlex.quote(case.cell_id(param))
    version = shlex.quote(jax_version) if jax_version else "VERSION"
    if source_kind in ("python", "source"):  # an existing interpreter, or one holding a jax commit's source
        target = "--python PYTHON"
    elif source_kind == "pair":
        target = f"--pair {version}:JAXLIB"
    elif source_kind == "wheels" or (jax_version and "+" in jax_version):
        target = "--wheels WHEELS_DIR"
    else:
        target = f"--jax {version}"
    folder = "" if package == DEFAULT_CASE_PACKAGE else " --cases CASES_DIR"
    return f"jax-conformance run {target}{folder} -k {selection}"


Launch = Callable[[CellCommand, bool], ProcessOutcome]


def _described(case: Case, param: str) -> dict[str, str]:
    """Where the chapter documents a cell and what it claims: every stored cell carries these."""
    return {
        "section": case.section,
        "heading": case.heading,
        "claim": case.claim,
        "discrepancy": case.discrepancy_note(param),
    }


def harness_fault_result(case: Case, param: str, target: Target, fault: str) -> CellResult:
    """The `error` cell of a probe the harness never judged: pytest, the plugin or the run session failed around it
    (`fault`: the phase and the exception, as `harness_fault_text` writes it). It carries the cell's full description
    (rows, section, claim, reproduce line), so the report shows it and the gate can tell it from JAX's error."""
    return CellResult(
        case=case.id,
        param=param,
        rows=list(case.rows(param)),
        status=Status.ERROR,
        known_issue=case.is_known_issue(param, target.platform),
        reason=f"not judged: the harness failed around the probe ({fault})"[:MESSAGE_CHARS],
        harness=fault[:MESSAGE_CHARS],
        command=reproduction_command(case, param, target.jax_version, target.package, target.source_kind),
        **_described(case, param),
    )


def harness_fault_text(phase: str, exc: BaseException) -> str:
    """`<phase>: <exception type>: <message>` on one line, bounded: the cause a harness fault is stored with."""
    message = " ".join(str(exc).split())
    return f"{phase}: {type(exc).__name__}{': ' + message if message else ''}"[:MESSAGE_CHARS]


def run_cell_once(
    case: Case, param: str, target: Target, launch: Launch, launcher_name: str, workroot: str | None = None
) -> CellResult:
    """Run one cell in one child and judge it."""
    rows = list(case.rows(param))
    expected = case.expected(param, target.platform)
    known_issue = case.is_known_issue(param, target.platform)
    described = _described(case, param)
    if isinstance(expected, Skip):
        return CellResult(
            case=case.id,
            param=param,
            rows=rows,
            status=Status.SKIPPED,
            reason=expected.reason,
            known_issue=known_issue,
            **described,
        )
    case_env = case.env_for(param)
    with tempfile.TemporaryDirectory(prefix="jaxconf-", dir=workroot) as workdir:
        out_path = os.path.join(workdir, "observation.json")
        command = CellCommand(
            case_id=case.id,
            param=param,
            out_path=out_path,
            workdir=workdir,
            python=target.python,
            package=target.package,
            env=child_environment(os.environ, case_env, case_folders=target.case_folders),
            timeout_s=case.timeout_s,
            stdin=case.stdin_for(param),
            case_env=case_env,
        )
        fresh = case.needs_fresh_interpreter(param)
        outcome = launch(command, fresh)
        record_text = Path(out_path).read_text(encoding="utf-8", errors="replace") if os.path.exists(out_path) else None
    found = judge(
        outcome, record_text, dict(expected), target.jax_version, printed=case.expected_printed(param, target.platform)
    )
    # Compared first, bounded after: a probe that returns megabytes cannot bloat results or the report.
    found.details = bounded(found.details, DETAILS_CHARS)
    found.observation = bounded(found.observation, OBSERVATION_CHARS)
    found.reason = found.reason[:MESSAGE_CHARS]
    return CellResult(
        case=case.id,
        param=param,
        rows=rows,
        status=found.status,
        known_issue=known_issue,
        expected=found.expected,
        observation=found.observation,
        diff=found.diff,
        details=found.details,
        printed_expected=found.printed_expected,
        printed_diff=found.printed_diff,
        warnings=found.warnings,
        reason=found.reason,
        observation_verdict=found.observation_verdict,
        duration_s=outcome.duration_s,
        stdout_tail=outcome.stdout,
        stderr_tail=outcome.stderr,
        command=reproduction_command(case, param, target.jax_version, target.package, target.source_kind),
        launcher=outcome.launcher or ("spawn" if fresh else launcher_name),
        **described,
    )


def run_cell(
    case: Case,
    param: str,
    target: Target,
    launch: Launch,
    launcher_name: str = "spawn",
    retries: int = 0,
    retry_differs: bool = False,
    workroot: str | None = None,
    stopping: Callable[[], bool] = lambda: False,
) -> CellResult:
    """Run one cell, retrying up to `retries` times while it ends in error, crash or timeout
    (or differs, with `retry_differs`); disagreeing attempts make it `flaky`, and every attempt is kept."""
    attempts = [run_cell_once(case, param, target, launch, launcher_name, workroot)]
    while needs_retry(attempts[-1].status, retry_differs) and len(attempts) <= retries and not stopping():
        attempts.append(run_cell_once(case, param, target, launch, launcher_name, workroot))
    final = attempts[-1]
    if len(attempts) > 1:
        final.status, disagreement = merged_status([a.status for a in attempts])
        if disagreement:
            final.reason = disagreement
        final.attempts = [{k: v for k, v in a.to_json().items() if k != "attempts"} for a in attempts]
    return final
