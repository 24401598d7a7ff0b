"""The environment of every child the suite starts: what JAX and the probe need, and no credential.

A child runs code the suite did not write: a chapter's blocks, a case folder's probes, a census of a release. None
of them installs anything, so none needs an index's credentials or any token, and a block that prints its
environment must find none to print (its output is stored and published). `child_environment` is the one place
that builds a child's environment (probe, fork server, block runner, census, environment description, the pytest
process of `run`):

- dropped: the parent's JAX and XLA settings and Python's start-up variables (`PYTHONPATH`, `PYTHONHOME`, ...),
  replaced by our source on `PYTHONPATH` (the user's could shadow the environment's jax);
- dropped, however spelled (names compared upper-cased): every variable that can carry an index credential or a
  token (`credential_variable`): uv's index variables (`UV_*INDEX*`, `UV_*PASSWORD*`, `UV_*TOKEN*`), all of pip's
  (`PIP_*`), twine's and poetry's, every `*PASSWORD*`, `*PASSWD*`, `*TOKEN*`, `*SECRET*`, `*CREDENTIAL*`,
  `*API_KEY*`, `*AUTH*` name, netrc locations (`NETRC`, `*_NETRC`), and any variable whose value holds a URL with a
  user part (`https://user:token@host/simple`);
- kept: everything else (`PATH`, `HOME`, locale, CUDA and accelerator settings, proxies without credentials).

Every reader here takes a `snapshot` of its base first: `os.environ` is shared with other threads (pytest's main
thread sets and pops `PYTEST_CURRENT_TEST` around every item while the run's worker threads build their cells'
environments), and iterating it item by item raises `KeyError` for a name removed between listing the names and
reading its value. `PYTEST_CURRENT_TEST` itself is not passed on: it names the parent's item under way, so a
child's environment would depend on which item pytest had reached.

`known_secrets(environ)` gives what the parent knows to be secret (the values of dropped credential variables,
and the user information of every URL with one), for `conformance.scrub.mask_secrets` to mask in whatever a child
wrote before it is stored. Standard library only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Mapping

import conformance
from conformance.core.casefolders import FOLDERS_VARIABLE, folders_variable
from conformance.scrub import url_secrets

SOURCE_ROOT = str(Path(conformance.__file__).resolve().parent.parent)

_STRIPPED_PREFIXES = (
    "JAX_",
    "XLA_FLAGS",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "PYTHONWARNINGS",
    "PYTHONOPTIMIZE",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    FOLDERS_VARIABLE,
    "PYTEST_CURRENT_TEST",
)
_CREDENTIAL_PREFIXES = ("PIP_", "TWINE_", "POETRY_HTTP_", "POETRY_PYPI_", "HATCH_INDEX_", "PDM_")
_CREDENTIAL_WORDS = ("PASSWORD", "PASSWD", "TOKEN", "SECRET", "CREDENTIAL", "API_KEY", "APIKEY", "AUTH", "NETRC")
_UV_WORDS = ("INDEX", "FIND_LINKS", "PUBLISH", "KEYRING")
_URL_WITH_USER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[/\\]+[^/?#\s]*@")
MIN_SECRET_CHARS = 4  # a shorter value of a credential variable ("1", "yes") is not masked wherever it appears
_NOT_SECRET = {"true", "false", "none", "null", "yes", "no", "auto", "never", "always"}


def credential_variable(name: str, value: str) -> bool:
    """Whether the variable `name=value` can carry an index credential or a token (see the module's docstring)."""
    upper = name.upper()
    if upper.startswith(_CREDENTIAL_PREFIXES) or any(word in upper for word in _CREDENTIAL_WORDS):
        return True
    if upper.startswith("UV_") and any(word in upper for word in _UV_WORDS):
        return True
    return bool(_URL_WITH_USER.search(value or ""))


def snapshot(base: Mapping[str, str]) -> dict[str, str]:
    """A plain copy of `base` that another thread changing it cannot break: the names are listed at once (for
    `os.environ`, one atomic copy of its keys), then each value is read with `get`, so a name removed meanwhile is
    left out instead of raising `KeyError` (`dict(os.environ)` and `os.environ.items()` read each listed name with
    `[]`)."""
    found: dict[str, str] = {}
    for name in list(base):
        value = base.get(name)
        if value is not None:
            found[name] = value
    return found


def without_credentials(base: Mapping[str, str]) -> dict[str, str]:
    """A `snapshot` of `base` without the variables that can carry a credential (`credential_variable`)."""
    return {k: v for k, v in snapshot(base).items() if not credential_variable(k, v)}


def known_secrets(base: Mapping[str, str]) -> list[str]:
    """What the parent knows to be secret in `base`: the whole value of each variable whose name ends in a credential
    word or holds it between underscores (`UV_INDEX_X_PASSWORD`, `GITHUB_TOKEN`; not `TOKENIZERS_PARALLELISM`) and
    is no plain setting (`true`, `no`), and the user information of every URL in any value, its parts as written and
    decoded; longest first, none shorter than `MIN_SECRET_CHARS`."""
    found: set[str] = set()
    for name, value in snapshot(base).items():
        upper = name.upper()
        named = any(upper.endswith(word) or f"_{word}_" in f"_{upper}_" for word in _CREDENTIAL_WORDS[:-1])
        if named and (value or "").strip().lower() not in _NOT_SECRET:
            found.add(value)
        for word in (value or "").split():
            found.update(url_secrets(word))
    return sorted((s for s in found if len(s) >= MIN_SECRET_CHARS), key=len, reverse=True)


def child_environment(
    base: Mapping[str, str], extra: Mapping[str, str], source_root: str = SOURCE_ROOT, case_folders: Iterable[str] = ()
) -> dict[str, str]:
    """The environment of a child (see the module's docstring): `base` without JAX_*/XLA_FLAGS/PYTHON* and without
    credentials, our source on PYTHONPATH, the case folders it imports in `JAXCONF_CASE_FOLDERS`, then `extra`."""
    env = {k: v for k, v in without_credentials(base).items() if not k.startswith(_STRIPPED_PREFIXES)}
    env["PYTHONPATH"] = source_root
    folders = tuple(case_folders)
    if folders:
        env[FOLDERS_VARIABLE] = folders_variable(folders)
    env["PYTHON_COLORS"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra)
    return env


def environ_without_credentials() -> dict[str, str]:
    """This process's environment without credentials: for a child that keeps the rest as it is (`run`'s pytest)."""
    return without_credentials(os.environ)
