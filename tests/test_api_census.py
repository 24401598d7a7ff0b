"""The census child on a small fake `jax` package (no real JAX needed: the real releases are the e2e tests'), and
census storage: reuse by key, what invalidates it, and where builds go."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.api import census as census_module
from conformance.api import store
from conformance.api.model import load_census
from conformance.engine.runner import SOURCE_ROOT
from conformance.engine.targets import Release

FAKE_JAX = {
    "jax/__init__.py": """
        import os
        import warnings
        from functools import partial
        from typing import Any
        from jax import numpy
        from jax._src import tree
        from jax._src import deprecations
        from jax._src.deprecations import deprecation_getattr as _deprecation_getattr
        from jax._src.typing import DeprecatedArg
        from os import sep as sep
        from jax._src.tree import tree_map as _tree_map

        __version__ = "0.0.1"
        pi = 3.14
        Relu = (lambda shape: shape, lambda params, x: x)  # a layer made by a factory, as stax's `Relu` is


        def jit(fun, *, static_argnums=None, donate_argnums=()):
            return fun


        def pure_callback(callback, *args, vectorized=DeprecatedArg(), vmap_method=None):
            if not isinstance(vectorized, DeprecatedArg):
                raise ValueError("The 'vectorized' argument of jax.pure_callback was removed in JAX "
                                 "v0.6.0. Use 'vmap_method' instead.")
            return callback


        def percentile(a, q, *, interpolation=DeprecatedArg()):
            if not isinstance(interpolation, DeprecatedArg):
                deprecations.warn("jax-numpy-quantile-interpolation",
                                  ("The interpolation= argument to 'percentile' is deprecated. "
                                   "Use 'method=' instead."), stacklevel=2)
            return a


        class Array:
            def __init__(self, value, dtype=None):
                self.value = value


        from jax._src.config import config


        def eig(x, *, implementation=None, use_magma=None, other=None):
            if use_magma is not None:
                warnings.warn("use_magma is deprecated, please use implementation=MAGMA instead.",
                              DeprecationWarning, stacklevel=2)
            if other is not None:
                warnings.warn("other is used here", UserWarning)
            return x


        def dot(lhs, rhs, *args, precision=None, preferred_element_type=None):
            if args:
                deprecations.warn("jax-lax-dot-positional-args",
                                  ("jax.lax.dot: passing precision or preferred_element_type by position is "
                                   "deprecated; pass them by keyword instead."), stacklevel=2)
            return lhs


        def stack(*arrays):
            if arrays:
                pass
            return arrays
        tree_util_map = _tree_map


        def default_backend():
            return "cpu"


        _deprecations = {
            "tree_map": ("jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer).", _tree_map),
            "tree_flatten": ("jax.tree_flatten was removed in JAX v0.6.0: use jax.tree.flatten.", None),
        }
        __getattr__ = _deprecation_getattr(__name__, _deprecations)
        """,
    "jax/_src/__init__.py": "",
    "jax/_src/config.py": """
        from jax._src import deprecations


        class Config:
            def __init__(self):
                self._value_holders = {}

            def __getattr__(self, name):
                return False


        config = Config()


        def bool_state(name, default, help="", validator=None, upgrade=False):
            config._value_holders[name] = object()
            return default


        def enum_state(name, enum_values, default, help="", extra_validator=None):
            config._value_holders[name] = object()
            return default


        enable_x64 = bool_state(name="jax_enable_x64", default=False, help="Enable 64-bit types.")
        debug_nans = bool_state(name="jax_debug_nans", default=False, help="Check for NaNs.")


        def _default_pmap_no_rank_reduction(new_val):
            if not new_val:
                deprecations.warn("jax-pmap-no-rank-reduction",
                                  ("Setting `jax_pmap_no_rank_reduction` to `False` is deprecated in "
                                   "JAX v0.7.2 and will be removed in JAX v0.9.0."), stacklevel=3)


        def _checked(new_val):
            if new_val:
                raise ValueError("no")


        pmap_no_rank_reduction = bool_state(name="jax_pmap_no_rank_reduction", default=True,
                                            help="If True, no rank reduction.",
                                            validator=_default_pmap_no_rank_reduction)
        checked = bool_state(name="jax_checked", default=False, help="A validator that raises, no deprecation.",
                             validator=_checked)
        default_dtype_bits = enum_state(name="jax_default_dtype_bits", enum_values=["_default", "32"],
                                        default="_default", help=("[deprecated]. This flag was an experiment "
                                                                  "and will be removed."))
        """,
    "jax/_src/typing.py": """
        class DeprecatedArg:
            def __repr__(self):
                return "Deprecated"
        """,
    "jax/exported.py": """
        import os
        import jax
        from jax._src.tree import tree_map
        __all__ = ["tree_map"]
        """,
    "jax/tree_util.py": """
        from jax._src.deprecations import deprecation_getattr as _deprecation_getattr
        from jax._src.tree import tree_map as tree_map

        _deprecations = {
            "build_tree": ("jax.tree_util.build_tree is deprecated: use jax.tree.build.", tree_map),
        }
        __getattr__ = _deprecation_getattr(__name__, _deprecations)
        del _deprecations
        """,
    "jax/backend.py": """
        import collections
        from typing import TypeVar

        _cache_clearing_funs = set()
        add_clear_backends_callback = _cache_clearing_funs.add  # jax 0.6.2's jax.extend.backend binds it so
        T = TypeVar("T")
        OrderedDict = collections.OrderedDict
        """,
    "jax/lazy.py": """
        import jax
        import jax.numpy as jnp
        from jax._src.tree import tree_map as _tree_map


        def __getattr__(name):
            if name == "hidden":
                return _tree_map
            raise AttributeError(name)
        """,
    "jax/_src/tree.py": """
        def tree_map(f, tree, *rest, is_leaf=None):
            return f(tree)
        """,
    "jax/_src/deprecations.py": """
        import functools
        import warnings


        def deprecation_getattr(module, deprecations):
            @functools.cache
            def getattr(name):
                if name in deprecations:
                    message, fn = deprecations[name]
                    if fn is None:
                        raise AttributeError(message)
                    warnings.warn(message, DeprecationWarning, stacklevel=2)
                    return fn
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            return getattr
        """,
    "jax/numpy/__init__.py": """
        def sum(a, axis=None, *, where=None):
            return a
        """,
    "jax/broken.py": "import absl_is_not_installed_here\n",
    "jax/experimental/__init__.py": "",
    "jax/experimental/noisy.py": """
        import warnings
        print("a module that prints at import")
        warnings.warn("jax.experimental.noisy is deprecated; use jax.numpy instead.", DeprecationWarning)
        value = 1
        """,
    "jax/experimental/oldcallback.py": """
        import warnings
        warnings.warn("jax.experimental.oldcallback is deprecated and will be removed in JAX v0.8.0", stacklevel=1)
        value = 1
        """,
    "jax/cloud_tpu_init.py": """
        import warnings
        warnings.warn("jax.cloud_tpu_init was deprecated in JAX v0.8.1. You should remove imports of this module.",
                      DeprecationWarning, stacklevel=1)
        """,
    "jax/experimental/noisy_test.py": "raise RuntimeError('a test module is never imported')\n",
    "jax/tools/__init__.py": "raise RuntimeError('a skipped module is never imported')\n",
}


@pytest.fixture(scope="module")
def fake_census(tmp_path_factory):
    root = tmp_path_factory.mktemp("fakejax")
    for name, text in FAKE_JAX.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    out = root / "census.json"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(root), SOURCE_ROOT])
    done = subprocess.run(
        [sys.executable, "-m", "conformance.api.census", "--out", str(out)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return {**json.loads(out.read_text(encoding="utf-8")), "_root": str(root)}


def test_every_public_name_and_each_deprecation_table_entry_is_read(fake_census):
    names = fake_census["names"]
    assert names["jax.tree_map"]["state"] == "deprecated"  # dir() does not show it: the table does
    assert names["jax.tree_map"]["message"] == "jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer)."
    assert names["jax.tree_map"]["replacement"] == "jax.tree.map"
    assert names["jax.tree_flatten"] == {
        "kind": None,
        "state": "removed",
        "replacement": "jax.tree.flatten",
        "message": "jax.tree_flatten was removed in JAX v0.6.0: use jax.tree.flatten.",
    }
    assert names["jax.jit"]["kind"] == "function" and names["jax.jit"]["params"] == [
        ["fun", "positional_or_keyword", None],
        ["static_argnums", "keyword_only", "None"],
        ["donate_argnums", "keyword_only", "()"],
    ]
    assert names["jax.Array"]["kind"] == "class" and names["jax.pi"]["kind"] == "constant"
    assert names["jax.numpy"]["kind"] == "module" and names["jax.numpy.sum"]["state"] == "present"
    assert not any(name.split(".")[-1].startswith("_") for name in names)


def test_aliases_origins_and_config_options(fake_census):
    names = fake_census["names"]
    assert names["jax.tree_map"]["origin"] == "jax._src.tree.tree_map"
    # One object under two names: the shorter path is the canonical one (its origin, in jax._src, is not a name).
    assert names["jax.tree_util_map"]["alias_of"] == "jax.tree_map" and "alias_of" not in names["jax.tree_map"]
    assert "alias_of" not in names["jax.jit"]
    assert names["jax.config.jax_enable_x64"] == {
        "kind": "config",
        "state": "present",
        "value": "False",
        "env": "JAX_ENABLE_X64",
    }


def test_a_config_option_whose_setting_warns_is_deprecated(fake_census):
    """JAX deprecates an option in jax/_src/config.py: a validator that warns when it is set (to some value), or
    "[deprecated]" in its help; the option still reads, so only the source says so."""
    names = fake_census["names"]
    assert names["jax.config.jax_pmap_no_rank_reduction"] == {
        "kind": "config",
        "state": "deprecated",
        "value": "False",
        "env": "JAX_PMAP_NO_RANK_REDUCTION",
        "message": "Setting `jax_pmap_no_rank_reduction` to `False` is deprecated in JAX v0.7.2 and will be removed "
        "in JAX v0.9.0.",
        "effect": "warns when set",
        "condition": "not new_val",
    }
    assert names["jax.config.jax_default_dtype_bits"]["state"] == "deprecated"
    assert names["jax.config.jax_default_dtype_bits"]["message"].startswith("[deprecated]. This flag")
    assert names["jax.config.jax_checked"]["state"] == "present"  # a validator that raises is no deprecation
    assert names["jax.config.jax_debug_nans"]["state"] == "present"


def test_a_module_that_fails_to_import_is_recorded_not_fatal(fake_census):
    modules = fake_census["modules"]
    assert modules["jax.broken"]["status"] == "failed"
    assert "absl_is_not_installed_here" in modules["jax.broken"]["error"]
    assert modules["jax.tools"]["status"] == "skipped"
    assert "jax.experimental.noisy_test" not in modules
    noisy = modules["jax.experimental.noisy"]
    assert noisy["status"] == "ok" and noisy["warnings"] == [
        "jax.experimental.noisy is deprecated; use jax.numpy instead."
    ]
    assert fake_census["names"]["jax.experimental.noisy"]["state"] == "deprecated"
    assert fake_census["names"]["jax.experimental.oldcallback"]["state"] == "deprecated"  # a UserWarning saying so
    assert fake_census["names"]["jax.cloud_tpu_init"]["state"] == "deprecated"  # importing it is safe: walked
    assert fake_census["format"] == census_module.FORMAT and fake_census["platform"]


def test_an_import_that_hangs_is_stopped_at_the_bound(tmp_path, monkeypatch):
    if not hasattr(__import__("signal"), "SIGALRM"):
        pytest.skip("no SIGALRM on this platform")
    (tmp_path / "hangs_at_import.py").write_text("while True:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(census_module, "IMPORT_TIMEOUT_S", 1)
    started = time.monotonic()
    module, error, _, _ = census_module.import_bounded("hangs_at_import")
    assert module is None and "did not finish within 1s" in error
    assert time.monotonic() - started < 30


@dataclass
class FakeBuilder:
    """What storage asks a builder: the release's requirements and the Python it would choose."""

    pins: Path
    python: str = "3.13.0"
    prepared: int = 0

    def requirements(self, version):
        return SimpleNamespace(pin_file=self.pins, digest="pins-digest")

    def interpreter_for(self, version):
        return SimpleNamespace(version=self.python)

    def prepare(self, version):
        self.prepared += 1
        return SimpleNamespace(version=version, python="/env/bin/python", pins_hash="pins-digest", source={})


