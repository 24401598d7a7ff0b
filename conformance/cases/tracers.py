"""§4 of the chapter: the tracer error classes, the catalogue of tracer errors with their fixes, and tracer leaks."""

from conformance.cases.helpers import outcome_of, require
from conformance.core.case import Expect, Observation, Param, Section

SECTION = Section("§4", "Tracer errors")

_TYPE_ERROR_MRO = ["JAXTypeError", "_JAXErrorMixin", "TypeError"]
_BOOL_ERROR = "TracerBoolConversionError"
_BOOL_MESSAGE = "Attempted boolean conversion of traced array with shape bool[]."
_INDEX_MESSAGE = "The __index__() method was called on traced array with shape int32[]"
_LEAK_REPORT = "Leaked trace DynamicJaxprTrace. Leaked tracer(s):"

# A global list, as in the chapter, so that the leak checker's reference chain ends at a module global `leaked`.
leaked = []


def _class_names(classes):
    return [c.__name__ for c in classes]


def _error(outcome, cut=None):
    """`{"raised", "message"}` of a failed call, its first line cut where the chapter cut its printout."""
    return {"raised": outcome.raised, "message": outcome.message[:cut]}


def _result(call):
    """What a fix gives: `call()`'s value, or `"raised <class>: <first line>"` when it fails."""
    outcome = outcome_of(call)
    return outcome.value if outcome.exception is None else f"raised {outcome.raised}: {outcome.message}"


def _is(outcome, cls):
    """Whether the call raised an instance of `cls` (None when `cls` is missing from this release)."""
    return None if cls is None else isinstance(outcome.exception, cls)


def _full_message(outcome):
    """The whole message of a failed call, for the details (None when the call returned)."""
    return None if outcome.exception is None else str(outcome.exception)


_ERROR_CLASS_NAMES = [
    "ConcretizationTypeError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerArrayConversionError",
    "NonConcreteBooleanIndexError",
    "UnexpectedTracerError",
]


@SECTION.case(
    claim="Only TracerBoolConversionError derives from ConcretizationTypeError; the integer and array "
    "conversion errors derive from JAXTypeError directly, and all of them are TypeErrors.",
    params=[
        Param(
            "mro",
            rows=["tracers.hierarchy"],
            expect=Expect(
                {"classes_in_jax_errors": {name: True for name in _ERROR_CLASS_NAMES}},
                printed={
                    "mro": {
                        "ConcretizationTypeError": _TYPE_ERROR_MRO,
                        "TracerBoolConversionError": ["ConcretizationTypeError", "JAXTypeError", "_JAXErrorMixin"],
                        "TracerIntegerConversionError": _TYPE_ERROR_MRO,
                        "TracerArrayConversionError": _TYPE_ERROR_MRO,
                        "NonConcreteBooleanIndexError": ["JAXIndexError", "_JAXErrorMixin", "IndexError"],
                        "UnexpectedTracerError": _TYPE_ERROR_MRO,
                    }
                },
            ),
        ),
        Param(
            "subclassing",
            rows=["tracers.hierarchy.subclassing"],
            expect=Expect(
                {
                    "subclass_of_ConcretizationTypeError": {
                        "TracerBoolConversionError": True,
                        "TracerIntegerConversionError": False,
                        "TracerArrayConversionError": False,
                    },
                    "subclass_of_JAXTypeError_and_TypeError": {
                        "ConcretizationTypeError": True,
                        "TracerIntegerConversionError": True,
                        "TracerArrayConversionError": True,
                        "UnexpectedTracerError": True,
                    },
                    "NonConcreteBooleanIndexError_is_IndexError": True,
                }
            ),
        ),
    ],
    notes="Asserted, as the chapter's assert lines: the issubclass relations. The MRO lists (entries 1 to 3 "
    "of __mro__) are only printed by the chapter, so they are the printed tier of the `mro` row, whose "
    "asserted fact is that the six classes exist in jax.errors. A class missing from jax.errors is "
    "observed as null. All six classes and JAXTypeError exist, with these MROs, back to 0.4.38.",
)
def exception_hierarchy(aspect):
    import jax

    errors = jax.errors
    found = {name: getattr(errors, name, None) for name in _ERROR_CLASS_NAMES}
    if aspect == "mro":
        return Observation(
            {
                "classes_in_jax_errors": {name: cls is not None for name, cls in found.items()},
                "mro": {name: _class_names(cls.__mro__[1:4]) if cls else None for name, cls in found.items()},
            }
        )
    jax_type_error = getattr(errors, "JAXTypeError", None)
    concretization = found["ConcretizationTypeError"]

    def derives(name, *bases):
        cls = found[name]
        if cls is None or any(base is None for base in bases):
            return None
        return all(issubclass(cls, base) for base in bases)

    return Observation(
        {
            "subclass_of_ConcretizationTypeError": {
                name: derives(name, concretization)
                for name in ["TracerBoolConversionError", "TracerIntegerConversionError", "TracerArrayConversionError"]
            },
            "subclass_of_JAXTypeError_and_TypeError": {
                name: derives(name, jax_type_error, TypeError)
                for name in [
                    "ConcretizationTypeError",
                    "TracerIntegerConversionError",
                    "TracerArrayConversionError",
                    "UnexpectedTracerError",
                ]
            },
            "NonConcreteBooleanIndexError_is_IndexError": derives("NonConcreteBooleanIndexError", IndexError),
        }
    )


