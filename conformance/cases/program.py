"""§2 of the chapter: seeing the program (jaxpr, StableHLO, optimized HLO, named scopes and the stage objects).

It also holds known issue 1 from §0, the CPU miscompile of a closure-captured constant, which the chapter
bisects with disable_jit.
"""

from conformance.core.case import Change, Expect, Observation, Param, Section, Unsupported
from conformance.cases.helpers import CompileCounter, require, require_keyword

SECTION = Section("§2", "Seeing the program")

SCALE = 2.0  # a module-level "configuration" value that traced functions read as a global


@SECTION.case(
    subsection="0",
    rows=["program.closure_constant_miscompile"],
    claim="Under jit, the CPU backend returns wrong sums for vmap(lambda x: sum(W @ x)) when W is a "
    "closure-captured constant, while the same code under disable_jit is right.",
    known_issue=("darwin-arm64",),
    expect=Expect(
        {"jit_error_above_1": False, "jit_error_below_1e-3": True, "eager_error_below_1e-3": True},
        platforms={"darwin-arm64": {"jit_error_above_1": True, "jit_error_below_1e-3": False}},
    ),
    notes="The chapter measured a jit error of 107 on macOS arm64 (asserted above 1 there) and says the bug did "
    "not show up in its Linux x86 test; the eager error (5.91e-06) is asserted below 1e-3 everywhere. Where "
    "the bug does not reproduce, jit is expected to be as accurate as eager (below 1e-3; about 5e-6 on "
    "linux-x86_64 with 0.12.0.1), so that a smaller miscompile is caught too. A NaN result counts as "
    "wrong (above 1, not below 1e-3) and is kept as NaN in the details. The details record the "
    "conditions the bug may need, so that 'not reproduced' on a CPU without them is not read as 'fixed' "
    "(under qemu's linux-aarch64 it reproduces with SME and disappears without SME or without XLA's "
    "YNNPACK fusion): cpu_matrix_features (SME/SVE from /proc/cpuinfo or sysctl hw.optional.arm), "
    "closure_hlo_ynn_fusions (how many YNNPACK fusions the jitted closure's compiled HLO holds) and "
    "without_ynn_fusion (the jit error in a fresh process with that fusion turned off by XLA_FLAGS).",
)
def closure_constant_miscompile():
    import jax

    from conformance.scripts.closure_miscompile import measure

    jit_error, eager_error, hlo = measure(jax)
    return Observation(
        # NaN is an error too: `not (e <= 1)` holds for NaN, `e < 1e-3` does not.
        {
            "jit_error_above_1": not jit_error <= 1.0,
            "jit_error_below_1e-3": jit_error < 1e-3,
            "eager_error_below_1e-3": eager_error < 1e-3,
        },
        {
            "jit_error": jit_error,
            "eager_error": eager_error,
            "prng_impl": str(getattr(jax.config, "jax_default_prng_impl", None)),
            "cpu_matrix_features": cpu_matrix_features(),
            "closure_hlo_ynn_fusions": hlo.count(_YNN_FUSION_KIND) if hlo is not None else None,
            "without_ynn_fusion": _jit_error_without_ynn_fusion(),
        },
    )


_YNN_FUSION_KIND = '"__ynn_fusion"'  # XLA CPU's kYnnFusionKind, in a fusion's backend_config
YNN_FUSION_OFF = (
    "--xla_cpu_experimental_ynn_fusion_type=-LIBRARY_FUSION_TYPE_DOT,"
    "-LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,-LIBRARY_FUSION_TYPE_REDUCE,-LIBRARY_FUSION_TYPE_ELTWISE"
)


def matrix_features_from_cpuinfo(text):
    """The words of /proc/cpuinfo's text that name matrix or scalable-vector features: sme* and sve* from Arm's
    `Features` lines, amx* from x86's `flags` lines (the counterpart of SME; x86's `smep` is no SME)."""
    words = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "features":
            words.update(w for w in value.split() if w.startswith(("sme", "sve")))
        elif key == "flags":
            words.update(w for w in value.split() if w.startswith("amx"))
    return sorted(words)


