"""The published JSON Schema of result files (conformance/results/schemas/result.schema.json, issue 60): the
fixtures, the published baseline and a file written now by the result classes validate; what a reader refuses does
not. No JAX."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance.core.status import Status
from conformance.results.schema import SCHEMA_VERSION, CellResult, RunHeader, result_file_from_json

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "conformance/results/schemas/result.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def fresh() -> dict:
    """A result file of the current schema, as the result classes write one."""
    header = RunHeader(
        jax="0.12.0.1+corp.3",
        platform="linux-x86_64",
        suite_version="0.2.0",
        jaxlib="0.12.0.1",
        python="3.12.1",
        devices=["TFRT_CPU_0"],
        jax_git_hash="dc4af684446e65ee98eee8090e1ff6f8211473fb",
        source={"kind": "index", "index_url": "https://pypi.org/simple"},
    )
    cells = [
        CellResult(
            "numerics.debug_nans_vmap_miss",
            "",
            ["3.1.a"],
            Status.DIFFERS,
            known_issue=True,
            observation={"value": "nan"},
            duration_s=0.25,
            warnings=[{"category": "DeprecationWarning", "message": "m", "module": "jax", "deprecation": ""}],
        ),
        CellResult("values.dtype", "float16", ["2.1.b"], Status.CONFORMS),
    ]
    return {
        "created": 0.0,
        "duration": 1.0,
        "exitcode": 0,
        "summary": {},
        "jax_conformance": header.to_json(),
        "tests": [{"nodeid": f"x.py::{c.cell_id}", "outcome": "passed", "metadata": c.to_json()} for c in cells],
    }


def test_the_schema_is_valid_and_shipped_with_the_package():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"conformance.results" = ["schemas/*.json"]' in pyproject
    assert SCHEMA["$defs"]["header"]["properties"]["schema_version"]["maximum"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    "path",
    [
        "tests/golden/0.4.38-linux-x86_64.json",
        "tests/golden/0.12.0.1-linux-x86_64.json",
        "matrix/baseline/0.12.0.1-linux-x86_64.json",
    ],
)
def test_stored_result_files_validate(path):
    VALIDATOR.validate(json.loads((ROOT / path).read_text(encoding="utf-8")))


def test_a_file_written_now_validates_and_reads_back():
    data = fresh()
    VALIDATOR.validate(data)
    assert data["jax_conformance"]["schema_version"] == SCHEMA_VERSION
    assert len(result_file_from_json(json.loads(json.dumps(data)), "x.json").cells) == 2


@pytest.mark.parametrize(
    "where, value",
    [
        (("jax_conformance", "schema_version"), SCHEMA_VERSION + 1),
        (("jax_conformance", "jax"), "latest"),
        (("jax_conformance", "platform"), "linux x86"),
        (("tests", 0, "metadata", "status"), "passed"),
        (("tests", 0, "metadata", "duration_s"), -1),
    ],
)
def test_what_a_reader_refuses_does_not_validate(where, value):
    data = fresh()
    target = data
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(data)


def test_a_file_without_its_header_does_not_validate():
    data = fresh()
    del data["jax_conformance"]["jax"]
    assert not VALIDATOR.is_valid(data)