@SECTION.case(
    rows=["tracers.message.culprit_arguments"],
    claim="A tracer error names the function being traced for jit and the argument(s) whose values the "
    "failing operation depends on, in singular or plural wording.",
    expect=Expect(
        {
            "is_TracerBoolConversionError": True,
            "function": "clip_positive",
            "arguments": "x and limit",
            "one_argument_wording": "depends on the value of the argument x",
        },
        printed={"raised": _BOOL_ERROR, "first_line": _BOOL_MESSAGE},
    ),
    notes="Asserted, as the chapter asserts: the isinstance check and the function and arguments its regex "
    "pulls out of the message (whitespace squashed, as the chapter does); the singular wording is its "
    "prose. The class name and first line are only printed. The file:line part is matched loosely (any "
    "text up to `:<digits> for jit.`), so a checkout path is never compared.",
)
def culprit_arguments():
    import re

    import jax
    import jax.numpy as jnp

    def clip_positive(x, limit):
        return limit if x > limit else x

    def positive_only(x):
        return x if x > 0 else 0.0 * x

    both = outcome_of(lambda: jax.jit(clip_positive)(jnp.float32(3.0), 1.0))
    single = outcome_of(lambda: jax.jit(positive_only)(jnp.float32(3.0)))
    squashed = " ".join(str(both.exception).split())
    squashed_single = " ".join(str(single.exception).split())
    found = re.search(
        r"The error occurred while tracing the function (\S+) at .+?:\d+ for jit\..*?"
        r"depends on the values? of the arguments? (.+?)\.",
        squashed,
    )
    wording = re.search(r"depends on the values? of the arguments? \w+", squashed_single)
    return Observation(
        {
            "is_TracerBoolConversionError": _is(both, jax.errors.TracerBoolConversionError),
            "raised": both.raised,
            "first_line": both.message,
            "function": found.group(1) if found else None,
            "arguments": found.group(2) if found else None,
            "one_argument_wording": wording.group(0) if wording else None,
        },
        {"message": squashed, "one_argument_message": squashed_single},
    )


@SECTION.case(
    subsection="4.1",
    claim="Under jit, a Python if, a while condition and and/or on a traced value each need a concrete bool "
    "and raise TracerBoolConversionError.",
    params=[
        Param(
            "python_if",
            rows=["tracers.bool.python_if"],
            expect=Expect(
                {"is_TracerBoolConversionError": True}, printed={"raised": _BOOL_ERROR, "message": _BOOL_MESSAGE}
            ),
        ),
        Param(
            "other_constructs",
            rows=["tracers.bool.other_constructs"],
            expect=Expect({"is_TracerBoolConversionError": {"while": True, "and": True, "or": True}}),
        ),
    ],
    notes="Asserted: isinstance TracerBoolConversionError (the chapter's assert for the if form; its table "
    "names the class for while/and/or). Only the if form is in a chapter cell, whose class name and "
    "first line are printed, so they are the printed tier.",
)
def bool_conversion(construct):
    import jax
    import jax.numpy as jnp

    def relu_if(x):
        if x > 0:
            return x
        return 0.0 * x

    def halve_while_big(x):
        while x > 1:
            x = x / 2
        return x

    value = jnp.float32(2.0)
    bool_error = jax.errors.TracerBoolConversionError
    if construct == "python_if":
        outcome = outcome_of(lambda: jax.jit(relu_if)(value))
        return Observation(
            {"is_TracerBoolConversionError": _is(outcome, bool_error), **_error(outcome)},
            {"message": _full_message(outcome)},
        )
    outcomes = {
        "while": outcome_of(lambda: jax.jit(halve_while_big)(value)),
        "and": outcome_of(lambda: jax.jit(lambda x: (x > 0) and (x < 5))(value)),
        "or": outcome_of(lambda: jax.jit(lambda x: (x > 0) or (x < 5))(value)),
    }
    return Observation(
        {"is_TracerBoolConversionError": {name: _is(o, bool_error) for name, o in outcomes.items()}},
        {name: outcome.summary() for name, outcome in outcomes.items()},
    )


