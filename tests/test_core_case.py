"""The case API's own tests (conformance/core/case.py): each refusal's whole one-line message, each field's
accepted and refused forms, `Change`'s release validation, the nonfinite encoding of expectations, and how
`Section.case` builds and registers a case.

The validation messages are user-facing (a case author reads them instead of a traceback), so the tests
compare them whole. Cases are declared in-test under throwaway module names and dropped from the registry
afterwards.
"""

from __future__ import annotations

import importlib
import inspect
import math
import sys
import textwrap
import types
from types import MappingProxyType

import pytest

from conformance.core import case as case_module
from conformance.core import rowlist
from conformance.core.case import (
    DEFAULT_CASE_PACKAGE,
    Case,
    CaseDeclarationError,
    Change,
    Expect,
    Observation,
    Param,
    Section,
    Skip,
    case_modules,
    find_case,
    folder_namespace,
    forget_package,
    import_failure,
    load_module_cases,
    namespaced_row,
    section_order,
    validate,
)
from conformance.core.observation import encode_nonfinite

SECTION = Section("§7", "Core case tests")
ROW = "setup.environment"
ROW2 = sorted(rowlist.row_ids() - {ROW})[0]
MODULE = "conformance.cases.scratch_core"
WHERE = "scratch_core.probe"


@pytest.fixture(autouse=True)
def _scratch_registry():
    """Drop what a test registered under the scratch names, and any fake module it installed."""
    yield
    for key in [
        k for k in case_module._REGISTRY if k[1].startswith("scratch_core.") or k[0] in ("scratchpkg", "scratchtop")
    ]:
        del case_module._REGISTRY[key]
    for name in (MODULE, "scratchpkg", "scratchpkg.mod"):
        sys.modules.pop(name, None)


def make_probe(name: str = "probe", nargs: int = 0, module: str = MODULE):
    """A probe function called `name` taking `nargs` required arguments, declared in `module`."""
    if nargs:

        def probe(p):
            return Observation({"p": p})
    else:

        def probe():
            return Observation({})

    probe.__name__ = name
    probe.__module__ = module
    return probe


def declare(probe=None, keep=False, **kwargs):
    """Declare a case with `kwargs` (a claim and a plain expectation unless given) and return it from the registry.

    A case of the same id declared before is dropped first, unless `keep`.
    """
    fields = {"claim": "A claim."}
    if "params" not in kwargs:
        fields.update(rows=[ROW], expect=Expect({}))
    fields.update(kwargs)
    function = probe or make_probe(nargs=1 if "params" in kwargs else 0)
    package, _, short = function.__module__.rpartition(".")
    namespace = folder_namespace(package)
    case_id = f"{namespace}/{short}.{function.__name__}" if namespace else f"{short}.{function.__name__}"
    key = (package or DEFAULT_CASE_PACKAGE, case_id)
    if not keep:
        case_module._REGISTRY.pop(key, None)
    returned = SECTION.case(**fields)(function)
    assert returned is function
    return case_module._REGISTRY[key]


def refusal(message: str, **kwargs) -> None:
    """Declaring `kwargs` is refused with exactly `message` (prefixed by the case id)."""
    with pytest.raises(CaseDeclarationError) as excinfo:
        declare(**kwargs)
    assert str(excinfo.value) == message


def change(**kwargs) -> Change:
    fields = {"why": "It changed.", "evidence": "CHANGELOG 0.8.0: it changed", "since": "0.8.0"}
    fields.update(kwargs)
    return Change(**fields)


# --- params=, rows=, expect= -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields", [{"rows": [ROW]}, {"expect": Expect({})}, {"known_issue": True}, {"known_issue": ("*-cuda",)}]
)
def test_rows_expect_and_known_issue_beside_params_are_refused(fields):
    refusal(
        f"{WHERE}: give rows, expect and known_issue inside each Param, not beside params=",
        params=[Param("a", [ROW], Expect({}))],
        **fields,
    )


@pytest.mark.parametrize(
    "params, kind",
    [("ab", "str"), (b"ab", "bytes"), ({"a": 1}, "dict"), (5, "int"), (MappingProxyType({}), "mappingproxy")],
)
def test_params_must_be_a_list(params, kind):
    refusal(f"{WHERE}: params= takes a list of Param, not {kind}", params=params)


def test_params_must_not_be_empty():
    refusal(f"{WHERE}: params= is empty", params=[])
    refusal(f"{WHERE}: params= is empty", params=())


def test_params_must_hold_params():
    refusal(f"{WHERE}: params= holds 'a', not a Param", params=[Param("a", [ROW], Expect({})), "a"])


@pytest.mark.parametrize("name", ["", "a b", "a=b", "a[1]", 5, None, "é"])
def test_parameter_names_are_one_k_word(name):
    refusal(
        f"{WHERE}: parameter name {name!r} must be a non-empty word of letters, digits, _ . - "
        f"(it is part of a `-k` selection)",
        params=[Param(name, [ROW], Expect({}))],
    )


