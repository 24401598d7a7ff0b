"""A downstream suite: what the user named (`chex==0.1.90`, or a team's folder) and its manifest.

The manifest is a small TOML file, needed only where the defaults are not enough::

    tests = "pyargs"              # "pyargs": pytest --pyargs over the installed packages; "folder": the folder itself;
                                  # "sdist": the test folder of the library's source distribution (`sdist`)
    sdist_tests = "tests"         # with "sdist": the sdist's test folder (default: `tests` or `test` at its top)
    packages = ["chex"]           # the library's top-level packages (its own code, for signatures; pyargs targets)
    extras = []                   # extras of the library to install with it
    requires = ["cloudpickle"]    # what its tests need besides the library (pytest is always added)
    pytest_args = ["-p", "no:randomly"]
    device_count = 8              # XLA_FLAGS=--xla_force_host_platform_device_count=8 for the run
    time_multiplier = 1.0         # scales the per-test and whole-run bounds
    test_timeout_s = 300          # the per-test bound (before the multiplier)
    run_timeout_s = 3600          # the whole-run bound (before the multiplier)

    [[deselect]]                  # never run
    node = "chex/_src/fake_test.py::FakeTest::test_slow*"
    reason = "needs 16 GB"

    [[flaky]]                     # known flaky: a failure there never gates
    node = "tests/test_random.py::test_sometimes"
    reason = "draws without a seed"

A library from the index takes `--manifest FILE`, else the project's own `conformance/downstream/manifests/<name>.toml`,
else the defaults (its import name as the only package, `--pyargs`). A folder takes its `downstream.toml`, else the
defaults (the folder's tests run in place; its packages are its subfolders holding `__init__.py`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.tomltable import failing, known_table, parse_toml, read_toml_file

MANIFESTS = Path(__file__).resolve().parent / "manifests"
FOLDER_MANIFEST = "downstream.toml"
KEYS = (
    "tests",
    "sdist_tests",
    "packages",
    "extras",
    "requires",
    "pytest_args",
    "device_count",
    "time_multiplier",
    "test_timeout_s",
    "run_timeout_s",
    "deselect",
    "flaky",
)
_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+!-]*)$")
MAX_FOLDER_FILES = 5000


@dataclass(frozen=True)
class Manifest:
    """How to run a suite's tests (see the module's docstring)."""

    tests: str = "pyargs"
    sdist_tests: str = ""
    packages: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    pytest_args: tuple[str, ...] = ()
    device_count: int = 0
    time_multiplier: float = 1.0
    test_timeout_s: float = 300.0
    run_timeout_s: float = 3600.0
    deselect: tuple[tuple[str, str], ...] = ()
    flaky: tuple[tuple[str, str], ...] = ()
    text: str = ""  # the manifest as read ('' for the defaults): part of every reuse key


@dataclass(frozen=True)
class Suite:
    """A suite as named: `spec` (`chex==0.1.90` or the folder as given), its kind (`index` or `folder`), the
    distribution and version (index) or the folder's path, and its manifest. `resolve` is `each` where each release
    gets the resolver's own pick of the library (`--resolve each`): the version named is then only the label."""

    spec: str
    kind: str
    manifest: Manifest
    name: str = ""
    version: str = ""
    folder: Path | None = None
    resolve: str = "baseline"

    @property
    def ident(self) -> str:
        """The suite's part of its cells' ids (`chex_0_1_90`, `team_suite`): an identifier."""
        if self.kind == "index":
            text = f"{self.name}_each" if self.resolve == "each" else f"{self.name}_{self.version}"
        else:
            text = (self.folder or Path("suite")).name
        ident = re.sub(r"\W", "_", text)
        return ident if ident and not ident[0].isdigit() else f"s{ident}"

    @property
    def label(self) -> str:
        """How the suite is named to a person."""
        if self.kind == "index" and self.resolve == "each":
            return f"{self.name} (each release's own pick)"
        return self.spec if self.kind == "index" else f"folder {self.folder}"

    @property
    def requirement(self) -> str:
        """The library's requirement line ('' for a folder)."""
        if self.kind != "index":
            return ""
        extras = f"[{','.join(self.manifest.extras)}]" if self.manifest.extras else ""
        return f"{self.name}{extras}" + ("" if self.resolve == "each" else f"=={self.version}")


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConformanceError(f"{where}: `{key}` should be a list of strings")
    return tuple(value)


def _nodes(value: Any, key: str, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        raise ConformanceError(f"{where}: `{key}` should be [[{key}]] tables")
    found = []
    for i, entry in enumerate(value, 1):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("node"), str)
            or not entry["node"]
            or not isinstance(entry.get("reason"), str)
            or not entry["reason"].strip()
        ):
            raise ConformanceError(f'{where}: [[{key}]] entry {i} needs node = "PATTERN" and reason = "..."')
        found.append((entry["node"], entry["reason"].strip()))
    return tuple(found)