@SECTION.case(
    subsection="4.1",
    rows=["tracers.bool.fixes"],
    claim="jnp.where and a per-element lax.cond replace the value-dependent if under jit; the cond version "
    "gives -0.0 for the negative input, which still equals 0.",
    expect=Expect(
        {"where": [0.0, 0.0, 3.0], "cond": [0.0, 0.0, 3.0]},
        printed={"cond_negative_zero_at_first": True},
    ),
    notes="Asserted: both results equal [0, 0, 3], as the chapter asserts. The -0.0 (from the 0.0 * x "
    "branch at x = -2) is only printed; JSON compares -0.0 equal to 0.0, so the sign is its own "
    "printed fact.",
)
def bool_fixes():
    import math

    import jax
    import jax.numpy as jnp
    from jax import lax

    relu_where = jax.jit(lambda x: jnp.where(x > 0, x, 0.0))
    relu_cond = jax.jit(lambda x: lax.cond(x > 0, lambda v: v, lambda v: 0.0 * v, x))
    xs = jnp.array([-2.0, 0.0, 3.0])
    by_where = _result(lambda: [float(v) for v in relu_where(xs)])
    by_cond = _result(lambda: [float(relu_cond(v)) for v in xs])
    return Observation(
        {
            "where": by_where,
            "cond": by_cond,
            "cond_negative_zero_at_first": isinstance(by_cond, list) and math.copysign(1.0, by_cond[0]) < 0,
        },
        {"cond_printed": repr(by_cond)},
    )


@SECTION.case(
    subsection="4.1",
    rows=["tracers.bool.grad_alone_ok"],
    claim="grad on its own traces with concrete values, so a Python if on the input works; the same function "
    "raises TracerBoolConversionError under jit or vmap.",
    expect=Expect(
        {
            "grad_at_2": "allowed",
            "grad_at_minus_2": "allowed",
            "jit_is_TracerBoolConversionError": True,
            "vmap_is_TracerBoolConversionError": True,
        }
    ),
    notes="Stated in prose only; the chapter runs no cell for it. Asserted: grad alone does not raise (at "
    "both signs of the input), jit and vmap raise TracerBoolConversionError (isinstance). The gradient "
    "values (1.0 and 0.0) are details.",
)
def bool_under_grad_alone():
    import jax
    import jax.numpy as jnp

    def relu_if(x):
        if x > 0:
            return x
        return 0.0 * x

    grad_at_2 = outcome_of(lambda: jax.grad(relu_if)(2.0))
    grad_at_minus_2 = outcome_of(lambda: jax.grad(relu_if)(-2.0))
    jitted = outcome_of(lambda: jax.jit(relu_if)(2.0))
    vmapped = outcome_of(lambda: jax.vmap(relu_if)(jnp.array([2.0, -2.0])))
    return Observation(
        {
            "grad_at_2": grad_at_2.verdict,
            "grad_at_minus_2": grad_at_minus_2.verdict,
            "jit_is_TracerBoolConversionError": _is(jitted, jax.errors.TracerBoolConversionError),
            "vmap_is_TracerBoolConversionError": _is(vmapped, jax.errors.TracerBoolConversionError),
        },
        {
            "grad_values": [None if o.exception else float(o.value) for o in (grad_at_2, grad_at_minus_2)],
            "grad": grad_at_2.summary(),
            "jit": jitted.summary(),
            "vmap": vmapped.summary(),
        },
    )


@SECTION.case(
    subsection="4.2",
    rows=["tracers.int.index_conversion"],
    claim="A traced integer used as a range() count or as a Python list index calls __index__ and raises "
    "TracerIntegerConversionError.",
    expect=Expect(
        {"is_TracerIntegerConversionError": {"range(n)": True, "list[i]": True}},
        printed={
            "errors": {
                "range(n)": {"raised": "TracerIntegerConversionError", "message": _INDEX_MESSAGE},
                "list[i]": {"raised": "TracerIntegerConversionError", "message": _INDEX_MESSAGE},
            }
        },
    ),
    notes="Asserted: isinstance TracerIntegerConversionError for both forms, as the chapter asserts. The "
    "class name and first line of each message are only printed.",
)
def integer_conversion():
    import jax

    def repeat_add(x, n):
        for _ in range(n):
            x = x + 1.0
        return x

    def pick(i):
        return [10.0, 20.0, 30.0][i]

    outcomes = {
        "range(n)": outcome_of(lambda: jax.jit(repeat_add)(1.0, 3)),
        "list[i]": outcome_of(lambda: jax.jit(pick)(1)),
    }
    integer_error = jax.errors.TracerIntegerConversionError
    return Observation(
        {
            "is_TracerIntegerConversionError": {name: _is(o, integer_error) for name, o in outcomes.items()},
            "errors": {name: _error(outcome) for name, outcome in outcomes.items()},
        },
        {name: _full_message(outcome) for name, outcome in outcomes.items()},
    )


