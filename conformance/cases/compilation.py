"""§5 of the chapter: compile logs, cache-miss explanations, cache sizes, compile counts, the stages API
and implicit transfers."""

import logging
import os
import re
import sys
import tempfile

from conformance.cases.helpers import CompileCounter, LogCapture, first_line, require
from conformance.core.case import Expect, Observation, Param, Section, Unsupported

SECTION = Section("§5", "Compilation and speed")

# A compile log line that names the compiled function and its argument types (0.5 and later spell it
# `jit(<name>)` and a tuple; 0.4.x spelled it `<name>` and a list).
COMPILING_LINE = re.compile(r"Compiling (jit\(.+?\)) with global shapes and types (.+?)\. Argument")
# The last compile message of each compilation, naming the function (the same in every version here).
XLA_COMPILATION_LINE = re.compile(r"Finished XLA compilation of (jit\(.+?\)) in")
# The first two words of the four documented compile messages.
COMPILE_MESSAGE_KINDS = ["Finished tracing", "Compiling jit(mlp_step)", "Finished jaxpr", "Finished XLA"]


def _compile_log_run():
    """The chapter's §5.1 scenario: clear caches, then log an eager op and three calls (8, 8, 16 rows)."""
    import jax
    import jax.numpy as jnp

    def mlp_step(w, x):
        return jnp.tanh(x @ w).sum()

    mlp_step = jax.jit(mlp_step)
    jax.clear_caches()
    with LogCapture("jax", logging.WARNING) as logs, jax.log_compiles():
        w = jnp.ones((64, 64))
        mlp_step(w, jnp.ones((8, 64)))
        before_repeat = len(logs.records)
        mlp_step(w, jnp.ones((8, 64)))
        repeat_messages = logs.messages[before_repeat:]
        mlp_step(w, jnp.ones((16, 64)))
    return logs, repeat_messages


@SECTION.case(
    subsection="5.1",
    claim="Inside jax.log_compiles() every real compilation, including the small ones eager jnp calls make "
          "after clear_caches(), logs four WARNING messages that name the function and its argument shapes; "
          "a cache hit logs nothing.",
    params=[
        Param("four_lines", rows=["compile.log_compiles.four_lines"], expect=Expect({
            "missing_message_kinds": [],
            "messages_per_compilation": 4,
        })),
        Param("shapes_and_cache_hit", rows=["compile.log_compiles.shapes_and_cache_hit"], expect=Expect({
            "mlp_step_compiles": 2,
            "first_mlp_step_args": "(ShapedArray(float32[64,64]), ShapedArray(float32[8,64]))",
            "second_mlp_step_args_have_16x64": True,
            "messages_from_repeated_call": 0,
        })),
        Param("eager_ops", rows=["compile.log_compiles.eager_ops"], expect=Expect({
            "other_functions_compiled": True,
            "broadcast_in_dim_compiled": True,
        })),
    ],
    notes="Messages are captured at WARNING on the `jax` logger, as the chapter does, so a message JAX "
          "demoted below WARNING would go missing from the kinds. Compiled functions are named from the "
          "`Finished XLA compilation of jit(<name>)` lines, argument shapes from the `Compiling jit(<name>) "
          "with global shapes and types (...)` lines. 0.4.x wrote the latter as `Compiling mlp_step with "
          "global shapes and types [...]` (no jit(), a list), so no mlp_step shapes are found there. Before "
          "0.10, tracing also logged one `Finished tracing + transforming` line for each jitted jnp function "
          "called inside (matmul, tanh, _reduce_sum), so there are more than four messages per compilation. "
          "The chapter's printed compile order (convert_element_type, broadcast_in_dim x2, mlp_step, "
          "broadcast_in_dim, mlp_step) and the timings are details.",
)
def log_compiles(aspect):
    require("jax.log_compiles")
    logs, repeat_messages = _compile_log_run()
    messages = logs.messages
    compiled = [m.groups() for m in map(COMPILING_LINE.search, messages) if m]
    mlp_step_args = [args for name, args in compiled if name == "jit(mlp_step)"]
    xla_compiled = [m.group(1) for m in map(XLA_COMPILATION_LINE.search, messages) if m]
    details = {"compile_order": xla_compiled, "messages": [m[:160] for m in messages],
               "levels": sorted({r.levelname for r in logs.records})}
    if aspect == "four_lines":
        kinds = {" ".join(m.split(" ")[:2]) for m in messages}
        per_compilation = round(len(messages) / len(xla_compiled), 2) if xla_compiled else None
        return Observation({
            "missing_message_kinds": [k for k in COMPILE_MESSAGE_KINDS if k not in kinds],
            "messages_per_compilation": per_compilation,
        }, {**details, "message_kinds": sorted(kinds)})
    if aspect == "shapes_and_cache_hit":
        return Observation({
            "mlp_step_compiles": len(mlp_step_args),
            "first_mlp_step_args": mlp_step_args[0] if mlp_step_args else None,
            "second_mlp_step_args_have_16x64": len(mlp_step_args) > 1 and "float32[16,64]" in mlp_step_args[1],
            "messages_from_repeated_call": len(repeat_messages),
        }, {**details, "mlp_step_args": mlp_step_args, "repeated_call_messages": repeat_messages})
    others = [name for name in xla_compiled if name != "jit(mlp_step)"]
    return Observation({
        "other_functions_compiled": bool(others),
        "broadcast_in_dim_compiled": "jit(broadcast_in_dim)" in others,
    }, details)


