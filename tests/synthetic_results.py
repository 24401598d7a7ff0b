"""Synthetic result files for the diff, gate and bisect tests: a few lines per cell, no JAX needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.results.schema import CellResult, result_file_from_json

VMAP = "numerics.debug_nans_vmap_miss"


def cell(
    case: str,
    param: str = "",
    status: str = "conforms",
    observation: Any = None,
    known_issue: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A cell's metadata as a result file stores it."""
    return {
        "case": case,
        "param": param,
        "rows": [f"{case}.{param}" if param else case],
        "status": status,
        "known_issue": known_issue,
        "observation": observation if observation is not None else {"ok": True},
        "command": f"jax-conformance run --jax V -k {case}",
        **extra,
    }


def report(
    jax: str,
    platform: str,
    cells: list[dict[str, Any]],
    suite: str = "0.2.0",
    schema: int = 2,
    finished: str = "2026-11-29T10:00:00+00:00",
) -> dict[str, Any]:
    """A pytest-json-report object holding `cells`."""
    return {
        "created": 0,
        "duration": 1.0,
        "exitcode": 0,
        "summary": {},
        "jax_conformance": {
            "schema_version": schema,
            "suite_version": suite,
            "jax": jax,
            "platform": platform,
            "finished_at": finished,
        },
        "tests": [{"nodeid": f"x.py::{c['case']}", "outcome": "passed", "metadata": c} for c in cells],
    }


def write(
    folder: Path, jax: str, platform: str, cells: list[dict[str, Any]], name: str | None = None, **kwargs: Any
) -> Path:
    """Write a result file named `<jax>-<platform>.json` (or `name`) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{jax}-{platform}.json")
    path.write_text(json.dumps(report(jax, platform, cells, **kwargs)), encoding="utf-8")
    return path


def result(
    case: str, param: str = "", status: str = "conforms", observation: Any = None, known_issue: bool = False
) -> CellResult:
    """A `CellResult` (as a bisect oracle returns)."""
    return CellResult.from_json(cell(case, param, status, observation, known_issue))


def files(jax: str, platform: str, cells: list[dict[str, Any]], **kwargs: Any):
    """A parsed `ResultFile`."""
    return result_file_from_json(report(jax, platform, cells, **kwargs), f"{jax}-{platform}.json")
