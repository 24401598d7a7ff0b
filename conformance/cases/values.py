"""§1 of the chapter: seeing runtime values inside compiled code (debug.print, debug.log, debug.callback,
debug.breakpoint with its jdb debugger, and disable_jit)."""

from conformance.core.case import Change, Expect, Observation, Param, Section, Unsupported
from conformance.cases.helpers import outcome_of, printed_lines, require

SECTION = Section("§1", "Seeing values")

FORMAT_LINE = "mean=2.500  max=4.50  size=3"
FORMAT_FIELDS = ("mean=2.500", "max=4.50", "size=3")
POSITIONAL_LINE = "positional: first=1.0 last=4.5"


def _has_two_call_form(api, first_parameter: str) -> bool:
    """Whether `api(ordered=True)` (options only, no callee) is the two-call form: its first parameter is optional."""
    import inspect

    parameter = inspect.signature(api).parameters.get(first_parameter)
    return parameter is not None and parameter.default is not inspect.Parameter.empty


def _require_two_call_form(api, first_parameter: str, name: str) -> None:
    """Raise `Unsupported` unless `api(ordered=True)` (options only, no callee) is the two-call form."""
    if not _has_two_call_form(api, first_parameter):
        raise Unsupported(f"{name}(ordered=True) two-call form")


class _ChapterLogCapture:
    """The chapter's log capture: a handler on the 'jax' logger, propagation off, the level left alone."""

    def __enter__(self):
        import logging

        self.records = []
        self.handler = logging.Handler()
        self.handler.emit = self.records.append
        self.logger = logging.getLogger("jax")
        self.saved_propagate = self.logger.propagate
        self.logger.addHandler(self.handler)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc_info):
        self.logger.removeHandler(self.handler)
        self.logger.propagate = self.saved_propagate


def _nan_safe(values) -> list:
    """A list of floats with NaN written as the string "nan" (plain JSON)."""
    return ["nan" if v != v else v for v in values]


# §1.1 jax.debug.print ---------------------------------------------------------------------------------------


@SECTION.case(
    subsection="1.1",
    claim="debug.print formats on the host with str.format: keyword placeholders take format specs and a "
    "Python int works, positional placeholders fill in order, and prints without ordered=True carry no "
    "ordering (their effect is unordered, while ordered=True makes it an ordered one).",
    params=[
        Param(
            "format_spec",
            rows=["values.debug_print.format_spec"],
            expect=Expect({"keyword_fields": list(FORMAT_FIELDS)}, printed={"keyword_line": FORMAT_LINE}),
        ),
        Param(
            "positional", rows=["values.debug_print.positional"], expect=Expect({"positional_line": POSITIONAL_LINE})
        ),
        Param(
            "default_unordered",
            rows=["values.debug_print.default_unordered"],
            expect=Expect(
                {"default_effects_ordered": [False], "ordered_effects_ordered": [True]},
                printed={"lines_in_printed_order": [POSITIONAL_LINE, FORMAT_LINE]},
            ),
        ),
    ],
    notes="Asserted: the three keyword fields appear in the output (the chapter checks each one as a "
    "substring) and the positional line appears whole. Printed: the exact keyword line. "
    "default_unordered: the order of two unordered prints is not promised, so what is compared is what "
    "the claim rests on: the jaxpr of the two prints carries one debug effect that JAX does not count "
    "as ordered, and the same prints with ordered=True carry one that it does (membership in "
    "jax._src.effects.ordered_effects; the effects' names are details). The order the lines came out in "
    "is the printed tier: the chapter saw the positional line first; 0.4.38 prints them in program "
    "order.",
)
def stats_prints(part):
    import jax
    import jax.numpy as jnp
    from jax._src import effects

    def summarise_with(ordered):
        options = {"ordered": True} if ordered else {}  # the unordered prints are spelled as in the chapter

        def summarise(x):
            jax.debug.print("mean={m:.3f}  max={mx:.2f}  size={n}", m=x.mean(), mx=x.max(), n=x.size, **options)
            jax.debug.print("positional: first={} last={}", x[0], x[-1], **options)
            return x * 2

        return summarise

    data = jnp.array([1.0, 2.0, 4.5])
    if part == "default_unordered":
        default = jax.make_jaxpr(summarise_with(False))(data).effects
        ordered = jax.make_jaxpr(summarise_with(True))(data).effects
        lines = printed_lines(lambda: jax.jit(summarise_with(False))(data))
        return Observation(
            {
                "default_effects_ordered": [effects.ordered_effects.contains(e) for e in default],
                "ordered_effects_ordered": [effects.ordered_effects.contains(e) for e in ordered],
                "lines_in_printed_order": lines,
            },
            {"default_effects": sorted(str(e) for e in default), "ordered_effects": sorted(str(e) for e in ordered)},
        )
    lines = printed_lines(lambda: jax.jit(summarise_with(False))(data))
    text = "\n".join(lines)
    if part == "format_spec":
        keyword = next((line for line in lines if line.startswith("mean=")), None)
        return Observation(
            {"keyword_fields": [f for f in FORMAT_FIELDS if f in text], "keyword_line": keyword},
            {"lines_in_printed_order": lines},
        )
    positional = next((line for line in lines if line.startswith("positional:")), None)
    return Observation({"positional_line": positional}, {"lines_in_printed_order": lines})