def test_a_parameter_name_of_every_allowed_character_is_accepted():
    built = declare(params=[Param("aZ0_.-9", [ROW], Expect({})), Param("b", [ROW], Expect({}))])
    assert built.param_names == ("aZ0_.-9", "b")
    assert isinstance(built.params, tuple)


@pytest.mark.parametrize("fields", [{"rows": None}, {"expect": None}])
def test_a_case_without_params_needs_rows_and_expect(fields):
    refusal(f"{WHERE}: a case without params= needs rows= and expect=", **fields)


def test_a_case_without_params_is_one_unnamed_param_with_its_fields():
    expect = Expect({"x": 1})
    built = declare(rows=[ROW, ROW2], expect=expect, known_issue=("*-cuda",))
    assert built.params == (Param("", (ROW, ROW2), expect, ("*-cuda",)),)
    assert built.param_names == ("",)
    assert built.all_rows == (ROW, ROW2)


# --- claim=, notes=, discrepancy=, stdin=, label= -----------------------------------------------------------


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"claim": None}, "claim= takes one sentence, not NoneType"),
        ({"notes": 1}, "notes= takes a string, not int"),
        ({"discrepancy": None}, "discrepancy= takes what was measured and why, as a sentence, not NoneType"),
        ({"stdin": 3}, "stdin= takes text (a str), not int"),
    ],
)
def test_a_text_field_of_the_wrong_type_is_refused(fields, message):
    refusal(f"{WHERE}: {message}", **fields)


@pytest.mark.parametrize(
    "param, message",
    [
        (Param("a", [ROW], Expect({}), label=5), "label= takes a string, not int"),
        (Param("a", [ROW], Expect({}), label=None), "label= takes a string, not NoneType"),
        (Param("a", [ROW], Expect({}), stdin=1.5), "stdin= takes text (a str), not float"),
        (
            Param("a", [ROW], Expect({}), discrepancy=None),
            "discrepancy= takes what was measured and why, as a sentence, not NoneType",
        ),
    ],
)
def test_a_parameters_text_field_of_the_wrong_type_is_refused(param, message):
    refusal(f"{WHERE}[a]: {message}", params=[param])


def test_text_fields_are_kept_and_stdin_may_be_none():
    built = declare(
        params=[Param("a", [ROW], Expect({}), stdin=None, label="L"), Param("b", [ROW], Expect({}), stdin="own")],
        stdin="case",
        notes="N",
        discrepancy="D",
        fresh_interpreter="R",
        timeout_s=7,
    )
    assert (built.stdin, built.notes, built.discrepancy, built.fresh_interpreter, built.timeout_s) == (
        "case",
        "N",
        "D",
        "R",
        7,
    )
    assert built.stdin_for("a") == "case" and built.stdin_for("b") == "own"
    assert built.param("a").label == "L"
    assert declare(stdin=None).stdin is None


# --- timeout_s= ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [True, False, 0, -1, 0.0, math.nan, math.inf, -math.inf, "60", None])
def test_timeout_must_be_a_finite_number_above_zero(timeout):
    refusal(f"{WHERE}: timeout_s= takes a finite number of seconds above 0, not {timeout!r}", timeout_s=timeout)


@pytest.mark.parametrize("timeout", [1, 0.001, 600.5])
def test_a_positive_timeout_is_accepted(timeout):
    assert declare(timeout_s=timeout).timeout_s == timeout


def test_the_default_timeout_is_two_minutes():
    assert declare().timeout_s == 120.0


# --- env= ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("env, kind", [(["A=1"], "list"), ("A=1", "str"), (5, "int")])
def test_env_must_be_a_mapping(env, kind):
    refusal(f"{WHERE}: env= takes a mapping of variable names to strings, not {kind}", env=env)


@pytest.mark.parametrize("name", [1, "", "A=B", "A\0", None])
def test_env_variable_names_are_non_empty_strings_without_equals(name):
    refusal(f"{WHERE}: env= has the variable name {name!r}; names are non-empty strings without '='", env={name: "1"})


@pytest.mark.parametrize("value", [1, None, "a\0b", b"x"])
def test_env_values_are_strings(value):
    refusal(f"{WHERE}: env= sets A to {value!r}; values are strings (write {str(value)!r})", env={"A": value})


def test_a_parameters_env_is_checked_too():
    refusal(
        f"{WHERE}[a]: env= has the variable name ''; names are non-empty strings without '='",
        params=[Param("a", [ROW], Expect({}), env={"": "1"})],
    )
    refusal(
        f"{WHERE}[a]: env= takes a mapping of variable names to strings, not list",
        params=[Param("a", [ROW], Expect({}), env=["A=1"])],
    )


