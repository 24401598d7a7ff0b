"""Environments that mix one release's jax with another release's jaxlib (or a jax source tree over a jaxlib).

jax is pure Python; jaxlib is the compiled side. Each jax declares the jaxlib versions it accepts twice: its
`Requires-Dist: jaxlib<=R,>=MIN` and, at import, `_minimum_jaxlib_version` with a refusal of any jaxlib newer than
itself (`jax/_src/lib/__init__.py`). `mix_problem` says, from those facts, why a mix cannot run ('' when it can);
`prepare_pair` builds a mix: the jaxlib release's own requirements first (its pin file when there is one), then
jax over it, with `--no-deps` when jax's declared range refuses that jaxlib (and the environment says so).
`prepare_source` does the same with a jax source folder in place of a jax release.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance.envs.builder import ENV_LAYOUT, EXTRA_PACKAGES, JaxEnvironment, _site_packages
from conformance.envs.interpreters import choose_interpreter
from conformance.errors import ConformanceError

_NUMBERS = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def release_numbers(version: str) -> tuple[int, ...]:
    """The dotted numbers a version starts with, as jax's own import check compares them (`0.12.0.1rc1` ->
    (0, 12, 0, 1))."""
    found = _NUMBERS.match(version)
    return tuple(int(x) for x in found.group(0).split(".")) if found else ()


def mix_problem(jax: str, jaxlib: str, minimum: str) -> str:
    """Why jax `jax` refuses jaxlib `jaxlib` when imported ('' when it accepts it): below its minimum
    (`jax 0.12.0.1 requires jaxlib >= 0.11.2`) or newer than itself."""
    if minimum and release_numbers(jaxlib) < release_numbers(minimum):
        return f"jax {jax} requires jaxlib >= {minimum}"
    if release_numbers(jaxlib) > release_numbers(jax):
        return f"jax {jax} refuses jaxlib {jaxlib}, which is newer than itself"
    return ""


def declared_allows(requires: str, jaxlib: str) -> bool:
    """Whether jax's declared jaxlib range (`<=0.12.0.1,>=0.11.2`, '' when none) admits `jaxlib`."""
    try:
        return not requires or Version(jaxlib) in SpecifierSet(requires)
    except (InvalidSpecifier, InvalidVersion):
        return False


def installed_jax_facts(env_path: Path) -> dict[str, str]:
    """What the jax installed at `env_path` declares about jaxlib, read from its files: `minimum` (version.py's
    `_minimum_jaxlib_version`) and `requires` (METADATA's unconditional `Requires-Dist: jaxlib` range)."""
    from conformance.decide.commits import minimum_jaxlib_in_version_file

    facts = {"minimum": "", "requires": ""}
    for packages in _site_packages(env_path):
        version_file = packages / "jax" / "version.py"
        if version_file.is_file():
            facts["minimum"] = minimum_jaxlib_in_version_file(version_file.read_text(encoding="utf-8"))
        for metadata in packages.glob("jax-*.dist-info/METADATA"):
            for line in metadata.read_text(encoding="utf-8").splitlines():
                found = re.match(r"Requires-Dist:\s*jaxlib\s*([^;]*)$", line)
                if found:
                    facts["requires"] = found.group(1).strip().strip("()")
    return facts


def _interpreter(builder: Any, jax: str, jaxlib: str) -> Any:
    release = builder.index.jax_release(jax)
    tags = frozenset(t for t in builder.index.jaxlib_pythons(jaxlib) if t.startswith("cp"))
    return choose_interpreter(builder.interpreters, release.requires_python, tags, f"jax {jax} with jaxlib {jaxlib}")


