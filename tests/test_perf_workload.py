"""The workload declaration (`Section.workload`, `core.workload`), its discovery, and the HLO counts."""

from __future__ import annotations

import pytest

from conformance.core.case import CaseDeclarationError, load_workloads
from conformance.core.workload import split_built
from conformance.perf.hlo import hlo_counts

WORKLOAD_MODULE = """
from conformance.core.case import Section
SECTION = Section("§9", "Ours")

@SECTION.workload(rows=["ours.step"], claim="A step.", notes="n")
def step():
    return (lambda x: x + 1), (1,)
"""


def _package(tmp_path, monkeypatch, forget, name, body):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "mine.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    forget.append(name)
    return name


def test_a_workload_is_declared_and_found_with_its_section_and_claim(tmp_path, monkeypatch, forget):
    package = _package(tmp_path, monkeypatch, forget, "wlpkg_ok", WORKLOAD_MODULE)
    (found,) = load_workloads(package)
    assert (found.id, found.section, found.claim, found.rows) == ("wlpkg_ok/mine.step", "§9", "A step.", ("ours.step",))
    fn, args, kwargs = split_built(found.build(), found.id)
    assert fn(*args, **kwargs) == 2


@pytest.mark.parametrize(
    "decorator, message",
    [
        ('@SECTION.workload(rows="ours.step", claim="A step.")', "rows= takes a non-empty list"),
        ('@SECTION.workload(rows=["Ours Step"], claim="A step.")', "row IDs are lower-case"),
        ('@SECTION.workload(rows=["ours.step"], claim=" ")', "needs claim="),
        # timeout_s was accepted whatever it was and never enforced (issue 57)
        ('@SECTION.workload(rows=["ours.step"], claim="A step.", timeout_s=0)', "timeout_s= takes the seconds"),
        ('@SECTION.workload(rows=["ours.step"], claim="A step.", timeout_s=-2)', "timeout_s= takes the seconds"),
        (
            '@SECTION.workload(rows=["ours.step"], claim="A step.", timeout_s=float("nan"))',
            "timeout_s= takes the seconds",
        ),
        (
            '@SECTION.workload(rows=["ours.step"], claim="A step.", timeout_s=float("inf"))',
            "timeout_s= takes the seconds",
        ),
        ('@SECTION.workload(rows=["ours.step"], claim="A step.", timeout_s="5")', "timeout_s= takes the seconds"),
        ('@SECTION.workload(rows=["ours.step"], claim="A step.", timeout_s=True)', "timeout_s= takes the seconds"),
    ],
)
def test_a_wrong_declaration_is_one_line_naming_the_workload(tmp_path, monkeypatch, forget, decorator, message):
    body = WORKLOAD_MODULE.replace('@SECTION.workload(rows=["ours.step"], claim="A step.", notes="n")', decorator)
    package = _package(tmp_path, monkeypatch, forget, f"wlpkg_bad{abs(hash(decorator)) % 10**6}", body)
    with pytest.raises(CaseDeclarationError, match=message) as raised:
        load_workloads(package)
    assert "mine.step" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "built, message",
    [
        (3, r"not \(fn, args\)"),
        ((len, [1]), "args must be a tuple"),
        ((1, ()), "not callable"),
        ((len, (), 3), "kwargs must be a mapping"),
    ],
)
def test_a_builder_that_returns_the_wrong_shape_is_named(built, message):
    with pytest.raises(TypeError, match=message):
        split_built(built, "m.w")


def test_the_suite_declares_at_least_twelve_workloads_each_with_a_claim():
    found = load_workloads()
    assert len(found) >= 12
    names = {w.id.split(".", 1)[1] for w in found}
    assert {
        "mlp_train_step",
        "scan_grad",
        "while_loop",
        "conv_net_step",
        "elementwise_fusion",
        "vmap_grad",
        "sort_top_k",
        "fft",
        "prng_sampling",
        "dispatch_loop",
        "compile_heavy",
        "memory_bound",
    } <= names
    assert all(w.claim.strip() and w.rows for w in found)


def test_hlo_counts_instructions_and_fusions_of_every_computation():
    text = """HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

%fused_computation (param_0: f32[8]) -> f32[8] {
  %param_0 = f32[8]{0} parameter(0)
  %sine.0 = f32[8]{0} sine(f32[8]{0} %param_0)
  ROOT %multiply.0 = f32[8]{0} multiply(f32[8]{0} %sine.0, f32[8]{0} %sine.0)
}

ENTRY %main.5 (Arg_0.1: f32[8]) -> (f32[8], s32[]) {
  %Arg_0.1 = f32[8]{0} parameter(0)
  %fusion = f32[8]{0} fusion(f32[8]{0} %Arg_0.1), kind=kLoop, calls=%fused_computation
  %constant = s32[] constant(1)
  ROOT %tuple = (f32[8]{0}, s32[]) tuple(f32[8]{0} %fusion, s32[] %constant)
}
"""
    assert hlo_counts(text) == {"instructions": 7, "fusions": 1}


def test_run_collects_no_workload():
    """The default `run` runs cases only: workloads need rounds, and `perf` runs them."""
    from conformance.core.case import load_cases
    from conformance.engine.selection import all_cells

    assert not [c for c in all_cells(load_cases()) if c.id.startswith("performance.")]
