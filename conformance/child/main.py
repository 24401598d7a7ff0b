"""Child entry point: run one probe in the target environment and write its observation to a file.

    python -m conformance.child CASE [PARAM] --out FILE [--package conformance.cases]

The observation travels only through FILE (written atomically), never through
stdout or stderr, so a probe that prints, captures stdout or crashes cannot
corrupt it. Standard library only: the target environment holds jax, jaxlib and numpy.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from typing import Any

from conformance.atomic import write_text_atomically
from conformance.core.case import DEFAULT_CASE_PACKAGE, NO_PARAM, Unsupported, find_case

OBSERVATION_SCHEMA = 1


def write_json_atomically(path: str, payload: dict[str, Any]) -> None:
    """Write `payload` as strict JSON (no NaN), atomically; raises before writing if it is not plain JSON."""
    write_text_atomically(path, json.dumps(payload, allow_nan=False, indent=1))


def split_probe_result(result: Any) -> tuple[Any, Any]:
    """A probe returns facts, or a `(facts, details)` pair; return both parts."""
    if isinstance(result, tuple) and len(result) == 2:
        return result
    return result, {}


def observe(case_id: str, param: str, package: str) -> dict[str, Any]:
    """Run the probe and describe what happened as a plain-JSON observation record."""
    record: dict[str, Any] = {"schema": OBSERVATION_SCHEMA, "case": case_id, "param": param}
    try:
        found = find_case(case_id, package)
        facts, details = split_probe_result(found.run_probe(param))
    except Unsupported as exc:
        record.update(outcome="unsupported", reason=str(exc))
        return record
    except BaseException as exc:  # noqa: BLE001 - any escape from the probe is an observation too
        record.update(
            outcome="error",
            error={
                "type": type(exc).__name__,
                "message": str(exc)[:2000],
                "traceback": traceback.format_exc()[-6000:],
            },
        )
        return record
    record.update(outcome="observed", facts=facts, details=details)
    return record


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the probe, write the observation file; exit 0 unless writing failed."""
    parser = argparse.ArgumentParser(prog="python -m conformance.child")
    parser.add_argument("case")
    parser.add_argument("param", nargs="?", default=NO_PARAM)
    parser.add_argument("--out", required=True)
    parser.add_argument("--package", default=DEFAULT_CASE_PACKAGE)
    args = parser.parse_args(argv)
    record = observe(args.case, args.param, args.package)
    try:
        write_json_atomically(args.out, record)
    except (TypeError, ValueError) as exc:
        # The probe returned something that is not plain JSON: report that instead.
        write_json_atomically(args.out, {
            "schema": OBSERVATION_SCHEMA, "case": args.case, "param": args.param, "outcome": "error",
            "error": {"type": type(exc).__name__, "message": f"probe result is not plain JSON: {exc}",
                      "traceback": ""},
        })
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