def _payload(version="0.6.2"):
    return {
        "format": census_module.FORMAT,
        "format_version": census_module.FORMAT_VERSION,
        "jax": version,
        "platform": store.host_platform(),
        "python": "3.13.0",
        "packages": {"jax": version},
        "modules": {"jax": {"status": "ok"}},
        "names": {"jax": {"kind": "module", "state": "present"}},
    }


def test_a_stored_census_answers_until_its_key_changes(tmp_path, monkeypatch):
    taken = []
    monkeypatch.setattr(store, "run_census", lambda python, probe=None: taken.append(python) or _payload())
    builder = FakeBuilder(tmp_path / "pins.txt")
    first = store.take_census(Release("0.6.2"), builder, tmp_path)
    assert not first.stored and taken == ["/env/bin/python"]
    assert first.path == tmp_path / "api" / f"0.6.2-{store.host_platform()}.json"
    again = store.take_census(Release("0.6.2"), builder, tmp_path)
    assert again.stored and len(taken) == 1 and builder.prepared == 1  # nothing built, nothing run
    assert store.take_census(Release("0.6.2"), builder, tmp_path, rerun=True).stored is False
    builder.python = "3.12.1"  # another interpreter would be chosen now
    assert store.take_census(Release("0.6.2"), builder, tmp_path).stored is False
    builder.python = "3.13.0"
    monkeypatch.setattr(store, "census_digest", lambda: "edited census code")
    assert store.take_census(Release("0.6.2"), builder, tmp_path).stored is False
    assert len(taken) == 4


