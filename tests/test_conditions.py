"""The miscompile's conditions (CPU matrix features, YNNPACK fusions, the error without them): one line per column,
in the model, the column headers and the cell's panel (issue 25: a "not reproduced" on a CPU without the feature is
not read as "fixed")."""

from __future__ import annotations

from conformance.core.case import load_cases
from conformance.report.conditions import MISCOMPILE_CASE, cpu_conditions
from conformance.report.html import write_report
from conformance.report.model import build_model
from tests import synthetic_results as synth

ARM_DETAILS = {
    "jit_error": 18.5,
    "cpu_matrix_features": {"source": "/proc/cpuinfo", "features": ["sme", "sve2"], "sme": True, "sve": True},
    "closure_hlo_ynn_fusions": 1,
    "without_ynn_fusion": {"xla_flags": "--xla_cpu_experimental_ynn_fusion_type=-X", "jit_error": 7.7e-6},
}


def test_the_line_names_each_condition():
    assert cpu_conditions(ARM_DETAILS) == (
        "CPU SME yes, SVE yes; YNNPACK fusions in the closure's program: 1; error with that fusion off: 7.7e-06"
    )


def test_unknown_refused_and_nan_are_said_as_such():
    details = {
        "cpu_matrix_features": {"source": "unavailable", "sme": None, "sve": False},
        "closure_hlo_ynn_fusions": None,
        "without_ynn_fusion": {"failed": "exit code -6: Unknown flags"},
    }
    assert cpu_conditions(details) == (
        "CPU SME unknown, SVE no; YNNPACK fusions in the closure's program: unknown; fusion flag refused by this XLA"
    )
    nan = {"without_ynn_fusion": {"jit_error": {"$float": "nan"}}}
    assert cpu_conditions(nan) == "error with that fusion off: nan"


def test_details_without_conditions_give_no_line():
    assert cpu_conditions(None) == "" and cpu_conditions({"jit_error": 0.1}) == ""


def test_the_column_carries_the_line_and_the_page_shows_it(tmp_path):
    cells = [
        synth.cell(MISCOMPILE_CASE, status="differs", observation={"jit_error_above_1": True}, details=ARM_DETAILS)
    ]
    files = [synth.files("0.12.0.1", "darwin-arm64", cells)]
    model = build_model(files, load_cases())
    assert model.columns[0].conditions == cpu_conditions(ARM_DETAILS)
    page = write_report(files, tmp_path / "index.html", cases=load_cases()).read_text(encoding="utf-8")
    assert (
        "the miscompile&#39;s conditions: CPU SME yes, SVE yes" in page
        or "the miscompile's conditions: CPU SME yes, SVE yes" in page
    )
    assert '"cond": "CPU SME yes, SVE yes' in page or '"cond":"CPU SME yes, SVE yes' in page