@SECTION.case(
    subsection="1.1",
    claim="An f-string is formatted once at trace time, so the jitted print shows the tracer rather than the "
    "value, and every later run prints that same line; passing the value as a keyword argument prints "
    "the runtime value.",
    params=[
        Param(
            "fstring_tracer",
            rows=["values.debug_print.fstring_tracer"],
            expect=Expect(
                {"mentions_tracer": True, "shows_value": False, "later_run_same_outcome": True},
                printed={"outcome": "x = JitTracer(float32[])"},
            ),
        ),
        Param("kwarg_value", rows=["values.debug_print.kwarg_value"], expect=Expect({"output": "x = 3.0"})),
    ],
    notes="fstring_tracer: the chapter accepts either outcome of the f-string print, a printed line or a "
    "format error (braces in the tracer's text), and asserts of the text of either that it mentions "
    "'Tracer' and not the value 3.0; so does the probe. The outcome text is printed tier (the chapter "
    "printed `x = JitTracer(float32[])`); 0.4.38 prints `x = Traced<ShapedArray(float32[])>with"
    "<DynamicJaxprTrace>`, which does not contain 'Tracer'. A later run with 5.0 must give the same "
    "outcome. kwarg_value: asserted exactly, as the chapter does.",
    changes=[
        Change(
            since="0.7.0",
            params=("fstring_tracer",),
            why="From 0.7.0 a tracer formatted in an f-string names its class (`JitTracer<float32[]>`), so the "
            "text mentions 'Tracer'; before, it read `Traced<float32[]>with<DynamicJaxprTrace>`.",
            evidence="measured (all run, linux-x86_64): 0.6.2 outcome `x = "
            "Traced<float32[]>with<DynamicJaxprTrace>`, 0.7.0 `x = JitTracer<float32[]>`",
        ),
    ],
)
def fstring_vs_keyword(form):
    import jax
    import jax.numpy as jnp

    if form == "kwarg_value":

        @jax.jit
        def show(x):
            jax.debug.print("x = {x}", x=x)
            return x

        lines = printed_lines(lambda: show(jnp.float32(3.0)))
        return Observation({"output": "\n".join(lines).strip()}, {"lines": lines})

    @jax.jit
    def show_fstring(x):
        jax.debug.print(f"x = {x}")
        return x

    def outcome_text(value):
        outcome = outcome_of(lambda: printed_lines(lambda: show_fstring(jnp.float32(value))))
        if outcome.exception is not None:  # a format error is one of the chapter's two outcomes
            return f"{outcome.raised}: {outcome.message}"
        return "\n".join(outcome.value).strip()

    first, later = outcome_text(3.0), outcome_text(5.0)
    return Observation(
        {
            "mentions_tracer": "Tracer" in first,
            "shows_value": "3.0" in first,
            "later_run_same_outcome": later == first,
            "outcome": first,
        },
        {"later_outcome": later},
    )


@SECTION.case(
    subsection="1.1",
    claim="debug.print(ordered=True) with options only returns a print function whose prints keep program "
    "order within one jit and across jit calls; mixing ordered= with format arguments in one call "
    "still works and warns nothing.",
    params=[
        Param(
            "two_step",
            rows=["values.debug_print.ordered_two_step"],
            expect=Expect({"tokens": ["A0", "A1", "A2", "B", "x=2.0"]}),
        ),
        Param(
            "single_call",
            rows=["values.debug_print.ordered_kwarg_soft_deprecated"],
            expect=Expect(
                {
                    "raised": None,
                    "warnings": [],
                    "control_warning_seen": True,
                    "lines": ["step 0", "step 1", "tail x=2.0"],
                }
            ),
        ),
    ],
    notes="Both cells are asserted: two_step compares the whitespace-split tokens as the chapter does. The "
    "two-call form first appears in 0.10; older versions are unsupported for that cell. single_call is "
    "prose (the form is soft-deprecated in the 0.12 docstring but warns nothing): every category of "
    "warning raised while tracing and running is recorded, and a deliberate warning issued after the "
    "run inside the same recorder must be seen (control_warning_seen), so an empty list is not the "
    "recorder failing.",
    changes=[
        Change(
            since="0.10.1",
            params=("two_step",),
            why="The two-call form jax.debug.print(ordered=True)(...) first exists in 0.10.1 (its first parameter "
            "becomes optional); before it the cell is unsupported.",
            evidence="measured (all run, linux-x86_64): 0.10.0 rejects the options-only call (unsupported), 0.10.1 "
            "conforms",
        ),
    ],
)
def ordered_prints(form):
    import warnings

    import jax
    import jax.numpy as jnp

    if form == "two_step":
        _require_two_call_form(jax.debug.print, "fmt", "jax.debug.print")
        log_in_order = jax.debug.print(ordered=True)

        @jax.jit
        def stage_a(x):
            for i in range(3):
                log_in_order("A{i}", i=i)
            return x + 1

        @jax.jit
        def stage_b(x):
            log_in_order("B x={x}", x=x)
            return x * 2

        lines = printed_lines(lambda: stage_b(stage_a(jnp.float32(1.0))))
        return Observation({"tokens": " ".join(lines).split()}, {"lines": lines})

    @jax.jit
    def steps(x):
        for i in range(2):
            jax.debug.print("step {i}", i=i, ordered=True)
        jax.debug.print("tail x={x}", x=x, ordered=True)
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = outcome_of(lambda: printed_lines(lambda: steps(jnp.float32(2.0))))
        from_jax = list(caught)
        warnings.warn("conformance control warning", UserWarning, stacklevel=1)
    return Observation(
        {
            "raised": outcome.raised,
            "warnings": [f"{w.category.__name__}: {w.message}" for w in from_jax],
            "control_warning_seen": any("conformance control warning" in str(w.message) for w in caught),
            "lines": outcome.value,
        },
        {"message": outcome.message},
    )