def _miss_body(message):
    """The explanation lines of one cache-miss message: without its header, `for <f> defined at` line and
    `all previously seen cache keys ...` line."""
    lines = [line.strip() for line in message.splitlines()[1:]]
    return [line for line in lines if line and not line.startswith(("for ", "all previously"))]


@SECTION.case(
    subsection="5.2",
    claim="Inside jax.explain_cache_misses() every cache miss logs one CACHE MISS message: a new function "
          "is 'never seen', a changed dtype or pytree is explained per argument, and a changed static "
          "argument value gets no specific reason.",
    params=[
        Param("never_seen", rows=["compile.explain_cache_misses.never_seen"], expect=Expect({
            "cache_miss_messages": 3,
            "first_says_never_seen_function": True,
            "first_names_function_id_and_place": True,
        })),
        Param("static_value", rows=["compile.explain_cache_misses.static_value"], expect=Expect({
            "says_explanation_unavailable": True,
            "explanation": ["cache miss explanation unavailable"],
        })),
        Param("input_types", rows=["compile.explain_cache_misses.input_types"], expect=Expect({
            "says_different_input_types": True,
            "names_w_from_f32_to_i32": True,
        })),
        Param("pytree", rows=["compile.explain_cache_misses.pytree"], expect=Expect({
            "cache_miss_messages": 1,
            "says_different_input_pytree": True,
        })),
    ],
    notes="The wording changed several times; the observed messages are details. For the static value, "
          "measured here: 0.4.38 and 0.5.3 say `explanation unavailable! please open an issue ...`; 0.6 to 0.8 "
          "explain it (`key with different value of static kwargs: now {step: 1} and before {step: 0}`); 0.9 "
          "and 0.10 call it a `different input pytree` whose `Static(val=...)` metadata changed; 0.11 and "
          "0.12 give only `cache miss explanation unavailable`, as the chapter documents. 0.4.x also "
          "explains a dtype change as `never seen input type signature`, a pytree change as `never seen "
          "passing 1 positional args ...`, and logs a miss for the eager astype (4 messages). The function "
          "is defined inside the probe, so 0.4.x names it by its qualified name "
          "(`explain_cache_misses.<locals>.decay_step`); the chapter's was at top level, where both names "
          "agree, so a qualifying prefix is accepted.",
)
def explain_cache_misses(situation):
    import functools

    import jax
    import jax.numpy as jnp

    require("jax.explain_cache_misses")

    @functools.partial(jax.jit, static_argnames=("step",))
    def decay_step(w, x, step):
        return w - 0.1 * 0.99 ** step * x

    @jax.jit
    def leaf_total(tree):
        return sum(jnp.sum(leaf) for leaf in jax.tree_util.tree_leaves(tree))

    w, x = jnp.ones(3), jnp.ones(3)
    calls = {
        "never_seen": lambda: decay_step(w, x, step=0),
        "static_value": lambda: decay_step(w, x, step=1),
        "input_types": lambda: decay_step(w.astype(jnp.int32), x, step=1),
        "pytree_first": lambda: leaf_total({"a": w}),
        "pytree": lambda: leaf_total({"a": w, "b": x}),
    }
    misses = {}
    with LogCapture("jax", logging.WARNING) as logs, jax.explain_cache_misses():
        for name, call in calls.items():
            before = len(logs.records)
            call()
            misses[name] = [m for m in logs.messages[before:] if "CACHE MISS" in m]
    mine = misses[situation]
    text = "\n".join(mine)
    details = {"messages": mine}
    if situation == "never_seen":
        decay_misses = misses["never_seen"] + misses["static_value"] + misses["input_types"]
        first = decay_misses[0] if decay_misses else ""
        return Observation({
            "cache_miss_messages": len(decay_misses),
            "first_says_never_seen_function": "never seen function:" in first,
            "first_names_function_id_and_place": bool(
                re.search(r"never seen function:\s+(\S+\.)?decay_step id=\d+ defined at \S+:\d+", first)),
        }, {"messages": decay_misses})
    if situation == "static_value":
        return Observation({
            "says_explanation_unavailable": "explanation unavailable" in text,
            "explanation": [line for m in mine for line in _miss_body(m)],
        }, details)
    if situation == "input_types":
        return Observation({
            "says_different_input_types": "different input types" in text,
            "names_w_from_f32_to_i32": "at w, now i32[3] and before f32[3]" in text,
        }, details)
    return Observation({
        "cache_miss_messages": len(mine),
        "says_different_input_pytree": "different input pytree" in text,
    }, details)


