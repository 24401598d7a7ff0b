"""Index parsing, interpreter choice and requirement sets for the per-version environments."""

from __future__ import annotations

import os
import platform
import sys

import pytest

from conformance.envs.builder import requirements_for
from conformance.errors import ConformanceError
from conformance.envs.index import parse_simple_json, sort_versions
from conformance.envs.interpreters import Interpreter, choose_interpreter, discover_interpreters
from conformance.envs.matrix import MATRIX_DIR, load_matrix
from tests.fake_index import PAGES, fake_builder


def test_index_page_gives_requires_python_and_wheel_tags_without_yanked_files():
    jax = parse_simple_json(PAGES["jax"])
    assert set(jax) == {"0.4.38", "0.12.0.1"}
    assert jax["0.12.0.1"].requires_python == ">=3.12"
    jaxlib = parse_simple_json(PAGES["jaxlib"])
    assert jaxlib["0.12.0.1"].wheel_pythons == {"cp312", "cp314"}


def test_versions_sort_as_releases():
    assert sort_versions(["0.10.2", "0.4.38", "0.12.0.1", "0.9.2"]) == ["0.4.38", "0.9.2", "0.10.2", "0.12.0.1"]


PYTHONS = [Interpreter("/a/3.11", "3.11.7"), Interpreter("/b/3.12", "3.12.1"), Interpreter("/c/3.13", "3.13.0")]


def test_newest_fitting_interpreter_with_a_jaxlib_wheel_is_chosen():
    assert choose_interpreter(PYTHONS, ">=3.10", frozenset(), "jax x").version == "3.13.0"
    assert choose_interpreter(PYTHONS, ">=3.12", frozenset({"cp312"}), "jax x").version == "3.12.1"


def test_no_fitting_interpreter_is_one_clear_line():
    with pytest.raises(ConformanceError) as caught:
        choose_interpreter(PYTHONS[:1], ">=3.12", frozenset({"cp312"}), "jax 0.12.0.1")
    message = str(caught.value)
    assert "no installed Python fits jax 0.12.0.1" in message and ">=3.12" in message
    assert "3.11.7 (/a/3.11)" in message and "JAX_CONFORMANCE_PYTHONS" in message
    assert "\n" not in message


def test_builder_picks_per_version(tmp_path):
    builder = fake_builder(tmp_path, ["3.11.7", "3.12.1", "3.13.0"])
    assert builder.interpreter_for("0.4.38").version == "3.13.0"
    assert builder.interpreter_for("0.12.0.1").version == "3.12.1"  # jaxlib has no cp313 wheel in the fake index
    with pytest.raises(ConformanceError, match="unknown JAX version '0.99'"):
        builder.interpreter_for("0.99")


def test_discovery_finds_the_current_interpreter():
    import sys

    found = discover_interpreters([sys.executable, "/no/such/python"])
    assert [i.version.split(".")[:2] for i in found] == [[str(sys.version_info[0]), str(sys.version_info[1])]]


def test_pinned_sets_are_used_and_default_matrix_is_pinned_with_hashes(tmp_path):
    (tmp_path / "jax-1.0.txt").write_text("# comment\njax==1.0 \\\n    --hash=sha256:00\n")
    pinned = requirements_for("1.0", True, tmp_path)
    assert pinned.pin_file == tmp_path / "jax-1.0.txt" and len(pinned.digest) == 64
    assert requirements_for("2.0", True, tmp_path).lines == ("jax[cpu]==2.0", "jaxlib==2.0", "rich")
    assert requirements_for("2.0", False, tmp_path).lines == ("jax[cpu]==2.0", "rich")
    for version in load_matrix("default").versions:
        pins = requirements_for(version, True, MATRIX_DIR / "pins").pin_file
        text = pins.read_text(encoding="utf-8")
        assert f"jax=={version} " in text and "--hash=sha256:" in text and "rich==" in text


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "is empty"),
        ("garbage\nnot pins\n", r"pins no jax \(not a pin file\)"),
        ("jax==0.11.2 \\\n    --hash=sha256:00\n", "pins jax 0.11.2, not 0.12.0.1"),
        ("jax==0.12.0.1\n", "has no hashes"),
    ],
)
def test_a_bad_pin_file_is_blamed_on_itself_with_the_fix(tmp_path, text, problem):
    """issue 19 item 19: an empty, garbage or other-version pins file is one line naming it and `pin`."""
    from conformance.envs.builder import requirements_for
    from conformance.errors import ConformanceError

    (tmp_path / "jax-0.12.0.1.txt").write_text(text)
    with pytest.raises(ConformanceError, match=f"{problem}; run `jax-conformance pin 0.12.0.1`"):
        requirements_for("0.12.0.1", True, tmp_path)


def test_candidates_the_variable_first_then_this_python_then_uvs_then_path_and_pyenv_on_any_layout(tmp_path):
    """Issue 60: uv lists interpreters on every OS; pyenv's (POSIX and pyenv-win layouts) still count."""
    from conformance.envs.interpreters import candidate_paths

    for layout in ("versions/3.12.1/bin/python3", "versions/3.13.0/python.exe"):
        (tmp_path / layout).parent.mkdir(parents=True)
        (tmp_path / layout).write_text("")
    env = {
        "JAX_CONFORMANCE_PYTHONS": os.pathsep.join(["/explicit/a", "/explicit/b"]),
        "PATH": str(tmp_path / "none"),
        "PYENV_ROOT": str(tmp_path),
    }
    found = candidate_paths(env, listed=lambda seen: ["/uv/listed"] if seen == env else [])
    assert found == [
        "/explicit/a",
        "/explicit/b",
        sys.executable,
        "/uv/listed",
        str(tmp_path / "versions/3.12.1/bin/python3"),
        str(tmp_path / "versions/3.13.0/python.exe"),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="a symlink stands for an installed interpreter")
def test_uv_lists_an_interpreter_on_path(tmp_path):
    """`uv python list` (uv is a dependency) finds a CPython on PATH, which the discovery then probes."""
    from conformance.envs.interpreters import uv_pythons

    folder = tmp_path / "bin"
    folder.mkdir()
    minor = f"python3.{sys.version_info[1]}"
    (folder / minor).symlink_to(os.path.realpath(sys.executable))
    env = {
        "PATH": str(folder),
        "HOME": str(tmp_path),
        "UV_PYTHON_INSTALL_DIR": str(tmp_path / "managed"),
        "UV_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    listed = uv_pythons(env)
    assert str(folder / minor) in listed
    assert [i.version for i in discover_interpreters([str(folder / minor)])] == [platform.python_version()]
