"""`keys`: a cell's reuse key changes with everything its result depends on, and with nothing else."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os

import conformance
from conformance.core.case import find_case
from conformance.engine import keys

FIXTURES = "tests.fixture_cases"
ENV = keys.environment_digest({"jax": "0.8.0", "jaxlib": "0.8.0"}, "3.13.0")


def fixture(name: str):
    return find_case(f"machinery.{name}", FIXTURES)


def test_the_key_is_stable_and_32_hex_digits():
    first = keys.cell_key(fixture("echo"), "a", ENV)
    assert first == keys.cell_key(fixture("echo"), "a", ENV)
    assert len(first) == 32 and int(first, 16) >= 0
    parts = [keys.case_digest(fixture("echo"), "a"), keys.shared_sources_digest(), ENV, conformance.__version__]
    assert first == hashlib.sha256("|".join(parts).encode()).hexdigest()[:32]


def test_the_key_changes_with_the_parameter_the_environment_and_the_suite_version(monkeypatch):
    key = keys.cell_key(fixture("echo"), "a", ENV)
    assert keys.cell_key(fixture("echo"), "b", ENV) != key
    assert keys.cell_key(fixture("echo"), "a", keys.environment_digest({"jax": "0.8.1"}, "3.13.0")) != key
    monkeypatch.setattr(conformance, "__version__", "999")
    assert keys.cell_key(fixture("echo"), "a", ENV) != key


def test_the_case_digest_covers_each_field_of_the_declaration():
    case = fixture("echo")
    digest = keys.case_digest(case, "a")
    for change in (
        {"env": {"FIXTURE_ENV": "other"}},
        {"stdin": "x"},
        {"fresh_interpreter": not case.fresh_interpreter},
        {"timeout_s": case.timeout_s + 1},
    ):
        assert keys.case_digest(dataclasses.replace(case, **change), "a") != digest, change


def test_the_digests_are_of_exactly_these_texts():
    """Stored results carry their keys: the texts hashed are a format, pinned here."""
    import inspect
    import sys

    case = fixture("echo")
    source = inspect.getsourcefile(sys.modules[case.probe.__module__])
    assert source.endswith("machinery.py")
    declaration = {
        "param": keys._plain(case.param("a")),
        "env": {"FIXTURE_ENV": "set-by-case"},  # noqa: SLF001
        "stdin": case.stdin,
        "fresh": case.fresh_interpreter,
        "timeout": case.timeout_s,
    }
    text = keys._file_digest(source) + json.dumps(declaration, sort_keys=True)  # noqa: SLF001
    assert keys.case_digest(case, "a") == hashlib.sha256(text.encode()).hexdigest()
    assert keys._file_digest(source) != "missing"  # noqa: SLF001
    paths = [keys._PACKAGE_ROOT / p for p in keys._SHARED_SOURCES]  # noqa: SLF001
    paths += sorted((keys._PACKAGE_ROOT / "scripts").glob("*.py"))  # noqa: SLF001
    joined = "".join(keys._file_digest(str(p)) for p in paths)  # noqa: SLF001
    assert keys.shared_sources_digest() == hashlib.sha256(joined.encode()).hexdigest()


def test_the_case_digest_covers_the_module_source(monkeypatch):
    case = fixture("echo")
    digest = keys.case_digest(case, "a")
    monkeypatch.setattr(keys, "_file_digest", lambda path: "other source" if path.endswith("machinery.py") else "")
    assert keys.case_digest(case, "a") != digest


def test_the_environment_digest_is_the_packages_and_python_in_any_order():
    assert keys.environment_digest({"a": "1", "b": "2"}, "3.12") == keys.environment_digest(
        {"b": "2", "a": "1"}, "3.12"
    )
    assert keys.environment_digest({"a": "1"}, "3.12") != keys.environment_digest({"a": "1"}, "3.13")
    assert keys.environment_digest({"a": "1"}, "3.12") != keys.environment_digest({"a": "2"}, "3.12")
    text = json.dumps({"packages": {"a": "1"}, "python": "3.12"}, sort_keys=True)
    assert keys.environment_digest({"a": "1"}, "3.12") == hashlib.sha256(text.encode()).hexdigest()


def test_shared_sources_cover_every_listed_file_and_the_scripts(monkeypatch):
    digest = keys.shared_sources_digest()
    seen = []
    monkeypatch.setattr(keys, "_file_digest", lambda path: seen.append(path) or "x")
    keys.shared_sources_digest()
    names = [p.replace("\\", "/").split("/conformance/", 1)[1] for p in seen]
    assert names[: len(keys._SHARED_SOURCES)] == list(keys._SHARED_SOURCES)  # noqa: SLF001
    assert (
        any(n.startswith("scripts/") for n in names)
        and names[len(keys._SHARED_SOURCES) :]
        == sorted(  # noqa: SLF001
            names[len(keys._SHARED_SOURCES) :]
        )
    )  # noqa: SLF001
    monkeypatch.setattr(keys, "_file_digest", lambda path: "y")
    assert keys.shared_sources_digest() != digest


def test_a_missing_file_digests_as_missing(tmp_path):
    assert keys._file_digest(str(tmp_path / "none.py")) == "missing"  # noqa: SLF001
    (tmp_path / "a.py").write_bytes(b"x = 1\n")
    assert keys._file_digest(str(tmp_path / "a.py")) == hashlib.sha256(b"x = 1\n").hexdigest()  # noqa: SLF001


def test_declarations_become_plain_json():
    @dataclasses.dataclass
    class Thing:
        n: int
        items: tuple

    plain = keys._plain({"t": Thing(1, (2, "x")), 3: [None, 1.5, True], "o": object})  # noqa: SLF001
    assert plain == {"t": {"Thing": {"n": 1, "items": [2, "x"]}}, "3": [None, 1.5, True], "o": repr(object)}


def test_every_module_behind_the_case_api_is_in_every_cells_key():
    """`core/case.py` re-exports the model, the checks and the loader from modules of their own (issue 60): each
    module it imports from core/ is a shared source, so an edit to `Case.run_probe` in core/model.py reruns cells."""
    import ast

    tree = ast.parse((keys._PACKAGE_ROOT / "core" / "case.py").read_text(encoding="utf-8"))  # noqa: SLF001
    behind = {
        f"core/{node.module.rpartition('.')[2]}.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("conformance.core.")
    }
    assert {"core/model.py", "core/validation.py", "core/registry.py"} <= behind
    assert sorted(behind - {"core/workload.py"} - set(keys._SHARED_SOURCES)) == []  # noqa: SLF001


def test_a_file_written_anew_at_the_same_path_gets_its_new_digest(tmp_path):
    """The digest cache is keyed by the file's stat too: a case module edited in one process (or a later test's module
    at a path an earlier test used, now that passing tests' folders are removed) never keeps the old digest."""
    module = tmp_path / "team_case.py"
    module.write_text("VALUE = 1\n")
    first = keys._file_digest(str(module))  # noqa: SLF001
    module.write_text("VALUE = 22\n")
    os.utime(module, ns=(1, 1))  # a different mtime even on a coarse clock
    assert keys._file_digest(str(module)) != first  # noqa: SLF001
    module.unlink()
    assert keys._file_digest(str(module)) == "missing"  # noqa: SLF001