@SECTION.case(
    subsection="4.2",
    rows=["tracers.int.fixes"],
    claim="Making the count static, looping with lax.fori_loop over a traced bound, or indexing an array "
    "instead of a list all work under jit.",
    expect=Expect({"static_argnames": 4.0, "fori_loop": 4.0, "array_index": 20.0}),
)
def integer_fixes():
    import jax
    import jax.numpy as jnp
    from jax import lax

    def repeat_add(x, n):
        for _ in range(n):
            x = x + 1.0
        return x

    repeat_static = jax.jit(repeat_add, static_argnames="n")
    repeat_fori = jax.jit(lambda x, n: lax.fori_loop(0, n, lambda _, v: v + 1.0, x))
    pick_from_array = jax.jit(lambda i: jnp.asarray([10.0, 20.0, 30.0])[i])
    return Observation(
        {
            "static_argnames": _result(lambda: float(repeat_static(1.0, n=3))),
            "fori_loop": _result(lambda: float(repeat_fori(1.0, 3))),
            "array_index": _result(lambda: float(pick_from_array(1))),
        }
    )


@SECTION.case(
    subsection="4.3",
    rows=["tracers.array.numpy_on_tracer"],
    claim="A NumPy function, or np.asarray, applied to a tracer inside jit calls __array__ and raises "
    "TracerArrayConversionError.",
    expect=Expect(
        {"is_TracerArrayConversionError": {"np.sin": True, "np.asarray": True}},
        printed={
            "np.sin": {
                "raised": "TracerArrayConversionError",
                "message": "The numpy.ndarray conversion method __array__() was called on traced array with shape "
                "float32[3]",
            }
        },
    ),
    notes="Asserted: isinstance TracerArrayConversionError. np.sin is in a chapter cell, which asserts the "
    "class and prints the class name and first line (printed tier); np.asarray comes from the "
    "chapter's table, which names the class only.",
)
def array_conversion():
    import jax
    import jax.numpy as jnp
    import numpy as np

    ones = jnp.ones(3)
    with_sin = outcome_of(lambda: jax.jit(lambda x: np.sin(x) * 2)(ones))
    with_asarray = outcome_of(lambda: jax.jit(lambda x: np.asarray(x))(ones))
    array_error = jax.errors.TracerArrayConversionError
    return Observation(
        {
            "is_TracerArrayConversionError": {
                "np.sin": _is(with_sin, array_error),
                "np.asarray": _is(with_asarray, array_error),
            },
            "np.sin": _error(with_sin),
        },
        {"np.sin": _full_message(with_sin), "np.asarray": _full_message(with_asarray)},
    )


