"""§0 of the chapter: the reference environment and the mechanisms its common setup relies on.

The chapter's setup cell prints the JAX version, backend and devices, imports `jax.test_util` explicitly,
and builds its measuring helpers on three mechanisms: `jax.debug.print` writing through `sys.stdout`,
JAX's log records flowing through the `jax` logger, and the backend-compile event of `jax.monitoring`.
"""

from conformance.core.case import Change, Expect, Observation, Param, Section, Skip
from conformance.cases.helpers import BACKEND_COMPILE_EVENT, require

SECTION = Section("§0", "Setup and known issues")


@SECTION.case(
    subsection="0",
    rows=["setup.environment"],
    claim="A plain process without XLA_FLAGS runs on the CPU backend, and its devices are CPU devices.",
    expect=Expect(
        {"default_backend": "cpu", "every_device_is_cpu": True},
        printed={"devices": "[CpuDevice(id=0)]", "device_count": 1},
        platforms={
            pattern: Skip("the chapter documents a CPU-only machine; an accelerator becomes the default backend here")
            for pattern in ("*-cuda", "*-rocm", "*-tpu")
        },
    ),
    notes="The chapter prints `JAX 0.12.0.1 | backend cpu | devices [CpuDevice(id=0)]` and says the machine is "
    "CPU only with no XLA_FLAGS (the runner strips JAX_* and XLA_FLAGS like the chapter's run_py). "
    "Asserted: the default backend is cpu and every device (at least one) is on the cpu platform; the "
    "chapter claims 'CPU', not how many devices a machine shows. Printed: the device list's repr and "
    "the device count (1 in the chapter). The version string is the identity of the environment under test, "
    "already "
    "shown in the report's version column; comparing it would make every other version differ without "
    "saying anything about behaviour, so it is a detail, with jaxlib's version and the devices' str() "
    "(`cpu:0` on 0.12, `TFRT_CPU_0` before).",
)
def environment():
    import jax
    import jaxlib

    devices = jax.devices()
    return Observation(
        {
            "default_backend": jax.default_backend(),
            "every_device_is_cpu": bool(devices) and all(d.platform == "cpu" for d in devices),
            "devices": repr(devices),
            "device_count": len(devices),
        },
        {
            "jax": jax.__version__,
            "jaxlib": getattr(jaxlib, "__version__", None),
            "device_platforms": [d.platform for d in devices],
            "device_str": [str(d) for d in devices],
        },
    )


@SECTION.case(
    subsection="0",
    rows=["setup.test_util_explicit_import"],
    claim="jax.test_util is not an attribute of jax after a bare `import jax`; once imported explicitly, "
    "check_grads can be imported from it.",
    expect=Expect({"attribute_after_bare_import": "AttributeError", "check_grads_after_explicit_import": True}),
)
def explicit_test_util_import():
    import sys

    import jax

    already_loaded = "jax.test_util" in sys.modules
    try:
        jax.test_util  # noqa: B018 - touching the attribute is the observation
        bare, message = "allowed", ""
    except AttributeError as exc:
        bare, message = "AttributeError", str(exc)
    import jax.test_util  # noqa: F401
    from jax.test_util import check_grads

    return Observation(
        {"attribute_after_bare_import": bare, "check_grads_after_explicit_import": callable(check_grads)},
        {"message": message, "submodule_loaded_before_probe": already_loaded},
    )


@SECTION.case(
    subsection="0",
    rows=["setup.debug_print_to_sys_stdout"],
    claim="jax.debug.print writes through Python's sys.stdout, so redirecting sys.stdout captures its lines once "
    "the result is blocked on and effects_barrier() has flushed the callbacks.",
    expect=Expect({"captured_jit": ["value = 3.0"], "captured_vmap": ["value = 1.0", "value = 2.0"]}),
    notes="Under vmap the order of the per-example lines is not promised by JAX, so the lines are sorted.",
)
def debug_print_to_sys_stdout():
    import contextlib
    import io

    import jax
    import jax.numpy as jnp

    def show(x):
        jax.debug.print("value = {}", x)
        return x

    def captured(call):
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            jax.block_until_ready(call())
            jax.effects_barrier()
        return buffer.getvalue().splitlines()

    return Observation(
        {
            "captured_jit": captured(lambda: jax.jit(show)(jnp.float32(3.0))),
            "captured_vmap": sorted(captured(lambda: jax.vmap(show)(jnp.array([2.0, 1.0])))),
        }
    )


