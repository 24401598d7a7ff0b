"""A case folder is foreign code: it is imported as its own package, never with its parent on an import path.

Issue 19 items 12 and 16: nothing beside a `--cases` folder (a `json/`, a `jax/` checkout, a
team's `conftest.py`) reaches the run, names that would shadow what the target imports are
refused with one line, and a folder under a path holding `:` runs like any other.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.engine import matrix
from conformance.core.case import load_cases
from conformance.core.casefolders import FOLDERS_VARIABLE, CaseFolderError, import_case_folder
from conformance.engine.folders import case_folder, import_folder, importable_in, refuse_shadowing
from conformance.engine.runner import SOURCE_ROOT, Target, child_environment
from conformance.engine.selection import all_cells
from conformance.engine.session import RunSession
from conformance.errors import ConformanceError

PROBE = """
import importlib.util

from conformance.core.case import Expect, Observation, Section

SECTION = Section("Team §1", "Isolation")


@SECTION.case(rows=["iso.sibling"], claim="The folder's siblings are not importable from its cases.",
              expect=Expect({"sibling": False, "json_is_stdlib": True}))
def sibling_hidden():
    import json
    return Observation({"sibling": importlib.util.find_spec("siblingmod") is not None,
                        "json_is_stdlib": hasattr(json, "dumps")})
"""


def make_team_repo(root: Path, name: str) -> Path:
    """A team checkout: the case folder beside a `json/` that breaks whoever imports it, a sibling module,
    and a `conftest.py` above the folder that breaks any pytest session that loads it."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "isolation.py").write_text(textwrap.dedent(PROBE))
    (folder / "test_own.py").write_text("def test_team_own():\n    raise SystemExit(9)\n")
    (root / "json").mkdir()
    (root / "json" / "__init__.py").write_text("raise ImportError('the team json shadowed the stdlib')\n")
    (root / "siblingmod.py").write_text("VALUE = 1\n")
    (root / "conftest.py").write_text("raise RuntimeError('the team conftest was loaded')\n")
    return folder


@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_a_folders_siblings_never_reach_the_child(tmp_path, forget, launcher):
    """issue 19 item 12: the child imports the folder alone; a sibling `json/` or module is not importable."""
    folder = case_folder(make_team_repo(tmp_path / "repo", "isocases"))
    forget.append("isocases")
    before = list(sys.path)
    (cell,) = all_cells(load_cases(import_folder(folder)))
    assert sys.path == before and str(folder.path.parent) not in sys.path
    target = Target(sys.executable, "linux-x86_64", "0.8.0", "isocases", (str(folder.path),))
    (found,) = RunSession(target, launcher=launcher).run([cell]).results
    assert (found.status.value, found.observation) == ("conforms", {"sibling": False, "json_is_stdlib": True}), (
        found.reason + found.stderr_tail
    )


def test_the_child_environment_names_folders_apart_from_pythonpath(tmp_path):
    """issue 19 items 12 and 16: PYTHONPATH holds only the suite; a folder path with `:` survives intact."""
    env = child_environment({"PYTHONPATH": "/user/path"}, {}, case_folders=("/a:b/teamcases",))
    assert env["PYTHONPATH"] == SOURCE_ROOT
    assert json.loads(env[FOLDERS_VARIABLE]) == ["/a:b/teamcases"]


def test_a_folder_under_a_path_with_a_colon_runs(tmp_path, forget):
    """issue 19 item 16: a folder under `a:b/` imports and runs in a child."""
    folder = case_folder(make_team_repo(tmp_path / "odd:place", "coloncases"))
    forget.append("coloncases")
    (cell,) = all_cells(load_cases(import_folder(folder)))
    target = Target(sys.executable, "linux-x86_64", "0.8.0", "coloncases", (str(folder.path),))
    (found,) = RunSession(target, launcher="spawn").run([cell]).results
    assert found.status.value == "conforms", found.reason + found.stderr_tail