@SECTION.case(
    subsection="4.3",
    rows=["tracers.array.fixes"],
    claim="jnp.sin, or NumPy behind jax.pure_callback with a declared ShapeDtypeStruct result, works under "
    "jit and matches NumPy's sin(1) * 2.",
    expect=Expect(
        {
            "jnp_matches_numpy": True,
            "pure_callback_matches_numpy": True,
            "pure_callback_result": {"shape": [3], "dtype": "float32"},
        }
    ),
)
def array_fixes():
    import jax
    import jax.numpy as jnp
    import numpy as np

    require("jax.pure_callback")

    def numpy_twice_sin(v):
        return (np.sin(v) * 2).astype(v.dtype)

    with_jnp = jax.jit(lambda x: jnp.sin(x) * 2)
    with_callback = jax.jit(lambda x: jax.pure_callback(numpy_twice_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
    reference = np.sin(np.ones(3)) * 2
    by_jnp = _result(lambda: np.asarray(with_jnp(jnp.ones(3))))
    by_callback = _result(lambda: np.asarray(with_callback(jnp.ones(3))))

    def matches(result):
        return bool(np.allclose(result, reference)) if isinstance(result, np.ndarray) else result

    return Observation(
        {
            "jnp_matches_numpy": matches(by_jnp),
            "pure_callback_matches_numpy": matches(by_callback),
            "pure_callback_result": {"shape": list(by_callback.shape), "dtype": str(by_callback.dtype)}
            if isinstance(by_callback, np.ndarray)
            else by_callback,
        },
        {"jnp": str(by_jnp), "pure_callback": str(by_callback)},
    )


_CONCRETIZATION = {
    "raised": "ConcretizationTypeError",
    "message": "Abstract tracer value encountered where concrete value is expected: traced array",
}


@SECTION.case(
    subsection="4.4",
    rows=["tracers.concretization.cases"],
    claim="float(x), x.item(), jnp.arange with a traced length and jnp.nonzero without size= inside jit raise "
    "the base ConcretizationTypeError itself, not a subclass; int(x) raises a ConcretizationTypeError too.",
    expect=Expect(
        {
            "type_is_ConcretizationTypeError": {
                "float(x)": True,
                "x.item()": True,
                "jnp.arange(n)": True,
                "jnp.nonzero(x)": True,
            },
            "int(x)_is_ConcretizationTypeError": True,
        },
        printed={
            "errors": {
                "float(x)": _CONCRETIZATION,
                "x.item()": _CONCRETIZATION,
                "jnp.arange(n)": _CONCRETIZATION,
                "jnp.nonzero(x)": _CONCRETIZATION,
            }
        },
    ),
    notes="Asserted, as the chapter asserts: `type(e) is ConcretizationTypeError`, so a subclass would differ. "
    "The class names and messages (cut at 80 characters) are only printed. int(x) is in the chapter's "
    "table (symptom ConcretizationTypeError) but not in its assert, so it is asserted as the table "
    "says, with isinstance (a subclass is still that error); its class and message are details.",
)
def concretization():
    import jax
    import jax.numpy as jnp

    one = jnp.float32(1.0)
    attempts = {
        "float(x)": lambda: jax.jit(lambda x: float(x) * 2)(one),
        "x.item()": lambda: jax.jit(lambda x: x.item())(one),
        "jnp.arange(n)": lambda: jax.jit(lambda n: jnp.arange(n))(3),
        "jnp.nonzero(x)": lambda: jax.jit(lambda x: jnp.nonzero(x)[0])(jnp.array([1.0, 0.0, 2.0])),
    }
    outcomes = {name: outcome_of(attempt) for name, attempt in attempts.items()}
    as_int = outcome_of(lambda: jax.jit(lambda x: int(x))(one))
    base = jax.errors.ConcretizationTypeError
    return Observation(
        {
            "type_is_ConcretizationTypeError": {name: type(o.exception) is base for name, o in outcomes.items()},
            "int(x)_is_ConcretizationTypeError": isinstance(as_int.exception, base),
            "errors": {name: _error(outcome, 80) for name, outcome in outcomes.items()},
        },
        {"int(x)": as_int.summary(), "messages": {name: _full_message(o) for name, o in outcomes.items()}},
    )


@SECTION.case(
    subsection="4.4",
    rows=["tracers.concretization.fixes"],
    claim="Keeping the arithmetic traced, passing the length as a static argument, or giving nonzero a fixed "
    "size= with a fill value all work under jit.",
    expect=Expect({"traced_arithmetic": 2.0, "static_arange": [0, 1, 2], "sized_nonzero": [0, 2, -1]}),
)
def concretization_fixes():
    import jax
    import jax.numpy as jnp

    double = jax.jit(lambda x: x * 2)
    static_arange = jax.jit(lambda n: jnp.arange(n), static_argnames="n")
    sized_nonzero = jax.jit(lambda x: jnp.nonzero(x, size=3, fill_value=-1)[0])
    return Observation(
        {
            "traced_arithmetic": _result(lambda: float(double(jnp.float32(1.0)))),
            "static_arange": _result(lambda: static_arange(n=3).tolist()),
            "sized_nonzero": _result(lambda: sized_nonzero(jnp.array([1.0, 0.0, 2.0])).tolist()),
        }
    )


_SHAPE_MESSAGE = "Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),)"


@SECTION.case(
    subsection="4.5",
    claim="When a traced value decides a shape under jit, a boolean mask raises NonConcreteBooleanIndexError "
    "(an IndexError), a traced shape argument or reshape size a plain TypeError, and a traced slice "
    "bound a plain IndexError.",
    params=[
        Param(
            "bool_mask",
            rows=["tracers.shape.bool_mask"],
            expect=Expect(
                {"is_NonConcreteBooleanIndexError": True, "is_IndexError": True},
                printed={
                    "raised": "NonConcreteBooleanIndexError",
                    "message": "Array boolean indices must be concrete; got bool[3]",
                },
            ),
        ),
        Param(
            "shape_argument",
            rows=["tracers.shape.traced_shape"],
            expect=Expect(
                {"raised": "TypeError", "is_ConcretizationTypeError": False}, printed={"message": _SHAPE_MESSAGE}
            ),
        ),
        Param(
            "reshape",
            rows=["tracers.shape.reshape_traced"],
            expect=Expect(
                {"raised": "TypeError", "is_ConcretizationTypeError": False},
                printed={"message": "Shapes must be 1D sequences of concrete values"},
            ),
        ),
        Param(
            "slice",
            rows=["tracers.shape.traced_slice"],
            expect=Expect(
                {"raised": "IndexError", "is_IndexError": True},
                printed={
                    "message": "Array slice indices must have static start/stop/step to be used with NumPy "
                    "indexing syntax"
                },
            ),
        ),
    ],
    notes="Asserted: the exception class. For the mask, isinstance NonConcreteBooleanIndexError and "
    "IndexError (the chapter's assert and table); for the shape argument, reshape and slice, the exact "
    "class name `TypeError` / `IndexError`, because the chapter's table calls them plain (not a JAX "
    "subclass such as ConcretizationTypeError). Printed tier: the first line of each message, cut where "
    "the chapter cut it (90 characters; for reshape, which only the table shows, at the table's text), "
    "and the mask's class name. Measured here: the classes are the same back to 0.4.38, but the "
    "messages moved. The boolean-mask message said `got ShapedArray(bool[3])` up to 0.5.3. The traced "
    "int in the shape message printed as `Traced<ShapedArray(int32[], weak_type=True)>with<"
    "DynamicJaxprTrace>` up to 0.5.3, `Traced<~int32[]>with<...>` in 0.6.2 and `JitTracer<~int32[]>` in "
    "0.7.2. From 0.8.3 to 0.10.2 the slice message read `Slice entries must be static integers. Got "
    "slice(...)`; 0.11.2 restored the wording the chapter shows.",
)
def value_dependent_shape(form):
    import jax
    import jax.numpy as jnp

    wrong = {
        "bool_mask": lambda: jax.jit(lambda x: x[x > 0].sum())(jnp.array([1.0, -1.0, 2.0])),
        "shape_argument": lambda: jax.jit(lambda n: jnp.zeros(n))(3),
        "reshape": lambda: jax.jit(lambda x, n: x.reshape(n, -1))(jnp.ones(6), 2),
        "slice": lambda: jax.jit(lambda x, i: x[i : i + 2])(jnp.arange(5.0), 1),
    }
    outcome = outcome_of(wrong[form])
    cut = len("Shapes must be 1D sequences of concrete values") if form == "reshape" else 90
    facts = _error(outcome, cut)
    if form == "bool_mask":
        mask_error = getattr(jax.errors, "NonConcreteBooleanIndexError", None)
        facts["is_NonConcreteBooleanIndexError"] = _is(outcome, mask_error)
    if form in ("bool_mask", "slice"):
        facts["is_IndexError"] = isinstance(outcome.exception, IndexError)
    else:
        facts["is_ConcretizationTypeError"] = isinstance(outcome.exception, jax.errors.ConcretizationTypeError)
    return Observation(facts, {"message": _full_message(outcome)})


@SECTION.case(
    subsection="4.5",
    rows=["tracers.shape.fixes"],
    claim="A masked sum instead of boolean indexing, a static shape argument, and lax.dynamic_slice with a "
    "fixed length instead of a traced slice all work under jit.",
    expect=Expect({"masked_sum": 3.0, "static_shape": [3], "dynamic_slice": [1.0, 2.0]}),
)
def shape_fixes():
    import jax
    import jax.numpy as jnp
    from jax import lax

    positive_sum = jax.jit(lambda x: jnp.sum(jnp.where(x > 0, x, 0.0)))
    zeros_of = jax.jit(lambda n: jnp.zeros(n), static_argnums=0)
    window = jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))
    return Observation(
        {
            "masked_sum": _result(lambda: float(positive_sum(jnp.array([1.0, -1.0, 2.0])))),
            "static_shape": _result(lambda: list(zeros_of(3).shape)),
            "dynamic_slice": _result(lambda: window(jnp.arange(5.0), 1).tolist()),
        }
    )