def test_env_is_kept_as_a_plain_dict_and_none_is_empty():
    built = declare(env=MappingProxyType({"A": "1", "B": ""}))
    assert type(built.env) is dict and built.env == {"A": "1", "B": ""}
    assert declare(env=None).env == {}
    assert declare().env == {}


def test_a_parameters_env_goes_on_top_of_the_cases():
    built = declare(env={"A": "case", "B": "case"}, params=[Param("a", [ROW], Expect({}), env={"B": "own"})])
    assert built.env_for("a") == {"A": "case", "B": "own"}


# --- rows= --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows, kind", [("a.b", "str"), (b"a.b", "bytes"), (5, "int"), ({ROW}, "set")])
def test_rows_must_be_a_list(rows, kind):
    refusal(f"{WHERE}: rows= takes a list of row IDs, not {kind} (write rows=[{rows!r}])", rows=rows)


@pytest.mark.parametrize("row", [1, "", "  ", None])
def test_row_ids_are_non_empty_strings(row):
    refusal(f"{WHERE}: rows= holds {row!r}; row IDs are non-empty strings", rows=[ROW, row])


def test_a_parameter_without_rows_is_refused():
    refusal(f"{WHERE}: names no row ID", rows=[])
    refusal(f"{WHERE}[a]: names no row ID", params=[Param("a", (), Expect({}))])


def test_an_unknown_row_is_refused_in_the_suites_package():
    refusal(
        f"{WHERE}[a]: row 'no.such.row' is not in the project's row list ({rowlist.ROWS_FILE.name})",
        params=[Param("a", [ROW, "no.such.row"], Expect({}))],
    )


# --- expect= ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("expect, kind", [("x", "str"), ({"x": 1}, "dict"), (None, "NoneType")])
def test_a_parameters_expect_must_be_an_expect(expect, kind):
    refusal(f"{WHERE}[a]: expect= must be an Expect, not {kind}", params=[Param("a", [ROW], expect)])


def test_a_cases_expect_must_be_an_expect():
    refusal(f"{WHERE}: expect= must be an Expect, not dict", expect={"x": 1})


@pytest.mark.parametrize(
    "expect, message",
    [
        (Expect([1]), "Expect(facts) takes a mapping of fact names to JSON values, not list"),
        (Expect({}, printed="x"), "Expect(printed=) takes a mapping of fact names to JSON values, not str"),
        (Expect({}, platforms=["*-cuda"]), "Expect(platforms=) takes a mapping of platform patterns, not list"),
        (
            Expect({}, platforms={1: {}}),
            "Expect(platforms=) has the pattern 1; patterns are strings such as 'darwin-arm64' or '*-cuda'",
        ),
        (
            Expect({}, platforms={"": {}}),
            "Expect(platforms=) has the pattern ''; patterns are strings such as 'darwin-arm64' or '*-cuda'",
        ),
        (
            Expect({}, platforms={"*-cuda": [1]}),
            "Expect(platforms={'*-cuda': ...}) takes a mapping of fact names to JSON values, not list",
        ),
        (Expect({"x": {1: 2}}), "Expect(facts) is not plain JSON: it has the key 1 at x; JSON keys are strings"),
    ],
)
def test_a_wrong_expectation_is_refused(expect, message):
    refusal(f"{WHERE}: {message}", expect=expect)


def test_a_skip_override_is_accepted_and_skips_the_platform():
    built = declare(
        expect=Expect({"x": 1}, platforms={"darwin-*": Skip("no GPU"), "*-cuda": {"x": 2}}, printed={"msg": "a"})
    )
    assert built.expected("", "darwin-arm64") == Skip("no GPU")
    assert built.expected_printed("", "darwin-arm64") == {}
    assert built.expected("", "linux-x86_64-cuda") == {"x": 2}
    assert built.expected("", "linux-x86_64") == {"x": 1}
    assert built.expected_printed("", "linux-x86_64") == {"msg": "a"}


@pytest.mark.parametrize("both, message", [(["x"], "x is declared"), (["a", "b"], "a, b is declared")])
def test_a_fact_in_both_tiers_is_refused_naming_each(both, message):
    facts = {k: 1 for k in both}
    refusal(
        f"{WHERE}: {message} both asserted (facts) and printed; a fact belongs to one tier",
        expect=Expect({**facts, "only": 1}, printed={"p": 1, **dict(reversed(list(facts.items())))}),
    )


# --- platform patterns --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "patterns, pair",
    [
        (["linux-x86_64", "linux-*"], ("linux-x86_64", "linux-*")),
        (["*-cuda", "linux-*"], ("*-cuda", "linux-*")),
        (["plat-a", "plat-*"], ("plat-a", "plat-*")),  # found only by trying each pattern's literal text
        (["plat-*", "plat-a", "other"], ("plat-*", "plat-a")),
        (["plat-X", "plat-*"], ("plat-X", "plat-*")),  # a literal pattern holding any letter is tried too
    ],
)
def test_overlapping_platform_patterns_are_refused(patterns, pair):
    refusal(
        f"{WHERE}: platform patterns {pair[0]!r} and {pair[1]!r} overlap",
        expect=Expect({}, platforms={p: {} for p in patterns}),
    )


