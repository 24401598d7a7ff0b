"""Child entry point: run one probe in the target environment and write its observation to a file.

    python -m conformance.child CASE [PARAM] --out FILE [--package conformance.cases]

The observation travels only through FILE (written atomically), never through
stdout or stderr, so a probe that prints, captures stdout or crashes cannot
corrupt it. The child is the subreaper of whatever its probe starts (Linux): the probe
runs in a forked process below it, and all that is left below it once that ends is killed. Standard library only:
the target environment holds jax, jaxlib and numpy.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
from typing import Any, Callable, Sequence

from conformance.atomic import write_text_atomically
from conformance.core.case import DEFAULT_CASE_PACKAGE, NO_PARAM, Observation, Unsupported, find_case
from conformance.core.casefolders import import_declared_folders
from conformance.core.observation import (
    encode_nonfinite,
    error_record,
    json_problem,
    observed_record,
    unsupported_record,
)
from conformance.child.future import FUTURE_VARIABLE, enter_future
from conformance.child.warned import recording_warnings
from conformance.portable import become_subreaper, bound_cell_processes, kill_descendants, limit_cell_resources


def write_json_atomically(path: str, payload: dict[str, Any]) -> None:
    """Write `payload` as strict JSON (no NaN), atomically; raises before writing if it is not plain JSON."""
    write_text_atomically(path, json.dumps(payload, allow_nan=False, indent=1))


def observe(case_id: str, param: str, package: str) -> dict[str, Any]:
    """Run the probe and describe what happened as a plain-JSON observation record, with the deprecation warnings
    it triggered (`warnings`: category, message, module, JAX deprecation id)."""
    warned: list[dict[str, str]] = []
    record = _observe(case_id, param, package, warned)
    if warned:
        record["warnings"] = warned
    return record


def _observe(case_id: str, param: str, package: str, warned: list[dict[str, str]]) -> dict[str, Any]:
    try:
        import_declared_folders()  # case folders, each from its own path (never its parent on sys.path)
        found = find_case(case_id, package)
        if os.environ.get(FUTURE_VARIABLE) == "1":  # the +future target: pending removals done, warnings are errors
            enter_future()  # never imports jax itself: where it is not loaded yet, a hook acts as it loads
            result = found.run_probe(param)
        else:
            with recording_warnings() as found_warnings:
                try:
                    result = found.run_probe(param)
                finally:
                    warned.extend(found_warnings)
        if not isinstance(result, Observation):
            return error_record(
                case_id,
                param,
                "TypeError",
                f"the probe returned {type(result).__name__}, not an Observation(facts, details)",
            )
        facts, details = dict(result.facts), dict(result.details or {})
    except Unsupported as exc:
        return unsupported_record(case_id, param, str(exc))
    except BaseException as exc:  # noqa: BLE001 - any escape from the probe is an observation too
        return error_record(case_id, param, type(exc).__name__, str(exc), traceback.format_exc())
    return observed_record(case_id, param, facts, details)


def write_record(path: str, record: dict[str, Any]) -> None:
    """Write the record, its NaN and ±inf in their stored form (`observation.encode_nonfinite`); one that is
    not plain JSON otherwise, or nests deeper than `MAX_DEPTH`, becomes an error record saying so (the parent
    could not compare or store it)."""
    for part in ("facts", "details"):
        problem = json_problem(record.get(part), nonfinite=True)
        if problem:
            write_json_atomically(
                path,
                error_record(
                    record["case"],
                    record["param"],
                    "ValueError",
                    f"probe result is not plain JSON: its {part}: {problem}",
                ),
            )
            return
        if part in record:
            record = {**record, part: encode_nonfinite(record[part])}
    try:
        write_json_atomically(path, record)
    except (TypeError, ValueError, RecursionError) as exc:
        write_json_atomically(
            path,
            error_record(record["case"], record["param"], type(exc).__name__, f"probe result is not plain JSON: {exc}"),
        )


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the probe, write the observation file; exit 0 unless writing failed.

    Where this process can be a subreaper (Linux), the probe runs in a forked process of its own
    and this one stays to kill whatever the probe left once it ends, however it ends (a crash
    included), then exits as the probe's process did.
    """
    parser = argparse.ArgumentParser(prog="python -m conformance.child")
    parser.add_argument("case")
    parser.add_argument("param", nargs="?", default=NO_PARAM)
    parser.add_argument("--out", required=True)
    parser.add_argument("--package", default=DEFAULT_CASE_PACKAGE)
    args = parser.parse_args(argv)
    limited = limit_cell_resources()

    def run() -> None:
        write_record(args.out, observe(args.case, args.param, args.package))
        sys.stdout.flush()

    if hasattr(os, "fork") and become_subreaper():
        return supervise(run, limited)
    bound_cell_processes(limited)
    run()
    return 0


def supervise(run: Callable[[], None], limited: Sequence[str] = ()) -> int:
    """Run `run` in a forked process, wait for it, kill every descendant it left, and end as it ended; where the
    rlimits in `limited` cannot bound the number of processes, this process counts them (after the fork: a fork
    from a process with threads warns)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        # The probe's process ends through the interpreter's own shutdown (SystemExit, never os._exit): what a
        # spawned cell exists for includes what happens at interpreter exit (a crash in jax's teardown, say).
        code = 0
        try:
            run()
        except BaseException:  # noqa: BLE001 - as an uncaught exception would: the traceback, exit status 1
            traceback.print_exc()
            code = 1
        raise SystemExit(code)
    bound_cell_processes(list(limited))
    _, status = os.waitpid(pid, 0)
    end_descendants()
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)  # end by the same signal, so the parent sees the same crash
        return 128 + number
    return os.WEXITSTATUS(status)


def end_descendants() -> None:
    """Kill every process the probe left behind (its own session and an empty environment included) and reap
    them; called as the cell's process ends, while it is still their subreaper."""
    kill_descendants(os.getpid())
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    sys.exit(main())
