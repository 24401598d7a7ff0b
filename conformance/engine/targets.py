"""What a run runs against: the `Target` types, one per kind, and the one place a new kind is added.

A target is a frozen value naming where a JAX comes from: `Release("0.12.0.1")` (a release, pre-release or dev
build on the package index the builder reads), `ExistingPython("/opt/venv/bin/python")` (an interpreter with jax
installed, used as it is) or `WheelFolder("dist/")` (a folder of jax/jaxlib wheel files). Each kind knows

- its label: the PEP 440 version it runs (`label`; a given build's is read when it is prepared, local labels
  such as `0.12.0.1+corp.3` included) and how a failure names it (`failure_name`);
- how it is prepared (`check` before any long work, `prepare` through `envs.builder.EnvironmentBuilder`);
- where its results are stored: a release in the results folder itself, a given build there too unless a release
  or an earlier build of the same version is run alongside, then in its own `builds/<kind>-<hash>/` folder
  (`storage_name`; `results.store.ResultStore.build_folder` makes the path);
- the command-line options that name it (`option`, `run_help`, `gate_help`): the CLI adds `run --<option>` and
  `gate --to-<option>` for every kind in `BUILD_KINDS`.

Adding a kind (a jax/jaxlib pair of different versions, a `+future` forecast of a release) is a class here with
those members, added to `BUILD_KINDS` (or, like `Release`, named by `--jax`/`--to`); the engine's run path
(`engine.matrix.run_targets`) and the decisions take any `Target`. (`engine.runner.Target` is another thing: the
prepared environment a cell's child runs in, as the pytest plugin sees it.)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Union

from conformance.errors import ConformanceError


@dataclass(frozen=True)
class Release:
    """A JAX version on the package index (a final release, a pre-release or a dev build with `--pre`)."""

    version: str
    kind: ClassVar[str] = "jax"
    release: ClassVar[bool] = True  # its stored results can answer for the version (pins, `stored_run`)

    @property
    def label(self) -> str:
        """The PEP 440 version it runs."""
        return self.version

    def failure_name(self, version: str = "") -> str:
        """How a run that produced nothing names it."""
        return self.version

    def check(self, builder: Any) -> None:
        """Fail before any long work when the version is unknown or no installed Python fits it."""
        builder.interpreter_for(self.version)

    def prepare(self, builder: Any) -> Any:
        """Its environment, built from the pinned requirements or reused from the cache."""
        return builder.prepare(self.version)

    def storage_name(self, env: Any) -> str:
        """A release is stored in the results folder itself."""
        return ""


@dataclass(frozen=True)
class ExistingPython:
    """An interpreter with jax installed, used as it is: nothing is built, its jax and jaxlib are read from it."""

    python: str
    kind: ClassVar[str] = "python"
    release: ClassVar[bool] = False
    option: ClassVar[str] = "python"
    metavar: ClassVar[str] = "PATH"
    run_help: ClassVar[str] = (
        "an existing interpreter with jax installed: nothing is built, its jax, jaxlib and "
        "platform are read from it (repeatable; with --jax or --matrix, those run too)"
    )
    gate_help: ClassVar[str] = "run the suite on this existing interpreter's jax as the candidate (with --from)"

    @property
    def where(self) -> str:
        """The path it was given as."""
        return self.python

    @property
    def label(self) -> str:
        """Unknown until prepared: the version its jax reports."""
        return ""

    def failure_name(self, version: str = "") -> str:
        """How a run that produced nothing names it: its version and the option that gave it."""
        return f"{version} (--{self.option} {self.python})"

    def check(self, builder: Any) -> None:
        """Nothing to check apart from preparing it."""

    def prepare(self, builder: Any) -> Any:
        """The interpreter, described (nothing built)."""
        return builder.prepare_python(self.python)

    def storage_name(self, env: Any) -> str:
        """Its own results folder's name, when it needs one: the interpreter path's hash."""
        return f"{self.kind}-{hashlib.sha256(env.python.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class WheelFolder:
    """A folder of jax and/or jaxlib wheel files: an environment is built from them (the rest from the index)."""

    folder: str
    kind: ClassVar[str] = "wheels"
    release: ClassVar[bool] = False
    option: ClassVar[str] = "wheels"
    metavar: ClassVar[str] = "DIR"
    run_help: ClassVar[str] = (
        "a folder of jax and/or jaxlib wheel files: an environment is built from them (the rest "
        "from the index) and cached under their sha256 (repeatable)"
    )
    gate_help: ClassVar[str] = (
        "build an environment from this folder's jax/jaxlib wheels and run the suite on it as "
        "the candidate (with --from)"
    )

    @property
    def where(self) -> str:
        """The folder it was given as."""
        return self.folder

    @property
    def label(self) -> str:
        """Unknown until prepared: the version of its jax wheel."""
        return ""

    def failure_name(self, version: str = "") -> str:
        """How a run that produced nothing names it: its version and the option that gave it."""
        return f"{version} (--{self.option} {self.folder})"

    def check(self, builder: Any) -> None:
        """Nothing to check apart from preparing it."""

    def prepare(self, builder: Any) -> Any:
        """The environment built from the wheels (or reused from the cache)."""
        return builder.prepare_wheels(Path(self.folder))

    def storage_name(self, env: Any) -> str:
        """Its own results folder's name, when it needs one: the wheels' hash."""
        return f"{self.kind}-{env.pins_hash[:10]}"


@dataclass(frozen=True)
class JaxPair:
    """One release's jax over another release's jaxlib, given as `JAX:JAXLIB` (`0.12.0.1:0.11.2`): what tells a
    change of the Python side from one of the compiled side (`bisect --attribute`). Built like a release (the
    jaxlib release's requirements, then jax over them; `--no-deps` where jax's declared range refuses that jaxlib,
    and refused where jax refuses it at import), cached, and always stored in its own `builds/pair-...` folder."""

    pair: str
    kind: ClassVar[str] = "pair"
    release: ClassVar[bool] = False
    apart: ClassVar[bool] = True  # never stored as the release of its jax's version
    option: ClassVar[str] = "pair"
    metavar: ClassVar[str] = "JAX:JAXLIB"
    run_help: ClassVar[str] = (
        "a release's jax over another release's jaxlib (0.12.0.1:0.11.2), where jax accepts "
        "that jaxlib; installed with --no-deps where only its declared range refuses it "
        "(repeatable)"
    )
    gate_help: ClassVar[str] = "run the suite on jax JAX over jaxlib JAXLIB as the candidate (with --from)"

    @property
    def jax(self) -> str:
        """The jax release."""
        return self.pair.partition(":")[0].strip()

    @property
    def jaxlib(self) -> str:
        """The jaxlib release."""
        return self.pair.partition(":")[2].strip()

    @property
    def where(self) -> str:
        """The pair as given."""
        return self.pair

    @property
    def label(self) -> str:
        """The jax version it runs."""
        return self.jax

    def failure_name(self, version: str = "") -> str:
        """How a run that produced nothing names it."""
        return f"jax {self.jax} with jaxlib {self.jaxlib} (--{self.option} {self.pair})"

    def check(self, builder: Any) -> None:
        """Fail before any long work when the pair is not `JAX:JAXLIB` or either is not a release here."""
        if not self.jax or not self.jaxlib:
            raise ConformanceError(f"--{self.option} {self.pair!r} should be JAX:JAXLIB, such as 0.12.0.1:0.11.2")
        builder.interpreter_for(self.jax)
        builder.interpreter_for(self.jaxlib)

    def prepare(self, builder: Any) -> Any:
        """The mixed environment (built or reused from the cache)."""
        from conformance.envs.pairs import prepare_pair

        return prepare_pair(builder, self.jax, self.jaxlib)

    def storage_name(self, env: Any) -> str:
        """Its own results folder: `pair-<jax>-<jaxlib>`."""
        return f"{self.kind}-{self.jax}-{self.jaxlib}"


@dataclass(frozen=True)
class JaxCommit:
    """The files of one jax commit (`tree`, exported from a checkout) installed with `--no-deps` over a released
    jaxlib: a step of `bisect --jax-source`. Built once per commit and jaxlib, stored in `builds/commit-...`."""

    tree: str
    commit: str
    jaxlib: str
    kind: ClassVar[str] = "commit"
    release: ClassVar[bool] = False
    apart: ClassVar[bool] = True

    @property
    def label(self) -> str:
        """Unknown until prepared: the version the tree's build gives."""
        return ""

    def failure_name(self, version: str = "") -> str:
        """How a run that produced nothing names it."""
        return f"jax commit {self.commit[:12]} over jaxlib {self.jaxlib}"

    def check(self, builder: Any) -> None:
        """The jaxlib must be a release here."""
        builder.interpreter_for(self.jaxlib)

    def prepare(self, builder: Any) -> Any:
        """The environment (built or reused from the cache)."""
        from conformance.envs.pairs import prepare_source

        return prepare_source(builder, Path(self.tree), self.commit, self.jaxlib)

    def storage_name(self, env: Any) -> str:
        """Its own results folder."""
        return f"{self.kind}-{self.commit[:12]}-jaxlib-{self.jaxlib}"


Target = Union[Release, ExistingPython, WheelFolder, JaxPair, JaxCommit]
# The given builds, each named by `run --<option>` and `gate --to-<option>`; a new kind of build is added here.
BUILD_KINDS: tuple[type, ...] = (ExistingPython, WheelFolder, JaxPair)


def releases(versions: Any) -> list[Target]:
    """A `Release` for each version, in order."""
    return [Release(str(version)) for version in versions]


def given_builds(values: dict[str, list[str]]) -> list[Target]:
    """The given builds, in the order of `BUILD_KINDS` then as given, each once: `values` maps an option name
    (`python`, `wheels`) to the values given for it."""
    found = [kind(value) for kind in BUILD_KINDS for value in values.get(kind.option) or ()]
    return list(dict.fromkeys(found))