@pytest.mark.parametrize(
    "patterns", [["linux-*", "darwin-*"], ["plat-a", "plat-b"], ["*-cuda", "*-rocm", "*-tpu"], ["plat-?", "other-?"]]
)
def test_patterns_that_share_no_platform_are_accepted(patterns):
    built = declare(expect=Expect({}, platforms={p: {} for p in patterns}))
    assert list(built.param("").expect.platforms) == patterns


# --- known_issue= -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("known", [["*-cuda"], "*-cuda"])
def test_known_issue_takes_true_or_a_tuple(known):
    refusal(
        f"{WHERE}[a]: known_issue= takes True or a tuple of platform patterns",
        params=[Param("a", [ROW], Expect({}), known_issue=known)],
    )


def test_known_issue_everywhere_or_on_some_platforms():
    built = declare(
        params=[
            Param("all", [ROW], Expect({}), known_issue=True),
            Param("cuda", [ROW], Expect({}), known_issue=("*-cuda", "darwin-*")),
            Param("none", [ROW], Expect({})),
        ]
    )
    assert built.has_known_issue
    assert built.is_known_issue("all") is True and built.is_known_issue("all", "linux-x86_64") is True
    assert built.is_known_issue("none") is False and built.is_known_issue("none", "linux-x86_64-cuda") is False
    assert built.is_known_issue("cuda") is True
    assert built.is_known_issue("cuda", "linux-x86_64-cuda") is True
    assert built.is_known_issue("cuda", "darwin-arm64") is True
    assert built.is_known_issue("cuda", "linux-x86_64") is False
    assert not declare().has_known_issue


# --- the probe, the claim, the parameters -------------------------------------------------------------------


def test_a_parameter_declared_twice_is_refused_listing_them():
    refusal(
        f"{WHERE}: a parameter is declared twice (a, b, a)",
        params=[Param("a", [ROW], Expect({})), Param("b", [ROW], Expect({})), Param("a", [ROW], Expect({}))],
    )


@pytest.mark.parametrize("claim", ["", "   "])
def test_an_empty_claim_is_refused(claim):
    refusal(f"{WHERE}: the claim is empty", claim=claim)


@pytest.mark.parametrize("name", ["test", "test_probe", "tests"])
def test_a_probe_name_must_not_start_with_test(name):
    with pytest.raises(CaseDeclarationError) as excinfo:
        declare(make_probe(name))
    assert str(excinfo.value) == (
        f"scratch_core.{name}: a probe name must not start with 'test' (pytest would collect it as a test of its own)"
    )


def test_a_probe_name_with_test_inside_is_accepted():
    assert declare(make_probe("probe_test")).id == "scratch_core.probe_test"


@pytest.mark.parametrize(
    "fields",
    [
        {"fresh_interpreter": True},
        {"params": [Param("a", [ROW], Expect({}), fresh_interpreter=None)]},
    ],
)
def test_fresh_interpreter_takes_a_reason(fields):
    refusal(f"{WHERE}: fresh_interpreter= takes the reason, as a sentence", **fields)


def test_fresh_interpreter_reason_of_the_parameter_or_the_case():
    built = declare(
        fresh_interpreter="case reason",
        params=[Param("a", [ROW], Expect({})), Param("b", [ROW], Expect({}), fresh_interpreter="own")],
    )
    assert built.fresh_interpreter_reason("a") == "case reason" and built.needs_fresh_interpreter("a")
    assert built.fresh_interpreter_reason("b") == "own"
    assert not declare().needs_fresh_interpreter("")


def test_a_probe_without_params_takes_no_argument():
    with pytest.raises(CaseDeclarationError) as excinfo:
        declare(make_probe(nargs=1))
    assert str(excinfo.value) == f"{WHERE}: the probe takes 1 required argument(s) but should take no argument"


def test_a_parametrised_probe_takes_the_parameter():
    with pytest.raises(CaseDeclarationError) as excinfo:
        declare(make_probe(nargs=0), params=[Param("a", [ROW], Expect({}))])
    assert str(excinfo.value) == (
        f"{WHERE}: the probe takes 0 required argument(s) but should take one argument, the parameter"
    )


def test_optional_keyword_only_and_star_arguments_are_not_required():
    def probe(p, q=1, *args, r, **kwargs):
        return Observation({"p": p})

    probe.__module__ = MODULE
    with pytest.raises(CaseDeclarationError, match="takes 1 required argument"):
        declare(probe)

    def probe(p, q=1, *args, r=2, **kwargs):  # noqa: F811 - the same name, declared again
        return Observation({"p": p})

    probe.__module__ = MODULE
    built = declare(probe, params=[Param("a", [ROW], Expect({}))])
    assert built.run_probe("a") == Observation({"p": "a"})


