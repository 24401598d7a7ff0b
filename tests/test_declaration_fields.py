"""Every declared field of a case is checked at import: a wrong one is one line naming the case and the field.

Issue 19 item 13 (claim, rows, stdin, timeout_s, env, Expect, JSON expectations, printed=,
discrepancy=, a case module that fails to import) and item 16 (parameter names with `=`).
"""

from __future__ import annotations

import math
import textwrap

import pytest

from conformance import cli
from conformance.core.case import CaseDeclarationError, Expect, Observation, Param, Section, forget_package

SECTION = Section("§T", "Field tests")
ROW = "setup.environment"


def declare(probe=None, **kwargs):
    """Declare a throwaway case in the default package namespace."""

    def field_probe():
        return Observation({})

    function = probe or field_probe
    function.__module__ = "conformance.cases.scratch_fields"
    return SECTION.case(**kwargs)(function)


def one_line(excinfo) -> str:
    text = str(excinfo.value)
    assert "\n" not in text and text.startswith("scratch_fields.")
    return text


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"claim": 123}, "claim= takes one sentence, not int"),
        ({"rows": [1, 2]}, "rows= holds 1; row IDs are non-empty strings"),
        ({"rows": "a.b"}, "rows= takes a list of row IDs, not str"),
        ({"stdin": b"bytes"}, r"stdin= takes text \(a str\), not bytes"),
        ({"timeout_s": math.inf}, "timeout_s= takes a finite number of seconds above 0, not inf"),
        ({"timeout_s": 0}, "timeout_s= takes a finite number"),
        ({"timeout_s": "60"}, "timeout_s= takes a finite number"),
        ({"env": {"A": 1}}, "env= sets A to 1; values are strings"),
        ({"env": ["A=1"]}, "env= takes a mapping"),
        ({"expect": Expect([1, 2])}, r"Expect\(facts\) takes a mapping of fact names to JSON values, not list"),
        ({"expect": Expect({"x": [math.nan, object()]})}, r"Expect\(facts\) is not plain JSON: it holds a object at x"),
        ({"expect": Expect({"x": {1, 2}})}, r"Expect\(facts\) is not plain JSON: it holds a set at x"),
        ({"expect": Expect({"x": {1: "a"}})}, r"Expect\(facts\) is not plain JSON: it has the key 1 at x"),
        ({"expect": Expect({}, printed=["wording"])}, r"Expect\(printed=\) takes a mapping"),
        ({"expect": Expect({}, printed={"msg": object()})}, r"Expect\(printed=\) is not plain JSON"),
        ({"expect": Expect({}, platforms={"*-cuda": {"x": b"1"}})}, r"Expect\(platforms=\{'\*-cuda': \.\.\.\}\)"),
        ({"discrepancy": 5}, "discrepancy= takes what was measured and why"),
        ({"notes": ["a"]}, "notes= takes a string"),
    ],
)
def test_a_wrong_field_is_one_line_naming_the_case_and_the_field(fields, message):
    """issue 19 item 13: each of these was a traceback, an opaque cell error or a silent mis-declaration."""
    declared = {"claim": "x.", "rows": [ROW], "expect": Expect({})}
    declared.update(fields)
    with pytest.raises(CaseDeclarationError, match=message) as excinfo:
        declare(**declared)
    one_line(excinfo)


@pytest.mark.parametrize(
    "param, message",
    [
        (Param("a", ROW, Expect({})), r"scratch_fields.probe\[a\]: rows= takes a list of row IDs, not str"),
        (Param("a", [ROW], Expect({}), env={"A": 1}), r"\[a\]: env= sets A to 1"),
        (Param("a", [ROW], Expect({}), stdin=b"x"), r"\[a\]: stdin= takes text"),
        (Param("a", [ROW], Expect({}), discrepancy=None), r"\[a\]: discrepancy= takes what was measured"),
        (Param("a", [ROW], Expect({}, printed={"n": b"x"})), r"\[a\]: Expect\(printed=\) is not plain JSON"),
        (Param("a=b", [ROW], Expect({})), r"parameter name 'a=b' must be a non-empty word of letters, digits, _ \. -"),
    ],
)
def test_a_wrong_parameter_field_names_the_cell(param, message):
    """issue 19 items 13 and 16: a parameter's own fields are checked too; `=` would break the `-k` of its
    reproduce command."""

    def probe(p):
        return Observation({})

    with pytest.raises(CaseDeclarationError, match=message):
        declare(probe=probe, claim="x.", params=[param])


def test_a_reproduce_command_of_an_accepted_parameter_parses_as_a_k_expression():
    """issue 19 item 16: every parameter name that is accepted makes a `-k` pytest can read."""
    from _pytest.mark.expression import Expression

    from conformance.core.case import PARAM_NAME
    from conformance.engine.runner import reproduction_command

    def probe(p):
        return Observation({})

    declare(probe=probe, claim="x.", params=[Param("a.b-c_1", [ROW], Expect({}))])
    from conformance.core.case import _REGISTRY

    case = _REGISTRY[("conformance.cases", "scratch_fields.probe")]
    selection = reproduction_command(case, "a.b-c_1", "0.8.3").split(" -k ", 1)[1].strip("'")
    Expression.compile(selection)
    assert not PARAM_NAME.fullmatch("a=b")


def test_a_case_module_that_fails_to_import_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    """issue 19 item 13: a folder's module that raises at import names the module and the line, exit 2."""
    monkeypatch.setattr("sys.path", list(__import__("sys").path))
    folder = tmp_path / "brokencases"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "fine.py").write_text(
        textwrap.dedent("""
        from conformance.core.case import Expect, Observation, Section
        SECTION = Section("T", "Fine")

        @SECTION.case(rows=["r.a"], claim="Fine.", expect=Expect({}))
        def fine():
            return Observation({})
    """)
    )
    (folder / "broken.py").write_text("import no_such_module_for_the_team\n")
    try:
        assert cli.main(["list", "--cases", str(folder)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0, err
        assert (
            "brokencases.broken: the case module failed to import: ModuleNotFoundError: No module named "
            "'no_such_module_for_the_team'"
            in err
            and "broken.py:1" in err
        )
        (folder / "broken.py").write_text("def oops(:\n")
        forget_package("brokencases")
        assert cli.main(["list", "--cases", str(folder)]) == 2
        assert "SyntaxError" in capsys.readouterr().err
    finally:
        forget_package("brokencases")


def test_a_folders_init_that_fails_is_one_line(tmp_path, capsys):
    """issue 19 item 13: the folder's own __init__.py failing is one line too."""
    folder = tmp_path / "initcases"
    folder.mkdir()
    (folder / "__init__.py").write_text("raise RuntimeError('team init broke')\n")
    try:
        assert cli.main(["list", "--cases", str(folder)]) == 2
        err = capsys.readouterr().err.strip()
        assert "__init__.py failed to import: RuntimeError: team init broke" in err and "\n" not in err
    finally:
        forget_package("initcases")