def matrix_features_from_sysctl(text):
    """The `FEAT_SME*` and `FEAT_SVE*` names set to 1 in the output of `sysctl hw.optional.arm` (macOS)."""
    found = []
    for line in text.splitlines():
        name, _, value = line.partition(":")
        feature = name.strip().rsplit(".", 1)[-1]
        if value.strip() == "1" and feature.upper().startswith(("FEAT_SME", "FEAT_SVE")):
            found.append(feature)
    return sorted(found)


def cpu_matrix_features():
    """The CPU's matrix and vector-length features: `{"source", "features", "sme", "sve"}`.

    Linux reads /proc/cpuinfo, macOS `sysctl hw.optional.arm`. Elsewhere, or when neither can be read:
    source "unavailable" and sme/sve None (unknown, not absent).
    """
    import subprocess
    import sys

    from conformance.portable import run_child

    features, source = None, "unavailable"
    try:
        if sys.platform.startswith("linux"):
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                features, source = matrix_features_from_cpuinfo(f.read()), "/proc/cpuinfo"
        elif sys.platform == "darwin":
            done = run_child(["sysctl", "hw.optional.arm"], capture_output=True, text=True, timeout=30)
            if done.returncode == 0:
                features, source = matrix_features_from_sysctl(done.stdout), "sysctl hw.optional.arm"
    except (OSError, subprocess.SubprocessError):
        features = None
    if features is None:
        return {"source": "unavailable", "features": [], "sme": None, "sve": None}
    return {
        "source": source,
        "features": features,
        "sme": any(f.lower().startswith(("sme", "feat_sme")) for f in features),
        "sve": any(f.lower().startswith(("sve", "feat_sve")) for f in features),
    }