def test_a_probe_without_a_signature_is_not_refused_for_its_arguments():
    built = declare()
    # A callable whose signature cannot be read (a builtin) is left to fail when it runs.
    with pytest.raises(ValueError):
        inspect.signature(max)
    validate(Case(built.id, "§7", "h", "A claim.", built.params, probe=max))
    not_callable = types.SimpleNamespace(__name__="probe")
    with pytest.raises(TypeError):
        inspect.signature(not_callable)
    validate(Case(built.id, "§7", "h", "A claim.", built.params, probe=not_callable))


def test_the_probe_runs_with_its_parameter_or_none():
    assert declare().run_probe("") == Observation({})
    assert declare(params=[Param("a", [ROW], Expect({}))]).run_probe("a") == Observation({"p": "a"})


# --- changes= -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, kind", [("x", "str"), (b"x", "bytes"), ({"a": 1}, "dict"), (5, "int"), (change(), "Change")]
)
def test_changes_must_be_a_list(changes, kind):
    refusal(f"{WHERE}: changes= takes a list of Change, not {kind}", changes=changes)


def test_changes_must_hold_changes():
    refusal(f"{WHERE}: changes= holds 'x', not a Change", changes=[change(), "x"])


@pytest.mark.parametrize(
    "name, value, kind",
    [("why", 1, "int"), ("evidence", None, "NoneType"), ("since", 0.8, "float"), ("versions", None, "NoneType")],
)
def test_change_fields_are_strings(name, value, kind):
    refusal(f"{WHERE}: Change({name}=) takes a string, not {kind}", changes=[change(**{name: value})])


@pytest.mark.parametrize("fields", [{"why": ""}, {"why": "  "}, {"evidence": ""}, {"evidence": "\t"}])
def test_a_change_needs_why_and_evidence(fields):
    refusal(
        f"{WHERE}: a Change needs why= (one sentence) and evidence= (a JAX source line, a CHANGELOG entry or "
        f"a measurement)",
        changes=[change(**fields)],
    )


@pytest.mark.parametrize("fields", [{"since": ""}, {"versions": "0.7.2..0.8.0"}])
def test_a_change_takes_exactly_one_of_since_and_versions(fields):
    refusal(f"{WHERE}: a Change takes either since='0.8.0' or versions='0.7.2..0.8.0'", changes=[change(**fields)])


@pytest.mark.parametrize("since", ["v0.8.0", "0.8.0rc1", "0.8.", ".8", "0..8", "latest", " 0.8.0"])
def test_since_must_be_a_release(since):
    refusal(f"{WHERE}: Change(since={since!r}) is not a release such as '0.8.0'", changes=[change(since=since)])


@pytest.mark.parametrize(
    "versions",
    [
        "0.7.2-0.8.0",
        "0.7.2..",
        "..0.8.0",
        "a..0.8.0",
        "0.7.2..b",
        "0.8.0..0.8.0",
        "0.8..0.8.0",
        "0.8.0..0.8",
        "0.8.1..0.8.0",
        "0.10.0..0.9.0",
        "0.7.2..0.8.0rc1",
        "0.7.2...0.8.0",
        "1..1.0",
        "1.0..1",
    ],
)
def test_versions_must_be_two_releases_the_older_first(versions):
    refusal(
        f"{WHERE}: Change(versions={versions!r}) is not 'OLD..NEW', two releases, the older first, such as "
        f"'0.7.2..0.8.0'",
        changes=[change(since="", versions=versions)],
    )


@pytest.mark.parametrize(
    "versions, bounds",
    [
        ("0.7.2..0.8.0", ("0.7.2", "0.8.0")),
        ("0.9.0..0.10.0", ("0.9.0", "0.10.0")),
        ("0.8.0..0.8.0.1", ("0.8.0", "0.8.0.1")),
        ("0.8..0.8.1", ("0.8", "0.8.1")),
    ],
)
def test_versions_in_order_are_accepted(versions, bounds):
    built = declare(changes=[change(since="", versions=versions)])
    assert built.changes[0].bounds == bounds
    assert built.changes[0].range_text == f"after {bounds[0]}, by {bounds[1]}"


@pytest.mark.parametrize("since", ["0.8.0", "1", "0.8.0.1"])
def test_since_a_release_is_accepted(since):
    built = declare(changes=[change(since=since)])
    assert built.changes[0].bounds == ("", since)
    assert built.changes[0].range_text == f"in {since}"


@pytest.mark.parametrize("params", ["a", b"a", 5, None])
def test_change_params_is_a_tuple_of_names(params):
    refusal(
        f"{WHERE}: Change(params=) takes a tuple of parameter names",
        params=[Param("a", [ROW], Expect({}))],
        changes=[change(params=params)],
    )