@SECTION.case(
    subsection="5.3",
    rows=["compile.cache_size.count", "compile.cache_size.shared",
          "compile.cache_size.shared_across_options", "compile.cache_size.clear"],
    claim="jit(f)._cache_size() counts the compiled signatures of the underlying function f, so every jit "
          "wrapper of f, whatever its options, reports the same count, and clear_caches() resets it.",
    expect=Expect({
        "new_wrapper": 0,
        "after_two_signatures": 2,
        "second_wrapper_before_any_call": 2,
        "first_wrapper_after_second_compiles": 3,
        "wrapper_with_inline_option": 3,
        "after_clear_caches": 0,
    }),
    notes="The chapter's full sequence is [0, 2, 2, 3, 3, 0]. _cache_size is private API.",
)
def cache_size_shared():
    import jax
    import jax.numpy as jnp

    def double(x):
        return x * 2

    first = jax.jit(double)
    if not hasattr(first, "_cache_size"):
        raise Unsupported("jit wrappers have no _cache_size()")
    sizes = {"new_wrapper": first._cache_size()}
    first(1.0)
    first(2.0)
    first(jnp.ones(3))
    sizes["after_two_signatures"] = first._cache_size()
    second = jax.jit(double)
    sizes["second_wrapper_before_any_call"] = second._cache_size()
    second(jnp.ones(4))
    sizes["first_wrapper_after_second_compiles"] = first._cache_size()
    sizes["wrapper_with_inline_option"] = jax.jit(double, inline=True)._cache_size()
    jax.clear_caches()
    sizes["after_clear_caches"] = first._cache_size()
    return Observation(sizes)


