"""`api scan`'s finder (`conformance.api.scan`) on the forms the repository tests leave out: what unbinds a name,
what a guard is and says, environment and config forms that are not JAX's, columns on every line, and the line a
file that does not parse gets (issue 48: written against the survivors of a mutation run). Pure, no JAX."""

from __future__ import annotations

import re

from conformance.api.scan import uses_in_files, uses_in_source


def names(source: str) -> list[tuple[int, int, str, str]]:
    return [(u.line, u.col, u.name, u.what) for u in uses_in_source(source, "a.py")]


def guards(source: str) -> dict[str, str]:
    return {u.name: u.guarded for u in uses_in_source(source, "a.py")}


def test_an_import_or_assignment_of_something_else_unbinds_the_name():
    assert names("import jax.numpy as os\nimport os.path\nos.path.join('a')\n") == [(1, 8, "jax.numpy", "name")]
    assert names("import jax.numpy as np\nfrom numpy import array as np\nnp.x\n") == [(1, 8, "jax.numpy", "name")]
    assert names("import jax.numpy as np\nnp = other\nnp.x\n") == [(1, 8, "jax.numpy", "name")]


def test_imports_from_outside_jax_bind_nothing_and_a_star_names_no_use():
    assert names("from numpy import linalg\nlinalg.norm(x)\n") == []
    assert names("from .jax import numpy\nnumpy.sum\n") == []
    assert names("from jax.numpy import *\n") == [(1, 1, "jax.numpy", "name")]
    assert names("import jax\nx = jax\nprint(jax)\n") == []  # the module itself is no use


def test_a_guard_says_which_and_other_tests_guard_nothing():
    assert (
        guards("import jax\nif jax.__version_info__ >= (0, 6):\n    jax.a\n")["jax.a"]
        == "inside a version comparison guard"
    )
    assert guards("import jax\nif x > 1:\n    jax.a\nif config.version_info_ok:\n    jax.b\n") == {
        "jax.a": "",
        "jax.b": "",
    }
    # a dotted handler name counts; ImportError covers what an import statement uses, not an attribute (the old
    # expectation here, `jax.a` guarded by `except builtins.ImportError`, was the broad guard of issue 58)
    assert guards("import jax\ntry:\n    from jax import a\n    jax.b\nexcept builtins.ImportError:\n    pass\n") == {
        "jax.a": "inside try/except ImportError",
        "jax.b": "",
    }
    assert guards(
        "import jax\ntry:\n    jax.a\nexcept ValueError:\n    pass\ntry:\n    jax.b\nexcept:\n    pass\n"
    ) == {"jax.a": "", "jax.b": ""}


def test_environment_and_config_forms_that_name_no_jax_option_are_no_use():
    source = (
        "import os\nimport jax\nfrom os import environ\nos.environ[key]\nos.environ.get(0)\ndata()[0]\n"
        "jax.config.update(flag, True)\nprint('hello')\nsettings.update({'JAX_PLATFORMS': 'cpu'})\n"
        "os.environ.update(FOO='1', **more)\n"
    )
    assert names(source) == [(7, 1, "jax.config.update", "name")]
    assert names("from os import environ\nenviron['JAX_ENABLE_X64']\nenviron.update(JAX_PLATFORMS='cpu')\n") == [
        (2, 9, "jax.config.jax_enable_x64", "env"),
        (3, 16, "jax.config.jax_platforms", "env"),
    ]


def test_columns_are_right_on_the_first_line_and_on_a_last_line_without_a_newline():
    assert names("import os, jax.numpy\nx = 1; jax.numpy.sum") == [
        (1, 12, "jax.numpy", "name"),
        (2, 8, "jax.numpy.sum", "name"),
    ]
    assert names("import jax\r\nx = 1; jax.f\r\n") == [(2, 8, "jax.f", "name")]  # Windows line ends
    assert names("import jax\rx = 1; jax.f\r") == [(2, 8, "jax.f", "name")]  # old Mac line ends


def test_a_file_that_does_not_parse_gets_one_line_naming_the_error_and_its_place():
    long_cookie = b"# coding: " + b"a" * 300 + b"\n"
    deep = ("x = " + " + ".join(["1"] * 200000) + "\n").encode()
    _, skipped = uses_in_files([("a.py", b"def f(:\n"), ("b.py", long_cookie), ("deep.py", deep)])
    assert skipped[0] == "a.py: not parsed (SyntaxError: invalid syntax (a.py, line 1))"
    assert skipped[1] == "b.py: not parsed (SyntaxError: " + ("unknown encoding: " + "a" * 300)[:200] + ")"
    assert re.fullmatch(
        r"deep\.py: not parsed \((RecursionError|MemoryError): too deeply nested for Python's "
        r"parser\)",
        skipped[2],
    ), skipped[2]