def test_a_cases_change_names_its_own_parameters():
    refusal(
        f"{WHERE}: Change(params=) names 'c', which is not a parameter of the case",
        params=[Param("a", [ROW], Expect({})), Param("b", [ROW], Expect({}))],
        changes=[change(params=("a", "c", "d"))],
    )


def test_a_parameters_change_names_no_parameter():
    refusal(
        f"{WHERE}[a]: Change(params=) names 'a', but a Change on a Param applies to that Param only",
        params=[Param("a", [ROW], Expect({}), changes=[change(params=("a",))])],
    )


def test_a_parameters_changes_are_checked():
    refusal(
        f"{WHERE}[a]: changes= takes a list of Change, not str", params=[Param("a", [ROW], Expect({}), changes="x")]
    )
    refusal(
        f"{WHERE}[a]: Change(since='x') is not a release such as '0.8.0'",
        params=[Param("a", [ROW], Expect({}), changes=[change(since="x")])],
    )


def test_every_change_of_a_list_is_checked():
    refusal(
        f"{WHERE}: a Change takes either since='0.8.0' or versions='0.7.2..0.8.0'", changes=[change(), change(since="")]
    )


def test_changes_apply_to_the_parameters_they_name():
    everywhere, only_b, own = change(why="all."), change(why="b.", params=("b",)), change(why="own.")
    built = declare(
        params=[Param("a", [ROW], Expect({})), Param("b", [ROW], Expect({}), changes=[own])],
        changes=[everywhere, only_b],
    )
    assert built.changes == (everywhere, only_b)
    assert built.changes_for("a") == (everywhere,)
    assert built.changes_for("b") == (own, everywhere, only_b)


def test_changes_given_as_a_tuple_are_kept():
    one = change()
    assert declare(changes=(one,)).changes == (one,)
    assert declare().changes == ()


# --- the nonfinite encoding of expectations -----------------------------------------------------------------


def test_an_expected_nan_or_inf_is_held_in_its_stored_form():
    expect = Expect(
        {"x": math.nan, "y": [math.inf, 1]},
        printed={"p": -math.inf},
        platforms={"*-cuda": {"x": math.inf}, "darwin-*": Skip("no")},
    )
    assert expect.facts == encode_nonfinite({"x": math.nan, "y": [math.inf, 1]})
    assert expect.facts["x"] != math.nan and isinstance(expect.facts["x"], dict)
    assert expect.printed == encode_nonfinite({"p": -math.inf})
    assert expect.platforms == {"*-cuda": encode_nonfinite({"x": math.inf}), "darwin-*": Skip("no")}
    declare(expect=expect)


def test_a_finite_expectation_is_kept_as_given():
    facts, printed = MappingProxyType({"x": 1.5}), MappingProxyType({"p": "a"})
    override = MappingProxyType({"x": 2})
    expect = Expect(facts, printed=printed, platforms={"*-cuda": override})
    assert expect.facts is facts and expect.printed is printed and expect.platforms["*-cuda"] is override


def test_a_value_wrong_otherwise_is_left_for_the_declaration_check():
    wrong = {"x": math.nan, "y": object()}
    assert Expect(wrong).facts is wrong
    listed = [math.nan]
    assert Expect(listed).facts is listed
    platforms = [("*-cuda", {})]
    assert Expect({}, platforms=platforms).platforms is platforms


# --- Section.case: what it builds and registers -------------------------------------------------------------


def test_section_case_builds_the_case_from_its_declaration():
    built = declare(claim="The claim.", notes="n")
    assert built.id == WHERE
    assert built.section == "§7"
    assert built.heading == "§7 Core case tests" == SECTION.label
    assert built.claim == "The claim."
    assert built.package == DEFAULT_CASE_PACKAGE
    assert built.cell_id("") == WHERE
    assert declare().notes == "" and declare().discrepancy == "" and declare().discrepancy_note("") == ""
    assert built.rows("") == (ROW,)


def test_a_subsection_refines_the_section():
    assert declare(subsection="7.2").section == "§7.2"


def test_a_folder_case_has_namespaced_id_and_rows(monkeypatch):
    probe = make_probe(nargs=1, module="scratchpkg.mod")
    built = declare(probe, params=[Param("a", ["any.row", "scratchpkg.own"], Expect({}))])
    assert built.id == "scratchpkg/mod.probe"
    assert built.package == "scratchpkg"
    assert built.rows("a") == ("scratchpkg.any.row", "scratchpkg.own")
    assert built.cell_id("a") == "scratchpkg/mod.probe[a]"
    assert isinstance(built.params[0].rows, tuple)


def test_a_top_level_module_is_registered_under_the_default_package():
    probe = make_probe(module="scratchtop")
    SECTION.case(claim="c.", rows=[ROW], expect=Expect({}))(probe)
    built = case_module._REGISTRY.pop((DEFAULT_CASE_PACKAGE, "scratchtop.probe"))
    assert built.package == DEFAULT_CASE_PACKAGE and built.id == "scratchtop.probe"
    with pytest.raises(CaseDeclarationError, match="row 'no.row' is not in the project's row list"):
        SECTION.case(claim="c.", rows=["no.row"], expect=Expect({}))(probe)