@SECTION.case(
    subsection="1.1",
    claim="jax.debug.log formats like debug.print but hands an INFO record to logger jax._src.debugging "
    "instead of stdout; with that logger's level left at its default the record is not emitted, and "
    "raising that logger's level (to ERROR) turns the output off.",
    params=[
        Param(
            "info_level",
            rows=["values.debug_log.info_logger"],
            expect=Expect(
                {
                    "messages": ["loss = 0.25"],
                    "loggers": ["jax._src.debugging"],
                    "levels": ["INFO"],
                    "stdout": [],
                    "stdout_control_seen": True,
                }
            ),
        ),
        Param(
            "default_level",
            rows=["values.debug_log.default_level_silent"],
            expect=Expect({"handler_received": [], "control_received": True}),
            discrepancy="Measured: with the chapter's capture set-up (a handler on the 'jax' logger, "
            "propagate off, jax._src.debugging's level untouched, effective level WARNING) the "
            "handler receives the INFO record 'seen 1.0' on 0.8.3, 0.9.2, 0.10.2, 0.11.2 and "
            "0.12.0.1 (every release that has jax.debug.log). Why: jax/_src/debugging.py builds "
            "the record at trace time with logger.makeRecord (line 674, "
            "`_make_logging_record(logging.INFO) if _use_logging`) and delivers it with "
            "`logger.handle(logging_record)` (line 563), which skips Logger.isEnabledFor, so "
            "no level stops it; only Python's last-resort stderr handler, when no handler is "
            "configured, drops INFO.",
        ),
        Param(
            "level_off",
            rows=["values.debug_log.level_off"],
            expect=Expect({"handler_received": [], "control_received": True}),
            label="jax._src.debugging set to ERROR, the chapter's 'easy to turn off by level'",
            discrepancy="Measured: with jax._src.debugging set to ERROR and the chapter's capture (a "
            "handler on the 'jax' logger, propagate off), the handler still receives the INFO "
            "record 'seen 1.0' on 0.8.3, 0.9.2, 0.10.2, 0.11.2 and 0.12.0.1 (every release of the "
            "default matrix that has jax.debug.log), for the same reason as default_level: "
            "jax/_src/debugging.py builds the record at trace time with logger.makeRecord "
            "(line 674 in 0.12.0.1) and delivers it with `logger.handle(logging_record)` (line "
            "563), which skips Logger.isEnabledFor, so no level on the logger stops it (a level "
            "on the handler would).",
        ),
    ],
    notes="Both cells use the chapter's capture: a handler added to the 'jax' logger with propagation off and "
    "that logger's level left alone. info_level sets jax._src.debugging to INFO as the chapter does "
    "and asserts the captured messages, the record's logger and level, and that nothing reached stdout "
    "(a plain print inside the same capture must be seen: stdout_control_seen). default_level leaves "
    "jax._src.debugging's level alone, as the chapter's comment describes, and asserts the handler "
    "receives nothing; a WARNING logged on jax._src.debugging afterwards must reach the same handler "
    "(control_received), so an empty list is not a dead handler. level_off is the same probe with "
    "jax._src.debugging set to ERROR first (the §1.1 prose: output 'easy to turn off by level'); its "
    "control is an ERROR record, which that level lets through. jax.debug.log first appears in 0.8; "
    "older versions are unsupported.",
    changes=[
        Change(
            since="0.8.1",
            params=("info_level",),
            why="jax.debug.log first exists in 0.8.1, and at INFO its record reaches the chapter's handler as "
            "documented.",
            evidence="measured (all run, linux-x86_64): 0.8.0 has no jax.debug.log (unsupported), 0.8.1 conforms",
        ),
        Change(
            since="0.8.1",
            params=("default_level",),
            why="jax.debug.log first exists in 0.8.1; with jax._src.debugging's level left alone its INFO record "
            "still reaches the handler on the 'jax' logger, where the chapter says nothing arrives.",
            evidence="measured (all run, linux-x86_64): 0.8.0 unsupported; 0.8.1 handler_received ['seen 1.0'] "
            "with effective level WARNING and record level INFO",
        ),
        Change(
            since="0.8.1",
            params=("level_off",),
            why="jax.debug.log first exists in 0.8.1; setting jax._src.debugging to ERROR does not stop its INFO "
            "record, which logger.handle delivers without a level check, so the chapter's 'turn off by "
            "level' does not hold from the first release that has it.",
            evidence="jax/_src/debugging.py: `logger.handle(logging_record)` skips Logger.isEnabledFor; measured "
            "(default matrix, linux-x86_64): 0.7.2 unsupported, 0.8.3 to 0.12.0.1 differ",
        ),
    ],
)
def debug_log(level):
    import logging

    import jax
    import jax.numpy as jnp

    log = require("jax.debug.log")
    debug_logger = logging.getLogger("jax._src.debugging")
    if level in ("default_level", "level_off"):
        saved = debug_logger.level
        if level == "level_off":
            debug_logger.setLevel(logging.ERROR)
        try:
            with _ChapterLogCapture() as received:
                jax.block_until_ready(jax.jit(lambda x: (log("seen {x:.1f}", x=x), x)[1])(jnp.float32(1.0)))
                jax.effects_barrier()
                from_debug_log = list(received.records)
                (debug_logger.error if level == "level_off" else debug_logger.warning)("conformance control record")
        finally:
            debug_logger.setLevel(saved)
        return Observation(
            {
                "handler_received": [r.getMessage() for r in from_debug_log],
                "control_received": any(r.getMessage() == "conformance control record" for r in received.records),
            },
            {
                "effective_level": logging.getLevelName(debug_logger.getEffectiveLevel()),
                "record_levels": [r.levelname for r in from_debug_log],
            },
        )

    saved = debug_logger.level
    debug_logger.setLevel(logging.INFO)
    try:
        with _ChapterLogCapture() as logs:
            stdout = printed_lines(
                lambda: (
                    print("conformance control line"),
                    jax.jit(lambda x: (log("loss = {x:.2f}", x=x), x * 2)[1])(jnp.float32(0.25)),
                )[1]
            )
    finally:
        debug_logger.setLevel(saved)
    return Observation(
        {
            "messages": [r.getMessage() for r in logs.records],
            "loggers": [r.name for r in logs.records],
            "levels": [r.levelname for r in logs.records],
            "stdout": [line for line in stdout if line != "conformance control line"],
            "stdout_control_seen": "conformance control line" in stdout,
        }
    )