def test_a_release_without_a_pin_file_is_never_answered_from_storage(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "run_census", lambda python, probe=None: _payload())
    builder = FakeBuilder(tmp_path / "pins.txt")
    store.take_census(Release("0.6.2"), builder, tmp_path)
    builder.pins = None
    assert store.answered_release(tmp_path, builder, "0.6.2") is None


def test_stored_censuses_are_read_oldest_first_and_a_bad_file_is_left_out(tmp_path, monkeypatch):
    for version in ("0.10.0", "0.6.2", "0.9.0"):
        monkeypatch.setattr(store, "run_census", lambda python, probe=None, v=version: _payload(v))
        store.take_census(Release(version), FakeBuilder(tmp_path / "p"), tmp_path)
    (tmp_path / "api" / "0.7.0-linux-x86_64.json").write_text("{not json")
    assert [c.jax for c in store.stored_censuses(tmp_path)] == ["0.6.2", "0.9.0", "0.10.0"]
    assert load_census(tmp_path / "api" / f"0.6.2-{store.host_platform()}.json").header["key"]


def test_the_census_child_needs_only_the_standard_library(tmp_path):
    """It runs in the target environment, which holds jax and what jax needs, never the suite's dependencies."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    for name in ("pytest", "jinja2", "packaging", "filelock", "_pytest", "jsonschema"):
        (blocker / f"{name}.py").write_text(f"raise ImportError('{name} is blocked')\n")
    script = "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import conformance.api.census; print('ok')"
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(blocker), SOURCE_ROOT], capture_output=True, text=True
    )
    assert done.stdout.strip() == "ok", done.stderr
    script = script.replace("conformance.api.census", "conformance.api.store")  # the parent side does need them
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(blocker), SOURCE_ROOT], capture_output=True, text=True
    )
    assert done.returncode != 0 and "is blocked" in done.stderr


def test_a_census_with_far_more_names_than_a_release_has_is_refused_in_one_line():
    """Review: a census of 1,000,000 names made a 55 MB page in a minute; no release has more than about 9,000."""
    from conformance.api.census import FORMAT, FORMAT_VERSION
    from conformance.api.model import MAX_CENSUS_NAMES, census_from
    from conformance.errors import ConformanceError

    names = {f"jax.n{i}": {"kind": "function", "state": "present"} for i in range(MAX_CENSUS_NAMES + 1)}
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "jax": "0.6.2",
        "platform": "linux-x86_64",
        "modules": {"jax": {"status": "ok"}},
        "names": names,
    }
    with pytest.raises(ConformanceError, match="more than the 200000 a census may hold"):
        census_from(data, "big.json")


def test_public_means_exported_or_defined_under_jax(fake_census):
    names = fake_census["names"]
    for foreign in (
        "jax.os",
        "jax.partial",
        "jax.Any",
        "jax.tree",
        "jax.deprecations",
        "jax.exported.os",
        "jax.lazy.jax",
        "jax.lazy.jnp",
    ):
        assert foreign not in names, foreign  # stdlib, typing, a jax._src module or class imported for internal use
    assert names["jax.sep"]["kind"] == "constant"  # re-exported on purpose (`from os import sep as sep`)
    assert names["jax.exported.tree_map"]["state"] == "present"  # listed in __all__
    assert names["jax.pi"]["kind"] == "constant"  # a plain constant defined there
    # a tuple the module's source assigns (stax's `Relu = elementwise(relu)`): numpyro's 9 uses read "missing"
    assert names["jax.Relu"]["state"] == "present"
    # a function its source binds by assignment is its own, even when the object is a builtin method
    assert names["jax.backend.add_clear_backends_callback"]["kind"] == "function"
    assert "jax.backend.T" not in names and "jax.backend.OrderedDict" not in names  # typing, a stdlib class


def test_a_deprecation_table_deleted_after_use_is_still_read(fake_census):
    entry = fake_census["names"]["jax.tree_util.build_tree"]
    assert entry["state"] == "deprecated" and entry["replacement"] == "jax.tree.build"


def test_a_deprecated_arg_default_is_read_as_jax_handles_it(fake_census):
    names = fake_census["names"]
    assert names["jax.pure_callback"]["keywords"] == {
        "vectorized": {
            "state": "removed",
            "effect": "raises ValueError",
            "message": "The 'vectorized' argument of jax.pure_callback was removed in JAX v0.6.0. Use 'vmap_method' "
            "instead.",
        }
    }
    assert names["jax.percentile"]["keywords"] == {
        "interpolation": {
            "state": "deprecated",
            "effect": "warns",
            "message": "The interpolation= argument to 'percentile' is deprecated. Use 'method=' instead.",
        }
    }
    assert fake_census["format_version"] == 3


def test_passing_by_position_what_a_star_args_catches_with_a_warning_is_deprecated(fake_census):
    """jax 0.7.1's `jax.lax.dot(lhs, rhs, *args, precision=None, ...)`: `if args: deprecations.warn(...)`; the
    parameters became keyword-only and a third positional argument warns."""
    assert fake_census["names"]["jax.dot"]["positional"] == {
        "after": 2,
        "state": "deprecated",
        "effect": "warns",
        "message": "jax.lax.dot: passing precision or preferred_element_type by position is deprecated; pass them "
        "by keyword instead.",
    }
    assert "positional" not in fake_census["names"]["jax.stack"]  # a *args that is the API itself


def test_a_keyword_whose_passing_warns_in_the_body_is_deprecated(fake_census):
    """`if use_magma is not None: warnings.warn("... deprecated ...")` (jax.lax.linalg.eig, 0.8.0): no sentinel,
    the function's own source says so; a warning that says nothing of deprecation is not one."""
    assert fake_census["names"]["jax.eig"]["keywords"] == {
        "use_magma": {
            "state": "deprecated",
            "effect": "warns",
            "message": "use_magma is deprecated, please use implementation=MAGMA instead.",
        }
    }