@SECTION.case(
    subsection="5.4",
    rows=["compile.counter.backend_events"],
    claim="Counting jax.monitoring backend-compile events whose fun_name is jit(mlp_step) gives one compile "
          "per new input shape after clear_caches(): five calls with 8, 8, 16, 16 and 8 rows compile twice.",
    expect=Expect({"mlp_step_compiles": 2}),
    notes="CompileCounter needs jax.monitoring.unregister_event_duration_listener, which appeared in 0.8; "
          "older versions are unsupported. As in the chapter, both shapes were compiled before "
          "clear_caches(), so the two counted compiles also show that clear_caches() emptied the cache.",
)
def compile_counter():
    import jax
    import jax.numpy as jnp

    def mlp_step(w, x):
        return jnp.tanh(x @ w).sum()

    mlp_step = jax.jit(mlp_step)
    w = jnp.ones((64, 64))
    for rows in (8, 16):
        mlp_step(w, jnp.ones((rows, 64))).block_until_ready()
    jax.clear_caches()
    with CompileCounter() as counter:
        for rows in [8, 8, 16, 16, 8]:
            mlp_step(w, jnp.ones((rows, 64))).block_until_ready()
    return Observation({"mlp_step_compiles": counter.names.count("jit(mlp_step)")},
                       {"compiled_fun_names": counter.names})