@SECTION.case(
    subsection="1.1",
    claim="debug.print prints once per example under vmap, only the primal under grad and jit(grad), only "
    "the taken branch of a jitted cond, both branches of a vmapped cond, and ordered prints per "
    "example under vmap.",
    params=[
        Param(
            "vmap",
            rows=["values.debug_print.vmap"],
            expect=Expect({"lines": ["saw x = 1.0", "saw x = 2.0", "saw x = 3.0"]}),
        ),
        Param("grad", rows=["values.debug_print.grad_primal_only"], expect=Expect({"lines": ["saw x = 2.0"]})),
        Param("jit_grad", rows=["values.debug_print.jit_grad"], expect=Expect({"lines": ["saw x = 2.0"]})),
        Param("cond", rows=["values.debug_print.cond_taken_branch"], expect=Expect({"lines": ["positive branch 1.0"]})),
        Param(
            "vmap_cond",
            rows=["values.debug_print.vmap_cond_both_branches"],
            expect=Expect(
                {
                    "sorted_lines": [
                        "negative branch -1.0",
                        "negative branch 1.0",
                        "positive branch -1.0",
                        "positive branch 1.0",
                    ]
                },
                printed={
                    "lines_in_printed_order": [
                        "negative branch 1.0",
                        "negative branch -1.0",
                        "positive branch 1.0",
                        "positive branch -1.0",
                    ]
                },
            ),
        ),
        Param(
            "vmap_ordered",
            rows=["values.debug_print.vmap_ordered"],
            expect=Expect({"lines": ["ordered 0.0", "ordered 1.0"]}),
        ),
    ],
    notes="Every cell is asserted as the chapter asserts it (exact lines). vmap_cond: the chapter asserts the "
    "sorted multiset; the order it printed (negative 1.0, negative -1.0, positive 1.0, positive -1.0) is "
    "the printed tier. vmap_ordered: the claim is about ordered prints under vmap, not about a "
    "spelling; the probe uses the two-call form where it exists (0.10 on), as the chapter does, and the "
    "single-call form `debug.print(fmt, x=x, ordered=True)` before that (details: spelling).",
)
def print_under_transforms(transform):
    import jax
    import jax.numpy as jnp
    from jax import lax

    def body(x):
        jax.debug.print("saw x = {x}", x=x)
        return jnp.sin(x) * x

    def branchy(x):
        def positive(v):
            jax.debug.print("positive branch {x}", x=v)
            return v

        def negative(v):
            jax.debug.print("negative branch {x}", x=v)
            return -v

        return lax.cond(x > 0, positive, negative, x)

    two_call = _has_two_call_form(jax.debug.print, "fmt")

    def ordered_per_example(x):
        if two_call:
            jax.debug.print(ordered=True)("ordered {x}", x=x)
        else:
            jax.debug.print("ordered {x}", x=x, ordered=True)
        return x

    runs = {
        "vmap": lambda: jax.vmap(body)(jnp.array([1.0, 2.0, 3.0])),
        "grad": lambda: jax.grad(body)(2.0),
        "jit_grad": lambda: jax.jit(jax.grad(body))(2.0),
        "cond": lambda: jax.jit(branchy)(jnp.float32(1.0)),
        "vmap_cond": lambda: jax.vmap(branchy)(jnp.array([1.0, -1.0])),
        "vmap_ordered": lambda: jax.vmap(ordered_per_example)(jnp.arange(2.0)),
    }
    lines = printed_lines(runs[transform])
    if transform == "vmap_cond":
        return Observation({"sorted_lines": sorted(lines), "lines_in_printed_order": lines})
    if transform == "vmap_ordered":
        return Observation({"lines": lines}, {"spelling": "two-call" if two_call else "single-call"})
    return Observation({"lines": lines})


@SECTION.case(
    subsection="1.1",
    rows=["values.grad_tap.custom_vjp_cotangent"],
    claim="An identity custom_vjp whose backward rule calls debug.callback hands the incoming cotangent to "
    "the host under jit(grad), without changing the gradient.",
    expect=Expect(
        {"last_tap_name": "h", "cotangent_is_2h": True, "gradient_is_analytic": True},
        printed={"cotangent": "[0.92423433 0.39475057]", "grad_w": "[0.36343098 0.03793723]"},
    ),
    notes="w=[1,2], x=[0.5,0.1], L=sum(tanh(w*x)**2). Asserted, as in the chapter (which reads the last "
    "tap, GRAD_TAPS[-1]): the last tap is named h, sees dL/dh = 2h, and dL/dw = 2h(1-h^2)x, both within atol "
    "1e-6 of float64 NumPy. Printed: the two "
    "float32 arrays as NumPy prints them.",
)
def gradient_tap():
    from functools import partial

    import numpy as np

    import jax
    import jax.numpy as jnp

    taps = []

    @partial(jax.custom_vjp, nondiff_argnums=(1,))
    def tap(x, name):
        return x

    def tap_fwd(x, name):
        return x, None

    def tap_bwd(name, _, g):
        jax.debug.callback(lambda cotangent: taps.append((name, np.asarray(cotangent))), g)
        return (g,)

    tap.defvjp(tap_fwd, tap_bwd)

    def loss(w, x):
        return jnp.sum(tap(jnp.tanh(w * x), "h") ** 2)

    w, x = jnp.array([1.0, 2.0]), jnp.array([0.5, 0.1])
    grad_w = jax.jit(jax.grad(loss))(w, x)
    jax.effects_barrier()
    h = np.tanh(np.asarray(w, np.float64) * np.asarray(x, np.float64))
    cotangent = taps[-1][1] if taps else np.full(2, np.nan)
    return Observation(
        {
            "last_tap_name": taps[-1][0] if taps else None,
            "cotangent_is_2h": bool(np.allclose(cotangent, 2 * h, atol=1e-6)),
            "gradient_is_analytic": bool(np.allclose(grad_w, 2 * h * (1 - h**2) * np.asarray(x), atol=1e-6)),
            "cotangent": str(cotangent),
            "grad_w": str(np.asarray(grad_w)),
        },
        {
            "cotangent_values": cotangent.tolist(),
            "grad_w_values": np.asarray(grad_w).tolist(),
            "tap_names": [name for name, _ in taps],
        },
    )