def test_the_registered_case_is_found_by_its_module_and_id():
    sys.modules[MODULE] = types.ModuleType(MODULE)
    first = declare(params=[Param("a", [ROW], Expect({}))])
    second = declare(make_probe("other"))
    assert load_module_cases(MODULE) == [first, second]
    assert find_case("scratch_core.other") is second
    with pytest.raises(KeyError) as excinfo:
        find_case("scratch_core.missing")
    assert excinfo.value.args[0] == "no case 'scratch_core.missing' in conformance.cases"
    # Only the text before the first dot names the module: a longer id is a case the module lacks.
    with pytest.raises(KeyError) as excinfo:
        find_case("scratch_core.other.more")
    assert excinfo.value.args[0] == "no case 'scratch_core.other.more' in conformance.cases"


def test_a_folder_case_is_found_by_its_namespaced_id():
    sys.modules["scratchpkg"] = types.ModuleType("scratchpkg")
    sys.modules["scratchpkg.mod"] = types.ModuleType("scratchpkg.mod")
    built = declare(make_probe(module="scratchpkg.mod"), rows=["r"])
    assert find_case("scratchpkg/mod.probe", package="scratchpkg") is built


def test_a_second_probe_with_the_same_name_is_refused():
    def probe():
        return Observation({})

    probe.__module__ = MODULE
    declare(probe)
    declare(probe, keep=True)  # the same probe again (a module imported twice) replaces itself

    def probe():  # noqa: F811 - a second probe with the same name
        return Observation({"second": True})

    probe.__module__ = MODULE
    with pytest.raises(CaseDeclarationError) as excinfo:
        declare(probe, keep=True)
    assert str(excinfo.value) == (
        f"{WHERE}: declared twice in conformance.cases (a second probe with the same "
        f"name replaces the first); rename one"
    )


def test_the_same_name_in_another_file_is_refused(tmp_path):
    probe = make_probe()
    declare(probe)
    source = tmp_path / "elsewhere.py"
    source.write_text("\n" * (probe.__code__.co_firstlineno - 1) + "def probe():\n    return None\n")
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    other = namespace["probe"]
    other.__module__ = MODULE
    assert other.__code__.co_firstlineno == probe.__code__.co_firstlineno
    with pytest.raises(CaseDeclarationError, match="declared twice in conformance.cases"):
        declare(other, keep=True)


def test_a_case_failing_validation_is_not_registered():
    with pytest.raises(CaseDeclarationError):
        declare(claim="")
    assert (DEFAULT_CASE_PACKAGE, WHERE) not in case_module._REGISTRY


# --- Case helpers -------------------------------------------------------------------------------------------


def test_param_of_an_unknown_name_is_a_key_error():
    built = declare(params=[Param("a", [ROW], Expect({}))])
    assert built.param("a").name == "a"
    with pytest.raises(KeyError) as excinfo:
        built.param("b")
    assert excinfo.value.args[0] == f"{WHERE} has no parameter 'b'"


def test_source_is_the_probes_text_or_empty():
    built = declare()
    assert built.source().lstrip().startswith("def probe():")
    assert Case("x.y", "§1", "h", "c.", built.params, probe=print).source() == ""
    assert Case("x.y", "§1", "h", "c.", built.params, probe=eval("lambda: 1")).source() == ""


def test_discrepancy_of_the_parameter_or_the_case():
    built = declare(
        discrepancy="case", params=[Param("a", [ROW], Expect({})), Param("b", [ROW], Expect({}), discrepancy="own")]
    )
    assert built.discrepancy_note("a") == "case" and built.discrepancy_note("b") == "own"


# --- packages, modules, order -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "package, namespace", [("teamcases", "teamcases"), ("a.b", ""), ("", ""), (DEFAULT_CASE_PACKAGE, "")]
)
def test_folder_namespace(package, namespace):
    assert folder_namespace(package) == namespace


@pytest.mark.parametrize("row, expected", [("a.b", "ns.a.b"), ("ns.a", "ns.a"), ("nsx.a", "ns.nsx.a"), ("ns", "ns.ns")])
def test_namespaced_row(row, expected):
    assert namespaced_row("ns", row) == expected


def test_section_order_compares_numbers_as_numbers():
    assert section_order("§10.2") == [(1, "§"), (0, 10), (1, "."), (0, 2), (1, "")]
    assert sorted(["§10", "§5.3", "§5", "§5.10", "§A"], key=section_order) == ["§5", "§5.3", "§5.10", "§10", "§A"]