def _number(value: Any, key: str, where: str, *, whole: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or (whole and value != int(value)):
        raise ConformanceError(
            f"{where}: `{key}` should be a positive {'whole ' if whole else ''}number, not {value!r}"
        )
    return value


def parse_manifest(text: str, where: str) -> Manifest:
    """A manifest from its TOML text; a malformed one is one line naming `where` and the key."""
    data = known_table(parse_toml(text, where), KEYS, failing(where))
    tests = data.get("tests", "pyargs")
    if tests not in ("pyargs", "folder", "sdist"):
        raise ConformanceError(f'{where}: `tests` should be "pyargs", "folder" or "sdist", not {tests!r}')
    sdist_tests = data.get("sdist_tests", "")
    if (
        not isinstance(sdist_tests, str)
        or "\\" in sdist_tests
        or sdist_tests.startswith("/")
        or ".." in sdist_tests.split("/")
    ):
        raise ConformanceError(
            f'{where}: `sdist_tests` should be a folder inside the sdist (like "tests"), not {sdist_tests!r}'
        )
    if sdist_tests and tests != "sdist":
        raise ConformanceError(f'{where}: `sdist_tests` goes with tests = "sdist"')
    return Manifest(
        tests=tests,
        sdist_tests=sdist_tests.strip("/"),
        packages=_strings(data.get("packages", []), "packages", where),
        extras=_strings(data.get("extras", []), "extras", where),
        requires=_strings(data.get("requires", []), "requires", where),
        pytest_args=_strings(data.get("pytest_args", []), "pytest_args", where),
        device_count=int(_number(data.get("device_count", 1), "device_count", where, whole=True))
        if "device_count" in data
        else 0,
        time_multiplier=float(_number(data.get("time_multiplier", 1.0), "time_multiplier", where)),
        test_timeout_s=float(_number(data.get("test_timeout_s", 300), "test_timeout_s", where)),
        run_timeout_s=float(_number(data.get("run_timeout_s", 3600), "run_timeout_s", where)),
        deselect=_nodes(data.get("deselect", []), "deselect", where),
        flaky=_nodes(data.get("flaky", []), "flaky", where),
        text=text,
    )


def _read(path: Path) -> str:
    return read_toml_file(path, 1024 * 1024, "the manifest")


def folder_packages(folder: Path) -> tuple[str, ...]:
    """A folder's own packages: its subfolders holding `__init__.py`, test folders aside."""
    return tuple(
        sorted(
            p.name
            for p in folder.iterdir()
            if p.is_dir() and (p / "__init__.py").is_file() and p.name not in ("tests", "test")
        )
    )


def read_suite(spec: str, manifest_path: Path | None = None) -> Suite:
    """The suite `spec` names (see the module's docstring); one-line `ConformanceError` when it names neither a
    release on the index (`NAME==VERSION`) nor a folder."""
    given = _read(manifest_path) if manifest_path is not None else None
    matched = _SPEC.match(spec)
    if matched:
        name, version = matched.groups()
        own = MANIFESTS / f"{name.lower()}.toml"
        text = given if given is not None else (_read(own) if own.is_file() else None)
        manifest = parse_manifest(text, str(manifest_path or own)) if text is not None else Manifest()
        if not manifest.packages:
            manifest = _replace(manifest, packages=(name.replace("-", "_").lower(),))
        return Suite(spec, "index", manifest, name=name, version=version)
    folder = Path(spec)
    if not folder.is_dir():
        raise ConformanceError(
            f"{spec!r} is neither a library release (NAME==VERSION, e.g. chex==0.1.90) nor a "
            f"folder; name one of the two"
        )
    folder = folder.resolve()
    own = folder / FOLDER_MANIFEST
    text = given if given is not None else (_read(own) if own.is_file() else None)
    manifest = parse_manifest(text, str(manifest_path or own)) if text is not None else Manifest(tests="folder")
    if manifest.tests != "folder":
        manifest = _replace(manifest, tests="folder")
    if not manifest.packages:
        manifest = _replace(manifest, packages=folder_packages(folder))
    return Suite(spec, "folder", manifest, folder=folder)


def _replace(manifest: Manifest, **changes: Any) -> Manifest:
    from dataclasses import replace

    return replace(manifest, **changes)


def folder_digest(folder: Path) -> str:
    """The sha256 of a folder's Python and TOML/INI/CFG files (paths and contents), `__pycache__` aside: a team's
    suite's test files, part of its reuse key."""
    digest = hashlib.sha256()
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix in (".py", ".toml", ".ini", ".cfg", ".txt", ".json")
    )
    if len(files) > MAX_FOLDER_FILES:
        raise ConformanceError(f"{folder} holds more than {MAX_FOLDER_FILES} source files; name the suite's own folder")
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