# §1.2 jax.debug.callback ------------------------------------------------------------------------------------


@SECTION.case(
    subsection="1.2",
    claim="debug.callback inside a jitted MLP hands each layer's activation statistics to a Python recorder "
    "once per call site, in program order; under vmap it runs once per example.",
    params=[
        Param(
            "jit",
            rows=["values.debug_callback.host_stats"],
            expect=Expect(
                {"layers": ["relu0", "relu1"], "relu0_matches_numpy": True, "callback_argument_types": ["ndarray"]},
                printed={
                    "printed_stats": [
                        "relu0: mean=0.483 std=0.742 dead fraction=0.52",
                        "relu1: mean=0.236 std=0.447 dead fraction=0.60",
                    ]
                },
            ),
            discrepancy="Measured: the host function receives jax.Array (type ArrayImpl) arguments, not "
            "NumPy arrays, on every release of the default matrix, 0.4.38 through 0.12.0.1. "
            "Why: debug_callback_impl in jax/_src/debugging.py places the arguments on the CPU "
            "device with `args = api.device_put(args, cpu_device)` (line 96) and calls "
            "`callback(*args)` with them (line 101); the CHANGELOG of jax 0.4.27 announced "
            "jax.Array callback arguments.",
        ),
        Param("vmap", rows=["values.debug_callback.vmap_per_example"], expect=Expect({"records": 8})),
    ],
    notes="jit, asserted: the layers in program order, relu0's mean and std within 1e-5 of a float64 NumPy "
    "recomputation (both chapter asserts), and the type of the arguments the host function receives, "
    "which the chapter states three times (NumPy arrays, numpy.ndarray). Printed: the statistics lines, "
    "which depend on the key(0)/key(1) streams of the default threefry PRNG (implementation and "
    "jax_threefry_partitionable in details; 0.4.38 draws other numbers, the partitionable default "
    "changed in 0.5.0). vmap: the record count is asserted (4 examples x 2 layers).",
)
def activation_callback(transform):
    import numpy as np

    import jax
    import jax.numpy as jnp

    records, argument_types = [], set()

    def record(name, x):
        def on_host(mean, std, dead):
            argument_types.update(type(a).__name__ for a in (mean, std, dead))
            records.append({"layer": name, "mean": float(mean), "std": float(std), "dead": float(dead)})

        jax.debug.callback(on_host, x.mean(), x.std(), jnp.mean(x <= 0))
        return x

    def forward(params, x):
        for i, (w, b) in enumerate(params):
            x = x @ w + b
            if i < len(params) - 1:
                x = record(f"relu{i}", jax.nn.relu(x))
        return x

    k1, k2, k3 = jax.random.split(jax.random.key(0), 3)
    params = [
        (jax.random.normal(k1, (8, 16)) / jnp.sqrt(8.0), jnp.zeros(16)),
        (jax.random.normal(k2, (16, 16)) / 4.0, jnp.zeros(16)),
        (jax.random.normal(k3, (16, 1)) / 4.0, jnp.zeros(1)),
    ]
    x = jax.random.normal(jax.random.key(1), (32, 8))
    details = {
        "prng_impl": str(getattr(jax.config, "jax_default_prng_impl", None)),
        "threefry_partitionable": getattr(jax.config, "jax_threefry_partitionable", None),
    }
    if transform == "vmap":
        jax.block_until_ready(jax.vmap(forward, in_axes=(None, 0))(params, x[:4]))
        jax.effects_barrier()
        return Observation({"records": len(records)}, {**details, "layers": [r["layer"] for r in records]})

    jax.block_until_ready(jax.jit(forward)(params, x))
    jax.effects_barrier()
    first = np.maximum(np.asarray(x, np.float64) @ np.asarray(params[0][0], np.float64), 0)
    relu0 = records[0] if records else {"mean": np.nan, "std": np.nan}
    return Observation(
        {
            "layers": [r["layer"] for r in records],
            "relu0_matches_numpy": bool(
                abs(relu0["mean"] - first.mean()) < 1e-5 and abs(relu0["std"] - first.std()) < 1e-5
            ),
            "printed_stats": [
                f"{r['layer']}: mean={r['mean']:.3f} std={r['std']:.3f} dead fraction={r['dead']:.2f}" for r in records
            ],
            "callback_argument_types": sorted(argument_types),
        },
        details,
    )


@SECTION.case(
    subsection="1.2",
    claim="debug.callback(ordered=True) returns a callback function whose calls run in program order; "
    "debug.callback gives the traced program nothing back (its staged call has no outputs), so a value "
    "for the device needs pure_callback, whose staged call has one.",
    params=[
        Param(
            "two_step",
            rows=["values.debug_callback.ordered_two_step_and_return"],
            expect=Expect({"calls_in_order": ["a 1.0", "b 1.0", "c 2.0"]}),
            label="the two-call form debug.callback(ordered=True)(fn, x)",
        ),
        Param(
            "return_value",
            rows=["values.debug_callback.ordered_two_step_and_return"],
            expect=Expect({"debug_callback_outputs": [0], "pure_callback_outputs": [1], "pure_callback_result": 6.0}),
            label="no value back from debug.callback; one from pure_callback",
        ),
    ],
    notes="The row is prose. The order of the calls made through the two-call form, within one jit and "
    "across two, is compared. 'Must return None; returning a value needs pure_callback' is checked on "
    "the jaxprs: the debug_callback equation of a host function that does return a value has no "
    "output variables (the value cannot reach the program), while the pure_callback equation has one "
    "and its value, 2*3, comes back. (The Python call itself always evaluates to None, so that says "
    "nothing and is not compared.) A host function returning a value through debug.callback raises "
    "nothing in 0.12.0.1; its value is dropped. The two parts are parameters of their own because only "
    "the first needs the two-call form (newer releases): older ones still report the second.",
    changes=[
        Change(
            since="0.10.1",
            params=("two_step",),
            why="The two-call form jax.debug.callback(ordered=True)(...) first exists in 0.10.1; before it the "
            "case is unsupported.",
            evidence="measured (all run, linux-x86_64): 0.10.0 rejects the options-only call (unsupported), 0.10.1 "
            "conforms",
        ),
    ],
)
def callback_two_step(part):
    import jax
    import jax.numpy as jnp

    if part == "return_value":
        return _callback_return_value()
    _require_two_call_form(jax.debug.callback, "callback", "jax.debug.callback")
    calls = []
    call_in_order = jax.debug.callback(ordered=True)

    @jax.jit
    def first(x):
        call_in_order(lambda v: calls.append(f"a {float(v)}"), x)
        call_in_order(lambda v: calls.append(f"b {float(v)}"), x)
        return x + 1

    @jax.jit
    def second(x):
        call_in_order(lambda v: calls.append(f"c {float(v)}"), x)
        return x

    jax.block_until_ready(second(first(jnp.float32(1.0))))
    jax.effects_barrier()
    return Observation({"calls_in_order": calls})


