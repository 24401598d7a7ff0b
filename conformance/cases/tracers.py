"""§4 of the chapter: the tracer error classes and how they relate."""

from conformance.core.case import Expect, Observation, Section

SECTION = Section("§4", "Tracer errors")

_TYPE_ERROR_MRO = ["JAXTypeError", "_JAXErrorMixin", "TypeError"]


def _class_names(classes):
    return [c.__name__ for c in classes]


@SECTION.case(
    rows=["tracers.hierarchy", "tracers.hierarchy.subclassing"],
    claim="Only TracerBoolConversionError derives from ConcretizationTypeError; the integer and array "
          "conversion errors derive from JAXTypeError directly, and all of them are TypeErrors.",
    expect=Expect({
        "mro": {
            "ConcretizationTypeError": _TYPE_ERROR_MRO,
            "TracerBoolConversionError": ["ConcretizationTypeError", "JAXTypeError", "_JAXErrorMixin"],
            "TracerIntegerConversionError": _TYPE_ERROR_MRO,
            "TracerArrayConversionError": _TYPE_ERROR_MRO,
            "NonConcreteBooleanIndexError": ["JAXIndexError", "_JAXErrorMixin", "IndexError"],
            "UnexpectedTracerError": _TYPE_ERROR_MRO,
        },
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
    }),
    notes="The MRO lists are entries 1 to 3 of __mro__, as the chapter prints them. A class missing from "
          "jax.errors is observed as null.",
)
def exception_hierarchy():
    import jax

    errors = jax.errors
    names = ["ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
             "TracerArrayConversionError", "NonConcreteBooleanIndexError", "UnexpectedTracerError"]
    found = {name: getattr(errors, name, None) for name in names}
    jax_type_error = getattr(errors, "JAXTypeError", None)
    concretization = found["ConcretizationTypeError"]

    def derives(name, *bases):
        cls = found[name]
        if cls is None or any(base is None for base in bases):
            return None
        return all(issubclass(cls, base) for base in bases)

    return Observation({
        "mro": {name: _class_names(cls.__mro__[1:4]) if cls else None for name, cls in found.items()},
        "subclass_of_ConcretizationTypeError": {
            name: derives(name, concretization)
            for name in ["TracerBoolConversionError", "TracerIntegerConversionError", "TracerArrayConversionError"]
        },
        "subclass_of_JAXTypeError_and_TypeError": {
            name: derives(name, jax_type_error, TypeError)
            for name in ["ConcretizationTypeError", "TracerIntegerConversionError",
                         "TracerArrayConversionError", "UnexpectedTracerError"]
        },
        "NonConcreteBooleanIndexError_is_IndexError": derives("NonConcreteBooleanIndexError", IndexError),
    })