@SECTION.case(
    subsection="0",
    claim="Compile logs, cache-miss explanations and jax.debug.log records all reach a handler attached to the "
    "`jax` logger with propagate=False, as plain record.getMessage() strings.",
    params=[
        Param(
            "compile_logs",
            rows=["setup.jax_logger_hierarchy"],
            expect=Expect(
                {
                    "compile_log": True,
                    "cache_miss_explanation": True,
                }
            ),
            label="compile logs and cache-miss explanations",
        ),
        Param(
            "debug_log",
            rows=["setup.jax_logger_hierarchy"],
            expect=Expect(
                {
                    "debug_log_message": "logged 3.0",
                }
            ),
            label="jax.debug.log records",
        ),
    ],
    notes="Like the chapter's capture helper, the probe only adds a handler and turns propagation off; it leaves "
    "the logger's level alone. Compile logs come from `with jax.log_compiles()`; cache-miss explanations "
    "are switched on by the option's name, jax.config.update('jax_explain_cache_misses', True), the name "
    "the chapter uses, so a renamed option fails here (restored afterwards). All three facts are "
    "asserted (the chapter relies on them in §1.1, §5 and §9); which jax._src module emits each record "
    "is a detail. jax.debug.log's record is a parameter of its own because only it needs jax.debug.log "
    "(0.8 and later): older releases still report the compile logs and explanations.",
    changes=[
        Change(
            since="0.8.1",
            params=("debug_log",),
            why="jax.debug.log, which the case logs through, first exists in 0.8.1; before it the case is unsupported.",
            evidence="measured (all run, linux-x86_64): 0.8.0 has no jax.debug.log (unsupported), 0.8.1 conforms",
        ),
    ],
)
def jax_logger_hierarchy(source):
    import logging

    import jax
    import jax.numpy as jnp

    log_to_jax = require("jax.debug.log") if source == "debug_log" else None
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("jax")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        if source == "compile_logs":

            def shifted(x):
                return x - 1

            shifted_jit = jax.jit(shifted)
            with jax.log_compiles():
                shifted_jit(1.0)
            explain_saved = jax.config.jax_explain_cache_misses
            jax.config.update("jax_explain_cache_misses", True)
            try:
                shifted_jit(jnp.ones(2))
            finally:
                jax.config.update("jax_explain_cache_misses", explain_saved)
        else:

            def logged(x):
                log_to_jax("logged {x}", x=x)
                return x

            jax.block_until_ready(jax.jit(logged)(jnp.float32(3.0)))
            jax.effects_barrier()
    finally:
        logger.removeHandler(handler)
        logger.propagate = True

    messages = [r.getMessage() for r in records]
    facts = {
        "compile_logs": lambda: {
            "compile_log": any(m.startswith("Compiling") and "shifted" in m for m in messages),
            "cache_miss_explanation": any(m.startswith("TRACING CACHE MISS") and "shifted" in m for m in messages),
        },
        "debug_log": lambda: {"debug_log_message": next((m for m in messages if m.startswith("logged")), None)},
    }[source]()
    return Observation(facts, {"records": [[r.name, r.levelname, r.getMessage()[:160]] for r in records]})


@SECTION.case(
    subsection="0",
    rows=["setup.compile_monitoring_event"],
    claim="jax.monitoring reports each XLA backend compilation as one backend_compile_duration event whose "
    "fun_name is jit(<function name>); unregister_event_duration_listener removes the listener again.",
    expect=Expect(
        {
            "backend_compile_fun_names": ["jit(affine)", "jit(affine)"],
            "events_after_unregister": 0,
            "control_saw_compile_after_unregister": True,
        }
    ),
    notes="The probe compiles one function for two shapes and calls it a third time with a cached shape, so two "
    "events are expected. It registers and unregisters the same bound-method object, as the chapter's "
    "CompileCounter does, then compiles once more for a new shape: the removed listener must see no "
    "event while a second listener, still registered, must see that compile (the positive control that "
    "a compile really happened). Versions without jax.monitoring.unregister_event_duration_listener are "
    "unsupported (0.4.38 also passes no fun_name keyword).",
    changes=[
        Change(
            since="0.8.1",
            why="jax.monitoring.unregister_event_duration_listener, which the chapter's CompileCounter calls, "
            "first exists in 0.8.1.",
            evidence="measured (all run, linux-x86_64): 0.8.0 has no unregister_event_duration_listener "
            "(unsupported), 0.8.1 conforms",
        ),
    ],
)
def compile_monitoring_event():
    import jax
    import jax.numpy as jnp

    register = require("jax.monitoring.register_event_duration_secs_listener")
    unregister = require("jax.monitoring.unregister_event_duration_listener")

    class Listener:
        def __init__(self):
            self.fun_names = []

        def on_event(self, event, duration, **kwargs):
            if event == BACKEND_COMPILE_EVENT:
                self.fun_names.append(kwargs.get("fun_name"))

    def affine(x):
        return 2 * x + 1

    affine_jit = jax.jit(affine)
    vector, matrix = jnp.ones(3), jnp.ones((2, 2))  # made before listening, so their own compiles are not seen
    fresh_argument = jnp.ones(5)
    listener, control = Listener(), Listener()
    callback = listener.on_event  # the same bound-method object for both calls
    register(callback)
    for argument in (vector, matrix, vector):
        jax.block_until_ready(affine_jit(argument))
    unregister(callback)
    seen = list(listener.fun_names)
    control_callback = control.on_event
    register(control_callback)
    jax.block_until_ready(affine_jit(fresh_argument))
    unregister(control_callback)
    return Observation(
        {
            "backend_compile_fun_names": seen,
            "events_after_unregister": len(listener.fun_names) - len(seen),
            "control_saw_compile_after_unregister": control.fun_names == ["jit(affine)"],
        },
        {"control_fun_names": control.fun_names},
    )