def _callback_return_value():
    """Output counts of the staged debug_callback and pure_callback calls, and pure_callback's value."""
    import jax
    import jax.numpy as jnp

    def returns_a_value(x):
        jax.debug.callback(lambda v: v * 2, x)
        return x

    shape = jax.ShapeDtypeStruct((), jnp.float32)

    def doubled_on_host(x):
        return jax.pure_callback(lambda v: v * 2, shape, x)

    def output_counts(function, primitive):
        jaxpr = jax.make_jaxpr(function)(jnp.float32(3.0)).jaxpr
        return [len(eqn.outvars) for eqn in jaxpr.eqns if eqn.primitive.name == primitive]

    pure = jax.jit(doubled_on_host)(jnp.float32(3.0))
    return Observation(
        {
            "debug_callback_outputs": output_counts(returns_a_value, "debug_callback"),
            "pure_callback_outputs": output_counts(doubled_on_host, "pure_callback"),
            "pure_callback_result": float(pure),
        }
    )


# §1.3 jax.debug.breakpoint ----------------------------------------------------------------------------------


def _jdb_session(call):
    """Run `call` with stdout captured; return (what each jdb command printed, the intro, the outcome, the text).

    jdb writes its intro, its `(jdb) ` prompts and its answers to sys.stdout, so splitting the captured text
    on the prompt gives the intro first and then one chunk per command read from stdin.
    """
    import contextlib
    import io

    import jax

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        outcome = outcome_of(lambda: (jax.block_until_ready(call()), jax.effects_barrier())[0])
    text = buffer.getvalue()
    chunks = text.split("(jdb) ")
    return [c.rstrip("\n") for c in chunks[1:]], chunks[0], outcome, text


def _jdb_error(answer: str) -> str | None:
    """The exception class jdb reports for a command (`*** NameError: ...`), or None when it printed a value."""
    return answer.removeprefix("*** ").split(":")[0] if answer.startswith("***") else None


def _arrow_line(chunk: str) -> str:
    """The source line jdb marks with `->` in a context listing ('' when none)."""
    return next((line[2:].strip() for line in chunk.splitlines() if line.startswith("->")), "")