def prepare_pair(builder: Any, jax: str, jaxlib: str) -> JaxEnvironment:
    """An environment of jax `jax` over jaxlib `jaxlib` (cached like a release's). Refused in one line when jax
    refuses that jaxlib at import; installed with `--no-deps` (said in its `source`) when only jax's declared range
    refuses it."""
    started = time.monotonic()
    facts = installed_jax_facts(builder.prepare(jax).path)  # the release's own environment: what jax declares
    problem = mix_problem(jax, jaxlib, facts["minimum"])
    if problem:
        raise ConformanceError(f"jax {jax} cannot run over jaxlib {jaxlib}: {problem}")
    no_deps = not declared_allows(facts["requires"], jaxlib)
    interpreter = _interpreter(builder, jax, jaxlib)
    requirements = builder.requirements(jaxlib)
    minor = ".".join(interpreter.version.split(".")[:2])
    digest = hashlib.sha256(f"{jax}\n{jaxlib}\n{requirements.digest}\n{no_deps}".encode()).hexdigest()
    path = (
        builder.root / "envs" / f"pair-jax-{jax}-jaxlib-{jaxlib}-py{minor}-{digest[:10]}-idx{builder.options.digest()}"
    )
    wanted = {
        "layout": ENV_LAYOUT,
        "jax": jax,
        "jaxlib": jaxlib,
        "python": interpreter.version,
        "requirements": requirements.digest,
        "no_deps": no_deps,
        "index": builder.options.digest(),
    }
    base = (
        ["--require-hashes", "-r", str(requirements.pin_file)]
        if requirements.pin_file is not None
        else [*requirements.lines, *EXTRA_PACKAGES]
    )
    over = ["--no-deps", f"jax=={jax}"] if no_deps else [f"jax=={jax}", f"jaxlib=={jaxlib}"]
    source = {
        "kind": "pair",
        "jax": jax,
        "jaxlib": jaxlib,
        "no_deps": no_deps,
        "declared": facts["requires"],
        **builder.options.describe(),
    }
    return builder._prepare(
        path,
        wanted,
        interpreter,
        base,
        jax,
        digest,
        source,
        pinned=requirements.pin_file is not None,
        started=started,
        then=(over,),
    )


def installed_version(env_path: Path, name: str = "jax") -> str:
    """The version of the distribution `name` installed at `env_path` (from its dist-info folder's name)."""
    for packages in _site_packages(env_path):
        for info in packages.glob(f"{name}-*.dist-info"):
            return info.name[len(name) + 1 : -len(".dist-info")]
    return ""


def prepare_source(builder: Any, tree: Path, commit: str, jaxlib: str) -> JaxEnvironment:
    """An environment of the jax source folder `tree` (the files of `commit`), installed with `--no-deps` over
    release `jaxlib`'s own requirements; its version is the one the tree's build gave (`0.10.2.dev20260101` from a
    checkout, the release's from an sdist)."""
    started = time.monotonic()
    interpreter = builder.interpreter_for(jaxlib)
    requirements = builder.requirements(jaxlib)
    minor = ".".join(interpreter.version.split(".")[:2])
    digest = hashlib.sha256(f"{commit}\n{jaxlib}\n{requirements.digest}".encode()).hexdigest()
    path = builder.root / "envs" / f"source-{commit[:12]}-jaxlib-{jaxlib}-py{minor}-{digest[:10]}"
    wanted = {
        "layout": ENV_LAYOUT,
        "commit": commit,
        "jaxlib": jaxlib,
        "python": interpreter.version,
        "requirements": requirements.digest,
    }
    base = (
        ["--require-hashes", "-r", str(requirements.pin_file)]
        if requirements.pin_file is not None
        else [*requirements.lines, *EXTRA_PACKAGES]
    )
    source = {"kind": "source", "commit": commit, "jaxlib": jaxlib, **builder.options.describe()}
    # --reinstall-package: the tree's jax replaces the jaxlib release's own jax, even of the same version number.
    env = builder._prepare(
        path,
        wanted,
        interpreter,
        base,
        commit[:12],
        digest,
        source,
        pinned=False,
        started=started,
        then=(["--no-deps", "--reinstall-package", "jax", str(tree)],),
    )
    return replace(env, version=installed_version(env.path) or env.version)