@SECTION.case(
    subsection="4.6",
    rows=["tracers.leak.deferred_error"],
    claim="A tracer stored on an object attribute during jit leaks silently: the jit call succeeds, and "
    "UnexpectedTracerError appears only when the stored value is used later.",
    expect=Expect(
        {"jit_call": "allowed", "later_use_is_UnexpectedTracerError": True},
        printed={
            "later_use": {
                "raised": "UnexpectedTracerError",
                "message": "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
                "allowing for a reference to",
            }
        },
    ),
    notes="Asserted: the jit call itself does not raise (the chapter runs it bare) and the later use raises "
    "an UnexpectedTracerError (isinstance, as asserted); the later error is also the positive control "
    "that the stored value really was a leaked tracer. Printed: the class name and message, cut at "
    "110 characters as the chapter printed it.",
)
def leak_deferred_error():
    import jax
    import jax.numpy as jnp

    class Model:
        def __call__(self, x):
            hidden = jnp.tanh(x)
            self.last_hidden = hidden  # the tracer escapes onto the object
            return hidden * 2

    model = Model()
    call = outcome_of(lambda: jax.jit(model)(jnp.ones(3)))
    later = outcome_of(lambda: jnp.sum(model.last_hidden))
    return Observation(
        {
            "jit_call": call.verdict,
            "later_use": _error(later, 110),
            "later_use_is_UnexpectedTracerError": _is(later, jax.errors.UnexpectedTracerError),
        },
        {"later_use_message": _full_message(later)},
    )


def _leak_report(call):
    """`{"plain_Exception", "starts_with_Leaked_trace"}` of what `call()` raised (both False when nothing did),
    and `"<exception class>: <first line>"` or `"no error"` for the printed tier."""
    outcome = outcome_of(call)
    if outcome.exception is None:
        return {"plain_Exception": False, "starts_with_Leaked_trace": False}, "no error"
    cls = type(outcome.exception)
    facts = {
        "plain_Exception": cls is Exception,
        "starts_with_Leaked_trace": outcome.message.startswith("Leaked trace"),
    }
    return facts, f"{cls.__module__}.{cls.__qualname__}: {outcome.message}"