@SECTION.case(
    subsection="1.3",
    claim="jax.debug.breakpoint() in jitted code enters jdb at runtime; jdb reads commands from stdin and its "
    "frames hold concrete arrays; a breakpoint in a cond branch stops only when that branch runs; the "
    "variables to inspect must be passed to the branch function as arguments, otherwise they are not "
    "visible in the frame jdb stops in: if a lambda captures them as a closure, p y raises NameError; "
    "and p/pp/u/d/l/w/c/q work.",
    params=[
        Param(
            "session",
            rows=["values.breakpoint.stdin_session"],
            stdin="p y\np x\nc\n",
            expect=Expect(
                {
                    "entered_jdb": True,
                    "prompted": True,
                    "p_y_shows_sin_times_two": True,
                    "p_x_shown": True,
                    "result_is_sin_times_two_plus_one": True,
                },
                printed={
                    "intro": "Entering jdb:",
                    "prompts": 3,
                    "p_y": "Array([0.       , 1.6829419, 1.8185948], dtype=float32)",
                },
            ),
        ),
        Param(
            "conditional_cond",
            rows=["values.breakpoint.conditional_cond"],
            stdin="p y\np x\nc\n",
            expect=Expect(
                {
                    "entered_jdb": {"ok_run": 0, "nan_run": 1},
                    "p_y_shown": True,
                    "p_x_shown": True,
                    "runs_completed": ["ok_run", "nan_run"],
                },
                printed={"results": {"ok_run": [0.0, 0.693147], "nan_run": [0.0, "nan"]}},
            ),
        ),
        Param(
            "closure_vars",
            rows=["values.breakpoint.closure_vars_invisible"],
            stdin="p y\nc\np y\nc\n",
            expect=Expect({"entered_jdb": 1, "p_y_error": "NameError"}),
            discrepancy="Measured: when the breakpoint branch is a lambda that captures y by closure "
            "(it refers to y and receives only x), 'p y' prints y's value, "
            "Array([ 0., nan], dtype=float32), on every release of the default matrix, 0.4.38 "
            "through 0.12.0.1; no NameError. Why: jax/_src/debugger/core.py builds each "
            "DebuggerFrame from `frame_info.frame.f_locals` (DebuggerFrame.from_frameinfo), and "
            "a frame's f_locals includes its free (closure) variables, so a captured y is a "
            "local of the lambda's frame. Only a branch that does not refer to y lacks it "
            "(details: not_referenced_p_y).",
        ),
        Param(
            "commands",
            rows=["values.breakpoint.jdb_commands"],
            stdin="pp y\nu\nd\nl\nw\np no_such_name\nq\n",
            expect=Expect(
                {
                    "pp_shows_value": True,
                    "up_moves_to_caller": True,
                    "down_returns": True,
                    "list_marks_breakpoint": True,
                    "where_shows_traceback": True,
                    "command_errors": 0,
                    "control_error_reported": True,
                    "quit_aborts_with_exception": True,
                }
            ),
        ),
    ],
    timeout_s=60,
    notes="Each cell pipes its commands to the child's stdin and captures jdb's stdout in-process (no TTY); "
    "a jdb left waiting would end as a timeout. The chapter ran the same code in a python -c "
    "subprocess and printed RESULT lines; here results are returned directly. session, asserted as the "
    "chapter does: 'Entering jdb' and a '(jdb)' prompt appear, p y shows 1.6829419, the text "
    "Array([0., 1., 2.], dtype=float32) appears, and the result is sin(x)*2+1; the intro line, the "
    "number of prompts and p y's full repr are printed tier. conditional_cond, asserted: jdb is "
    "entered only on the run with a NaN, p y's and p x's reprs appear in the output (substrings, as "
    "the chapter checks), and both runs complete in order; the result values are printed tier. "
    "closure_vars (prose) probes what the chapter names: a lambda branch that captures y by closure; "
    "the same branch without any reference to y is in details. commands (a prose table): each command's "
    "own effect is asserted, and none of the five is answered with jdb's error prefix '***' (jdb "
    "evaluates a line it does not know as an expression, so an unknown command shows up as an error); "
    "`p no_such_name` must be answered with a NameError (control_error_reported). q calls "
    "sys.exit inside the host callback; on 0.12.0.1 the jitted call then raises JaxRuntimeError "
    "(class and message in details).",
)
def breakpoint_jdb(scenario):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    if scenario in ("session", "commands"):

        @jax.jit
        def scaled_sine(x):
            y = jnp.sin(x) * 2
            jax.debug.breakpoint()
            return y + 1

        answers, intro, outcome, text = _jdb_session(lambda: scaled_sine(jnp.arange(3.0)))
        if scenario == "session":
            result = np.asarray(outcome.value) if outcome.exception is None else np.full(3, np.nan)
            return Observation(
                {
                    "entered_jdb": "Entering jdb" in text,
                    "prompted": "(jdb)" in text,
                    "p_y_shows_sin_times_two": "1.6829419" in answers[0] if answers else False,
                    "p_x_shown": "Array([0., 1., 2.], dtype=float32)" in text,
                    "result_is_sin_times_two_plus_one": bool(
                        np.allclose(result, np.sin(np.arange(3.0)) * 2 + 1, atol=1e-6)
                    ),
                    "intro": intro.strip(),
                    "prompts": len(answers),
                    "p_y": answers[0] if answers else None,
                },
                {"transcript": text, "result": _nan_safe(result.tolist()), **outcome.summary()},
            )
        pp, up, down, listing, where = (answers + [""] * 5)[:5]
        return Observation(
            {
                "pp_shows_value": "1.6829419" in pp,
                "up_moves_to_caller": up.startswith("> ") and _arrow_line(up) not in ("", _arrow_line(listing)),
                "down_returns": _arrow_line(down) == "jax.debug.breakpoint()",
                "list_marks_breakpoint": _arrow_line(listing) == "jax.debug.breakpoint()",
                "where_shows_traceback": where.startswith("Traceback:") and "jax.debug.breakpoint()" in where,
                "command_errors": sum(a.startswith("***") for a in answers[:5]),
                "control_error_reported": _jdb_error(answers[5] if len(answers) > 5 else "") == "NameError",
                "quit_aborts_with_exception": outcome.exception is not None,
            },
            {"transcript": text, "quit_raised": outcome.raised, "quit_message": outcome.message},
        )

    def stop_here(x, y):
        jax.debug.breakpoint()

    def skip(*operands):
        return None

    if scenario == "closure_vars":

        @jax.jit
        def log_with_closure(x):
            y = jnp.log(x)
            # The branch is a lambda that captures y by closure and receives only x, as the chapter describes.
            lax.cond(jnp.any(jnp.isnan(y)), lambda x: jax.debug.breakpoint() if y is not None else None, skip, x)
            return y

        @jax.jit
        def log_without_reference(x):
            y = jnp.log(x)
            lax.cond(jnp.any(jnp.isnan(y)), lambda x: jax.debug.breakpoint(), skip, x)
            return y

        answers, _, outcome, text = _jdb_session(lambda: log_with_closure(jnp.array([1.0, -2.0])))
        not_referenced, _, _, _ = _jdb_session(lambda: log_without_reference(jnp.array([1.0, -2.0])))
        return Observation(
            {"entered_jdb": text.count("Entering jdb"), "p_y_error": _jdb_error(answers[0] if answers else "")},
            {"transcript": text, **outcome.summary(), "p_y": answers[:1], "not_referenced_p_y": not_referenced[:1]},
        )

    @jax.jit
    def log_with_check(x):
        y = jnp.log(x)
        lax.cond(jnp.any(jnp.isnan(y)), stop_here, skip, x, y)
        return y

    ok_answers, ok_intro, ok_outcome, ok_text = _jdb_session(lambda: log_with_check(jnp.array([1.0, 2.0])))
    answers, intro, outcome, text = _jdb_session(lambda: log_with_check(jnp.array([1.0, -2.0])))

    def rounded(o):
        return _nan_safe([round(v, 6) for v in np.asarray(o.value).tolist()]) if o.exception is None else None

    transcript = ok_text + text
    return Observation(
        {
            "entered_jdb": {"ok_run": ok_text.count("Entering jdb"), "nan_run": text.count("Entering jdb")},
            "p_y_shown": "Array([ 0., nan], dtype=float32)" in transcript,
            "p_x_shown": "Array([ 1., -2.], dtype=float32)" in transcript,
            "runs_completed": [
                name for name, o in (("ok_run", ok_outcome), ("nan_run", outcome)) if o.exception is None
            ],
            "results": {"ok_run": rounded(ok_outcome), "nan_run": rounded(outcome)},
        },
        {
            "ok_transcript": ok_text,
            "nan_transcript": text,
            "p_y": answers[:1],
            "p_x": answers[1:2],
            "ok": ok_outcome.summary(),
            "nan": outcome.summary(),
        },
    )