def _jit_error_without_ynn_fusion():
    """The same program run in a fresh process with XLA's YNNPACK fusion turned off: `{"xla_flags", "jit_error"}`
    or `{"xla_flags", "failed"}` (a release whose XLA does not know the flag refuses to start)."""
    import json
    import subprocess

    from conformance.cases.helpers import run_script

    try:
        done = run_script(
            "closure_miscompile", env={"XLA_FLAGS": YNN_FUSION_OFF, "JAX_PLATFORMS": "cpu"}, timeout_s=240
        )
    except subprocess.TimeoutExpired:
        return {"xla_flags": YNN_FUSION_OFF, "failed": "timed out after 240 s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        try:
            return {"xla_flags": YNN_FUSION_OFF, "jit_error": json.loads(lines[-1])["jit_error"]}
        except (ValueError, KeyError, TypeError):
            pass
    tail = [line for line in done.stderr.strip().splitlines() if line.strip()][-3:]
    return {"xla_flags": YNN_FUSION_OFF, "failed": f"exit code {done.returncode}: " + " | ".join(tail)[-400:]}


# §2.1: values baked into the jaxpr


def _scaled(x):
    return x * SCALE


def _mul_operands(closed):
    """The two operands of the last `mul` equation of a closed jaxpr."""
    (*_, last) = [e for e in closed.jaxpr.eqns if e.primitive.name == "mul"]
    return last.invars


@SECTION.case(
    subsection="2.1",
    rows=["program.jaxpr.global_literal"],
    claim="A module-level float read by a traced function enters the jaxpr as a literal operand, not as an "
    "input variable.",
    expect=Expect(
        {"contains_literal_text": True, "input_variables": 1, "literal_operand": 2.0},
        printed={"jaxpr": "{ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }"},
    ),
    notes="Asserted: the substring `mul a 2.0:f32[]` (the chapter's assert), and the prose claim that the value "
    "is a literal operand rather than an input variable (read from the jaxpr's structure). Printed: the "
    "whole jaxpr text. The literal's `:f32[]` annotation is missing from the printed jaxpr of older "
    "versions (0.4.38 prints `mul a 2.0`), so the asserted substring really is absent there.",
    changes=[
        Change(
            since="0.6.1",
            why="From 0.6.1 the jaxpr printer annotates a literal with its type (`mul a 2.0:f32[]`), the substring "
            "the chapter asserts; 0.6.0 prints `mul a 2.0`.",
            evidence="measured (all run, linux-x86_64): contains_literal_text false in 0.6.0, true in 0.6.1",
        ),
    ],
)
def jaxpr_global_literal():
    import jax

    closed = jax.make_jaxpr(_scaled)(1.0)
    operand = _mul_operands(closed)[1]
    is_literal = type(operand).__name__ == "Literal"
    return Observation(
        {
            "contains_literal_text": "mul a 2.0:f32[]" in str(closed),
            "input_variables": len(closed.jaxpr.invars),
            "literal_operand": float(operand.val) if is_literal else None,
            "jaxpr": str(closed),
        },
        {"operand_type": type(operand).__name__},
    )


@SECTION.case(
    subsection="2.1",
    rows=["program.jit.stale_global"],
    claim="Rebinding the global after the jitted function compiled neither retraces nor recompiles nor raises: "
    "the old value keeps being used.",
    expect=Expect(
        {
            "before": 2.0,
            "after": 2.0,
            "traces": 1,
            "backend_compiles_after_rebinding": 0,
            "raised": None,
            "compile_counter_saw_control": True,
        }
    ),
    notes="Asserted: before == after == 2.0 with no exception (the chapter's assert), and its prose that "
    "nothing is retraced or recompiled (one trace; no backend compilation after the rebinding). "
    "Compilations are counted with helpers.CompileCounter; because 'no compilation' would also be seen "
    "by a dead listener, the same counter must see one deliberate fresh compilation (its control) "
    "after the second call.",
)
def jit_stale_global():
    import jax

    global SCALE
    traces = []

    def scaled(x):
        traces.append(1)
        return x * SCALE

    scaled_jit = jax.jit(scaled)
    before = float(scaled_jit(1.0))
    with CompileCounter() as counter:
        SCALE = 10.0
        try:
            after, raised = float(scaled_jit(1.0)), None
        except Exception as exc:  # noqa: BLE001 - an exception is the observation
            after, raised = None, type(exc).__name__
        finally:
            SCALE = 2.0
        compiles_after = counter.count
        control_seen = counter.control()
    return Observation(
        {
            "before": before,
            "after": after,
            "traces": len(traces),
            "backend_compiles_after_rebinding": compiles_after,
            "raised": raised,
            "compile_counter_saw_control": control_seen,
        },
        {"compiled_functions": counter.names},
    )


@SECTION.case(
    subsection="2.1",
    rows=["program.jaxpr.argument_variable"],
    claim="A value passed as an argument is an input variable of the jaxpr, and the jitted function uses each "
    "new value.",
    expect=Expect(
        {"input_variables": 2, "scale_is_input_variable": True, "with_2": 2.0, "with_10": 10.0},
        printed={"jaxpr": "{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }"},
    ),
    notes="Asserted: the two jitted results (the chapter's assert) and its prose that the scale is an input "
    "variable of the jaxpr (read from the structure: the second operand of mul is the second input). "
    "Printed: the jaxpr text `{ lambda ; a:f32[] b:f32[]. let c:f32[] = mul a b in (c,) }`.",
)
def jaxpr_argument_variable():
    import jax

    def scaled(x, scale):
        return x * scale

    closed = jax.make_jaxpr(scaled)(1.0, SCALE)
    scale_operand = _mul_operands(closed)[1]
    scaled_jit = jax.jit(scaled)
    return Observation(
        {
            "input_variables": len(closed.jaxpr.invars),
            "scale_is_input_variable": any(scale_operand is v for v in closed.jaxpr.invars[1:]),
            "with_2": float(scaled_jit(1.0, 2.0)),
            "with_10": float(scaled_jit(1.0, 10.0)),
            "jaxpr": str(closed),
        },
    )


# §2.2: jax.named_scope through the three representations


def scoped_mlp(params, x):
    """The chapter's two-layer network, each layer under its own named scope."""
    import jax
    import jax.numpy as jnp

    with jax.named_scope("encoder"):
        hidden = jax.nn.relu(x @ params["w1"])
    with jax.named_scope("head"):
        out = hidden @ params["w2"]
        loss = jnp.mean(out**2)
    return loss


def _scoped_inputs():
    import jax.numpy as jnp

    return {"w1": jnp.ones((4, 8)) * 0.1, "w2": jnp.ones((8, 2)) * 0.1}, jnp.ones((3, 4))


def _traced_scoped_mlp(inputs=None):
    """`jax.jit(scoped_mlp).trace(params, x)`, with the chapter's inputs unless given."""
    import jax

    jitted = jax.jit(scoped_mlp)
    if not hasattr(jitted, "trace"):
        raise Unsupported("jax.jit(f).trace")
    return jitted.trace(*(inputs or _scoped_inputs()))


def _scope_ops(hlo_text, scope):
    """(instruction, op_name) for every optimized-HLO instruction whose op_name passes through `/scope/`."""
    import re

    pattern = re.compile(r'%([\w.\-]+) = .*?op_name="([^"]*/' + re.escape(scope) + r'/[^"]*)"')
    return [list(m.groups()) for m in pattern.finditer(hlo_text)]


CHAPTER_ENCODER_INSTRUCTIONS = [
    ["dot_general.1", "jit(scoped_mlp)/encoder/dot_general"],
    ["broadcast.2", "jit(scoped_mlp)/encoder/jit(relu)"],
    ["max.2", "jit(scoped_mlp)/encoder/jit(relu)/max"],
    ["ynn_fusion.1", "jit(scoped_mlp)/encoder/dot_general"],
    ["broadcast_maximum_fusion", "jit(scoped_mlp)/encoder/jit(relu)/max"],
]


@SECTION.case(
    subsection="2.2",
    claim="jax.named_scope names reach each jaxpr equation's name stack, only the debug_info=True StableHLO text, "
    "and the op_name metadata of the optimized HLO; the compiled program still computes the right value.",
    params=[
        Param(
            "jaxpr",
            rows=["program.named_scope.jaxpr_name_stack"],
            expect=Expect(
                {"encoder_equations_at_least_2": True, "head_equations_at_least_3": True},
                printed={"name_stacks": ["encoder", "encoder", "head", "head", "head", "head"]},
            ),
        ),
        Param(
            "stablehlo_plain",
            rows=["program.named_scope.stablehlo_plain"],
            expect=Expect(
                {
                    "encoder_in_text": False,
                }
            ),
        ),
        Param(
            "stablehlo_debug_info",
            rows=["program.named_scope.stablehlo_debug_info"],
            expect=Expect(
                {"contains_encoder_dot_general_path": True},
                printed={
                    "first_encoder_locations": [
                        "jit(scoped_mlp)/encoder/dot_general",
                        "jit(scoped_mlp)/encoder/jit(relu)",
                    ]
                },
            ),
        ),
        Param(
            "hlo_op_name",
            rows=["program.named_scope.hlo_op_name"],
            expect=Expect(
                {"some_op_name_ends_with_encoder_dot_general": True},
                printed={"encoder_instructions": CHAPTER_ENCODER_INSTRUCTIONS},
            ),
        ),
        Param(
            "compiled_call",
            rows=["program.stages.compiled_callable"],
            expect=Expect(
                {
                    "matches_float64_reference": True,
                }
            ),
        ),
    ],
    notes="In the chapter all five views come from one traced/lowered/compiled scoped_mlp; each view is its own "
    "cell here. Asserted, as the chapter's four asserts: at least 2 equations with the name stack encoder "
    "and 3 with head; 'encoder' absent from the default StableHLO text; the path "
    "jit(scoped_mlp)/encoder/dot_general present in the debug_info=True text; some optimized-HLO op_name "
    "ending in encoder/dot_general; the compiled call close to a float64 reference. Printed only: the "
    "per-equation name stacks; the location names of the first two debug_info lines that mention "
    "encoder/ (their #loc numbers depend on the source locations of the whole program, the notebook "
    "printed #loc73/#loc74, so they are details); and the (instruction, op_name) pairs of the encoder's "
    "optimized HLO, whose instruction and fusion names (ynn_fusion, broadcast_maximum_fusion) belong to "
    "the CPU backend and platform. linux-x86_64 with 0.12.0.1 prints the chapter's exact list; 0.8.3 has "
    "no ynn_fusion, 0.4.38 inserts jit(main)/ after jit(scoped_mlp) in every op_name.",
    changes=[
        Change(
            since="0.5.0",
            params=("stablehlo_debug_info",),
            why="Lowered.as_text(debug_info=True) first exists in 0.5.0, and its locations then read "
            "jit(scoped_mlp)/jit(main)/encoder/..., not the chapter's jit(scoped_mlp)/encoder/dot_general.",
            evidence="CHANGELOG 0.5.0: The AOT lowering `.as_text()` method now supports the `debug_info` option; "
            "measured (all run, linux-x86_64): 0.6.2 locations jit(scoped_mlp)/jit(main)/encoder/pjit",
        ),
        Change(
            since="0.7.0",
            params=("stablehlo_debug_info",),
            why="From 0.7.0 the debug-info locations drop the inner jit(main)/, so the path "
            "jit(scoped_mlp)/encoder/dot_general appears as the chapter shows.",
            evidence="measured (all run, linux-x86_64): contains_encoder_dot_general_path false in 0.6.2 "
            "(jit(scoped_mlp)/jit(main)/encoder/pjit), true in 0.7.0",
        ),
    ],
)
def named_scope_views(view):
    import numpy as np

    traced = _traced_scoped_mlp()
    if view == "jaxpr":
        stacks = [str(e.source_info.name_stack) for e in traced.jaxpr.jaxpr.eqns]
        return Observation(
            {
                "encoder_equations_at_least_2": stacks.count("encoder") >= 2,
                "head_equations_at_least_3": stacks.count("head") >= 3,
                "name_stacks": stacks,
            },
        )
    lowered = traced.lower()
    if view == "stablehlo_plain":
        plain = lowered.as_text()
        return Observation({"encoder_in_text": "encoder" in plain}, {"head_in_text": "head" in plain})
    if view == "stablehlo_debug_info":
        import re

        require_keyword(lowered.as_text, "debug_info", "jax.stages.Lowered.as_text")
        text = lowered.as_text(debug_info=True)
        lines = [line.strip() for line in text.splitlines() if "encoder/" in line]
        names = [m.group(1) for m in (re.search(r'loc\("([^"]*)"', line) for line in lines[:2]) if m]
        return Observation(
            {
                "contains_encoder_dot_general_path": "jit(scoped_mlp)/encoder/dot_general" in text,
                "first_encoder_locations": names,
            },
            {"first_encoder_lines": lines[:2]},
        )
    compiled = lowered.compile()
    if view == "hlo_op_name":
        ops = _scope_ops(compiled.as_text(), "encoder")
        return Observation(
            {
                "some_op_name_ends_with_encoder_dot_general": any(op.endswith("encoder/dot_general") for _, op in ops),
                "encoder_instructions": ops,
            },
        )
    params, x = _scoped_inputs()
    value = float(compiled(params, x))
    as64 = {k: np.asarray(v, np.float64) for k, v in params.items()}
    reference = float(np.mean((np.maximum(np.asarray(x, np.float64) @ as64["w1"], 0) @ as64["w2"]) ** 2))
    return Observation(
        {"matches_float64_reference": bool(np.isclose(value, reference))}, {"compiled": value, "reference": reference}
    )


# §2.3: the stage objects


@SECTION.case(
    subsection="2.3",
    claim="jit(f).trace(...) gives a jax.stages.Traced, .lower() a Lowered and .compile() a Compiled; "
    "Traced.out_info describes the output without compiling, and Compiled.input_shardings mirrors the "
    "arguments' pytree.",
    params=[
        Param(
            "types",
            rows=["program.stages.types"],
            expect=Expect(
                {"isinstance_jax_stages": [True, True, True]},
                printed={"type_names": ["Traced", "Lowered", "Compiled"]},
            ),
        ),
        Param(
            "out_info",
            rows=["program.stages.out_info"],
            expect=Expect(
                {"shape": [], "dtype": "float32", "backend_compiles": 0, "compile_counter_saw_control": True},
                printed={"out_info": "ShapeDtypeStruct(shape=(), dtype=float32)"},
            ),
        ),
        Param(
            "input_shardings",
            rows=["program.stages.input_shardings_pytree"],
            expect=Expect(
                {},
                printed={"positional_entries": 2, "mirrors_argument_pytree": True, "params_keys": ["w1", "w2"]},
            ),
            label="printed-only row: the chapter prints sorted(input_shardings[0][0]) and asserts nothing",
        ),
    ],
    notes="Asserted, as the chapter's asserts: the three isinstance checks against jax.stages, and out_info's "
    "shape () and dtype float32; from its prose: out_info needs no compilation. input_shardings is a "
    "printed-only row (the chapter prints the keys and asserts nothing), so its facts are all printed: "
    "input_shardings[0] has one entry per positional argument, with the arguments' pytree structure, "
    "and the sorted keys of its [0]. Printed only, too: the three type names, the out_info repr "
    "`ShapeDtypeStruct(shape=(), dtype=float32)` (0.4.38 returns an OutInfo "
    "tuple instead). 'No compilation' is counted with helpers.CompileCounter, whose control (one deliberate "
    "fresh compilation, which must be seen) shows the listener is alive.",
)
def stage_objects(aspect):
    import jax

    stages = require("jax.stages")
    if aspect == "out_info":
        inputs = _scoped_inputs()  # building them compiles small programs of their own
        with CompileCounter() as counter:
            traced = _traced_scoped_mlp(inputs)
            info = traced.out_info
            compiles = counter.count
            control_seen = counter.control()
        return Observation(
            {
                "shape": list(info.shape),
                "dtype": str(info.dtype),
                "backend_compiles": compiles,
                "compile_counter_saw_control": control_seen,
                "out_info": repr(info),
            },
            {"type": type(info).__name__, "compiled_functions": counter.names},
        )
    traced = _traced_scoped_mlp()
    lowered = traced.lower()
    compiled = lowered.compile()
    if aspect == "types":
        objects = (traced, lowered, compiled)
        classes = (stages.Traced, stages.Lowered, stages.Compiled)
        return Observation(
            {
                "type_names": [type(o).__name__ for o in objects],
                "isinstance_jax_stages": [isinstance(o, c) for o, c in zip(objects, classes)],
            }
        )
    tree_structure = jax.tree_util.tree_structure
    shardings = compiled.input_shardings
    return Observation(
        {
            "positional_entries": len(shardings[0]),
            "mirrors_argument_pytree": tree_structure(tuple(shardings[0])) == tree_structure(tuple(_scoped_inputs())),
            "params_keys": sorted(shardings[0][0]),
        },
        {"input_shardings": repr(shardings), "jax": jax.__version__},
    )


def _require_attributes(stage, class_name, *names):
    """Raise `Unsupported("jax.stages.<class>.<name>")` for the first attribute the stage object lacks."""
    for name in names:
        if not hasattr(stage, name):
            raise Unsupported(f"jax.stages.{class_name}.{name}")


@SECTION.case(
    subsection="2.3",
    rows=["program.stages.attributes"],
    claim="The stage objects expose the debugging attributes the chapter lists: Traced.jaxpr/out_info/in_avals, "
    "Lowered.as_text(debug_info=...)/cost_analysis(), and Compiled.as_text()/memory_analysis()/"
    "cost_analysis()/input_shardings/output_shardings.",
    expect=Expect(
        {
            "traced_jaxpr_has_equations": True,
            "traced_in_avals_match_arguments": True,
            "lowered_debug_text_has_locations": True,
            "lowered_cost_analysis_has_flops": True,
            "compiled_text_is_hlo_module": True,
            "compiled_memory_analysis_has_temp_size": True,
            "compiled_cost_analysis_has_flops": True,
            "output_shardings_is_sharding": True,
        },
        printed={
            "traced_in_avals": "(({'w1': ShapedArray(float32[4,8]), 'w2': ShapedArray(float32[8,2])}, "
            "ShapedArray(float32[3,4])), {})",
        },
    ),
    notes="A prose table in the chapter, with no documented values; each asserted fact says that the attribute "
    "gives the kind of thing the table uses it for. A missing attribute (or the debug_info keyword) is "
    "unsupported, naming it. in_avals is asserted to hold the shape and dtype of every argument leaf, in "
    "the arguments' order. Its repr is only a mark (printed tier): the chapter prints none, so the "
    "expected text is the scoped_mlp arguments written as ShapedArray avals, and a change of aval "
    "spelling must not decide the row. Compiled.cost_analysis() is a dict on 0.12 (a list holding one "
    "dict on 0.4.38), so both count as having flops.",
    changes=[
        Change(
            since="0.5.0",
            why="Lowered.as_text(debug_info=...), one of the table's attributes, first exists in 0.5.0.",
            evidence="CHANGELOG 0.5.0: The AOT lowering `.as_text()` method now supports the `debug_info` option",
        ),
    ],
)
def stage_attributes():
    import jax

    traced = _traced_scoped_mlp()
    _require_attributes(traced, "Traced", "jaxpr", "out_info", "in_avals")
    lowered = traced.lower()
    _require_attributes(lowered, "Lowered", "as_text", "cost_analysis")
    require_keyword(lowered.as_text, "debug_info", "jax.stages.Lowered.as_text")
    compiled = lowered.compile()
    _require_attributes(
        compiled, "Compiled", "as_text", "memory_analysis", "cost_analysis", "input_shardings", "output_shardings"
    )

    def has_flops(analysis):
        entries = analysis if isinstance(analysis, (list, tuple)) else [analysis]
        return any(isinstance(e, dict) and "flops" in e for e in entries)

    def shapes_and_dtypes(tree):
        return [(list(leaf.shape), str(leaf.dtype)) for leaf in jax.tree_util.tree_leaves(tree)]

    lowered_cost, compiled_cost = lowered.cost_analysis(), compiled.cost_analysis()
    memory = compiled.memory_analysis()
    return Observation(
        {
            "traced_jaxpr_has_equations": len(traced.jaxpr.eqns) > 0,
            "traced_in_avals_match_arguments": shapes_and_dtypes(traced.in_avals)
            == shapes_and_dtypes(_scoped_inputs()),
            "traced_in_avals": str(traced.in_avals),
            "lowered_debug_text_has_locations": "loc(" in lowered.as_text(debug_info=True),
            "lowered_cost_analysis_has_flops": has_flops(lowered_cost),
            "compiled_text_is_hlo_module": compiled.as_text().startswith("HloModule"),
            "compiled_memory_analysis_has_temp_size": hasattr(memory, "temp_size_in_bytes"),
            "compiled_cost_analysis_has_flops": has_flops(compiled_cost),
            "output_shardings_is_sharding": isinstance(compiled.output_shardings, jax.sharding.Sharding),
        },
        {
            "jaxpr_type": type(traced.jaxpr).__name__,
            "compiled_cost_analysis_type": type(compiled_cost).__name__,
            "temp_size_in_bytes": getattr(memory, "temp_size_in_bytes", None),
            "output_shardings": repr(compiled.output_shardings),
        },
    )
