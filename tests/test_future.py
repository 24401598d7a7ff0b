"""`run --future`: JAX's pending removals done now, in the child, and the `<version>+future` target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.engine.matrix import RunRequest, future_label, pytest_argv

ROOT = Path(__file__).resolve().parent.parent

# A fake jax whose deprecations module has the API of jax/_src/deprecations.py.
DEPRECATIONS = """
import functools, warnings
from dataclasses import dataclass

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

@dataclass
class DeprecationState:
    accelerated: bool = False

_registered_deprecations = {}

def register(deprecation_id):
    _registered_deprecations[deprecation_id] = DeprecationState()

def accelerate(deprecation_id):
    _registered_deprecations[deprecation_id].accelerated = True

def warn(deprecation_id, message, stacklevel, *, error_class=ValueError):
    if _registered_deprecations[deprecation_id].accelerated:
        raise error_class(message)
    warnings.warn(message, category=DeprecationWarning, stacklevel=stacklevel + 1)

register("jax-fake-positional-args")
"""

MODULE_WITH_DEPRECATIONS = """
from jax._src.deprecations import deprecation_getattr as _getattr
_deprecations = {{"{name}": ("jax.{module}.{name} is deprecated", len)}}
__getattr__ = _getattr(__name__, _deprecations)
"""

SCRIPT = """
import json, sys, warnings
from conformance.child.future import enter_future
if sys.argv[1] == "loaded":  # a forked cell: jax is imported before the probe
    import jax.oldapi
    before = jax.oldapi.old_function  # read (and cached) before: it must still go
enter_future()
imported_by_enter = "jax" in sys.modules
import jax.oldapi
from jax._src import deprecations
deprecations.register("jax-fake-registered-later")
import jax.newapi  # imported after: its deprecated attribute is gone too

def outcome(thunk):
    try:
        thunk()
        return "ok"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"

print(json.dumps({
    "jax imported by enter_future": imported_by_enter,
    "registered": outcome(lambda: deprecations.warn("jax-fake-positional-args", "positional args are gone", 1)),
    "registered later": outcome(lambda: deprecations.warn("jax-fake-registered-later", "gone too", 1)),
    "old attribute": outcome(lambda: jax.oldapi.old_function),
    "new attribute": outcome(lambda: jax.newapi.new_function),
    "warning": outcome(lambda: warnings.warn("dtype will change", FutureWarning)),
    "user warning": outcome(lambda: warnings.warn("still a warning", UserWarning)),
}))
"""


@pytest.mark.parametrize("jax_state", ["loaded", "not loaded"])
def test_the_future_accelerates_removes_and_raises(tmp_path, jax_state):
    src = tmp_path / "jax" / "_src"
    src.mkdir(parents=True)
    (tmp_path / "jax" / "__init__.py").write_text("")
    (src / "__init__.py").write_text("")
    (src / "deprecations.py").write_text(DEPRECATIONS)
    (tmp_path / "jax" / "oldapi.py").write_text(MODULE_WITH_DEPRECATIONS.format(module="oldapi", name="old_function"))
    (tmp_path / "jax" / "newapi.py").write_text(MODULE_WITH_DEPRECATIONS.format(module="newapi", name="new_function"))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        [sys.executable, "-W", "ignore::UserWarning", "-c", textwrap.dedent(SCRIPT), jax_state],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "jax imported by enter_future": jax_state == "loaded",  # it never imports jax itself
        "registered": "ValueError: positional args are gone",
        "registered later": "ValueError: gone too",
        "old attribute": "AttributeError: jax.oldapi.old_function is deprecated",
        "new attribute": "AttributeError: jax.newapi.new_function is deprecated",
        "warning": "FutureWarning: dtype will change",
        "user warning": "ok",
    }


def test_the_future_target_is_labelled_and_never_answered_by_the_releases_cells(tmp_path):
    assert future_label("0.12.0.1") == "0.12.0.1+future"
    assert future_label("0.12.0.1+corp.3") == "0.12.0.1+corp.3.future"

    class Env:
        python = sys.executable

    assert "--jax-rerun" in pytest_argv(Env(), tmp_path / "x.json", RunRequest((), tmp_path, future=True))
    assert "--jax-rerun" not in pytest_argv(Env(), tmp_path / "x.json", RunRequest((), tmp_path))