@SECTION.case(
    subsection="5.5",
    rows=["compile.stages.aot_split"],
    claim="jit(f).trace(), .lower() and .compile() run one at a time, and the resulting Compiled takes the "
          "same pytree of 40 weight matrices and returns the float64 reference value.",
    expect=Expect({
        "stage_classes": ["Traced", "Lowered", "Compiled"],
        "compiled_call": "matches_reference",
    }),
    notes="The chapter's timings (trace 2.2 ms, lower 1.5 ms, compile 28.3 ms, ...) are not asserted. The "
          "weights come from jax.random.key(5), so the reference value itself depends on the PRNG (0.4.x, "
          "before jax_threefry_partitionable became the default, draws other weights); only the agreement "
          "with a float64 NumPy recomputation (rtol 1e-4) is compared.",
)
def stages_aot_split():
    import jax
    import jax.numpy as jnp
    import numpy as np

    def deep(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return x.sum()

    jitted = jax.jit(deep)
    if not hasattr(jitted, "trace"):
        raise Unsupported("jax.jit(f).trace")
    weights = [jax.random.normal(k, (32, 32)) / 6.0 for k in jax.random.split(jax.random.key(5), 40)]
    x = jnp.ones((8, 32))
    traced = jitted.trace(weights, x)
    lowered = traced.lower()
    compiled = lowered.compile()
    reference = np.asarray(x, np.float64)
    for w in weights:
        reference = np.tanh(reference @ np.asarray(w, np.float64))
    try:
        value = float(compiled(weights, x))
        verdict = "matches_reference" if np.isclose(value, reference.sum(), rtol=1e-4) else "wrong_value"
    except Exception as exc:  # noqa: BLE001 - a rejected call is the observation
        value, verdict = repr(exc)[:200], f"raised:{type(exc).__name__}"
    return Observation({
        "stage_classes": [type(stage).__name__ for stage in (traced, lowered, compiled)],
        "compiled_call": verdict,
    }, {"value": value, "reference": float(reference.sum()),
        "prng_impl": str(getattr(jax.config, "jax_default_prng_impl", None))})


def _guard_verdict(attempt, direction, raised):
    """`allowed`, `blocked` when the transfer guard refused a `direction` transfer (its own message says
    `Disallowed <direction> transfer`), or `raised:<Class>` for any other exception; records what raised."""
    import jax

    try:
        jax.block_until_ready(attempt())
        return "allowed"
    except Exception as exc:  # noqa: BLE001 - the exception is the observation
        raised.append(f"{type(exc).__name__}: {first_line(exc)[:200]}")
        return "blocked" if f"Disallowed {direction} transfer" in str(exc) else f"raised:{type(exc).__name__}"


@SECTION.case(
    subsection="5.5",
    rows=["compile.transfer_guard.cpu", "compile.transfer_guard.host_to_device_blocked",
          "compile.transfer_guard.explicit_allowed"],
    claim='Under transfer_guard("disallow") implicit host-to-device transfers of jit arguments raise, while '
          "device arrays, explicit device_put and, on the CPU backend, float(result) are allowed.",
    expect=Expect(
        {
            "device_array_argument": "allowed",
            "numpy_array_argument": "blocked",
            "python_scalar_argument": "blocked",
            "explicit_device_put": "allowed",
            "float_of_result": "allowed",
        },
        platforms={"*-cuda": {
            "device_array_argument": "allowed",
            "numpy_array_argument": "blocked",
            "python_scalar_argument": "blocked",
            "explicit_device_put": "allowed",
            "float_of_result": "blocked",
        }},
    ),
    notes="A call counts as blocked only when the guard itself refused it: the exception's message says "
          "`Disallowed host-to-device transfer` (`Disallowed device-to-host transfer` for float(result)); "
          "any other exception is recorded as raised:<Class>. The chapter saw JaxRuntimeError; the class was "
          "XlaRuntimeError before 0.8, so the class name is a detail. float(result) being blocked on GPU is "
          "the documentation's claim, which the chapter could not check.",
)
def transfer_guard_disallow():
    import jax
    import jax.numpy as jnp
    import numpy as np

    double = jax.jit(lambda x: x * 2)
    on_device = jnp.ones(3)
    double(on_device).block_until_ready()
    attempts = {
        "device_array_argument": (lambda: double(on_device), "host-to-device"),
        "numpy_array_argument": (lambda: double(np.ones(3, np.float32)), "host-to-device"),
        "python_scalar_argument": (lambda: double(1.0), "host-to-device"),
        "explicit_device_put": (lambda: double(jax.device_put(np.ones(3, np.float32))), "host-to-device"),
        "float_of_result": (lambda: float(double(on_device).sum()), "device-to-host"),
    }
    verdicts, raised = {}, {}
    with jax.transfer_guard("disallow"):
        for name, (attempt, direction) in attempts.items():
            seen = []
            verdicts[name] = _guard_verdict(attempt, direction, seen)
            if seen:
                raised[name] = seen[0]
    return Observation(verdicts, {"raised": raised})


def _with_stderr_captured(call):
    """Run `call()` with file descriptor 2 sent to a temporary file (JAX's C++ logging writes there);
    return its result and the text written."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            result = call()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return result, sink.read().decode(errors="replace")


@SECTION.case(
    subsection="5.5",
    rows=["compile.transfer_guard.levels"],
    claim='transfer_guard has three levels: "disallow" raises on an implicit transfer, "log" lets it happen '
          'and only logs it, and "allow", which is also what happens with no guard, lets it happen silently.',
    expect=Expect({
        "disallow": "blocked",
        "log": "allowed",
        "allow": "allowed",
        "no_guard": "allowed",
        "log_writes_transfer_message": True,
        "allow_writes_transfer_message": False,
        "no_guard_writes_transfer_message": False,
    }),
    notes='The "log" level writes through JAX\'s C++ logging to the process\'s stderr (a `guard_lib.cc` '
          "warning line `host-to-device transfer: aval=...`), not through Python's logging, so the probe "
          "reads file descriptor 2. The prose is checked with a NumPy argument to a jit function.",
)
def transfer_guard_levels():
    import contextlib

    import jax
    import jax.numpy as jnp
    import numpy as np

    double = jax.jit(lambda x: x * 2)
    double(jnp.ones(3)).block_until_ready()
    levels = {"disallow": lambda: jax.transfer_guard("disallow"), "log": lambda: jax.transfer_guard("log"),
              "allow": lambda: jax.transfer_guard("allow"), "no_guard": contextlib.nullcontext}
    facts, details = {}, {}

    def guarded(level):
        seen = []
        with levels[level]():
            verdict = _guard_verdict(lambda: double(np.ones(3, np.float32)), "host-to-device", seen)
        return verdict, seen

    for level in levels:
        (facts[level], seen), stderr = _with_stderr_captured(lambda: guarded(level))
        if level != "disallow":
            facts[f"{level}_writes_transfer_message"] = "host-to-device transfer" in stderr
        details[level] = {"raised": seen, "stderr": stderr[-400:]}
    return Observation(facts, details)