def test_names_a_neighbouring_release_had_are_probed(tmp_path, fake_census):
    root = Path(fake_census["_root"])
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(["jax.lazy.hidden", "jax.lazy.gone", "jax.nowhere.x", "jax.lazy.jnp"]))
    out = tmp_path / "census.json"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(root), SOURCE_ROOT])
    done = subprocess.run(
        [sys.executable, "-m", "conformance.api.census", "--out", str(out), "--probe", str(probe)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    names = json.loads(out.read_text(encoding="utf-8"))["names"]
    assert names["jax.lazy.hidden"]["state"] == "present" and names["jax.lazy.hidden"]["probed"] is True
    assert "jax.lazy.gone" not in names and "jax.nowhere.x" not in names
    assert "jax.lazy.jnp" not in names  # another census listed it: still not public here


def test_a_census_probes_the_names_other_stored_censuses_hold(tmp_path, monkeypatch):
    probed = []
    older = _payload("0.5.3")
    older["names"]["jax.tree_util.build_tree"] = {"kind": "function", "state": "deprecated", "message": "x"}
    older["names"]["jax.gone"] = {"kind": None, "state": "removed", "message": "gone"}
    monkeypatch.setattr(store, "run_census", lambda python, probe=None: older)
    store.take_census(Release("0.5.3"), FakeBuilder(tmp_path / "p"), tmp_path)
    monkeypatch.setattr(store, "run_census", lambda python, probe=None: probed.append(probe) or _payload("0.6.0"))
    store.take_census(Release("0.6.0"), FakeBuilder(tmp_path / "p"), tmp_path)
    assert probed == [["jax", "jax.tree_util.build_tree"]]  # usable elsewhere: read with getattr before "removed"


def test_a_private_census_reads_only_the_names_asked_for(tmp_path, fake_census):
    root = Path(fake_census["_root"])
    wanted = tmp_path / "private.json"
    wanted.write_text(
        json.dumps(["jax._src.tree.tree_map", "jax._src.tree.gone", "jax._src.nowhere.f", "jax._src.tree"])
    )
    out = tmp_path / "census.json"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(root), SOURCE_ROOT])
    done = subprocess.run(
        [sys.executable, "-m", "conformance.api.census", "--out", str(out), "--private", str(wanted)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["private"] is True and data["modules"]["jax._src.tree"]["status"] == "ok"
    assert data["names"]["jax._src.tree.tree_map"]["private"] is True
    assert set(data["names"]) == {"jax._src", "jax._src.tree", "jax._src.tree.tree_map"}  # nothing else is read
    assert "jax.numpy" not in data["modules"]


@pytest.mark.parametrize(
    "argv, wrong",
    [
        ([], "--out FILE is required"),
        (["--probe", "p.json"], "--out FILE is required"),
        (["--out"], "--out needs a FILE"),
        (["--out", "a", "--out", "b"], "--out given twice"),
        (["--out", "a", "--js", "b"], "unknown argument '--js'"),
        (["--out", "a", "extra"], "unknown argument 'extra'"),
    ],
)
def test_the_census_command_line_refuses_in_one_line_what_it_cannot_read(argv, wrong, capsys):
    """The child's argv is parsed by hand (no argparse below cli.py): each wrong form is one line and exit 2, and no
    abbreviation is taken for an option."""
    assert census_module.parse_argv(argv).startswith(wrong)
    assert census_module.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conformance.api.census: {wrong}") and err.count("\n") == 1


def test_the_census_command_line_reads_each_option_as_a_pair_or_with_equals():
    assert census_module.parse_argv(["--out", "c.json", "--probe=p.json", "--private", "q.json"]) == {
        "--out": "c.json",
        "--probe": "p.json",
        "--private": "q.json",
    }
    assert census_module.parse_argv(["--out=x=y.json"]) == {"--out": "x=y.json"}