def _closure_convert_repeat(flag):
    """What a second `jax.closure_convert` of one function with the same argument types gives, with the leak
    checker set to `flag`: whether it returned the very converted function of the first call (its own cache
    answered), and how many times the function was traced."""
    import jax
    import jax.numpy as jnp

    traces = []

    def double(x):
        traces.append(1)
        return x * 2

    with jax.check_tracer_leaks(flag):
        first, _ = jax.closure_convert(double, jnp.float32(1.0))
        second, _ = jax.closure_convert(double, jnp.float32(1.0))
    return first is second, len(traces)


_FORMS = ["checking_leaks()", "check_tracer_leaks(True)", "config.update"]


@SECTION.case(
    subsection="4.6",
    rows=["tracers.leak.checker_forms"],
    claim="checking_leaks() is check_tracer_leaks bound to True; it, the check_tracer_leaks(True) context "
    "manager and config.update('jax_check_tracer_leaks', True) each turn the flag on and report a leak "
    "the moment tracing ends; leak checking disables some caching.",
    expect=Expect(
        {
            "checking_leaks_is_partial_of_check_tracer_leaks_True": True,
            "flag_on_inside": {name: True for name in _FORMS},
            "flag_off_after": {"checking_leaks()": True, "check_tracer_leaks(True)": True},
            "reports": {name: {"plain_Exception": True, "starts_with_Leaked_trace": True} for name in _FORMS},
            "closure_convert_cached_without_checker": True,
            "closure_convert_cached_with_checker": False,
        },
        printed={
            "report_lines": {name: f"builtins.Exception: {_LEAK_REPORT}" for name in _FORMS},
            "doc_first_line": "Context manager for `jax_check_tracer_leaks` config option.",
        },
    ),
    notes="The chapter only runs checking_leaks(); the other two forms come from its table, the caching "
    "remark from its prose. Asserted: checking_leaks is functools.partial(check_tracer_leaks, True); "
    "each form turns jax_check_tracer_leaks on inside, the two context managers turn it off again "
    "after (config.update has no 'after': the probe turns it off itself, so reading it would check "
    "the probe), and each reports the leak as a plain Exception whose first line starts "
    "`Leaked trace` (as the chapter asserts for its report). The caching claim is measured on the "
    "observable the flag's own help text names, 'some caching is disabled' (jax/_src/config.py, "
    "jax_check_tracer_leaks): the one cache JAX explicitly skips under the flag on every release "
    "from 0.4.38 to 0.12.0.1 is jax.closure_convert's (jax/_src/custom_derivatives.py, `if "
    "config.check_tracer_leaks.value: return _closure_convert_for_avals.__wrapped__(...)`). "
    "Observable through the public call: a second closure_convert of the same function and argument "
    "types returns the very converted function of the first (cache answered) without the checker "
    "(the positive control) and a new one with it. Not asserted: whether the user function is traced "
    "again; up to 0.11.0 it is (every util.cache was skipped), from 0.11.1 the cached trace_to_jaxpr "
    "answers it (jax/_src/interpreters/partial_eval.py), so the trace counts are details only. jit's "
    "cache is not disabled on any release (tracers.leak.cache_hit_unchecked). Printed tier: each "
    "form's report line (class and first line) and the table's description of check_tracer_leaks, "
    "which is its docstring's first line.",
)
def leak_checker_forms():
    import contextlib
    import functools

    import jax
    import jax.numpy as jnp

    checking_leaks = require("jax.checking_leaks")
    check_tracer_leaks = require("jax.check_tracer_leaks")

    def config_update_form():
        jax.config.update("jax_check_tracer_leaks", True)
        return contextlib.nullcontext()

    forms = {
        "checking_leaks()": checking_leaks,
        "check_tracer_leaks(True)": lambda: check_tracer_leaks(True),
        "config.update": config_update_form,
    }
    reports, report_lines, flag_on, flag_off = {}, {}, {}, {}
    for name, form in forms.items():

        def leaky(x):
            leaked.append(x)
            return x + 1

        jax.clear_caches()
        try:
            with form():
                flag_on[name] = bool(jax.config.jax_check_tracer_leaks)
                reports[name], report_lines[name] = _leak_report(lambda: jax.jit(leaky)(jnp.float32(1.0)))
            if name != "config.update":
                flag_off[name] = not jax.config.jax_check_tracer_leaks
        finally:
            jax.config.update("jax_check_tracer_leaks", False)
            leaked.clear()
    cached_without, traces_without = _closure_convert_repeat(False)
    cached_with, traces_with = _closure_convert_repeat(True)
    doc = check_tracer_leaks.__doc__ or ""
    return Observation(
        {
            "checking_leaks_is_partial_of_check_tracer_leaks_True": isinstance(checking_leaks, functools.partial)
            and checking_leaks.func is check_tracer_leaks
            and checking_leaks.args == (True,)
            and not checking_leaks.keywords,
            "flag_on_inside": flag_on,
            "flag_off_after": flag_off,
            "reports": reports,
            "closure_convert_cached_without_checker": cached_without,
            "closure_convert_cached_with_checker": cached_with,
            "report_lines": report_lines,
            "doc_first_line": doc.splitlines()[0] if doc else None,
        },
        {"closure_convert_traces": {"without_checker": traces_without, "with_checker": traces_with}, "doc": doc},
    )