def test_the_tools_own_pytest_ignores_the_teams_conftest_and_test_files(tmp_path, forget):
    """issue 19 item 12: the pytest of a run loads no conftest of the team's and collects only case modules,
    with the folder imported from its path (a sibling `json/` would break pytest itself)."""
    folder = case_folder(make_team_repo(tmp_path / "repo", "pytestcases"))
    forget.append("pytestcases")
    env = type("Env", (), {"python": sys.executable})()
    request = matrix.RunRequest(
        versions=("0.8.0",), results=tmp_path / "stored", workers=1, retries=0, launcher="spawn"
    )
    report = tmp_path / "out.json"
    argv = matrix.pytest_argv(env, report, request, folder)
    environ = child_environment(
        {k: v for k, v in __import__("os").environ.items()}, {}, case_folders=(str(folder.path),)
    )
    done = subprocess.run(argv, cwd=SOURCE_ROOT, env=environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    tests = json.loads(report.read_text())["tests"]
    assert [(t["metadata"]["case"], t["metadata"]["status"]) for t in tests] == [
        ("pytestcases/isolation.sibling_hidden", "conforms")
    ]


@pytest.mark.parametrize("name", ["json", "opt_einsum", "ml_dtypes", "scipy", "jax", "asyncio"])
def test_names_that_shadow_what_jax_or_python_imports_are_refused(tmp_path, name):
    """issue 19 item 12: stdlib module names and JAX's dependencies are one-line errors."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    with pytest.raises(ConformanceError, match=f"'{name}' is a"):
        case_folder(folder)
    with pytest.raises(CaseFolderError, match=f"'{name}' is a"):
        import_case_folder(folder)


def test_a_name_importable_in_the_target_is_refused(tmp_path):
    """issue 19 item 12: any top-level name the target environment imports (here `filelock`) is refused."""
    assert set(importable_in(sys.executable, ["filelock", "no_such_team_package_x"])) == {"filelock"}
    folder = tmp_path / "filelock"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    with pytest.raises(ConformanceError, match="'filelock' already imports from .* rename the folder"):
        refuse_shadowing([case_folder(folder)], sys.executable)
    with pytest.raises(CaseFolderError, match="'filelock' already imports from"):
        import_case_folder(folder)


def test_a_run_with_a_shadowing_folder_exits_2_in_one_line(tmp_path, capsys, monkeypatch):
    """issue 19 item 12: `run --cases` refuses the name before any pytest starts."""
    folder = tmp_path / "filelock"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    env = type("Env", (), {"python": sys.executable, "version": "0.8.0"})()
    (tmp_path / "results").mkdir()
    request = matrix.RunRequest(versions=("0.8.0",), results=tmp_path / "results")
    with pytest.raises(ConformanceError, match="rename the folder"):
        matrix.run_package(env, request, case_folder(folder))
    assert not list((tmp_path / "results").iterdir())  # no .running-* file left behind


# ------------------------------------------------------------------ casefolders' own logic, one function at a time


def test_the_folders_variable_names_absolute_paths_and_is_read_back_leniently(tmp_path, monkeypatch):
    from conformance.core.casefolders import declared_folders, folders_variable

    monkeypatch.chdir(tmp_path)
    assert json.loads(folders_variable(["teamcases", tmp_path / "b"])) == [
        str(tmp_path / "teamcases"),
        str(tmp_path / "b"),
    ]
    assert declared_folders({FOLDERS_VARIABLE: '["/a:b/one", 3, "/two"]'}) == ["/a:b/one", "/two"]
    for value in ("", "not json", '{"a": 1}', '"/a"', "null"):
        assert declared_folders({FOLDERS_VARIABLE: value}) == []
    assert declared_folders({}) == []


def test_declared_folders_are_imported_each_as_its_own_package(tmp_path, forget):
    from conformance.core.casefolders import folders_variable, import_declared_folders

    paths = []
    for name in ("declaredone", "declaredtwo"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"WHO = {name!r}\n")
        forget.append(name)
        paths.append(tmp_path / name)
    assert import_declared_folders({FOLDERS_VARIABLE: folders_variable(paths)}) == ["declaredone", "declaredtwo"]
    assert sys.modules["declaredtwo"].WHO == "declaredtwo"
    assert sys.modules["declaredone"].__path__ == [str(tmp_path / "declaredone")]
    assert import_declared_folders({}) == []


def test_each_name_refusal_says_why_in_full():
    from conformance.core.casefolders import name_refusal

    assert name_refusal("teamcases") == ""
    assert name_refusal("team-cases") == (
        "the folder's name 'team-cases' must be a Python identifier (it is imported as a package of that name)"
    )
    assert name_refusal("json") == (
        "the folder's name 'json' is a standard-library module; rename the folder "
        "(its package would shadow that module)"
    )
    assert name_refusal("sys") == name_refusal("json").replace("'json'", "'sys'")  # a builtin module
    assert name_refusal("jax") == (
        "the folder's name 'jax' is a package the suite or JAX imports; rename the "
        "folder (its package would shadow that module)"
    )


def test_a_folder_without_init_or_already_imported_or_failing_to_import(tmp_path, forget):
    bare = tmp_path / "bareteam"
    bare.mkdir()
    with pytest.raises(CaseFolderError) as caught:
        import_case_folder(bare)
    assert str(caught.value) == (
        f"--cases {bare}: it has no __init__.py; add an empty one (the folder is imported as the package bareteam)"
    )
    assert "bareteam" not in sys.modules
    good = tmp_path / "twiceteam"
    good.mkdir()
    (good / "__init__.py").write_text("import itertools\nCOUNT = next(itertools.count())\n")
    forget.append("twiceteam")
    assert import_case_folder(good) == "twiceteam"
    first = sys.modules["twiceteam"]
    assert import_case_folder(str(good)) == "twiceteam" and sys.modules["twiceteam"] is first  # not run again
    broken = tmp_path / "brokenteam"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('the team package fails')\n")
    with pytest.raises(RuntimeError, match="the team package fails"):
        import_case_folder(broken)
    assert "brokenteam" not in sys.modules


def test_a_name_imported_or_importable_from_elsewhere_is_named_with_where(tmp_path, forget, monkeypatch):
    import types

    from conformance.core.casefolders import _installed_location

    folder = (tmp_path / "elsewhereteam").resolve()
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    assert _installed_location("elsewhereteam", folder) == ""  # nowhere yet
    other = types.ModuleType("elsewhereteam")
    other.__file__ = "/other/elsewhereteam/__init__.py"
    monkeypatch.setitem(sys.modules, "elsewhereteam", other)
    assert _installed_location("elsewhereteam", folder) == "/other/elsewhereteam/__init__.py"
    with pytest.raises(CaseFolderError) as caught:
        import_case_folder(folder)
    assert str(caught.value) == (
        f"--cases {folder}: the name 'elsewhereteam' already imports from "
        f"/other/elsewhereteam/__init__.py in {sys.executable}; rename the folder (its "
        f"package would shadow that one)"
    )
    other.__file__ = None
    other.__path__ = ["/other/place"]
    assert _installed_location("elsewhereteam", folder) == "['/other/place']"
    del other.__path__
    assert _installed_location("elsewhereteam", folder) == "an already imported module"
    other.__path__ = [str(folder)]
    assert _installed_location("elsewhereteam", folder) == ""  # the folder itself
    monkeypatch.delitem(sys.modules, "elsewhereteam")
    import filelock

    assert _installed_location("filelock", folder) == filelock.__file__
    import importlib.util

    monkeypatch.delitem(sys.modules, "xmlrpc", raising=False)  # not imported: found by its spec
    assert _installed_location("xmlrpc", folder) == importlib.util.find_spec("xmlrpc").origin
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _installed_location("elsewhereteam", folder) == ""  # found through the path, but it is the folder
    (tmp_path / "plainfolder").mkdir()
    assert _installed_location("plainfolder", folder) == ""  # a namespace package hides nothing


def test_a_module_without_a_file_is_named_by_its_path(monkeypatch, tmp_path):
    import types

    from conformance.core.casefolders import _installed_location

    bare = types.ModuleType("fileless")  # no __file__ attribute at all
    bare.__path__ = ["/some/where"]
    monkeypatch.setitem(sys.modules, "fileless", bare)
    assert _installed_location("fileless", tmp_path) == "['/some/where']"
    assert _installed_location("no_such_parent_x.child", tmp_path) == ""  # find_spec raises: nothing is hidden


def test_a_folder_found_through_the_path_imports_with_its_submodules(tmp_path, forget, monkeypatch):
    import importlib

    folder = tmp_path / "pathteam"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "sub.py").write_text("VALUE = 7\n")
    forget.append("pathteam")
    monkeypatch.syspath_prepend(str(tmp_path))  # as when the team runs from the folder's parent
    assert import_case_folder(folder) == "pathteam"
    assert importlib.import_module("pathteam.sub").VALUE == 7


def test_a_failing_package_that_already_left_sys_modules_raises_its_own_error(tmp_path):
    folder = tmp_path / "leavingteam"
    folder.mkdir()
    (folder / "__init__.py").write_text("import sys\ndel sys.modules[__name__]\nraise RuntimeError('own error')\n")
    with pytest.raises(RuntimeError, match="own error"):
        import_case_folder(folder)
    assert "leavingteam" not in sys.modules


def test_standard_library_names_without_python_3_10s_list_are_the_builtin_ones(monkeypatch):
    from conformance.core.casefolders import stdlib_names

    assert "json" in stdlib_names() and "sys" in stdlib_names()
    monkeypatch.delattr(sys, "stdlib_module_names")  # Python 3.9, in an older target environment
    assert stdlib_names() == frozenset(sys.builtin_module_names)