# §1.4 jax.disable_jit() -------------------------------------------------------------------------------------


@SECTION.case(
    subsection="1.4",
    claim="Inside disable_jit a jitted function, scan, fori_loop and cond run as plain Python on concrete "
    "values (the fori index is a Python int), while vmap still hands the function a BatchTracer.",
    params=[
        Param(
            "jit",
            rows=["values.disable_jit.jit_runs_python"],
            expect=Expect({"argument_type": "ArrayImpl", "result": 3.0}),
        ),
        Param(
            "scan",
            rows=["values.disable_jit.scan_python"],
            expect=Expect({"carries_concrete": [True, True]}, printed={"carry_types": ["ArrayImpl", "ArrayImpl"]}),
        ),
        Param("fori_loop", rows=["values.disable_jit.fori_index_int"], expect=Expect({"index_types": ["int", "int"]})),
        Param(
            "cond",
            rows=["values.disable_jit.cond_python"],
            expect=Expect(
                {"branches_run": ["negative"], "operand_is_tracer": False}, printed={"operand_type": "ArrayImpl"}
            ),
        ),
        Param(
            "vmap",
            rows=["values.disable_jit.vmap_still_traces"],
            expect=Expect({"argument_type": "BatchTracer", "python_if_raises": True}),
        ),
    ],
    notes="The jit decorator is applied inside the with block, as in the chapter. Asserted (chapter asserts): "
    "the argument type and result under jit, the fori index type, and the argument type under vmap. "
    "scan: the chapter only prints the carry type names (printed tier); its prose says the body runs "
    "step by step on concrete values, so the asserted fact is one non-tracer carry per step. cond is prose: the "
    "probe checks that only the taken branch runs, on a "
    "concrete operand: not a jax.core.Tracer (the claim's 'not a tracer'; traced under jit, both branches would "
    "run once each); its class name is printed. The failing Python if "
    "under vmap is prose that says it raises an error without naming one: that it raises is "
    "asserted, the class (TracerBoolConversionError on 0.12.0.1) is a detail.",
)
def disable_jit_runs_python(construct):
    import jax
    import jax.numpy as jnp
    from jax import lax

    seen = []

    def note(value):
        seen.append(type(value).__name__)

    with jax.disable_jit():
        if construct == "jit":

            @jax.jit
            def absolute(x):
                note(x)
                return x if x > 0 else -x

            result = absolute(jnp.array(-3.0))
            return Observation({"argument_type": seen[0], "result": float(result)})
        if construct == "scan":
            concrete = []
            lax.scan(
                lambda c, x: (note(c), concrete.append(not isinstance(c, jax.core.Tracer)), (c + x, c))[2],
                jnp.float32(0),
                jnp.arange(2.0),
            )
            return Observation({"carries_concrete": concrete, "carry_types": seen})
        if construct == "fori_loop":
            lax.fori_loop(0, 2, lambda i, v: (note(i), v + i)[1], 0)
            return Observation({"index_types": seen})
        if construct == "cond":
            ran, operands = [], []
            lax.cond(
                jnp.float32(-2.0) > 0,
                lambda v: (ran.append("positive"), note(v), operands.append(v), v)[3],
                lambda v: (ran.append("negative"), note(v), operands.append(v), -v)[3],
                jnp.float32(-2.0),
            )
            return Observation(
                {
                    "branches_run": ran,
                    "operand_type": seen[0] if seen else None,
                    "operand_is_tracer": any(isinstance(v, jax.core.Tracer) for v in operands) if operands else None,
                }
            )

        def keep_positive(x):
            note(x)
            return x if x > 0 else -x

        outcome = outcome_of(lambda: jax.vmap(keep_positive)(jnp.arange(2.0)))
        return Observation(
            {"argument_type": seen[0] if seen else None, "python_if_raises": outcome.exception is not None},
            {"raised": outcome.raised, "message": outcome.message},
        )


@SECTION.case(
    subsection="1.4",
    rows=["values.disable_jit.bisect_param_version"],
    claim="With the weights passed as an argument, sum(W @ x) under vmap agrees with a float64 NumPy "
    "reference both under jit and under disable_jit.",
    expect=Expect(
        {"jit_error_below_1e-3": True, "disable_jit_error_below_1e-3": True},
        printed={"jit_error": "5.91e-06", "disable_jit_error": "5.91e-06"},
    ),
    notes="W = normal(key(1), (128,128))/sqrt(128), X = normal(key(2), (50,128)). Asserted, as in the "
    "chapter: both errors against the float64 reference are below 1e-3. Printed: the two errors as the "
    "chapter formats them (5.91e-06 each), which depend on the PRNG streams (implementation in "
    "details).",
)
def disable_jit_bisect():
    import numpy as np

    import jax
    import jax.numpy as jnp

    def row_sums(w, xs):
        return jax.vmap(lambda x: jnp.sum(w @ x))(xs)

    w = jax.random.normal(jax.random.key(1), (128, 128)) / jnp.sqrt(128.0)
    xs = jax.random.normal(jax.random.key(2), (50, 128))
    reference = (np.asarray(w, np.float64) @ np.asarray(xs, np.float64).T).sum(0)
    err_jit = float(np.abs(np.asarray(jax.jit(row_sums)(w, xs), np.float64) - reference).max())
    with jax.disable_jit():
        err_eager = float(np.abs(np.asarray(row_sums(w, xs), np.float64) - reference).max())
    return Observation(
        {
            "jit_error_below_1e-3": err_jit < 1e-3,
            "disable_jit_error_below_1e-3": err_eager < 1e-3,
            "jit_error": f"{err_jit:.3g}",
            "disable_jit_error": f"{err_eager:.3g}",
        },
        {"prng_impl": str(getattr(jax.config, "jax_default_prng_impl", None))},
    )