@SECTION.case(
    subsection="4.6",
    rows=["tracers.leak.checker_report"],
    claim="With leak checking on, a jit function that appends its argument to a global list raises a plain "
    "Exception as soon as tracing ends, and the message traces the reference chain from the tracer "
    "through the list to the global.",
    expect=Expect(
        {
            "type_is_Exception": True,
            "first_line_starts_with_Leaked_trace": True,
            "a_line_refers_to_leaked": True,
        },
        printed={
            "raised": "builtins.Exception",
            "first_line": _LEAK_REPORT,
            "tracer_referred_to_by_list": True,
            "list_referred_to_by_global_leaked": True,
        },
    ),
    notes="Asserted, as the chapter asserts: `type(e) is Exception`, the first line starts `Leaked trace`, and "
    "some line contains both `is referred to by` and `leaked`. Printed: the class, the whole first line, "
    "and the shape of the two chain lines it prints (`<DynamicJaxprTracer id> is referred to by <list "
    "id>[0]`, `<list id> is referred to by <module>.leaked`). The chapter's list is __main__.leaked; here "
    "it is the case module's global `leaked`, so the chain ends at `<module>.leaked`. The ids vary and "
    "are details.",
)
def leak_checker_report():
    import re

    import jax
    import jax.numpy as jnp

    checking_leaks = require("jax.checking_leaks")

    def leaky_fn(x):
        leaked.append(x)
        return x + 1

    jax.clear_caches()
    try:
        with checking_leaks():
            outcome = outcome_of(lambda: jax.jit(leaky_fn)(jnp.float32(1.0)))
    finally:
        leaked.clear()
    lines = str(outcome.exception).splitlines() if outcome.exception is not None else []
    cls = type(outcome.exception)
    return Observation(
        {
            "type_is_Exception": cls is Exception,
            "first_line_starts_with_Leaked_trace": bool(lines) and lines[0].startswith("Leaked trace"),
            "a_line_refers_to_leaked": any("is referred to by" in line and "leaked" in line for line in lines),
            "raised": f"{cls.__module__}.{cls.__qualname__}" if outcome.exception is not None else None,
            "first_line": lines[0] if lines else None,
            "tracer_referred_to_by_list": any(
                re.fullmatch(r"<DynamicJaxprTracer \d+> is referred to by <list \d+>\[0\]", line) for line in lines
            ),
            "list_referred_to_by_global_leaked": any(
                re.fullmatch(r"<list \d+> is referred to by [\w.]+\.leaked", line) for line in lines
            ),
        },
        {"referrer_lines": [line for line in lines if "is referred to by" in line], "message": _full_message(outcome)},
    )


@SECTION.case(
    subsection="4.6",
    rows=["tracers.leak.cache_hit_unchecked"],
    claim="The leak check runs only when tracing finishes: a leaky jit function that is already cached passes "
    "unchecked, and after clear_caches() the retrace reports the leak.",
    expect=Expect(
        {"cache_hit": "no error", "after_clear_caches_starts_with_error_Leaked_trace": True},
        printed={"after_clear_caches": f"error: {_LEAK_REPORT}"},
    ),
    notes="Asserted, as the chapter asserts: the cache hit gives `no error`, and after clear_caches() the "
    "report starts `error: Leaked trace`; that report is also the positive control that the checker "
    "was live for the silent cache hit. Printed: the whole first line of the report.",
)
def leak_cache_hit_unchecked():
    import jax
    import jax.numpy as jnp

    checking_leaks = require("jax.checking_leaks")

    def leaky_double(x):
        leaked.append(x)
        return x * 2

    leaky_jit = jax.jit(leaky_double)
    jax.clear_caches()
    leaky_jit(jnp.float32(1.0))  # traced and cached with the check off

    def under_check():
        with checking_leaks():
            outcome = outcome_of(lambda: leaky_jit(jnp.float32(2.0)))
        return f"error: {outcome.message}" if outcome.exception is not None else "no error"

    try:
        cached = under_check()
        jax.clear_caches()
        cleared = under_check()
    finally:
        leaked.clear()
    return Observation(
        {
            "cache_hit": cached,
            "after_clear_caches_starts_with_error_Leaked_trace": cleared.startswith("error: Leaked trace"),
            "after_clear_caches": cleared,
        }
    )