def test_case_modules_lists_the_case_files_in_name_order(tmp_path, monkeypatch):
    package = tmp_path / "scratchmods"
    package.mkdir()
    for name in ("__init__", "zeta", "alpha", "_private", "helpers", "helpers2"):
        (package / f"{name}.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert case_modules("scratchmods") == ["scratchmods.alpha", "scratchmods.helpers2", "scratchmods.zeta"]
    finally:
        sys.modules.pop("scratchmods", None)


def test_forget_package_drops_its_cases_and_modules():
    probe = make_probe(module="scratchpkg.mod")
    declare(probe, rows=["r"])
    kept = types.ModuleType("scratchpkgother")
    for name in ("scratchpkg", "scratchpkg.mod", "scratchpkgother"):
        sys.modules[name] = kept if name == "scratchpkgother" else types.ModuleType(name)
    other_key = (DEFAULT_CASE_PACKAGE, WHERE)
    declare()
    try:
        forget_package("scratchpkg")
        assert not [k for k in case_module._REGISTRY if k[0] == "scratchpkg"]
        assert "scratchpkg" not in sys.modules and "scratchpkg.mod" not in sys.modules
        assert sys.modules["scratchpkgother"] is kept
        assert other_key in case_module._REGISTRY
    finally:
        sys.modules.pop("scratchpkgother", None)


# --- import_failure -----------------------------------------------------------------------------------------


def _raised(exc: BaseException) -> tuple[BaseException, int]:
    try:
        raise exc
    except BaseException as caught:  # noqa: BLE001
        return caught, caught.__traceback__.tb_lineno


def test_import_failure_is_type_first_line_and_where():
    exc, line = _raised(ValueError("first line\nsecond line"))
    assert import_failure(exc) == f"ValueError: first line ({__file__}:{line})"


def test_import_failure_without_text_is_the_type():
    exc, line = _raised(KeyboardInterrupt())
    assert import_failure(exc) == f"KeyboardInterrupt ({__file__}:{line})"
    exc, line = _raised(ValueError("  \n "))
    assert import_failure(exc) == f"ValueError ({__file__}:{line})"


def test_import_failure_cuts_a_long_first_line():
    exc, line = _raised(RuntimeError("x" * 400))
    assert import_failure(exc) == f"RuntimeError: {'x' * 300} ({__file__}:{line})"


def test_import_failure_without_a_traceback_is_the_line():
    assert import_failure(ValueError(" text ")) == "ValueError: text"


def test_import_failure_of_a_syntax_error_names_the_file_and_line():
    try:
        compile("x = (\n", "broken_case.py", "exec")
    except SyntaxError as exc:
        message = import_failure(exc)
        assert message.startswith("SyntaxError: ") and message.endswith(f" (broken_case.py:{exc.lineno})")
    exc = SyntaxError("bad")
    exc.filename = None
    caught, line = _raised(exc)
    assert import_failure(caught) == f"SyntaxError: bad ({__file__}:{line})"


def test_import_failure_names_the_importing_frame_not_importlibs():
    try:
        importlib.import_module("scratch_no_such_module_anywhere")
    except ModuleNotFoundError as exc:
        line = sys._getframe().f_lineno - 2
        assert import_failure(exc) == (
            f"ModuleNotFoundError: No module named 'scratch_no_such_module_anywhere' ({__file__}:{line})"
        )


def test_import_failure_inside_importlib_only_names_importlibs_frame():
    try:
        importlib.import_module("scratch_no_such_module_anywhere")
    except ModuleNotFoundError as exc:
        frames = exc.__traceback__.tb_next  # drop this test's frame: what is left is all importlib's
        exc.__traceback__ = frames
        message = import_failure(exc)
        assert "importlib" in message and message.startswith("ModuleNotFoundError: No module named")


def test_a_module_that_fails_to_import_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "scratch_failing_case.py").write_text(
        textwrap.dedent("""\
        import os

        raise RuntimeError("broken on purpose")
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(CaseDeclarationError) as excinfo:
        load_module_cases("scratch_failing_case")
    assert str(excinfo.value) == (
        f"scratch_failing_case: the case module failed to import: RuntimeError: broken on "
        f"purpose ({tmp_path / 'scratch_failing_case.py'}:3)"
    )


def test_the_case_api_is_one_import_path_over_the_split_modules():
    """core/case.py re-exports every public name of the model, the checks and the loader (docs/writing-cases.md:
    team case folders import from it), as the same objects, and the registry it exposes is the loader's own."""
    from conformance.core import model, registry, validation

    for module in (model, registry, validation):
        public = {
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and getattr(value, "__module__", module.__name__) == module.__name__
            and not isinstance(value, type(model))
        }
        missing = sorted(name for name in public if getattr(case_module, name, None) is not getattr(module, name))
        assert missing == [], (module.__name__, missing)
    assert set(case_module.__all__) <= set(vars(case_module)) and "Section" in case_module.__all__
    assert case_module._REGISTRY is registry._REGISTRY  # noqa: SLF001
